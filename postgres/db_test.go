package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
	"github.com/airlock-dev/airlock/postgres"
	"github.com/airlock-dev/airlock/postgres/pgtest"
	"github.com/jackc/pgx/v5"
)

// OpenSchema opens a store on schema, closed when the test ends.
func OpenSchema(tb testing.TB, dsn, schema string, clock func() time.Time) *postgres.DB {
	tb.Helper()
	db := postgres.NewDB(dsn)
	db.Schema = schema
	db.Clock = clock
	db.PollInterval = 20 * time.Millisecond
	if err := db.Open(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// MustOpen opens a store in a fresh schema of its own.
func MustOpen(tb testing.TB, clock func() time.Time) *postgres.DB {
	tb.Helper()
	dsn, schema := pgtest.NewSchema(tb)
	return OpenSchema(tb, dsn, schema, clock)
}

func TestConformance(t *testing.T) {
	pgtest.DSN(t) // skipped (or failed) once, not case by case
	airlocktest.TestStore(t, func(t *testing.T, clock func() time.Time) airlock.Store {
		return MustOpen(t, clock)
	})
}

func TestMigrationsRecorded(t *testing.T) {
	dsn, schema := pgtest.NewSchema(t)
	db := OpenSchema(t, dsn, schema, nil)
	conn := connect(t, dsn)
	var version, n int
	var name string
	q := `SELECT version, name, (SELECT count(*) FROM ` + pgx.Identifier{schema, "schema_migrations"}.Sanitize() + `)
		FROM ` + pgx.Identifier{schema, "schema_migrations"}.Sanitize() + ` ORDER BY version DESC LIMIT 1`
	if err := conn.QueryRow(t.Context(), q).Scan(&version, &name, &n); err != nil {
		t.Fatal(err)
	}
	if version != postgres.SchemaVersion() || name != "0007_review" || n != version {
		t.Fatalf("recorded migration %d %s (%d rows), want %d", version, name, n, postgres.SchemaVersion())
	}
	// Opening again applies nothing twice.
	db.Close()
	OpenSchema(t, dsn, schema, nil).Close()
	if err := conn.QueryRow(t.Context(), q).Scan(&version, &name, &n); err != nil || n != version {
		t.Fatalf("%d migrations recorded after reopening (%v), want %d", n, err, version)
	}
	// The store's connections bound every statement.
	db = OpenSchema(t, dsn, schema, nil)
	if got, err := postgres.Setting(db, "statement_timeout"); err != nil || got != "10s" {
		t.Fatalf("statement_timeout = %q (%v), want 10s", got, err)
	}
}

// TestMigrationsOnceAmongReplicas: replicas starting together on a new
// schema all open, and the schema is created and migrated once.
func TestMigrationsOnceAmongReplicas(t *testing.T) {
	dsn, schema := pgtest.NewSchema(t)
	const n = 6
	errs := make(chan error, n)
	for range n {
		go func() {
			db := postgres.NewDB(dsn)
			db.Schema = schema
			err := db.Open(t.Context())
			if err == nil {
				_, err = db.Append(t.Context(), airlock.Record{Events: []airlock.Event{airlocktest.Event("decision", "a")}})
				db.Close()
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	db := OpenSchema(t, dsn, schema, nil)
	if rep := airlocktest.MustVerify(t, db); rep.Events != n {
		t.Fatalf("%d events, want %d", rep.Events, n)
	}
	var rows int
	if err := connect(t, dsn).QueryRow(t.Context(), `SELECT count(*) FROM `+pgx.Identifier{schema, "schema_migrations"}.Sanitize()).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != postgres.SchemaVersion() {
		t.Fatalf("%d migrations recorded, want %d", rows, postgres.SchemaVersion())
	}
}

func TestRefusesNewerSchema(t *testing.T) {
	dsn, schema := pgtest.NewSchema(t)
	OpenSchema(t, dsn, schema, nil).Close()
	if _, err := connect(t, dsn).Exec(t.Context(), `INSERT INTO `+pgx.Identifier{schema, "schema_migrations"}.Sanitize()+
		` (version, name, applied) VALUES ($1, 'from_the_future', 0)`, postgres.SchemaVersion()+1); err != nil {
		t.Fatal(err)
	}
	db := postgres.NewDB(dsn)
	db.Schema = schema
	err := db.Open(t.Context())
	if airlock.ErrorCode(err) != airlock.EINVALID || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("opening a newer schema: %v, want a refusal saying it is newer", err)
	}
}

// TestErrorsHideThePassword: a failure to connect says what failed, never
// the DSN's password.
func TestErrorsHideThePassword(t *testing.T) {
	for _, dsn := range []string{
		"postgres://airlock:s3cr%3At-pw@127.0.0.1:1/test?sslmode=disable&connect_timeout=2",
		"host=127.0.0.1 port=1 user=airlock password=s3cr:t-pw dbname=test sslmode=disable connect_timeout=2",
		"host=127.0.0.1 port=1 user=airlock password='s3cr:t-pw' dbname=test sslmode=disable connect_timeout=2",
		"postgres://airlock:s3cr:t-pw@127.0.0.1:notaport/test",
	} {
		err := postgres.NewDB(dsn).Open(t.Context())
		if err == nil {
			t.Fatalf("opened %s", dsn)
		}
		if code := airlock.ErrorCode(err); code != airlock.EUNAVAILABLE && code != airlock.EINVALID {
			t.Errorf("open: %v, want unavailable or invalid", err)
		}
		if strings.Contains(err.Error(), "s3cr") {
			t.Errorf("the error repeats the password: %v", err)
		}
	}
}

// TestUnstorableText: text PostgreSQL cannot hold (a NUL byte, invalid
// UTF-8) in an event's headers or a request's summary is stored with
// U+FFFD in its place — the chain covers it as stored — and never fails
// the batch that carries other callers' writes.
func TestUnstorableText(t *testing.T) {
	db := MustOpen(t, nil)
	e := airlocktest.Event("access.refused", "bad\x00agent")
	e.TraceID = "trace-\xff"
	evs, err := db.Append(t.Context(), airlock.Record{Events: []airlock.Event{e}})
	if err != nil {
		t.Fatal(err)
	}
	if evs[0].Agent != "bad\uFFFDagent" || evs[0].TraceID != "trace-\uFFFD" {
		t.Fatalf("stored headers %q %q", evs[0].Agent, evs[0].TraceID)
	}
	ap := airlocktest.NewApproval("a", "echo \x00", airlock.Ask, time.Hour)
	ap.Summary = "Bash `echo \x00`"
	got, _, err := db.RequestApproval(t.Context(), ap, airlock.Record{})
	if err != nil {
		t.Fatal(err)
	}
	read, err := db.Approval(t.Context(), got.ID)
	if err != nil || read.Summary != "Bash `echo \uFFFD`" || string(read.Args) != string(ap.Args) {
		t.Fatalf("read back %q %s (%v)", read.Summary, read.Args, err)
	}
	if _, err := db.Approval(t.Context(), "no\x00such"); airlock.ErrorCode(err) != airlock.ENOTFOUND {
		t.Fatalf("looking up an unstorable ID: %v, want not found", err)
	}
	airlocktest.MustVerify(t, db)
}

// connect opens a plain connection for a test's own statements.
func connect(t testing.TB, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func TestReadOnly(t *testing.T) {
	dsn, schema := pgtest.NewSchema(t)
	db := OpenSchema(t, dsn, schema, nil)
	if _, err := db.Append(t.Context(), airlock.Record{Events: []airlock.Event{airlocktest.Event("decision", "a")}}); err != nil {
		t.Fatal(err)
	}
	ro := postgres.NewDB(dsn)
	ro.Schema, ro.ReadOnly = schema, true
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
	if _, err := ro.ClaimNotifications(t.Context(), 1, time.Minute); airlock.ErrorCode(err) != airlock.EUNAVAILABLE {
		t.Fatalf("claim on a read-only store: %v", err)
	}
	if err := ro.Ready(t.Context()); airlock.ErrorCode(err) != airlock.EUNAVAILABLE {
		t.Fatalf("a read-only store says it is ready: %v", err)
	}

	// A schema without an airlock store is refused, and left as it was.
	_, empty := pgtest.NewSchema(t)
	if _, err := connect(t, dsn).Exec(t.Context(), `CREATE SCHEMA `+pgx.Identifier{empty}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	ro = postgres.NewDB(dsn)
	ro.Schema, ro.ReadOnly = empty, true
	if err := ro.Open(t.Context()); airlock.ErrorCode(err) != airlock.EINVALID || !strings.Contains(err.Error(), "no airlock store") {
		t.Fatalf("read-only open of a foreign schema: %v", err)
	}
}
