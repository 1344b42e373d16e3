package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
	"github.com/airlock-dev/airlock/checkpoint"
	"github.com/airlock-dev/airlock/sqlite"
)

// TestCheckpointDetectsRewrite is the attack checkpoints exist for: someone
// holding the database file truncates the log, or rewrites it and
// recomputes every later hash. Verify alone says the chain is intact; the
// checkpoint taken before names what changed.
func TestCheckpointDetectsRewrite(t *testing.T) {
	for _, tt := range []struct {
		name    string
		sql     []string
		rechain int64  // recompute the chain from this seq on
		kind    string // "": the checkpoint still holds
		says    string
	}{
		{"untouched", nil, 0, "", ""},
		{"truncated below the checkpoint", []string{`DELETE FROM events WHERE seq > 40`}, 0,
			checkpoint.Truncated, "log truncated: head seq 40 < checkpoint seq 57"},
		{"truncated to the checkpoint's seq", []string{`DELETE FROM events WHERE seq > 57`}, 0, "", ""},
		{"rewritten and re-chained from seq 30", []string{`UPDATE events SET agent = 'nobody' WHERE seq = 30`}, 30,
			checkpoint.Rewritten, "log rewritten: seq 57 hash sha256:"},
		{"rewritten and re-chained at the checkpoint's seq", []string{`UPDATE events SET agent = 'nobody' WHERE seq = 57`}, 57,
			checkpoint.Rewritten, "log rewritten: seq 57 hash sha256:"},
		{"truncated, then forged past the checkpoint", []string{
			`DELETE FROM events WHERE seq > 50`,
			`INSERT INTO events (seq, time, kind, agent, payload, prev, hash)
			 SELECT seq + 10, time, kind, 'forger', payload, prev, hash FROM events WHERE seq > 40`,
		}, 51, checkpoint.Rewritten, "log rewritten: seq 57 hash sha256:"},
		{"rewritten and re-chained from seq 1", []string{`UPDATE events SET agent = 'nobody' WHERE seq = 1`}, 1,
			checkpoint.OtherLog, "another log's checkpoint, or this log was rewritten from seq 1"},
		// The limit of a checkpoint: it proves the log up to its seq, no
		// further.
		{"rewritten after the checkpoint", []string{`UPDATE events SET agent = 'nobody' WHERE seq = 62`}, 62, "", ""},
		{"truncated after the checkpoint", []string{`DELETE FROM events WHERE seq > 60`}, 0, "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "airlock.db")
			db := open(t, path)
			appendN(t, db, 57)
			skey, vkey := airlocktest.CheckpointKey(t, 1)
			c, err := checkpoint.New(db, skey)
			if err != nil {
				t.Fatal(err)
			}
			sc, _, err := c.Sign(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			appendN(t, db, 12) // seq 58 records the checkpoint; 59–70 follow
			db.Close()

			// The checkpoint kept elsewhere: only its signed note.
			keys, err := checkpoint.ParseVerifierKeys([]string{vkey})
			if err != nil {
				t.Fatal(err)
			}
			cp, err := checkpoint.Open([]byte(sc.Note), keys)
			if err != nil || cp.Seq != 57 {
				t.Fatalf("checkpoint %+v: %v", cp, err)
			}

			airlocktest.TamperSQLite(t, path, tt.sql...)
			if tt.rechain > 0 {
				airlocktest.RechainSQLite(t, path, tt.rechain)
			}
			db = open(t, path)
			defer db.Close()
			rep := airlocktest.MustVerify(t, db) // the chain alone looks intact
			err = checkpoint.Check(t.Context(), cp, rep, db.Events)
			if tt.kind == "" {
				if err != nil {
					t.Fatalf("the checkpoint does not hold: %v", err)
				}
				return
			}
			ce, ok := err.(*checkpoint.Error)
			if !ok {
				t.Fatalf("CheckCheckpoint = %v, want a *CheckpointError", err)
			}
			if ce.Kind != tt.kind || !strings.Contains(ce.Msg, tt.says) {
				t.Errorf("CheckCheckpoint = %s %q, want %s saying %q", ce.Kind, ce.Msg, tt.kind, tt.says)
			}
		})
	}
}

// TestCheckpointOverBrokenChain: a chain that breaks before the
// checkpoint's seq leaves it unverified; one that breaks after it does not
// touch it.
func TestCheckpointOverBrokenChain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "airlock.db")
	db := open(t, path)
	appendN(t, db, 20)
	db.Close()
	airlocktest.TamperSQLite(t, path, `UPDATE events SET agent = 'nobody' WHERE seq = 10`)
	db = open(t, path)
	defer db.Close()
	rep, err := db.Verify(t.Context())
	if err != nil || rep.FirstBad != 10 {
		t.Fatalf("verify %+v %v", rep, err)
	}
	evs, _ := db.Events(t.Context(), airlock.EventFilter{Limit: 20})
	origin := checkpoint.LogOrigin(evs[0].Hash)
	before := checkpoint.Checkpoint{Origin: origin, Seq: 9, Hash: evs[8].Hash}
	if err := checkpoint.Check(t.Context(), before, rep, db.Events); err != nil {
		t.Errorf("a checkpoint before the break: %v", err)
	}
	after := checkpoint.Checkpoint{Origin: origin, Seq: 15, Hash: evs[14].Hash}
	err = checkpoint.Check(t.Context(), after, rep, db.Events)
	if ce, ok := err.(*checkpoint.Error); !ok || ce.Kind != checkpoint.Unverified ||
		ce.Msg != "checkpoint seq 15 not verified: the chain breaks before it, at seq 10" {
		t.Errorf("a checkpoint after the break: %v", err)
	}
}

func open(t *testing.T, path string) *sqlite.DB {
	t.Helper()
	db := sqlite.NewDB(path)
	if err := db.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	return db
}

func appendN(t *testing.T, db *sqlite.DB, n int) {
	t.Helper()
	for i := range n {
		e := airlocktest.Event("decision", fmt.Sprint("agent-", i))
		if _, err := db.Append(t.Context(), airlock.Record{Events: []airlock.Event{e}}); err != nil {
			t.Fatal(err)
		}
	}
}
