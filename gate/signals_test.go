package gate_test

import (
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
	"github.com/airlock-dev/airlock/gate"
)

// TestReviewSignals: approvals given faster than the request could be
// read are counted against the reviewer and the agent, and flagged; a
// long run of approvals without a rejection is flagged; a rejection ends
// the run; the system's settlements are not anyone's.
func TestReviewSignals(t *testing.T) {
	clock := airlocktest.NewClock()
	_, db := newEnforcer(t)
	db.Clock = clock.Now // before the first write: the store reads it on each
	ctx := t.Context()
	settle := func(agent, command, by string, after time.Duration, status airlock.ApprovalStatus) {
		t.Helper()
		ap, _, err := db.RequestApproval(ctx, airlocktest.NewApproval(agent, command, airlock.Ask, time.Hour), airlock.Record{})
		if err != nil {
			t.Fatal(err)
		}
		clock.Advance(after)
		r := airlocktest.Approve(ap)
		r.Status, r.Reviewer = status, airlock.Reviewer{Name: by, Admin: true}
		if _, err := db.ResolveApproval(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	since := clock.Now()
	clock.Advance(time.Second) // CreatedAfter is strict
	for i := range airlock.LongStreak {
		settle("busy", "make "+string(rune('a'+i%26))+string(rune('a'+i/26)), "stamp", time.Second, airlock.StatusApproved) // 1s: too fast
	}
	settle("busy", "make x", "careful", time.Minute, airlock.StatusApproved)
	settle("busy", "make y", "careful", time.Minute, airlock.StatusRejected)
	settle("busy", "make z", "careful", time.Minute, airlock.StatusApproved)

	sig, err := gate.ReviewSignals(ctx, db, since, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(sig.Reviewers) != 2 {
		t.Fatalf("reviewers %+v", sig.Reviewers)
	}
	stamp, careful := sig.Reviewers[0], sig.Reviewers[1]
	if stamp.Name != "stamp" || stamp.Fast != airlock.LongStreak || stamp.Longest != airlock.LongStreak || len(stamp.Flags) != 2 {
		t.Errorf("the rubber stamp: %+v", stamp)
	}
	if careful.Name != "careful" || careful.Fast != 0 || careful.Approved != 2 || careful.Rejected != 1 || careful.Streak != 1 ||
		careful.Longest != 1 || len(careful.Flags) != 0 {
		t.Errorf("the careful reviewer: %+v", careful)
	}
	if len(sig.Agents) != 1 || sig.Agents[0].Name != "busy" || sig.Agents[0].Fast != airlock.LongStreak {
		t.Errorf("agents %+v", sig.Agents)
	}
}
