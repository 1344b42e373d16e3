package postgres_test

import (
	"context"
	"sync/atomic"
	"testing"

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
