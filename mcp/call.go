package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/mcpcatalog"
)

// callParams are the params of a tools/call as the gateway reads them:
// these members, by their exact names. The upstream gets them re-encoded
// from what was decided (callTool), so a member the gateway did not read
// never reaches it.
type callParams struct {
	Name      string         `json:"name"`
	Arguments jsontext.Value `json:"arguments"`
	Meta      requestMeta    `json:"_meta"`
	// Task asks the server to run the call as a task and answer at once
	// (MCP 2025-11-25; a tool may require it): how the answer comes, not
	// what runs, so it goes on, in canonical form.
	Task jsontext.Value `json:"task"`
}

// requestMeta is the part of a request's _meta the gateway keeps: the
// client's progress token, which names the progress notifications of the
// request — the upstream's, and the gateway's while it holds the request.
// Every other member of _meta is dropped: it could carry to the server what
// no one decided on.
type requestMeta struct {
	ProgressToken jsontext.Value `json:"progressToken"`
}

// token returns the progress token in canonical form, nil when there is
// none. MCP's tokens are strings or numbers.
func (m requestMeta) token() (jsontext.Value, error) {
	v := bytes.TrimSpace(m.ProgressToken)
	if len(v) == 0 || string(v) == "null" {
		return nil, nil
	}
	if k := jsontext.Value(v).Kind(); k != '"' && k != '0' {
		return nil, invalidParams("_meta.progressToken must be a string or a number")
	}
	t := jsontext.Value(bytes.Clone(v))
	if err := t.Canonicalize(); err != nil {
		return nil, invalidParams("_meta.progressToken: " + err.Error())
	}
	return t, nil
}

// invalidParams is the JSON-RPC error for params the gateway cannot read,
// or reads more than one way.
func invalidParams(msg string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msg}
}

