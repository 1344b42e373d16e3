package gate_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
	"github.com/airlock-dev/airlock/gate"
	"github.com/airlock-dev/airlock/sqlite"
)

// newEnforcer returns an enforcer over a fresh SQLite store whose clock is
// the test's (synctest's fake clock inside a bubble).
func newEnforcer(t *testing.T) (*gate.Enforcer, *sqlite.DB) {
	t.Helper()
	g := airlocktest.NewGate(t)
	db := sqlite.NewDB(filepath.Join(t.TempDir(), "airlock.db"))
	db.PollInterval = time.Hour // in-process wake-ups only: a poll would hide a missed one
	if err := db.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &gate.Enforcer{Gate: g, Store: db, GrantTTL: 30 * time.Minute}, db
}

// lastEvents returns "kind:outcome" of every event after seq.
func lastEvents(t *testing.T, db *sqlite.DB, after int64) []string {
	t.Helper()
	evs, err := db.Events(t.Context(), airlock.EventFilter{AfterSeq: after, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		out = append(out, e.Kind+":"+e.Outcome)
	}
	return out
}

func head(t *testing.T, db *sqlite.DB) int64 {
	t.Helper()
	return airlocktest.MustVerify(t, db).HeadSeq
}

func TestEnforceOutcomes(t *testing.T) {
	e, db := newEnforcer(t)
	for _, tt := range []struct {
		tool    string
		allowed bool
		code    string
		label   string
		events  []string
		queued  bool
	}{
		{"read_file", true, "", airlock.LabelAuto, []string{"decision:auto"}, false},
		{"write_file", true, "", airlock.LabelNotify, []string{"decision:notify"}, false},
		{"shadow_tool", false, airlock.CodeShadow, airlock.LabelShadow, []string{"decision:shadow", "proposal:shadow"}, false},
		{"delete_file", false, airlock.CodeDenied, airlock.LabelDenied, []string{"decision:deny"}, false},
		{"propose", false, airlock.CodeSuggested, airlock.LabelSuggest,
			[]string{"approval.requested:suggest", "decision:suggest", "proposal:suggest"}, true},
		{"wire_money", false, airlock.CodeNeedsHuman, airlock.LabelNeedsHuman,
			[]string{"approval.requested:suggest", "decision:suggest", "proposal:suggest"}, true},
	} {
		t.Run(tt.tool, func(t *testing.T) {
			before := head(t, db)
			enf := e.Enforce(t.Context(), airlocktest.Action(tt.tool, "x"))
			if enf.Allowed != tt.allowed || enf.Code != tt.code || enf.Label != tt.label {
				t.Fatalf("Enforce = allowed %v code %q label %q, want %v %q %q (%s)",
					enf.Allowed, enf.Code, enf.Label, tt.allowed, tt.code, tt.label, enf.Message)
			}
			if got := lastEvents(t, db, before); !slices.Equal(got, tt.events) {
				t.Errorf("events %v, want %v", got, tt.events)
			}
			if (enf.Approval != nil) != tt.queued {
				t.Fatalf("approval %v, want queued %v", enf.Approval, tt.queued)
			}
			if tt.queued {
				if !enf.Approval.IsGrant() || enf.Approval.Status != airlock.StatusPending {
					t.Errorf("queued request %+v, want a pending proposal", enf.Approval)
				}
				if !strings.Contains(enf.Message, enf.Approval.ID) {
					t.Errorf("message %q does not name the queued request", enf.Message)
				}
			}
		})
	}
	// The needs-human request is marked as such.
	page, err := db.FindApprovals(t.Context(), airlock.ApprovalFilter{Class: "unknown#needs-human"})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Approvals) != 1 || !page.Approvals[0].Detail.RequiresHuman || page.Approvals[0].Detail.AutonomyClass != "needs-human" ||
		page.Approvals[0].Detail.Code != airlock.CodeNeedsHuman {
		t.Fatalf("needs-human requests %+v", page.Approvals)
	}
	// notify queued a notice to the owner.
	ns, err := db.Notifications(t.Context(), airlock.NotificationFilter{Kind: airlock.EventDecision})
	if err != nil || len(ns) != 1 || !slices.Equal(ns[0].Recipients, []string{"alice"}) {
		t.Fatalf("notices %+v, %v; want one to alice", ns, err)
	}
	sums, err := db.TrustSummaries(t.Context(), airlock.TrustFilter{Agent: "agent-1"})
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, s := range sums {
		total += s.Total
	}
	if total != 6 {
		t.Fatalf("%d trust records, want one per enforced decision (6)", total)
	}
}

