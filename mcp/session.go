package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/airlock-dev/airlock"
)

// session is one client's session: the client's connection and one
// session with each upstream.
type session struct {
	g       *Gateway
	down    conn
	id      string // the MCP session ID ("" over stdio)
	agent   string // whose calls these are
	checker airlock.Checker
	ups     []*upstream

	ctx context.Context // ends when the client goes

	mu       sync.Mutex
	inflight map[jsonrpc.ID]context.CancelFunc // the client's requests being answered
	toClient map[jsonrpc.ID]route              // requests sent to the client for an upstream, by their ID here
	nextID   int64                             // IDs of the requests sent to the client
	init     json.RawMessage                   // the client's initialize params

	// In front of several servers: which one serves a resource.
	uris      map[string]*upstream
	templates []templateRoute

	releases map[string]bool // tool release requests being waited on
	taken    map[string]bool // requests approved to run now this session took
}

// route is a request of an upstream's, by its ID there.
type route struct {
	up *upstream
	id jsonrpc.ID
}

func newSession(g *Gateway, down conn, id, agent string, checker airlock.Checker) *session {
	s := &session{g: g, down: down, id: id, agent: agent, checker: checker,
		inflight: map[jsonrpc.ID]context.CancelFunc{}, toClient: map[jsonrpc.ID]route{}}
	for _, srv := range g.Servers {
		s.ups = append(s.ups, newUpstream(s, srv))
	}
	return s
}

// serve reads the client's messages until it goes away or ctx ends.
func (s *session) serve(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	s.ctx = ctx
	defer func() {
		cancel()
		for _, u := range s.ups {
			u.close()
		}
	}()
	for {
		msg, err := s.down.Read(ctx)
		var bad *malformed
		switch {
		case errors.As(err, &bad):
			s.g.logger().Warn("a message from the client is not JSON-RPC", "session", s.id, "err", bad.err)
			s.send(&jsonrpc.Response{ID: bad.id, Error: &jsonrpc.Error{Code: bad.code, Message: "not a JSON-RPC message: " + bad.err.Error()}})
			continue
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) || ctx.Err() != nil:
			return nil
		case err != nil:
			return err
		}
		switch m := msg.(type) {
		case *jsonrpc.Request:
			if m.IsCall() {
				s.startCall(m)
			} else {
				s.notified(m)
			}
		case *jsonrpc.Response:
			s.answered(m)
		}
	}
}

// send writes a message to the client.
func (s *session) send(msg jsonrpc.Message) {
	if err := s.down.Write(s.ctx, msg); err != nil && s.ctx.Err() == nil {
		s.g.logger().Warn("write to the client", "session", s.id, "err", err)
	}
}

// startCall answers one of the client's requests in its own goroutine:
// a call held for a person must not hold up the others.
func (s *session) startCall(req *jsonrpc.Request) {
	ctx, cancel := context.WithCancel(s.ctx)
	s.mu.Lock()
	if _, dup := s.inflight[req.ID]; dup {
		s.mu.Unlock()
		cancel()
		s.send(&jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "a request with this ID is already in progress"}})
		return
	}
	s.inflight[req.ID] = cancel
	s.mu.Unlock()
	go func() {
		defer func() {
			s.mu.Lock()
			delete(s.inflight, req.ID)
			s.mu.Unlock()
			cancel()
		}()
		result, err := s.handle(ctx, req)
		if ctx.Err() != nil {
			// Cancelled by the client (which then expects no answer), or
			// the session is over.
			return
		}
		s.send(response(req.ID, result, err))
	}()
}

// response is the answer to a request: its result, or err as a JSON-RPC
// error (an upstream's error passes as it came).
func response(id jsonrpc.ID, result json.RawMessage, err error) *jsonrpc.Response {
	if err == nil {
		return &jsonrpc.Response{ID: id, Result: result}
	}
	var we *jsonrpc.Error
	if !errors.As(err, &we) {
		we = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	return &jsonrpc.Response{ID: id, Error: we}
}

// handle answers one request of the client's. Its params are read once,
// strictly: params that JSON readers could read two ways — a member name
// that repeats or differs from another only in case, invalid UTF-8 — are
// refused before anything reads them (airlock.CheckJSON), whatever the
// method.
func (s *session) handle(ctx context.Context, req *jsonrpc.Request) (json.RawMessage, error) {
	if len(req.Params) > 0 {
		if err := airlock.CheckJSON(req.Params); err != nil {
			return nil, invalidParams(req.Method + " params: " + airlock.ErrorMessage(err))
		}
	}
	switch req.Method {
	case "initialize":
		return s.initialize(ctx, req.Params)
	case "tools/list":
		return s.listTools(ctx)
	case "tools/call":
		return s.callTool(ctx, req)
	case "resources/read":
		return s.readResource(ctx, req)
	case "prompts/get":
		return s.getPrompt(ctx, req)
	case "ping":
		if len(s.ups) > 1 {
			return json.RawMessage(`{}`), nil
		}
	}
	if len(s.ups) > 1 {
		return s.routed(ctx, req)
	}
	return s.ups[0].forward(ctx, req.Method, req.Params)
}

// initialize starts every upstream with the client's initialize params,
// and answers with what they answered: the upstream's own answer in front
// of one server, a merged one in front of several.
func (s *session) initialize(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	s.mu.Lock()
	if s.init != nil {
		s.mu.Unlock()
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "the session is already initialized"}
	}
	s.init = params
	s.mu.Unlock()
	results := make([]json.RawMessage, len(s.ups))
	errs := make([]error, len(s.ups))
	var wg sync.WaitGroup
	for i, u := range s.ups {
		wg.Go(func() { results[i], errs[i] = u.start(ctx) })
	}
	wg.Wait()
	go s.execute()
	if len(s.ups) > 1 {
		// The others serve meanwhile; one that did not start is tried
		// again with backoff, and the client told when it runs.
		for i, err := range errs {
			if err != nil {
				go s.ups[i].restart()
			}
		}
	}
	if len(s.ups) == 1 {
		if errs[0] != nil {
			return nil, errs[0]
		}
		return results[0], nil
	}
	return mergeInitialize(s.g, results, errs)
}