// readParams decodes params into v by exact member names (params are
// checked already: no member repeats, even in another case).
func readParams(method string, params json.RawMessage, v any) error {
	if len(bytes.TrimSpace(params)) == 0 {
		params = json.RawMessage(`{}`)
	}
	if err := jsonv2.Unmarshal(params, v); err != nil {
		return invalidParams(method + " params: " + strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

// withMeta returns the object obj (canonical JSON, as decided) with the
// progress token in its _meta, when there is one: the params the upstream
// gets.
func withMeta(obj json.RawMessage, token jsontext.Value) json.RawMessage {
	if token == nil {
		return obj
	}
	out := make([]byte, 0, len(obj)+len(token)+32)
	out = append(out, `{"_meta":{"progressToken":`...)
	out = append(out, token...)
	out = append(out, '}')
	if rest := bytes.TrimPrefix(obj, []byte("{")); !bytes.Equal(rest, []byte("}")) {
		out = append(out, ',')
		out = append(out, rest...)
	} else {
		out = append(out, '}')
	}
	return out
}

// toolParams are the params of a decided tools/call, as the upstream gets
// them: its name there, the arguments byte for byte as hashed, and the
// task request (canonical) when the client made one.
func toolParams(name string, args json.RawMessage, task jsontext.Value) (json.RawMessage, error) {
	b := append([]byte(`{"arguments":`), args...)
	b = append(b, `,"name":`...)
	b, err := jsontext.AppendQuote(b, name)
	if err != nil {
		return nil, err
	}
	if task != nil {
		b = append(b, `,"task":`...)
		b = append(b, task...)
	}
	return append(b, '}'), nil
}

// taskOf returns a tools/call's task request in canonical form, nil when
// there is none.
func taskOf(v jsontext.Value) (jsontext.Value, error) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || string(v) == "null" {
		return nil, nil
	}
	if v.Kind() != '{' {
		return nil, invalidParams("tools/call task must be an object")
	}
	t := jsontext.Value(bytes.Clone(v))
	if err := t.Canonicalize(); err != nil {
		return nil, invalidParams("tools/call task: " + err.Error())
	}
	return t, nil
}

// callTool decides a tools/call and forwards it only when Airlock allows
// it: at once, or once a person approved it while the call was held.
// Everything else is answered with a tool result that says why, for the
// model to read. What the upstream gets is what was decided, re-encoded:
// the tool's name, the arguments in the canonical form the action hash
// covers, the progress token and the task request.
func (s *session) callTool(ctx context.Context, req *jsonrpc.Request) (json.RawMessage, error) {
	var p callParams
	if err := readParams(req.Method, req.Params, &p); err != nil {
		return nil, err
	}
	if p.Name == "" {
		return nil, invalidParams("tools/call needs params with a tool name")
	}
	args, err := airlock.CanonicalArgs(json.RawMessage(p.Arguments))
	if err != nil {
		return nil, invalidParams("tools/call arguments: " + airlock.ErrorMessage(err))
	}
	token, err := p.Meta.token()
	if err != nil {
		return nil, err
	}
	task, err := taskOf(p.Task)
	if err != nil {
		return nil, err
	}
	u, name, ok := s.lookup(p.Name)
	if !ok {
		return nil, invalidParams(fmt.Sprintf("unknown tool %q: the gateway's tools are named <server>__<tool>", p.Name))
	}
	list, err := u.listing(ctx)
	if err != nil {
		return refused(airlock.CodeUnavailable, strings.TrimPrefix(err.Error(), airlock.CodeUnavailable+": "), nil)
	}
	t := list.byName[name]
	if t == nil {
		return nil, invalidParams(fmt.Sprintf("unknown tool %q: MCP server %s does not list it", p.Name, u.srv.Name))
	}
	if t.refused != "" {
		return refused(t.code, fmt.Sprintf("tool %s of MCP server %s is not offered: %s", name, u.srv.Name, t.refused), nil)
	}
	params, err := toolParams(name, args, task)
	if err != nil {
		return nil, invalidParams(err.Error())
	}
	a := s.action(u, t, args, req.ID)
	enf, err := s.decide(ctx, a, token)
	if err != nil {
		return nil, err
	}
	if !enf.Allowed {
		return refused(enf.Code, enf.Message, enf.Approval)
	}
	if !decidedAs(enf, a) {
		return refused(airlock.CodeDenied, notDecidedAs, enf.Approval)
	}
	if enf.Edit != nil {
		// A reviewer edited the call before approving it: the upstream
		// gets the edited arguments, never the model's.
		edited, err := airlock.CanonicalArgs(enf.Edit.Args)
		if err == nil {
			params, err = toolParams(name, edited, task)
		}
		if err != nil {
			return refused(airlock.CodeInvalid, "the reviewer's edit of the call cannot be sent: "+err.Error(), enf.Approval)
		}
	}
	return s.forwardDecided(ctx, u, enf, "tools/call", withMeta(params, token), false)
}

// notDecidedAs says why a call does not run although Airlock allowed an
// action: not this one.
const notDecidedAs = "Airlock allowed an action other than this call (its arguments were changed when it was approved?), so the call does not run"

// decidedAs reports whether what Airlock decided is exactly a — the tool
// and the arguments the gateway checked —: the gateway forwards only what
// was decided (or a reviewer's edit of exactly that, Enforcement.Edit),
// never another call's approval in its place.
func decidedAs(enf airlock.Enforcement, a airlock.Action) bool {
	d := enf.Decision.Action
	if d.Tool == "" && len(d.Args) == 0 {
		return true // the checker did not say which action it decided: a's
	}
	if d.Tool != a.Tool {
		return false
	}
	args, err := airlock.CanonicalArgs(d.Args)
	return err == nil && bytes.Equal(args, a.Args)
}

// decide checks a, holding it while a person decides when the policy
// asks. Airlock unreachable, the enforcement refuses with
// CodeUnavailable; err is for a client that went away while it was held.
func (s *session) decide(ctx context.Context, a airlock.Action, token jsontext.Value) (airlock.Enforcement, error) {
	enf := s.checker.Check(ctx, a)
	if enf.Pending && enf.Approval != nil {
		return s.hold(ctx, enf, token)
	}
	return enf, nil
}

// forwardDecided sends an allowed request to its upstream — params
// encoded from what was decided — and records how it went.
func (s *session) forwardDecided(ctx context.Context, u *upstream, enf airlock.Enforcement, method string, params json.RawMessage, keep bool) (json.RawMessage, error) {
	start := time.Now()
	result, callErr := u.forward(ctx, method, params)
	s.ran(ctx, enf, time.Since(start), result, callErr, keep)
	return result, callErr
}

// action is the Airlock action of a call: the gateway's agent, the tool
// as mcp__<server>__<tool>, its arguments (canonical), the session and the
// request, and the catalogue's name for the server when it knows it.
//
// The server's annotations raise the tier of a tool the catalogue does not
// list. Of a tool it lists, Airlock knows what it does, as it knows the
// built-in tools: the filesystem server marks write_file destructive since
// it may overwrite a file, which Write does too, and Write is a write.
func (s *session) action(u *upstream, t *tool, args json.RawMessage, id jsonrpc.ID) airlock.Action {
	a := airlock.Action{
		Agent:     s.agent,
		Tool:      "mcp__" + u.srv.Name + "__" + t.name,
		Args:      args,
		SessionID: s.id,
		CallID:    idText(id),
		MCPServer: u.known,
	}
	tier := t.tier
	if _, ok := mcpcatalog.Lookup(u.known, t.name); ok {
		tier = 0
	}
	if tier != 0 || t.readOnly {
		a.Hints = &airlock.Hints{Tier: tier, ReadOnly: t.readOnly, Reason: "the MCP server's annotations on " + t.name}
	}
	return a
}

// idText is a request ID as text.
func idText(id jsonrpc.ID) string {
	switch v := id.Raw().(type) {
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	}
	return fmt.Sprint(id.Raw())
}

// hold waits while a person decides on a call's request, telling a client
// that gave a progress token how it stands. When the client cancels the
// call or goes away, the request stays pending: the identical call made
// later collects its approval, once.
func (s *session) hold(ctx context.Context, enf airlock.Enforcement, token jsontext.Value) (airlock.Enforcement, error) {
	type answer struct {
		enf airlock.Enforcement
		err error
	}
	done := make(chan answer, 1)
	go func() {
		next, err := s.checker.Await(ctx, enf.Approval.ID)
		done <- answer{next, err}
	}()
	every := s.g.HoldProgress
	if every <= 0 {
		every = 10 * time.Second
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	step := 0
	progress := func() {
		if token == nil {
			return
		}
		step++
		s.notifyClient("notifications/progress", map[string]any{
			"progressToken": json.RawMessage(token), "progress": step,
			"message": fmt.Sprintf("Waiting for a person to approve Airlock request %s (%s) until %s",
				enf.Approval.ID, reviewersText(enf.Approval), enf.Approval.Expires.UTC().Format(time.RFC3339)),
		})
	}
	progress()
	for {
		select {
		case a := <-done:
			if a.err != nil {
				return airlock.Enforcement{Code: airlock.CodeUnavailable, Message: airlock.ErrorMessage(a.err), Approval: enf.Approval}, nil
			}
			if a.enf.Pending {
				return a.enf, ctx.Err()
			}
			return a.enf, nil
		case <-tick.C:
			progress()
		}
	}
}

func reviewersText(ap *airlock.Approval) string {
	if len(ap.Reviewers) == 0 {
		return "a reviewer, the agent's owner or an admin"
	}
	return strings.Join(ap.Reviewers, ", ")
}

// ran records how an allowed call went: a JSON-RPC error or a result
// marked isError is a failure. keep keeps the result (or the error) with
// the record, for the person who asked that it run now.
func (s *session) ran(ctx context.Context, enf airlock.Enforcement, took time.Duration, result json.RawMessage, callErr error, keep bool) {
	runErr := callErr
	if runErr == nil {
		var r struct {
			IsError bool `json:"isError"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		}
		if json.Unmarshal(result, &r) == nil && r.IsError {
			msg := "the tool answered isError"
			for _, c := range r.Content {
				if c.Type == "text" && c.Text != "" {
					msg = c.Text
					break
				}
			}
			runErr = errors.New(clip(msg, 500))
		}
	}
	var kept json.RawMessage
	if keep {
		kept = result
		if callErr != nil {
			kept, _ = json.Marshal(map[string]string{"error": callErr.Error()})
		}
	}
	if err := s.checker.RanWith(context.WithoutCancel(ctx), enf, took, kept, runErr); err != nil {
		s.g.logger().Error("record a call that ran", "tool", enf.Decision.Action.Tool, "err", err)
	}
}

// refused is the tool result of a call that did not run: isError set, and
// a text that says the stable code, why, and what to do next.
func refused(code, message string, ap *airlock.Approval) (json.RawMessage, error) {
	text, meta := refusal(code, message, ap)
	return json.Marshal(map[string]any{
		"content": []map[string]string{{"type": "text", "text": text}},
		"isError": true,
		"_meta":   meta,
	})
}

// refusal is the text of a refusal — the stable code, why, and what to do
// next — and its _meta for a program: airlock/code and airlock/approval.
func refusal(code, message string, ap *airlock.Approval) (string, map[string]any) {
	if code == "" {
		code = airlock.CodeDenied
	}
	text := code + ": " + message
	if ap != nil && ap.ID != "" && ap.Status == airlock.StatusPending {
		text += fmt.Sprintf(" A person can approve request %s in Airlock's inbox or with `airlock approvals approve %s`; then make exactly the same call again and it runs once.", ap.ID, ap.ID)
	}
	meta := map[string]any{"airlock/code": code}
	if ap != nil && ap.ID != "" {
		meta["airlock/approval"] = ap.ID
	}
	return text, meta
}

// clip cuts s to at most n bytes, on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