func TestEnforceInvalidAction(t *testing.T) {
	e, db := newEnforcer(t)
	a := airlocktest.Action("read_file", "x")
	a.Args = []byte(`{"path":"a","path":"b"}`)
	enf := e.Enforce(t.Context(), a)
	if enf.Allowed || enf.Code != airlock.CodeInvalid {
		t.Fatalf("duplicate keys: %+v", enf)
	}
	if got := lastEvents(t, db, 0); !slices.Equal(got, []string{"decision:deny"}) {
		t.Fatalf("events %v", got)
	}
}

func TestAskApproved(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, db := newEnforcer(t)
		done := make(chan airlock.Enforcement)
		go func() { done <- e.Enforce(context.Background(), airlocktest.Action("deploy", "prod")) }()
		ap := pendingOne(t, db)
		if ap.Outcome != airlock.Ask || ap.Timeout != 10*time.Minute || !slices.Contains(ap.Reviewers, "bob") || ap.Owner != "alice" {
			t.Fatalf("request %+v", ap)
		}
		time.Sleep(3 * time.Minute) // fake time: the reviewer takes three minutes
		if _, err := db.ResolveApproval(t.Context(), airlock.Resolution{ApprovalID: ap.ID, Status: airlock.StatusApproved,
			ActionHash: ap.ActionHash, Reviewer: airlock.Reviewer{Name: "bob"}, Surface: airlock.SurfaceCLI}); err != nil {
			t.Fatal(err)
		}
		enf := <-done
		if !enf.Allowed || enf.Label != airlock.LabelApprovalGranted || enf.Approval.ResolvedBy != "bob" {
			t.Fatalf("approved ask: %+v", enf)
		}
		wantTrust(t, db, airlock.TrustSuccess, 1)
		sums, _ := db.TrustSummaries(t.Context(), airlock.TrustFilter{})
		if len(sums) != 1 || sums[0].MedianDecision != 3*time.Minute {
			t.Fatalf("time to decision %+v, want 3m", sums)
		}
	})
}

func TestAskRejected(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, db := newEnforcer(t)
		done := make(chan airlock.Enforcement)
		go func() { done <- e.Enforce(context.Background(), airlocktest.Action("deploy", "prod")) }()
		ap := pendingOne(t, db)
		if _, err := db.ResolveApproval(t.Context(), airlock.Resolution{ApprovalID: ap.ID, Status: airlock.StatusRejected,
			ActionHash: ap.ActionHash, Reviewer: airlock.Reviewer{Name: "alice"}, Reason: "not on a Friday",
			Surface: airlock.SurfaceWeb}); err != nil {
			t.Fatal(err)
		}
		enf := <-done
		if enf.Allowed || enf.Code != airlock.CodeRejected || !strings.Contains(enf.Message, "not on a Friday") {
			t.Fatalf("rejected ask: %+v", enf)
		}
		wantTrust(t, db, airlock.TrustDenied, 1)
	})
}

func TestAskTimesOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, db := newEnforcer(t)
		start := time.Now()
		enf := e.Enforce(context.Background(), airlocktest.Action("deploy", "prod"))
		if enf.Allowed || enf.Code != airlock.CodeTimeout || enf.Approval.Status != airlock.StatusExpired {
			t.Fatalf("unanswered ask: %+v", enf)
		}
		if waited := time.Since(start); waited != 10*time.Minute {
			t.Fatalf("waited %s, want the rule's 10m timeout", waited)
		}
		wantTrust(t, db, airlock.TrustTimeout, 1)
		if got := lastEvents(t, db, 0); !slices.Contains(got, "approval.expired:expired") {
			t.Fatalf("expiry not audited: %v", got)
		}
	})
}

