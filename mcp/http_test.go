package mcp_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/mcp"
	"github.com/airlock-dev/airlock/mcp/mcptest"
)

// bearer adds a token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// headerLog is an upstream MCP server over HTTP that notes the headers of
// every request it gets.
type headerLog struct {
	mu      sync.Mutex
	headers []http.Header
}

func (l *headerLog) serve(t *testing.T) string {
	s := sdk.NewServer(&sdk.Implementation{Name: "remote", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "ping", Description: "Answers pong."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "pong"}}}, nil, nil
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.headers = append(l.headers, r.Header.Clone())
		l.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestServeHTTP: one streamable HTTP endpoint in front of a stdio server,
// the reference server from npm and an HTTP server; each tool is named
// <server>__<tool>, prompts too, and calls, prompts and resources reach
// the server they belong to. A client without an agent token is refused;
// the token a session began with is the only one it answers; the client's
// token never reaches an upstream, which gets the gateway's own headers.
func TestServeHTTP(t *testing.T) {
	everything := mcptest.Bin(t, "mcp-server-everything")
	e, db := newEnforcer(t)
	var remote headerLog
	g := newGateway(t, e, testServerSpec(t, "test"), mcp.Server{Name: "everything", Command: everything},
		mcp.Server{Name: "remote", URL: remote.serve(t), Headers: map[string]string{"X-Upstream-Key": "gateway-credential"}})
	g.Namespace = true
	h, err := g.Handler(func(_ context.Context, token string) (string, airlock.Checker, error) {
		if token != "agent-secret" && token != "other-secret" {
			return "", nil, airlock.Errorf("unauthenticated", "unknown token")
		}
		return "laptop", e, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); h.Close() })
	ctx := t.Context()

	for _, token := range []string{"", "nope"} {
		c := sdk.NewClient(&sdk.Implementation{Name: "c", Version: "1"}, nil)
		if _, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}}, nil); err == nil {
			t.Fatalf("token %q was let in", token)
		}
	}
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("without a token: %s %v", resp.Status, resp.Header)
	}

	c := sdk.NewClient(&sdk.Implementation{Name: "c", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: bearer{"agent-secret", http.DefaultTransport}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if info := cs.InitializeResult(); info.ServerInfo.Name != "airlock-mcp-gateway" || info.Capabilities.Prompts == nil || info.Capabilities.Resources == nil {
		t.Errorf("initialize: %+v", info)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tl := range tools.Tools {
		names[tl.Name] = true
	}
	for _, n := range []string{"test__hello", "everything__echo", "remote__ping"} {
		if !names[n] {
			t.Errorf("tools/list lacks %s: %v", n, names)
		}
	}
	for _, call := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"test__hello", map[string]any{"name": "x"}, "hello, x"},
		{"everything__echo", map[string]any{"message": "m"}, "Echo: m"},
		{"remote__ping", map[string]any{}, "pong"},
	} {
		r, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: call.name, Arguments: call.args})
		if err != nil || r.IsError || text(r) != call.want {
			t.Errorf("%s: %v %v", call.name, asJSON(t, r), err)
		}
	}
	evs, err := db.Events(ctx, airlock.EventFilter{Kind: airlock.EventDecision, Agent: "laptop", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var decided []string
	for _, ev := range evs {
		for _, tool := range []string{"mcp__test__hello", "mcp__everything__echo", "mcp__remote__ping"} {
			if strings.Contains(string(ev.Payload), `"tool":"`+tool+`"`) {
				decided = append(decided, tool)
			}
		}
	}
	if len(decided) != 3 {
		t.Errorf("decisions recorded for %v, want each call's as mcp__<server>__<tool>", decided)
	}
	prompts, err := cs.ListPrompts(ctx, nil)
	if err != nil || len(prompts.Prompts) == 0 || !strings.HasPrefix(prompts.Prompts[len(prompts.Prompts)-1].Name, "everything__") {
		t.Fatalf("prompts/list: %v %v", asJSON(t, prompts), err)
	}
	if p, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "everything__simple-prompt"}); err != nil || len(p.Messages) == 0 {
		t.Errorf("prompts/get: %v %v", p, err)
	}
	res, err := cs.ListResources(ctx, nil)
	if err != nil || len(res.Resources) == 0 {
		t.Fatalf("resources/list: %v %v", res, err)
	}
	if r, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: res.Resources[0].URI}); err != nil || len(r.Contents) == 0 {
		t.Errorf("resources/read: %v %v", r, err)
	}
	// Both were decided as the server's, by its own names.
	if evs := decisionsOf(t, db, "mcp__everything__prompts/get"); len(evs) != 1 || !strings.Contains(string(evs[0].Payload), `"args":{"name":"simple-prompt"}`) {
		t.Errorf("the prompt's decision: %v", evs)
	}
	if evs := decisionsOf(t, db, "mcp__everything__resources/read"); len(evs) != 1 || !strings.Contains(string(evs[0].Payload), res.Resources[0].URI) {
		t.Errorf("the resource read's decision: %v", evs)
	}

	// Over HTTP too, params that can be read two ways are refused.
	resp, body := postMCP(t, srv.URL, "agent-secret", cs.ID(),
		`{"jsonrpc":"2.0","id":98,"method":"tools/call","params":{"name":"test__touch","arguments":{"path":"a"},"Arguments":{"path":"b"}}}`)
	if !strings.Contains(string(body), "-32602") || !strings.Contains(string(body), `duplicate member \"Arguments\"`) {
		t.Errorf("ambiguous params over HTTP: %s %s", resp.Status, body)
	}
	resp, body = postMCP(t, srv.URL, "agent-secret", cs.ID(),
		`{"jsonrpc":"2.0","id":97,"method":"tools/call","params":{"name":"test__hello","arguments":{"name":"a"}},"params":{"name":"test__touch","arguments":{"path":"b"}}}`)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "-32600") || !strings.Contains(string(body), `"id":97`) {
		t.Errorf("params twice over HTTP: %s %s", resp.Status, body)
	}

	// Another valid token cannot ride on this session.
	if resp, _ := postMCP(t, srv.URL, "other-secret", cs.ID(), `{"jsonrpc":"2.0","id":99,"method":"tools/list"}`); resp.StatusCode != http.StatusForbidden {
		t.Errorf("another token on the session: %s", resp.Status)
	}

	remote.mu.Lock()
	defer remote.mu.Unlock()
	if len(remote.headers) == 0 {
		t.Fatal("the HTTP upstream got no requests")
	}
	for _, hd := range remote.headers {
		if hd.Get("X-Upstream-Key") != "gateway-credential" || strings.Contains(hd.Get("Authorization"), "agent-secret") {
			t.Fatalf("the upstream got headers %v: want the gateway's credential and never the client's token", hd)
		}
	}
}

