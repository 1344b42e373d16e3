// Package notifytest runs notification channels end to end in tests, from
// a decision to a delivery through the channels under test.
//
// It holds a real SQLite store, an enforcer deciding by
// airlocktest.Policy, and a Notifier delivering through the channels.
package notifytest

import (
	"context"
	"crypto/sha256"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
	"github.com/airlock-dev/airlock/gate"
	"github.com/airlock-dev/airlock/notify"
	"github.com/airlock-dev/airlock/sqlite"
)

// Env is a store, an enforcer and a running notifier.
type Env struct {
	Store    *sqlite.DB
	Enforcer *gate.Enforcer
	Notifier *notify.Notifier
}

// Options tune an Env; zero values take test-friendly defaults.
type Options struct {
	// Remind is the router's reminder lead (0: none).
	Remind time.Duration
	// Attempts, FirstRetry: the notifier's (default 3 and 10ms).
	Attempts   int
	FirstRetry time.Duration
	// Stopped leaves the notifier not running: call Start.
	Stopped bool
}

// New opens a fresh store in a temporary directory, routes its notices to
// specs, and starts a notifier over them until the test ends. The store
// knows agent-1 as an agent (an agent token), and admin "root" (an admin
// token).
func New(t testing.TB, opts Options, specs ...*notify.Spec) *Env {
	t.Helper()
	db := sqlite.NewDB(filepath.Join(t.TempDir(), "airlock.db"))
	if err := db.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	byName := map[string]*notify.Spec{}
	for _, s := range specs {
		byName[s.Name] = s
	}
	db.SetRouter(notify.NewRouter(specs, opts.Remind))
	for i, tok := range []airlock.Token{
		{ID: "tok-agent", Role: airlock.RoleAgent, Name: "agent-1", Agent: "agent-1"},
		{ID: "tok-root", Role: airlock.RoleAdmin, Name: "root"},
	} {
		if _, err := db.CreateToken(context.Background(), tok, sha256.Sum256([]byte{byte(i)})); err != nil {
			t.Fatal(err)
		}
	}
	env := &Env{
		Store:    db,
		Enforcer: &gate.Enforcer{Gate: airlocktest.NewGate(t), Store: db, GrantTTL: time.Hour},
		Notifier: &notify.Notifier{Store: db, Channels: byName, InboxURL: "https://airlock.example",
			Attempts: max(opts.Attempts, 3), FirstRetry: opts.FirstRetry, MaxRetry: time.Second, Poll: 20 * time.Millisecond,
			Timeout: 5 * time.Second},
	}
	if env.Notifier.FirstRetry == 0 {
		env.Notifier.FirstRetry = 10 * time.Millisecond
	}
	if !opts.Stopped {
		env.Start(t)
	}
	return env
}

// Start runs the notifier until the test ends.
func (e *Env) Start(t testing.TB) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Notifier.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("notifier: %v", err)
		}
	})
}

// Ask enforces a "deploy" action of agent-1 (an ask: reviewer bob, owner
// alice, requested by carol) in the background, and returns the pending
// request and a channel that receives the enforcement once it is settled.
func (e *Env) Ask(t testing.TB, target string) (airlock.Approval, <-chan airlock.Enforcement) {
	t.Helper()
	return e.AskAction(t, airlocktest.Action("deploy", target))
}

// AskAction enforces a, which must ask, in the background, and returns
// its pending request and a channel that receives the enforcement once it
// is settled.
func (e *Env) AskAction(t testing.TB, a airlock.Action) (airlock.Approval, <-chan airlock.Enforcement) {
	t.Helper()
	done := make(chan airlock.Enforcement, 1)
	go func() { done <- e.Enforcer.Enforce(context.Background(), a) }()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		page, err := e.Store.FindApprovals(context.Background(), airlock.ApprovalFilter{Status: []airlock.ApprovalStatus{airlock.StatusPending}, Tool: a.Tool})
		if err != nil {
			t.Fatal(err)
		}
		for _, ap := range page.Approvals {
			if string(a.Args) == string(ap.Args) {
				return ap, done
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no pending request for %s %s", a.Tool, a.Args)
	return airlock.Approval{}, nil
}

// Remember is what a server wires into notify.Clicks.Remember: the
// standing grant of an approved request, through the gate and the store.
func (e *Env) Remember(ctx context.Context, ap airlock.Approval, by string) (airlock.Grant, error) {
	return e.Enforcer.RememberApproved(ctx, ap, nil, nil, by, "approved and remembered from chat", 0)
}

// Delivery waits until the delivery of kind through channel about request
// id ("" for any) is settled (sent, dead or dropped), and returns it.
func (e *Env) Delivery(t testing.TB, channel, kind, id string) airlock.Notification {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		ns, err := e.Store.Notifications(context.Background(), airlock.NotificationFilter{Channel: channel, Kind: kind, ApprovalID: id})
		if err != nil {
			t.Fatal(err)
		}
		if len(ns) > 0 && ns[0].Status.Settled() {
			return ns[0]
		}
		time.Sleep(5 * time.Millisecond)
	}
	ns, _ := e.Store.Notifications(context.Background(), airlock.NotificationFilter{Channel: channel})
	t.Fatalf("no settled %s delivery via %s for %q; deliveries: %+v", kind, channel, id, ns)
	return airlock.Notification{}
}

// Refusals returns the access.refused events recorded so far.
func (e *Env) Refusals(t testing.TB) []airlock.Event {
	t.Helper()
	evs, err := e.Store.Events(context.Background(), airlock.EventFilter{Kind: airlock.EventAccessRefused, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// Head returns the audit log's last sequence number: a test compares it
// before and after a refused request to prove nothing was written.
func (e *Env) Head(t testing.TB) int64 {
	t.Helper()
	h, err := e.Store.Head(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// Approval reads request id from the store.
func (e *Env) Approval(t testing.TB, id string) airlock.Approval {
	t.Helper()
	ap, err := e.Store.Approval(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return ap
}

// Released waits for the enforcement of a check started by Ask, and fails
// the test if it is not released within 10 seconds.
func Released(t testing.TB, done <-chan airlock.Enforcement) airlock.Enforcement {
	t.Helper()
	select {
	case enf := <-done:
		return enf
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting check was not released")
		return airlock.Enforcement{}
	}
}
