package gate_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/gate"
	"github.com/airlock-dev/airlock/sqlite"
)

// BenchmarkBacktest replays recorded decisions — a mix of shell commands
// and file tools, read back from a SQLite log — through a changed stack,
// and reports the actions replayed per second (issue 26's goal: at least
// 50 000 per core).
func BenchmarkBacktest(b *testing.B) {
	db := sqlite.NewDB(filepath.Join(b.TempDir(), "airlock.db"))
	if err := db.Open(b.Context()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	e := &gate.Enforcer{Gate: airlocktestGate(b, "name: old\n"), Store: db}
	for i := range 2000 {
		var a airlock.Action
		switch i % 4 {
		case 0:
			a = bash(fmt.Sprintf("coder-%d", i%7), fmt.Sprintf("npm test --shard=%d", i))
		case 1:
			a = bash("coder-1", fmt.Sprintf("git log -n %d && grep -r TODO src/%d", i, i))
		case 2:
			a = airlock.Action{Agent: "coder-2", Tool: "Write", Cwd: "/w", Args: airlock.MustArgs(map[string]any{"file_path": fmt.Sprintf("docs/%d.md", i), "content": "x"})}
		default:
			a = bash("coder-3", fmt.Sprintf("curl -s https://example.com/%d | jq .", i))
		}
		e.Check(b.Context(), a)
	}
	evs, err := db.Events(b.Context(), airlock.EventFilter{Kind: airlock.EventDecision, Limit: airlock.MaxPageSize})
	if err != nil {
		b.Fatal(err)
	}
	for len(evs) < 2000 {
		more, err := db.Events(b.Context(), airlock.EventFilter{Kind: airlock.EventDecision, AfterSeq: evs[len(evs)-1].Seq, Limit: airlock.MaxPageSize})
		if err != nil || len(more) == 0 {
			b.Fatal(err)
		}
		evs = append(evs, more...)
	}
	next := airlocktestGate(b, `name: next
rules:
  - {tool: Bash, command: "npm test *", outcome: auto}
  - {tool: Write, outcome: notify}
`)
	replay := func(yield func(airlock.Event) bool) {
		for _, e := range evs {
			if !yield(e) {
				return
			}
		}
	}
	var replayed int
	start := time.Now()
	for b.Loop() {
		rep, err := next.Backtest(b.Context(), replay)
		if err != nil || rep.Replayed != len(evs) {
			b.Fatalf("%+v %v", rep, err)
		}
		replayed += rep.Replayed
	}
	b.ReportMetric(float64(replayed)/time.Since(start).Seconds(), "actions/s")
}
