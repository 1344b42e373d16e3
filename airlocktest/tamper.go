package airlocktest

import (
	"database/sql"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
)

// TamperSQLite changes an SQLite database file behind the store's back, as
// someone holding the file would: it drops the append-only triggers and
// runs stmts. The database must be closed, and the test binary must have
// the "sqlite" driver registered (package sqlite does).
func TamperSQLite(tb testing.TB, path string, stmts ...string) {
	tb.Helper()
	raw := openRaw(tb, path)
	defer raw.Close()
	for _, s := range append([]string{`DROP TRIGGER IF EXISTS events_no_update`, `DROP TRIGGER IF EXISTS events_no_delete`}, stmts...) {
		if _, err := raw.Exec(s); err != nil {
			tb.Fatalf("%s: %v", s, err)
		}
	}
}

// RechainSQLite recomputes the hash chain of an SQLite database file from
// seq from on, after TamperSQLite rewrote events there: every event links
// to its predecessor and its hash covers its contents again, so that the
// rewrite verifies as an intact chain. Only a checkpoint kept elsewhere
// can tell.
func RechainSQLite(tb testing.TB, path string, from int64) {
	tb.Helper()
	raw := openRaw(tb, path)
	defer raw.Close()
	var prev airlock.Hash
	if from > 1 {
		var b []byte
		if err := raw.QueryRow(`SELECT hash FROM events WHERE seq = ?`, from-1).Scan(&b); err != nil {
			tb.Fatal(err)
		}
		copy(prev[:], b)
	}
	rows, err := raw.Query(`SELECT seq, time, kind, trace_id, agent, outcome, approval_id, payload FROM events WHERE seq >= ? ORDER BY seq`, from)
	if err != nil {
		tb.Fatal(err)
	}
	var evs []airlock.Event
	for rows.Next() {
		var e airlock.Event
		var t int64
		if err := rows.Scan(&e.Seq, &t, &e.Kind, &e.TraceID, &e.Agent, &e.Outcome, &e.ApprovalID, &e.Payload); err != nil {
			tb.Fatal(err)
		}
		e.Time = time.Unix(0, t).UTC()
		evs = append(evs, e)
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	rows.Close()
	for _, e := range evs {
		e.Seal(e.Seq, prev)
		if _, err := raw.Exec(`UPDATE events SET prev = ?, hash = ? WHERE seq = ?`, e.Prev[:], e.Hash[:], e.Seq); err != nil {
			tb.Fatal(err)
		}
		prev = e.Hash
	}
}

func openRaw(tb testing.TB, path string) *sql.DB {
	tb.Helper()
	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		tb.Fatal(err)
	}
	return raw
}
