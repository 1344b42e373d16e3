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

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/airlock-dev/airlock"
)

// callParams are the parts of a tools/call the gateway reads; the rest
// passes on as it came.
type callParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Meta      struct {
		ProgressToken any `json:"progressToken"`
	} `json:"_meta"`
}

// callTool decides a tools/call and forwards it only when Airlock allows
// it: at once, or once a person approved it while the call was held.
// Everything else is answered with a tool result that says why, for the
// model to read.
func (s *session) callTool(ctx context.Context, req *jsonrpc.Request) (json.RawMessage, error) {
	var p callParams
	if err := json.Unmarshal(req.Params, &p); err != nil || p.Name == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "tools/call needs params with a tool name"}
	}
	u, name, ok := s.lookup(p.Name)
	if !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q: the gateway's tools are named <server>__<tool>", p.Name)}
	}
	list, err := u.listing(ctx)
	if err != nil {
		return refused(airlock.CodeUnavailable, strings.TrimPrefix(err.Error(), airlock.CodeUnavailable+": "), nil)
	}
	t := list.byName[name]
	if t == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q: MCP server %s does not list it", p.Name, u.srv.Name)}
	}
	if t.refused != "" {
		return refused(t.code, fmt.Sprintf("tool %s of MCP server %s is not offered: %s", name, u.srv.Name, t.refused), nil)
	}
	a := s.action(u, t, p, req.ID)
	enf, err := s.checker.Check(ctx, a)
	if err != nil {
		return refused(airlock.CodeUnavailable, "Airlock could not be asked, so the call does not run: "+airlock.ErrorMessage(err), nil)
	}
	if enf.Pending && enf.Approval != nil {
		if enf, err = s.hold(ctx, enf, p.Meta.ProgressToken); err != nil {
			return nil, err
		}
	}
	if !enf.Allowed {
		return refused(enf.Code, enf.Message, enf.Approval)
	}
	params := req.Params
	if s.g.Namespace {
		if params, err = setParam(params, "name", name); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
		}
	}
	start := time.Now()
	result, callErr := u.forward(ctx, "tools/call", params)
	s.ran(ctx, enf, time.Since(start), result, callErr, false)
	return result, callErr
}

// action is the Airlock action of a call: the gateway's agent, the tool
// as mcp__<server>__<tool>, its arguments, the session and the request.
func (s *session) action(u *upstream, t *tool, p callParams, id jsonrpc.ID) airlock.Action {
	args := bytes.TrimSpace(p.Arguments)
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	a := airlock.Action{
		Agent:     s.agent,
		Tool:      "mcp__" + u.srv.Name + "__" + t.name,
		Args:      args,
		SessionID: s.id,
		CallID:    idText(id),
	}
	if t.tier != 0 || t.readOnly {
		a.Hints = &airlock.Hints{Tier: t.tier, ReadOnly: t.readOnly, Reason: "the MCP server's annotations on " + t.name}
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
func (s *session) hold(ctx context.Context, enf airlock.Enforcement, token any) (airlock.Enforcement, error) {
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
			"progressToken": token, "progress": step,
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
	if err := s.checker.Ran(context.WithoutCancel(ctx), enf, took, kept, runErr); err != nil {
		s.g.logger().Error("record a call that ran", "tool", enf.Decision.Action.Tool, "err", err)
	}
}

// refused is the tool result of a call that did not run: isError set, and
// a text that says the stable code, why, and what to do next.
func refused(code, message string, ap *airlock.Approval) (json.RawMessage, error) {
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
	return json.Marshal(map[string]any{
		"content": []map[string]string{{"type": "text", "text": text}},
		"isError": true,
		"_meta":   meta,
	})
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
