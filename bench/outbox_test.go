package bench

// The evidence behind Airlock's notification outbox: deliveries are rows in
// Airlock's own SQLite store, written in the transaction that writes the
// audit event, not jobs in the River queue (github.com/riverqueue/river
// with its riversqlite driver), which was tried first.
//
// BenchmarkOutboxInsert: the latency of one durable SQLite write
// transaction (modernc.org/sqlite, WAL, synchronous(FULL), busy_timeout,
// BEGIN IMMEDIATE, one write connection: the settings of Airlock's store)
// that inserts one audit event row (a ~600-byte payload) plus
//
//   - anchor: nothing else;
//   - outbox: two delivery rows through a prepared INSERT into a table
//     shaped like Airlock's deliveries (a partial index on due for the
//     pending and failed ones);
//   - river: two River jobs through client.InsertManyFastTx on the same
//     *sql.Tx, with an insert-only River client over a database migrated
//     by rivermigrate.
//
// Each variant has its own database file. The three run interleaved, the
// order rotated through all six permutations, one transaction each per op,
// after a warm-up; the time is from BeginTx to the return of Commit. It
// reports the nearest-rank p50 of each (µs), each variant's p50 and p99 as
// a ratio to the anchor's, and the p50 extra per delivery row or job over
// the anchor. ns/op (the sum of the three) is suppressed.
//
// BenchmarkRiverWorkThroughput: b.N no-op River jobs inserted beforehand,
// then a River client on riversqlite (one connection, the same durable
// settings; MaxWorkers 32, FetchCooldown 1ms, FetchPollInterval 5ms) works
// them; jobs/s from Start until the last completion is reported, to set
// against the notifier's deliveries/s (BenchmarkDelivery in ./notify).
//
//	cd bench && go test -run '^$' -bench 'OutboxInsert|RiverWork' -benchtime 2000x -count 5 .
//
// The database files are in b.TempDir(): run on the disk the store would
// use (set TMPDIR), not a tmpfs, where a commit's fsync costs nothing.

import (
	"context"
	"crypto/rand"
	"database/sql"
	"fmt"
	"log/slog"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	_ "modernc.org/sqlite" // registers "sqlite"
)

// deliverArgs is a River job that delivers one notification.
type deliverArgs struct {
	ID int64 `json:"id"`
}

func (deliverArgs) Kind() string { return "airlock.deliver" }

// noopWorker completes every job at once.
type noopWorker struct {
	river.WorkerDefaults[deliverArgs]
}

func (noopWorker) Work(context.Context, *river.Job[deliverArgs]) error { return nil }

