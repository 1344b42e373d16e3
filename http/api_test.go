package http_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/gate"
	airlockhttp "github.com/airlock-dev/airlock/http"
	"github.com/google/uuid"
)

// within fails the test unless a value arrives on ch in time; d only
// bounds a hang, it does not synchronise anything.
func within[T any](t *testing.T, ch <-chan T, d time.Duration, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(d):
		t.Fatalf("%s did not happen within %s", what, d)
		panic("unreachable")
	}
}

type checkResult struct {
	enf airlock.Enforcement
	err error
}

func TestCheckOutcomes(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	for _, c := range []struct {
		tool     string
		outcome  airlock.Outcome
		allowed  bool
		pending  bool
		code     string
		label    string
		approval bool
	}{
		{"read_file", airlock.Auto, true, false, "", airlock.LabelAuto, false},
		{"write_file", airlock.Notify, true, false, "", airlock.LabelNotify, false},
		// A pending ask is a request, not a grant.
		{"deploy", airlock.Ask, false, true, "", airlock.LabelApprovalRequested, true},
		{"propose", airlock.Suggest, false, false, airlock.CodeSuggested, airlock.LabelSuggest, true},
		{"shadow_tool", airlock.Shadow, false, false, airlock.CodeShadow, airlock.LabelShadow, false},
		{"delete_file", airlock.Deny, false, false, airlock.CodeDenied, airlock.LabelDenied, false},
		// needs-human: the rule says auto, the tag makes it a proposal.
		{"wire_money", airlock.Suggest, false, false, airlock.CodeNeedsHuman, airlock.LabelNeedsHuman, true},
	} {
		t.Run(c.tool, func(t *testing.T) {
			a := airlocktest.Action(c.tool, c.tool)
			want, err := a.Hash()
			if err != nil {
				t.Fatal(err)
			}
			before := headSeq(t, ts)
			enf, err := ts.Agent.CheckWait(ctx, a, 0)
			if err != nil {
				t.Fatal(err)
			}
			if enf.Allowed != c.allowed || enf.Pending != c.pending || enf.Code != c.code || enf.Label != c.label {
				t.Errorf("allowed %v pending %v code %q label %q, want %v %v %q %q",
					enf.Allowed, enf.Pending, enf.Code, enf.Label, c.allowed, c.pending, c.code, c.label)
			}
			if got := enf.Decision.Outcome; got != c.outcome {
				t.Errorf("outcome %s, want %s", got, c.outcome)
			}
			if got := enf.Decision.ActionHash; got != want {
				t.Errorf("action hash %s, want %s", got, want)
			}
			if enf.Message == "" {
				t.Error("no message")
			}
			if got := enf.Approval != nil; got != c.approval {
				t.Fatalf("approval %v, want %v", got, c.approval)
			}
			if c.approval {
				ap, err := ts.DB.Approval(ctx, enf.Approval.ID)
				if err != nil {
					t.Fatal(err)
				}
				if ap.Status != airlock.StatusPending || ap.ActionHash != want || ap.Agent != "agent-1" {
					t.Errorf("request %+v, want pending for %s", ap, want)
				}
				if !strings.Contains(enf.Message, ap.ID) {
					t.Errorf("message %q does not name request %s", enf.Message, ap.ID)
				}
				if c.code == airlock.CodeNeedsHuman {
					if !ap.NeedsHuman || !strings.HasSuffix(ap.Class, airlock.NeedsHumanSuffix) ||
						ap.Detail.AutonomyClass != "needs-human" || !ap.Detail.RequiresHuman || ap.Detail.Code != airlock.CodeNeedsHuman {
						t.Errorf("needs-human request %+v", ap)
					}
				}
			}
			// The decision is in the audit log, at the seq the answer gives
			// (an ask's pending answer carries the request instead).
			var decision *airlock.Event
			for _, e := range eventsAfter(t, ts, before) {
				if e.Kind == airlock.EventDecision {
					decision = &e
					break
				}
			}
			if decision == nil {
				t.Fatal("no decision event")
			}
			if enf.Seq != 0 && enf.Seq != decision.Seq {
				t.Errorf("seq %d, want the decision event's %d", enf.Seq, decision.Seq)
			}
			if decision.Agent != "agent-1" || decision.TraceID != "t-1" {
				t.Errorf("decision event agent %q trace %q", decision.Agent, decision.TraceID)
			}
		})
	}
}

func TestCheckLongPollApprovedDuringTheWait(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	done, ap := ts.longPoll(t, airlocktest.Action("deploy", "prod"), 30*time.Second)
	if _, err := ts.Bob.Resolve(ctx, ap.ID, airlock.StatusApproved, ap.ActionHash, "go", ""); err != nil {
		t.Fatal(err)
	}
	r := within(t, done, 20*time.Second, "the long poll's answer")
	if r.err != nil {
		t.Fatal(r.err)
	}
	if !r.enf.Allowed || r.enf.Pending || r.enf.Approval == nil || r.enf.Approval.ID != ap.ID ||
		r.enf.Approval.Status != airlock.StatusApproved || r.enf.Approval.ResolvedBy != "bob" {
		t.Fatalf("answer %+v, want allowed by bob's approval %s", r.enf, ap.ID)
	}
	if r.enf.Label != airlock.LabelApprovalGranted {
		t.Errorf("label %q, want %q", r.enf.Label, airlock.LabelApprovalGranted)
	}
}

func TestCheckLongPollRejectedDuringTheWait(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	done, ap := ts.longPoll(t, airlocktest.Action("deploy", "prod"), 30*time.Second)
	if _, err := ts.Bob.Resolve(ctx, ap.ID, airlock.StatusRejected, ap.ActionHash, "not today", ""); err != nil {
		t.Fatal(err)
	}
	r := within(t, done, 20*time.Second, "the long poll's answer")
	if r.err != nil || r.enf.Allowed || r.enf.Pending || r.enf.Code != airlock.CodeRejected || !strings.Contains(r.enf.Message, "not today") {
		t.Fatalf("answer %+v %v, want AIRLOCK-REJECTED with the reason", r.enf, r.err)
	}
}

