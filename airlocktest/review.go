package airlocktest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
)

// NewQuorum returns a pending ask request that needs the approvals of
// needed distinct people among reviewers rev, rev2, rev3 (and the owner
// and admins).
func NewQuorum(agent, command string, needed int) airlock.Approval {
	ap := NewApproval(agent, command, airlock.Ask, time.Hour)
	ap.Reviewers = []string{"rev", "rev2", "rev3"}
	ap.Review = airlock.Review{Approvals: needed}
	return ap
}

// ApproveAs returns a resolution by reviewer name approving ap as it now
// runs (its edit, when a reviewer edited it).
func ApproveAs(ap airlock.Approval, name string) airlock.Resolution {
	r := Approve(ap)
	r.Reviewer = airlock.Reviewer{Name: name}
	_, r.ActionHash = ap.Runs()
	return r
}

// testQuorum: a request that needs two people stays pending after one
// approval, recorded as its own event; the same person cannot count
// twice, nor can the requester or the agent; the second person settles
// it, and a late third is refused with who approved.
func testQuorum(t *testing.T, s airlock.Store, _ *Clock) {
	ap := mustRequest(t, s, NewQuorum("a", "deploy prod", 2), airlock.Record{})
	got, err := s.ResolveApproval(ctx(t), ApproveAs(ap, "rev"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != airlock.StatusPending || len(got.Votes) != 1 || got.Remaining() != 1 {
		t.Fatalf("after one of two approvals: status %s, votes %+v, remaining %d; want pending, one vote, one left",
			got.Status, got.Votes, got.Remaining())
	}
	if stored, err := s.Approval(ctx(t), ap.ID); err != nil || stored.Status != airlock.StatusPending || len(stored.Votes) != 1 ||
		stored.Votes[0].By != "rev" || stored.Review.Approvals != 2 {
		t.Fatalf("stored after one approval: %+v, %v", stored, err)
	}
	_, err = s.ResolveApproval(ctx(t), ApproveAs(ap, "rev"))
	wantCode(t, err, airlock.ECONFLICT)
	if !strings.Contains(airlock.ErrorMessage(err), "rev already approved") {
		t.Fatalf("a second approval by the same person: %v, want it named", err)
	}
	for _, who := range []string{"requester", "a"} {
		r := ApproveAs(ap, who)
		r.Reviewer.Admin = true // not even an admin counts as two people, or as the requester
		if _, err := s.ResolveApproval(ctx(t), r); airlock.ErrorCode(err) != airlock.EUNAUTHORIZED {
			t.Fatalf("approval by %s: %v, want unauthorized", who, err)
		}
	}
	voted := events(t, s, airlock.EventFilter{Kind: airlock.EventApprovalVoted, ApprovalID: ap.ID})
	if len(voted) != 1 {
		t.Fatalf("%d vote events, want 1", len(voted))
	}
	var v airlock.ApprovalVote
	if err := json.Unmarshal(voted[0].Payload, &v); err != nil || v.By != "rev" || v.Approvals != 1 || v.Needed != 2 {
		t.Fatalf("vote event payload %s (%v)", voted[0].Payload, err)
	}

	got, err = s.ResolveApproval(ctx(t), ApproveAs(ap, "rev2"))
	if err != nil || got.Status != airlock.StatusApproved || got.ResolvedBy != "rev2" {
		t.Fatalf("the second approval: %+v, %v; want approved by rev2", got, err)
	}
	resolved := events(t, s, airlock.EventFilter{Kind: airlock.EventApprovalResolved, ApprovalID: ap.ID})
	var ch airlock.ApprovalChange
	if len(resolved) != 1 || json.Unmarshal(resolved[0].Payload, &ch) != nil || fmt.Sprint(ch.Approvers) != "[rev rev2]" {
		t.Fatalf("resolution events %+v; want one naming both approvers", resolved)
	}
	_, err = s.ResolveApproval(ctx(t), ApproveAs(ap, "rev3"))
	wantCode(t, err, airlock.ECONFLICT)
	if msg := airlock.ErrorMessage(err); !strings.Contains(msg, "rev, rev2") {
		t.Fatalf("a late approval: %q, want who approved", msg)
	}
}

// testQuorumRejection: one rejection rejects a request that needs two
// approvals; a review that needs two rejections keeps it pending after
// one.
func testQuorumRejection(t *testing.T, s airlock.Store, _ *Clock) {
	ap := mustRequest(t, s, NewQuorum("a", "deploy one", 2), airlock.Record{})
	if _, err := s.ResolveApproval(ctx(t), ApproveAs(ap, "rev")); err != nil {
		t.Fatal(err)
	}
	r := ApproveAs(ap, "rev2")
	r.Status = airlock.StatusRejected
	got, err := s.ResolveApproval(ctx(t), r)
	if err != nil || got.Status != airlock.StatusRejected {
		t.Fatalf("one rejection after one approval: %+v, %v; want rejected", got.Status, err)
	}

	two := NewQuorum("a", "deploy two", 2)
	two.Review.Rejections = 2
	two = mustRequest(t, s, two, airlock.Record{})
	r = ApproveAs(two, "rev")
	r.Status = airlock.StatusRejected
	if got, err = s.ResolveApproval(ctx(t), r); err != nil || got.Status != airlock.StatusPending {
		t.Fatalf("one of two rejections: %s, %v; want pending", got.Status, err)
	}
	// The person who rejected cannot approve it now.
	if _, err := s.ResolveApproval(ctx(t), ApproveAs(two, "rev")); airlock.ErrorCode(err) != airlock.ECONFLICT {
		t.Fatalf("approval after one's own rejection: %v, want conflict", err)
	}
	r.Reviewer.Name = "rev3"
	if got, err = s.ResolveApproval(ctx(t), r); err != nil || got.Status != airlock.StatusRejected {
		t.Fatalf("the second rejection: %s, %v; want rejected", got.Status, err)
	}
}

// testQuorumRace: 50 distinct reviewers race to approve a request that
// needs 3; exactly three approvals count, one resolution is audited.
func testQuorumRace(t *testing.T, s airlock.Store, _ *Clock) {
	for i := range 5 {
		ap := mustRequest(t, s, NewQuorum("a", fmt.Sprint("quorum race ", i), 3), airlock.Record{})
		RaceQuorum(t, []airlock.Store{s}, ap, 50)
	}
}

// RaceQuorum has n distinct reviewers (admins), spread over stores (the
// replicas of one database), race to approve ap, which needs
// ap.Review.Approvals people: exactly that many succeed, the rest get
// ECONFLICT, and the request has exactly one resolution and one vote
// event for each approval before the last.
func RaceQuorum(t *testing.T, stores []airlock.Store, ap airlock.Approval, n int) {
	t.Helper()
	var ok atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			r := Approve(ap)
			r.Reviewer = airlock.Reviewer{Name: fmt.Sprint("racer-", i), Admin: true}
			<-start
			_, err := stores[i%len(stores)].ResolveApproval(context.Background(), r)
			switch airlock.ErrorCode(err) {
			case "":
				ok.Add(1)
			case airlock.ECONFLICT:
			default:
				t.Errorf("racing reviewer %d: %v", i, err)
			}
		})
	}
	close(start)
	wg.Wait()
	s := stores[0]
	need := ap.Needed()
	if int(ok.Load()) != need {
		t.Fatalf("%d approvals succeeded, want exactly %d", ok.Load(), need)
	}
	got, err := s.Approval(ctx(t), ap.ID)
	if err != nil || got.Status != airlock.StatusApproved || len(got.Votes) != need {
		t.Fatalf("after the race: %s with %d votes (%v), want approved with %d", got.Status, len(got.Votes), err, need)
	}
	if evs := events(t, s, airlock.EventFilter{ApprovalID: ap.ID, Kind: airlock.EventApprovalResolved}); len(evs) != 1 {
		t.Fatalf("%d resolution events, want 1", len(evs))
	}
	if evs := events(t, s, airlock.EventFilter{ApprovalID: ap.ID, Kind: airlock.EventApprovalVoted}); len(evs) != need-1 {
		t.Fatalf("%d vote events, want %d", len(evs), need-1)
	}
}