func TestAskCallerLeaves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, db := newEnforcer(t)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		enf := e.Enforce(ctx, airlocktest.Action("deploy", "prod"))
		if enf.Allowed || enf.Code != airlock.CodeCancelled || enf.Approval.Status != airlock.StatusCancelled ||
			enf.Approval.Surface != airlock.SurfaceSystem {
			t.Fatalf("caller left: %+v", enf)
		}
		wantTrust(t, db, airlock.TrustDenied, 1)
	})
}

func TestAskJoinsPending(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, db := newEnforcer(t)
		results := make(chan airlock.Enforcement, 3)
		for range 3 {
			go func() { results <- e.Enforce(context.Background(), airlocktest.Action("deploy", "prod")) }()
		}
		synctest.Wait()
		page, err := db.FindApprovals(t.Context(), airlock.ApprovalFilter{})
		if err != nil || len(page.Approvals) != 1 {
			t.Fatalf("three identical asks queued %d requests, want 1 (%v)", len(page.Approvals), err)
		}
		ap := page.Approvals[0]
		if _, err := db.ResolveApproval(t.Context(), airlock.Resolution{ApprovalID: ap.ID, Status: airlock.StatusApproved,
			ActionHash: ap.ActionHash, Reviewer: airlock.Reviewer{Name: "bob"}, Surface: airlock.SurfaceAPI}); err != nil {
			t.Fatal(err)
		}
		// One approval releases one caller; the others are told it was
		// used and must ask again.
		allowed, used := 0, 0
		for range 3 {
			switch enf := <-results; {
			case enf.Allowed && enf.Approval.ID == ap.ID:
				allowed++
			case enf.Code == airlock.CodeUsed:
				used++
			default:
				t.Fatalf("joined caller: %+v", enf)
			}
		}
		if allowed != 1 || used != 2 {
			t.Fatalf("%d joined callers ran and %d were told the approval was used, want 1 and 2", allowed, used)
		}
	})
}

func TestGrantRunsOnce(t *testing.T) {
	e, db := newEnforcer(t)
	for _, tool := range []string{"propose", "wire_money"} {
		t.Run(tool, func(t *testing.T) {
			a := airlocktest.Action(tool, "x")
			first := e.Enforce(t.Context(), a)
			if first.Allowed || first.Approval == nil {
				t.Fatalf("first attempt: %+v", first)
			}
			// A retry before approval joins the same request.
			if again := e.Enforce(t.Context(), a); again.Allowed || again.Approval.ID != first.Approval.ID {
				t.Fatalf("retry while pending: %+v", again)
			}
			ap := first.Approval
			if _, err := db.ResolveApproval(t.Context(), airlock.Resolution{ApprovalID: ap.ID, Status: airlock.StatusApproved,
				ActionHash: ap.ActionHash, Reviewer: airlock.Reviewer{Name: "alice"}, Surface: airlock.SurfaceWeb}); err != nil {
				t.Fatal(err)
			}
			// A different action (one byte of the args) is not granted.
			other := airlocktest.Action(tool, "y")
			if enf := e.Enforce(t.Context(), other); enf.Allowed {
				t.Fatalf("a different action ran on the grant: %+v", enf)
			}
			// The same action runs exactly once.
			if enf := e.Enforce(t.Context(), a); !enf.Allowed || enf.Label != airlock.LabelGrantUsed || enf.Approval.ID != ap.ID {
				t.Fatalf("retry after approval: %+v", enf)
			}
			if enf := e.Enforce(t.Context(), a); enf.Allowed {
				t.Fatalf("grant used twice: %+v", enf)
			}
		})
	}
}

