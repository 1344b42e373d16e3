package sqlite_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
)

// TestRacingResolvers1000 has 50 reviewers race to resolve one request,
// 1 000 times over: exactly one wins each time, the rest get ECONFLICT,
// and exactly one resolution is audited per request.
func TestRacingResolvers1000(t *testing.T) {
	rounds := 1000
	if testing.Short() {
		rounds = 100
	}
	db := MustOpen(t, nil)
	for i := range rounds {
		ap, _, err := db.RequestApproval(t.Context(), airlocktest.NewApproval("a", fmt.Sprint("race ", i), airlock.Ask, time.Hour), airlock.Record{})
		if err != nil {
			t.Fatal(err)
		}
		if wins := airlocktest.RaceResolvers(t, db, ap, 50); wins != 1 {
			t.Fatalf("round %d: %d of 50 racing resolvers won, want exactly 1", i, wins)
		}
	}
	if n := countKind(t, db, airlock.EventApprovalResolved); n != rounds {
		t.Fatalf("%d resolution events for %d requests", n, rounds)
	}
	airlocktest.MustVerify(t, db)
}

// TestApproveRacesExpiryAndCancel races an approval against the deadline
// passing (and the enforcer expiring the request) and against a
// cancellation: one of them settles the request, the other gets ECONFLICT
// (or finds it settled), and exactly one change is audited.
func TestApproveRacesExpiryAndCancel(t *testing.T) {
	clock := airlocktest.NewClock()
	db := MustOpen(t, clock.Now)
	const rounds = 200
	won := map[string]int{}
	for i := range rounds {
		ap, _, err := db.RequestApproval(t.Context(), airlocktest.NewApproval("a", fmt.Sprint("job ", i), airlock.Ask, time.Second), airlock.Record{})
		if err != nil {
			t.Fatal(err)
		}
		var approveErr, otherErr error
		var other airlock.Approval
		var wg sync.WaitGroup
		start := make(chan struct{})
		approve := func() { <-start; _, approveErr = db.ResolveApproval(context.Background(), airlocktest.Approve(ap)) }
		// Which goroutine starts first changes which the scheduler runs
		// first: alternate, so that both orders happen.
		if i/2%2 == 0 {
			wg.Go(approve)
		}
		if i%2 == 0 {
			wg.Go(func() {
				<-start
				clock.Advance(time.Second) // the deadline passes as the reviewer clicks
				other, otherErr = db.ExpireApproval(context.Background(), ap.ID)
			})
		} else {
			wg.Go(func() {
				<-start
				other, otherErr = db.CancelApproval(context.Background(), ap.ID, "", "caller left", airlock.SurfaceSystem)
			})
		}
		if i/2%2 == 1 {
			wg.Go(approve)
		}
		close(start)
		wg.Wait()
		final, err := db.Approval(t.Context(), ap.ID)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case approveErr == nil:
			if final.Status != airlock.StatusApproved {
				t.Fatalf("round %d: approval acknowledged but request is %s", i, final.Status)
			}
			if otherErr == nil && other.Status != airlock.StatusApproved {
				t.Fatalf("round %d: both settled the request (%s)", i, other.Status)
			}
		case airlock.ErrorCode(approveErr) == airlock.ECONFLICT:
			if otherErr != nil || final.Status == airlock.StatusApproved || final.Status == airlock.StatusPending {
				t.Fatalf("round %d: approval lost (%v) but request is %s (%v)", i, approveErr, final.Status, otherErr)
			}
		default:
			t.Fatalf("round %d: approve: %v", i, approveErr)
		}
		won[string(final.Status)]++
	}
	settled := countKind(t, db, airlock.EventApprovalResolved) + countKind(t, db, airlock.EventApprovalExpired) +
		countKind(t, db, airlock.EventApprovalCancelled)
	if settled != rounds {
		t.Fatalf("%d settlement events for %d requests, want exactly one each", settled, rounds)
	}
	t.Logf("winners over %d rounds: %v", rounds, won)
	airlocktest.MustVerify(t, db)
}

func countKind(t *testing.T, db interface {
	Events(context.Context, airlock.EventFilter) ([]airlock.Event, error)
}, kind string) int {
	t.Helper()
	n := 0
	var after int64
	for {
		evs, err := db.Events(t.Context(), airlock.EventFilter{AfterSeq: after, Kind: kind, Limit: airlock.MaxPageSize})
		if err != nil {
			t.Fatal(err)
		}
		n += len(evs)
		if len(evs) < airlock.MaxPageSize {
			return n
		}
		after = evs[len(evs)-1].Seq
	}
}
