package postgres

import (
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
	"github.com/airlock-dev/airlock/postgres/pgtest"
)

// openSkewed opens a replica of schema on a machine whose clock is off by
// skew.
func openSkewed(t *testing.T, dsn, schema string, skew time.Duration) *DB {
	t.Helper()
	db := NewDB(dsn)
	db.Schema = schema
	db.clock.local = func() time.Time { return time.Now().Add(skew) }
	if err := db.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestReplicasKeepOneTime: two replicas on machines whose clocks are two
// hours apart keep the database server's time — here, the test's own
// machine's. A request one asks for expires when it says to the other: the
// one whose clock runs ahead does not expire it early, and events from
// both carry the same time.
func TestReplicasKeepOneTime(t *testing.T) {
	dsn, schema := pgtest.NewSchema(t)
	behind, ahead := openSkewed(t, dsn, schema, -time.Hour), openSkewed(t, dsn, schema, time.Hour)
	near := func(what string, got time.Time) {
		t.Helper()
		if d := time.Since(got); d.Abs() > 5*time.Second {
			t.Errorf("%s %s, %s from the database server's time", what, got, d)
		}
	}
	for _, db := range []*DB{behind, ahead} {
		now, err := db.Now(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		near("the store's clock", now)
	}
	ap, _, err := behind.RequestApproval(t.Context(), airlocktest.NewApproval("a", "deploy", airlock.Ask, time.Minute), airlock.Record{})
	if err != nil {
		t.Fatal(err)
	}
	near("the request's creation", ap.Created)
	if expired, err := ahead.ExpireDue(t.Context(), 10); err != nil || len(expired) != 0 {
		t.Fatalf("a replica whose clock runs an hour ahead expired %d requests (%v), want none", len(expired), err)
	}
	for _, db := range []*DB{behind, ahead} {
		evs, err := db.Append(t.Context(), airlock.Record{Events: []airlock.Event{airlocktest.Event("decision", "a")}})
		if err != nil {
			t.Fatal(err)
		}
		near("an event's time", evs[0].Time)
	}
	airlocktest.MustVerify(t, behind)
}

// TestClockMeasured: the offset is measured again every clockEvery; a
// failed measurement (the database out of reach) keeps the last.
func TestClockMeasured(t *testing.T) {
	dsn, schema := pgtest.NewSchema(t)
	db := openSkewed(t, dsn, schema, 3*time.Hour)
	if off := time.Duration(db.clock.offset.Load()); (off + 3*time.Hour).Abs() > 5*time.Second {
		t.Fatalf("offset %s, want about -3h", off)
	}
	skew := -2 * time.Hour
	db.clock.local = func() time.Time { return time.Now().Add(skew) } // the machine's clock was set
	if err := db.measureClock(t.Context()); err != nil {
		t.Fatal(err)
	}
	if off := time.Duration(db.clock.offset.Load()); (off - 2*time.Hour).Abs() > 5*time.Second {
		t.Fatalf("offset %s after the machine's clock moved, want about 2h", off)
	}
	db.pool.Close()
	if err := db.measureClock(t.Context()); err == nil {
		t.Fatal("a measurement on a closed pool succeeded")
	}
	if off := time.Duration(db.clock.offset.Load()); (off - 2*time.Hour).Abs() > 5*time.Second {
		t.Fatalf("offset %s after a failed measurement, want the last, about 2h", off)
	}
}
