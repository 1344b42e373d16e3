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

// TestSealInDatabase: events the database seals (a batch on a contended
// chain) get the hashes airlock.Event.ChainHash gives — headers of every
// length (one- and two-byte length prefixes), any text, empty fields,
// large payloads — and follow the events before them; the caller's events
// carry the database's seals; trust records link to their batch's events
// by seq, or keep the link they came with.
func TestSealInDatabase(t *testing.T) {
	db := openWithEvent(t)
	long := strings.Repeat("ü", 100) // 200 bytes: a two-byte length
	payload := `{"big":"` + strings.Repeat("x", 5000) + `"}`
	recs := []airlock.Record{
		{Events: []airlock.Event{
			{Kind: "decision", Agent: "a", TraceID: "", Outcome: "auto", Payload: json.RawMessage(`{}`)},
			{Kind: "approval.resolved", Agent: long, TraceID: "trace-\u2028", Outcome: "approved", ApprovalID: "ap-1",
				Payload: json.RawMessage(payload)},
		}, Trust: []airlock.TrustRecord{
			{Agent: "a", Class: airlock.ClassFSRead, Outcome: airlock.TrustSuccess, Tool: "ls", Label: airlock.LabelAuto},
			{Agent: "a", Class: airlock.ClassFSRead, Outcome: airlock.TrustFailure, Tool: "ls", Label: airlock.LabelAuto, EventSeq: 1},
		}},
		{Trust: []airlock.TrustRecord{{Agent: "b", Class: airlock.ClassFSRead, Outcome: airlock.TrustSuccess, Tool: "ls",
			Label: airlock.LabelAuto, EventSeq: 1}}},
		{Events: []airlock.Event{{Kind: strings.Repeat("k", 127), Agent: strings.Repeat("g", 128), Outcome: "",
			Payload: json.RawMessage(`{"n":1}`)}},
			Trust: []airlock.TrustRecord{{Agent: "c", Class: airlock.ClassFSRead, Outcome: airlock.TrustSuccess, Tool: "ls",
				Label: airlock.LabelAuto}}},
	}
	got := sealBatch(t, db, recs)
	stored, err := db.Events(t.Context(), airlock.EventFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != 4 {
		t.Fatalf("%d events stored, want 4", len(stored))
	}
	bySeq := map[int64]airlock.Event{}
	for _, e := range stored {
		bySeq[e.Seq] = e
	}
	for _, evs := range got {
		for _, e := range evs {
			s, ok := bySeq[e.Seq]
			if !ok || s.Hash != e.Hash || s.Prev != e.Prev || e.ChainHash(e.Prev) != e.Hash {
				t.Errorf("event %d as returned: hash %x prev %x; stored: %x %x", e.Seq, e.Hash, e.Prev, s.Hash, s.Prev)
			}
		}
	}
	if got[0][0].Seq != 2 || got[0][1].Seq != 3 || len(got[1]) != 0 || got[2][0].Seq != 4 {
		t.Fatalf("seqs %v, want 2 3 | | 4", got)
	}
	airlocktest.MustVerify(t, db)
	rows, err := db.pool.Query(t.Context(), `SELECT agent, outcome, event_seq FROM trust ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	links, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
		var agent, outcome string
		var seq int64
		err := r.Scan(&agent, &outcome, &seq)
		return fmt.Sprintf("%s/%s@%d", agent, outcome, seq), err
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a/success@2", "a/failure@1", "b/success@1", "c/success@4"}
	if !slices.Equal(links, want) {
		t.Fatalf("trust links %v, want %v", links, want)
	}
	if h, err := db.Head(t.Context()); err != nil || h != 4 {
		t.Fatalf("head %d (%v), want 4", h, err)
	}
}

// sealBatch writes recs in one batch that the database seals, and returns
// the events each append returned.
func sealBatch(t *testing.T, db *DB, recs []airlock.Record) [][]airlock.Event {
	t.Helper()
	for i := range recs {
		if err := recs[i].Prepare(); err != nil {
			t.Fatal(err)
		}
	}
	w, err := db.beginSealing(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer w.end()
	var got [][]airlock.Event
	for _, rec := range recs {
		got = append(got, w.append(rec, ""))
	}
	if err := w.commit(); err != nil {
		t.Fatalf("a batch sealed by the database: %v", err)
	}
	return got
}

// TestSealedUnlikeGo: were the database ever to seal an event otherwise
// than Go (a bug, here made on purpose), the batch fails — its callers'
// actions do not run — and the store seals in Go from then on; the chain
// shows the break where it happened.
func TestSealedUnlikeGo(t *testing.T) {
	db := openTest(t)
	rec := airlock.Record{Events: []airlock.Event{airlocktest.Event("decision", "a")}}
	if _, err := db.Append(t.Context(), rec); err != nil {
		t.Fatal(err)
	}
	good := sealRows
	t.Cleanup(func() { sealRows = good })
	sealRows = strings.Replace(sealRows, "sha256($1::bytea ||", "sha256('\\x00'::bytea || $1::bytea ||", 2)
	w, err := db.beginSealing(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	told := rec
	told.Notifications = []airlock.Notification{{Kind: "decision", Agent: "a", Subject: "ran", Recipients: []string{"owner"}}}
	if err := told.Prepare(); err != nil {
		t.Fatal(err)
	}
	w.append(told, "")
	err = w.commit()
	w.end()
	if err == nil || !strings.Contains(err.Error(), "another hash") {
		t.Fatalf("a batch sealed unlike Go: %v, want it to fail", err)
	}
	// Its delivery committed with it, but would tell of an action that
	// did not run: it is dropped.
	ns, err := db.Notifications(t.Context(), airlock.NotificationFilter{})
	if err != nil || len(ns) != 1 || ns[0].Status != airlock.NotificationDropped {
		t.Fatalf("deliveries of the failed batch: %+v (%v), want one, dropped", ns, err)
	}
	if !db.noSealing {
		t.Fatal("sealing in the database stays on after it sealed unlike Go")
	}
	if rep, err := db.Verify(t.Context()); err != nil || rep.OK() || rep.FirstBad != 2 {
		t.Fatalf("verify: %+v, %v; want the chain broken at seq 2", rep, err)
	}
	// The next batch that may not assume the head is sealed in Go, on
	// the head read under the lock.
	before := db.sealed.Load()
	db.last = chainHead{}
	if _, err := db.Append(t.Context(), rec); err != nil {
		t.Fatal(err)
	}
	if got := db.sealed.Load() - before; got != 0 {
		t.Fatalf("%d batches sealed by the database after it sealed unlike Go, want 0", got)
	}
}

// TestSealedDeliveryRefused: a batch the database seals, one of whose
// deliveries the database refuses, fails whole, its batch-mate too: none
// of their events, trust records or deliveries is stored. The next batch
// is sealed and commits.
func TestSealedDeliveryRefused(t *testing.T) {
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
	appending := func(rec airlock.Record) *op { // as Append's ops: one trip
		if err := rec.Prepare(); err != nil {
			t.Fatal(err)
		}
		return &op{Ctx: t.Context(), W: write{oneTrip: true, fn: func(w *wtx) error { w.append(rec, ""); return nil }}}
	}
	db.contendedUntil = time.Now().Add(time.Hour) // as if another replica were writing
	before := db.sealed.Load()
	batch := []*op{appending(good), appending(bad)}
	if db.run(batch); batch[0].Err == nil || batch[1].Err == nil {
		t.Fatalf("a batch with a refused delivery: %v, %v; want both ops to fail", batch[0].Err, batch[1].Err)
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
	batch = []*op{appending(good)}
	if db.run(batch); batch[0].Err != nil {
		t.Fatal(batch[0].Err)
	}
	if n := db.sealed.Load() - before; n != 1 {
		t.Fatalf("%d batches sealed by the database, want 1 (the second)", n)
	}
	airlocktest.MustVerify(t, db)
}

// TestSealLargeBatchTwoTrips: a batch too large for the database to seal
// cheaply (more than maxSealed events) is written the two-trip way, whole.
func TestSealLargeBatchTwoTrips(t *testing.T) {
	db := openWithEvent(t)
	db.contendedUntil = time.Now().Add(time.Hour) // as if another replica were writing
	var rec airlock.Record
	for range maxSealed + 1 {
		rec.Events = append(rec.Events, airlocktest.Event("decision", "a"))
	}
	before := db.sealed.Load()
	evs, err := db.Append(t.Context(), rec)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != maxSealed+1 || evs[0].Seq != 2 || evs[maxSealed].Seq != maxSealed+2 {
		t.Fatalf("%d events, seqs %d…%d; want %d, 2…%d", len(evs), evs[0].Seq, evs[len(evs)-1].Seq, maxSealed+1, maxSealed+2)
	}
	if n := db.sealed.Load() - before; n != 0 {
		t.Fatalf("%d batches sealed by the database, want 0", n)
	}
	airlocktest.MustVerify(t, db)
}

// TestSealDeliveriesAndNotice: a batch the database seals may queue
// deliveries — a notify decision on a contended chain — in its one round
// trip. Each delivery links to the event it names: its own record's first
// event (a seq only the database knows when it writes it), or the earlier
// one it gave; its recipients and reviewers are its own; and the
// notification the batch sends the other replicas names the head its
// events left.
func TestSealDeliveriesAndNotice(t *testing.T) {
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
	sealBatch(t, db, recs)
	airlocktest.MustVerify(t, db)
	evs, err := db.Events(t.Context(), airlock.EventFilter{})
	if err != nil || len(evs) != 4 {
		t.Fatalf("%d events (%v), want 4", len(evs), err)
	}
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
	words := strings.Fields(n.Payload)
	if len(words) < 3 || words[0] != db.origin || !slices.Contains(words, "d") {
		t.Fatalf("notification %q: want this store's origin, the head, and d (deliveries queued)", n.Payload)
	}
	h, ok := parseHeadNotice(words[1])
	if last := evs[len(evs)-1]; !ok || h.seq != last.Seq || h.hash != last.Hash {
		t.Fatalf("notification %q names head %d %v, want %d %v", n.Payload, h.seq, h.hash, last.Seq, last.Hash)
	}
}

// TestSealedNotifyDecisions: on a contended chain a notify decision — its
// event, trust record and delivery — is sealed by the database, and its
// delivery carries its event.
func TestSealedNotifyDecisions(t *testing.T) {
	db := openTest(t)
	e := &airlock.Enforcer{Gate: airlocktest.NewGate(t), Store: db}
	if enf := e.Check(t.Context(), airlocktest.Action("read_file", "a")); !enf.Allowed {
		t.Fatalf("read_file: %+v", enf)
	}
	db.contendedUntil = time.Now().Add(time.Hour) // as if another replica were writing
	before := db.sealed.Load()
	enf := e.Check(t.Context(), airlocktest.Action("write_file", "b"))
	if !enf.Allowed || enf.Label != airlock.LabelNotify {
		t.Fatalf("write_file: %+v, want allowed, notify", enf)
	}
	if n := db.sealed.Load() - before; n != 1 {
		t.Fatalf("%d batches sealed by the database, want 1", n)
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
