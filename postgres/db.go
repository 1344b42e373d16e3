// Package postgres is Airlock's store on PostgreSQL, for several replicas
// of the server on one database.
//
// It keeps the audit log, approval requests, trust records and the
// notification outbox, with the same guarantees as the embedded SQLite
// store across every replica.
//
// Every write transaction, of any replica, takes the chain's lock (a
// transaction-level advisory lock of the schema), reads the chain's head
// from the events table and seals its events on it in Go: the audit log
// has one writer at a time and one gapless chain. Within a replica,
// concurrent callers' writes are batched into one transaction (group
// commit), as in package sqlite. Changes wake waiters at once in the
// replica that made them, and in the others through LISTEN/NOTIFY.
package postgres

import (
	"context"
	"crypto/rand"
	"embed"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/internal/groupcommit"
	"github.com/airlock-dev/airlock/internal/migration"
	"github.com/airlock-dev/airlock/internal/wake"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

var _ airlock.Store = (*DB)(nil)

//go:embed migration/*.sql
var migrationFS embed.FS

// Defaults for a DB's tunables.
const (
	DefaultSchema           = "public"
	DefaultStatementTimeout = 10 * time.Second
	DefaultPollInterval     = 5 * time.Second
	DefaultMaxBatch         = 512
)

// DB is an Airlock store in one PostgreSQL database (one schema of it).
// Several DBs — replicas of the server — may share one schema.
type DB struct {
	// DSN is the database's connection string (a postgres:// URL or
	// key=value pairs). Pool settings such as pool_max_conns may be given
	// in it. It is never repeated in an error.
	DSN string
	// Schema holds Airlock's tables; it is created if missing. "" means
	// DefaultSchema.
	Schema string
	// Clock is the store's clock: event times and approval deadlines come
	// from it, never from the database server's. Nil means time.Now. The
	// replicas' clocks must agree (see clock).
	Clock func() time.Time
	// StatementTimeout bounds every statement (a lock wait included) on
	// the store's connections, unless the DSN sets statement_timeout. 0
	// means DefaultStatementTimeout.
	StatementTimeout time.Duration
	// PollInterval is how often WaitApproval and WaitEvents reread the
	// database in case a wake-up was missed. Changes in this process wake
	// them at once, other replicas' through LISTEN/NOTIFY, and a listener
	// that reconnects wakes every waiter to reread: polling is only the
	// last resort. 0 means DefaultPollInterval.
	PollInterval time.Duration
	// MaxBatch caps how many callers' writes share one transaction.
	MaxBatch int
	// Logger receives batch and listener failures; nil discards.
	Logger *slog.Logger
	// ReadOnly opens an existing schema for reading only (audit verify,
	// exports): no migration, no listener, read-only transactions, and a
	// refusal unless the schema is exactly the one this binary knows.
	// Every write then fails with EUNAVAILABLE.
	ReadOnly bool

	pool     *pgxpool.Pool
	connCfg  *pgx.ConnConfig // for the listener's own connection
	channel  string          // the NOTIFY channel of this schema
	chainKey int64           // the chain's transaction-level advisory lock
	origin   string          // this DB's mark on the notifications it sends

	// failedAt is when a write batch last failed, nil once a batch has
	// committed since (see Ready).
	failedAt atomic.Pointer[time.Time]

	// router expands notices into deliveries (SetRouter); nil keeps each
	// notice as one delivery for no channel.
	router atomic.Pointer[airlock.Router]

	writes groupcommit.Queue[func(*wtx) error]
	hub    wake.Hub

	// batches counts the write batches committed that wrote something;
	// batchFailures, those that failed.
	batches, batchFailures atomic.Int64

	clock  clock
	listen *listener
}

// NewDB returns a store for the database at dsn; set its fields, then call
// Open.
func NewDB(dsn string) *DB { return &DB{DSN: dsn} }

func (db *DB) schema() string {
	if db.Schema == "" {
		return DefaultSchema
	}
	return db.Schema
}

// Open connects, applies the migrations this database lacks (once, under
// an advisory lock, however many replicas start together) and starts
// listening for other replicas' changes. It refuses a schema newer than
// this binary knows.
func (db *DB) Open(ctx context.Context) error {
	if db.DSN == "" {
		return airlock.Errorf(airlock.EINVALID, "postgres: no database DSN")
	}
	cfg, err := pgxpool.ParseConfig(db.DSN)
	if err != nil {
		return airlock.Errorf(airlock.EINVALID, "postgres: invalid DSN: %s", db.redact(err.Error()))
	}
	timeout := db.statementTimeout()
	rp := cfg.ConnConfig.RuntimeParams
	rp["search_path"] = pgx.Identifier{db.schema()}.Sanitize()
	if _, ok := rp["statement_timeout"]; !ok {
		rp["statement_timeout"] = strconv.FormatInt(timeout.Milliseconds(), 10)
	}
	if _, ok := rp["idle_in_transaction_session_timeout"]; !ok {
		// A replica cut off mid-batch holds the chain's lock: the server
		// ends its session rather than stall every other replica.
		rp["idle_in_transaction_session_timeout"] = strconv.FormatInt(timeout.Milliseconds(), 10)
	}
	// The readers' single reads rely on it; the writer states it.
	rp["default_transaction_isolation"] = "read committed"
	if _, ok := rp["application_name"]; !ok {
		rp["application_name"] = "airlock"
	}
	if db.ReadOnly {
		rp["default_transaction_read_only"] = "on"
	}
	db.connCfg = cfg.ConnConfig.Copy()
	db.channel = channelName(db.schema())
	db.chainKey = int64(fnvHash("airlock.chain:" + db.schema()))
	db.origin = rand.Text()[:12]

	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return db.unavailable("connect", err)
	}
	db.pool = pool
	if err := db.measureClock(ctx); err != nil {
		pool.Close()
		db.pool = nil
		return db.unavailable("connect", err)
	}
	if db.ReadOnly {
		if err := db.checkSchema(ctx); err != nil {
			pool.Close()
			db.pool = nil
			return err
		}
		return nil
	}
	if err := db.migrate(ctx); err != nil {
		pool.Close()
		db.pool = nil
		return err
	}
	l, err := db.startListener(ctx)
	if err != nil {
		pool.Close()
		db.pool = nil
		return err
	}
	db.listen = l
	db.startClock()
	return nil
}