func TestCheckWaitEndsPendingThenResumes(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	enf, err := ts.Agent.CheckWait(ctx, airlocktest.Action("deploy", "prod"), 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if !enf.Pending || enf.Allowed || enf.Code != "" || enf.Approval == nil {
		t.Fatalf("after the wait: %+v, want pending with its request", enf)
	}
	id := enf.Approval.ID

	// Resuming without waiting answers how it stands.
	again, err := ts.Agent.Resume(ctx, id, 0)
	if err != nil || !again.Pending || again.Approval.ID != id {
		t.Fatalf("resume: %+v %v, want still pending", again, err)
	}
	again, err = ts.Agent.Resume(ctx, id, 20*time.Millisecond)
	if err != nil || !again.Pending {
		t.Fatalf("resume with a wait: %+v %v, want still pending", again, err)
	}
	if ap, _ := ts.DB.Approval(ctx, id); ap.Status != airlock.StatusPending {
		t.Fatalf("the request after the waits ended: %s, want pending", ap.Status)
	}

	// The same action checked again joins the request.
	joined, err := ts.Agent.CheckWait(ctx, airlocktest.Action("deploy", "prod"), 0)
	if err != nil || !joined.Pending || joined.Approval.ID != id {
		t.Fatalf("the same action again: %+v %v, want it to join %s", joined, err, id)
	}

	// A resume that waits sees the approval.
	done := make(chan checkResult, 1)
	go func() {
		enf, err := ts.Agent.Resume(ctx, id, 30*time.Second)
		done <- checkResult{enf, err}
	}()
	if _, err := ts.Bob.Resolve(ctx, id, airlock.StatusApproved, enf.Decision.ActionHash, "", ""); err != nil {
		t.Fatal(err)
	}
	r := within(t, done, 20*time.Second, "the resumed poll's answer")
	if r.err != nil || !r.enf.Allowed || r.enf.Approval.ID != id {
		t.Fatalf("resume after approval: %+v %v, want allowed", r.enf, r.err)
	}

	// Enforce through the client waits across polls, too.
	c := airlockClient(ts, ts.AgentSecret)
	c.Wait = 20 * time.Millisecond
	var polls int
	var mu sync.Mutex
	c.Pending = func(e airlock.Enforcement) {
		mu.Lock()
		defer mu.Unlock()
		if polls++; polls == 3 {
			go ts.Bob.Resolve(context.Background(), e.Approval.ID, airlock.StatusApproved, e.Decision.ActionHash, "", "")
		}
	}
	got := c.Enforce(ctx, airlocktest.Action("deploy", "staging"))
	if !got.Allowed {
		t.Fatalf("Enforce across polls: %+v", got)
	}
}

// A caller whose wait ended comes back with the same action: it runs on
// the approval given meanwhile, once; the reviewer does not approve twice.
func TestCheckAgainCollectsTheApproval(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	a := airlocktest.Action("deploy", "prod")
	enf, err := ts.Agent.CheckWait(ctx, a, 20*time.Millisecond)
	if err != nil || !enf.Pending {
		t.Fatalf("check: %+v %v, want pending", enf, err)
	}
	if _, err := ts.Bob.Resolve(ctx, enf.Approval.ID, airlock.StatusApproved, enf.Decision.ActionHash, "", ""); err != nil {
		t.Fatal(err)
	}
	ran := 0
	got, err := ts.Agent.Run(ctx, a, func(context.Context, airlock.Action) error { ran++; return nil })
	if err != nil || !got.Allowed || got.Approval.ID != enf.Approval.ID || ran != 1 {
		t.Fatalf("the same action again: %+v %v (ran %d), want it run once on approval %s", got, err, ran, enf.Approval.ID)
	}
	page, err := ts.DB.FindApprovals(ctx, airlock.ApprovalFilter{})
	if err != nil || len(page.Approvals) != 1 {
		t.Fatalf("%d requests (%v), want the one", len(page.Approvals), err)
	}
	// Used once: the next identical check is a new request.
	again, err := ts.Agent.CheckWait(ctx, a, 0)
	if err != nil || !again.Pending || again.Approval.ID == enf.Approval.ID {
		t.Fatalf("a third check: %+v %v, want a new pending request", again, err)
	}
}

// A caller that goes away while it long-polls leaves its request pending,
// for it to resume later.
func TestCheckCallerGoneLeavesRequestPending(t *testing.T) {
	ts := newTestServer(t)
	served := func() float64 { return apiRequestsServed(ts.metrics(t)) }
	before := served()

	cctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := ts.Agent.CheckWait(cctx, airlocktest.Action("deploy", "prod"), 30*time.Second)
		done <- err
	}()
	var ap airlock.Approval
	waitFor(t, "the request to be queued", func() bool {
		p := pendingFor(t, ts, "deploy")
		if len(p) == 1 {
			ap = p[0]
		}
		return len(p) == 1
	})
	cancel()
	if err := within(t, done, 20*time.Second, "the client to give up"); !errors.Is(err, context.Canceled) {
		t.Errorf("client error %v, want context.Canceled", err)
	}
	waitFor(t, "the server to finish the abandoned check", func() bool { return served() > before })
	got, err := ts.DB.Approval(t.Context(), ap.ID)
	if err != nil || got.Status != airlock.StatusPending {
		t.Fatalf("request after the caller left: %s %v, want pending", got.Status, err)
	}
	enf, err := ts.Agent.Resume(t.Context(), ap.ID, 0)
	if err != nil || !enf.Pending {
		t.Fatalf("resume: %+v %v, want pending", enf, err)
	}
}

// apiRequestsServed counts the /v1 requests the server has finished, by
// any route label.
func apiRequestsServed(text string) float64 {
	var n float64
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "airlock_http_requests_total{") || !strings.Contains(line, "/v1/") {
			continue
		}
		if i := strings.LastIndexByte(line, ' '); i > 0 {
			v, _ := strconv.ParseFloat(line[i+1:], 64)
			n += v
		}
	}
	return n
}

func TestSuggestApprovedRunsExactlyOnce(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	a := airlocktest.Action("propose", "plan")
	enf, err := ts.Agent.CheckWait(ctx, a, 0)
	if err != nil || enf.Allowed || enf.Code != airlock.CodeSuggested || enf.Approval == nil {
		t.Fatalf("propose: %+v %v", enf, err)
	}
	id := enf.Approval.ID

	// A proposal is not awaited: the caller retries once it is approved.
	_, err = ts.Agent.Resume(ctx, id, 0)
	wantCode(t, err, airlock.EINVALID)

	// Until it is approved, retrying queues nothing new.
	again, err := ts.Agent.CheckWait(ctx, a, 0)
	if err != nil || again.Allowed || again.Approval == nil || again.Approval.ID != id {
		t.Fatalf("retry before approval: %+v %v, want to join %s", again, err, id)
	}
	// The rule lists no reviewer: the owner (alice) or an admin decides.
	if _, err := ts.Admin.Resolve(ctx, id, airlock.StatusApproved, enf.Decision.ActionHash, "fine", ""); err != nil {
		t.Fatal(err)
	}

	// A different action is not covered by the grant.
	other, err := ts.Agent.CheckWait(ctx, airlocktest.Action("propose", "other"), 0)
	if err != nil || other.Allowed || other.Code != airlock.CodeSuggested || other.Approval.ID == id {
		t.Fatalf("another action after the approval: %+v %v, want a new proposal", other, err)
	}

	// The same action, retried by many at once: exactly one runs.
	const n = 8
	results := make([]airlock.Enforcement, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			enf, err := ts.Agent.CheckWait(ctx, a, 0)
			if err != nil {
				t.Error(err)
			}
			results[i] = enf
		}()
	}
	wg.Wait()
	var allowed, queued []airlock.Enforcement
	for _, r := range results {
		if r.Allowed {
			allowed = append(allowed, r)
		} else {
			queued = append(queued, r)
		}
	}
	if len(allowed) != 1 {
		t.Fatalf("%d retries allowed, want exactly 1", len(allowed))
	}
	if got := allowed[0]; got.Label != airlock.LabelGrantUsed || got.Approval == nil || got.Approval.ID != id {
		t.Errorf("the allowed retry: %+v, want grant_used of %s", got, id)
	}
	for _, q := range queued {
		if q.Code != airlock.CodeSuggested || q.Approval == nil || q.Approval.ID == id {
			t.Errorf("a later retry: code %q approval %+v, want a new proposal", q.Code, q.Approval)
		}
	}
	// And later still: queued again, not run.
	last, err := ts.Agent.CheckWait(ctx, a, 0)
	if err != nil || last.Allowed || last.Code != airlock.CodeSuggested || last.Approval.ID == id {
		t.Fatalf("retry after the grant was used: %+v %v, want queued again", last, err)
	}
	if ap, _ := ts.DB.Approval(ctx, id); ap.GrantUsed.IsZero() {
		t.Errorf("the grant is not marked used: %+v", ap)
	}
	used, err := ts.Bob.Events(ctx, airlock.EventFilter{Kind: airlock.EventGrantUsed})
	if err != nil || len(used.Events) != 1 || used.Events[0].ApprovalID != id {
		t.Errorf("grant.used events: %+v %v, want one for %s", used.Events, err, id)
	}
}

func TestNeedsHumanApprovedRunsOnce(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	a := airlocktest.Action("wire_money", "acme")
	enf, err := ts.Agent.CheckWait(ctx, a, 0)
	if err != nil || enf.Code != airlock.CodeNeedsHuman || enf.Approval == nil {
		t.Fatalf("wire_money: %+v %v", enf, err)
	}
	// bob is not listed on this rule; the owner is alice, so an admin decides.
	_, err = ts.Bob.Resolve(ctx, enf.Approval.ID, airlock.StatusApproved, enf.Decision.ActionHash, "", "")
	wantCode(t, err, airlock.EUNAUTHORIZED)
	if _, err := ts.Admin.Resolve(ctx, enf.Approval.ID, airlock.StatusApproved, enf.Decision.ActionHash, "", ""); err != nil {
		t.Fatal(err)
	}
	if got := ts.Agent.Enforce(ctx, a); !got.Allowed {
		t.Fatalf("first retry: %+v, want allowed once", got)
	}
	if got := ts.Agent.Enforce(ctx, a); got.Allowed || got.Code != airlock.CodeNeedsHuman {
		t.Fatalf("second retry: %+v, want AIRLOCK-NEEDS-HUMAN again", got)
	}
}

