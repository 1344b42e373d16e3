package postgres

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
	"github.com/airlock-dev/airlock/gate"
	"github.com/airlock-dev/airlock/postgres/pgtest"
	"github.com/jackc/pgx/v5"
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

// openWithEvent opens a store in a fresh schema whose chain holds one
// event, seq 1.
func openWithEvent(t *testing.T) *DB {
	t.Helper()
	db := openTest(t)
	if _, err := db.Append(t.Context(), airlock.Record{Events: []airlock.Event{airlocktest.Event("decision", "first")}}); err != nil {
		t.Fatal(err)
	}
	return db
}

// runBatch runs fns as one batch, as the group commit would when their
// callers write at once, and returns each one's error.
func runBatch(t *testing.T, db *DB, fns ...func(*wtx) error) []error {
	t.Helper()
	batch := make([]*op, len(fns))
	for i, fn := range fns {
		batch[i] = &op{Ctx: t.Context(), W: fn}
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
// in any number of each — each row written once, in order, the chain
// whole.
func TestBatchRowForms(t *testing.T) {
	db := openTest(t)
	var events, trust int
	for _, n := range []int{1, 2, 4, 5, 9} {
		for _, m := range []int{0, 1, 3, 4, 6} {
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

// TestBatchDeliveryRefused: a batch one of whose deliveries the database
// refuses fails whole, its batch-mate too: none of their events, trust
// records or deliveries is stored. The next batch commits.
func TestBatchDeliveryRefused(t *testing.T) {
	db := openWithEvent(t)
	if _, err := db.pool.Exec(t.Context(), `CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN IF NEW.kind = 'fail' THEN RAISE EXCEPTION 'delivery refused'; END IF; RETURN NEW; END $$;
		CREATE TRIGGER refuse BEFORE INSERT ON deliveries FOR EACH ROW EXECUTE FUNCTION refuse()`); err != nil {
		t.Fatal(err)
	}
	good := airlock.Record{Events: []airlock.Event{airlocktest.Event("decision", "a")},
		Trust: []airlock.TrustRecord{{Agent: "a", Class: airlock.ClassFSRead, Outcome: airlock.TrustSuccess, Tool: "ls",
			Label: airlock.LabelAuto}},
		Notifications: []airlock.Notification{{Kind: "note", Subject: "good", Recipients: []string{"x"}}}}
	bad := good
	bad.Notifications = []airlock.Notification{{Kind: "note", Subject: "fine"}, {Kind: "fail", Subject: "refused"}}
	if errs := runBatch(t, db, appending(t, good), appending(t, bad)); errs[0] == nil || errs[1] == nil {
		t.Fatalf("a batch with a refused delivery: %v, %v; want both ops to fail", errs[0], errs[1])
	}
	for _, table := range []string{"events", "trust", "deliveries"} {
		var n int
		if err := db.pool.QueryRow(t.Context(), `SELECT count(*) FROM `+table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if want := map[string]int{"events": 1}[table]; n != want {
			t.Errorf("%d rows in %s after the failed batch, want %d", n, table, want)
		}
	}
	if errs := runBatch(t, db, appending(t, good)); errs[0] != nil {
		t.Fatal(errs[0])
	}
	airlocktest.MustVerify(t, db)
}

// appending returns an op that appends rec, as Append's do.
func appending(t *testing.T, rec airlock.Record) func(*wtx) error {
	t.Helper()
	if err := rec.Prepare(); err != nil {
		t.Fatal(err)
	}
	return func(w *wtx) error { w.append(rec, ""); return nil }
}

// TestBatchDeliveriesAndNotice: a batch of appends queues its deliveries
// with its events. Each delivery links to the event it names — its own
// record's first event, or the earlier one it gave — its recipients and
// reviewers are its own, and the notification the batch sends the other
// replicas says deliveries were queued.
func TestBatchDeliveriesAndNotice(t *testing.T) {
	db := openWithEvent(t)
	listener, err := pgx.Connect(t.Context(), db.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close(t.Context())
	if _, err := listener.Exec(t.Context(), `LISTEN `+pgx.Identifier{db.channel}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	recs := []airlock.Record{
		{Events: []airlock.Event{airlocktest.Event("decision", "a"), airlocktest.Event("decision", "a")},
			Notifications: []airlock.Notification{
				{Kind: "decision", Agent: "a", Subject: "wrote", Recipients: []string{"alice", "bob"}},
				{Kind: "decision", Agent: "a", Subject: "earlier", EventSeq: 1, Reviewers: []string{"carol"}},
			}},
		{Events: []airlock.Event{airlocktest.Event("decision", "b")},
			Notifications: []airlock.Notification{
				{Kind: "note", Agent: "b", Subject: "own payload", Payload: json.RawMessage(`{"n":1}`),
					Recipients: []string{""}, Reviewers: []string{"dave", "erin"}},
			}},
	}
	for _, err := range runBatch(t, db, appending(t, recs[0]), appending(t, recs[1])) {
		if err != nil {
			t.Fatal(err)
		}
	}
	airlocktest.MustVerify(t, db)
	ns, err := db.Notifications(t.Context(), airlock.NotificationFilter{})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(ns, func(a, b airlock.Notification) int { return int(a.ID - b.ID) })
	var got []string
	for _, n := range ns {
		got = append(got, fmt.Sprintf("%s@%d to %q reviewers %q payload %s", n.Subject, n.EventSeq, n.Recipients,
			n.Reviewers, n.Payload))
	}
	want := []string{
		`wrote@2 to ["alice" "bob"] reviewers [] payload `,
		`earlier@1 to [] reviewers ["carol"] payload `,
		`own payload@4 to [""] reviewers ["dave" "erin"] payload {"n":1}`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("deliveries:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	n, err := listener.WaitForNotification(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if words := strings.Fields(n.Payload); len(words) < 2 || words[0] != db.origin || !slices.Contains(words, "d") ||
		!slices.Contains(words, "e") {
		t.Fatalf("notification %q: want this store's origin, e (events appended) and d (deliveries queued)", n.Payload)
	}
}

// TestBatchNotifyDecisions: a notify decision's delivery carries its
// event.
func TestBatchNotifyDecisions(t *testing.T) {
	db := openTest(t)
	e := &gate.Enforcer{Gate: airlocktest.NewGate(t), Store: db}
	if enf := e.Check(t.Context(), airlocktest.Action("read_file", "a")); !enf.Allowed {
		t.Fatalf("read_file: %+v", enf)
	}
	enf := e.Check(t.Context(), airlocktest.Action("write_file", "b"))
	if !enf.Allowed || enf.Label != airlock.LabelNotify {
		t.Fatalf("write_file: %+v, want allowed, notify", enf)
	}
	ns, err := db.Notifications(t.Context(), airlock.NotificationFilter{})
	if err != nil || len(ns) != 1 {
		t.Fatalf("%d deliveries (%v), want 1", len(ns), err)
	}
	ev, err := db.Events(t.Context(), airlock.EventFilter{AfterSeq: ns[0].EventSeq - 1, Limit: 1})
	if err != nil || len(ev) != 1 || ev[0].Seq != ns[0].EventSeq || ev[0].Kind != airlock.EventDecision || ev[0].Outcome != "notify" {
		t.Fatalf("the delivery's event %d: %+v (%v), want the notify decision", ns[0].EventSeq, ev, err)
	}
	airlocktest.MustVerify(t, db)
}