func TestRunRecordsExecution(t *testing.T) {
	e, db := newEnforcer(t)
	ran := 0
	if _, err := e.Run(t.Context(), airlocktest.Action("read_file", "a"), func(context.Context, airlock.Action) error { ran++; return nil }); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("disk full")
	if _, err := e.Run(t.Context(), airlocktest.Action("read_file", "b"), func(context.Context, airlock.Action) error { ran++; return boom }); !errors.Is(err, boom) {
		t.Fatalf("Run returned %v, want the function's error", err)
	}
	enf, err := e.Run(t.Context(), airlocktest.Action("delete_file", "c"), func(context.Context, airlock.Action) error { ran++; return nil })
	var refusal *airlock.Refusal
	if !errors.As(err, &refusal) || airlock.ErrorCode(err) != airlock.CodeDenied || enf.Allowed {
		t.Fatalf("denied Run: %v, %+v", err, enf)
	}
	if ran != 2 {
		t.Fatalf("function ran %d times, want 2 (never for the denied action)", ran)
	}
	got := lastEvents(t, db, 0)
	want := []string{"decision:auto", "action.executed:ok", "decision:auto", "action.executed:failed", "decision:deny"}
	if !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	wantTrust(t, db, airlock.TrustFailure, 1)
}

func TestSweepExpiresProposals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, db := newEnforcer(t)
		e.Enforce(context.Background(), airlocktest.Action("propose", "a"))
		e.Enforce(context.Background(), airlocktest.Action("wire_money", "b"))
		time.Sleep(59 * time.Minute)
		if n, err := e.Sweep(context.Background()); err != nil || n != 0 {
			t.Fatalf("sweep before the deadline expired %d (%v)", n, err)
		}
		time.Sleep(time.Hour)
		if n, err := e.Sweep(context.Background()); err != nil || n != 2 {
			t.Fatalf("sweep expired %d (%v), want 2", n, err)
		}
		page, _ := db.FindApprovals(t.Context(), airlock.ApprovalFilter{Status: []airlock.ApprovalStatus{airlock.StatusExpired}})
		if len(page.Approvals) != 2 {
			t.Fatalf("%d expired requests", len(page.Approvals))
		}
	})
}

// pendingOne waits until exactly one request is pending and returns it.
func pendingOne(t *testing.T, db *sqlite.DB) airlock.Approval {
	t.Helper()
	synctest.Wait()
	page, err := db.FindApprovals(t.Context(), airlock.ApprovalFilter{Status: []airlock.ApprovalStatus{airlock.StatusPending}})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Approvals) != 1 {
		t.Fatalf("%d pending requests, want 1", len(page.Approvals))
	}
	return page.Approvals[0]
}

func wantTrust(t *testing.T, db *sqlite.DB, out airlock.TrustOutcome, n int64) {
	t.Helper()
	sums, err := db.TrustSummaries(t.Context(), airlock.TrustFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var got int64
	for _, s := range sums {
		got += s.Counts[out]
	}
	if got != n {
		t.Fatalf("%d trust records with outcome %s, want %d (%+v)", got, out, n, sums)
	}
}

// TestRefusalCodesDocumented keeps the code table in docs/POLICY.md, the
// one place users read them, in step with airlock.RefusalCodes.
func TestRefusalCodesDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/POLICY.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range airlock.RefusalCodes {
		if !strings.Contains(string(doc), "| `"+c.Code+"` |") {
			t.Errorf("docs/POLICY.md does not list %s", c.Code)
		}
	}
}

func TestSweepEvery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, db := newEnforcer(t)
		ctx, cancel := context.WithCancel(context.Background())
		go e.SweepEvery(ctx, time.Minute)
		e.Enforce(context.Background(), airlocktest.Action("propose", "a"))
		time.Sleep(time.Hour + time.Minute)
		synctest.Wait()
		cancel()
		page, err := db.FindApprovals(t.Context(), airlock.ApprovalFilter{Status: []airlock.ApprovalStatus{airlock.StatusExpired}})
		if err != nil || len(page.Approvals) != 1 {
			t.Fatalf("the background sweep expired %d requests (%v), want 1", len(page.Approvals), err)
		}
	})
}

