package gate_test

import (
	"path/filepath"
	"testing"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/gate"
	"github.com/airlock-dev/airlock/shell"
	"github.com/airlock-dev/airlock/sqlite"
)

// TestBacktest: recorded decisions replayed through a changed stack are
// counted by old → new outcome, with examples naming their audit events,
// asks avoided, what newly runs (above write apart) and what is newly
// denied; unchanged decisions count as replayed only.
func TestBacktest(t *testing.T) {
	db := sqlite.NewDB(filepath.Join(t.TempDir(), "airlock.db"))
	if err := db.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	old := airlocktestGate(t, "name: old\n")
	e := &gate.Enforcer{Gate: old, Store: db}
	for _, c := range []string{"npm test", "npm test --coverage", "curl https://example.com", "git status", "rm -r build", "npm publish"} {
		e.Check(t.Context(), bash("coder-1", c))
	}
	next := airlocktestGate(t, `name: next
rules:
  - {tool: Bash, command: "npm test *", outcome: auto}
  - {tool: Bash, command: "curl *", outcome: auto, max_tier: network-egress}
  - {tool: Bash, command: "npm publish *", outcome: deny}
`)
	evs, err := db.Events(t.Context(), airlock.EventFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := next.Backtest(t.Context(), func(yield func(airlock.Event) bool) {
		for _, e := range evs {
			if !yield(e) {
				return
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Replayed != 6 || rep.AsksAvoided != 3 || rep.NewlyRun != 3 || rep.NewlyRunAboveWrite != 1 || rep.NewlyDenied != 1 {
		t.Errorf("report %+v", rep)
	}
	if len(rep.Changes) != 2 || rep.Changes[0].From != airlock.Ask || rep.Changes[0].To != airlock.Auto || rep.Changes[0].Count != 3 ||
		rep.Changes[1].To != airlock.Deny || rep.Changes[1].Count != 1 {
		t.Fatalf("changes %+v", rep.Changes)
	}
	for _, ex := range rep.Changes[0].Examples {
		if ex.Seq == 0 || ex.Agent != "coder-1" || ex.Tool != "Bash" {
			t.Errorf("example %+v", ex)
		}
	}
	// The same stack changes nothing.
	if rep, err := old.Backtest(t.Context(), func(yield func(airlock.Event) bool) {
		for _, e := range evs {
			if !yield(e) {
				return
			}
		}
	}); err != nil || rep.Replayed != 6 || len(rep.Changes) != 0 {
		t.Errorf("the recorded stack: %+v, %v", rep, err)
	}
}

func airlocktestGate(t testing.TB, policy string) *gate.Gate {
	t.Helper()
	p, err := gate.LoadPolicy("p.yaml", []byte(policy))
	if err != nil {
		t.Fatal(err)
	}
	g, err := gate.New(shell.Analyser{}, p)
	if err != nil {
		t.Fatal(err)
	}
	return g
}
