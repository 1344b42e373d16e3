package http_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
)

// TestInboxEditBeforeApprove: a reviewer edits a request's arguments in
// the inbox, reviews what changed and how the policy decides the edit,
// and approves it; the waiting agent gets the edited action to run.
func TestInboxEditBeforeApprove(t *testing.T) {
	ts := newTestServer(t)
	ap := queue(t, ts, airlocktest.Action("deploy", "prod.yaml"))
	b := newBrowser(t, ts)
	b.signIn(ts.BobSecret)
	b.get("/inbox/approvals/"+ap.ID).want(t, http.StatusOK, `action="/inbox/approvals/`+ap.ID+`/edit"`, `<textarea id="edit-args" name="args"`)

	edited := `{"path": "canary.yaml"}`
	p := b.post("/inbox/approvals/"+ap.ID+"/edit", url.Values{"action_hash": {ap.ActionHash.String()}, "args": {edited}})
	p.want(t, http.StatusOK, "Review your edit", "<td>replace</td>", "<code>/path</code>", "canary.yaml", "prod.yaml",
		"rule deploys", `value="{&#34;path&#34;:&#34;canary.yaml&#34;}"`, "Approve the edited action")

	// A malformed edit is refused with what is wrong.
	b.post("/inbox/approvals/"+ap.ID+"/edit", url.Values{"action_hash": {ap.ActionHash.String()}, "args": {`{"path": "a", "path": "b"}`}}).
		want(t, http.StatusBadRequest, "duplicate")

	r := b.post("/inbox/approvals/"+ap.ID+"/approve", url.Values{"action_hash": {ap.ActionHash.String()}, "args": {`{"path":"canary.yaml"}`}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("approve the edit: %d\n%s", r.status, r.body)
	}
	got := status(t, ts, ap.ID)
	if got.Status != airlock.StatusApproved || got.Edit == nil || got.Edit.By != "bob" || string(got.Edit.Args) != `{"path":"canary.yaml"}` {
		t.Fatalf("after approving the edit: %+v", got)
	}
	enf, err := ts.Agent.Resume(t.Context(), ap.ID, time.Second)
	if err != nil || !enf.Allowed || enf.Edit == nil || string(enf.ToRun().Args) != `{"path":"canary.yaml"}` {
		t.Fatalf("the agent resumes: %+v, %v", enf, err)
	}
	b.get("/inbox/approvals/"+ap.ID).want(t, http.StatusOK, "Edited by <span class=\"ident\">bob</span>", got.Edit.ActionHash.String())
}

// TestInboxQuorum: a request that needs two shows who approved and how
// many more it needs; the person who approved cannot approve again; the
// second settles it.
func TestInboxQuorum(t *testing.T) {
	ts := newTestServer(t)
	q := airlocktest.NewQuorum("agent-1", "deploy prod", 2)
	q.Reviewers = []string{"bob", "carol"}
	q.Review.Escalate = []airlock.Escalation{{After: airlock.Duration(5 * time.Minute), To: []string{"oncall"}}}
	ap, _, err := ts.DB.RequestApproval(t.Context(), q, airlock.Record{})
	if err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, ts)
	b.signIn(ts.BobSecret)
	b.get("/inbox/approvals/"+ap.ID).want(t, http.StatusOK, "0 of 2 from distinct people", "after 5m", "oncall")
	if r := b.post("/inbox/approvals/"+ap.ID+"/approve", approveForm(ap.ActionHash, "")); r.status != http.StatusSeeOther {
		t.Fatalf("bob approves: %d\n%s", r.status, r.body)
	}
	page := b.get("/inbox/approvals/" + ap.ID)
	page.want(t, http.StatusOK, "1 of 2 from distinct people", "1 more needed", "You approved this request")
	if strings.Contains(page.body, `action="/inbox/approvals/`+ap.ID+`/approve"`) {
		t.Fatal("bob is offered to approve again")
	}
	b.post("/inbox/approvals/"+ap.ID+"/approve", approveForm(ap.ActionHash, "")).want(t, http.StatusConflict, "bob already approved")

	carol := makeToken(t, ts.DB, airlock.Token{Role: airlock.RoleReviewer, Name: "carol"})
	c := newBrowser(t, ts)
	c.signIn(carol)
	if r := c.post("/inbox/approvals/"+ap.ID+"/approve", approveForm(ap.ActionHash, "")); r.status != http.StatusSeeOther {
		t.Fatalf("carol approves: %d\n%s", r.status, r.body)
	}
	if got := status(t, ts, ap.ID); got.Status != airlock.StatusApproved || len(got.Approvers()) != 2 {
		t.Fatalf("after two approvals: %s by %v", got.Status, got.Approvers())
	}
}