func TestExecutions(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	a := airlocktest.Action("read_file", "notes")

	// Run through the client: the check, then the record of the run.
	enf, err := ts.Agent.Run(ctx, a, func(context.Context, airlock.Action) error { return nil })
	if err != nil || !enf.Allowed {
		t.Fatalf("run: %+v %v", enf, err)
	}
	executed := func() []airlock.Event {
		page, err := ts.Bob.Events(ctx, airlock.EventFilter{Kind: airlock.EventActionExecuted})
		if err != nil {
			t.Fatal(err)
		}
		return page.Events
	}
	evs := executed()
	if len(evs) != 1 || evs[0].Outcome != "ok" || evs[0].Agent != "agent-1" {
		t.Fatalf("action.executed events %+v, want one ok", evs)
	}
	var p struct {
		DecisionSeq int64        `json:"decision_seq"`
		ActionHash  airlock.Hash `json:"action_hash"`
		Status      string       `json:"status"`
		Error       string       `json:"error"`
	}
	if err := json.Unmarshal(evs[0].Payload, &p); err != nil {
		t.Fatal(err)
	}
	if p.DecisionSeq != enf.Seq || p.ActionHash != enf.Decision.ActionHash || p.Status != "ok" {
		t.Errorf("payload %+v, want decision %d hash %s ok", p, enf.Seq, enf.Decision.ActionHash)
	}

	// A failure: recorded, with a trust record of outcome failure.
	boom := errors.New("disk on fire")
	if _, err := ts.Agent.Run(ctx, a, func(context.Context, airlock.Action) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("failed run: %v, want %v", err, boom)
	}
	evs = executed()
	if len(evs) != 2 || evs[1].Outcome != "failed" || !strings.Contains(string(evs[1].Payload), "disk on fire") {
		t.Fatalf("action.executed events %+v, want a failed one with the error", evs)
	}
	sums, err := ts.Bob.Trust(ctx, airlock.TrustFilter{Agent: "agent-1", Class: "fs.read"})
	if err != nil || len(sums) != 1 {
		t.Fatalf("trust: %+v %v", sums, err)
	}
	if got, want := sums[0].Counts[airlock.TrustFailure], int64(1); got != want {
		t.Errorf("fs.read failures %d, want %d (counts %v)", got, want, sums[0].Counts)
	}

	// Posted directly, with a duration and without.
	h := enf.Decision.ActionHash.String()
	resp := ts.do(t, "POST", "/v1/executions", ts.AgentSecret, "application/json",
		mustJSON(t, map[string]any{"action": a, "action_hash": h, "decision_seq": enf.Seq, "duration": "1.5s"}))
	var out struct{ Recorded bool }
	resp.decode(t, &out)
	if !out.Recorded {
		t.Errorf("answer %s, want recorded", resp.Body)
	}

	// A hash that is not the action's is refused, and nothing is recorded.
	before := takeSnapshot(t, ts)
	wrong, _ := airlocktest.Action("read_file", "secrets").Hash()
	resp = ts.do(t, "POST", "/v1/executions", ts.AgentSecret, "application/json",
		mustJSON(t, map[string]any{"action": a, "action_hash": wrong}))
	resp.problem(t, http.StatusConflict, airlock.CodeHashMismatch)
	before.unchanged(t, ts)
}

func TestApprovalListing(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	var ids []string // oldest first
	hashes := map[string]airlock.Hash{}
	for i := range 5 {
		enf, err := ts.Agent.CheckWait(ctx, airlocktest.Action("deploy", fmt.Sprint("svc-", i)), 0)
		if err != nil || !enf.Pending {
			t.Fatal(enf, err)
		}
		ids = append(ids, enf.Approval.ID)
		hashes[enf.Approval.ID] = enf.Decision.ActionHash
	}
	prop, err := ts.Agent.CheckWait(ctx, airlocktest.Action("propose", "idea"), 0)
	if err != nil {
		t.Fatal(err)
	}
	ids = append(ids, prop.Approval.ID)
	if _, err := ts.Bob.Resolve(ctx, ids[1], airlock.StatusRejected, hashes[ids[1]], "no", ""); err != nil {
		t.Fatal(err)
	}

	list := func(f airlock.ApprovalFilter) []string {
		t.Helper()
		page, err := ts.Bob.Approvals(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, ap := range page.Approvals {
			got = append(got, ap.ID)
		}
		return got
	}
	rev := slices.Clone(ids)
	slices.Reverse(rev)
	without := func(s []string, x string) []string {
		return slices.DeleteFunc(slices.Clone(s), func(v string) bool { return v == x })
	}
	for _, c := range []struct {
		name string
		f    airlock.ApprovalFilter
		want []string
	}{
		{"all, newest first", airlock.ApprovalFilter{}, rev},
		{"oldest first", airlock.ApprovalFilter{Oldest: true}, ids},
		{"pending", airlock.ApprovalFilter{Status: []airlock.ApprovalStatus{airlock.StatusPending}}, without(rev, ids[1])},
		{"rejected", airlock.ApprovalFilter{Status: []airlock.ApprovalStatus{airlock.StatusRejected}}, []string{ids[1]}},
		{"pending or rejected", airlock.ApprovalFilter{Status: []airlock.ApprovalStatus{airlock.StatusPending, airlock.StatusRejected}}, rev},
		{"tool", airlock.ApprovalFilter{Tool: "propose"}, []string{ids[5]}},
		{"search", airlock.ApprovalFilter{Search: "PROPOSE"}, []string{ids[5]}},
		{"ID prefix", airlock.ApprovalFilter{IDPrefix: ids[3][:len(ids[3])-1]}, []string{ids[3]}},
		{"ID prefix of none", airlock.ApprovalFilter{IDPrefix: "f"}, nil},
		{"settled, the last settled first", airlock.ApprovalFilter{BySettled: true}, []string{ids[1]}},
		{"agent", airlock.ApprovalFilter{Agent: "agent-1"}, rev},
		{"other agent", airlock.ApprovalFilter{Agent: "agent-2"}, nil},
		{"action hash", airlock.ApprovalFilter{ActionHash: hashes[ids[3]]}, []string{ids[3]}},
		{"min tier", airlock.ApprovalFilter{MinTier: airlock.TierRead}, rev},
		{"created after now", airlock.ApprovalFilter{CreatedAfter: time.Now().Add(time.Hour)}, nil},
		{"created before now", airlock.ApprovalFilter{CreatedBefore: time.Now().Add(time.Hour)}, rev},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := list(c.f); !slices.Equal(got, c.want) {
				t.Errorf("got %v\nwant %v", got, c.want)
			}
		})
	}

	// Paging: every request exactly once, in order, then no cursor.
	for _, oldest := range []bool{false, true} {
		var got []string
		f := airlock.ApprovalFilter{Limit: 2, Oldest: oldest}
		for pages := 0; ; pages++ {
			if pages > 10 {
				t.Fatal("paging does not end")
			}
			page, err := ts.Bob.Approvals(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Approvals) > 2 {
				t.Fatalf("page of %d, want at most 2", len(page.Approvals))
			}
			for _, ap := range page.Approvals {
				got = append(got, ap.ID)
			}
			if page.NextCursor == "" {
				break
			}
			f.Cursor = page.NextCursor
		}
		want := rev
		if oldest {
			want = ids
		}
		if !slices.Equal(got, want) {
			t.Errorf("paged (oldest %v): %v\nwant %v", oldest, got, want)
		}
	}

	// One request, by ID.
	ap, err := ts.Bob.Approval(ctx, ids[3])
	if err != nil || ap.ID != ids[3] || ap.Tool != "deploy" || ap.Status != airlock.StatusPending {
		t.Errorf("get %s: %+v %v", ids[3], ap, err)
	}
	// An empty listing is an empty array, not null.
	resp := ts.do(t, "GET", "/v1/approvals?agent=nobody", ts.BobSecret, "", nil)
	if !strings.Contains(string(resp.Body), `"approvals":[]`) {
		t.Errorf("empty listing %s, want approvals: []", resp.Body)
	}
}

