package postgres_test

import (
	"cmp"
	"context"
	"crypto/sha256"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
	"github.com/airlock-dev/airlock/gate"
	"github.com/airlock-dev/airlock/postgres"
	"github.com/airlock-dev/airlock/postgres/pgtest"
	"github.com/jackc/pgx/v5"
)

// replicas opens n stores on one fresh schema, as n replicas of the server
// would, polling too rarely to matter: only notifications wake them.
func replicas(t *testing.T, n int, clock func() time.Time) []*postgres.DB {
	t.Helper()
	dsn, schema := pgtest.NewSchema(t)
	dbs := make([]*postgres.DB, n)
	for i := range dbs {
		dbs[i] = OpenSchema(t, dsn, schema, clock)
		dbs[i].PollInterval = time.Hour
	}
	return dbs
}

// TestReplicasRaceToResolve has 50 reviewers, split over two replicas,
// race to resolve one request, 50 times over: exactly one wins each time,
// the rest get ECONFLICT, and one resolution is audited per request.
func TestReplicasRaceToResolve(t *testing.T) {
	dbs := replicas(t, 2, nil)
	const rounds, reviewers = 50, 50
	for i := range rounds {
		ap, _, err := dbs[i%2].RequestApproval(t.Context(), airlocktest.NewApproval("a", fmt.Sprint("race ", i), airlock.Ask, time.Hour), airlock.Record{})
		if err != nil {
			t.Fatal(err)
		}
		var wins atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		for j := range reviewers {
			wg.Go(func() {
				r := airlocktest.Approve(ap)
				if j%2 == 1 {
					r.Status = airlock.StatusRejected
				}
				<-start
				_, err := dbs[j%2].ResolveApproval(context.Background(), r)
				switch airlock.ErrorCode(err) {
				case "":
					wins.Add(1)
				case airlock.ECONFLICT:
				default:
					t.Errorf("resolver %d: %v", j, err)
				}
			})
		}
		close(start)
		wg.Wait()
		if wins.Load() != 1 {
			t.Fatalf("round %d: %d of %d resolvers on two replicas won, want exactly 1", i, wins.Load(), reviewers)
		}
	}
	evs, err := dbs[0].Events(t.Context(), airlock.EventFilter{Kind: airlock.EventApprovalResolved, Limit: airlock.MaxPageSize})
	if err != nil || len(evs) != rounds {
		t.Fatalf("%d resolution events (%v), want %d", len(evs), err, rounds)
	}
	airlocktest.MustVerify(t, dbs[1])
}

// TestReplicasRaceToQuorum has 50 reviewers, split over two replicas,
// race to approve requests that need two and three people: exactly that
// many approvals count, the rest are refused, and each request has one
// resolution; both replicas' sweepers escalate a request once.
func TestReplicasRaceToQuorum(t *testing.T) {
	clock := airlocktest.NewClock()
	dbs := replicas(t, 2, clock.Now)
	stores := []airlock.Store{dbs[0], dbs[1]}
	for i := range 10 {
		ap, _, err := dbs[i%2].RequestApproval(t.Context(), airlocktest.NewQuorum("a", fmt.Sprint("quorum ", i), 2+i%2), airlock.Record{})
		if err != nil {
			t.Fatal(err)
		}
		airlocktest.RaceQuorum(t, stores, ap, 50)
	}

	esc := airlocktest.NewApproval("a", "escalate", airlock.Ask, time.Hour)
	esc.Review.Escalate = []airlock.Escalation{{After: airlock.Duration(time.Minute), To: []string{"oncall"}}}
	if _, _, err := dbs[0].RequestApproval(t.Context(), esc, airlock.Record{}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute)
	var steps atomic.Int32
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			got, err := dbs[i%2].EscalateDue(context.Background(), 10)
			if err != nil {
				t.Errorf("escalate: %v", err)
			}
			steps.Add(int32(len(got)))
		})
	}
	wg.Wait()
	if steps.Load() != 1 {
		t.Fatalf("%d escalation steps taken by racing sweepers, want 1", steps.Load())
	}
	airlocktest.MustVerify(t, dbs[1])
}

