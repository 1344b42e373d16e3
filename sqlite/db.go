// Package sqlite is Airlock's embedded store: the audit log, approval
// requests, trust records and the notification outbox in one SQLite file.
//
// It uses a pure-Go driver (no cgo), and a commit is durable against
// power loss.
//
// One batch writes at a time, led by a caller. Concurrent callers' writes
// are batched into one transaction (group commit) and each caller returns
// only once its own writes are durable; reads run in parallel on a
// separate pool.
package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/internal/groupcommit"
	"github.com/airlock-dev/airlock/internal/migration"
	"github.com/airlock-dev/airlock/internal/wake"
	msqlite "modernc.org/sqlite"
)

var _ airlock.Store = (*DB)(nil)

//go:embed migration/*.sql
var migrationFS embed.FS

// Defaults for a DB's tunables.
const (
	DefaultBusyTimeout  = 10 * time.Second
	DefaultPollInterval = time.Second
	DefaultMaxBatch     = 512
)

// DB is an Airlock store in one SQLite database file.
type DB struct {
	// Path is the database file.
	Path string
	// Clock is the store's clock: event times and approval deadlines come
	// from it. Nil means time.Now.
	Clock func() time.Time
	// PollInterval is how often WaitApproval rereads a request, to notice
	// changes made by another process; in-process changes wake waiters at
	// once. 0 means DefaultPollInterval.
	PollInterval time.Duration
	// MaxBatch caps how many callers' writes share one transaction.
	MaxBatch int
	// Logger receives batch failures; nil discards.
	Logger *slog.Logger
	// ReadOnly opens an existing database for reading only: no migration,
	// no writer, and a refusal unless its schema is exactly the one this
	// binary knows. Every write then fails with EUNAVAILABLE.
	ReadOnly bool

	// wrapDriver lets tests inject faults below the store.
	wrapDriver func(driver.Driver) driver.Driver

	write *sql.DB // one connection, used by one batch at a time
	read  *sql.DB
	stmts statements

	// failedAt is when a write batch last failed, nil once a batch that
	// wrote has committed since (see Ready).
	failedAt atomic.Pointer[time.Time]

	// router expands notices into deliveries (SetRouter); nil keeps each
	// notice as one delivery for no channel.
	router atomic.Pointer[airlock.Router]

	writes groupcommit.Queue[func(*wtx) error]
	hub    wake.Hub
}

// NewDB returns a store for the database file at path; call Open.
func NewDB(path string) *DB { return &DB{Path: path} }

// Open opens (creating it if needed) the database, applies migrations and
// starts the writer. It refuses a database whose schema is newer than this
// binary knows.
func (db *DB) Open(ctx context.Context) error {
	if db.Path == "" {
		return airlock.Errorf(airlock.EINVALID, "sqlite: no database path")
	}
	drv := driver.Driver(&msqlite.Driver{})
	if db.wrapDriver != nil {
		drv = db.wrapDriver(drv)
	}
	if db.ReadOnly {
		return db.openReadOnly(ctx, drv)
	}
	// Writes: WAL, synchronous=FULL (every commit is durable against power
	// loss; NORMAL is not), and BEGIN IMMEDIATE so that a write transaction
	// takes the lock up front and never deadlocks upgrading a read lock.
	db.write = sql.OpenDB(connector{drv, dsn(db.Path, "immediate",
		"journal_mode(WAL)", "synchronous(FULL)", busyTimeout(), "foreign_keys(ON)", "temp_store(MEMORY)")})
	db.write.SetMaxOpenConns(1)
	db.write.SetMaxIdleConns(1)
	db.write.SetConnMaxLifetime(0)
	if err := db.migrate(ctx); err != nil {
		db.write.Close()
		return err
	}
	if err := db.prepare(ctx); err != nil {
		db.write.Close()
		return err
	}
	db.openReader(drv, "rw")
	return nil
}

func (db *DB) openReader(drv driver.Driver, mode string) {
	db.read = sql.OpenDB(connector{drv, dsn(db.Path, "deferred", "query_only(ON)", busyTimeout()) + "&mode=" + mode})
	db.read.SetMaxOpenConns(8)
	db.read.SetMaxIdleConns(8)
}

// openReadOnly opens an existing database of exactly this binary's schema
// for reading.
func (db *DB) openReadOnly(ctx context.Context, drv driver.Driver) error {
	db.openReader(drv, "ro")
	var have int
	err := db.read.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&have)
	if err != nil {
		db.read.Close()
		if strings.Contains(err.Error(), "no such table") {
			return airlock.Errorf(airlock.EINVALID, "%s is not an airlock database", db.Path)
		}
		return unavailable("open "+db.Path, err)
	}
	if known := SchemaVersion(); have != known {
		db.read.Close()
		if have > known {
			return airlock.Errorf(airlock.EINVALID,
				"%s has schema version %d, newer than this airlock knows (%d): use a newer airlock", db.Path, have, known)
		}
		return airlock.Errorf(airlock.EINVALID,
			"%s has schema version %d, older than this airlock's %d: open it once read-write (airlock serve) to migrate", db.Path, have, known)
	}
	return nil
}

