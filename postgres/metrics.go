package postgres

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The store's metrics, for an operator running replicas: its write
// batches, whether its listener holds, how far its machine's clock is
// from the database server's (and so, likely, from the other replicas'),
// and its connection pool. The server
// registers them (a DB is a prometheus.Collector).
var (
	batchesDesc = prometheus.NewDesc("airlock_store_batches_total",
		"Write batches committed that wrote something, by how: two_trips (reading the chain's head under its lock). Since issue 25 every batch does; one_trip and sealed stay 0, for dashboards made before.",
		[]string{"path"}, nil)
	headMovedDesc = prometheus.NewDesc("airlock_store_head_moved_total",
		"Batch attempts that found another replica had moved the chain's head. Since issue 25 every batch reads the head under the chain's lock: always 0, for dashboards made before.", nil, nil)
	batchFailuresDesc = prometheus.NewDesc("airlock_store_batch_failures_total",
		"Write batches that failed: their callers were refused, nothing of them was acknowledged.", nil, nil)
	listenerLostDesc = prometheus.NewDesc("airlock_store_listener_lost_total",
		"Times the listener for other replicas' changes lost its connection (it then connects again, and every waiter rereads).", nil, nil)
	clockOffsetDesc = prometheus.NewDesc("airlock_store_clock_offset_seconds",
		"How far the database server's clock is ahead of this machine's: the replicas' clocks must agree, and the server's is one they share.", nil, nil)
	poolConnsDesc = prometheus.NewDesc("airlock_store_pool_connections",
		"Connections of the store's pool, by state (acquired, idle), and its maximum (max).", []string{"state"}, nil)
	poolWaitDesc = prometheus.NewDesc("airlock_store_pool_empty_wait_seconds_total",
		"Time spent waiting for a connection because the pool had none idle: a pool too small for the load shows here.", nil, nil)
)

// Describe implements prometheus.Collector.
func (db *DB) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{batchesDesc, headMovedDesc, batchFailuresDesc, listenerLostDesc,
		clockOffsetDesc, poolConnsDesc, poolWaitDesc} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (db *DB) Collect(ch chan<- prometheus.Metric) {
	counter := func(d *prometheus.Desc, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	counter(batchesDesc, 0, "one_trip")
	counter(batchesDesc, 0, "sealed")
	counter(batchesDesc, db.batches.Load(), "two_trips")
	counter(headMovedDesc, 0)
	counter(batchFailuresDesc, db.batchFailures.Load())
	if db.listen != nil {
		counter(listenerLostDesc, db.listen.lost.Load())
	}
	ch <- prometheus.MustNewConstMetric(clockOffsetDesc, prometheus.GaugeValue,
		time.Duration(db.clock.offset.Load()).Seconds())
	if db.pool != nil {
		s := db.pool.Stat()
		gauge := func(v int32, state string) {
			ch <- prometheus.MustNewConstMetric(poolConnsDesc, prometheus.GaugeValue, float64(v), state)
		}
		gauge(s.AcquiredConns(), "acquired")
		gauge(s.IdleConns(), "idle")
		gauge(s.MaxConns(), "max")
		ch <- prometheus.MustNewConstMetric(poolWaitDesc, prometheus.CounterValue, s.EmptyAcquireWaitTime().Seconds())
	}
}
