package http

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/danielgtaylor/huma/v2"
	jsonv2 "github.com/go-json-experiment/json"
)

type checkInput struct {
	Body checkBody
}

// checkBody is an alias, not a type: the schema keeps its name.
type checkBody = struct {
	Action airlock.Action `json:"action" doc:"The action the agent attempts. An agent token may only check actions of its own agent."`
	Wait   string         `json:"wait,omitempty" doc:"How long to wait for an ask to be settled before answering with the request still pending (a Go duration such as \"30s\", capped by the server). Empty: answer at once." example:"30s"`
}

type enforcementOutput struct {
	Body airlock.Enforcement
}

// check decides an action, records the decision and carries it out; an ask
// long-polls up to the wait asked for, then answers pending with the
// request's ID for the caller to resume with.
func (s *Server) check(ctx context.Context, in *checkInput) (*enforcementOutput, error) {
	t, err := s.allow(ctx, "check actions", airlock.RoleAgent, airlock.RoleAdmin)
	if err != nil {
		return nil, err
	}
	a := in.Body.Action
	if err := a.Validate(); err != nil {
		return nil, err
	}
	if err := s.actAs(ctx, t, a.Agent, "check actions"); err != nil {
		return nil, err
	}
	if t.Role != airlock.RoleAgent && a.RequestedBy == "" {
		// A person checking an action asked for it: they cannot also
		// approve it.
		a.RequestedBy = t.Name
	}
	wait, err := s.parseWait("wait", in.Body.Wait)
	if err != nil {
		return nil, err
	}
	enf := s.Enforcer.Check(ctx, a)
	s.metrics.Decided(&enf)
	if enf.Pending && wait > 0 {
		enf, err = s.await(ctx, enf.Approval.ID, wait)
		if err != nil {
			return nil, err
		}
	}
	return &enforcementOutput{Body: enf}, nil
}

type resumeInput struct {
	ID   string `path:"id" doc:"The approval request's ID, from the pending check."`
	Wait string `query:"wait" doc:"How long to wait (capped by the server); empty: answer at once." example:"30s"`
}

// resumeCheck waits again on the request a check left pending: after a
// timeout of its own, a disconnect or a server restart.
func (s *Server) resumeCheck(ctx context.Context, in *resumeInput) (*enforcementOutput, error) {
	t, err := s.allow(ctx, "resume checks", airlock.RoleAgent, airlock.RoleAdmin)
	if err != nil {
		return nil, err
	}
	ap, err := s.store().Approval(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	if err := s.actAs(ctx, t, ap.Agent, "resume checks"); err != nil {
		// As if it did not exist: an agent learns nothing of others'.
		return nil, airlock.Errorf(airlock.ENOTFOUND, "no approval request %s", in.ID)
	}
	wait, err := s.parseWait("wait", in.Wait)
	if err != nil {
		return nil, err
	}
	enf, err := s.await(ctx, in.ID, wait)
	if err != nil {
		return nil, err
	}
	return &enforcementOutput{Body: enf}, nil
}

// await waits up to wait (at least an instant) for the request to settle.
func (s *Server) await(ctx context.Context, id string, wait time.Duration) (airlock.Enforcement, error) {
	wctx, cancel := s.waitContext(ctx, max(wait, time.Nanosecond))
	defer cancel()
	return s.Enforcer.Await(wctx, id)
}

// parseWait reads the duration parameter name, capped by CheckWait.
func (s *Server) parseWait(name, v string) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, airlock.Errorf(airlock.EINVALID, "%s %q is not a duration such as 30s", name, v)
	}
	return min(d, s.checkWait()), nil
}