// TestServeHTTPIdle: a session whose client went away without ending it
// is closed once idle, its upstreams with it; one with a call in progress
// is not.
func TestServeHTTPIdle(t *testing.T) {
	e, _ := newEnforcer(t)
	g := newGateway(t, e, testServerSpec(t, "test"))
	g.Namespace, g.SessionIdle = true, 300*time.Millisecond
	h, err := g.Handler(func(context.Context, string) (string, airlock.Checker, error) {
		return "laptop", e, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); h.Close() })
	post := func(session, body string) *http.Response {
		t.Helper()
		resp, _ := postMCP(t, srv.URL, "x", session, body)
		return resp
	}
	resp := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("initialize: %s, session %q", resp.Status, id)
	}
	if resp := post(id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode >= 300 {
		t.Fatalf("initialized: %s", resp.Status)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp := post(id, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
		if resp.StatusCode == http.StatusNotFound {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("an idle session was never closed")
		}
		time.Sleep(time.Second) // idle for longer than SessionIdle
	}
}

// TestServeOneServerDown: in front of several servers, one that does not
// start leaves the others serving.
func TestServeOneServerDown(t *testing.T) {
	e, _ := newEnforcer(t)
	g := newGateway(t, e, testServerSpec(t, "test"), mcp.Server{Name: "broken", Command: filepath.Join(t.TempDir(), "no-such-server")})
	g.Namespace = true
	h, err := g.Handler(func(context.Context, string) (string, airlock.Checker, error) {
		return "laptop", e, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); h.Close() })
	c := sdk.NewClient(&sdk.Implementation{Name: "c", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: bearer{"x", http.DefaultTransport}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	r, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "test__hello", Arguments: map[string]any{"name": "still"}})
	if err != nil || text(r) != "hello, still" {
		t.Fatalf("with one server down: %v %v", asJSON(t, r), err)
	}
	if r, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "broken__x", Arguments: map[string]any{}}); err != nil || !r.IsError ||
		!strings.Contains(text(r), airlock.CodeUnavailable) || !strings.Contains(text(r), "not running") {
		t.Errorf("a call to the server that did not start: %v %v, want %s saying it is not running", asJSON(t, r), err, airlock.CodeUnavailable)
	}
}

// postMCP posts one JSON-RPC message to a streamable HTTP endpoint with a
// bearer token and, when given, a session, and returns the answer read.
func postMCP(t *testing.T, url, token, session, body string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, b
}
