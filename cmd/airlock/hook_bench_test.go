package main

// BenchmarkHookProcess: what a host waits for on every tool call when it
// runs `airlock-hook claude-code` (what `airlock hook install` writes) or
// `airlock hook claude-code`, against the least a hook process can do
// (testdata/minhook: the same single request to the same server, the same
// URL, headers and body, the reply printed). Goal: the hook at most 1.3×
// the minimal program, measured in the same run.
//
//	go test -run '^$' -bench HookProcess -benchtime 200x -count 10 ./cmd/airlock
//
// Figures are in docs/BENCHMARKS.md.

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// hookBench runs one hook process per call, the way a host does.
type hookBench struct {
	dir   string // the built programs
	url   string // the URL the hook POSTs to
	env   []string
	calls int // call IDs handed out
}

func newHookBench(b *testing.B) *hookBench {
	// The binaries before anything could change HOME (go build's cache).
	h := &hookBench{dir: binaries(b)}
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

// run runs a program's argv with the payload of a new call on stdin,
// checks that it allowed the call, and returns how long the host waited.
func (h *hookBench) run(b *testing.B, argv ...string) time.Duration {
	payload := h.payload()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(h.dir, argv[0]), argv[1:]...)
	cmd.Env = h.env
	cmd.Stdin = bytes.NewReader(payload)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	t0 := time.Now()
	err := cmd.Run()
	took := time.Since(t0)
	if err != nil || claudeDecision(stdout.String()) != "allow" {
		b.Fatalf("%s: %v: stdout %q, stderr %q", argv[0], err, stdout.String(), stderr.String())
	}
	return took
}

// BenchmarkHookProcess is one hook call per op of each program alone, and
// of each hook and the minimal program in alternating order (paired-*: an
// op is one of each, ratio the hook's time over the minimal program's, so
// that both see the machine at the same moments).
func BenchmarkHookProcess(b *testing.B) {
	h := newHookBench(b)
	minimal := []string{"minhook"}
	hooks := []struct {
		name string
		argv []string
	}{
		{"airlock-hook", []string{"airlock-hook", "claude-code"}},
		{"airlock", []string{"airlock", "hook", "claude-code"}},
	}
	// Warm up the server, the page cache and the session: one call each.
	h.run(b, minimal...)
	for _, leg := range hooks {
		h.run(b, leg.argv...)
	}
	for _, leg := range append(hooks, struct {
		name string
		argv []string
	}{"minimal", minimal}) {
		b.Run(leg.name, func(b *testing.B) {
			for b.Loop() {
				h.run(b, leg.argv...)
			}
		})
	}
	for _, leg := range hooks {
		b.Run("paired-"+leg.name, func(b *testing.B) {
			var hook, min time.Duration
			i := 0
			for b.Loop() {
				if i%2 == 0 {
					hook += h.run(b, leg.argv...)
					min += h.run(b, minimal...)
				} else {
					min += h.run(b, minimal...)
					hook += h.run(b, leg.argv...)
				}
				i++
			}
			b.ReportMetric(float64(hook.Microseconds())/float64(i), "hook-µs")
			b.ReportMetric(float64(min.Microseconds())/float64(i), "minimal-µs")
			if min > 0 {
				b.ReportMetric(float64(hook)/float64(min), "ratio")
			}
		})
	}
}
