package sqlite_test

// Benchmarks for issue 3: how close durable decisions on the embedded store
// come to what the disk and SQLite themselves allow. The anchors come first
// (benchmarks run in source order) so that, in one run, the benchmarks after
// them can report their ratios to the anchors:
//
//	go test -run '^$' -bench Store -benchtime 20000x -count 5 ./sqlite
//
// Figures and goals are in docs/BENCHMARKS.md.

import (
	"context"
	"database/sql"
	"database/sql/driver"
	_ "embed"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/gate"
	"github.com/airlock-dev/airlock/shell"
	"github.com/airlock-dev/airlock/sqlite"
	msqlite "modernc.org/sqlite"
)

// benchPayloadSize is the payload of an anchor row: about what a decision
// event on a file write carries.
const benchPayloadSize = 400

// benchPayload is a decision-shaped JSON object of benchPayloadSize bytes.
var benchPayload = func() []byte {
	const head = `{"action":{"agent":"coder-1","tool":"write_file","args":{"file_path":"/home/dev/app/internal/server/handler.go","content":"`
	const tail = `"},"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","cwd":"/home/dev/app"},` +
		`"action_hash":"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08","outcome":"auto","label":"auto",` +
		`"class":"fs.write","tier":"standard","decided_by":"rule workspace-writes"}`
	p := head + strings.Repeat("x", benchPayloadSize-len(head)-len(tail)) + tail
	if !json.Valid([]byte(p)) {
		panic("bench payload is not JSON")
	}
	return []byte(p)
}()

// benchPolicy lets coder-1 write files on its own: the action below is
// decided auto.
const benchPolicy = `version: 1
name: bench
layer: project
agents:
  coder-*:
    owner: alice
rules:
  - id: workspace-writes
    tool: write_file
    outcome: auto
`

// benchTraces are the callers' trace IDs.
var benchTraces = func() (ts [enforceCallers + 1]string) {
	for i := range ts {
		ts[i] = fmt.Sprintf("4bf92f3577b34da6a3ce929d0e0e%04d", i)
	}
	return ts
}()

// benchAction is a file write under the workspace, with its caller's trace.
func benchAction(caller int) airlock.Action {
	return airlock.Action{
		Agent: "coder-1", Tool: "write_file", Cwd: "/home/dev/app",
		TraceID: benchTraces[caller%len(benchTraces)],
		Args: airlock.MustArgs(map[string]any{
			"file_path": fmt.Sprintf("/home/dev/app/internal/server/handler_%d.go", caller),
			"content":   "package server\n\nfunc Handle() {}\n",
		}),
	}
}

// anchors holds the anchors' figures measured so far in this process, so
// that later benchmarks report their ratios to the median.
var anchors = struct {
	sync.Mutex
	m map[string][]float64
}{m: map[string][]float64{}}

// minAnchorOps is the fewest operations for a figure to count as an anchor:
// -benchtime 1x runs (and the framework's first, one-op run) do not.
const minAnchorOps = 100

func recordAnchor(b *testing.B, name string, v float64) {
	if b.N < minAnchorOps {
		return
	}
	anchors.Lock()
	defer anchors.Unlock()
	anchors.m[name] = append(anchors.m[name], v)
}