// notified handles a notification from the client.
func (s *session) notified(n *jsonrpc.Request) {
	switch n.Method {
	case "notifications/cancelled":
		var p struct {
			RequestID any `json:"requestId"`
		}
		if json.Unmarshal(n.Params, &p) != nil {
			return
		}
		id, err := jsonrpc.MakeID(p.RequestID)
		if err != nil {
			return
		}
		s.mu.Lock()
		cancel := s.inflight[id]
		s.mu.Unlock()
		if cancel != nil {
			cancel() // the forwarded request tells its upstream, by its ID there
		}
		return
	case "notifications/initialized":
		return // each upstream was told when the gateway initialized it
	}
	for _, u := range s.ups {
		u.notify(n.Method, n.Params)
	}
}

// answered passes the client's answer to an upstream's request back to it.
func (s *session) answered(r *jsonrpc.Response) {
	s.mu.Lock()
	rt, ok := s.toClient[r.ID]
	delete(s.toClient, r.ID)
	s.mu.Unlock()
	if !ok {
		s.g.logger().Warn("the client answered a request nobody made", "session", s.id, "id", r.ID.Raw())
		return
	}
	rt.up.write(&jsonrpc.Response{ID: rt.id, Result: r.Result, Error: r.Error})
}

// ask passes an upstream's request (sampling, elicitation, roots, ping) to
// the client, under an ID of the gateway's.
func (s *session) ask(u *upstream, req *jsonrpc.Request) {
	s.mu.Lock()
	s.nextID++
	id := intID(s.nextID)
	s.toClient[id] = route{u, req.ID}
	s.mu.Unlock()
	s.send(&jsonrpc.Request{ID: id, Method: req.Method, Params: req.Params})
}

// upstreamCancelled maps an upstream's cancellation of its own request to
// the ID the client knows it by.
func (s *session) upstreamCancelled(u *upstream, params json.RawMessage) {
	var p map[string]json.RawMessage
	var raw any
	if json.Unmarshal(params, &p) != nil || json.Unmarshal(p["requestId"], &raw) != nil {
		return
	}
	upID, err := jsonrpc.MakeID(raw)
	if err != nil {
		return
	}
	s.mu.Lock()
	var id jsonrpc.ID
	for k, rt := range s.toClient {
		if rt.up == u && rt.id == upID {
			id = k
			delete(s.toClient, k)
			break
		}
	}
	s.mu.Unlock()
	if !id.IsValid() {
		return
	}
	p["requestId"], _ = json.Marshal(id.Raw())
	b, _ := json.Marshal(p)
	s.send(&jsonrpc.Request{Method: "notifications/cancelled", Params: b})
}

// notifyClient sends the client a notification.
func (s *session) notifyClient(method string, params any) {
	var raw json.RawMessage
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			panic(fmt.Sprintf("mcp: encode %s: %v", method, err))
		}
		raw = b
	}
	s.send(&jsonrpc.Request{Method: method, Params: raw})
}

// awaitRelease waits, in the background, on a request that would release a
// withheld tool; once a person settles it, the upstream's tools are listed
// and checked again and the client is told they changed.
func (s *session) awaitRelease(u *upstream, id string) {
	s.mu.Lock()
	if s.releases == nil {
		s.releases = map[string]bool{}
	}
	if s.releases[id] {
		s.mu.Unlock()
		return
	}
	s.releases[id] = true
	s.mu.Unlock()
	go func() {
		defer func() {
			s.mu.Lock()
			delete(s.releases, id)
			s.mu.Unlock()
		}()
		ap, err := s.checker.WaitApproval(s.ctx, id)
		if err != nil || ap.Status != airlock.StatusApproved {
			return
		}
		u.mu.Lock()
		u.tools = nil
		u.mu.Unlock()
		if _, err := u.listing(s.ctx); err != nil {
			s.g.logger().Warn("list an MCP server's tools after a release", "server", u.srv.Name, "err", err)
		}
		s.notifyClient("notifications/tools/list_changed", nil)
	}()
}
