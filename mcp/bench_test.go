package mcp_test

// BenchmarkProxyCall: an auto tools/call through the gateway (airlock),
// against the same call through a bare pass-through proxy written with the
// go-sdk's typed API that makes one decision on the same kind of store and
// forwards (bare): the anchor, measured side by side in one run. Both run
// in this process over the same pipes, in front of the same stdio server
// (this test binary), with the same policy on SQLite.
//
//	go test -run '^$' -bench ProxyCall -benchtime 2000x -count 5 ./mcp
//
// Goals: the gateway at most 1.5× the anchor at p50 and p99 (paired), and
// at least 0.5× its calls/s with 16 calls in flight (concurrent-16).
// Figures are in docs/BENCHMARKS.md.

import (
	"context"
	"io"
	"os/exec"
	"slices"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/gate"
)

// bareProxy is the anchor: a go-sdk server whose one tool decides the call
// with the Enforcer, then forwards it to the upstream through a go-sdk
// client.
func bareProxy(b *testing.B, e *gate.Enforcer, upstream *exec.Cmd) *sdk.ClientSession {
	ctx := b.Context()
	up, err := sdk.NewClient(&sdk.Implementation{Name: "bare", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: upstream}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { up.Close() })
	srv := sdk.NewServer(&sdk.Implementation{Name: "bare-proxy", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "hello", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			a := airlock.Action{Agent: "laptop", Tool: "mcp__test__hello", Args: req.Params.Arguments}
			if enf := e.Check(ctx, a); !enf.Allowed {
				return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: enf.Code}}}, nil
			}
			return up.CallTool(ctx, &sdk.CallToolParams{Name: req.Params.Name, Arguments: req.Params.Arguments})
		})
	toServer, clientOut := io.Pipe()
	clientIn, fromServer := io.Pipe()
	ss, err := srv.Connect(ctx, &sdk.IOTransport{Reader: toServer, Writer: fromServer}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, &sdk.IOTransport{Reader: clientIn, Writer: clientOut}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

// call makes one hello call and returns how long it took.
func call(b *testing.B, cs *sdk.ClientSession) time.Duration {
	t0 := time.Now()
	r, err := cs.CallTool(b.Context(), &sdk.CallToolParams{Name: "hello", Arguments: map[string]any{"name": "bench"}})
	took := time.Since(t0)
	if err != nil || r.IsError {
		b.Fatalf("hello: %v %v", r, err)
	}
	return took
}

func percentile(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

func BenchmarkProxyCall(b *testing.B) {
	spec := testServerSpec(b, "test")
	e, _ := newEnforcer(b)
	airlockCS := connect(b, newGateway(b, e, spec), nil)
	cmd := exec.Command(spec.Command)
	cmd.Env = append(cmd.Environ(), spec.Env...)
	bareCS := bareProxy(b, e, cmd)
	// Warm both: the first listing pins the tools, the first calls open
	// the store's statements.
	for range 20 {
		call(b, airlockCS)
		call(b, bareCS)
	}
	b.Run("paired", func(b *testing.B) {
		var a, bare []time.Duration
		i := 0
		for b.Loop() {
			if i%2 == 0 {
				a = append(a, call(b, airlockCS))
				bare = append(bare, call(b, bareCS))
			} else {
				bare = append(bare, call(b, bareCS))
				a = append(a, call(b, airlockCS))
			}
			i++
		}
		for _, q := range []struct {
			name string
			p    float64
		}{{"p50", 0.5}, {"p99", 0.99}} {
			pa, pb := percentile(a, q.p), percentile(bare, q.p)
			b.ReportMetric(float64(pa.Microseconds()), "airlock-"+q.name+"-µs")
			b.ReportMetric(float64(pb.Microseconds()), "bare-"+q.name+"-µs")
			b.ReportMetric(float64(pa)/float64(pb), q.name+"-ratio")
		}
	})
	for _, leg := range []struct {
		name string
		cs   *sdk.ClientSession
	}{{"concurrent-16/airlock", airlockCS}, {"concurrent-16/bare", bareCS}} {
		b.Run(leg.name, func(b *testing.B) {
			var wg sync.WaitGroup
			calls := make(chan struct{})
			for range 16 {
				wg.Go(func() {
					for range calls {
						call(b, leg.cs)
					}
				})
			}
			start := time.Now()
			n := 0
			for b.Loop() {
				calls <- struct{}{}
				n++
			}
			close(calls)
			wg.Wait()
			b.ReportMetric(float64(n)/time.Since(start).Seconds(), "calls/s")
		})
	}
}
