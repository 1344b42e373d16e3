package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
	"github.com/airlock-dev/airlock/sqlite"
)

// MustOpen opens a fresh store in a temporary directory, closed when the
// test ends.
func MustOpen(tb testing.TB, clock func() time.Time) *sqlite.DB {
	tb.Helper()
	db := sqlite.NewDB(filepath.Join(tb.TempDir(), "airlock.db"))
	db.Clock = clock
	db.PollInterval = 20 * time.Millisecond
	if err := db.Open(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

func TestConformance(t *testing.T) {
	airlocktest.TestStore(t, func(t *testing.T, clock func() time.Time) airlock.Store {
		return MustOpen(t, clock)
	})
}

func TestMigrationsRecorded(t *testing.T) {
	db := MustOpen(t, nil)
	db.Close()
	raw, err := sql.Open("sqlite", "file:"+db.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var version int
	var name string
	if err := raw.QueryRow(`SELECT version, name FROM schema_migrations ORDER BY version DESC LIMIT 1`).Scan(&version, &name); err != nil {
		t.Fatal(err)
	}
	if version != sqlite.SchemaVersion() || name != "0011_review" {
		t.Fatalf("recorded migration %d %s, want %d", version, name, sqlite.SchemaVersion())
	}
	var mode string
	if err := raw.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal mode %q (%v), want wal", mode, err)
	}
	// Opening again applies nothing twice.
	again := sqlite.NewDB(db.Path)
	if err := again.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	again.Close()
	var n int
	if err := raw.QueryRow(`SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil || n != version {
		t.Fatalf("%d migrations recorded after reopening (%v), want %d", n, err, version)
	}
}

func TestRefusesNewerSchema(t *testing.T) {
	db := MustOpen(t, nil)
	db.Close()
	raw, err := sql.Open("sqlite", "file:"+db.Path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`INSERT INTO schema_migrations (version, name, applied) VALUES (?, 'from_the_future', 0)`,
		sqlite.SchemaVersion()+1); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	err = sqlite.NewDB(db.Path).Open(t.Context())
	if airlock.ErrorCode(err) != airlock.EINVALID || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("opening a newer schema: %v, want a refusal saying it is newer", err)
	}
}

func TestSynchronousFull(t *testing.T) {
	// The setting is per connection: read it on the store's own writer.
	db := MustOpen(t, nil)
	level, err := sqlite.SynchronousLevel(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	if level != 2 {
		t.Fatalf("synchronous = %d, want 2 (FULL): NORMAL loses commits on power loss", level)
	}
}

func TestReadOnly(t *testing.T) {
	db := MustOpen(t, nil)
	if _, err := db.Append(t.Context(), airlock.Record{Events: []airlock.Event{airlocktest.Event("decision", "a")}}); err != nil {
		t.Fatal(err)
	}
	ro := sqlite.NewDB(db.Path)
	ro.ReadOnly = true
	if err := ro.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if rep := airlocktest.MustVerify(t, ro); rep.Events != 1 {
		t.Fatalf("read-only verify saw %d events", rep.Events)
	}
	_, err := ro.Append(t.Context(), airlock.Record{Events: []airlock.Event{airlocktest.Event("decision", "a")}})
	if airlock.ErrorCode(err) != airlock.EUNAVAILABLE {
		t.Fatalf("append on a read-only store: %v", err)
	}

	// Another application's SQLite file is refused, and left untouched.
	other := filepath.Join(t.TempDir(), "other.db")
	raw, err := sql.Open("sqlite", "file:"+other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`CREATE TABLE notes (body TEXT)`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	ro = sqlite.NewDB(other)
	ro.ReadOnly = true
	if err := ro.Open(t.Context()); airlock.ErrorCode(err) != airlock.EINVALID || !strings.Contains(err.Error(), "not an airlock database") {
		t.Fatalf("read-only open of a foreign file: %v", err)
	}
}