// Close refuses new writes, waits for the batches queued to be durable, and
// closes the database.
func (db *DB) Close() error {
	if db.write == nil {
		if db.read != nil {
			return db.read.Close()
		}
		return nil
	}
	if !db.writes.Close() {
		return nil // closed already
	}
	return errors.Join(db.read.Close(), db.write.Close())
}

func (db *DB) now() time.Time {
	if db.Clock != nil {
		return db.Clock().UTC()
	}
	return time.Now().UTC()
}

// Now returns the store's clock.
func (db *DB) Now(context.Context) (time.Time, error) { return db.now(), nil }

// Ready reports whether the store can record decisions: a read answers,
// and writes commit. In WAL mode a transaction rolled back writes nothing
// to disk, so no rolled-back probe can tell a full disk: only a commit
// does, and the writer's own commits are the cheapest probes. So after a
// batch failed (a full disk, an I/O error, a file turned read-only), Ready
// commits a probe — the database's user_version, unchanged — and reports
// the store not ready until a commit that writes succeeds again.
func (db *DB) Ready(ctx context.Context) error {
	if _, err := db.Head(ctx); err != nil {
		return err
	}
	if db.write == nil {
		return airlock.Errorf(airlock.EUNAVAILABLE, "sqlite: %s is open read-only", db.Path)
	}
	since := db.failedAt.Load()
	if since == nil {
		return nil
	}
	err := db.exec(ctx, func(w *wtx) error {
		var v int64
		if err := w.tx.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil {
			return unavailable("read user_version", err)
		}
		_, err := w.exec(`PRAGMA user_version = ` + strconv.FormatInt(v, 10))
		return err
	})
	if err != nil {
		return airlock.Errorf(airlock.EUNAVAILABLE, "%s (writes have failed since %s)",
			airlock.ErrorMessage(err), since.UTC().Format(time.RFC3339))
	}
	return nil
}

func busyTimeout() string {
	return "busy_timeout(" + strconv.FormatInt(DefaultBusyTimeout.Milliseconds(), 10) + ")"
}

// dsn builds a SQLite URI for modernc's driver.
func dsn(file, txlock string, pragmas ...string) string {
	q := url.Values{}
	for _, p := range pragmas {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", txlock)
	u := url.URL{Scheme: "file", Opaque: (&url.URL{Path: file}).EscapedPath(), RawQuery: q.Encode()}
	return u.String()
}

// connector opens connections through a (possibly wrapped) driver.
type connector struct {
	drv driver.Driver
	dsn string
}

func (c connector) Connect(context.Context) (driver.Conn, error) { return c.drv.Open(c.dsn) }
func (c connector) Driver() driver.Driver                        { return c.drv }

// migrations returns the embedded migrations in order.
func migrations() ([]migration.Migration, error) { return migration.Load(migrationFS, "migration") }

// SchemaVersion is the newest schema this binary knows.
func SchemaVersion() int {
	ms, err := migrations()
	if err != nil {
		return 0
	}
	return migration.Latest(ms)
}

// migrate applies every migration not yet recorded, one transaction each.
func (db *DB) migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	if _, err := db.write.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied INTEGER NOT NULL) STRICT`); err != nil {
		return unavailable("open "+db.Path, err)
	}
	var have int
	if err := db.write.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&have); err != nil {
		return unavailable("read schema version", err)
	}
	if known := migration.Latest(ms); have > known {
		return airlock.Errorf(airlock.EINVALID,
			"%s has schema version %d, newer than this airlock knows (%d): use a newer airlock", db.Path, have, known)
	}
	for _, m := range ms {
		if m.Version <= have {
			continue
		}
		tx, err := db.write.BeginTx(ctx, nil)
		if err != nil {
			return unavailable("begin migration", err)
		}
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %s: %w", m.Name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied) VALUES (?, ?, ?)`,
			m.Version, m.Name, db.now().UnixNano()); err != nil {
			tx.Rollback()
			return fmt.Errorf("record migration %s: %w", m.Name, err)
		}
		if err := tx.Commit(); err != nil {
			return unavailable("commit migration "+m.Name, err)
		}
	}
	return nil
}

// unavailable wraps a database failure: the store cannot be used now.
func unavailable(what string, err error) error {
	var ae *airlock.Error
	if errors.As(err, &ae) {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return airlock.Errorf(airlock.EUNAVAILABLE, "sqlite: %s: %v", what, err)
}

// nanos stores a time as Unix nanoseconds, 0 for the zero time.
func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// fromNanos reads a time stored by nanos.
func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}