type executionInput struct {
	Body struct {
		Action     airlock.Action `json:"action" doc:"The action that ran, exactly as checked."`
		ActionHash airlock.Hash   `json:"action_hash" doc:"The action hash the check returned; it must match the action."`
		// DecisionSeq and ApprovalID name what allowed the action: a record
		// names at least one.
		DecisionSeq int64           `json:"decision_seq,omitempty" doc:"The seq of the check's decision event that let it run (the check's seq). A record names what allowed the action: decision_seq, approval_id, or both; one with neither is refused."`
		ApprovalID  string          `json:"approval_id,omitempty" doc:"The approval or grant it ran on (the check's approval.id), when it ran on one."`
		Error       string          `json:"error,omitempty" doc:"Why running it failed; empty when it succeeded."`
		Duration    string          `json:"duration,omitempty" doc:"How long it ran (a Go duration)." example:"1.5s"`
		Result      json.RawMessage `json:"result,omitempty" doc:"What it returned, kept for a person to read (an executor's run of an approved request): a JSON value of at most 64 KiB, else kept as text, cut."`
	}
}

type executionOutput struct {
	Body struct {
		Recorded bool `json:"recorded"`
	}
}

// recordExecution records that an allowed action ran, or failed: an
// action.executed event and, on failure, a trust record.
func (s *Server) recordExecution(ctx context.Context, in *executionInput) (*executionOutput, error) {
	t, err := s.allow(ctx, "record executions", airlock.RoleAgent, airlock.RoleAdmin)
	if err != nil {
		return nil, err
	}
	b := &in.Body
	if err := b.Action.Validate(); err != nil {
		return nil, err
	}
	if err := s.actAs(ctx, t, b.Action.Agent, "record executions"); err != nil {
		return nil, err
	}
	if t.Role != airlock.RoleAgent && b.Action.RequestedBy == "" {
		b.Action.RequestedBy = t.Name // as check recorded it
	}
	var took time.Duration
	if b.Duration != "" {
		if took, err = time.ParseDuration(b.Duration); err != nil || took < 0 {
			return nil, airlock.Errorf(airlock.EINVALID, "duration %q is not a duration such as 1.5s", b.Duration)
		}
	}
	d := s.Enforcer.Gate.Resolve(ctx, b.Action)
	if h, err := b.Action.Hash(); err != nil {
		return nil, err
	} else if h != b.ActionHash {
		return nil, airlock.Errorf(airlock.CodeHashMismatch, "action_hash %s is not the hash of the action (%s)", b.ActionHash, h)
	}
	d.ActionHash = b.ActionHash
	if b.DecisionSeq < 0 || (b.DecisionSeq == 0 && b.ApprovalID == "") {
		// Nothing vouches for it: it would read as an allowed action ran.
		return nil, airlock.Errorf(airlock.EINVALID, "an execution record names what allowed the action: "+
			"decision_seq (the seq of the check that let it run) or approval_id (the approval it ran on)")
	}
	if err := airlock.CheckExecution(ctx, s.store(), b.Action.Agent, b.ActionHash, b.DecisionSeq, b.ApprovalID); err != nil {
		return nil, err
	}
	enf := airlock.Enforcement{Decision: d, Seq: b.DecisionSeq}
	if b.ApprovalID != "" {
		enf.Approval = &airlock.Approval{ID: b.ApprovalID}
	}
	var runErr error
	if b.Error != "" {
		runErr = errors.New(b.Error)
	}
	if err := s.Enforcer.RanWith(ctx, enf, took, b.Result, runErr); err != nil {
		return nil, err
	}
	out := &executionOutput{}
	out.Body.Recorded = true
	return out, nil
}

// checkRoute is the route an agent calls before each tool call: the one
// whose cost every tool call pays.
const checkRoute = "POST /v1/check"

// checkReadTimeout bounds reading a check's body, as huma bounds every
// body it reads (huma.Operation.BodyReadTimeout's default).
const checkReadTimeout = 5 * time.Second