// heldWaits holds every WaitApproval's answer until release is closed, so
// a test decides what has happened by the time the waiting caller runs again.
type heldWaits struct {
	airlock.Store
	release chan struct{}
}

func (h heldWaits) WaitApproval(ctx context.Context, id string) (airlock.Approval, error) {
	ap, err := h.Store.WaitApproval(ctx, id)
	<-h.release
	return ap, err
}

func TestAskApprovedAsCallerLeaves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, db := newEnforcer(t)
		held := heldWaits{Store: db, release: make(chan struct{})}
		e.Store = held
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan airlock.Enforcement)
		go func() { done <- e.Enforce(ctx, airlocktest.Action("deploy", "prod")) }()
		ap := pendingOne(t, db)
		if _, err := db.ResolveApproval(t.Context(), airlock.Resolution{ApprovalID: ap.ID, Status: airlock.StatusApproved,
			ActionHash: ap.ActionHash, Reviewer: airlock.Reviewer{Name: "bob"}, Surface: airlock.SurfaceCLI}); err != nil {
			t.Fatal(err)
		}
		cancel() // before the waiting caller has run again
		close(held.release)
		enf := <-done
		if enf.Allowed || enf.Code != airlock.CodeCancelled {
			t.Fatalf("approved as the caller left: %+v", enf)
		}
		// The trust record is the reviewer's verdict, written once with the
		// resolution; that the action did not run shows in the caller's
		// refusal and in the absence of an action.executed event.
		wantTrust(t, db, airlock.TrustSuccess, 1)
		wantTrust(t, db, airlock.TrustDenied, 0)
	})
}

func TestAskCreatorLeavesJoinedCallerStays(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, db := newEnforcer(t)
		first, leave := context.WithCancel(context.Background())
		results := make(chan airlock.Enforcement, 2)
		go func() { results <- e.Enforce(first, airlocktest.Action("deploy", "prod")) }()
		ap := pendingOne(t, db)
		go func() { results <- e.Enforce(context.Background(), airlocktest.Action("deploy", "prod")) }()
		synctest.Wait()
		leave()
		if gone := <-results; gone.Allowed || gone.Code != airlock.CodeCancelled {
			t.Fatalf("the caller that left: %+v", gone)
		}
		if got, _ := db.Approval(t.Context(), ap.ID); got.Status != airlock.StatusPending {
			t.Fatalf("request is %s after its creator left while another caller waits", got.Status)
		}
		if _, err := db.ResolveApproval(t.Context(), airlock.Resolution{ApprovalID: ap.ID, Status: airlock.StatusApproved,
			ActionHash: ap.ActionHash, Reviewer: airlock.Reviewer{Name: "bob"}, Surface: airlock.SurfaceCLI}); err != nil {
			t.Fatal(err)
		}
		if stayed := <-results; !stayed.Allowed {
			t.Fatalf("the caller that stayed: %+v", stayed)
		}
	})
}

func TestChainVerifierStrayEvent(t *testing.T) {
	// An event whose seq is below the expected one — 0, negative, or a
	// repeat — is reported at the expected seq, never at 0 (which would
	// read as "intact").
	for _, seq := range []int64{0, -5} {
		var v airlock.ChainVerifier
		e := airlock.Event{Seq: seq, Kind: "decision", Payload: []byte(`{}`)}
		e.Hash = e.ChainHash(airlock.Hash{})
		err := v.Check(&e)
		var ce *airlock.ChainError
		if !errors.As(err, &ce) || ce.Seq != 1 {
			t.Errorf("event with seq %d first: %v, want a break at seq 1", seq, err)
		}
	}
}