// testEscalation: nobody answers, and after each step's delay the
// request's reviewers widen, audited, the new ones told; the deadline
// still refuses in the end.
func testEscalation(t *testing.T, s airlock.Store, clock *Clock) {
	ap := NewApproval("a", "restart db", airlock.Ask, 30*time.Minute)
	ap.Review.Escalate = []airlock.Escalation{
		{After: airlock.Duration(5 * time.Minute), To: []string{"oncall"}},
		{After: airlock.Duration(15 * time.Minute), To: []string{"group:sre", "rev"}},
	}
	ap = mustRequest(t, s, ap, airlock.Record{})
	if got, err := s.EscalateDue(ctx(t), 10); err != nil || len(got) != 0 {
		t.Fatalf("escalations due at once: %d, %v; want none", len(got), err)
	}
	if _, err := s.ResolveApproval(ctx(t), ApproveAs(ap, "oncall")); airlock.ErrorCode(err) != airlock.EUNAUTHORIZED {
		t.Fatalf("oncall before the escalation: %v, want unauthorized", err)
	}
	clock.Advance(5 * time.Minute)
	got, err := s.EscalateDue(ctx(t), 10)
	if err != nil || len(got) != 1 || got[0].Escalated != 1 || fmt.Sprint(got[0].Reviewers) != "[rev oncall]" {
		t.Fatalf("escalation after 5m: %+v, %v; want one step, oncall added", got, err)
	}
	if again, err := s.EscalateDue(ctx(t), 10); err != nil || len(again) != 0 {
		t.Fatalf("the same step twice: %d, %v", len(again), err)
	}
	evs := events(t, s, airlock.EventFilter{ApprovalID: ap.ID, Kind: airlock.EventApprovalEscalated})
	var e airlock.ApprovalEscalation
	if len(evs) != 1 || json.Unmarshal(evs[0].Payload, &e) != nil || e.Step != 1 || e.Of != 2 || fmt.Sprint(e.Added) != "[oncall]" {
		t.Fatalf("escalation events %+v", evs)
	}
	ns, err := s.Notifications(ctx(t), airlock.NotificationFilter{})
	if err != nil {
		t.Fatal(err)
	}
	told := false
	for _, n := range ns {
		told = told || n.Kind == airlock.EventApprovalEscalated && n.ApprovalID == ap.ID && fmt.Sprint(n.Recipients) == "[oncall]"
	}
	if !told {
		t.Fatalf("no escalation notice for oncall among %+v", ns)
	}

	clock.Advance(10 * time.Minute)
	got, err = s.EscalateDue(ctx(t), 10)
	if err != nil || len(got) != 1 || got[0].Escalated != 2 || fmt.Sprint(got[0].Reviewers) != "[rev oncall group:sre]" {
		t.Fatalf("escalation after 15m: %+v, %v", got, err)
	}
	sre := ApproveAs(ap, "sam")
	sre.Reviewer.Groups = []string{"sre"}
	clock.Advance(15 * time.Minute) // the deadline: nobody answered
	if _, err := s.ResolveApproval(ctx(t), sre); airlock.ErrorCode(err) != airlock.ECONFLICT {
		t.Fatalf("approval after the deadline: %v, want conflict", err)
	}
	if got, err := s.EscalateDue(ctx(t), 10); err != nil || len(got) != 0 {
		t.Fatalf("escalations after the last: %d, %v", len(got), err)
	}
	if exp, err := s.ExpireDue(ctx(t), 10); err != nil || len(exp) != 1 || exp[0].Status != airlock.StatusExpired {
		t.Fatalf("expiry of an escalated request: %+v, %v", exp, err)
	}

	// A group named by an escalation lets its people approve.
	grp := NewApproval("a", "restart cache", airlock.Ask, 30*time.Minute)
	grp.Review.Escalate = []airlock.Escalation{{After: airlock.Duration(time.Minute), To: []string{"group:sre"}}}
	grp = mustRequest(t, s, grp, airlock.Record{})
	clock.Advance(time.Minute)
	if _, err := s.EscalateDue(ctx(t), 10); err != nil {
		t.Fatal(err)
	}
	sre = ApproveAs(grp, "sam")
	sre.Reviewer.Groups = []string{"dev", "sre"}
	if got, err := s.ResolveApproval(ctx(t), sre); err != nil || got.Status != airlock.StatusApproved {
		t.Fatalf("approval by a member of the escalated group: %s, %v", got.Status, err)
	}
}

