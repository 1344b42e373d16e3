// Command agent is the smallest Go agent behind an Airlock server: it runs
// one shell command only when the server allows it, and waits while a
// person decides. It imports the vocabulary and the client, nothing of the
// engine (docs/ARCHITECTURE.md; client's TestAgentLinksLittle counts it).
package main

import (
	"context"
	"encoding/json"
	"log"
	"os"
	"os/exec"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/client"
)

func main() {
	guard := client.New(os.Getenv("AIRLOCK_SERVER"), os.Getenv("AIRLOCK_TOKEN"))
	a := airlock.Action{Agent: "example", Tool: "Bash", Args: airlock.MustArgs(map[string]any{"command": "git status"})}
	_, err := guard.Run(context.Background(), a, func(ctx context.Context, run airlock.Action) error {
		// Run the action as allowed, not as asked: a reviewer may have
		// edited its arguments before approving it.
		var args struct {
			Command string `json:"command"`
		}
		if err := json.Unmarshal(run.Args, &args); err != nil {
			return err
		}
		return exec.CommandContext(ctx, "sh", "-c", args.Command).Run()
	})
	if err != nil {
		log.Fatal(err)
	}
}
