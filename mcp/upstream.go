package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// upstream is one session with one upstream server, for one client
// session. A server that exits is restarted with backoff, initialized
// again with the client's parameters, and its tools listed and checked
// again.
type upstream struct {
	s   *session
	srv Server
	// known is the MCP server catalogue's name for it (Server.Known).
	known string

	mu      sync.Mutex
	c       conn  // nil while it is not running
	gen     int   // connections made
	down    error // why it is not running
	calls   map[jsonrpc.ID]chan *jsonrpc.Response
	next    int64
	tools   *toolList // the last listing, nil until listed or after a change
	version string    // the protocol version it agreed to
	caps    map[string]json.RawMessage
	closed  bool
	// restarting is set while restart runs: one at a time.
	restarting bool
}

func newUpstream(s *session, srv Server) *upstream {
	return &upstream{s: s, srv: srv, known: srv.Known(), calls: map[jsonrpc.ID]chan *jsonrpc.Response{}, down: errors.New("not started")}
}

// errDown is a call to an upstream that is not running.
type errDown struct {
	name  string
	cause error
}

func (e *errDown) Error() string {
	return fmt.Sprintf("MCP server %s is not running (%v); Airlock restarts it", e.name, e.cause)
}

// start connects and initializes the upstream with the client's
// parameters, and returns its initialize result. It is the client's
// initialize that starts it; a restart does the same on its own.
func (u *upstream) start(ctx context.Context) (json.RawMessage, error) {
	c, err := u.connect(u.s.ctx)
	if err != nil {
		err = &errDown{u.srv.Name, err}
		u.fail(err)
		return nil, err
	}
	u.mu.Lock()
	u.gen++
	gen := u.gen
	u.c, u.down = c, nil
	u.mu.Unlock()
	go u.readLoop(c, gen)

	u.s.mu.Lock()
	params := u.s.init
	u.s.mu.Unlock()
	resp, err := u.call(ctx, "initialize", params)
	if err == nil && resp.Error != nil {
		err = resp.Error
	}
	if err != nil {
		u.lost(gen, fmt.Errorf("initialize: %w", err))
		return nil, err
	}
	var r struct {
		ProtocolVersion string                     `json:"protocolVersion"`
		Capabilities    map[string]json.RawMessage `json:"capabilities"`
	}
	_ = json.Unmarshal(resp.Result, &r)
	u.mu.Lock()
	u.version, u.caps = r.ProtocolVersion, r.Capabilities
	u.mu.Unlock()
	u.notify("notifications/initialized", nil)
	return resp.Result, nil
}