// benchDSN is the DSN of Airlock's write pool (sqlite.dsn): WAL,
// synchronous(FULL), a busy timeout and BEGIN IMMEDIATE.
func benchDSN(file string) string {
	q := url.Values{}
	for _, p := range []string{"journal_mode(WAL)", "synchronous(FULL)", "busy_timeout(10000)",
		"foreign_keys(ON)", "temp_store(MEMORY)"} {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", "immediate")
	u := url.URL{Scheme: "file", Opaque: (&url.URL{Path: file}).EscapedPath(), RawQuery: q.Encode()}
	return u.String()
}

// openWriteDB opens a new database file in its own b.TempDir() with one
// write connection, creates the events table (and runs extra DDL).
func openWriteDB(b *testing.B, ddl ...string) *sql.DB {
	b.Helper()
	db, err := sql.Open("sqlite", benchDSN(filepath.Join(b.TempDir(), "bench.db")))
	if err != nil {
		b.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	b.Cleanup(func() { db.Close() })
	ddl = append([]string{`CREATE TABLE events (
		seq     INTEGER PRIMARY KEY CHECK (seq > 0),
		time    INTEGER NOT NULL,
		kind    TEXT    NOT NULL,
		agent   TEXT    NOT NULL DEFAULT '',
		payload BLOB    NOT NULL,
		hash    BLOB    NOT NULL
	) STRICT`}, ddl...)
	for _, s := range ddl {
		if _, err := db.Exec(s); err != nil {
			b.Fatalf("%s: %v", s, err)
		}
	}
	var mode string
	if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		b.Fatalf("journal_mode %q (%v), want wal", mode, err)
	}
	var sync int
	if err := db.QueryRow(`PRAGMA synchronous`).Scan(&sync); err != nil || sync != 2 {
		b.Fatalf("synchronous %d (%v), want 2 (FULL)", sync, err)
	}
	return db
}

// migrateRiver creates River's tables in db.
func migrateRiver(b *testing.B, db *sql.DB) {
	b.Helper()
	m, err := rivermigrate.New(riversqlite.New(db), nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := m.Migrate(context.Background(), rivermigrate.DirectionUp, nil); err != nil {
		b.Fatal(err)
	}
}

func riverLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// nearestRank is the nearest-rank p-th percentile (0 < p ≤ 100) of d.
func nearestRank(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	r := int(math.Ceil(p / 100 * float64(len(s))))
	return s[min(max(r, 1), len(s))-1]
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// outboxVariant is one way of writing an event and its deliveries.
type outboxVariant struct {
	name  string
	db    *sql.DB
	event *sql.Stmt
	// extra writes the event's deliveries in tx; nil writes none.
	extra func(ctx context.Context, tx *sql.Tx, seq int64) error
}

func (v *outboxVariant) write(ctx context.Context, seq int64, payload []byte) (time.Duration, error) {
	t0 := time.Now()
	tx, err := v.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	now := time.Now().UnixNano()
	if _, err := tx.StmtContext(ctx, v.event).ExecContext(ctx, seq, now, "decision", "agent-7", payload, payload[:32]); err != nil {
		return 0, err
	}
	if v.extra != nil {
		if err := v.extra(ctx, tx, seq); err != nil {
			return 0, err
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, err
	}
	return time.Since(t0), nil
}

func prepareEvent(b *testing.B, db *sql.DB) *sql.Stmt {
	b.Helper()
	st, err := db.Prepare(`INSERT INTO events (seq, time, kind, agent, payload, hash) VALUES (?, ?, ?, ?, ?, ?)`)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st
}

// channels are the two notification channels each event is delivered to.
var channels = [2]string{"ops-slack", "audit-webhook"}

func newOutboxVariants(b *testing.B) []*outboxVariant {
	// (a) anchor: the event alone.
	anchorDB := openWriteDB(b)
	anchor := &outboxVariant{name: "anchor", db: anchorDB, event: prepareEvent(b, anchorDB)}

	// (b) outbox: two delivery rows, as Airlock writes them.
	outboxDB := openWriteDB(b, `CREATE TABLE deliveries (
		id         INTEGER PRIMARY KEY,
		key        TEXT    NOT NULL,
		created    INTEGER NOT NULL,
		channel    TEXT    NOT NULL DEFAULT '',
		kind       TEXT    NOT NULL,
		recipients TEXT    NOT NULL DEFAULT '[]',
		event_seq  INTEGER NOT NULL DEFAULT 0,
		status     TEXT    NOT NULL DEFAULT 'pending'
		           CHECK (status IN ('pending', 'sent', 'failed', 'dead', 'dropped')),
		attempts   INTEGER NOT NULL DEFAULT 0,
		due        INTEGER NOT NULL
	) STRICT`,
		`CREATE INDEX deliveries_due ON deliveries (due) WHERE status IN ('pending', 'failed')`)
	insDelivery, err := outboxDB.Prepare(`INSERT INTO deliveries (key, created, channel, kind, recipients, event_seq, status, due)
		VALUES (?, ?, ?, ?, ?, ?, 'pending', ?)`)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { insDelivery.Close() })
	outbox := &outboxVariant{name: "outbox", db: outboxDB, event: prepareEvent(b, outboxDB),
		extra: func(ctx context.Context, tx *sql.Tx, seq int64) error {
			st := tx.StmtContext(ctx, insDelivery)
			now := time.Now().UnixNano()
			for i, ch := range channels {
				key := fmt.Sprintf("dlv_%016x_%d", seq, i)
				if _, err := st.ExecContext(ctx, key, now, ch, "decision", `["alice","bob"]`, seq, now); err != nil {
					return err
				}
			}
			return nil
		}}

	// (c) river: two River jobs through an insert-only client, in the
	// event's transaction.
	riverDB := openWriteDB(b)
	migrateRiver(b, riverDB)
	client, err := river.NewClient(riversqlite.New(riverDB), &river.Config{Logger: riverLogger()})
	if err != nil {
		b.Fatal(err)
	}
	riv := &outboxVariant{name: "river", db: riverDB, event: prepareEvent(b, riverDB),
		extra: func(ctx context.Context, tx *sql.Tx, seq int64) error {
			n, err := client.InsertManyFastTx(ctx, tx, []river.InsertManyParams{
				{Args: deliverArgs{ID: seq}}, {Args: deliverArgs{ID: seq}},
			})
			if err == nil && n != 2 {
				err = fmt.Errorf("river inserted %d jobs, want 2", n)
			}
			return err
		}}
	return []*outboxVariant{anchor, outbox, riv}
}

// perms3 are the six orders of three variants.
var perms3 = [6][3]int{{0, 1, 2}, {1, 2, 0}, {2, 0, 1}, {0, 2, 1}, {2, 1, 0}, {1, 0, 2}}

func BenchmarkOutboxInsert(b *testing.B) {
	ctx := context.Background()
	vs := newOutboxVariants(b)
	payload := make([]byte, 600)
	rand.Read(payload)
	seq := int64(0)
	run := func(i int, lat *[3][]time.Duration) {
		seq++
		payload[0], payload[1] = byte(seq), byte(seq>>8)
		for _, k := range perms3[i%len(perms3)] {
			d, err := vs[k].write(ctx, seq, payload)
			if err != nil {
				b.Fatalf("%s: %v", vs[k].name, err)
			}
			if lat != nil {
				lat[k] = append(lat[k], d)
			}
		}
	}
	for i := range 60 { // warm-up: files, WAL, statement caches
		run(i, nil)
	}
	var lat [3][]time.Duration
	for k := range lat {
		lat[k] = make([]time.Duration, 0, b.N)
	}
	b.ResetTimer()
	for i := range b.N {
		run(i, &lat)
	}
	b.StopTimer()

	// Every write landed: the events, and two deliveries or jobs each.
	for _, c := range []struct {
		db    *sql.DB
		query string
		want  int64
	}{
		{vs[0].db, `SELECT count(*) FROM events`, seq},
		{vs[1].db, `SELECT count(*) FROM deliveries WHERE status = 'pending'`, 2 * seq},
		{vs[2].db, `SELECT count(*) FROM river_job WHERE kind = 'airlock.deliver' AND state = 'available'`, 2 * seq},
	} {
		var n int64
		if err := c.db.QueryRow(c.query).Scan(&n); err != nil || n != c.want {
			b.Fatalf("%s: %d (%v), want %d", c.query, n, err, c.want)
		}
	}

	p50 := [3]time.Duration{}
	p99 := [3]time.Duration{}
	for k := range lat {
		p50[k], p99[k] = nearestRank(lat[k], 50), nearestRank(lat[k], 99)
	}
	b.ReportMetric(0, "ns/op")
	for k, v := range vs {
		b.ReportMetric(micros(p50[k]), v.name+"-p50-µs")
	}
	for k, v := range vs[1:] {
		b.ReportMetric(float64(p50[k+1])/float64(p50[0]), v.name+"-p50-ratio")
		b.ReportMetric(float64(p99[k+1])/float64(p99[0]), v.name+"-p99-ratio")
	}
	b.ReportMetric(micros(p50[1]-p50[0])/2, "outbox-extra-µs/row")
	b.ReportMetric(micros(p50[2]-p50[0])/2, "river-extra-µs/job")
}

func BenchmarkRiverWorkThroughput(b *testing.B) {
	ctx := context.Background()
	db := openWriteDB(b)
	migrateRiver(b, db)

	// Queue b.N jobs, 500 to a transaction, with no client working.
	inserter, err := river.NewClient(riversqlite.New(db), &river.Config{Logger: riverLogger()})
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i += 500 {
		params := make([]river.InsertManyParams, min(500, b.N-i))
		for j := range params {
			params[j] = river.InsertManyParams{Args: deliverArgs{ID: int64(i + j + 1)}}
		}
		if n, err := inserter.InsertManyFast(ctx, params); err != nil || n != len(params) {
			b.Fatalf("inserted %d of %d: %v", n, len(params), err)
		}
	}

	workers := river.NewWorkers()
	river.AddWorker(workers, noopWorker{})
	client, err := river.NewClient(riversqlite.New(db), &river.Config{
		Logger:            riverLogger(),
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 32}},
		Workers:           workers,
		FetchCooldown:     river.FetchCooldownMin,
		FetchPollInterval: 5 * time.Millisecond,
	})
	if err != nil {
		b.Fatal(err)
	}
	events, cancelEvents := client.SubscribeConfig(&river.SubscribeConfig{
		ChanSize: b.N + 1000,
		Kinds:    []river.EventKind{river.EventKindJobCompleted, river.EventKindJobFailed},
	})
	defer cancelEvents()

	b.ResetTimer()
	t0 := time.Now()
	if err := client.Start(ctx); err != nil {
		b.Fatal(err)
	}
	timeout := time.After(5 * time.Minute)
	for done := 0; done < b.N; {
		select {
		case ev := <-events:
			if ev.Kind != river.EventKindJobCompleted {
				b.Fatalf("job %d: %s", ev.Job.ID, ev.Kind)
			}
			done++
		case <-timeout:
			b.Fatalf("%d of %d jobs completed after 5 minutes", done, b.N)
		}
	}
	elapsed := time.Since(t0)
	b.StopTimer()
	stopCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := client.Stop(stopCtx); err != nil {
		b.Fatal(err)
	}

	var n int
	if err := db.QueryRow(`SELECT count(*) FROM river_job WHERE state = 'completed'`).Scan(&n); err != nil || n != b.N {
		b.Fatalf("%d jobs completed (%v), want %d", n, err, b.N)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "jobs/s")
}
