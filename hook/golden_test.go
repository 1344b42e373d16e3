package hook_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/gate"
	"github.com/airlock-dev/airlock/hook"
	"github.com/airlock-dev/airlock/shell"
)

var update = flag.Bool("update", false, "rewrite the golden files with what the fixtures get")

// hostDirs are the fixture folders under testdata/hooks, by host.
var hostDirs = map[string]string{"claude": "claude-code", "codex": "codex", "gemini": "gemini"}

// TestGolden reads every payload under testdata/hooks/<host>/ — written
// from each host's published schema or captured from the real host (see
// testdata/hooks/README.md) — and compares with its .golden file: the
// event, the action Airlock checks, the starter policy's decision, and the
// host's answer to an allow and to a refusal. A payload Airlock cannot read
// gets the block every host obeys.
func TestGolden(t *testing.T) {
	gate, err := gate.New(shell.Analyser{}, gate.StarterPolicy())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join("..", "testdata", "hooks")
	n := 0
	for dir, name := range hostDirs {
		host, err := hook.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		err = filepath.WalkDir(filepath.Join(root, dir), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") || strings.HasPrefix(d.Name(), "http-request-") {
				return err // an http-request- capture is the request around a payload, not one
			}
			n++
			rel, _ := filepath.Rel(root, path)
			t.Run(filepath.ToSlash(rel), func(t *testing.T) {
				payload, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				got := golden(gate, host, payload)
				file := strings.TrimSuffix(path, ".json") + ".golden"
				if *update {
					if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(file)
				if err != nil {
					t.Fatalf("%v (go test ./hook -run TestGolden -update writes it)", err)
				}
				if got != string(want) {
					t.Errorf("%s:\ngot:\n%s\nwant:\n%s", file, got, want)
				}
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if n < 30 {
		t.Errorf("found %d fixtures under %s; the hosts' events are not all covered", n, root)
	}
}

// golden renders what Airlock makes of one payload.
func golden(gate *gate.Gate, host hook.Host, payload []byte) string {
	var b strings.Builder
	ev, err := host.Parse(payload)
	if err != nil {
		fmt.Fprintf(&b, "error: %s\n", airlock.ErrorMessage(err))
		writeReply(&b, "answer", hook.Fail(err))
		return b.String()
	}
	fmt.Fprintf(&b, "event: %s (%s)\n", ev.Name, ev.Kind)
	a := ev.Action
	a.Agent = "agent-1"
	action, _ := json.Marshal(a)
	fmt.Fprintf(&b, "action: %s\n", action)
	if ev.Kind == hook.KindPost {
		fmt.Fprintf(&b, "ran: failed=%t error=%q duration=%s\n", ev.Failed, ev.Error, ev.Duration)
		writeReply(&b, "recorded", host.Answer(ev, hook.Verdict{Allow: true, Reason: "recorded"}))
		writeReply(&b, "not recorded", host.Answer(ev, hook.Verdict{Code: airlock.CodeUnavailable, Reason: "AIRLOCK-UNAVAILABLE: the store is down"}))
		return b.String()
	}
	d := gate.Decide(context.Background(), a)
	fmt.Fprintf(&b, "decision: %s\n", d)
	writeReply(&b, "allow", host.Answer(ev, hook.Verdict{Allow: true, Reason: "Airlock allowed it: auto"}))
	deny := hook.Verdict{Code: airlock.CodeDenied, Reason: "AIRLOCK-DENIED: Bash `rm -rf /` (fs.delete, destructive) denied by rule no-rm"}
	writeReply(&b, "deny", host.Answer(ev, deny))
	fmt.Fprintf(&b, "http deny: %s", host.Block(ev, deny))
	return b.String()
}

func writeReply(b *strings.Builder, what string, r hook.Reply) {
	fmt.Fprintf(b, "%s: exit %d\n", what, r.Exit)
	if r.Stdout != "" {
		fmt.Fprintf(b, "  stdout: %s", r.Stdout)
	}
	if r.Stderr != "" {
		fmt.Fprintf(b, "  stderr: %s\n", r.Stderr)
	}
}
