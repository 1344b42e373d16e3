package gate_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
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

// BenchmarkBacktestLog replays a SQLite audit log of
// $AIRLOCK_BENCH_BACKTEST_EVENTS decision events (default 100 000; the
// issue's figure is measured with 1 000 000), read back page by page as
// `airlock policy backtest --db` reads it, and reports actions replayed per
// second, reading included.
func BenchmarkBacktestLog(b *testing.B) {
	n := 100_000
	if s := os.Getenv("AIRLOCK_BENCH_BACKTEST_EVENTS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			b.Fatalf("AIRLOCK_BENCH_BACKTEST_EVENTS=%q: want a positive count", s)
		}
		n = v
	}
	db := sqlite.NewDB(filepath.Join(b.TempDir(), "airlock.db"))
	if err := db.Open(b.Context()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	// Real decision payloads, of a mix of actions, appended many times over.
	e := &gate.Enforcer{Gate: airlocktestGate(b, "name: old\n"), Store: db}
	for i := range 100 {
		switch i % 4 {
		case 0:
			e.Check(b.Context(), bash(fmt.Sprintf("coder-%d", i%7), fmt.Sprintf("npm test --shard=%d", i)))
		case 1:
			e.Check(b.Context(), bash("coder-1", fmt.Sprintf("git log -n %d && grep -r TODO src/%d", i, i)))
		case 2:
			e.Check(b.Context(), airlock.Action{Agent: "coder-2", Tool: "Write", Cwd: "/w", Args: airlock.MustArgs(map[string]any{"file_path": fmt.Sprintf("docs/%d.md", i), "content": "x"})})
		default:
			e.Check(b.Context(), bash("coder-3", fmt.Sprintf("curl -s https://example.com/%d | jq .", i)))
		}
	}
	seed, err := db.Events(b.Context(), airlock.EventFilter{Kind: airlock.EventDecision, Limit: airlock.MaxPageSize})
	if err != nil || len(seed) == 0 {
		b.Fatal(err)
	}
	for have := len(seed); have < n; {
		batch := min(1000, n-have)
		rec := airlock.Record{}
		for i := range batch {
			s := seed[(have+i)%len(seed)]
			rec.Events = append(rec.Events, airlock.Event{Kind: s.Kind, Agent: s.Agent, Outcome: s.Outcome, Payload: s.Payload})
		}
		if _, err := db.Append(b.Context(), rec); err != nil {
			b.Fatal(err)
		}
		have += batch
	}
	next := airlocktestGate(b, "name: next\nrules:\n  - {tool: Bash, command: \"npm test *\", outcome: auto}\n")
	var replayed int
	start := time.Now()
	for b.Loop() {
		var readErr error
		rep, err := next.Backtest(b.Context(), func(yield func(airlock.Event) bool) {
			f := airlock.EventFilter{Kind: airlock.EventDecision, Limit: airlock.MaxPageSize}
			for {
				page, err := db.Events(b.Context(), f)
				if err != nil {
					readErr = err
					return
				}
				for _, e := range page {
					if !yield(e) {
						return
					}
				}
				if len(page) < f.Limit {
					return
				}
				f.AfterSeq = page[len(page)-1].Seq
			}
		})
		if err != nil || readErr != nil || rep.Replayed != n {
			b.Fatalf("replayed %d of %d: %v %v", rep.Replayed, n, err, readErr)
		}
		replayed += rep.Replayed
	}
	b.ReportMetric(float64(replayed)/time.Since(start).Seconds(), "actions/s")
}
