package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
)

// TestQueuedWriteWithdrawnAtDeadline: a write queued behind a batch that
// waits for the database (another process holds its lock) is withdrawn
// when its context ends, and never written; the stalled batch commits once
// the lock is free.
func TestQueuedWriteWithdrawnAtDeadline(t *testing.T) {
	db := MustOpen(t, nil)
	other, err := sql.Open("sqlite", "file:"+db.Path+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tx, err := other.Begin() // the other process's write lock
	if err != nil {
		t.Fatal(err)
	}
	leader := make(chan error, 1)
	go func() {
		_, err := db.Append(context.Background(), airlock.Record{Events: []airlock.Event{airlocktest.Event("decision", "leader")}})
		leader <- err
	}()
	time.Sleep(50 * time.Millisecond) // the leader's batch now waits for the lock
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = db.Append(ctx, airlock.Record{Events: []airlock.Event{airlocktest.Event("decision", "withdrawn")}})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("queued append: %v, want its deadline", err)
	}
	if waited := time.Since(start); waited > 5*time.Second {
		t.Errorf("the queued append returned after %s, held behind the stalled batch", waited)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := <-leader; err != nil {
		t.Fatalf("the stalled batch: %v", err)
	}
	evs, err := db.Events(context.Background(), airlock.EventFilter{})
	if err != nil || len(evs) != 1 || evs[0].Agent != "leader" {
		t.Fatalf("events %+v, %v; want the leader's only", evs, err)
	}
	// The store still takes writes: nobody was left leading nothing.
	if _, err := db.Append(context.Background(), airlock.Record{Events: []airlock.Event{airlocktest.Event("decision", "after")}}); err != nil {
		t.Fatal(err)
	}
}
