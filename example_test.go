package airlock_test

import (
	"context"
	"fmt"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/gate"
	"github.com/airlock-dev/airlock/shell"
)

// A gate in a few lines: load a policy, decide each action before running it.
func Example() {
	policy, err := gate.LoadPolicy("policy.yaml", []byte(`
rules:
  - id: read-only-git
    tool: Bash
    command: ["git status *", "git diff *", "git log *"]
    outcome: auto
  - id: no-force-push
    class: git.write
    min_tier: destructive
    outcome: deny
`))
	if err != nil {
		panic(err)
	}
	gate, err := gate.New(shell.Analyser{}, policy)
	if err != nil {
		panic(err)
	}
	for _, command := range []string{"git status", "git status && rm -rf /", "git push --force origin main"} {
		d := gate.Decide(context.Background(), airlock.Action{
			Agent: "coder-1",
			Tool:  "Bash",
			Args:  airlock.MustArgs(map[string]any{"command": command}),
		})
		fmt.Printf("%-30s %-6s %s/%s%s\n", command, d.Outcome, d.Classification.Class, d.Classification.Tier, codeSuffix(d))
	}
	// Output:
	// git status                     auto   git.read/read
	// git status && rm -rf /         ask    fs.delete/destructive
	// git push --force origin main   deny   git.write/destructive AIRLOCK-DENIED
}

// A refusal is a value: the decision says why, and which code to report.
func ExampleDecision_Explain() {
	policy, _ := gate.LoadPolicy("org.yaml", []byte(`
layer: organisation
floors:
  tiers: {destructive: ask}
rules:
  - {id: deletes-need-a-person, class: fs.delete, needs_human: true, reviewers: [sre-oncall]}
`))
	gate, _ := gate.New(shell.Analyser{}, policy)
	d := gate.Decide(context.Background(), airlock.Action{
		Agent: "janitor",
		Tool:  "delete_file",
		Args:  airlock.MustArgs(map[string]any{"path": "build/cache.db"}),
	})
	fmt.Println(d.Outcome, d.Code, d.NeedsHuman, d.Reviewers)
	// Output:
	// suggest AIRLOCK-NEEDS-HUMAN true [sre-oncall]
}

func codeSuffix(d airlock.Decision) string {
	if d.Code == "" {
		return ""
	}
	return " " + d.Code
}
