package airlocktest

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
)

// testCollect: an approved ask request releases one check, once, before
// its deadline, even when collectors race.
func testCollect(t *testing.T, s airlock.Store, clock *Clock) {
	ap := mustRequest(t, s, NewApproval("a", "deploy", airlock.Ask, 10*time.Minute), airlock.Record{})
	if _, err := s.CollectApproval(ctx(t), ap.ID, airlock.Record{}); airlock.ErrorCode(err) != airlock.ECONFLICT {
		t.Fatalf("collect a pending request: %v, want conflict", err)
	}
	if _, err := s.CollectApproval(ctx(t), "0190c0de-0000-7000-8000-000000000000", airlock.Record{}); airlock.ErrorCode(err) != airlock.ENOTFOUND {
		t.Fatalf("collect an unknown request: %v, want not found", err)
	}
	if _, err := s.ResolveApproval(ctx(t), Approve(ap)); err != nil {
		t.Fatal(err)
	}
	head, err := s.Head(ctx(t))
	if err != nil {
		t.Fatal(err)
	}

	var won atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			got, err := s.CollectApproval(ctx(t), ap.ID, airlock.Record{})
			switch airlock.ErrorCode(err) {
			case "":
				won.Add(1)
				if got.GrantUsed.IsZero() {
					t.Errorf("a collected request has no use time: %+v", got)
				}
			case airlock.CodeUsed:
			default:
				t.Errorf("racing collector: %v, want success or AIRLOCK-USED", err)
			}
		})
	}
	wg.Wait()
	if won.Load() != 1 {
		t.Fatalf("%d collectors won, want exactly 1", won.Load())
	}
	evs, err := s.Events(ctx(t), airlock.EventFilter{AfterSeq: head})
	if err != nil || len(evs) != 1 || evs[0].Kind != airlock.EventGrantUsed || evs[0].ApprovalID != ap.ID {
		t.Fatalf("the collection's audit events: %+v, %v; want one grant.used", evs, err)
	}

	// Past the deadline, an approval can no longer be collected.
	late := mustRequest(t, s, NewApproval("a", "late", airlock.Ask, time.Minute), airlock.Record{})
	if _, err := s.ResolveApproval(ctx(t), Approve(late)); err != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * time.Minute)
	if _, err := s.CollectApproval(ctx(t), late.ID, airlock.Record{}); airlock.ErrorCode(err) != airlock.CodeTimeout {
		t.Fatalf("collect after the deadline: %v, want AIRLOCK-TIMEOUT", err)
	}

	// A proposal is used by retrying the action, not collected.
	prop := mustRequest(t, s, NewApproval("a", "propose", airlock.Suggest, time.Hour), airlock.Record{})
	if _, err := s.ResolveApproval(ctx(t), Approve(prop)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CollectApproval(ctx(t), prop.ID, airlock.Record{}); airlock.ErrorCode(err) != airlock.ECONFLICT {
		t.Fatalf("collect a proposal: %v, want conflict", err)
	}
}

// testCollectable: an identical check finds the approved ask request no
// check has collected, before its deadline, and nothing else.
func testCollectable(t *testing.T, s airlock.Store, clock *Clock) {
	ap := mustRequest(t, s, NewApproval("a", "deploy", airlock.Ask, 10*time.Minute), airlock.Record{})
	_, err := s.CollectableApproval(ctx(t), "a", ap.ActionHash)
	wantCode(t, err, airlock.ENOTFOUND) // pending: joined, not collected
	if _, err := s.ResolveApproval(ctx(t), Approve(ap)); err != nil {
		t.Fatal(err)
	}
	head, err := s.Head(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.CollectableApproval(ctx(t), "a", ap.ActionHash)
	if err != nil || got.ID != ap.ID || got.Status != airlock.StatusApproved {
		t.Fatalf("collectable approval: %+v, %v; want approved %s", got, err, ap.ID)
	}
	if after, _ := s.Head(ctx(t)); after != head {
		t.Fatalf("finding an approval to collect wrote %d events", after-head)
	}
	_, err = s.CollectableApproval(ctx(t), "b", ap.ActionHash)
	wantCode(t, err, airlock.ENOTFOUND) // another agent's
	if _, err := s.CollectApproval(ctx(t), ap.ID, airlock.Record{}); err != nil {
		t.Fatal(err)
	}
	_, err = s.CollectableApproval(ctx(t), "a", ap.ActionHash)
	wantCode(t, err, airlock.ENOTFOUND) // collected

	// Rejected, or approved but past its deadline: nothing to collect.
	no := mustRequest(t, s, NewApproval("a", "rejected", airlock.Ask, 10*time.Minute), airlock.Record{})
	r := Approve(no)
	r.Status = airlock.StatusRejected
	if _, err := s.ResolveApproval(ctx(t), r); err != nil {
		t.Fatal(err)
	}
	_, err = s.CollectableApproval(ctx(t), "a", no.ActionHash)
	wantCode(t, err, airlock.ENOTFOUND)
	late := mustRequest(t, s, NewApproval("a", "late", airlock.Ask, time.Minute), airlock.Record{})
	if _, err := s.ResolveApproval(ctx(t), Approve(late)); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute) // due now: still collectable
	if got, err := s.CollectableApproval(ctx(t), "a", late.ActionHash); err != nil || got.ID != late.ID {
		t.Fatalf("an approval due now: %+v, %v; want it collectable", got, err)
	}
	clock.Advance(time.Nanosecond)
	_, err = s.CollectableApproval(ctx(t), "a", late.ActionHash)
	wantCode(t, err, airlock.ENOTFOUND)

	// A proposal is a grant (UseGrant), not collected.
	prop := mustRequest(t, s, NewApproval("a", "propose", airlock.Suggest, time.Hour), airlock.Record{})
	if _, err := s.ResolveApproval(ctx(t), Approve(prop)); err != nil {
		t.Fatal(err)
	}
	_, err = s.CollectableApproval(ctx(t), "a", prop.ActionHash)
	wantCode(t, err, airlock.ENOTFOUND)
}
