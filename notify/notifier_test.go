package notify_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
	"github.com/airlock-dev/airlock/gate"
	"github.com/airlock-dev/airlock/notify"
	"github.com/airlock-dev/airlock/notify/notifytest"
	"github.com/airlock-dev/airlock/sqlite"
)

// recorder is a channel that records what it delivered, by key.
type recorder struct {
	mu   sync.Mutex
	got  map[string]int
	kind []string
	fail error
}

func newRecorder() *recorder { return &recorder{got: map[string]int{}} }

func (r *recorder) Deliver(_ context.Context, d *notify.Delivery) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		return "", r.fail
	}
	r.got[d.Key]++
	r.kind = append(r.kind, d.Kind)
	return "ref-" + d.Key, nil
}

func (r *recorder) count() (deliveries, total int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range r.got {
		total += n
	}
	return len(r.got), total
}

func hook(name string, ch notify.Channel) *notify.Spec {
	return &notify.Spec{Name: name, Type: "webhook", Everyone: true, Channel: ch}
}

func run(t *testing.T, n *notify.Notifier) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("notifier: %v", err)
		}
	})
}

func open(t *testing.T, path string, specs ...*notify.Spec) *sqlite.DB {
	t.Helper()
	db := sqlite.NewDB(path)
	if err := db.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	db.SetRouter(notify.NewRouter(specs, 0))
	return db
}

func waitSent(t *testing.T, db *sqlite.DB, want int) []airlock.Notification {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ns, err := db.Notifications(context.Background(), airlock.NotificationFilter{Status: airlock.NotificationSent, Limit: 10000})
		if err != nil {
			t.Fatal(err)
		}
		if len(ns) >= want || time.Now().After(deadline) {
			if len(ns) != want {
				t.Fatalf("%d deliveries sent, want %d", len(ns), want)
			}
			return ns
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestDeliveredAfterRestart: a notice committed by a server that stopped
// before delivering it (kill -9 between commit and delivery) is delivered
// by the next one.
func TestDeliveredAfterRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "airlock.db")
	rec := newRecorder()
	db := open(t, path, hook("ops", rec))
	e := &gate.Enforcer{Gate: airlocktest.NewGate(t), Store: db}
	if enf := e.Enforce(t.Context(), airlocktest.Action("write_file", "a.txt")); !enf.Allowed {
		t.Fatalf("%+v", enf)
	}
	db.Close() // no notifier ever ran

	db = open(t, path, hook("ops", rec))
	defer db.Close()
	run(t, &notify.Notifier{Store: db, Channels: map[string]*notify.Spec{"ops": hook("ops", rec)}, Poll: 10 * time.Millisecond})
	ns := waitSent(t, db, 1)
	if n, total := rec.count(); n != 1 || total != 1 || ns[0].Kind != airlock.EventDecision || ns[0].Ref != "ref-"+ns[0].Key {
		t.Fatalf("delivered %d (%d attempts): %+v", n, total, ns)
	}
}

// TestLeaseOfDeadWorker: a delivery claimed by a worker that died
// mid-delivery is delivered by another once the lease runs out.
func TestLeaseOfDeadWorker(t *testing.T) {
	rec := newRecorder()
	db := open(t, filepath.Join(t.TempDir(), "airlock.db"), hook("ops", rec))
	defer db.Close()
	e := &gate.Enforcer{Gate: airlocktest.NewGate(t), Store: db}
	if enf := e.Enforce(t.Context(), airlocktest.Action("write_file", "b.txt")); !enf.Allowed {
		t.Fatalf("%+v", enf)
	}
	const timeout = 100 * time.Millisecond
	claimed, err := db.ClaimNotifications(t.Context(), 10, 2*timeout) // the worker that dies
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claimed %+v, %v", claimed, err)
	}
	start := time.Now()
	run(t, &notify.Notifier{Store: db, Channels: map[string]*notify.Spec{"ops": hook("ops", rec)}, Poll: 10 * time.Millisecond, Timeout: timeout})
	ns := waitSent(t, db, 1)
	if time.Since(start) < 2*timeout-10*time.Millisecond {
		t.Errorf("delivered %s after the claim: within the dead worker's lease", time.Since(start))
	}
	if n, total := rec.count(); n != 1 || total != 1 || ns[0].Attempts != 2 { // the dead worker's attempt counts
		t.Fatalf("delivered %d (%d attempts), %+v", n, total, ns[0])
	}
}