func TestCancelOwnRequest(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	enf, err := ts.Agent.CheckWait(ctx, airlocktest.Action("deploy", "prod"), 0)
	if err != nil || !enf.Pending {
		t.Fatal(enf, err)
	}
	id := enf.Approval.ID
	before := headSeq(t, ts)
	ap, err := ts.Agent.Cancel(ctx, id, "changed my mind", "")
	if err != nil {
		t.Fatal(err)
	}
	if ap.Status != airlock.StatusCancelled || ap.ResolvedBy != "agent:agent-1" || ap.Reason != "changed my mind" {
		t.Errorf("cancelled: %+v", ap)
	}
	var kinds []string
	for _, e := range eventsAfter(t, ts, before) {
		kinds = append(kinds, e.Kind)
	}
	if !slices.Contains(kinds, airlock.EventApprovalCancelled) {
		t.Errorf("events %v, want approval.cancelled", kinds)
	}
	// Once.
	_, err = ts.Agent.Cancel(ctx, id, "", "")
	wantCode(t, err, airlock.ECONFLICT)
	_, err = ts.Bob.Resolve(ctx, id, airlock.StatusApproved, enf.Decision.ActionHash, "", "")
	wantCode(t, err, airlock.ECONFLICT)
	// The agent's check ends cancelled.
	got, err := ts.Agent.Resume(ctx, id, 0)
	if err != nil || got.Allowed || got.Code != airlock.CodeCancelled {
		t.Errorf("resume: %+v %v, want AIRLOCK-CANCELLED", got, err)
	}
	// A reviewer listed on the rule may cancel too.
	enf, err = ts.Agent.CheckWait(ctx, airlocktest.Action("deploy", "staging"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if ap, err := ts.Bob.Cancel(ctx, enf.Approval.ID, "", ""); err != nil || ap.ResolvedBy != "bob" {
		t.Errorf("bob cancels: %+v %v", ap, err)
	}
}

func TestWaitApproval(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	enf, err := ts.Agent.CheckWait(ctx, airlocktest.Action("deploy", "prod"), 0)
	if err != nil {
		t.Fatal(err)
	}
	id := enf.Approval.ID
	// A wait that ends answers with the request as it stands.
	ap, err := waitOnce(ctx, ts.Bob, id, 10*time.Millisecond)
	if err != nil || ap.ID != id || ap.Status != airlock.StatusPending {
		t.Fatalf("short wait: %+v %v", ap, err)
	}
	type waited struct {
		ap  airlock.Approval
		err error
	}
	done := make(chan waited, 2)
	for _, c := range []*client.Client{ts.Bob, ts.Agent} {
		go func() {
			ap, err := waitOnce(ctx, c, id, 30*time.Second)
			done <- waited{ap, err}
		}()
	}
	if _, err := ts.Bob.Resolve(ctx, id, airlock.StatusApproved, enf.Decision.ActionHash, "", ""); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		w := within(t, done, 20*time.Second, "the wait to return")
		if w.err != nil || w.ap.Status != airlock.StatusApproved || w.ap.ResolvedBy != "bob" {
			t.Errorf("wait: %+v %v, want approved by bob", w.ap, w.err)
		}
	}
}

func TestEventsPaging(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	for i := range 7 {
		ts.Agent.Enforce(ctx, airlocktest.Action("read_file", fmt.Sprint(i)))
	}
	want := allEvents(t, ts)
	for _, limit := range []int{1, 3, 4, len(want), 1000} {
		var got []int64
		f := airlock.EventFilter{Limit: limit}
		for pages := 0; ; pages++ {
			if pages > len(want)+2 {
				t.Fatal("paging does not end")
			}
			page, err := ts.Bob.Events(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Events) > limit {
				t.Fatalf("page of %d with limit %d", len(page.Events), limit)
			}
			for _, e := range page.Events {
				got = append(got, e.Seq)
			}
			if page.NextAfter == 0 {
				break
			}
			if page.NextAfter != page.Events[len(page.Events)-1].Seq {
				t.Fatalf("next_after %d, want the page's last seq", page.NextAfter)
			}
			f.AfterSeq = page.NextAfter
		}
		var seqs []int64
		for _, e := range want {
			seqs = append(seqs, e.Seq)
		}
		if !slices.Equal(got, seqs) {
			t.Errorf("limit %d: paged %v, want %v", limit, got, seqs)
		}
	}
	// Newest first, paging back with next_before.
	var back []int64
	f := airlock.EventFilter{Newest: true, Limit: 3}
	for pages := 0; ; pages++ {
		if pages > len(want) {
			t.Fatal("paging back does not end")
		}
		page, err := ts.Bob.Events(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Events {
			back = append(back, e.Seq)
		}
		if page.NextAfter != 0 {
			t.Fatalf("a newest-first page has next_after %d", page.NextAfter)
		}
		if page.NextBefore == 0 {
			break
		}
		f.BeforeSeq = page.NextBefore
	}
	var seqs []int64
	for i := len(want) - 1; i >= 0; i-- {
		seqs = append(seqs, want[i].Seq)
	}
	if !slices.Equal(back, seqs) {
		t.Errorf("newest first: paged %v, want %v", back, seqs)
	}
	// Filters.
	page, err := ts.Bob.Events(ctx, airlock.EventFilter{Kind: airlock.EventDecision})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Events) != 7 {
		t.Errorf("%d decision events, want 7", len(page.Events))
	}
	page, err = ts.Bob.Events(ctx, airlock.EventFilter{TraceID: "no-such-trace"})
	if err != nil || len(page.Events) != 0 {
		t.Errorf("unknown trace: %+v %v", page, err)
	}
	// The chain verifies.
	if r, err := ts.Bob.Verify(ctx); err != nil || !r.OK() || r.HeadSeq != want[len(want)-1].Seq {
		t.Errorf("verify: %+v %v", r, err)
	}
	// One request's events.
	enf, err := ts.Agent.CheckWait(ctx, airlocktest.Action("deploy", "x"), 0)
	if err != nil || enf.Approval == nil {
		t.Fatalf("check: %+v %v", enf, err)
	}
	page, err = ts.Bob.Events(ctx, airlock.EventFilter{ApprovalID: enf.Approval.ID})
	if err != nil || len(page.Events) != 2 || page.Events[0].Kind != airlock.EventApprovalRequested || page.Events[1].Kind != airlock.EventDecision {
		t.Errorf("the request's events: %+v %v", page.Events, err)
	}
}

// sseEvent is one event read off a raw stream.
type sseEvent struct {
	id    string
	event airlock.Event
}

// openStream opens the raw event stream with the given headers and sends
// what it reads on the returned channel, closed when the stream ends.
// (The server may hold its headers back until the first event, so the
// request is made in the background.)
func openStream(t *testing.T, ctx context.Context, ts *testServer, secret, query string, hdr http.Header) <-chan sseEvent {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "GET", ts.URL+"/v1/events/stream"+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range hdr {
		req.Header[k] = v
	}
	out := make(chan sseEvent, 256)
	go func() {
		defer close(out)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			if ctx.Err() == nil {
				t.Errorf("stream: %v", err)
			}
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			t.Errorf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
			return
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		var cur sseEvent
		var data string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if data != "" {
					if err := json.Unmarshal([]byte(data), &cur.event); err == nil {
						out <- cur
					}
				}
				cur, data = sseEvent{}, ""
			case strings.HasPrefix(line, "id:"):
				cur.id = strings.TrimSpace(strings.TrimPrefix(line, "id:"))
			case strings.HasPrefix(line, "data:"):
				data += strings.TrimSpace(strings.TrimPrefix(line, "data:"))
			}
		}
	}()
	return out
}