func TestResumeChain(t *testing.T) {
	var prev airlock.Hash
	var evs []airlock.Event
	for i := range 4 {
		e := airlock.Event{Kind: "decision", Payload: []byte(fmt.Sprintf(`{"n":%d}`, i))}
		e.Seal(int64(i+1), prev)
		prev = e.Hash
		evs = append(evs, e)
	}
	// From a checkpoint (seq 2 and its hash) the rest verifies...
	v := airlock.ResumeChain(2, evs[1].Hash)
	for _, e := range evs[2:] {
		if err := v.Check(&e); err != nil {
			t.Fatal(err)
		}
	}
	if seq, h := v.Head(); seq != 4 || h != evs[3].Hash {
		t.Fatalf("head %d %s", seq, h)
	}
	// ...and a log rewritten before the checkpoint does not.
	v = airlock.ResumeChain(2, evs[0].Hash)
	if err := v.Check(&evs[2]); err == nil {
		t.Fatal("a chain that does not continue the checkpoint verified")
	}
}

func TestCheckAndAwait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, db := newEnforcer(t)
		enf := e.Check(t.Context(), airlocktest.Action("deploy", "prod"))
		if enf.Allowed || !enf.Pending || enf.Code != "" || enf.Approval == nil || enf.Approval.Status != airlock.StatusPending {
			t.Fatalf("Check of an ask: %+v, want it pending at once", enf)
		}
		// A request waiting for a person is not a grant.
		if enf.Label != airlock.LabelApprovalRequested {
			t.Errorf("label of a pending check %q, want %q", enf.Label, airlock.LabelApprovalRequested)
		}
		id := enf.Approval.ID

		// A caller that gives up waiting leaves the request pending.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		got, err := e.Await(ctx, id)
		cancel()
		if err != nil || !got.Pending || got.Allowed || got.Label != airlock.LabelApprovalRequested {
			t.Fatalf("Await that timed out: %+v, %v; want still pending, labelled %s", got, err, airlock.LabelApprovalRequested)
		}
		if ap, _ := db.Approval(t.Context(), id); ap.Status != airlock.StatusPending {
			t.Fatalf("the request is %s after the caller left, want pending", ap.Status)
		}

		if _, err := db.ResolveApproval(t.Context(), airlock.Resolution{ApprovalID: id, Status: airlock.StatusApproved,
			ActionHash: enf.Decision.ActionHash, Reviewer: airlock.Reviewer{Name: "bob"}, Surface: airlock.SurfaceAPI}); err != nil {
			t.Fatal(err)
		}
		got, err = e.Await(t.Context(), id)
		if err != nil || !got.Allowed || got.Pending || got.Label != airlock.LabelApprovalGranted ||
			got.Decision.ActionHash != enf.Decision.ActionHash || got.Decision.Action.Tool != "deploy" {
			t.Fatalf("Await after approval: %+v, %v", got, err)
		}
		wantTrust(t, db, airlock.TrustSuccess, 1) // once, with the resolution
		if evs := lastEvents(t, db, 0); !slices.Contains(evs, "grant.used:approved") {
			t.Fatalf("the collection is not audited: %v", evs)
		}

		// The approval released that one caller: a replay is refused.
		got, err = e.Await(t.Context(), id)
		if err != nil || got.Allowed || got.Code != airlock.CodeUsed {
			t.Fatalf("second Await of one approval: %+v, %v; want AIRLOCK-USED", got, err)
		}
	})
}

func TestAwaitAfterTheDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, db := newEnforcer(t)
		enf := e.Check(t.Context(), airlocktest.Action("deploy", "late"))
		if _, err := db.ResolveApproval(t.Context(), airlock.Resolution{ApprovalID: enf.Approval.ID, Status: airlock.StatusApproved,
			ActionHash: enf.Decision.ActionHash, Reviewer: airlock.Reviewer{Name: "bob"}, Surface: airlock.SurfaceAPI}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(11 * time.Minute) // nobody came for it before the deadline
		got, err := e.Await(t.Context(), enf.Approval.ID)
		if err != nil || got.Allowed || got.Code != airlock.CodeTimeout {
			t.Fatalf("Await after the deadline: %+v, %v; want AIRLOCK-TIMEOUT", got, err)
		}
	})
}

