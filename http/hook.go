package http

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/hook"
	"github.com/airlock-dev/airlock/hook/relay"
)

// HookReplyType is the media type of a hook's reply to `airlock hook
// <host>`: the exit code and the output the command passes on to its host.
// A host that POSTs its hooks here itself gets its own JSON answer.
const HookReplyType = relay.ReplyType

// MaxHookHold caps how long one hook call holds an ask: a host's hook
// timeout longer than that still gets an answer, a pending refusal.
const MaxHookHold = time.Hour

// hookCall answers POST /v1/hooks/{host}: a hook payload exactly as the
// host sends it, an ask held for up to ?hold= (a Go duration; default
// hook.DefaultHold), and the answer in the host's terms.
//
// A host that POSTs here itself (Claude Code's "type": "http" hooks) reads
// any answer but a 2xx JSON one as a non-blocking error and runs the call,
// so every failure — no token, a bad payload, the store down — is answered
// 200 with the host's deny. `airlock hook <host>` asks for HookReplyType
// and gets problems as problems, which it turns into exit code 2.
func (s *Server) hookCall(w http.ResponseWriter, r *http.Request) {
	host, err := hook.Lookup(r.PathValue("host"))
	if err != nil {
		writeProblem(w, newProblem(http.StatusNotFound, airlock.ENOTFOUND, airlock.ErrorMessage(err)))
		return
	}
	reply := strings.Contains(r.Header.Get("Accept"), HookReplyType)
	w.Header().Set("Cache-Control", "no-store")
	fail := func(ev hook.Event, p *Problem) {
		if reply {
			writeProblem(w, p)
			return
		}
		code := relay.Refusal(p.Code)
		writeHookAnswer(w, host.Block(ev, hook.Verdict{Code: code, Reason: "Airlock blocked this call: " + code + ": " + p.Detail}))
	}

	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, hook.MaxPayload))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			fail(hook.Event{}, newProblem(http.StatusRequestEntityTooLarge, airlock.EINVALID, "the hook payload is larger than the limit"))
			return
		}
		fail(hook.Event{}, newProblem(http.StatusBadRequest, airlock.EINVALID, "read the hook payload: "+err.Error()))
		return
	}
	ev, perr := host.Parse(body)
	ctx, p := s.authenticated(r)
	if p != nil {
		fail(ev, p)
		return
	}
	t := principalFrom(ctx)
	if t.Role != airlock.RoleAgent {
		fail(ev, s.refuse(ctx, t, "", airlock.EUNAUTHORIZED, t.Subject()+" is not an agent token: a host's hooks run as one agent "+
			"(airlock token create --role agent --agent NAME)"))
		return
	}
	if perr != nil {
		fail(ev, newProblem(http.StatusBadRequest, airlock.EINVALID, airlock.ErrorMessage(perr)))
		return
	}
	hold := hook.DefaultHold
	if v := r.URL.Query().Get("hold"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			fail(ev, newProblem(http.StatusBadRequest, airlock.EINVALID, "hold "+strconv.Quote(v)+" is not a duration such as 590s"))
			return
		}
		hold = min(d, MaxHookHold)
	}
	h := &hook.Handler{Enforcer: s.Enforcer, WaitContext: s.waitContext, Logger: s.logger(), Edits: host.TakeEdit}
	switch ask := r.URL.Query().Get("ask"); ask {
	case "", "airlock":
	case "host":
		if host.Name() != "claude-code" {
			fail(ev, newProblem(http.StatusBadRequest, airlock.EINVALID, "ask=host: only Claude Code can ask its user from a hook; "+
				host.Name()+" would run the call (its hooks cannot answer ask)"))
			return
		}
		h.AskAtHost = true
	default:
		fail(ev, newProblem(http.StatusBadRequest, airlock.EINVALID, "ask "+strconv.Quote(ask)+": want airlock (hold the call for Airlock's reviewers) or host (Claude Code's own prompt)"))
		return
	}
	v := h.Handle(ctx, t.Agent, ev, hold)
	if ev.Kind != hook.KindPost {
		s.metrics.Hooked(host.Name(), v.Allow, v.Code)
	}
	if v.Code == airlock.CodePending && s.draining() && reply {
		// The hold ended because this server is stopping, not because the
		// host's time is up: the command asks again, elsewhere or later.
		writeProblem(w, newProblem(http.StatusServiceUnavailable, airlock.EUNAVAILABLE, "the server is restarting; retry"))
		return
	}
	out := host.Answer(ev, v)
	if reply {
		w.Header().Set("Content-Type", HookReplyType)
		_ = json.NewEncoder(w).Encode(out)
		return
	}
	if out.Exit != 0 {
		writeHookAnswer(w, host.Block(ev, v))
		return
	}
	writeHookAnswer(w, []byte(out.Stdout))
}

// writeHookAnswer answers a host's own hook request: 200 and its JSON.
func writeHookAnswer(w http.ResponseWriter, b []byte) {
	if len(strings.TrimSpace(string(b))) == 0 {
		b = []byte("{}\n")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// draining reports whether the server has begun to shut down.
func (s *Server) draining() bool {
	select {
	case <-s.drain:
		return true
	default:
		return false
	}
}
