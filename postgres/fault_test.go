package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
	"github.com/airlock-dev/airlock/postgres"
	"github.com/airlock-dev/airlock/postgres/pgtest"
)

// TestDatabaseDown: with the database out of reach, writes fail with
// EUNAVAILABLE (nothing half-written) and the store is not ready; once it
// is back, the store serves again, its chain intact, and its listener
// wakes waiters again.
func TestDatabaseDown(t *testing.T) {
	dsn, schema := pgtest.NewSchema(t)
	p, via := pgtest.NewProxy(t, dsn)
	db := postgres.NewDB(via)
	db.Schema = schema
	db.PollInterval = time.Hour
	db.StatementTimeout = 2 * time.Second
	if err := db.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	other := OpenSchema(t, dsn, schema, nil)

	rec := airlock.Record{Events: []airlock.Event{airlocktest.Event("decision", "a")}}
	if _, err := db.Append(t.Context(), rec); err != nil {
		t.Fatal(err)
	}
	p.Cut()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if _, err := db.Append(ctx, rec); airlock.ErrorCode(err) != airlock.EUNAVAILABLE {
		t.Fatalf("append with the database down: %v, want unavailable", err)
	}
	if _, _, err := db.RequestApproval(ctx, airlocktest.NewApproval("a", "down", airlock.Ask, time.Hour), airlock.Record{}); airlock.ErrorCode(err) != airlock.EUNAVAILABLE {
		t.Fatalf("request with the database down: %v, want unavailable", err)
	}
	if err := db.Ready(ctx); airlock.ErrorCode(err) != airlock.EUNAVAILABLE {
		t.Fatalf("ready with the database down: %v", err)
	}
	if page, err := other.FindApprovals(t.Context(), airlock.ApprovalFilter{}); err != nil || len(page.Approvals) != 0 {
		t.Fatalf("a request failed half-written: %+v %v", page.Approvals, err)
	}

	p.Restore()
	deadline := time.Now().Add(20 * time.Second)
	for db.Ready(t.Context()) != nil {
		if time.Now().After(deadline) {
			t.Fatalf("not ready after the database came back: %v", db.Ready(t.Context()))
		}
		time.Sleep(50 * time.Millisecond)
	}
	ap, _, err := db.RequestApproval(t.Context(), airlocktest.NewApproval("a", "up", airlock.Ask, time.Hour), airlock.Record{})
	if err != nil {
		t.Fatal(err)
	}
	for postgres.ListenerPID(db) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the listener did not reconnect")
		}
		time.Sleep(50 * time.Millisecond)
	}
	woke := make(chan error, 1)
	go func() { _, err := db.WaitApproval(t.Context(), ap.ID); woke <- err }()
	time.Sleep(50 * time.Millisecond)
	if _, err := other.ResolveApproval(t.Context(), airlocktest.Approve(ap)); err != nil {
		t.Fatal(err)
	}
	mustWake(t, woke, "after the outage, a change on another replica did not wake the waiter")
	// The first append, the request and its resolution: nothing of the
	// writes refused while the database was away.
	if rep := airlocktest.MustVerify(t, db); rep.Events != 3 {
		t.Fatalf("%d events, want 3", rep.Events)
	}
}

// TestDatabaseSilent: a database that stops answering without closing the
// connection (a partition: the server cannot time the store out) fails a
// write within twice the statement timeout, with EUNAVAILABLE, rather than
// holding every writer of the replica.
func TestDatabaseSilent(t *testing.T) {
	dsn, schema := pgtest.NewSchema(t)
	p, via := pgtest.NewProxy(t, dsn)
	db := postgres.NewDB(via)
	db.Schema = schema
	db.StatementTimeout = time.Second
	if err := db.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	rec := airlock.Record{Events: []airlock.Event{airlocktest.Event("decision", "a")}}
	if _, err := db.Append(t.Context(), rec); err != nil {
		t.Fatal(err)
	}
	p.Stall()
	start := time.Now()
	_, err := db.Append(context.Background(), rec)
	if airlock.ErrorCode(err) != airlock.EUNAVAILABLE {
		t.Fatalf("append to a silent database: %v, want unavailable", err)
	}
	if waited := time.Since(start); waited > 10*time.Second {
		t.Fatalf("the append failed after %s", waited)
	}
	p.Restore()
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, err := db.Append(t.Context(), rec)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no write after the database answered again: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	airlocktest.MustVerify(t, db)
}
