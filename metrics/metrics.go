// Package metrics is Airlock's Prometheus wiring: the server's metrics in
// a registry of their own, the middleware that counts and times its routes,
// and the store decorator that times durable appends.
package metrics

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics are the server's Prometheus metrics, in a registry of their own
// (nothing registered at package load).
type Metrics struct {
	Registry *prometheus.Registry

	decisions       *prometheus.CounterVec
	approvalLatency prometheus.Histogram
	refused         *prometheus.CounterVec
	requests        *prometheus.CounterVec
	duration        *prometheus.HistogramVec
	streams         prometheus.Gauge
	appendLatency   prometheus.Histogram
	hooks           *prometheus.CounterVec
	budgets         *budgets
}

// New returns the metrics of a server over store.
func New(store airlock.Store) *Metrics {
	m := &Metrics{Registry: prometheus.NewRegistry()}
	m.decisions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "airlock_decisions_total", Help: "Checked actions by outcome and result (allowed, pending or the refusal code).",
	}, []string{"outcome", "result"})
	m.approvalLatency = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "airlock_approval_latency_seconds", Help: "Time from an approval request to a person's resolution.",
		Buckets: []float64{1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 4 * 3600, 24 * 3600},
	})
	m.refused = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "airlock_access_refused_total", Help: "API requests refused for authentication or authorisation.",
	}, []string{"code"})
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "airlock_http_requests_total", Help: "HTTP requests by route pattern and status.",
	}, []string{"route", "status"})
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "airlock_http_request_duration_seconds", Help: "HTTP request latency by route pattern (long polls included).",
		Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10),
	}, []string{"route"})
	m.streams = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "airlock_event_streams", Help: "Open Server-Sent Event streams.",
	})
	m.appendLatency = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "airlock_audit_append_seconds", Help: "Latency of durable audit appends (decisions, resolutions).",
		Buckets: prometheus.ExponentialBuckets(0.0001, 2, 14),
	})
	m.hooks = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "airlock_hook_answers_total", Help: "Agent hosts' tool calls answered through /v1/hooks, by host and result (allowed or the refusal code).",
	}, []string{"host", "result"})
	pending := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "airlock_approvals_pending", Help: "Approval requests waiting for a person.",
	}, func() float64 { return float64(countPending(store)) })
	m.budgets = newBudgets(store)
	m.Registry.MustRegister(m.decisions, m.approvalLatency, m.refused, m.requests, m.duration, m.streams, m.appendLatency, m.hooks, pending, m.budgets,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if c, ok := store.(prometheus.Collector); ok {
		// A store's own metrics (the PostgreSQL store's batches, listener,
		// clock and pool).
		m.Registry.MustRegister(c)
	}
	return m
}

// countPending counts the requests waiting for a person (-1 when the
// store cannot say).
func countPending(store airlock.Store) int64 {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n, err := store.CountApprovals(ctx, airlock.StatusPending)
	if err != nil {
		return -1
	}
	return n
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry})
}

// Decided counts a checked action by its outcome and result.
func (m *Metrics) Decided(enf *airlock.Enforcement) {
	result := enf.Code
	switch {
	case enf.Allowed:
		result = "allowed"
	case enf.Pending:
		result = "pending"
	}
	m.decisions.WithLabelValues(enf.Decision.Outcome.String(), result).Inc()
}

// Hooked counts a host's tool call answered through the hook endpoint:
// allowed, or its refusal code.
func (m *Metrics) Hooked(host string, allowed bool, code string) {
	result := code
	if allowed {
		result = "allowed"
	}
	m.hooks.WithLabelValues(host, result).Inc()
}

// Resolved observes how long a person took to resolve the request.
func (m *Metrics) Resolved(ap *airlock.Approval) {
	m.approvalLatency.Observe(ap.ResolvedAt.Sub(ap.Created).Seconds())
}

// Refused counts an API request refused for authentication or
// authorisation, by its code.
func (m *Metrics) Refused(code string) { m.refused.WithLabelValues(code).Inc() }

// Streaming counts an open event stream until the returned function is
// called.
func (m *Metrics) Streaming() (done func()) {
	m.streams.Inc()
	return m.streams.Dec
}

// Middleware counts and times requests by their route pattern.
func (m *Metrics) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &StatusWriter{ResponseWriter: w, Status: http.StatusOK}
		next.ServeHTTP(sw, r)
		route := r.Pattern
		if route == "" {
			route = "other"
		}
		m.requests.WithLabelValues(route, strconv.Itoa(sw.Status)).Inc()
		m.duration.WithLabelValues(route).Observe(time.Since(start).Seconds())
	})
}

// A StatusWriter remembers the status a handler wrote (200 when it wrote
// none), for the middleware that count or log requests.
type StatusWriter struct {
	http.ResponseWriter
	Status int
}

func (w *StatusWriter) WriteHeader(code int) {
	w.Status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *StatusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush lets event streams through the wrapper.
func (w *StatusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Instrument returns store with its durable appends timed.
func (m *Metrics) Instrument(store airlock.Store) airlock.Store {
	return &timedStore{Store: store, m: m}
}

type timedStore struct {
	airlock.Store
	m *Metrics
}

// Append times the append, and follows the budgets its charges take from
// (airlock_budget_remaining), those it found spent too.
func (s *timedStore) Append(ctx context.Context, rec airlock.Record) ([]airlock.Event, error) {
	defer s.m.since(time.Now())
	evs, err := s.Store.Append(ctx, rec)
	s.m.budgets.saw(rec.Charges)
	return evs, err
}

func (s *timedStore) RequestApproval(ctx context.Context, ap airlock.Approval, rec airlock.Record) (airlock.Approval, bool, error) {
	defer s.m.since(time.Now())
	return s.Store.RequestApproval(ctx, ap, rec)
}

func (s *timedStore) ResolveApproval(ctx context.Context, r airlock.Resolution) (airlock.Approval, error) {
	defer s.m.since(time.Now())
	return s.Store.ResolveApproval(ctx, r)
}

func (m *Metrics) since(start time.Time) { m.appendLatency.Observe(time.Since(start).Seconds()) }
