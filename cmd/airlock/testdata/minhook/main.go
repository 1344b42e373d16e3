// Command minhook is the anchor of BenchmarkHookProcess: the least a hook
// process can do. It makes the request `airlock hook claude-code` makes —
// the payload from standard input POSTed once to $MINHOOK_URL with the same
// headers — and prints the reply's stdout with its exit code. No flags, no
// retries, no checks of its own.
package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
)

func main() {
	payload, err := io.ReadAll(os.Stdin)
	if err != nil {
		os.Exit(2)
	}
	req, err := http.NewRequest("POST", os.Getenv("MINHOOK_URL"), bytes.NewReader(payload))
	if err != nil {
		os.Exit(2)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/vnd.airlock.hook-reply+json")
	req.Header.Set("Authorization", "Bearer "+os.Getenv("AIRLOCK_TOKEN"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		os.Exit(2)
	}
	defer resp.Body.Close()
	var r struct {
		Exit   int    `json:"exit"`
		Stdout string `json:"stdout"`
		Stderr string `json:"stderr"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&r) != nil {
		os.Exit(2)
	}
	os.Stdout.WriteString(r.Stdout)
	if r.Stderr != "" {
		os.Stderr.WriteString(r.Stderr + "\n")
	}
	os.Exit(r.Exit)
}