// connect starts the server's process, or opens its HTTP session.
func (u *upstream) connect(ctx context.Context) (conn, error) {
	if u.srv.URL != "" {
		t := &sdk.StreamableClientTransport{Endpoint: u.srv.URL, HTTPClient: &http.Client{Transport: &headers{u: u}}, MaxRetries: 2}
		return t.Connect(ctx)
	}
	cmd := exec.Command(u.srv.Command, u.srv.Args...)
	cmd.Env = append(os.Environ(), u.srv.Env...)
	cmd.Dir = u.srv.Dir
	cmd.Stderr = u.s.g.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	return newStream(stdout, stdin, func() error {
		// As MCP's stdio transport says: close its input, give it time,
		// then end it.
		_ = stdin.Close()
		select {
		case <-exited:
		case <-time.After(2 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		return nil
	}, false), nil
}

// headers adds the server's configured headers, and the protocol version
// it agreed to, to each request of its HTTP session.
type headers struct{ u *upstream }

func (h *headers) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range h.u.srv.Headers {
		req.Header.Set(k, v)
	}
	h.u.mu.Lock()
	if h.u.version != "" && req.Header.Get("Mcp-Protocol-Version") == "" {
		req.Header.Set("Mcp-Protocol-Version", h.u.version)
	}
	h.u.mu.Unlock()
	return http.DefaultTransport.RoundTrip(req)
}

// readLoop reads the upstream's messages until its connection ends.
func (u *upstream) readLoop(c conn, gen int) {
	for {
		msg, err := c.Read(u.s.ctx)
		var bad *malformed
		switch {
		case errors.As(err, &bad):
			u.s.g.logger().Warn("a message from an MCP server is not JSON-RPC", "server", u.srv.Name, "err", bad.err)
			if bad.id.IsValid() {
				u.write(&jsonrpc.Response{ID: bad.id, Error: &jsonrpc.Error{Code: bad.code, Message: bad.err.Error()}})
			}
			continue
		case err != nil:
			if errors.Is(err, io.EOF) {
				err = errors.New("it exited")
			}
			u.lost(gen, err)
			return
		}
		switch m := msg.(type) {
		case *jsonrpc.Response:
			u.mu.Lock()
			ch := u.calls[m.ID]
			delete(u.calls, m.ID)
			u.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		case *jsonrpc.Request:
			if m.IsCall() {
				u.s.ask(u, m)
			} else {
				u.notified(m)
			}
		}
	}
}

// notified handles a notification from the upstream.
func (u *upstream) notified(n *jsonrpc.Request) {
	switch n.Method {
	case "notifications/tools/list_changed":
		// List and check the tools now — a changed or new one waits for a
		// person from this moment — then tell the client.
		u.mu.Lock()
		u.tools = nil
		u.mu.Unlock()
		go func() {
			if _, err := u.listing(u.s.ctx); err != nil {
				u.s.g.logger().Warn("list an MCP server's tools after it said they changed", "server", u.srv.Name, "err", err)
			}
			u.s.send(&jsonrpc.Request{Method: n.Method, Params: n.Params})
		}()
		return
	case "notifications/cancelled":
		u.s.upstreamCancelled(u, n.Params)
		return
	}
	u.s.send(&jsonrpc.Request{Method: n.Method, Params: n.Params})
}

// lost records that connection gen ended: the calls waiting on it fail,
// and the server is restarted while the client stays.
func (u *upstream) lost(gen int, cause error) {
	u.mu.Lock()
	if gen != u.gen || u.c == nil {
		u.mu.Unlock()
		return
	}
	c := u.c
	u.c, u.down, u.tools = nil, cause, nil
	calls := u.calls
	u.calls = map[jsonrpc.ID]chan *jsonrpc.Response{}
	closed := u.closed
	u.mu.Unlock()
	_ = c.Close()
	for _, ch := range calls {
		ch <- nil
	}
	if closed || u.s.ctx.Err() != nil {
		return
	}
	u.s.g.logger().Error("MCP server stopped", "server", u.srv.Name, "session", u.s.id, "err", cause)
	go u.restart()
}

// fail records that the upstream could not be started.
func (u *upstream) fail(err error) {
	u.mu.Lock()
	u.down = err
	u.mu.Unlock()
}

// restart starts the upstream again with backoff until it runs or the
// session ends, then tells the client its tools may have changed.
func (u *upstream) restart() {
	u.mu.Lock()
	if u.restarting || u.closed {
		u.mu.Unlock()
		return
	}
	u.restarting = true
	u.mu.Unlock()
	defer func() {
		u.mu.Lock()
		u.restarting = false
		u.mu.Unlock()
	}()
	limit := u.s.g.Restart
	if limit <= 0 {
		limit = 30 * time.Second
	}
	for backoff := 200 * time.Millisecond; ; backoff = min(2*backoff, limit) {
		t := time.NewTimer(backoff)
		select {
		case <-u.s.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(u.s.ctx, time.Minute)
		_, err := u.start(ctx)
		cancel()
		if err == nil {
			u.s.g.logger().Info("MCP server restarted", "server", u.srv.Name, "session", u.s.id)
			u.s.notifyClient("notifications/tools/list_changed", nil)
			return
		}
		u.s.g.logger().Error("restart MCP server", "server", u.srv.Name, "session", u.s.id, "err", err, "retry in", min(2*backoff, limit))
	}
}

// close ends the upstream session for good.
func (u *upstream) close() {
	u.mu.Lock()
	u.closed = true
	c := u.c
	u.c = nil
	u.mu.Unlock()
	if c != nil {
		_ = c.Close()
	}
}

// write sends a message to the upstream, if it is running.
func (u *upstream) write(msg jsonrpc.Message) {
	u.mu.Lock()
	c := u.c
	u.mu.Unlock()
	if c == nil {
		return
	}
	if err := c.Write(u.s.ctx, msg); err != nil && u.s.ctx.Err() == nil {
		u.s.g.logger().Warn("write to an MCP server", "server", u.srv.Name, "err", err)
	}
}

// notify sends the upstream a notification.
func (u *upstream) notify(method string, params json.RawMessage) {
	u.write(&jsonrpc.Request{Method: method, Params: params})
}

// call sends the upstream a request and waits for its response. When ctx
// ends first, the upstream is told the request is cancelled.
func (u *upstream) call(ctx context.Context, method string, params json.RawMessage) (*jsonrpc.Response, error) {
	u.mu.Lock()
	c := u.c
	if c == nil {
		err := &errDown{u.srv.Name, u.down}
		u.mu.Unlock()
		return nil, err
	}
	u.next++
	id := intID(u.next)
	ch := make(chan *jsonrpc.Response, 1)
	u.calls[id] = ch
	u.mu.Unlock()
	if err := c.Write(ctx, &jsonrpc.Request{ID: id, Method: method, Params: params}); err != nil {
		u.mu.Lock()
		delete(u.calls, id)
		u.mu.Unlock()
		return nil, &errDown{u.srv.Name, err}
	}
	select {
	case resp := <-ch:
		if resp == nil {
			u.mu.Lock()
			err := &errDown{u.srv.Name, u.down}
			u.mu.Unlock()
			return nil, err
		}
		return resp, nil
	case <-ctx.Done():
		u.mu.Lock()
		delete(u.calls, id)
		u.mu.Unlock()
		b, _ := json.Marshal(map[string]any{"requestId": id.Raw(), "reason": "the client cancelled the request"})
		u.notify("notifications/cancelled", b)
		return nil, ctx.Err()
	}
}

// forward passes a request of the client's to the upstream and returns
// its answer: the result, or its error as it came.
func (u *upstream) forward(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	resp, err := u.call(ctx, method, params)
	if err != nil {
		var d *errDown
		if errors.As(err, &d) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: d.Error()}
		}
		return nil, err
	}
	if resp.Error != nil {
		return nil, resp.Error
	}
	return resp.Result, nil
}

// setParam returns params with key set to v.
func setParam(params json.RawMessage, key string, v any) (json.RawMessage, error) {
	m := map[string]json.RawMessage{}
	if len(params) > 0 && string(params) != "null" {
		if err := json.Unmarshal(params, &m); err != nil {
			return nil, err
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	m[key] = b
	return json.Marshal(m)
}