// TestConcurrentNotifiers: two notifiers (replicas) on one store deliver
// each of many notices exactly once.
func TestConcurrentNotifiers(t *testing.T) {
	rec := newRecorder()
	db := open(t, filepath.Join(t.TempDir(), "airlock.db"), hook("ops", rec))
	defer db.Close()
	chans := map[string]*notify.Spec{"ops": hook("ops", rec)}
	run(t, &notify.Notifier{Store: db, Channels: chans, Concurrency: 4, Poll: 5 * time.Millisecond})
	run(t, &notify.Notifier{Store: db, Channels: chans, Concurrency: 4, Poll: 5 * time.Millisecond})
	const n = 200
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := db.Append(context.Background(), airlock.Record{
				Events:        []airlock.Event{airlocktest.Event("decision", "a")},
				Notifications: []airlock.Notification{{Kind: airlock.EventDecision, Recipients: []string{"alice"}, Subject: strings.Repeat("x", i%7)}},
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	waitSent(t, db, n)
	if got, total := rec.count(); got != n || total != n {
		t.Fatalf("%d notices delivered in %d attempts, want each of %d once", got, total, n)
	}
}

// TestUnconfiguredChannel: a delivery for a channel that is no longer
// configured is dead at once, saying so.
func TestUnconfiguredChannel(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "airlock.db"), hook("gone", newRecorder()))
	defer db.Close()
	if _, err := db.Append(t.Context(), airlock.Record{Events: []airlock.Event{airlocktest.Event("decision", "a")},
		Notifications: []airlock.Notification{{Kind: airlock.EventDecision, Recipients: []string{"alice"}}}}); err != nil {
		t.Fatal(err)
	}
	run(t, &notify.Notifier{Store: db, Poll: 5 * time.Millisecond})
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		ns, _ := db.Notifications(t.Context(), airlock.NotificationFilter{Status: airlock.NotificationDead})
		if len(ns) == 1 {
			if ns[0].Attempts != 1 || !strings.Contains(ns[0].LastError, `no channel "gone" is configured`) {
				t.Fatalf("dead letter %+v", ns[0])
			}
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("the delivery for an unconfigured channel is not dead")
}

// TestPermanentErrorIsDeadAtOnce: an error no retry can help does not
// wait for the attempts to run out.
func TestPermanentErrorIsDeadAtOnce(t *testing.T) {
	rec := newRecorder()
	rec.fail = notify.Permanent(errors.New("invalid_auth"))
	env := notifytest.New(t, notifytest.Options{Attempts: 5}, hook("ops", rec))
	ap, _ := env.Ask(t, "perm")
	d := env.Delivery(t, "ops", airlock.EventApprovalRequested, ap.ID)
	if d.Status != airlock.NotificationDead || d.Attempts != 1 || d.LastError != "invalid_auth" {
		t.Fatalf("%+v, want dead after one attempt", d)
	}
}

// TestReminderDroppedOnceSettled: a reminder of a request that ended
// before it came due says nothing, and says why.
func TestReminderDroppedOnceSettled(t *testing.T) {
	rec := newRecorder()
	// The ask's deadline is 10m: a 10m-1s lead makes its reminder due a
	// second after the request.
	env := notifytest.New(t, notifytest.Options{Remind: 10*time.Minute - time.Second}, hook("ops", rec))
	ap, _ := env.Ask(t, "remind")
	if _, err := env.Store.CancelApproval(t.Context(), ap.ID, "bob", "", airlock.SurfaceCLI); err != nil {
		t.Fatal(err)
	}
	d := env.Delivery(t, "ops", airlock.NoticeReminder, ap.ID)
	if d.Status != airlock.NotificationDropped || d.LastError != "the request is cancelled" {
		t.Fatalf("reminder %+v, want dropped", d)
	}
	ap2, _ := env.Ask(t, "remind-2")
	d = env.Delivery(t, "ops", airlock.NoticeReminder, ap2.ID)
	if d.Status != airlock.NotificationSent {
		t.Fatalf("reminder of a pending request %+v, want sent", d)
	}
}

// TestNeverReportedAttempts: a delivery whose last allowed attempt never
// reported (its notifier died delivering it, as a notice that crashes its
// process would make it die every time) is dead, not attempted again.
func TestNeverReportedAttempts(t *testing.T) {
	rec := newRecorder()
	db := open(t, filepath.Join(t.TempDir(), "airlock.db"), hook("ops", rec))
	defer db.Close()
	if _, err := db.Append(t.Context(), airlock.Record{Events: []airlock.Event{airlocktest.Event("decision", "a")},
		Notifications: []airlock.Notification{{Kind: airlock.EventDecision, Recipients: []string{"alice"}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ClaimNotifications(t.Context(), 1, time.Millisecond); err != nil { // the attempt that died
		t.Fatal(err)
	}
	time.Sleep(2 * time.Millisecond)
	run(t, &notify.Notifier{Store: db, Channels: map[string]*notify.Spec{"ops": hook("ops", rec)}, Attempts: 1, Poll: 5 * time.Millisecond})
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if ns, _ := db.Notifications(t.Context(), airlock.NotificationFilter{Status: airlock.NotificationDead}); len(ns) == 1 {
			if !strings.Contains(ns[0].LastError, "never reported") {
				t.Fatalf("dead letter %+v", ns[0])
			}
			if n, _ := rec.count(); n != 0 {
				t.Fatalf("delivered %d times past its last attempt", n)
			}
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("the delivery is not dead")
}

// TestJoinedRequestNotifiesOnce: an identical action while a request is
// pending joins it, and its reviewers are not told twice.
func TestJoinedRequestNotifiesOnce(t *testing.T) {
	rec := newRecorder()
	env := notifytest.New(t, notifytest.Options{}, hook("ops", rec))
	ap, first := env.Ask(t, "twice")
	second := make(chan airlock.Enforcement, 1)
	go func() { second <- env.Enforcer.Enforce(context.Background(), airlocktest.Action("deploy", "twice")) }()
	// The second check joins the first's request before it is resolved.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		evs, _ := env.Store.Events(t.Context(), airlock.EventFilter{Kind: airlock.EventDecision, Limit: 10})
		if len(evs) == 2 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := env.Store.ResolveApproval(t.Context(), airlock.Resolution{ApprovalID: ap.ID, Status: airlock.StatusApproved,
		ActionHash: ap.ActionHash, Reviewer: airlock.Reviewer{Name: "bob"}, Surface: airlock.SurfaceCLI}); err != nil {
		t.Fatal(err)
	}
	for _, ch := range []<-chan airlock.Enforcement{first, second} {
		if enf := <-ch; enf.Approval == nil || enf.Approval.ID != ap.ID {
			t.Fatalf("a check did not wait on the one request: %+v", enf)
		}
	}
	env.Delivery(t, "ops", airlock.EventApprovalResolved, ap.ID)
	ns, err := env.Store.Notifications(t.Context(), airlock.NotificationFilter{Kind: airlock.EventApprovalRequested})
	if err != nil || len(ns) != 1 {
		t.Fatalf("request notices %+v, %v; want one", ns, err)
	}
}