// An event stream answers at once, before any event: a client (and any
// proxy between) knows it is connected, and EventSource fires "open".
func TestStreamOpensAtOnce(t *testing.T) {
	ts := newTestServer(t)
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	req, err := http.NewRequestWithContext(ctx, "GET", ts.URL+"/v1/events/stream", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+ts.BobSecret)
	req.Header.Set("Accept", "text/event-stream")
	type answer struct {
		resp *http.Response
		err  error
	}
	got := make(chan answer, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		got <- answer{resp, err}
	}()
	waitStreams(t, ts, 1)
	select {
	case a := <-got:
		if a.err != nil {
			t.Fatal(a.err)
		}
		defer a.resp.Body.Close()
		if a.resp.StatusCode != http.StatusOK || !strings.HasPrefix(a.resp.Header.Get("Content-Type"), "text/event-stream") {
			t.Errorf("stream: %d %s", a.resp.StatusCode, a.resp.Header.Get("Content-Type"))
		}
	case <-time.After(10 * time.Second):
		t.Error("the stream is open on the server but its headers have not been sent 10s later (nothing flushed before the first event)")
	}
}

func TestEventStream(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	ts.Agent.Enforce(ctx, airlocktest.Action("read_file", "old")) // before the stream: not sent

	// The Go client: only new events.
	sctx, stop := context.WithCancel(ctx)
	got := make(chan airlock.Event, 64)
	ended := make(chan error, 1)
	go func() {
		ended <- ts.Bob.StreamEvents(sctx, 0, "", "", func(e airlock.Event) error {
			got <- e
			return nil
		})
	}()
	waitStreams(t, ts, 1)
	enf := ts.Agent.Enforce(ctx, airlocktest.Action("read_file", "new"))
	e := within(t, got, 20*time.Second, "the new decision on the stream")
	if e.Seq != enf.Seq || e.Kind != airlock.EventDecision || e.Agent != "agent-1" {
		t.Fatalf("first streamed event %d %s, want decision %d", e.Seq, e.Kind, enf.Seq)
	}
	last := e.Seq
	stop()
	if err := within(t, ended, 20*time.Second, "the stream to end"); !errors.Is(err, context.Canceled) {
		t.Errorf("stream ended with %v, want context.Canceled", err)
	}
	waitStreams(t, ts, 0)

	// While disconnected, more happens.
	for i := range 3 {
		ts.Agent.Enforce(ctx, airlocktest.Action("write_file", fmt.Sprint(i)))
	}
	if _, err := ts.Agent.CheckWait(ctx, airlocktest.Action("deploy", "prod"), 0); err != nil {
		t.Fatal(err)
	}
	missed := eventsAfter(t, ts, last)

	// Resuming with Last-Event-ID sends exactly what came after it.
	rctx, rstop := context.WithCancel(ctx)
	defer rstop()
	stream := openStream(t, rctx, ts, ts.BobSecret, "", http.Header{"Last-Event-Id": {strconv.FormatInt(last, 10)}})
	var seen []int64
	for len(seen) < len(missed) {
		se := within(t, stream, 20*time.Second, "the missed events")
		if se.id != strconv.FormatInt(se.event.Seq, 10) {
			t.Errorf("event id %q, want its seq %d", se.id, se.event.Seq)
		}
		seen = append(seen, se.event.Seq)
	}
	var want []int64
	for _, e := range missed {
		want = append(want, e.Seq)
	}
	if !slices.Equal(seen, want) {
		t.Fatalf("resumed stream sent %v, want %v", seen, want)
	}
	// Then it goes on live, without a gap or a repeat.
	enf = ts.Agent.Enforce(ctx, airlocktest.Action("read_file", "live"))
	se := within(t, stream, 20*time.Second, "the live event after resuming")
	if se.event.Seq != enf.Seq || se.event.Seq != want[len(want)-1]+1 {
		t.Errorf("next streamed event %d, want %d right after %d", se.event.Seq, enf.Seq, want[len(want)-1])
	}
	rstop()

	// A kind filter: approval changes only.
	kctx, kstop := context.WithCancel(ctx)
	defer kstop()
	kinds := openStream(t, kctx, ts, ts.BobSecret, "?kind=approval.&after="+strconv.FormatInt(last, 10), nil)
	se = within(t, kinds, 20*time.Second, "the approval event")
	if se.event.Kind != airlock.EventApprovalRequested {
		t.Errorf("filtered stream sent %s, want approval.requested", se.event.Kind)
	}
}