// TestReplicasRaceToCollectAndExpire: two replicas' checks race to collect
// one approval (one wins), and both replicas' sweepers expire the same
// overdue requests (each once).
func TestReplicasRaceToCollectAndExpire(t *testing.T) {
	clock := airlocktest.NewClock()
	dbs := replicas(t, 2, clock.Now)
	ap, _, err := dbs[0].RequestApproval(t.Context(), airlocktest.NewApproval("a", "deploy", airlock.Ask, time.Hour), airlock.Record{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dbs[1].ResolveApproval(t.Context(), airlocktest.Approve(ap)); err != nil {
		t.Fatal(err)
	}
	var won atomic.Int32
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			_, err := dbs[i%2].CollectApproval(context.Background(), ap.ID, airlock.Record{})
			switch airlock.ErrorCode(err) {
			case "":
				won.Add(1)
			case airlock.CodeUsed:
			default:
				t.Errorf("collector %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if won.Load() != 1 {
		t.Fatalf("%d collectors won, want exactly 1", won.Load())
	}

	const due = 40
	for i := range due {
		if _, _, err := dbs[i%2].RequestApproval(t.Context(), airlocktest.NewApproval("a", fmt.Sprint("job ", i), airlock.Suggest, time.Minute), airlock.Record{}); err != nil {
			t.Fatal(err)
		}
	}
	clock.Advance(time.Minute)
	var expired atomic.Int32
	for i := range 8 {
		wg.Go(func() {
			for {
				got, err := dbs[i%2].ExpireDue(context.Background(), 3)
				if err != nil {
					t.Error(err)
					return
				}
				if len(got) == 0 {
					return
				}
				expired.Add(int32(len(got)))
			}
		})
	}
	wg.Wait()
	if expired.Load() != due {
		t.Fatalf("sweepers on two replicas expired %d requests, want each of %d once", expired.Load(), due)
	}
	evs, err := dbs[0].Events(t.Context(), airlock.EventFilter{Kind: airlock.EventApprovalExpired, Limit: airlock.MaxPageSize})
	if err != nil || len(evs) != due {
		t.Fatalf("%d expiry events (%v), want %d", len(evs), err, due)
	}
	airlocktest.MustVerify(t, dbs[0])
}

// TestReplicasAppendOneChain: concurrent appends from two replicas form one
// gapless chain: no sequence number skipped, repeated or forked.
func TestReplicasAppendOneChain(t *testing.T) {
	appendOneChain(t, replicas(t, 2, nil))
}

// appendOneChain has 16 callers over dbs append two events at a time.
// Every other record also queues a delivery, linked to its own first event
// or to the caller's last record's: each must name the event meant.
func appendOneChain(t *testing.T, dbs []*postgres.DB) {
	const callers, each = 16, 25
	var wg sync.WaitGroup
	var mu sync.Mutex
	var seqs []int64
	linked := map[string]int64{} // a delivery's subject: the seq of the event it is to name
	for c := range callers {
		db := dbs[c%2]
		wg.Go(func() {
			var last int64
			for k := range each {
				rec := airlock.Record{Events: []airlock.Event{
					airlocktest.Event("decision", fmt.Sprint("agent-", c)), airlocktest.Event("proposal", fmt.Sprint("agent-", c))}}
				subject := fmt.Sprint(c, "-", k)
				if k%2 == 1 {
					var link int64 // 0: the record's own first event
					if k%4 == 3 {
						link = last
					}
					rec.Notifications = []airlock.Notification{{Kind: "decision", Subject: subject,
						Recipients: []string{fmt.Sprint("owner-", c)}, EventSeq: link}}
				}
				evs, err := db.Append(context.Background(), rec)
				if err != nil {
					t.Error(err)
					return
				}
				if evs[1].Seq != evs[0].Seq+1 || evs[1].Prev != evs[0].Hash {
					t.Errorf("one record's events are not consecutive: %d, %d", evs[0].Seq, evs[1].Seq)
				}
				mu.Lock()
				seqs = append(seqs, evs[0].Seq, evs[1].Seq)
				if k%2 == 1 {
					linked[subject] = cmp.Or(rec.Notifications[0].EventSeq, evs[0].Seq)
				}
				mu.Unlock()
				last = evs[0].Seq
			}
		})
	}
	wg.Wait()
	var got int
	for before := int64(0); ; {
		ns, err := dbs[0].Notifications(t.Context(), airlock.NotificationFilter{BeforeID: before})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range ns {
			if want, ok := linked[n.Subject]; !ok || n.EventSeq != want || len(n.Recipients) != 1 {
				t.Errorf("delivery %q names event %d, to %q; want event %d (known %v)", n.Subject, n.EventSeq, n.Recipients, want, ok)
			}
			got, before = got+1, n.ID
		}
		if len(ns) == 0 {
			break
		}
	}
	if got != len(linked) {
		t.Errorf("%d deliveries, want %d", got, len(linked))
	}
	slices.Sort(seqs)
	for i, q := range seqs {
		if q != int64(i+1) {
			t.Fatalf("acknowledged sequence numbers are not 1..%d: %v", len(seqs), seqs)
		}
	}
	for _, db := range dbs {
		if rep := airlocktest.MustVerify(t, db); rep.Events != 2*callers*each {
			t.Fatalf("verified %d events, want %d", rep.Events, 2*callers*each)
		}
	}
}

// TestReplicasAlternateAppends: two replicas take turns, one append each,
// so that every batch finds the head where the other replica left it: the
// chain stays one — seqs 1..N, no fork, no row left behind.
func TestReplicasAlternateAppends(t *testing.T) {
	dsn, schema := pgtest.NewSchema(t)
	dbs := []*postgres.DB{OpenSchema(t, dsn, schema, nil), OpenSchema(t, dsn, schema, nil)}
	rec := func(agent string) airlock.Record {
		return airlock.Record{
			Events: []airlock.Event{airlocktest.Event("decision", agent)},
			Trust: []airlock.TrustRecord{{Agent: agent, Class: airlock.ClassFSRead, Outcome: airlock.TrustSuccess,
				Tool: "ls", Label: airlock.LabelAuto}},
		}
	}
	var n int64
	var prev airlock.Hash
	appendOn := func(db *postgres.DB, agent string) {
		t.Helper()
		evs, err := db.Append(t.Context(), rec(agent))
		if err != nil {
			t.Fatal(err)
		}
		n++
		if len(evs) != 1 || evs[0].Seq != n || evs[0].Prev != prev {
			t.Fatalf("append %d: got seq %d prev %x, want seq %d prev %x", n, evs[0].Seq, evs[0].Prev, n, prev)
		}
		prev = evs[0].Hash
	}
	const alone, turns = 10, 60
	for range alone {
		appendOn(dbs[0], "alone")
	}
	for i := range turns {
		appendOn(dbs[i%2], fmt.Sprint("turn-", i%2))
	}
	total := int64(alone + turns)
	for _, db := range dbs {
		if rep := airlocktest.MustVerify(t, db); rep.Events != total {
			t.Fatalf("verified %d events, want %d", rep.Events, total)
		}
		if h, err := db.Head(t.Context()); err != nil || h != total {
			t.Fatalf("head %d (%v), want %d", h, err, total)
		}
	}
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var events, trust, maxSeq int64
	if err := conn.QueryRow(t.Context(), `SELECT (SELECT count(*) FROM `+pgx.Identifier{schema, "events"}.Sanitize()+`),
		(SELECT coalesce(max(seq), 0) FROM `+pgx.Identifier{schema, "events"}.Sanitize()+`),
		(SELECT count(*) FROM `+pgx.Identifier{schema, "trust"}.Sanitize()+`)`).Scan(&events, &maxSeq, &trust); err != nil {
		t.Fatal(err)
	}
	if events != total || maxSeq != total || trust != total {
		t.Fatalf("%d events (max seq %d), %d trust records; want %d of each", events, maxSeq, trust, total)
	}
}

// TestReplicasWake: a change committed on one replica wakes the waiters on
// the other at once — an approval's, the live event stream's, a delivery
// worker's — though they poll only hourly.
func TestReplicasWake(t *testing.T) {
	a, b := func() (*postgres.DB, *postgres.DB) { dbs := replicas(t, 2, nil); return dbs[0], dbs[1] }()
	ap, _, err := a.RequestApproval(t.Context(), airlocktest.NewApproval("a", "deploy", airlock.Ask, time.Hour), airlock.Record{})
	if err != nil {
		t.Fatal(err)
	}
	head, err := a.Head(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	approval := make(chan airlock.Approval, 1)
	go func() {
		got, err := a.WaitApproval(t.Context(), ap.ID)
		if err != nil {
			t.Error(err)
		}
		approval <- got
	}()
	events := make(chan error, 1)
	go func() { events <- a.WaitEvents(t.Context(), head) }()
	queued, stop := a.DeliveriesQueued()
	defer stop()
	time.Sleep(100 * time.Millisecond) // the waiters wait

	start := time.Now()
	if _, err := b.ResolveApproval(t.Context(), airlocktest.Approve(ap)); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-approval:
		if got.Status != airlock.StatusApproved {
			t.Fatalf("woke with %s, want approved", got.Status)
		}
		t.Logf("cross-replica wake-up after %s", time.Since(start))
	case <-time.After(10 * time.Second):
		t.Fatal("WaitApproval on replica A did not wake when replica B resolved the request")
	}
	select {
	case err := <-events:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("WaitEvents on replica A did not wake when replica B appended")
	}
	select {
	case <-queued:
	case <-time.After(10 * time.Second):
		t.Fatal("DeliveriesQueued on replica A did not fire when replica B queued deliveries")
	}
}

// TestListenerReconnects: the listener's connection is killed; a change
// made while it is away still wakes the waiter once it is back (everyone
// rereads), and a later change wakes as usual.
func TestListenerReconnects(t *testing.T) {
	dbs := replicas(t, 2, nil)
	a, b := dbs[0], dbs[1]
	hold := make(chan struct{})
	attempts := make(chan struct{}, 100)
	postgres.BeforeListen(a, func() {
		attempts <- struct{}{}
		<-hold
	})
	first, _, err := a.RequestApproval(t.Context(), airlocktest.NewApproval("a", "one", airlock.Ask, time.Hour), airlock.Record{})
	if err != nil {
		t.Fatal(err)
	}
	woke := make(chan airlock.Approval, 1)
	go func() {
		got, err := a.WaitApproval(t.Context(), first.ID)
		if err != nil {
			t.Error(err)
		}
		woke <- got
	}()
	time.Sleep(50 * time.Millisecond)

	killListener(t, b, a)
	select {
	case <-attempts: // A noticed, and waits to reconnect
	case <-time.After(30 * time.Second):
		t.Fatal("the listener did not notice its connection was gone")
	}
	// While nobody listens on A, B resolves: the notification is lost.
	if _, err := b.ResolveApproval(t.Context(), airlocktest.Approve(first)); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-woke:
		t.Fatalf("woke with %s before the listener was back", got.Status)
	case <-time.After(200 * time.Millisecond):
	}
	close(hold)
	select {
	case got := <-woke:
		if got.Status != airlock.StatusApproved {
			t.Fatalf("woke with %s, want approved", got.Status)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a change missed while the listener was away did not wake the waiter once it was back")
	}

	// Reconnected, it hears the next change.
	deadline := time.Now().Add(10 * time.Second)
	for postgres.ListenerPID(a) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	second, _, err := a.RequestApproval(t.Context(), airlocktest.NewApproval("a", "two", airlock.Ask, time.Hour), airlock.Record{})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		got, err := a.WaitApproval(t.Context(), second.ID)
		if err != nil {
			t.Error(err)
		}
		woke <- got
	}()
	time.Sleep(50 * time.Millisecond)
	if _, err := b.ResolveApproval(t.Context(), airlocktest.Approve(second)); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-woke:
		if got.Status != airlock.StatusApproved {
			t.Fatalf("woke with %s, want approved", got.Status)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the reconnected listener did not wake the waiter")
	}
	if n := postgres.ListenerLost(a); n != 1 {
		t.Fatalf("the listener counted %d lost connections, want 1 (airlock_store_listener_lost_total)", n)
	}
}

// killListener terminates the server backend of victim's listener, through
// another store's database.
func killListener(t *testing.T, via, victim *postgres.DB) {
	t.Helper()
	pid := postgres.ListenerPID(victim)
	if pid == 0 {
		t.Fatal("the listener has no connection")
	}
	conn, err := pgx.Connect(t.Context(), via.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var ok bool
	if err := conn.QueryRow(t.Context(), `SELECT pg_terminate_backend($1)`, int64(pid)).Scan(&ok); err != nil || !ok {
		t.Fatalf("terminate the listener's backend %d: %v %v", pid, ok, err)
	}
}

// TestReplicasAppendWakes: an append of events alone (an auto decision's
// record) wakes the other replica's event waiters at once — they do not
// wait for their (hour-long) poll.
func TestReplicasAppendWakes(t *testing.T) {
	dbs := replicas(t, 2, nil)
	a, b := dbs[0], dbs[1]
	for range 3 {
		head, err := a.Head(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		woke := make(chan error, 1)
		go func() { woke <- a.WaitEvents(t.Context(), head) }()
		for postgres.WaitingEvents(a) == 0 {
			time.Sleep(time.Millisecond)
		}
		if _, err := b.Append(t.Context(), airlock.Record{Events: []airlock.Event{airlocktest.Event("decision", "a")}}); err != nil {
			t.Fatal(err)
		}
		mustWake(t, woke, "WaitEvents on replica A did not wake when replica B appended events alone")
	}
}

// mustWake waits for a waiter's result: its error fails the test, and so
// does no result within 10 s (failure, not a timing bound: a wake-up
// takes milliseconds).
func mustWake(t *testing.T, woke <-chan error, failure string) {
	t.Helper()
	select {
	case err := <-woke:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal(failure)
	}
}

// TestReplicasCollectAfterWait: a check waiting on replica A for a request
// that replica B approves is woken and collects it, once: a second
// collection, on either replica, is refused as used.
func TestReplicasCollectAfterWait(t *testing.T) {
	dbs := replicas(t, 2, nil)
	a, b := dbs[0], dbs[1]
	rec := airlock.Record{Events: []airlock.Event{airlocktest.Event("decision", "a")}}
	for i := range 3 {
		ap, _, err := a.RequestApproval(t.Context(),
			airlocktest.NewApproval("a", fmt.Sprint("deploy ", i), airlock.Ask, time.Hour), airlock.Record{})
		if err != nil {
			t.Fatal(err)
		}
		collected := make(chan error, 1)
		go func() {
			got, err := a.WaitApproval(t.Context(), ap.ID)
			if err == nil && got.Status != airlock.StatusApproved {
				err = fmt.Errorf("woke with the request %s", got.Status)
			}
			if err == nil {
				// What the wait returns — read whole before the wait, its
				// state read again after — is the request as stored.
				if want, err2 := b.Approval(t.Context(), ap.ID); err2 != nil || !reflect.DeepEqual(got, want) {
					err = fmt.Errorf("the wait returned %+v, the store holds %+v (%v)", got, want, err2)
				}
			}
			if err == nil {
				_, err = a.CollectApproval(t.Context(), ap.ID, rec)
			}
			collected <- err
		}()
		for postgres.Waiting(a, ap.ID) == 0 {
			time.Sleep(time.Millisecond)
		}
		if _, err := b.ResolveApproval(t.Context(), airlocktest.Approve(ap)); err != nil {
			t.Fatal(err)
		}
		mustWake(t, collected, "the check on replica A was not released by the approval on replica B")
		for _, db := range dbs {
			if _, err := db.CollectApproval(t.Context(), ap.ID, rec); airlock.ErrorCode(err) != airlock.CodeUsed {
				t.Fatalf("second collection: %v, want %s", err, airlock.CodeUsed)
			}
		}
	}
	for _, db := range dbs {
		airlocktest.MustVerify(t, db)
	}
}

// TestReplicasCollectWhatAnotherUsed: replica A sees a request approved,
// then replica B collects it. A's collection finds the request used and is
// refused: nothing of it is written. Unused, it is collected.
func TestReplicasCollectWhatAnotherUsed(t *testing.T) {
	dbs := replicas(t, 2, nil)
	a, b := dbs[0], dbs[1]
	rec := airlock.Record{Events: []airlock.Event{airlocktest.Event("decision", "a")}}
	settle := func(n int) airlock.Approval {
		ap, _, err := a.RequestApproval(t.Context(),
			airlocktest.NewApproval("a", fmt.Sprint("deploy ", n), airlock.Ask, time.Hour), airlock.Record{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.ResolveApproval(t.Context(), airlocktest.Approve(ap)); err != nil {
			t.Fatal(err)
		}
		if got, err := a.WaitApproval(t.Context(), ap.ID); err != nil || got.Status != airlock.StatusApproved {
			t.Fatalf("wait: %s, %v; want approved", got.Status, err)
		}
		return ap
	}

	used := settle(0)
	if _, err := b.CollectApproval(t.Context(), used.ID, rec); err != nil {
		t.Fatal(err)
	}
	head, err := a.Head(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.CollectApproval(t.Context(), used.ID, rec); airlock.ErrorCode(err) != airlock.CodeUsed {
		t.Fatalf("collection of a request used on another replica: %v, want %s", err, airlock.CodeUsed)
	}
	if after, err := a.Head(t.Context()); err != nil || after != head {
		t.Fatalf("head %d after the refused collection (%v), want %d: nothing written", after, err, head)
	}

	unused := settle(1)
	if _, err := a.CollectApproval(t.Context(), unused.ID, rec); err != nil {
		t.Fatal(err)
	}
	if _, err := b.CollectApproval(t.Context(), unused.ID, rec); airlock.ErrorCode(err) != airlock.CodeUsed {
		t.Fatalf("second collection: %v, want %s", err, airlock.CodeUsed)
	}
	for _, db := range dbs {
		airlocktest.MustVerify(t, db)
	}
}

// TestReplicasSessionChanges: a sign-out, a sign-in that ends the token's
// oldest session past the limit, and a token's revocation on replica B
// each wake replica A's session watchers (airlock.SessionWatcher): its
// inbox ends the streams of those sessions at once.
func TestReplicasSessionChanges(t *testing.T) {
	dbs := replicas(t, 2, nil)
	a, b := dbs[0], dbs[1]
	tok := airlock.Token{ID: "reviewer:bob", Role: airlock.RoleReviewer, Name: "bob", CreatedBy: "admin:root"}
	_, secret := airlock.NewTokenSecret()
	if _, err := b.CreateToken(t.Context(), tok, secret); err != nil {
		t.Fatal(err)
	}
	session := func(n int) airlock.Session {
		now := time.Now()
		return airlock.Session{ID: sha256.Sum256(fmt.Append(nil, "session ", n)), TokenID: tok.ID, Secret: secret,
			Created: now, Seen: now.Add(time.Duration(n) * time.Second)}
	}
	for n := range 2 {
		if _, err := b.CreateSession(t.Context(), session(n), 2); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		what string
		do   func() error
	}{
		{"a sign-out", func() error { return b.DeleteSession(t.Context(), session(0).ID) }},
		{"a sign-in past the limit", func() error {
			for n := 2; n < 4; n++ { // the second ends session 1
				if _, err := b.CreateSession(t.Context(), session(n), 2); err != nil {
					return err
				}
			}
			return nil
		}},
		{"a revocation", func() error { _, err := b.RevokeToken(t.Context(), tok.ID, "admin:root"); return err }},
	} {
		changed, stop := a.WatchSessions()
		if err := c.do(); err != nil {
			t.Fatal(err)
		}
		woke := make(chan error, 1)
		go func() { <-changed; woke <- nil }()
		mustWake(t, woke, c.what+" on replica B did not wake replica A's session watchers")
		stop()
	}
}

// TestReplicasShareABudget: 50 checks split over two replicas, each with
// its own gate holding the same standing grant with a budget of 10 uses:
// exactly 10 run, the other 40 ask naming the spent budget, and the
// store counts 10 uses.
func TestReplicasShareABudget(t *testing.T) {
	dbs := replicas(t, 2, nil)
	now := time.Now()
	gr := airlock.Grant{ID: "g-make", Agent: "coder-1", Tool: "Bash",
		Pattern: airlock.GrantPattern{Kind: airlock.PatternCommand, Command: []string{"make"}},
		Outcome: airlock.Auto, MaxTier: airlock.TierWrite, GrantedBy: "alice", Expires: now.Add(time.Hour),
		Budget: &airlock.Budget{Uses: 10, Per: airlock.BudgetPerGrant}}
	if _, err := dbs[0].CreateGrant(t.Context(), gr); err != nil {
		t.Fatal(err)
	}
	var checkers []airlocktest.Checker
	for _, db := range dbs {
		g := airlocktest.NewGate(t)
		g.SetGrants([]airlock.Grant{gr}, nil)
		checkers = append(checkers, &gate.Enforcer{Gate: g, Store: db})
	}
	a := airlock.Action{Agent: "coder-1", Tool: "Bash", Cwd: "/w", Args: airlock.MustArgs(map[string]any{"command": "make build"})}
	ran, asked := airlocktest.RaceChecks(t, checkers, a, 50)
	if ran != 10 || asked != 40 {
		t.Fatalf("50 racing checks over two replicas against a budget of 10: %d ran, %d asked", ran, asked)
	}
	used, err := dbs[1].BudgetUsed(t.Context(), []airlock.BudgetCharge{{Key: gr.BudgetKey(), Budget: *gr.Budget}})
	if err != nil || used[0] != 10 {
		t.Fatalf("the store counts %v used (%v)", used, err)
	}
	airlocktest.MustVerify(t, dbs[0])
}