// Close refuses new writes, waits for the batches queued to be durable,
// stops listening and closes the connections. It may be called more than
// once.
func (db *DB) Close() error {
	if db.pool == nil {
		return nil
	}
	if !db.writes.Close() {
		return nil // closed already
	}
	if db.listen != nil {
		db.listen.stop()
	}
	db.stopClock()
	db.pool.Close()
	return nil
}

func (db *DB) now() time.Time {
	if db.Clock != nil {
		return db.Clock().UTC()
	}
	return time.Now().UTC()
}

// Now returns the store's clock.
func (db *DB) Now(context.Context) (time.Time, error) { return db.now(), nil }

// Ready reports whether the store can record decisions: the database
// answers a read, is not a read-only standby, and — after a write batch
// failed — commits a write again.
func (db *DB) Ready(ctx context.Context) error {
	if db.pool == nil {
		return airlock.Errorf(airlock.EUNAVAILABLE, "postgres: store is not open")
	}
	if db.ReadOnly {
		if _, err := db.Head(ctx); err != nil {
			return err
		}
		return airlock.Errorf(airlock.EUNAVAILABLE, "postgres: schema %s is open read-only", db.schema())
	}
	var head int64
	var standby bool
	if err := db.pool.QueryRow(ctx, `SELECT coalesce(max(seq), 0), pg_is_in_recovery() FROM events`).Scan(&head, &standby); err != nil {
		return db.unavailable("read events head", err)
	}
	if standby {
		return airlock.Errorf(airlock.EUNAVAILABLE, "postgres: the database is a read-only standby")
	}
	since := db.failedAt.Load()
	if since == nil {
		return nil
	}
	// A transaction given an ID writes a commit record: its commit is a
	// durable write.
	probe := func(w *wtx) error {
		_, err := w.exec(`SELECT pg_current_xact_id()`)
		return err
	}
	if err := db.exec(ctx, probe); err != nil {
		return airlock.Errorf(airlock.EUNAVAILABLE, "%s (writes have failed since %s)",
			airlock.ErrorMessage(err), since.UTC().Format(time.RFC3339))
	}
	return nil
}

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

