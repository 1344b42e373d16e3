package airlocktest

import (
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
)

// testRunNow: a proposal approved with run now keeps the request, and its
// audit event says so; an ask cannot be approved with run now, nor can a
// rejection carry it — and a refused resolution changes nothing.
func testRunNow(t *testing.T, s airlock.Store, _ *Clock) {
	ask := mustRequest(t, s, NewApproval("a", "make test", airlock.Ask, time.Hour), airlock.Record{})
	r := Approve(ask)
	r.RunNow = true
	_, err := s.ResolveApproval(ctx(t), r)
	wantCode(t, err, airlock.EINVALID)
	prop := mustRequest(t, s, NewApproval("a", "make deploy", airlock.Suggest, time.Hour), airlock.Record{})
	r = airlock.Resolution{ApprovalID: prop.ID, Status: airlock.StatusRejected, ActionHash: prop.ActionHash,
		Reviewer: airlock.Reviewer{Name: "rev"}, Surface: airlock.SurfaceWeb, RunNow: true}
	_, err = s.ResolveApproval(ctx(t), r)
	wantCode(t, err, airlock.EINVALID)
	for _, id := range []string{ask.ID, prop.ID} {
		if got, err := s.Approval(ctx(t), id); err != nil || got.Status != airlock.StatusPending {
			t.Fatalf("after a refused resolution, %s is %s (%v)", id, got.Status, err)
		}
	}
	r = Approve(prop)
	r.RunNow = true
	got, err := s.ResolveApproval(ctx(t), r)
	if err != nil || !got.RunNow || got.Status != airlock.StatusApproved {
		t.Fatalf("approved with run now: %+v %v", got, err)
	}
	if got, err := s.Approval(ctx(t), prop.ID); err != nil || !got.RunNow {
		t.Fatalf("read back: run now %t (%v)", got.RunNow, err)
	}
	if got, err := s.Approval(ctx(t), ask.ID); err != nil || got.RunNow {
		t.Fatalf("the ask reads run now %t (%v)", got.RunNow, err)
	}
	evs := events(t, s, airlock.EventFilter{Kind: airlock.EventApprovalResolved, ApprovalID: prop.ID})
	if len(evs) != 1 || !strings.Contains(string(evs[0].Payload), `"run_now":true`) {
		t.Fatalf("the resolution's event: %v", evs)
	}
}
