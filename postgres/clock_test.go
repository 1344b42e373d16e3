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

// TestClockMeasured: a replica measures its clock's offset from the
// database server's when it opens, again every clockEvery (here, at once:
// the machine's clock was set meanwhile), and keeps the last when a
// measurement fails (the database out of reach). It reports it, but keeps
// its machine's time, as the rest of Airlock on the machine does.
func TestClockMeasured(t *testing.T) {
	dsn, schema := pgtest.NewSchema(t)
	db := openSkewed(t, dsn, schema, 3*time.Hour)
	if off := time.Duration(db.clock.offset.Load()); (off + 3*time.Hour).Abs() > 5*time.Second {
		t.Fatalf("offset %s, want about -3h", off)
	}
	evs, err := db.Append(t.Context(), airlock.Record{Events: []airlock.Event{airlocktest.Event("decision", "a")}})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(evs[0].Time); d.Abs() > 5*time.Second {
		t.Fatalf("an event stamped %s from this machine's time, want its time", d)
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