// migrate applies every migration not yet recorded, one transaction each,
// holding a session advisory lock for the schema so that replicas starting
// together apply each one once: the others wait, then find it recorded.
func (db *DB) migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return db.unavailable("connect", err)
	}
	defer conn.Release()
	// Migrations may take long, and so may the wait while another replica
	// applies them: only ctx bounds them, not the statement timeout.
	if _, err := conn.Exec(ctx, `SET statement_timeout = 0`); err != nil {
		return db.unavailable("migrate", err)
	}
	key := int64(fnvHash("airlock.migrate:" + db.schema()))
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, key); err != nil {
		conn.Conn().Close(context.Background())
		return db.unavailable("lock for migrations", err)
	}
	defer func() {
		// A failed unlock (a broken connection) ends with the session,
		// which the pool then discards.
		_, err := conn.Exec(context.Background(), `SELECT pg_advisory_unlock($1)`, key)
		if err == nil {
			_, err = conn.Exec(context.Background(), `RESET statement_timeout`)
		}
		if err != nil {
			conn.Conn().Close(context.Background())
		}
	}()
	schema := pgx.Identifier{db.schema()}.Sanitize()
	if _, err := conn.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+schema); err != nil {
		return db.unavailable("create schema "+db.schema(), err)
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version integer PRIMARY KEY, name text NOT NULL, applied bigint NOT NULL)`); err != nil {
		return db.unavailable("create schema_migrations", err)
	}
	var have int
	if err := conn.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&have); err != nil {
		return db.unavailable("read schema version", err)
	}
	if known := migration.Latest(ms); have > known {
		return airlock.Errorf(airlock.EINVALID,
			"postgres: schema %s has version %d, newer than this airlock knows (%d): use a newer airlock", db.schema(), have, known)
	}
	for _, m := range ms {
		if m.Version <= have {
			continue
		}
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return fmt.Errorf("migration %s: %w", m.Name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied) VALUES ($1, $2, $3)`,
				m.Version, m.Name, db.now().UnixNano()); err != nil {
				return fmt.Errorf("record migration %s: %w", m.Name, err)
			}
			return nil
		})
		if err != nil {
			return db.unavailable("migrate", err)
		}
	}
	return nil
}

// checkSchema refuses, for a read-only store, a schema that is not exactly
// this binary's.
func (db *DB) checkSchema(ctx context.Context) error {
	var have int
	var exists bool
	err := db.pool.QueryRow(ctx, `SELECT to_regclass('schema_migrations') IS NOT NULL`).Scan(&exists)
	if err == nil && exists {
		err = db.pool.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&have)
	}
	switch known := SchemaVersion(); {
	case err != nil:
		return db.unavailable("read schema version", err)
	case !exists:
		return airlock.Errorf(airlock.EINVALID, "postgres: schema %s holds no airlock store", db.schema())
	case have > known:
		return airlock.Errorf(airlock.EINVALID,
			"postgres: schema %s has version %d, newer than this airlock knows (%d): use a newer airlock", db.schema(), have, known)
	case have < known:
		return airlock.Errorf(airlock.EINVALID,
			"postgres: schema %s has version %d, older than this airlock's %d: open it once read-write (airlock serve) to migrate",
			db.schema(), have, known)
	}
	return nil
}

// fnvHash is a stable 64-bit hash of s.
func fnvHash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// channelName is the NOTIFY channel of a schema's store: a name of at most
// 63 bytes, the longest PostgreSQL keeps.
func channelName(schema string) string {
	if c := "airlock." + schema; len(c) <= 63 {
		return c
	}
	return "airlock." + strconv.FormatUint(fnvHash(schema), 16)
}

// unavailable wraps a database failure: the store cannot be used now. The
// message never repeats the DSN's password.
func (db *DB) unavailable(what string, err error) error {
	var ae *airlock.Error
	if errors.As(err, &ae) {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return airlock.Errorf(airlock.EUNAVAILABLE, "postgres: %s: %s", what, db.redact(err.Error()))
}

// passwordParam finds a password in a key=value DSN or a URL's query.
var passwordParam = regexp.MustCompile(`(?i)password\s*=\s*('(?:[^'\\]|\\.)*'|[^\s&]+)`)

// redact removes the DSN's password from a message, wherever it appears.
func (db *DB) redact(msg string) string {
	var secrets []string
	if u, err := url.Parse(db.DSN); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok && p != "" {
			secrets = append(secrets, p, url.PathEscape(p), url.QueryEscape(p))
		}
	}
	for _, m := range passwordParam.FindAllStringSubmatch(db.DSN, -1) {
		p := m[1]
		secrets = append(secrets, p, strings.Trim(p, "'"))
		if u, err := url.QueryUnescape(p); err == nil {
			secrets = append(secrets, u)
		}
	}
	for _, s := range secrets {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "xxxxx")
		}
	}
	return msg
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

func (db *DB) logger() *slog.Logger {
	if db.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return db.Logger
}

func (db *DB) statementTimeout() time.Duration {
	if db.StatementTimeout <= 0 {
		return DefaultStatementTimeout
	}
	return db.StatementTimeout
}

func (db *DB) pollInterval() time.Duration {
	if db.PollInterval <= 0 {
		return DefaultPollInterval
	}
	return db.PollInterval
}
