package http_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
)

// A caller without a token cannot fill the audit log: refusals are
// recorded at a bounded rate, with bounded fields, and the next record
// says how many were only counted.
func TestUnauthenticatedRefusalsAreBounded(t *testing.T) {
	ts := newTestServer(t)
	before := takeSnapshot(t, ts)
	long := "/v1/" + strings.Repeat("a", 8000)
	const n = 120
	for range n {
		ts.do(t, "GET", long, "", "", nil).problem(t, http.StatusUnauthorized, "unauthenticated")
	}
	got := refusals(t, ts, before.head)
	if len(got) == 0 || len(got) >= n {
		t.Fatalf("%d of %d unauthenticated refusals recorded, want some but not all", len(got), n)
	}
	for _, r := range got {
		if len(r.Path) > 300 {
			t.Fatalf("a refusal record keeps a %d-byte path", len(r.Path))
		}
	}
	head := headSeq(t, ts)
	waitFor(t, "the limit to let one record through", func() bool {
		ts.do(t, "GET", "/v1/whoami", "", "", nil)
		return len(refusals(t, ts, head)) > 0
	})
	if r := refusals(t, ts, head)[0]; r.Suppressed == 0 {
		t.Fatalf("the record after the burst does not count the suppressed refusals: %+v", r)
	}
}

// An execution record may only link to this agent's own decision and
// approval of the same action.
func TestExecutionLinksAreChecked(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	mine := ts.Agent.Enforce(ctx, airlocktest.Action("read_file", "mine"))
	other := airlocktest.Action("read_file", "other")
	h, _ := other.Hash()
	for name, c := range map[string]struct {
		body map[string]any
		code string
	}{
		"another action's decision": {map[string]any{"action": other, "action_hash": h, "decision_seq": mine.Seq}, airlock.EINVALID},
		"an unknown approval":       {map[string]any{"action": other, "action_hash": h, "approval_id": "0190c0de-0000-7000-8000-000000000000"}, airlock.EINVALID},
		// An execution record always names what allowed the action.
		"nothing allowed it":      {map[string]any{"action": mine.Decision.Action, "action_hash": mine.Decision.ActionHash}, airlock.EINVALID},
		"decision_seq 0":          {map[string]any{"action": mine.Decision.Action, "action_hash": mine.Decision.ActionHash, "decision_seq": 0}, airlock.EINVALID},
		"a negative decision_seq": {map[string]any{"action": mine.Decision.Action, "action_hash": mine.Decision.ActionHash, "decision_seq": -1}, airlock.EINVALID},
	} {
		t.Run(name, func(t *testing.T) {
			before := takeSnapshot(t, ts)
			ts.do(t, "POST", "/v1/executions", ts.AgentSecret, "application/json", mustJSON(t, c.body)).problem(t, http.StatusBadRequest, c.code)
			before.unchanged(t, ts)
		})
	}
	// A pending request allowed nothing to run.
	pending, err := ts.Agent.CheckWait(ctx, airlocktest.Action("deploy", "x"), 0)
	if err != nil || !pending.Pending {
		t.Fatalf("check: %+v %v", pending, err)
	}
	body := map[string]any{"action": pending.Decision.Action, "action_hash": pending.Decision.ActionHash, "approval_id": pending.Approval.ID}
	ts.do(t, "POST", "/v1/executions", ts.AgentSecret, "application/json", mustJSON(t, body)).problem(t, http.StatusConflict, airlock.ECONFLICT)
	// The real link is accepted.
	body = map[string]any{"action": mine.Decision.Action, "action_hash": mine.Decision.ActionHash, "decision_seq": mine.Seq}
	if r := ts.do(t, "POST", "/v1/executions", ts.AgentSecret, "application/json", mustJSON(t, body)); r.Status != http.StatusOK {
		t.Fatalf("a true execution record: %d %s", r.Status, r.Body)
	}
}

// A person who checks an action asked for it, so they cannot approve it.
func TestPersonCheckingCannotApproveIt(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	a := airlocktest.Action("deploy", "mine")
	a.RequestedBy = "" // the admin asks on their own account
	enf, err := ts.Admin.CheckWait(ctx, a, 0)
	if err != nil || !enf.Pending || enf.Approval.RequestedBy != "root" {
		t.Fatalf("admin check: %+v %v; requested by %q, want pending, requested by root", enf, err, enf.Approval.RequestedBy)
	}
	if _, err := ts.Admin.Resolve(ctx, enf.Approval.ID, airlock.StatusApproved, enf.Decision.ActionHash, "", ""); airlock.ErrorCode(err) != airlock.EUNAUTHORIZED {
		t.Fatalf("the admin approving the action they checked: %v, want unauthorized", err)
	}
	if _, err := ts.Bob.Resolve(ctx, enf.Approval.ID, airlock.StatusApproved, enf.Decision.ActionHash, "", ""); err != nil {
		t.Fatalf("bob approving it: %v", err)
	}
}

// An admin's Run records its execution: the action it posts is the one
// the server checked (with the admin as requester).
func TestAdminRunRecordsTheExecution(t *testing.T) {
	ts := newTestServer(t)
	a := airlocktest.Action("read_file", "admin")
	a.RequestedBy = ""
	ran := false
	if _, err := ts.Admin.Run(t.Context(), a, func(context.Context, airlock.Action) error { ran = true; return nil }); err != nil || !ran {
		t.Fatalf("admin Run: ran %v, %v", ran, err)
	}
	page, err := ts.Bob.Events(t.Context(), airlock.EventFilter{Kind: airlock.EventActionExecuted})
	if err != nil || len(page.Events) != 1 {
		t.Fatalf("executed events: %+v, %v; want one", page.Events, err)
	}
}

// The document says what travels: durations in nanoseconds, enumerations
// by name.
func TestOpenAPIDescribesTheWireForm(t *testing.T) {
	ts := newTestServer(t)
	r := ts.do(t, "GET", "/openapi.json", "", "", nil)
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					Type any `json:"type"` // a name, or a list of names

					Description string `json:"description"`
					Enum        []string
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(r.Body, &doc); err != nil {
		t.Fatal(err)
	}
	ap := doc.Components.Schemas["Approval"].Properties
	if p := ap["timeout"]; p.Type != "integer" || !strings.Contains(p.Description, "nanoseconds") {
		t.Errorf("Approval.timeout is documented as %+v, want integer nanoseconds", p)
	}
	if p := ap["status"]; !slices.Contains(p.Enum, "pending") || !slices.Contains(p.Enum, "cancelled") {
		t.Errorf("Approval.status enum %v", p.Enum)
	}
	if p := ap["tier"]; !slices.Contains(p.Enum, "privileged") {
		t.Errorf("Approval.tier enum %v", p.Enum)
	}
	if p := ap["outcome"]; !slices.Contains(p.Enum, "ask") {
		t.Errorf("Approval.outcome enum %v", p.Enum)
	}
	if p := doc.Components.Schemas["ExecutionInputBody"].Properties["decision_seq"]; !strings.Contains(p.Description, "neither is refused") {
		t.Errorf("an execution record's decision_seq is documented as %q, want it to say a record names what allowed it", p.Description)
	}
}
