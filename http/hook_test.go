package http_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/hook"
	"github.com/airlock-dev/airlock/hook/relay"
	airlockhttp "github.com/airlock-dev/airlock/http"
)

func claudePayload(event, tool string, input map[string]any, callID string) []byte {
	b, _ := json.Marshal(map[string]any{"session_id": "s-1", "cwd": "/work", "hook_event_name": event,
		"tool_name": tool, "tool_input": input, "tool_use_id": callID})
	return b
}

// claudeAnswer reads a PreToolUse answer: the decision and its reason.
func claudeAnswer(t *testing.T, resp rawResponse) (string, string) {
	t.Helper()
	if resp.Status != http.StatusOK {
		t.Fatalf("status %d, want 200 (Claude Code runs the call on any other): %s", resp.Status, resp.Body)
	}
	var a struct {
		H struct {
			D string `json:"permissionDecision"`
			R string `json:"permissionDecisionReason"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(resp.Body, &a); err != nil {
		t.Fatalf("%v: %s", err, resp.Body)
	}
	return a.H.D, a.H.R
}

// TestHookEndpointAsTheHostPostsIt: Claude Code's "type": "http" hooks get
// the host's own JSON, and every failure — no token, a reviewer's token, a
// payload that is not one, an unknown host option — is a deny with 200,
// since the host runs the call on any other answer.
func TestHookEndpointAsTheHostPostsIt(t *testing.T) {
	ts := newTestServer(t)
	read := claudePayload("PreToolUse", "read_file", map[string]any{"path": "a.txt"}, "c1")
	cases := []struct {
		name, path, secret string
		body               []byte
		want, reason       string
	}{
		{"auto", "/v1/hooks/claude-code", ts.AgentSecret, read, "allow", "allowed"},
		{"deny", "/v1/hooks/claude-code", ts.AgentSecret, claudePayload("PreToolUse", "delete_file", map[string]any{"path": "a"}, "c2"), "deny", airlock.CodeDenied},
		{"suggest", "/v1/hooks/claude-code", ts.AgentSecret, claudePayload("PreToolUse", "propose", map[string]any{"x": 1}, "c3"), "deny", airlock.CodeSuggested},
		{"no token", "/v1/hooks/claude-code", "", read, "deny", airlock.CodeDenied},
		{"bad token", "/v1/hooks/claude-code", "airlock_nope", read, "deny", airlock.CodeDenied},
		{"reviewer token", "/v1/hooks/claude-code", ts.BobSecret, read, "deny", "not an agent token"},
		{"garbage", "/v1/hooks/claude-code", ts.AgentSecret, []byte("{not json"), "deny", airlock.CodeInvalid},
		{"unknown event", "/v1/hooks/claude-code", ts.AgentSecret, []byte(`{"hook_event_name":"Stop"}`), "deny", airlock.CodeInvalid},
		{"ask held past hold", "/v1/hooks/claude-code?hold=50ms", ts.AgentSecret, claudePayload("PreToolUse", "deploy", map[string]any{"env": "prod"}, "c4"), "deny", airlock.CodePending},
		{"bad hold", "/v1/hooks/claude-code?hold=soon", ts.AgentSecret, read, "deny", "hold"},
		{"bad ask", "/v1/hooks/claude-code?ask=maybe", ts.AgentSecret, read, "deny", "ask"},
		{"ask at host", "/v1/hooks/claude-code?ask=host", ts.AgentSecret, claudePayload("PreToolUse", "deploy", map[string]any{"env": "staging"}, "c5"), "ask", "host asks its user"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, reason := claudeAnswer(t, ts.do(t, "POST", c.path, c.secret, "application/json", c.body))
			if d != c.want || !strings.Contains(reason, c.reason) {
				t.Errorf("got %s %q, want %s and a reason naming %q", d, reason, c.want, c.reason)
			}
		})
	}
	resp := ts.do(t, "POST", "/v1/hooks/nohost", ts.AgentSecret, "application/json", read)
	if resp.Status != http.StatusNotFound {
		t.Errorf("an unknown host: %d", resp.Status)
	}
}

// TestHookEndpointReply: the command hook's client gets problems as
// problems (it exits 2), and a reply it passes on as the host's answer.
func TestHookEndpointReply(t *testing.T) {
	ts := newTestServer(t)
	r, err := hookCall(t.Context(), ts.Agent, "gemini", []byte(`{"session_id":"s","cwd":"/w","hook_event_name":"BeforeTool","tool_name":"read_file","tool_input":{"path":"a"}}`), time.Second)
	if err != nil || r.Exit != 0 || !strings.Contains(r.Stdout, `"decision":"allow"`) {
		t.Fatalf("%+v %v", r, err)
	}
	_, err = hookCall(t.Context(), ts.Agent, "gemini", []byte(`[]`), time.Second)
	if airlock.ErrorCode(err) != airlock.EINVALID {
		t.Fatalf("a bad payload: %v, want invalid", err)
	}
	_, err = hookCall(t.Context(), client.New(ts.URL, "airlock_nope"), "gemini", []byte(`{}`), time.Second)
	if err == nil {
		t.Fatal("a refused token answered")
	}
}

// TestHookEndpointRefusesAmbiguousPayloads: a hook payload whose keys
// repeat or differ only in case, or whose text is not UTF-8, is refused
// before anything is decided — the host's own deny when it posts the
// payload itself, a problem for the hook command (which exits 2) — and
// nothing is recorded.
func TestHookEndpointRefusesAmbiguousPayloads(t *testing.T) {
	ts := newTestServer(t)
	for _, c := range []struct{ host, file, mention string }{
		{"claude-code", "claude/pretooluse-tool-name-differing-in-case.json", `"TOOL_NAME"`},
		{"claude-code", "claude/pretooluse-args-differing-in-case.json", "/tool_input/PATH"},
		{"codex", "codex/pretooluse-event-name-kelvin-sign.json", `"hook_event_name"`},
		{"gemini", "gemini/beforetool-invalid-utf8.json", "UTF-8"},
	} {
		t.Run(c.file, func(t *testing.T) {
			payload, err := os.ReadFile(filepath.Join("..", "testdata", "hooks", c.file))
			if err != nil {
				t.Fatal(err)
			}
			before := takeSnapshot(t, ts)
			defer before.unchanged(t, ts)
			resp := ts.do(t, "POST", "/v1/hooks/"+c.host+"?hold=1s", ts.AgentSecret, "application/json", payload)
			if resp.Status != http.StatusOK || !strings.Contains(string(resp.Body), "deny") || !strings.Contains(string(resp.Body), airlock.CodeInvalid) ||
				!strings.Contains(string(resp.Body), strings.ReplaceAll(c.mention, `"`, `\"`)) {
				t.Errorf("as the host posts it: %d %s, want 200, a deny naming %s and %s", resp.Status, resp.Body, airlock.CodeInvalid, c.mention)
			}
			resp = ts.doHeader(t, "POST", "/v1/hooks/"+c.host+"?hold=1s", ts.AgentSecret, "application/json", payload, http.Header{"Accept": {airlockhttp.HookReplyType}})
			if p := resp.problem(t, http.StatusBadRequest, airlock.EINVALID); !strings.Contains(p.text(), c.mention) {
				t.Errorf("as the hook command asks: %s, want it to name %s", p.text(), c.mention)
			}
		})
	}
}

// hookCall passes one hook payload to the server as the hook program does
// (package relay), with c's server and token, the answer's error as an
// *airlock.Error.
func hookCall(ctx context.Context, c *client.Client, host string, payload []byte, hold time.Duration) (hook.Reply, error) {
	r, err := (&relay.Client{URL: c.URL, Token: c.Token, HTTPClient: c.HTTPClient}).Ask(ctx, host, payload, hold, "")
	var e *relay.Error
	if errors.As(err, &e) {
		return r, &airlock.Error{Code: e.Code, Message: e.Message}
	}
	return r, err
}
