package postgres

import (
	"fmt"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
	"github.com/airlock-dev/airlock/postgres/pgtest"
)

// openTest opens a store in a fresh schema of its own.
func openTest(t *testing.T) *DB {
	t.Helper()
	dsn, schema := pgtest.NewSchema(t)
	db := NewDB(dsn)
	db.Schema = schema
	if err := db.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// runBatch runs fns as one batch, as the group commit would when their
// callers write at once, and returns each one's error.
func runBatch(t *testing.T, db *DB, fns ...func(*wtx) error) []error {
	t.Helper()
	batch := make([]*op, len(fns))
	for i, fn := range fns {
		batch[i] = &op{Ctx: t.Context(), W: write{fn: fn}}
	}
	db.run(batch)
	errs := make([]error, len(batch))
	for i, o := range batch {
		errs[i] = o.Err
	}
	return errs
}

// TestBatchReadsItsLaterWrites: a settlement is sent with the batch's next
// statement, not at once; a second resolution of the same request in the
// same batch still reads it settled, and is refused — one resolution.
func TestBatchReadsItsLaterWrites(t *testing.T) {
	db := openTest(t)
	ap, _, err := db.RequestApproval(t.Context(), airlocktest.NewApproval("a", "deploy", airlock.Ask, time.Hour), airlock.Record{})
	if err != nil {
		t.Fatal(err)
	}
	reject := airlocktest.Approve(ap)
	reject.Status, reject.Reviewer = airlock.StatusRejected, airlock.Reviewer{Name: "rev"}
	var first, second airlock.Approval
	errs := runBatch(t, db, resolve(airlocktest.Approve(ap), &first), resolve(reject, &second))
	if errs[0] != nil || airlock.ErrorCode(errs[1]) != airlock.ECONFLICT {
		t.Fatalf("two resolutions in one batch: %v, %v; want the first to win, the second ECONFLICT", errs[0], errs[1])
	}
	got, err := db.Approval(t.Context(), ap.ID)
	if err != nil || got.Status != airlock.StatusApproved {
		t.Fatalf("request is %s (%v), want approved", got.Status, err)
	}
	evs, err := db.Events(t.Context(), airlock.EventFilter{Kind: airlock.EventApprovalResolved})
	if err != nil || len(evs) != 1 {
		t.Fatalf("%d resolution events (%v), want 1", len(evs), err)
	}
	airlocktest.MustVerify(t, db)
}

// TestBatchLaterWriteThatMissesAborts: a write sent later must change the
// rows its op counted on; one that changes none aborts the batch — every
// op of it fails, nothing of it is written — rather than commit records of
// a change that did not happen.
func TestBatchLaterWriteThatMissesAborts(t *testing.T) {
	db := openTest(t)
	head, err := db.Head(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	appendOne := func(w *wtx) error {
		w.append(airlock.Record{Events: []airlock.Event{airlocktest.Event("decision", "a")}}, "")
		return nil
	}
	missing := airlocktest.NewApproval("a", "never requested", airlock.Ask, time.Hour)
	settleMissing := func(w *wtx) error { return w.settle(&missing, missing.Expire(w.now())) }
	errs := runBatch(t, db, appendOne, settleMissing)
	for i, err := range errs {
		if airlock.ErrorCode(err) != airlock.EUNAVAILABLE {
			t.Errorf("op %d: %v, want EUNAVAILABLE (the batch aborted)", i, err)
		}
	}
	if after, err := db.Head(t.Context()); err != nil || after != head {
		t.Fatalf("head %d after the aborted batch (%v), want %d: nothing written", after, err, head)
	}
	// The store writes on.
	if errs := runBatch(t, db, appendOne); errs[0] != nil {
		t.Fatal(errs[0])
	}
	airlocktest.MustVerify(t, db)
}

// TestBatchRowForms: a batch writes its events and trust records as rows
// of values when there are few, as arrays when there are many, in every
// combination — each row written once, in order, the chain whole.
func TestBatchRowForms(t *testing.T) {
	db := openTest(t)
	var events, trust int
	for _, n := range []int{1, 2, maxValues, maxValues + 1, 9} {
		for _, m := range []int{0, 1, 3, maxValues, maxValues + 2} {
			rec := airlock.Record{}
			for i := range n {
				rec.Events = append(rec.Events, airlocktest.Event("decision", fmt.Sprint("agent-", i)))
			}
			for i := range m {
				rec.Trust = append(rec.Trust, airlock.TrustRecord{Agent: fmt.Sprint("agent-", i), Class: airlock.ClassFSRead,
					Outcome: airlock.TrustSuccess, Tool: "ls", Label: airlock.LabelAuto, Args: []byte(`{"n":1}`)})
			}
			if errs := runBatch(t, db, func(w *wtx) error { w.append(rec, ""); return nil }); errs[0] != nil {
				t.Fatalf("%d events, %d trust records: %v", n, m, errs[0])
			}
			events, trust = events+n, trust+m
		}
	}
	if rep := airlocktest.MustVerify(t, db); rep.Events != int64(events) {
		t.Fatalf("verified %d events, want %d", rep.Events, events)
	}
	var got int
	if err := db.pool.QueryRow(t.Context(), `SELECT count(*) FROM trust`).Scan(&got); err != nil || got != trust {
		t.Fatalf("%d trust records (%v), want %d", got, err, trust)
	}
}