// anchor returns the median of an anchor's figures so far.
func anchor(name string) (float64, bool) {
	anchors.Lock()
	defer anchors.Unlock()
	vs := slices.Clone(anchors.m[name])
	if len(vs) == 0 {
		return 0, false
	}
	slices.Sort(vs)
	if len(vs)%2 == 1 {
		return vs[len(vs)/2], true
	}
	return (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2, true
}

// reportRatio reports v divided by an anchor, when the anchor ran.
func reportRatio(b *testing.B, v float64, anchorName, unit string) {
	if a, ok := anchor(anchorName); ok && a > 0 && b.N >= minAnchorOps {
		b.ReportMetric(v/a, unit)
	}
}

// percentile returns the p-th percentile (0 < p ≤ 1, nearest rank) of
// sorted latencies, 0 when there are none.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// reportLatency reports the p50 and p99 of latencies in microseconds, as
// prefix+"p50-µs" and prefix+"p99-µs", and returns the p50.
func reportLatency(b *testing.B, lat []time.Duration, prefix string) float64 {
	s := slices.Clone(lat)
	slices.Sort(s)
	p50 := float64(percentile(s, 0.50)) / float64(time.Microsecond)
	b.ReportMetric(p50, prefix+"p50-µs")
	b.ReportMetric(float64(percentile(s, 0.99))/float64(time.Microsecond), prefix+"p99-µs")
	return p50
}

// perSecond returns n things over the benchmark's elapsed time.
func perSecond(b *testing.B, n int) float64 {
	if s := b.Elapsed().Seconds(); s > 0 {
		return float64(n) / s
	}
	return 0
}

// BenchmarkStoreFsyncProbe is anchor (a), the physical limit: append a
// 100-byte record to a file next to where the database would be, and
// fsync it.
func BenchmarkStoreFsyncProbe(b *testing.B) {
	f, err := os.OpenFile(filepath.Join(b.TempDir(), "probe.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	rec := []byte(strings.Repeat("r", 99) + "\n")
	lat := make([]time.Duration, b.N)
	b.ResetTimer()
	for i := range b.N {
		t0 := time.Now()
		if _, err := f.Write(rec); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		lat[i] = time.Since(t0)
	}
	b.StopTimer()
	recordAnchor(b, "fsync-p50", reportLatency(b, lat, ""))
}

// openRaw opens a SQLite database with the store's exact write settings
// (WAL, synchronous=FULL, busy timeout, BEGIN IMMEDIATE, one connection)
// and the store's schema, without the store.
func openRaw(b *testing.B) *sql.DB {
	b.Helper()
	path := filepath.Join(b.TempDir(), "raw.db")
	q := url.Values{}
	for _, p := range []string{"journal_mode(WAL)", "synchronous(FULL)",
		"busy_timeout(" + strconv.FormatInt(sqlite.DefaultBusyTimeout.Milliseconds(), 10) + ")", "foreign_keys(ON)"} {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", "immediate")
	u := url.URL{Scheme: "file", Opaque: (&url.URL{Path: path}).EscapedPath(), RawQuery: q.Encode()}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	if _, err := db.Exec(benchSchema); err != nil {
		b.Fatal(err)
	}
	return db
}

// benchSchema is the store's schema: the anchors write to the same table,
// with the same indexes.
//
//go:embed migration/0001_init.sql
var benchSchema string

const rawInsert = `INSERT INTO events (seq, time, kind, trace_id, agent, outcome, approval_id, payload, prev, hash) VALUES `
const rawTuple = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// rawRow appends the arguments of one event-shaped row. Its trace is one
// of 64, as if from the 64 callers of BenchmarkStoreEnforceAuto64.
func rawRow(args []any, seq int64) []any {
	var prev, hash [32]byte
	binary.BigEndian.PutUint64(prev[:], uint64(seq-1))
	binary.BigEndian.PutUint64(hash[:], uint64(seq))
	return append(args, seq, time.Now().UnixNano(), airlock.EventDecision, benchTraces[seq%enforceCallers],
		"coder-1", "auto", "", benchPayload, prev[:], hash[:])
}

// BenchmarkStoreSQLiteRow is anchor (b): one event-shaped row per
// transaction — BEGIN IMMEDIATE; INSERT; COMMIT — what one durable decision
// costs SQLite alone.
func BenchmarkStoreSQLiteRow(b *testing.B) {
	db := openRaw(b)
	lat := make([]time.Duration, b.N)
	args := make([]any, 0, 10)
	b.ResetTimer()
	for i := range b.N {
		lat[i] = rawCommit(b, db, args, i)
	}
	b.StopTimer()
	recordAnchor(b, "row-p50", reportLatency(b, lat, ""))
	b.ReportMetric(perSecond(b, b.N), "rows/s")
}

// rowsPerTx is the size of anchor (c)'s transactions.
const rowsPerTx = 100

// BenchmarkStoreSQLite100Rows is anchor (c), SQLite's own throughput:
// event-shaped rows written in transactions of 100. An op is one row (so
// that, for a given -benchtime, the table grows as large as the store's in
// the benchmarks below); rows/s is the figure, tx-p50-µs the latency of a
// transaction. "prepared" executes one prepared single-row INSERT per row,
// "multirow" one 100-row INSERT per transaction (as the store's writer
// does); the faster is the anchor.
func BenchmarkStoreSQLite100Rows(b *testing.B) {
	for _, mode := range []string{"prepared", "multirow"} {
		b.Run(mode, func(b *testing.B) {
			db := openRaw(b)
			query := func(rows int) string {
				if mode == "prepared" {
					rows = 1
				}
				return rawInsert + strings.Repeat(rawTuple+", ", rows-1) + rawTuple
			}
			stmt, err := db.Prepare(query(rowsPerTx))
			if err != nil {
				b.Fatal(err)
			}
			defer stmt.Close()
			lat := make([]time.Duration, 0, b.N/rowsPerTx+1)
			args := make([]any, 0, 10*rowsPerTx)
			b.ResetTimer()
			for seq := int64(0); seq < int64(b.N); {
				rows := min(rowsPerTx, b.N-int(seq))
				t0 := time.Now()
				tx, err := db.Begin()
				if err != nil {
					b.Fatal(err)
				}
				args = args[:0]
				switch {
				case mode == "prepared":
					st := tx.Stmt(stmt)
					for range rows {
						seq++
						if _, err := st.Exec(rawRow(args[:0], seq)...); err != nil {
							b.Fatal(err)
						}
					}
				default:
					for range rows {
						seq++
						args = rawRow(args, seq)
					}
					if rows == rowsPerTx {
						_, err = tx.Stmt(stmt).Exec(args...)
					} else {
						_, err = tx.Exec(query(rows), args...)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				if err := tx.Commit(); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			reportLatency(b, lat, "tx-")
			rate := perSecond(b, b.N)
			b.ReportMetric(rate, "rows/s")
			recordAnchor(b, "100rows-rate-"+mode, rate)
		})
	}
}

// best100Rows is anchor (c): the faster way of writing 100-row
// transactions.
func best100Rows() string {
	p, _ := anchor("100rows-rate-prepared")
	m, _ := anchor("100rows-rate-multirow")
	if p > m {
		return "100rows-rate-prepared"
	}
	return "100rows-rate-multirow"
}

// commitCounter counts the transactions committed on a store's
// connections.
type commitCounter struct {
	driver.Driver
	commits *atomic.Int64
}

func (d commitCounter) Open(name string) (driver.Conn, error) {
	c, err := d.Driver.Open(name)
	if err != nil {
		return nil, err
	}
	if h, ok := c.(interface{ RegisterCommitHook(msqlite.CommitHookFn) }); ok {
		h.RegisterCommitHook(func() int32 { d.commits.Add(1); return 0 })
	}
	return c, nil
}

// openBenchEnforcer opens a fresh store, counting its commits, and an
// enforcer deciding by benchPolicy; it checks that benchAction is decided
// auto and recorded, and returns the size of its decision event's payload.
func openBenchEnforcer(b *testing.B) (e *gate.Enforcer, commits *atomic.Int64, payload int) {
	b.Helper()
	commits = new(atomic.Int64)
	db := sqlite.NewDB(filepath.Join(b.TempDir(), "airlock.db"))
	sqlite.WrapDriver(db, func(d driver.Driver) driver.Driver { return commitCounter{d, commits} })
	if err := db.Open(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	p, err := gate.LoadPolicy("bench.yaml", []byte(benchPolicy))
	if err != nil {
		b.Fatal(err)
	}
	g, err := gate.New(shell.Analyser{}, p)
	if err != nil {
		b.Fatal(err)
	}
	e = &gate.Enforcer{Gate: g, Store: db}
	enf := e.Enforce(context.Background(), benchAction(0))
	if !enf.Allowed || enf.Label != airlock.LabelAuto || enf.Seq == 0 {
		b.Fatalf("the bench action is not recorded as auto: %+v", enf)
	}
	evs, err := db.Events(context.Background(), airlock.EventFilter{AfterSeq: enf.Seq - 1, Limit: 1})
	if err != nil || len(evs) != 1 {
		b.Fatalf("read back the decision: %v, %d events", err, len(evs))
	}
	return e, commits, len(evs[0].Payload)
}

// BenchmarkStoreEnforceAuto is one caller: an auto decision made durable
// (a decision event and a trust record) through Enforcer.Enforce. Goal: p50
// at most 1.3× anchor (b)'s; anchor (a) is the physical limit.
func BenchmarkStoreEnforceAuto(b *testing.B) {
	e, _, payload := openBenchEnforcer(b)
	ctx := context.Background()
	a := benchAction(1)
	lat := make([]time.Duration, b.N)
	b.ResetTimer()
	for i := range b.N {
		t0 := time.Now()
		enf := e.Enforce(ctx, a)
		lat[i] = time.Since(t0)
		if !enf.Allowed {
			b.Fatalf("refused: %+v", enf)
		}
	}
	b.StopTimer()
	p50 := reportLatency(b, lat, "")
	rate := perSecond(b, b.N)
	b.ReportMetric(rate, "decisions/s")
	recordAnchor(b, "single-rate", rate)
	b.ReportMetric(float64(payload), "payload-B")
	reportRatio(b, p50, "row-p50", "x-row-p50")
	reportRatio(b, p50, "fsync-p50", "x-fsync-p50")
}

// BenchmarkStoreEnforceAutoPaired repeats the single caller's comparison
// with anchor (b) in pairs: each op is one auto decision through the store
// and one raw single-row commit to a database in the same directory, in
// alternating order, so that both see the same disk at the same moment.
// The disk's speed drifts within minutes on shared machines; the ratio of
// the paired p50s (x-row-p50) does not drift with it.
func BenchmarkStoreEnforceAutoPaired(b *testing.B) {
	e, _, _ := openBenchEnforcer(b)
	raw := openRaw(b)
	ctx := context.Background()
	a := benchAction(1)
	store := make([]time.Duration, b.N)
	row := make([]time.Duration, b.N)
	args := make([]any, 0, 10)
	enforce := func(i int) {
		t0 := time.Now()
		enf := e.Enforce(ctx, a)
		store[i] = time.Since(t0)
		if !enf.Allowed {
			b.Fatalf("refused: %+v", enf)
		}
	}
	commit := func(i int) { row[i] = rawCommit(b, raw, args, i) }
	b.ResetTimer()
	for i := range b.N {
		if i%2 == 0 {
			enforce(i)
			commit(i)
		} else {
			commit(i)
			enforce(i)
		}
	}
	b.StopTimer()
	p50 := reportLatency(b, store, "")
	rowP50 := reportLatency(b, row, "row-")
	if rowP50 > 0 {
		b.ReportMetric(p50/rowP50, "x-row-p50")
	}
}

// enforceCallers is how many callers BenchmarkStoreEnforceAuto64 runs.
const enforceCallers = 64

// BenchmarkStoreEnforceAuto64 is 64 concurrent callers (goroutines sharing
// b.N) making the same kind of auto decision. Goals: at least 5× the single
// caller's decisions/s, and at least 0.8× anchor (c)'s rows/s. batch is
// decisions per commit, the writer's mean group size.
func BenchmarkStoreEnforceAuto64(b *testing.B) {
	e, commits, payload := openBenchEnforcer(b)
	lat := make([]time.Duration, b.N)
	before := commits.Load()
	b.ResetTimer()
	enforceConcurrently(b, e, lat)
	b.StopTimer()
	reportLatency(b, lat, "")
	rate := perSecond(b, b.N)
	b.ReportMetric(rate, "decisions/s")
	if n := commits.Load() - before; n > 0 {
		b.ReportMetric(float64(b.N)/float64(n), "batch")
	}
	b.ReportMetric(float64(payload), "payload-B")
	reportRatio(b, rate, "single-rate", "x-single")
	reportRatio(b, rate, best100Rows(), "x-100rows")
}

// verifyEvents is the size of the log BenchmarkStoreVerify checks, built
// with records of verifyPerRecord events.
const (
	verifyEvents    = 200_000
	verifyPerRecord = 1000
)

// BenchmarkStoreVerify checks the whole chain of a 200 000-event log on
// one core (GOMAXPROCS 1). An op is one event verified: each pass verifies
// the whole log, and passes repeat until b.N events are done, so that any
// -benchtime makes at least one full pass. Goal: at least 150 000
// events/s.
// enforceConcurrently has enforceCallers goroutines share len(lat)
// decisions, records each one's latency, and returns the elapsed time.
func enforceConcurrently(b *testing.B, e *gate.Enforcer, lat []time.Duration) time.Duration {
	ctx := context.Background()
	var next, refused atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for c := range enforceCallers {
		a := benchAction(c + 1)
		wg.Go(func() {
			<-start
			for {
				i := int(next.Add(1)) - 1
				if i >= len(lat) {
					return
				}
				t0 := time.Now()
				enf := e.Enforce(ctx, a)
				lat[i] = time.Since(t0)
				if !enf.Allowed {
					refused.Add(1)
				}
			}
		})
	}
	t0 := time.Now()
	close(start)
	wg.Wait()
	elapsed := time.Since(t0)
	if n := refused.Load(); n > 0 {
		b.Fatalf("%d of %d decisions refused", n, len(lat))
	}
	return elapsed
}

// BenchmarkStoreEnforceAuto64Paired alternates rounds of the 64 callers'
// decisions with anchor-(c) transactions writing as many rows (100 per
// transaction, prepared), so that both see the disk at the same moments:
// x-100rows-paired is the drift-free ratio of the two rates. The order of
// the two rounds swaps every pair, so that neither always runs on the disk
// the other left (a checkpoint of the WAL it wrote).
func BenchmarkStoreEnforceAuto64Paired(b *testing.B) {
	e, _, _ := openBenchEnforcer(b)
	raw := openRaw(b)
	stmt, err := raw.Prepare(rawInsert + rawTuple)
	if err != nil {
		b.Fatal(err)
	}
	defer stmt.Close()
	const round = 20 * enforceCallers
	lat := make([]time.Duration, round)
	args := make([]any, 0, 10)
	var decisions, rows time.Duration
	var seq int64
	b.ResetTimer()
	for pair, done := 0, 0; done < b.N; pair++ {
		n := min(round, b.N-done)
		if pair%2 == 0 {
			decisions += enforceConcurrently(b, e, lat[:n])
		}
		t0 := time.Now()
		for left := n; left > 0; {
			tx, err := raw.Begin()
			if err != nil {
				b.Fatal(err)
			}
			st := tx.Stmt(stmt)
			for range min(rowsPerTx, left) {
				seq++
				left--
				if _, err := st.Exec(rawRow(args[:0], seq)...); err != nil {
					b.Fatal(err)
				}
			}
			if err := tx.Commit(); err != nil {
				b.Fatal(err)
			}
		}
		rows += time.Since(t0)
		if pair%2 == 1 {
			decisions += enforceConcurrently(b, e, lat[:n])
		}
		done += n
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/decisions.Seconds(), "decisions/s")
	b.ReportMetric(float64(b.N)/rows.Seconds(), "rows/s")
	b.ReportMetric(rows.Seconds()/decisions.Seconds(), "x-100rows-paired")
}

func BenchmarkStoreVerify(b *testing.B) {
	db := sqlite.NewDB(filepath.Join(b.TempDir(), "airlock.db"))
	if err := db.Open(context.Background()); err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	rec := airlock.Record{Events: make([]airlock.Event, verifyPerRecord)}
	for n := 0; n < verifyEvents; n += verifyPerRecord {
		for i := range rec.Events {
			rec.Events[i] = airlock.Event{Kind: airlock.EventDecision, TraceID: "4bf92f3577b34da6a3ce929d0e0e4736",
				Agent: "coder-" + strconv.Itoa(i%8), Outcome: "auto", Payload: benchPayload}
		}
		if _, err := db.Append(ctx, rec); err != nil {
			b.Fatal(err)
		}
	}
	// The log was just written: the operating system's page cache holds it,
	// as it would on a live store.

	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	verified := 0
	b.ResetTimer()
	for verified < b.N || verified == 0 {
		rep, err := db.Verify(ctx)
		if err != nil || !rep.OK() || rep.Events != verifyEvents {
			b.Fatalf("verify: %+v, %v", rep, err)
		}
		verified += int(rep.Events)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(verified), "ns/op")
	b.ReportMetric(perSecond(b, verified), "events/s")
	b.ReportMetric(float64(verified)/verifyEvents, "passes")
}

// rawCommit commits the i-th anchor row in a transaction of its own and
// returns how long it took.
func rawCommit(b *testing.B, db *sql.DB, args []any, i int) time.Duration {
	t0 := time.Now()
	tx, err := db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	if _, err := tx.Exec(rawInsert+rawTuple, rawRow(args[:0], int64(i+1))...); err != nil {
		b.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	return time.Since(t0)
}