// A revoked token stops working at once: an event stream it opened ends
// and sends nothing more.
func TestRevokedTokenEndsItsStream(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	dave, _ := newToken(t, ts, airlock.RoleReviewer, "dave", "")
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	stream := openStream(t, sctx, ts, dave.Secret, "", nil)
	waitStreams(t, ts, 1)
	first := ts.Agent.Enforce(ctx, airlocktest.Action("read_file", "before"))
	if e := within(t, stream, 20*time.Second, "an event on dave's stream"); e.event.Seq != first.Seq {
		t.Fatalf("streamed %d, want %d", e.event.Seq, first.Seq)
	}
	if _, err := ts.Admin.RevokeToken(ctx, dave.Token.ID); err != nil {
		t.Fatal(err)
	}
	after := ts.Agent.Enforce(ctx, airlocktest.Action("read_file", "after"))
	// The revocation's own event may still be sent; nothing after it.
	for {
		select {
		case e, open := <-stream:
			if !open {
				return
			}
			if e.event.Seq >= after.Seq {
				t.Fatalf("the stream of a revoked token sent event %d (%s), recorded after the revocation", e.event.Seq, e.event.Kind)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the stream of a revoked token is still open")
		}
	}
}

func TestTrustAggregates(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	for range 3 {
		ts.Agent.Enforce(ctx, airlocktest.Action("read_file", "a"))
	}
	ts.Agent.Enforce(ctx, airlocktest.Action("delete_file", "a"))
	ts.Agent.Enforce(ctx, airlocktest.Action("shadow_tool", "a"))
	enf, err := ts.Agent.CheckWait(ctx, airlocktest.Action("deploy", "a"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Bob.Resolve(ctx, enf.Approval.ID, airlock.StatusRejected, enf.Decision.ActionHash, "", ""); err != nil {
		t.Fatal(err)
	}
	sums, err := ts.Bob.Trust(ctx, airlock.TrustFilter{Agent: "agent-1"})
	if err != nil {
		t.Fatal(err)
	}
	by := map[airlock.Class]airlock.TrustSummary{}
	for _, s := range sums {
		by[s.Class] = s
	}
	if s := by["fs.read"]; s.Counts[airlock.TrustSuccess] != 3 || s.Total != 3 {
		t.Errorf("fs.read: %+v, want 3 successes", s)
	}
	if s := by["fs.delete"]; s.Counts[airlock.TrustDenied] != 1 {
		t.Errorf("fs.delete: %+v, want 1 denied", s)
	}
	if s := by[enf.Decision.Classification.Class]; s.Rejected != 1 || s.Counts[airlock.TrustDenied] < 1 {
		t.Errorf("%s: %+v, want 1 rejected", enf.Decision.Classification.Class, s)
	}
	one, err := ts.Bob.Trust(ctx, airlock.TrustFilter{Class: "fs.read"})
	if err != nil || len(one) != 1 || one[0].Class != "fs.read" {
		t.Errorf("class filter: %+v %v", one, err)
	}
	none, err := ts.Bob.Trust(ctx, airlock.TrustFilter{Since: time.Now().Add(time.Hour)})
	if err != nil || len(none) != 0 {
		t.Errorf("since the future: %+v %v", none, err)
	}
	resp := ts.do(t, "GET", "/v1/trust?agent=nobody", ts.BobSecret, "", nil)
	if !strings.Contains(string(resp.Body), `"trust":[]`) {
		t.Errorf("empty trust %s, want trust: []", resp.Body)
	}
}

func TestPolicyAndExplain(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	for _, c := range []*client.Client{ts.Agent, ts.Bob, ts.Admin} {
		p, err := airlockhttp.Policy(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Layers) != 1 || p.Layers[0].Name != "enforce" || p.Layers[0].File != "airlocktest.yaml" {
			t.Errorf("policy %+v, want the one test layer", p)
		}
	}
	before := takeSnapshot(t, ts)
	for _, c := range []struct {
		tool    string
		outcome airlock.Outcome
		rule    string
	}{
		{"read_file", airlock.Auto, "reads"},
		{"deploy", airlock.Ask, "deploys"},
		{"delete_file", airlock.Deny, "forbidden"},
		{"wire_money", airlock.Suggest, "money"},
	} {
		for _, who := range []*client.Client{ts.Agent, ts.Bob} {
			e, err := who.Explain(ctx, airlocktest.Action(c.tool, "x"))
			if err != nil {
				t.Fatal(err)
			}
			if e.Decision.Outcome != c.outcome || e.Decision.Rule == nil || e.Decision.Rule.ID != c.rule {
				t.Errorf("explain %s: %s by %v, want %s by rule %s", c.tool, e.Decision.Outcome, e.Decision.Rule, c.outcome, c.rule)
			}
			if e.Summary == "" || !strings.Contains(e.Explanation, e.Decision.ActionHash.String()) {
				t.Errorf("explain %s: summary %q explanation %q", c.tool, e.Summary, e.Explanation)
			}
		}
	}
	// Explaining records nothing and queues nothing.
	before.unchanged(t, ts)
}

// The effective policy over the API is the gate's, for any agent to
// people and for its own agent to an agent token.
func TestEffectivePolicyAPI(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	want := ts.Enforcer.Gate.EffectivePolicy("agent-1")
	for name, get := range map[string]func() (gate.EffectivePolicy, error){
		"reviewer":             func() (gate.EffectivePolicy, error) { return airlockhttp.EffectivePolicy(ctx, ts.Bob, "agent-1") },
		"admin":                func() (gate.EffectivePolicy, error) { return airlockhttp.EffectivePolicy(ctx, ts.Admin, "agent-1") },
		"agent, naming itself": func() (gate.EffectivePolicy, error) { return airlockhttp.EffectivePolicy(ctx, ts.Agent, "agent-1") },
		"agent, naming no one": func() (gate.EffectivePolicy, error) { return airlockhttp.EffectivePolicy(ctx, ts.Agent, "") },
	} {
		got, err := get()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got.Explain() != want.Explain() {
			t.Errorf("%s got:\n%s\nwant:\n%s", name, got.Explain(), want.Explain())
		}
	}
	if len(want.Layers) != 1 || len(want.Layers[0].Rules) == 0 {
		t.Fatalf("the test policy's effective policy is empty: %+v", want)
	}

	before := takeSnapshot(t, ts)
	resp := ts.do(t, "GET", "/v1/policy/effective", ts.BobSecret, "", nil)
	if p := resp.problem(t, http.StatusBadRequest, airlock.EINVALID); !strings.Contains(p.Detail, "agent is required") {
		t.Errorf("without an agent: %q", p.Detail)
	}
	// Reading the policy records nothing.
	before.unchanged(t, ts)
}

func TestTokens(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	before := headSeq(t, ts)
	dave, err := ts.Admin.CreateToken(ctx, airlock.RoleReviewer, "dave", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(dave.Secret, airlock.TokenPrefix) || dave.Token.ID == "" || dave.Token.CreatedBy != "root" {
		t.Errorf("created %+v", dave)
	}
	bot, err := ts.Admin.CreateToken(ctx, airlock.RoleAgent, "", "agent-3", 0)
	if err != nil {
		t.Fatal(err)
	}
	if bot.Token.Name != "agent-3" || bot.Token.Agent != "agent-3" {
		t.Errorf("agent token %+v, want named after its agent", bot.Token)
	}
	temp, err := ts.Admin.CreateToken(ctx, airlock.RoleReviewer, "temp", "", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Until(temp.Token.Expires); d < 59*time.Minute || d > 61*time.Minute {
		t.Errorf("expires %v, want in an hour", temp.Token.Expires)
	}

	for _, c := range []struct {
		secret string
		want   airlock.Token
	}{
		{dave.Secret, dave.Token}, {bot.Secret, bot.Token}, {temp.Secret, temp.Token},
	} {
		who, err := airlockClient(ts, c.secret).Whoami(ctx)
		if err != nil || who.ID != c.want.ID || who.Role != c.want.Role || who.Name != c.want.Name || who.Agent != c.want.Agent {
			t.Errorf("whoami: %+v %v, want %+v", who, err, c.want)
		}
	}

	// Listed, never with a secret.
	resp := ts.do(t, "GET", "/v1/tokens", ts.Admin.Token, "", nil)
	var list airlock.TokenList
	resp.decode(t, &list)
	var ids []string
	for _, tok := range list.Tokens {
		ids = append(ids, tok.ID)
	}
	for _, id := range []string{dave.Token.ID, bot.Token.ID, temp.Token.ID, "agent:agent-1", "reviewer:bob"} {
		if !slices.Contains(ids, id) {
			t.Errorf("token %s not listed in %v", id, ids)
		}
	}
	for _, s := range []string{dave.Secret, bot.Secret, temp.Secret, ts.AgentSecret} {
		if strings.Contains(string(resp.Body), s) {
			t.Error("the token list shows a secret")
		}
	}

	// Revoked: refused at once.
	if _, err := airlockClient(ts, dave.Secret).Whoami(ctx); err != nil {
		t.Fatal(err) // and now cached
	}
	rev, err := ts.Admin.RevokeToken(ctx, dave.Token.ID)
	if err != nil || rev.Revoked.IsZero() || rev.RevokedBy != "root" {
		t.Fatalf("revoke: %+v %v", rev, err)
	}
	_, err = airlockClient(ts, dave.Secret).Whoami(ctx)
	wantCode(t, err, "unauthenticated")
	_, err = ts.Admin.RevokeToken(ctx, dave.Token.ID)
	wantCode(t, err, airlock.ECONFLICT)
	// Others still work.
	if _, err := airlockClient(ts, bot.Secret).Whoami(ctx); err != nil {
		t.Errorf("another token after a revocation: %v", err)
	}

	var kinds []string
	for _, e := range eventsAfter(t, ts, before) {
		kinds = append(kinds, e.Kind)
		for _, s := range []string{dave.Secret, bot.Secret, temp.Secret} {
			if strings.Contains(string(e.Payload), s) {
				t.Errorf("event %d keeps a secret", e.Seq)
			}
		}
	}
	for _, k := range []string{airlock.EventTokenCreated, airlock.EventTokenRevoked, airlock.EventAccessRefused} {
		if !slices.Contains(kinds, k) {
			t.Errorf("events %v, want %s", kinds, k)
		}
	}
}

func TestWhoami(t *testing.T) {
	ts := newTestServer(t)
	for _, c := range []struct {
		c                *client.Client
		role             airlock.Role
		name, agent, sub string
	}{
		{ts.Agent, airlock.RoleAgent, "agent-1", "agent-1", "agent:agent-1"},
		{ts.Bob, airlock.RoleReviewer, "bob", "", "reviewer:bob"},
		{ts.Admin, airlock.RoleAdmin, "root", "", "admin:root"},
	} {
		got, err := c.c.Whoami(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if got.Role != c.role || got.Name != c.name || got.Agent != c.agent || got.Subject() != c.sub {
			t.Errorf("whoami %+v, want %s %s %s", got, c.role, c.name, c.agent)
		}
	}
	resp := ts.do(t, "GET", "/v1/whoami", ts.AgentSecret, "", nil)
	if got := resp.Header.Get("Cache-Control"); got != "no-store" {
		t.Errorf("Cache-Control %q, want no-store", got)
	}
}

func TestHealthAndReadiness(t *testing.T) {
	ts := newTestServer(t)
	for _, path := range []string{"/healthz", "/readyz"} {
		if r := ts.do(t, "GET", path, "", "", nil); r.Status != http.StatusOK {
			t.Errorf("%s: %d %s, want 200", path, r.Status, r.Body)
		}
	}
	ts.Drain()
	if r := ts.do(t, "GET", "/readyz", "", "", nil); r.Status != http.StatusServiceUnavailable {
		t.Errorf("readyz after Drain: %d %s, want 503", r.Status, r.Body)
	}
	if r := ts.do(t, "GET", "/healthz", "", "", nil); r.Status != http.StatusOK {
		t.Errorf("healthz after Drain: %d, want 200 (alive, not ready)", r.Status)
	}
}

// unwritable is a store whose writes fail, as on a full disk.
type unwritable struct{ airlock.Store }

func (unwritable) Ready(context.Context) error {
	return airlock.Errorf(airlock.EUNAVAILABLE, "sqlite: write: database or disk is full")
}

// A store that cannot write is not ready, and /readyz says what fails.
func TestReadinessNeedsWrites(t *testing.T) {
	_, _, db := startServer(t)
	s := &airlockhttp.Server{Enforcer: &gate.Enforcer{Gate: airlocktest.NewGate(t), Store: unwritable{db}}}
	hs := httptest.NewServer(s.Handler())
	defer hs.Close()
	resp, err := http.Get(hs.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "database or disk is full") {
		t.Fatalf("readyz of a store that cannot write: %d %q, want 503 saying what fails", resp.StatusCode, body)
	}
}

func TestMetrics(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	for _, tool := range []string{"read_file", "read_file", "write_file", "deploy", "propose", "shadow_tool", "delete_file", "wire_money"} {
		if _, err := ts.Agent.CheckWait(ctx, airlocktest.Action(tool, tool), 0); err != nil {
			t.Fatal(err)
		}
	}
	ts.do(t, "GET", "/v1/whoami", "", "", nil) // refused
	text := ts.metrics(t)
	for series, want := range map[string]float64{
		`airlock_decisions_total{outcome="auto",result="allowed"}`:                2,
		`airlock_decisions_total{outcome="notify",result="allowed"}`:              1,
		`airlock_decisions_total{outcome="ask",result="pending"}`:                 1,
		`airlock_decisions_total{outcome="suggest",result="AIRLOCK-SUGGESTED"}`:   1,
		`airlock_decisions_total{outcome="shadow",result="AIRLOCK-SHADOW"}`:       1,
		`airlock_decisions_total{outcome="deny",result="AIRLOCK-DENIED"}`:         1,
		`airlock_decisions_total{outcome="suggest",result="AIRLOCK-NEEDS-HUMAN"}`: 1,
		`airlock_approvals_pending`:                                               3,
		`airlock_access_refused_total{code="unauthenticated"}`:                    1,
		`airlock_http_requests_total{route="POST /v1/check",status="200"}`:        8,
		`airlock_event_streams`: 0,
	} {
		got, ok := metric(text, series)
		if !ok {
			t.Errorf("no series %s", series)
		} else if got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
}

// routesIn reads the /v1 routes build() registers, from server.go's source.
func routesIn(t *testing.T) []string {
	t.Helper()
	src, err := os.ReadFile("server.go")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile(`register\(api, s, "([A-Z]+ /v1/[^"]*)"`).FindAllStringSubmatch(string(src), -1) {
		out = append(out, m[1])
	}
	if strings.Contains(string(src), "registerEventStream(api, s)") {
		out = append(out, "GET /v1/events/stream")
	}
	return out
}

func TestOpenAPI(t *testing.T) {
	ts := newTestServer(t)
	// Every /v1 route, as registered in server.go's build().
	routes := []string{
		"POST /v1/check",
		"GET /v1/check/{id}",
		"POST /v1/executions",
		"GET /v1/approvals",
		"GET /v1/approvals/{id}",
		"POST /v1/approvals/{id}/resolution",
		"POST /v1/approvals/{id}/cancel",
		"GET /v1/approvals/{id}/wait",
		"GET /v1/events",
		"GET /v1/events/stream",
		"GET /v1/audit/verify",
		"GET /v1/audit/checkpoint",
		"POST /v1/audit/checkpoint",
		"GET /v1/trust",
		"GET /v1/policy",
		"GET /v1/policy/effective",
		"POST /v1/policy/explain",
		"POST /v1/tokens",
		"GET /v1/tokens",
		"DELETE /v1/tokens/{id}",
		"GET /v1/whoami",
	}
	registered := routesIn(t)
	for _, r := range routes {
		if !slices.Contains(registered, r) {
			t.Errorf("route %s is not registered in server.go (or this test cannot read it)", r)
		}
	}
	for _, r := range registered {
		if !slices.Contains(routes, r) {
			routes = append(routes, r) // a new route: it must be documented too
		}
	}

	resp := ts.do(t, "GET", "/openapi.json", "", "", nil) // no token needed
	if resp.Status != http.StatusOK {
		t.Fatalf("GET /openapi.json: %d", resp.Status)
	}
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
		Comps   struct {
			Schemas map[string]struct {
				Properties map[string]json.RawMessage `json:"properties"`
				Required   []string                   `json:"required"`
			} `json:"schemas"`
			Security map[string]json.RawMessage `json:"securitySchemes"`
		} `json:"components"`
	}
	if err := json.Unmarshal(resp.Body, &doc); err != nil {
		t.Fatalf("openapi.json is not JSON: %v", err)
	}
	if got, want := doc.OpenAPI, "3.1.0"; got != want {
		t.Errorf("openapi %q, want %q", got, want)
	}
	for _, r := range routes {
		method, path, _ := strings.Cut(r, " ")
		op, ok := doc.Paths[path][strings.ToLower(method)]
		if !ok {
			t.Errorf("%s is not documented", r)
			continue
		}
		var o struct {
			OperationID string                                `json:"operationId"`
			Security    []map[string][]string                 `json:"security"`
			Responses   map[string]map[string]json.RawMessage `json:"responses"`
		}
		if err := json.Unmarshal(op, &o); err != nil {
			t.Fatal(err)
		}
		if o.OperationID == "" || len(o.Security) == 0 {
			t.Errorf("%s: operationId %q security %v", r, o.OperationID, o.Security)
		}
		if r == "GET /v1/events/stream" {
			continue
		}
		for _, status := range []string{"400", "401", "403"} {
			content := string(o.Responses[status]["content"])
			if !strings.Contains(content, "application/problem+json") || !strings.Contains(content, "#/components/schemas/Problem") {
				t.Errorf("%s: response %s is not documented as a Problem: %s", r, status, content)
			}
		}
	}
	for path, ops := range doc.Paths {
		for method := range ops {
			if !slices.Contains(routes, strings.ToUpper(method)+" "+path) {
				t.Errorf("documented %s %s is not a known route", strings.ToUpper(method), path)
			}
		}
	}
	p, ok := doc.Comps.Schemas["Problem"]
	if !ok {
		t.Fatal("no Problem schema")
	}
	if _, ok := p.Properties["code"]; !ok || !slices.Contains(p.Required, "code") {
		t.Errorf("the Problem schema does not require code: %+v", p)
	}
	for _, f := range []string{"title", "status", "detail", "errors"} {
		if _, ok := p.Properties[f]; !ok {
			t.Errorf("the Problem schema has no %s", f)
		}
	}
	if _, ok := doc.Comps.Security["bearer"]; !ok {
		t.Error("no bearer security scheme")
	}
}

func TestUnknownRoute(t *testing.T) {
	ts := newTestServer(t)
	for _, c := range []struct {
		method, path, secret string
		status               int
		code                 string
	}{
		{"GET", "/nope", "", 404, airlock.ENOTFOUND},
		{"POST", "/healthz", "", 404, airlock.ENOTFOUND},
		{"GET", "/v2/check", ts.AgentSecret, 404, airlock.ENOTFOUND},
		{"GET", "/v1/nope", ts.AgentSecret, 404, airlock.ENOTFOUND},
		{"GET", "/v1/approvals/x/y/z", ts.BobSecret, 404, airlock.ENOTFOUND},
		{"PUT", "/v1/check", ts.AgentSecret, 405, airlock.EINVALID},
	} {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			before := takeSnapshot(t, ts)
			defer before.unchanged(t, ts)
			r := ts.do(t, c.method, c.path, c.secret, "", nil)
			p := r.problem(t, c.status, c.code)
			if !strings.Contains(p.Detail, c.path) && c.status == 404 {
				t.Errorf("the problem does not name the path: %q", p.Detail)
			}
		})
	}
	// Under /v1, a caller without a token learns nothing of the routes.
	r := ts.do(t, "GET", "/v1/nope", "", "", nil)
	r.problem(t, http.StatusUnauthorized, "unauthenticated")
}

// longPoll starts the agent's check of a with a long poll of wait, and
// returns its answer's channel once its request is queued, with the
// request.
func (ts *testServer) longPoll(t *testing.T, a airlock.Action, wait time.Duration) (<-chan checkResult, airlock.Approval) {
	t.Helper()
	done := make(chan checkResult, 1)
	go func() {
		enf, err := ts.Agent.CheckWait(t.Context(), a, wait)
		done <- checkResult{enf, err}
	}()
	var ap airlock.Approval
	waitFor(t, "the request to be queued", func() bool {
		p := pendingFor(t, ts, a.Tool)
		if len(p) == 1 {
			ap = p[0]
		}
		return len(p) == 1
	})
	return done, ap
}

// waitOnce is one long poll of GET /v1/approvals/{id}/wait, which
// client.WaitApproval repeats until the request is settled.
func waitOnce(ctx context.Context, c *client.Client, id string, timeout time.Duration) (airlock.Approval, error) {
	var ap airlock.Approval
	err := c.Do(ctx, "GET", "/v1/approvals/"+url.PathEscape(id)+"/wait", url.Values{"timeout": {timeout.String()}}, nil, &ap)
	return ap, err
}

// TestGrantProposals: shapes approved often enough by enough people are
// proposed over the API with their evidence; a reviewer who may approve
// such requests ratifies one into a grant, after which it is proposed no
// more; one who may not is refused; a proposal that does not exist is
// not found.
func TestGrantProposals(t *testing.T) {
	ts := newTestServer(t)
	ts.Server.ProposalRules = gate.ProposalRules{MinApprovals: 3, MinReviewers: 2, MinMedianWait: time.Nanosecond}
	// Each request is read for a minute before it is approved: an
	// approval faster than a request can be read is no evidence.
	var read atomic.Int64
	ts.DB.Clock = func() time.Time { return time.Now().Add(time.Duration(read.Load())) }
	ctx := t.Context()
	root := adminClient(t, ts, "dana")
	for i, r := range []*client.Client{ts.Admin, root, ts.Admin} {
		enf, err := ts.Agent.CheckWait(ctx, airlock.Action{Agent: "agent-1", Tool: "Bash", Cwd: "/w",
			Args: airlock.MustArgs(map[string]any{"command": fmt.Sprintf("npm test --shard=%d", i)})}, 0)
		if err != nil || !enf.Pending {
			t.Fatalf("check: %+v %v", enf, err)
		}
		read.Add(int64(time.Minute))
		if _, err := r.Resolve(ctx, enf.Approval.ID, airlock.StatusApproved, enf.Decision.ActionHash, "", ""); err != nil {
			t.Fatal(err)
		}
	}
	ps, err := ts.Bob.Proposals(ctx, "agent-1")
	if err != nil || len(ps) != 1 {
		t.Fatalf("proposals: %+v, %v", ps, err)
	}
	p := ps[0]
	if p.Grant.Pattern.String() != "`npm test …`" || len(p.Evidence) != 3 || len(p.Reviewers) != 2 {
		t.Fatalf("the proposal: %+v", p)
	}
	if _, err := ts.Bob.Ratify(ctx, "agent-1", "Bash", p.Grant.Pattern, 0, ""); airlock.ErrorCode(err) != airlock.EUNAUTHORIZED {
		t.Errorf("bob, no reviewer of such requests, ratifies: %v, want EUNAUTHORIZED", err)
	}
	other := airlock.GrantPattern{Kind: airlock.PatternCommand, Command: []string{"npm"}}
	if _, err := root.Ratify(ctx, "agent-1", "Bash", other, 0, ""); airlock.ErrorCode(err) != airlock.ENOTFOUND {
		t.Errorf("ratifying a shape not proposed: %v, want ENOTFOUND", err)
	}
	// Dismissed, it is not proposed; one more approval of its shape brings
	// it back, with the new evidence.
	if _, err := ts.Bob.Dismiss(ctx, "agent-1", "Bash", p.Grant.Pattern, "not yet"); airlock.ErrorCode(err) != airlock.EUNAUTHORIZED {
		t.Errorf("bob dismissing requests he may not approve: %v, want EUNAUTHORIZED", err)
	}
	d, err := root.Dismiss(ctx, "agent-1", "Bash", p.Grant.Pattern, "not yet")
	if err != nil || d.By != "dana" || len(d.Evidence) != 3 {
		t.Fatalf("dismiss: %+v, %v", d, err)
	}
	if ps, err := ts.Bob.Proposals(ctx, ""); err != nil || len(ps) != 0 {
		t.Fatalf("after dismissing: %+v, %v; want none", ps, err)
	}
	if evs, err := ts.Admin.Events(ctx, airlock.EventFilter{Kind: airlock.EventProposalDismissed}); err != nil || len(evs.Events) != 1 {
		t.Errorf("dismissal events %+v, %v; want one", evs, err)
	}
	enf, err := ts.Agent.CheckWait(ctx, airlock.Action{Agent: "agent-1", Tool: "Bash", Cwd: "/w",
		Args: airlock.MustArgs(map[string]any{"command": "npm test --shard=9"})}, 0)
	if err != nil || !enf.Pending {
		t.Fatalf("check: %+v %v", enf, err)
	}
	read.Add(int64(time.Minute))
	if _, err := ts.Admin.Resolve(ctx, enf.Approval.ID, airlock.StatusApproved, enf.Decision.ActionHash, "", ""); err != nil {
		t.Fatal(err)
	}
	if ps, err := ts.Bob.Proposals(ctx, ""); err != nil || len(ps) != 1 || len(ps[0].Evidence) != 4 {
		t.Fatalf("after a new approval: %+v, %v; want the proposal back with 4 approvals", ps, err)
	}
	g, err := root.Ratify(ctx, "agent-1", "Bash", p.Grant.Pattern, 36*time.Hour, "the tests")
	if err != nil || g.GrantedBy != "dana" || g.Approval != "" || !strings.HasPrefix(g.Reason, "ratified from 4 approvals by ") ||
		g.Pattern.String() != "`npm test …`" || (g.Expires.Sub(g.Created)-36*time.Hour).Abs() > time.Second {
		t.Fatalf("ratified: %+v, %v", g, err)
	}
	if ps, err := ts.Bob.Proposals(ctx, ""); err != nil || len(ps) != 0 {
		t.Errorf("after ratifying: %+v, %v; want none", ps, err)
	}
}

// adminClient creates an admin token named name and returns its client.
func adminClient(t *testing.T, ts *testServer, name string) *client.Client {
	t.Helper()
	secret, h := airlock.NewTokenSecret()
	if _, err := ts.DB.CreateToken(t.Context(), airlock.Token{ID: uuid.Must(uuid.NewV7()).String(), Role: airlock.RoleAdmin, Name: name}, h); err != nil {
		t.Fatal(err)
	}
	return client.New(ts.URL, secret)
}

// TestBacktestAPI: the recorded decisions replayed through uploaded policy
// files report what would change; a malformed file is refused with its
// location; an agent token may not back-test.
func TestBacktestAPI(t *testing.T) {
	ts := newTestServer(t)
	for _, a := range []airlock.Action{airlocktest.Action("deploy", "x"), airlocktest.Action("read_file", "y")} {
		ts.Agent.Check(t.Context(), a)
	}
	body := `{"files":[{"name":"next.yaml","policy":"name: next\nrules:\n  - {tool: read_file, outcome: deny}\n"}]}`
	r := ts.do(t, "POST", "/v1/policy/backtest", ts.BobSecret, "application/json", []byte(body))
	if r.Status != http.StatusOK {
		t.Fatalf("backtest: %d %s", r.Status, r.Body)
	}
	var rep gate.BacktestReport
	if err := json.Unmarshal(r.Body, &rep); err != nil || rep.Replayed != 2 || rep.NewlyDenied != 1 || len(rep.Changes) != 1 ||
		rep.Changes[0].From != airlock.Auto || rep.Changes[0].To != airlock.Deny {
		t.Fatalf("report %+v (%v)", rep, err)
	}
	bad := `{"files":[{"name":"bad.yaml","policy":"name: bad\nrules:\n  - {tool: x, outcome: sometimes}\n"}]}`
	if r := ts.do(t, "POST", "/v1/policy/backtest", ts.BobSecret, "application/json", []byte(bad)); r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "bad.yaml:3:") {
		t.Errorf("a malformed file: %d %s", r.Status, r.Body)
	}
	ts.do(t, "POST", "/v1/policy/backtest", ts.AgentSecret, "application/json", []byte(body)).problem(t, http.StatusForbidden, airlock.EUNAUTHORIZED)
}