func TestAwaitRefusesProposalsAndUnknownIDs(t *testing.T) {
	e, _ := newEnforcer(t)
	enf := e.Check(t.Context(), airlocktest.Action("propose", "a"))
	if enf.Code != airlock.CodeSuggested || enf.Pending {
		t.Fatalf("Check of a suggest: %+v", enf)
	}
	if _, err := e.Await(t.Context(), enf.Approval.ID); airlock.ErrorCode(err) != airlock.EINVALID {
		t.Fatalf("Await of a proposal: %v, want EINVALID", err)
	}
	if _, err := e.Await(t.Context(), "0190c0de-0000-7000-8000-000000000000"); airlock.ErrorCode(err) != airlock.ENOTFOUND {
		t.Fatalf("Await of an unknown request: %v, want ENOTFOUND", err)
	}
}

func TestAwaitOfAGoneCallerLeavesTheApproval(t *testing.T) {
	e, db := newEnforcer(t)
	enf := e.Check(t.Context(), airlocktest.Action("deploy", "gone"))
	if _, err := db.ResolveApproval(t.Context(), airlock.Resolution{ApprovalID: enf.Approval.ID, Status: airlock.StatusApproved,
		ActionHash: enf.Decision.ActionHash, Reviewer: airlock.Reviewer{Name: "bob"}, Surface: airlock.SurfaceAPI}); err != nil {
		t.Fatal(err)
	}
	gone, cancel := context.WithCancel(t.Context())
	cancel()
	got, err := e.Await(gone, enf.Approval.ID)
	if err != nil || got.Allowed || !got.Pending {
		t.Fatalf("Await for a caller that went away: %+v, %v; want pending, not collected", got, err)
	}
	// Coming back, the caller collects it.
	if got, err = e.Await(t.Context(), enf.Approval.ID); err != nil || !got.Allowed {
		t.Fatalf("Await on coming back: %+v, %v; want allowed", got, err)
	}
}

// approve resolves a request as bob, who may approve the test policy's
// deploys.
func approve(t *testing.T, db *sqlite.DB, ap *airlock.Approval) {
	t.Helper()
	if _, err := db.ResolveApproval(t.Context(), airlock.Resolution{ApprovalID: ap.ID, Status: airlock.StatusApproved,
		ActionHash: ap.ActionHash, Reviewer: airlock.Reviewer{Name: "bob"}, Surface: airlock.SurfaceCLI}); err != nil {
		t.Fatal(err)
	}
}

// approvedCheck checks an ask without waiting and has its request
// approved, as a caller that stopped waiting leaves it.
func approvedCheck(t *testing.T, e *gate.Enforcer, db *sqlite.DB, a airlock.Action) airlock.Enforcement {
	t.Helper()
	enf := e.Check(t.Context(), a)
	if !enf.Pending {
		t.Fatalf("check: %+v, want pending", enf)
	}
	approve(t, db, enf.Approval)
	return enf
}

func TestCheckAgainCollectsTheApproval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, db := newEnforcer(t)
		a := airlocktest.Action("deploy", "prod")
		first := approvedCheck(t, e, db, a)
		before := head(t, db)

		// The caller stopped waiting; the same action checked again runs
		// on the approval: the reviewer does not approve twice.
		again := e.Check(t.Context(), a)
		if !again.Allowed || again.Pending || again.Label != airlock.LabelApprovalGranted || again.Approval.ID != first.Approval.ID ||
			again.Approval.GrantUsed.IsZero() {
			t.Fatalf("the same check after approval: %+v, want allowed by approval %s", again, first.Approval.ID)
		}
		if got, want := lastEvents(t, db, before), []string{"decision:ask", "grant.used:approved"}; !slices.Equal(got, want) {
			t.Fatalf("events %v, want %v", got, want)
		}
		wantTrust(t, db, airlock.TrustSuccess, 1) // the verdict, once, with the resolution

		// Collected once: the next identical check asks anew.
		third := e.Check(t.Context(), a)
		if !third.Pending || third.Approval.ID == first.Approval.ID {
			t.Fatalf("a third check: %+v, want a new pending request", third)
		}
		// A blocking Enforce collects the same way.
		approve(t, db, third.Approval)
		if enf := e.Enforce(t.Context(), a); !enf.Allowed || enf.Approval.ID != third.Approval.ID {
			t.Fatalf("Enforce after approval: %+v, want allowed by approval %s", enf, third.Approval.ID)
		}
	})
}

