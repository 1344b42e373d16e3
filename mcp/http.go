package mcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-dev/airlock"
)

// Authenticator says whose a client's bearer token is — an Airlock agent
// token — and what decides that agent's calls. Errors: EUNAUTHORIZED or
// unauthenticated (the token is refused), EUNAVAILABLE.
type Authenticator func(ctx context.Context, token string) (agent string, checker airlock.Checker, err error)

// HTTPHandler serves the gateway over MCP's streamable HTTP transport: a
// client session per initialize, each with its own upstream sessions, the
// SDK's server transport carrying its messages. Every request presents the
// bearer token its session began with; the token decides nothing upstream
// and never goes there (the upstreams get the gateway's own credentials).
type HTTPHandler struct {
	g    *Gateway
	auth Authenticator
	ctx  context.Context // sessions end with it
	stop context.CancelFunc

	mu       sync.Mutex
	sessions map[string]*httpSession
	wg       sync.WaitGroup
}

type httpSession struct {
	t     *sdk.StreamableServerTransport
	token [32]byte // SHA-256 of the token it began with
	stop  context.CancelFunc

	// open counts its requests in progress (a held call, the client's
	// event stream); last is when the last one ended. A session with none
	// for Gateway.SessionIdle is closed, and its upstreams with it.
	mu   sync.Mutex
	open int
	last time.Time
}

// serve passes one request of the session's to its transport.
func (hs *httpSession) serve(w http.ResponseWriter, r *http.Request) {
	hs.mu.Lock()
	hs.open++
	hs.mu.Unlock()
	defer func() {
		hs.mu.Lock()
		hs.open--
		hs.last = time.Now()
		hs.mu.Unlock()
	}()
	hs.t.ServeHTTP(w, r)
}

// idle reports whether the session has had nothing in progress since before t.
func (hs *httpSession) idle(t time.Time) bool {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return hs.open == 0 && hs.last.Before(t)
}

// Handler returns the gateway's streamable HTTP endpoint; Close ends its
// sessions.
func (g *Gateway) Handler(auth Authenticator) (*HTTPHandler, error) {
	if err := g.Validate(); err != nil {
		return nil, err
	}
	ctx, stop := context.WithCancel(context.Background())
	h := &HTTPHandler{g: g, auth: auth, ctx: ctx, stop: stop, sessions: map[string]*httpSession{}}
	idle := g.SessionIdle
	if idle <= 0 {
		idle = 30 * time.Minute
	}
	h.wg.Go(func() { h.reap(idle) })
	return h, nil
}

// reap closes the sessions idle for longer than idle: a client that went
// away without ending its session leaves no upstream running.
func (h *HTTPHandler) reap(idle time.Duration) {
	t := time.NewTicker(min(idle/4, time.Minute))
	defer t.Stop()
	for {
		select {
		case <-h.ctx.Done():
			return
		case now := <-t.C:
			h.mu.Lock()
			for id, hs := range h.sessions {
				if hs.idle(now.Add(-idle)) {
					h.g.logger().Info("MCP session closed after idling", "session", id, "idle", idle)
					hs.stop()
				}
			}
			h.mu.Unlock()
		}
	}
}

// maxBody bounds one POST: a tools/call's arguments and more.
const maxBody = airlock.MaxArgsBytes + 1<<20

