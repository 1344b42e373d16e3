package postgres_test

import (
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
	"github.com/airlock-dev/airlock/postgres"
	"github.com/airlock-dev/airlock/postgres/pgtest"
	"github.com/prometheus/client_golang/prometheus"
)

// TestMetrics: the store's metrics count its batches (every one reads the
// head under the chain's lock: two trips), its clock's offset and its
// pool.
func TestMetrics(t *testing.T) {
	dsn, schema := pgtest.NewSchema(t)
	db, other := OpenSchema(t, dsn, schema, nil), OpenSchema(t, dsn, schema, nil)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(db)
	rec := airlock.Record{Events: []airlock.Event{airlocktest.Event("decision", "a")}}
	for range 3 {
		if _, err := db.Append(t.Context(), rec); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := db.RequestApproval(t.Context(), airlocktest.NewApproval("a", "deploy", airlock.Ask, time.Hour), airlock.Record{}); err != nil {
		t.Fatal(err)
	}
	// Neither an append of nothing nor a refused resolution writes a batch.
	if _, err := db.Append(t.Context(), airlock.Record{}); err != nil {
		t.Fatal(err)
	}
	unknown := airlocktest.Approve(airlocktest.NewApproval("a", "nothing", airlock.Ask, time.Hour))
	if _, err := db.ResolveApproval(t.Context(), unknown); airlock.ErrorCode(err) != airlock.ENOTFOUND {
		t.Fatalf("resolving an unknown request: %v, want ENOTFOUND", err)
	}
	if _, err := other.Append(t.Context(), rec); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Append(t.Context(), rec); err != nil { // the head moved
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			name := f.GetName()
			for _, l := range m.GetLabel() {
				name += "/" + l.GetValue()
			}
			got[name] = m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	want := map[string]float64{
		"airlock_store_batches_total/one_trip":        0,
		"airlock_store_batches_total/sealed":          0,
		"airlock_store_batches_total/two_trips":       5,
		"airlock_store_head_moved_total":              0,
		"airlock_store_batch_failures_total":          0,
		"airlock_store_listener_lost_total":           0,
		"airlock_store_pool_connections/max":          float64(postgres.PoolSize(db)),
		"airlock_store_pool_empty_wait_seconds_total": got["airlock_store_pool_empty_wait_seconds_total"],
	}
	for name, v := range want {
		if g, ok := got[name]; !ok || g != v {
			t.Errorf("%s = %v (reported: %v), want %v", name, g, ok, v)
		}
	}
	if off, ok := got["airlock_store_clock_offset_seconds"]; !ok || off < -5 || off > 5 {
		t.Errorf("clock offset %v s (reported: %v), want within 5 s of this machine's (the server is local)", off, ok)
	}
}