// quickChecks serves POST /v1/check without huma's generic pass over the
// body (decoding it into an `any` to validate it against the schema, then
// again into the struct, by reflection) when the body is plainly one the
// schema takes: strict JSON (airlock.CheckJSON), no null, no number that
// might not fit a float64, every member
// known and of its type, the action's agent and tool given, the arguments
// an object. Anything else — a query, another content type or Accept, a
// body too large, malformed or merely unusual — goes on to huma with the
// body as read, so that every refusal is huma's, word for word. An answer
// is written as huma writes it.
func (s *Server) quickChecks(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/check" || r.URL.RawQuery != "" || s.noQuickCheck ||
			!jsonContent(r.Header.Get("Content-Type")) || !acceptsJSON(r.Header["Accept"]) {
			next.ServeHTTP(w, r)
			return
		}
		buf := checkBodies.Get().(*bytes.Buffer)
		defer func() {
			if buf.Cap() <= 64<<10 {
				buf.Reset()
				checkBodies.Put(buf)
			}
		}()
		_ = huma.SetReadDeadline(w, time.Now().Add(checkReadTimeout))
		n, err := buf.ReadFrom(io.LimitReader(r.Body, maxCheckBytes))
		in := new(checkInput)
		if err != nil || n == maxCheckBytes || !decodeCheck(buf.Bytes(), &in.Body) {
			// huma reads the body again, from the start, and answers.
			r.Body = replayBody{io.MultiReader(bytes.NewReader(bytes.Clone(buf.Bytes())), r.Body), r.Body}
			next.ServeHTTP(w, r)
			return
		}
		r.Pattern = checkRoute
		ctx := r.Context()
		out, err := s.check(ctx, in)
		if err != nil {
			p := s.problem(ctx, err).(*Problem)
			writeJSON(w, "application/problem+json", p.Status, p)
			return
		}
		writeJSON(w, "application/json", http.StatusOK, &out.Body)
	})
}

var checkBodies = sync.Pool{New: func() any { return bytes.NewBuffer(make([]byte, 0, 1024)) }}

// replayBody is a body partly read, read again from its start.
type replayBody struct {
	io.Reader
	io.Closer
}

// jsonContent reports whether a request's Content-Type is one huma reads
// as this API's JSON, and no other.
func jsonContent(ct string) bool { return ct == "" || ct == "application/json" }

// acceptsJSON reports whether huma answers a request with these Accept
// headers in application/json, plainly.
func acceptsJSON(accept []string) bool {
	switch {
	case len(accept) == 0:
		return true
	case len(accept) > 1:
		return false
	}
	return accept[0] == "application/json" || accept[0] == "*/*"
}

// decodeCheck decodes a check's body into dst if it is plainly one huma's
// schema takes (see quickChecks), and reports whether it did. It refuses
// more than the schema does — a null anywhere, an action without its agent
// or tool, a number with an exponent — so that whatever it takes, huma would have taken alike.
func decodeCheck(data []byte, dst *checkBody) bool {
	if unusualJSON(data) || airlock.CheckJSON(data) != nil ||
		jsonv2.Unmarshal(data, dst, jsonv2.RejectUnknownMembers(true)) != nil {
		return false
	}
	a := &dst.Action
	args := bytes.TrimLeft(a.Args, " \t\r\n")
	return a.Agent != "" && a.Tool != "" && (len(a.Args) == 0 || (len(args) > 0 && args[0] == '{'))
}

// unusualJSON reports whether a JSON text holds, outside its strings, a
// null or a number with an exponent or of more than 300 characters. The
// schema refuses null where a string or an object is due, which a Go
// decoder takes as the zero value; huma's validating decode refuses a
// number beyond float64's range, which only those numbers can be. A body
// with one is left to huma.
func unusualJSON(data []byte) bool {
	in := false
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		case in:
		case c == 'n':
			return true
		case c == '-' || ('0' <= c && c <= '9'):
			j := i
			for ; j < len(data) && bytes.IndexByte([]byte("0123456789+-."), data[j]) >= 0; j++ {
			}
			if j-i > 300 || (j < len(data) && (data[j] == 'e' || data[j] == 'E')) {
				return true
			}
			i = j - 1
		}
	}
	return false
}

// writeJSON writes v as huma writes an answer: its content type and status,
// then the body in strictJSON's form.
func writeJSON(w http.ResponseWriter, contentType string, status int, v any) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	_ = strictJSON.Marshal(w, v)
}
