package main

// BenchmarkHookProcess: what a host waits for on every tool call when it
// runs `airlock hook claude-code`, against the least a hook process can do
// (testdata/minhook: the same single request to the same server, the same
// URL, headers and body, the reply printed). Goal: airlock at most 1.3× the
// minimal program, measured in the same run.
//
//	go test -run '^$' -bench HookProcess -benchtime 200x -count 10 ./cmd/airlock
//
// Figures are in docs/BENCHMARKS.md.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

var (
	minhookOnce sync.Once
	minhookPath string
	minhookErr  error
)

// minhookBinary builds testdata/minhook once per test run.
func minhookBinary(tb testing.TB) string {
	tb.Helper()
	minhookOnce.Do(func() {
		dir, err := os.MkdirTemp("", "airlock-minhook-")
		if err != nil {
			minhookErr = err
			return
		}
		minhookPath = filepath.Join(dir, "minhook")
		out, err := exec.Command("go", "build", "-o", minhookPath, "./testdata/minhook").CombinedOutput()
		if err != nil {
			minhookErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if minhookErr != nil {
		tb.Fatal(minhookErr)
	}
	return minhookPath
}

// hookBench runs one hook process per call, the way a host does.
type hookBench struct {
	airlock, minimal string // executables
	url              string // the URL `airlock hook claude-code` POSTs to
	env              []string
	calls            int // call IDs handed out
}

func newHookBench(b *testing.B) *hookBench {
	// Both binaries before anything could change HOME (go build's cache).
	h := &hookBench{airlock: airlockBinary(b), minimal: minhookBinary(b)}
	s := newHookServer(b)
	// The hook's default --timeout (600s) less its margin (10s): the hold
	// the command asks for.
	h.url = s.url + "/v1/hooks/claude-code?hold=9m50s"
	h.env = append(os.Environ(), "AIRLOCK_SERVER="+s.url, "AIRLOCK_TOKEN="+s.host, "MINHOOK_URL="+h.url)
	return h
}

// payload is a PreToolUse of a read (`ls -la`, an auto decision), a new
// call each time as in a real session.
func (h *hookBench) payload() []byte {
	h.calls++
	return mustJSON(map[string]any{"session_id": "sess-bench", "transcript_path": "/tmp/t.jsonl", "cwd": "/work/app",
		"permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash",
		"tool_input":  map[string]any{"command": "ls -la", "description": "List files"},
		"tool_use_id": "toolu_bench_" + strconv.Itoa(h.calls)})
}

// run runs exe with args and the payload of a new call on stdin, checks
// that it allowed the call, and returns how long the host waited.
func (h *hookBench) run(b *testing.B, exe string, args ...string) time.Duration {
	payload := h.payload()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Env = h.env
	cmd.Stdin = bytes.NewReader(payload)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	t0 := time.Now()
	err := cmd.Run()
	took := time.Since(t0)
	if err != nil || claudeDecision(stdout.String()) != "allow" {
		b.Fatalf("%s: %v: stdout %q, stderr %q", filepath.Base(exe), err, stdout.String(), stderr.String())
	}
	return took
}

func (h *hookBench) runAirlock(b *testing.B) time.Duration {
	return h.run(b, h.airlock, "hook", "claude-code")
}
func (h *hookBench) runMinimal(b *testing.B) time.Duration { return h.run(b, h.minimal) }

// BenchmarkHookProcess is one hook call per op: `airlock hook claude-code`
// (airlock), the minimal program (minimal), and both in alternating order
// (paired: an op is one of each, ratio the airlock time over the minimal
// time, so that both see the machine at the same moments).
func BenchmarkHookProcess(b *testing.B) {
	h := newHookBench(b)
	// Warm up the server, the page cache and the session: one call each.
	h.runAirlock(b)
	h.runMinimal(b)
	for _, leg := range []struct {
		name string
		run  func(*hookBench, *testing.B) time.Duration
	}{{"airlock", (*hookBench).runAirlock}, {"minimal", (*hookBench).runMinimal}} {
		b.Run(leg.name, func(b *testing.B) {
			for b.Loop() {
				leg.run(h, b)
			}
		})
	}
	b.Run("paired", func(b *testing.B) {
		var airlock, minimal time.Duration
		i := 0
		for b.Loop() {
			if i%2 == 0 {
				airlock += h.runAirlock(b)
				minimal += h.runMinimal(b)
			} else {
				minimal += h.runMinimal(b)
				airlock += h.runAirlock(b)
			}
			i++
		}
		b.ReportMetric(float64(airlock.Microseconds())/float64(i), "airlock-µs")
		b.ReportMetric(float64(minimal.Microseconds())/float64(i), "minimal-µs")
		if minimal > 0 {
			b.ReportMetric(float64(airlock)/float64(minimal), "ratio")
		}
	})
}