// EditOf returns a reviewer's edit of ap's arguments to args, as the gate
// decided it (outcome and tier).
func EditOf(t testing.TB, ap airlock.Approval, args json.RawMessage, o airlock.Outcome, tier airlock.RiskTier) *airlock.Edit {
	t.Helper()
	e, err := airlock.NewEdit(&ap, args)
	if err != nil {
		t.Fatal(err)
	}
	e.Decision = airlock.EditDecision{Outcome: o, Tier: tier, Class: "process.exec", Rule: "test"}
	return e
}

// testEdit: a reviewer approves an edit; what runs is the edited action,
// collectable by the original's caller or by the edited action itself;
// the resolution records both hashes and the diff; an edit into what the
// policy refuses, of a proposal, or with a rejection is refused; the
// reviewers an edit's decision needs must approve it.
func testEdit(t *testing.T, s airlock.Store, _ *Clock) {
	ap := mustRequest(t, s, NewApproval("a", "rm -rf build", airlock.Ask, time.Hour), airlock.Record{})
	edited := airlock.MustArgs(map[string]any{"command": "rm -rf build/tmp"})

	r := Approve(ap)
	r.Edit = EditOf(t, ap, edited, airlock.Deny, airlock.TierDestructive)
	if _, err := s.ResolveApproval(ctx(t), r); airlock.ErrorCode(err) != airlock.EUNAUTHORIZED {
		t.Fatalf("an edit into a denied action: %v, want unauthorized", err)
	}
	r.Edit = EditOf(t, ap, edited, airlock.Ask, airlock.TierDestructive)
	r.Edit.Decision.Reviewers = []string{"lead"}
	if _, err := s.ResolveApproval(ctx(t), r); airlock.ErrorCode(err) != airlock.EUNAUTHORIZED {
		t.Fatalf("an edit whose decision needs other reviewers, by rev: %v, want unauthorized", err)
	}
	r.Edit.Decision.Reviewers = []string{"rev"}
	r.Status = airlock.StatusRejected
	if _, err := s.ResolveApproval(ctx(t), r); airlock.ErrorCode(err) != airlock.EINVALID {
		t.Fatalf("an edit with a rejection: %v, want invalid", err)
	}
	r.Status = airlock.StatusApproved
	got, err := s.ResolveApproval(ctx(t), r)
	if err != nil || got.Status != airlock.StatusApproved || got.Edit == nil || got.Edit.By != "rev" {
		t.Fatalf("an approved edit: %+v, %v", got, err)
	}
	run, h := got.Runs()
	if string(run.Args) != string(edited) || h != r.Edit.ActionHash || h == ap.ActionHash {
		t.Fatalf("what runs: %s (%s); want the edit", run.Args, h)
	}
	resolved := events(t, s, airlock.EventFilter{Kind: airlock.EventApprovalResolved, ApprovalID: ap.ID})
	var ch airlock.ApprovalChange
	if len(resolved) != 1 || json.Unmarshal(resolved[0].Payload, &ch) != nil || ch.Edit == nil ||
		ch.Edit.From != ap.ActionHash || ch.Edit.To != h || !strings.Contains(string(ch.Edit.Diff), `"replace"`) {
		t.Fatalf("the resolution event %s: want both hashes and the diff", resolved[0].Payload)
	}
	for _, by := range []airlock.Hash{ap.ActionHash, h} {
		c, err := s.CollectableApproval(ctx(t), "a", by)
		if err != nil || c.ID != ap.ID {
			t.Fatalf("collectable by sha256:%s: %v, %v", by, c.ID, err)
		}
	}
	if c, err := s.CollectApproval(ctx(t), ap.ID, airlock.Record{}); err != nil || c.GrantUsed.IsZero() {
		t.Fatalf("collect the edited approval: %v", err)
	}
	if _, err := s.CollectableApproval(ctx(t), "a", h); airlock.ErrorCode(err) != airlock.ENOTFOUND {
		t.Fatalf("a collected edit is still collectable: %v", err)
	}

	// On a request that needs two, an edit resets the approvals: they
	// were for another action. Approving the original now is refused.
	q := mustRequest(t, s, NewQuorum("a", "deploy canary", 2), airlock.Record{})
	if _, err := s.ResolveApproval(ctx(t), ApproveAs(q, "rev")); err != nil {
		t.Fatal(err)
	}
	r = ApproveAs(q, "rev2")
	r.Edit = EditOf(t, q, airlock.MustArgs(map[string]any{"command": "deploy canary --dry-run"}), airlock.Ask, airlock.TierWrite)
	r.Edit.Decision.Reviewers = q.Reviewers
	got, err = s.ResolveApproval(ctx(t), r)
	if err != nil || got.Status != airlock.StatusPending || fmt.Sprint(got.Approvers()) != "[rev2]" {
		t.Fatalf("an edit after one approval: %s approvers %v (%v); want pending with only the editor's", got.Status, got.Approvers(), err)
	}
	if _, err := s.ResolveApproval(ctx(t), ApproveAs(q, "rev3")); airlock.ErrorCode(err) != airlock.CodeHashMismatch {
		t.Fatalf("approval of the original after an edit: %v, want hash mismatch", err)
	}
	if got, err = s.ResolveApproval(ctx(t), ApproveAs(got, "rev")); err != nil || got.Status != airlock.StatusApproved {
		t.Fatalf("rev approves the edit: %s, %v", got.Status, err)
	}

	// An edit whose decision only "lead" may approve: the original's
	// reviewers may no longer approve it, but may still reject it.
	q2 := mustRequest(t, s, NewQuorum("a", "deploy edge", 2), airlock.Record{})
	r = ApproveAs(q2, "owner")
	r.Edit = EditOf(t, q2, airlock.MustArgs(map[string]any{"command": "deploy edge --all"}), airlock.Ask, airlock.TierDestructive)
	r.Edit.Decision.Reviewers = []string{"lead"}
	if got, err = s.ResolveApproval(ctx(t), r); err != nil || got.Status != airlock.StatusPending {
		t.Fatalf("the owner edits into what lead approves: %s, %v", got.Status, err)
	}
	if _, err := s.ResolveApproval(ctx(t), ApproveAs(got, "rev")); airlock.ErrorCode(err) != airlock.EUNAUTHORIZED {
		t.Fatalf("rev approves what only lead may: %v, want unauthorized", err)
	}
	no := ApproveAs(got, "rev")
	no.Status = airlock.StatusRejected
	if got, err = s.ResolveApproval(ctx(t), no); err != nil || got.Status != airlock.StatusRejected {
		t.Fatalf("rev rejects the edited request: %s, %v", got.Status, err)
	}

	// A proposal is not edited: its agent is not waiting to receive it.
	p := mustRequest(t, s, NewApproval("a", "npm publish", airlock.Suggest, time.Hour), airlock.Record{})
	r = Approve(p)
	r.Edit = EditOf(t, p, airlock.MustArgs(map[string]any{"command": "npm pack"}), airlock.Ask, airlock.TierWrite)
	if _, err := s.ResolveApproval(ctx(t), r); airlock.ErrorCode(err) != airlock.EINVALID {
		t.Fatalf("an edit of a proposal: %v, want invalid", err)
	}
}