// barrierLookups holds every CollectableApproval's answer until all the
// callers the barrier counts have one, so that they race for the same
// approval.
type barrierLookups struct {
	airlock.Store
	barrier *sync.WaitGroup
}

func (b barrierLookups) CollectableApproval(ctx context.Context, agent string, h airlock.Hash) (airlock.Approval, error) {
	ap, err := b.Store.CollectableApproval(ctx, agent, h)
	b.barrier.Done()
	b.barrier.Wait()
	return ap, err
}

func TestChecksRacingForOneApproval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, db := newEnforcer(t)
		a := airlocktest.Action("deploy", "prod")
		first := approvedCheck(t, e, db, a)
		var barrier sync.WaitGroup
		barrier.Add(2)
		e.Store = barrierLookups{Store: db, barrier: &barrier}
		results := make(chan airlock.Enforcement, 2)
		for range 2 {
			go func() { results <- e.Check(context.Background(), a) }()
		}
		won, used := 0, 0
		for range 2 {
			switch enf := <-results; {
			case enf.Allowed && enf.Approval.ID == first.Approval.ID:
				won++
			case enf.Code == airlock.CodeUsed && !enf.Allowed && enf.Seq > 0:
				used++
			default:
				t.Fatalf("racing check: %+v", enf)
			}
		}
		if won != 1 || used != 1 {
			t.Fatalf("%d checks ran and %d were told the approval was used, want 1 and 1", won, used)
		}
		if evs := lastEvents(t, db, 0); !slices.Contains(evs, "decision:ask") ||
			len(slices.DeleteFunc(slices.Clone(evs), func(s string) bool { return s != "grant.used:approved" })) != 1 {
			t.Fatalf("events %v, want one grant.used and every check's decision", evs)
		}
	})
}

func TestCheckAgainAfterTheDeadlineOrARejection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, db := newEnforcer(t)
		// An approval nobody collected before the request's deadline is
		// spent: the same check asks anew.
		late := airlocktest.Action("deploy", "late")
		first := approvedCheck(t, e, db, late)
		time.Sleep(11 * time.Minute)
		again := e.Check(t.Context(), late)
		if !again.Pending || again.Approval.ID == first.Approval.ID {
			t.Fatalf("the same check after the deadline: %+v, want a new pending request", again)
		}

		// A rejection answers its request: the same action checked again
		// is a new request for a person, never the rejected one re-opened.
		no := airlocktest.Action("deploy", "friday")
		first = e.Check(t.Context(), no)
		if _, err := db.ResolveApproval(t.Context(), airlock.Resolution{ApprovalID: first.Approval.ID, Status: airlock.StatusRejected,
			ActionHash: first.Approval.ActionHash, Reviewer: airlock.Reviewer{Name: "bob"}, Reason: "not on a Friday",
			Surface: airlock.SurfaceCLI}); err != nil {
			t.Fatal(err)
		}
		again = e.Check(t.Context(), no)
		if again.Allowed || !again.Pending || again.Approval.ID == first.Approval.ID {
			t.Fatalf("the same check after a rejection: %+v, want a new pending request", again)
		}
		// Waiting on the rejected request by its ID tells the verdict.
		got, err := e.Await(t.Context(), first.Approval.ID)
		if err != nil || got.Code != airlock.CodeRejected || !strings.Contains(got.Message, "not on a Friday") {
			t.Fatalf("Await of the rejected request: %+v, %v", got, err)
		}
	})
}
