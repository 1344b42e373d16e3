package postgres_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
	"github.com/airlock-dev/airlock/gate"
	"github.com/airlock-dev/airlock/postgres"
	"github.com/airlock-dev/airlock/postgres/pgtest"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// BenchmarkAppend: one durable audit event per call, one caller at a time.
func BenchmarkAppend(b *testing.B) {
	db := MustOpen(b, nil)
	rec := airlock.Record{Events: []airlock.Event{airlocktest.Event("decision", "a")}}
	for b.Loop() {
		if _, err := db.Append(context.Background(), rec); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendParallel: the same from many callers, batched per
// transaction (group commit).
func BenchmarkAppendParallel(b *testing.B) {
	db := MustOpen(b, nil)
	rec := airlock.Record{Events: []airlock.Event{airlocktest.Event("decision", "a")}}
	b.SetParallelism(32)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := db.Append(context.Background(), rec); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkRawInsert is the floor: one durable single-row INSERT, as
// PostgreSQL does it without Airlock.
func BenchmarkRawInsert(b *testing.B) {
	dsn, schema := pgtest.NewSchema(b)
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(context.Background())
	t := pgx.Identifier{schema, "raw"}.Sanitize()
	if _, err := conn.Exec(context.Background(), `CREATE SCHEMA `+pgx.Identifier{schema}.Sanitize()+`; CREATE TABLE `+t+
		` (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, payload bytea NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	payload := []byte(`{"n":1}`)
	for b.Loop() {
		if _, err := conn.Exec(context.Background(), `INSERT INTO `+t+` (payload) VALUES ($1)`, payload); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendReplicas: 64 callers split over two replicas of one
// schema; compare with BenchmarkAppendParallel (one replica). The chain is
// one: the replicas' batches take turns.
func BenchmarkAppendReplicas(b *testing.B) {
	dsn, schema := pgtest.NewSchema(b)
	dbs := []*postgres.DB{OpenSchema(b, dsn, schema, nil), OpenSchema(b, dsn, schema, nil)}
	rec := airlock.Record{Events: []airlock.Event{airlocktest.Event("decision", "a")}}
	var n atomic.Int64
	b.SetParallelism(32)
	b.RunParallel(func(pb *testing.PB) {
		db := dbs[n.Add(1)%2]
		for pb.Next() {
			if _, err := db.Append(context.Background(), rec); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkDecisionPaired: issue 16's first goal, in its shape — a durable
// auto decision through the enforcer on this store, one caller, against one
// durable single-row INSERT on the same server (the anchor), alternated op
// by op (order swapped every op); p50 and p99 nearest-rank, and their
// ratios.
//
//	go test -run '^$' -bench DecisionPaired -benchtime 2000x -count 5 ./postgres
func BenchmarkDecisionPaired(b *testing.B) {
	dsn, schema := pgtest.NewSchema(b)
	db := OpenSchema(b, dsn, schema, nil)
	e := &gate.Enforcer{Gate: airlocktest.NewGate(b), Store: db}
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(context.Background())
	raw := pgx.Identifier{schema, "raw"}.Sanitize()
	if _, err := conn.Exec(context.Background(), `CREATE TABLE `+raw+
		` (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, payload bytea NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	payload := []byte(`{"n":1}`)
	var decide, insert []time.Duration
	b.ResetTimer()
	for i := range b.N {
		for k := range 2 {
			t0 := time.Now()
			if (i+k)%2 == 0 {
				if enf := e.Check(context.Background(), airlocktest.Action("read_file", fmt.Sprint("f", i))); !enf.Allowed {
					b.Fatalf("not allowed: %+v", enf)
				}
				decide = append(decide, time.Since(t0))
			} else {
				if _, err := conn.Exec(context.Background(), `INSERT INTO `+raw+` (payload) VALUES ($1)`, payload); err != nil {
					b.Fatal(err)
				}
				insert = append(insert, time.Since(t0))
			}
		}
	}
	b.StopTimer()
	reportPaired(b, "decision", decide, "insert", insert)
}

// BenchmarkDecisionThroughput: issue 16's throughput goals, in one run —
// durable auto decisions through the enforcer from 64 callers on one
// replica, the same 64 callers split over two replicas of one schema, and
// the anchor, PostgreSQL itself writing rows in 100-row transactions (each
// a pipeline of 100 single-row INSERTs between BEGIN and COMMIT, from as
// many connections as a store's pool holds, rows the size of a decision's
// audit event). Each phase does b.N operations; the three phases take
// turns three times, and the median rate of each is reported with the
// ratios.
//
//	go test -run '^$' -bench DecisionThroughput -benchtime 20000x -count 3 ./postgres
func BenchmarkDecisionThroughput(b *testing.B) { throughput(b, "read_file") }

// BenchmarkNotifyThroughput is BenchmarkDecisionThroughput with notify
// decisions (write_file): each also queues a delivery, and tells the other
// replicas so.
//
//	go test -run '^$' -bench NotifyThroughput -benchtime 20000x -count 3 ./postgres
func BenchmarkNotifyThroughput(b *testing.B) { throughput(b, "write_file") }

// throughput measures decisions on tool (see BenchmarkDecisionThroughput).
func throughput(b *testing.B, tool string) {
	dsn, schema := pgtest.NewSchema(b)
	g := airlocktest.NewGate(b)
	dbs := []*postgres.DB{OpenSchema(b, dsn, schema, nil), OpenSchema(b, dsn, schema, nil)}
	enfs := []*gate.Enforcer{{Gate: g, Store: dbs[0]}, {Gate: g, Store: dbs[1]}}
	conns := postgres.PoolSize(dbs[0])
	pool, err := pgxpool.New(context.Background(), dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	raw := pgx.Identifier{schema, "raw"}.Sanitize()
	if _, err := pool.Exec(context.Background(), `CREATE TABLE `+raw+
		` (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, payload bytea NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	payload := make([]byte, 350) // a read_file decision's event: 348 bytes
	var next atomic.Int64
	decide := func(replicas int) float64 {
		var left atomic.Int64
		left.Store(int64(b.N))
		var wg sync.WaitGroup
		start := time.Now()
		for c := range 64 {
			e := enfs[c%replicas]
			wg.Go(func() {
				for left.Add(-1) >= 0 {
					enf := e.Check(context.Background(), airlocktest.Action(tool, fmt.Sprint("f", next.Add(1))))
					if !enf.Allowed {
						b.Errorf("not allowed: %s", enf.Message)
						return
					}
				}
			})
		}
		wg.Wait()
		return float64(b.N) / time.Since(start).Seconds()
	}
	insert := func() float64 {
		var left atomic.Int64
		left.Store(int64(b.N))
		var wg sync.WaitGroup
		start := time.Now()
		for range conns {
			wg.Go(func() {
				for left.Add(-100) > -100 {
					var batch pgx.Batch
					batch.Queue(`BEGIN`)
					for range 100 {
						batch.Queue(`INSERT INTO `+raw+` (payload) VALUES ($1)`, payload)
					}
					batch.Queue(`COMMIT`)
					if err := pool.SendBatch(context.Background(), &batch).Close(); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		return float64((b.N+99)/100*100) / time.Since(start).Seconds()
	}
	var one, two, rows, busy, busy2 []float64
	b.ResetTimer()
	for range 3 {
		c0 := readCPU()
		one = append(one, decide(1))
		c1 := readCPU()
		busy = append(busy, c1.busySince(c0))
		two = append(two, decide(2))
		busy2 = append(busy2, readCPU().busySince(c1))
		rows = append(rows, insert())
	}
	b.StopTimer()
	if busy[0] >= 0 {
		// How busy the machine's CPUs were while one replica decided: near
		// 100, a second replica on the same machine has nothing to add.
		b.ReportMetric(100*median(busy), "one-replica-cpu-%")
		b.ReportMetric(100*median(busy2), "two-replicas-cpu-%")
	}
	b.ReportMetric(median(one), "one-replica-decisions/s")
	b.ReportMetric(median(two), "two-replicas-decisions/s")
	b.ReportMetric(median(rows), "raw-rows/s")
	b.ReportMetric(median(two)/median(one), "two/one")
	b.ReportMetric(median(one)/median(rows), "one/raw")
	b.ReportMetric(0, "ns/op")
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// cpuTimes are the machine's CPU times from /proc/stat (Linux), in ticks.
type cpuTimes struct{ busy, total uint64 }

// readCPU reads the CPU times; zero where /proc/stat cannot be read.
func readCPU() cpuTimes {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTimes{}
	}
	line, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(line)
	if len(f) < 8 || f[0] != "cpu" {
		return cpuTimes{}
	}
	var c cpuTimes
	for i, v := range f[1:] {
		n, _ := strconv.ParseUint(v, 10, 64)
		c.total += n
		if i != 3 && i != 4 { // idle, iowait
			c.busy += n
		}
	}
	return c
}

// busySince returns the share of CPU time spent busy since c0, -1 when
// unknown.
func (c cpuTimes) busySince(c0 cpuTimes) float64 {
	if c.total == 0 || c0.total == 0 || c.total == c0.total {
		return -1
	}
	return float64(c.busy-c0.busy) / float64(c.total-c0.total)
}

// BenchmarkWakeupPaired: issue 16's wake-up goal — a check waiting on
// replica A for a request that a reviewer approves on replica B. The
// waiter does what the enforcer does: WaitApproval, then CollectApproval
// with the check's record (a commit on A). The wake-up is timed from the
// moment B's resolution is durable (ResolveApproval returned) to A's
// collection being durable, against its anchor, one hop plus one commit: a
// round trip on one connection (SELECT 1) then a durable single-row
// INSERT on another, timed as one. Alternated op by op; p50 and p99
// nearest-rank, and their ratios. Also reported: the reviewer's side,
// ResolveApproval itself (resolve-p50-µs), and the notification's part,
// B's commit to A's WaitApproval returning (notified-p50-µs), and A's
// CollectApproval after it (collect-p50-µs).
//
//	go test -run '^$' -bench WakeupPaired -benchtime 1000x -count 3 ./postgres
func BenchmarkWakeupPaired(b *testing.B) {
	dsn, schema := pgtest.NewSchema(b)
	a, r := OpenSchema(b, dsn, schema, nil), OpenSchema(b, dsn, schema, nil)
	a.PollInterval, r.PollInterval = time.Hour, time.Hour // only the notification wakes
	conn, hop := connect(b, dsn), connect(b, dsn)
	raw := pgx.Identifier{schema, "raw"}.Sanitize()
	if _, err := conn.Exec(context.Background(), `CREATE TABLE `+raw+
		` (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, payload bytea NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	payload := []byte(`{"n":1}`)
	rec := airlock.Record{Events: []airlock.Event{airlocktest.Event("decision", "a")}}
	var wake, anchor, resolve, notifiedIn, collect []time.Duration
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		ap, _, err := a.RequestApproval(context.Background(),
			airlocktest.NewApproval("a", fmt.Sprint("deploy ", i), airlock.Ask, time.Hour), airlock.Record{})
		if err != nil {
			b.Fatal(err)
		}
		released := make(chan time.Time, 1)
		notified := make(chan time.Time, 1)
		go func() {
			got, err := a.WaitApproval(context.Background(), ap.ID)
			if err != nil || got.Status != airlock.StatusApproved {
				b.Errorf("woke with %s, %v", got.Status, err)
			}
			notified <- time.Now()
			if _, err := a.CollectApproval(context.Background(), ap.ID, rec); err != nil {
				b.Error(err)
			}
			released <- time.Now()
		}()
		for postgres.Waiting(a, ap.ID) == 0 {
			runtime.Gosched()
		}
		b.StartTimer()
		for k := range 2 {
			t0 := time.Now()
			if (i+k)%2 == 0 {
				if _, err := r.ResolveApproval(context.Background(), airlocktest.Approve(ap)); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				resolve = append(resolve, t1.Sub(t0))
				rel, notif := <-released, <-notified
				wake = append(wake, rel.Sub(t1))
				notifiedIn = append(notifiedIn, notif.Sub(t1))
				collect = append(collect, rel.Sub(notif))
			} else {
				if _, err := hop.Exec(context.Background(), `SELECT 1`); err != nil {
					b.Fatal(err)
				}
				if _, err := conn.Exec(context.Background(), `INSERT INTO `+raw+` (payload) VALUES ($1)`, payload); err != nil {
					b.Fatal(err)
				}
				anchor = append(anchor, time.Since(t0))
			}
		}
	}
	b.StopTimer()
	reportPaired(b, "wake-up", wake, "anchor", anchor)
	slices.Sort(notifiedIn)
	b.ReportMetric(float64(notifiedIn[len(notifiedIn)/2].Microseconds()), "notified-p50-µs")
	slices.Sort(resolve)
	b.ReportMetric(float64(resolve[len(resolve)/2].Microseconds()), "resolve-p50-µs")
	slices.Sort(collect)
	b.ReportMetric(float64(collect[len(collect)/2].Microseconds()), "collect-p50-µs")
}

// reportPaired reports the p50 of x and of its anchor y, in µs, and the
// ratios of their p50 and p99 (nearest rank).
func reportPaired(b *testing.B, xname string, x []time.Duration, yname string, y []time.Duration) {
	p := func(d []time.Duration, q float64) time.Duration {
		s := slices.Clone(d)
		slices.Sort(s)
		return s[min(len(s)-1, int(q*float64(len(s))))]
	}
	b.ReportMetric(float64(p(x, 0.5).Microseconds()), xname+"-p50-µs")
	b.ReportMetric(float64(p(y, 0.5).Microseconds()), yname+"-p50-µs")
	b.ReportMetric(float64(p(x, 0.5))/float64(p(y, 0.5)), "p50-ratio")
	b.ReportMetric(float64(p(x, 0.99))/float64(p(y, 0.99)), "p99-ratio")
}
