package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-dev/airlock"
)

// TestMalformedMessages: whatever the client sends that is not a JSON-RPC
// message is answered with a JSON-RPC error, and the session goes on; so
// does a line of noise on the upstream's standard output.
func TestMalformedMessages(t *testing.T) {
	e, _ := newEnforcer(t)
	g := newGateway(t, e, testServerSpec(t, "test"))
	toGateway, in := io.Pipe()
	out, fromGateway := io.Pipe()
	go func() {
		_ = g.ServeStdio(context.WithoutCancel(t.Context()), toGateway, fromGateway)
		fromGateway.Close()
	}()
	t.Cleanup(func() { in.Close() })
	lines := bufio.NewScanner(out)
	lines.Buffer(nil, 1<<20)
	exchange := func(line string) map[string]any {
		t.Helper()
		if _, err := io.WriteString(in, line+"\n"); err != nil {
			t.Fatal(err)
		}
		if !lines.Scan() {
			t.Fatalf("no answer to %s: %v", line, lines.Err())
		}
		var m map[string]any
		if err := json.Unmarshal(lines.Bytes(), &m); err != nil {
			t.Fatalf("the answer to %s is not JSON: %s", line, lines.Bytes())
		}
		return m
	}
	errorCode := func(m map[string]any) float64 {
		e, _ := m["error"].(map[string]any)
		c, _ := e["code"].(float64)
		return c
	}
	m := exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	if _, err := io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		line string
		code float64
		id   any
	}{
		{`this is not json`, -32700, nil},
		{`{"jsonrpc":"2.0","id":7,"method":`, -32700, nil},
		{`{"jsonrpc":"1.0","id":8,"method":"ping"}`, -32600, 8.0},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, -32600, nil},
		{`[]`, -32600, nil},
		{`{"jsonrpc":"2.0"}`, -32600, nil},
		{`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":"nope"}`, -32602, 9.0},
		{`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"nosuch"}}`, -32602, 10.0},
	} {
		m := exchange(c.line)
		if errorCode(m) != c.code || m["id"] != c.id {
			t.Errorf("%s: answered %v, want error %v with id %v", c.line, m, c.code, c.id)
		}
	}
	m = exchange(`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"noise","arguments":{}}}`)
	if !strings.Contains(string(mustJSON(t, m)), "noisy") {
		t.Fatalf("noise: %v", m)
	}
	m = exchange(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"hello","arguments":{"name":"still here"}}}`)
	if !strings.Contains(string(mustJSON(t, m)), "hello, still here") {
		t.Fatalf("after the malformed messages, hello: %v", m)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestUpstreamRestart: an upstream that exits fails the call it was
// answering, is restarted with backoff, and the client is told its tools
// changed; the next call runs on the new process.
func TestUpstreamRestart(t *testing.T) {
	e, _ := newEnforcer(t)
	changed := make(chan struct{}, 4)
	cs := connect(t, newGateway(t, e, testServerSpec(t, "test")), &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} },
	})
	ctx := t.Context()
	if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "crash", Arguments: map[string]any{}}); err == nil || !strings.Contains(err.Error(), "not running") {
		t.Fatalf("a call whose server exited: %v, want an error saying so", err)
	}
	select {
	case <-changed:
	case <-time.After(20 * time.Second):
		t.Fatal("the restarted server was not announced")
	}
	r, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "hello", Arguments: map[string]any{"name": "again"}})
	if err != nil || text(r) != "hello, again" {
		t.Fatalf("after the restart: %v %v", asJSON(t, r), err)
	}
}

// TestStoreDown: when the decision cannot be recorded, the call is refused
// with AIRLOCK-UNAVAILABLE and never reaches the server.
func TestStoreDown(t *testing.T) {
	e, db := newEnforcer(t)
	cs := connect(t, newGateway(t, e, testServerSpec(t, "test")), nil)
	dir := t.TempDir()
	r, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "touch", Arguments: map[string]any{"path": filepath.Join(dir, "before")}})
	if err != nil || r.IsError {
		t.Fatalf("touch: %v %v", asJSON(t, r), err)
	}
	db.Close()
	r, err = cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "touch", Arguments: map[string]any{"path": filepath.Join(dir, "after")}})
	if err != nil || !r.IsError || !strings.Contains(text(r), airlock.CodeUnavailable) {
		t.Fatalf("touch with the store down: %v %v, want %s", asJSON(t, r), err, airlock.CodeUnavailable)
	}
	if _, err := os.Stat(filepath.Join(dir, "after")); err == nil {
		t.Fatal("the call ran although its decision could not be recorded")
	}
}
