package http_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
)

// A server that drains ends its long polls at once with the requests still
// pending, for the callers to resume elsewhere; it does not fail them.
func TestDrainEndsLongPollsPending(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	checked, ap := ts.longPoll(t, airlocktest.Action("deploy", "prod"), 10*time.Minute)
	// Two more waiters on the same request: a resume and a reviewer's wait.
	resumed := make(chan checkResult, 1)
	go func() {
		enf, err := ts.Agent.Resume(ctx, ap.ID, 10*time.Minute)
		resumed <- checkResult{enf, err}
	}()
	type waited struct {
		ap  airlock.Approval
		err error
	}
	waitedOn := make(chan waited, 1)
	go func() {
		got, err := waitOnce(ctx, ts.Bob, ap.ID, 10*time.Minute)
		waitedOn <- waited{got, err}
	}()
	// And an event stream.
	streamed := make(chan error, 1)
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		streamed <- ts.Bob.StreamEvents(sctx, 0, "", "", func(airlock.Event) error { return nil })
	}()
	waitStreams(t, ts, 1)

	start := time.Now()
	ts.Drain()

	for _, c := range []struct {
		name string
		ch   <-chan checkResult
	}{{"the check", checked}, {"the resume", resumed}} {
		r := within(t, c.ch, 10*time.Second, c.name+" to answer after Drain")
		if r.err != nil {
			t.Errorf("%s after Drain: %v, want an answer", c.name, r.err)
			continue
		}
		if !r.enf.Pending || r.enf.Allowed || r.enf.Code != "" || r.enf.Approval == nil || r.enf.Approval.ID != ap.ID {
			t.Errorf("%s after Drain: %+v, want pending on %s", c.name, r.enf, ap.ID)
		}
	}
	w := within(t, waitedOn, 10*time.Second, "the reviewer's wait to answer after Drain")
	if w.err != nil || w.ap.ID != ap.ID || w.ap.Status != airlock.StatusPending {
		t.Errorf("wait after Drain: %+v %v, want the request, pending", w.ap, w.err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the long polls took %s to end after Drain", took)
	}
	// The stream ends on the server's side; the client reconnects until
	// told to stop, so the server's count is what shows it.
	waitStreams(t, ts, 0)
	stop()
	if err := within(t, streamed, 10*time.Second, "the stream to stop"); !errors.Is(err, context.Canceled) {
		t.Errorf("stream: %v", err)
	}

	// The request itself is untouched: still pending, for a person.
	got, err := ts.DB.Approval(ctx, ap.ID)
	if err != nil || got.Status != airlock.StatusPending {
		t.Fatalf("request after Drain: %s %v, want pending", got.Status, err)
	}
	// New long polls on a draining server answer at once, pending too.
	enf, err := ts.Agent.CheckWait(ctx, airlocktest.Action("deploy", "staging"), 10*time.Minute)
	if err != nil || !enf.Pending {
		t.Errorf("check after Drain: %+v %v, want pending at once", enf, err)
	}
	// And a person can still decide; the agent collects it.
	if _, err := ts.Bob.Resolve(ctx, ap.ID, airlock.StatusApproved, ap.ActionHash, "", ""); err != nil {
		t.Fatal(err)
	}
	if enf, err := ts.Agent.Resume(ctx, ap.ID, 0); err != nil || !enf.Allowed {
		t.Errorf("resume after approval: %+v %v, want allowed", enf, err)
	}
}