func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	token = strings.TrimSpace(token)
	if !ok || token == "" {
		unauthorized(w, "send the agent's Airlock token: Authorization: Bearer <token>")
		return
	}
	sum := sha256.Sum256([]byte(token))
	if id := r.Header.Get("Mcp-Session-Id"); id != "" {
		h.mu.Lock()
		hs := h.sessions[id]
		h.mu.Unlock()
		switch {
		case hs == nil:
			http.Error(w, "session not found: initialize a new one", http.StatusNotFound)
		case subtle.ConstantTimeCompare(sum[:], hs.token[:]) != 1:
			http.Error(w, "this session belongs to another token", http.StatusForbidden)
		case r.Method == http.MethodDelete:
			hs.stop()
			w.WriteHeader(http.StatusNoContent)
		case r.Method == http.MethodGet:
			hs.serve(w, r)
		case r.Method == http.MethodPost:
			body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
			if err != nil {
				http.Error(w, "read the request: "+err.Error(), http.StatusBadRequest)
				return
			}
			if refuseAmbiguous(w, body) {
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			hs.serve(w, r)
		default:
			w.Header().Set("Allow", "GET, POST, DELETE")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		}
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "a session begins with a POST of initialize; "+r.Method+" needs an Mcp-Session-Id", http.StatusBadRequest)
		return
	}
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "application/json" {
		http.Error(w, "Content-Type must be application/json", http.StatusUnsupportedMediaType)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		http.Error(w, "read the request: "+err.Error(), http.StatusBadRequest)
		return
	}
	var first struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(body, &first) != nil || first.Method != "initialize" {
		http.Error(w, "a session begins with initialize", http.StatusBadRequest)
		return
	}
	if refuseAmbiguous(w, body) {
		return
	}
	agent, checker, err := h.auth(r.Context(), token)
	switch code := airlock.ErrorCode(err); {
	case err == nil:
	case code == airlock.EUNAUTHORIZED || code == "unauthenticated":
		unauthorized(w, airlock.ErrorMessage(err))
		return
	default:
		http.Error(w, "Airlock could not check the token: "+airlock.ErrorMessage(err), http.StatusServiceUnavailable)
		return
	}
	hs, err := h.start(agent, checker, sum)
	if err != nil {
		http.Error(w, "start the session: "+err.Error(), http.StatusInternalServerError)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	hs.serve(w, r)
}

// start begins a client session.
func (h *HTTPHandler) start(agent string, checker airlock.Checker, token [32]byte) (*httpSession, error) {
	id := rand.Text()
	ctx, stop := context.WithCancel(h.ctx)
	t := &sdk.StreamableServerTransport{SessionID: id}
	c, err := t.Connect(ctx)
	if err != nil {
		stop()
		return nil, err
	}
	hs := &httpSession{t: t, token: token, stop: stop, last: time.Now()}
	h.mu.Lock()
	h.sessions[id] = hs
	h.mu.Unlock()
	h.wg.Go(func() {
		defer func() {
			stop()
			_ = c.Close()
			h.mu.Lock()
			delete(h.sessions, id)
			h.mu.Unlock()
		}()
		s := newSession(h.g, c, id, agent, checker)
		if err := s.serve(ctx); err != nil && !errors.Is(err, context.Canceled) {
			h.g.logger().Warn("MCP session ended", "session", id, "err", err)
		}
	})
	return hs, nil
}

// Close ends every session and waits for them.
func (h *HTTPHandler) Close() error {
	h.stop()
	h.wg.Wait()
	return nil
}

// refuseAmbiguous answers a POST whose message JSON readers could read two
// ways (see ambiguous) with the JSON-RPC error, and reports whether it did.
// A batch is refused whole.
func refuseAmbiguous(w http.ResponseWriter, body []byte) bool {
	if airlock.CheckJSON(body) == nil {
		return false
	}
	var bad *malformed
	if msg, err := jsonrpc.DecodeMessage(body); err == nil {
		if bad = ambiguous(body, msg); bad == nil {
			return false // within a request's params: the session answers
		}
	} else {
		bad = &malformed{code: jsonrpc.CodeInvalidRequest, err: fmt.Errorf("it can be read more than one way: %s", airlock.ErrorMessage(airlock.CheckJSON(body)))}
	}
	b, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: bad.id, Error: &jsonrpc.Error{Code: bad.code, Message: "not a JSON-RPC message: " + bad.err.Error()}})
	if err != nil {
		http.Error(w, bad.err.Error(), http.StatusBadRequest)
		return true
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write(b)
	return true
}

func unauthorized(w http.ResponseWriter, msg string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="airlock-mcp-gateway"`)
	http.Error(w, msg, http.StatusUnauthorized)
}
