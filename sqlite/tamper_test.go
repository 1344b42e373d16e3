package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
	"github.com/airlock-dev/airlock/sqlite"
)

// TestTamperDetected edits the database file the way an attacker with
// write access would — dropping the append-only triggers first — and
// checks that Verify names the first bad sequence number each time.
func TestTamperDetected(t *testing.T) {
	for _, tt := range []struct {
		name   string
		sql    []string
		bad    int64
		reason string
	}{
		{"flip a payload byte", []string{`UPDATE events SET payload = CAST(replace(CAST(payload AS TEXT), '"n":4', '"n":5') AS BLOB) WHERE seq = 4`}, 4, "edited"},
		{"change the agent", []string{`UPDATE events SET agent = 'someone-else' WHERE seq = 7`}, 7, "edited"},
		{"change the time", []string{`UPDATE events SET time = time + 1 WHERE seq = 2`}, 2, "edited"},
		{"change the kind", []string{`UPDATE events SET kind = 'proposal' WHERE seq = 9`}, 9, "edited"},
		{"flip a hash byte", []string{`UPDATE events SET hash = zeroblob(32) WHERE seq = 5`}, 5, "edited"},
		{"truncate a hash", []string{`UPDATE events SET hash = substr(hash, 1, 31) WHERE seq = 5`}, 5, "edited"},
		{"delete a row", []string{`DELETE FROM events WHERE seq = 5`}, 5, "missing"},
		{"delete the first row", []string{`DELETE FROM events WHERE seq = 1`}, 1, "missing"},
		{"swap two rows", []string{
			`UPDATE events SET seq = 1003 WHERE seq = 3`,
			`UPDATE events SET seq = 3 WHERE seq = 6`,
			`UPDATE events SET seq = 6 WHERE seq = 1003`,
		}, 3, "link"},
		{"insert a row", []string{
			`UPDATE events SET seq = seq + 1000 WHERE seq > 5`,
			`UPDATE events SET seq = seq - 999 WHERE seq > 1000`,
			`INSERT INTO events (seq, time, kind, agent, payload, prev, hash)
			 SELECT 6, time, 'decision', 'forger', CAST('{"n":0}' AS BLOB), hash, zeroblob(32) FROM events WHERE seq = 5`,
		}, 6, "edited"},
		{"append a forged row", []string{
			`INSERT INTO events (seq, time, kind, agent, payload, prev, hash)
			 SELECT 11, time, kind, agent, payload, prev, hash FROM events WHERE seq = 10`,
		}, 11, "link"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "airlock.db")
			db := sqlite.NewDB(path)
			if err := db.Open(context.Background()); err != nil {
				t.Fatal(err)
			}
			for i := range 10 {
				e := airlocktest.Event("decision", fmt.Sprint("agent-", i))
				e.Payload = []byte(fmt.Sprintf(`{"n":%d}`, i+1))
				if _, err := db.Append(t.Context(), airlock.Record{Events: []airlock.Event{e}}); err != nil {
					t.Fatal(err)
				}
			}
			airlocktest.MustVerify(t, db)
			db.Close()

			raw, err := sql.Open("sqlite", "file:"+path)
			if err != nil {
				t.Fatal(err)
			}
			stmts := append([]string{`DROP TRIGGER events_no_update`, `DROP TRIGGER events_no_delete`}, tt.sql...)
			for _, s := range stmts {
				if _, err := raw.Exec(s); err != nil {
					t.Fatalf("%s: %v", s, err)
				}
			}
			raw.Close()

			db = sqlite.NewDB(path)
			if err := db.Open(context.Background()); err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			rep, err := db.Verify(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if rep.FirstBad != tt.bad {
				t.Fatalf("first bad seq %d (%s), want %d", rep.FirstBad, rep.Problem, tt.bad)
			}
			if rep.Events != tt.bad-1 || rep.HeadSeq != tt.bad-1 {
				t.Errorf("report %+v: the events before seq %d verify", rep, tt.bad)
			}
			if !strings.Contains(rep.Problem, tt.reason) {
				t.Errorf("problem %q does not say %q", rep.Problem, tt.reason)
			}
		})
	}
}

// TestAppendOnlyInSQL checks that the schema itself refuses edits.
func TestAppendOnlyInSQL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "airlock.db")
	db := sqlite.NewDB(path)
	if err := db.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Append(t.Context(), airlock.Record{Events: []airlock.Event{airlocktest.Event("decision", "a")}}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, s := range []string{`UPDATE events SET agent = 'b'`, `DELETE FROM events`} {
		if _, err := raw.Exec(s); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: %v, want the append-only trigger to refuse", s, err)
		}
	}
}
