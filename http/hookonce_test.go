package http_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock"
)

// TestHookSecondHookOfACall: a call's second hook (PermissionRequest after
// PreToolUse) is answered by the decision the first one got, even when
// many other calls of the session were decided in between; the same call
// ID with a different action is decided afresh.
func TestHookSecondHookOfACall(t *testing.T) {
	ts := newTestServer(t)
	post := func(event, callID, path string) string {
		t.Helper()
		body := `{"session_id":"sess-1","transcript_path":"/tmp/t.jsonl","cwd":"/work","hook_event_name":"` + event +
			`","tool_name":"read_file","tool_input":{"path":"` + path + `"},"tool_use_id":"` + callID + `"}`
		req, err := http.NewRequest(http.MethodPost, ts.URL+"/v1/hooks/claude-code", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+ts.AgentSecret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || !json.Valid(b) {
			t.Fatalf("%s %s: %d %s", event, callID, resp.StatusCode, b)
		}
		return string(b)
	}
	// decisions counts the decision events of a call: a call allowed by
	// its earlier decision records none.
	decisions := func(callID string) int {
		t.Helper()
		evs, err := ts.DB.Events(t.Context(), airlock.EventFilter{Kind: airlock.EventDecision, Agent: "agent-1", Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range evs {
			var p struct{ Action airlock.Action }
			if json.Unmarshal(e.Payload, &p) == nil && p.Action.CallID == callID {
				n++
			}
		}
		return n
	}
	allow := `"behavior":"allow"`
	if got := post("PreToolUse", "call-1", "/work/a"); !strings.Contains(got, `"permissionDecision":"allow"`) || decisions("call-1") != 1 {
		t.Fatalf("PreToolUse: %s, %d decisions, want one allow", got, decisions("call-1"))
	}
	// More decisions than the first page of the look-back.
	for i := range 40 {
		post("PreToolUse", "other-"+strconv.Itoa(i), "/work/b")
	}
	if got := post("PermissionRequest", "call-1", "/work/a"); !strings.Contains(got, allow) || decisions("call-1") != 1 {
		t.Fatalf("PermissionRequest of the same call: %s, %d decisions, want allowed by the earlier one", got, decisions("call-1"))
	}
	if got := post("PermissionRequest", "call-1", "/work/c"); !strings.Contains(got, allow) || decisions("call-1") != 2 {
		t.Fatalf("PermissionRequest of the same call ID with another action: %s, %d decisions, want a decision of its own", got, decisions("call-1"))
	}
	// A call ID JSON escapes is found too (no shortcut for it).
	odd := `call<&>"2`
	esc, _ := json.Marshal(odd)
	oddID := string(bytes.Trim(esc, `"`))
	post("PreToolUse", oddID, "/work/a")
	if got := post("PermissionRequest", oddID, "/work/a"); !strings.Contains(got, allow) || decisions(odd) != 1 {
		t.Fatalf("PermissionRequest of call %q: %s, %d decisions, want allowed by the earlier one", odd, got, decisions(odd))
	}
}
