package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
	"github.com/airlock-dev/airlock/postgres"
	"github.com/airlock-dev/airlock/postgres/pgtest"
	"github.com/jackc/pgx/v5"
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
	e := &airlock.Enforcer{Gate: airlocktest.NewGate(b), Store: db}
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
	p := func(d []time.Duration, q float64) time.Duration {
		s := slices.Clone(d)
		slices.Sort(s)
		return s[min(len(s)-1, int(q*float64(len(s))))]
	}
	b.ReportMetric(float64(p(decide, 0.5).Microseconds()), "decision-p50-µs")
	b.ReportMetric(float64(p(insert, 0.5).Microseconds()), "insert-p50-µs")
	b.ReportMetric(float64(p(decide, 0.5))/float64(p(insert, 0.5)), "p50-ratio")
	b.ReportMetric(float64(p(decide, 0.99))/float64(p(insert, 0.99)), "p99-ratio")
}
