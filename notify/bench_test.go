package notify_test

// BenchmarkAskDecision: an ask decision (the check that queues a request
// and answers "pending") with two channels configured — two webhook
// channels to a local receiver, the notifier delivering as it goes —
// against the same decision on a store with none (the anchor), measured
// side by side: the two alternate, order swapped every op, each on its own
// SQLite file.
//
// BenchmarkDelivery: how many notifications per second the notifier
// delivers to a local webhook receiver (signed, each recorded in the
// audit log), from a queue filled beforehand.
//
//	go test -run '^$' -bench 'AskDecision|Delivery' -benchtime 2000x -count 5 ./notify
//
// Goals: the ask decision with two channels at most 1.1× the anchor (p50);
// at least 1 000 deliveries/s. Figures are in docs/BENCHMARKS.md.

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
	"github.com/airlock-dev/airlock/gate"
	"github.com/airlock-dev/airlock/notify"
	"github.com/airlock-dev/airlock/notify/webhook"
	"github.com/airlock-dev/airlock/sqlite"
)

var benchSecret = "whsec_" + base64.StdEncoding.EncodeToString([]byte("bench-signing-key-of-32-bytes!!!"))

// receiver answers 204 to every POST and counts them.
func benchReceiver(b *testing.B) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	b.Cleanup(srv.Close)
	return srv, &n
}

func webhookSpec(b *testing.B, name, url string) *notify.Spec {
	c, err := webhook.New(webhook.Config{URL: url, Secrets: []string{benchSecret},
		Client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}})
	if err != nil {
		b.Fatal(err)
	}
	return &notify.Spec{Name: name, Type: "webhook", Everyone: true, Channel: c}
}

func benchStore(b *testing.B, specs ...*notify.Spec) *sqlite.DB {
	db := sqlite.NewDB(filepath.Join(b.TempDir(), "airlock.db"))
	if err := db.Open(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	db.SetRouter(notify.NewRouter(specs, 0))
	return db
}

func runNotifier(b *testing.B, db *sqlite.DB, specs ...*notify.Spec) {
	chans := map[string]*notify.Spec{}
	for _, s := range specs {
		chans[s.Name] = s
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		(&notify.Notifier{Store: db, Channels: chans, Poll: 10 * time.Millisecond}).Run(ctx)
		close(done)
	}()
	b.Cleanup(func() { cancel(); <-done })
}

func pct(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

func BenchmarkAskDecision(b *testing.B) {
	srv, received := benchReceiver(b)
	specs := []*notify.Spec{webhookSpec(b, "ops", srv.URL), webhookSpec(b, "audit", srv.URL)}
	withChannels := benchStore(b, specs...)
	runNotifier(b, withChannels, specs...)
	without := benchStore(b)
	g := airlocktest.NewGate(b)
	enforcers := []*gate.Enforcer{{Gate: g, Store: without}, {Gate: g, Store: withChannels}}
	lat := [2][]time.Duration{}
	b.ResetTimer()
	for i := range b.N {
		for k := range 2 {
			which := (i + k) % 2 // swap the order every op
			a := airlocktest.Action("deploy", fmt.Sprintf("target-%d", i))
			t0 := time.Now()
			enf := enforcers[which].Check(context.Background(), a)
			lat[which] = append(lat[which], time.Since(t0))
			if !enf.Pending {
				b.Fatalf("not pending: %+v", enf)
			}
		}
	}
	b.StopTimer()
	none, two := pct(lat[0], 0.5), pct(lat[1], 0.5)
	b.ReportMetric(float64(none.Microseconds()), "none-p50-µs")
	b.ReportMetric(float64(two.Microseconds()), "two-channels-p50-µs")
	b.ReportMetric(float64(two)/float64(none), "p50-ratio")
	b.ReportMetric(float64(pct(lat[1], 0.99))/float64(pct(lat[0], 0.99)), "p99-ratio")
	// Every request's notice reached both channels by the end.
	deadline := time.Now().Add(time.Minute)
	for received.Load() < int64(2*b.N) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := received.Load(); got < int64(2*b.N) {
		b.Fatalf("%d deliveries received, want %d", got, 2*b.N)
	}
}

func BenchmarkDelivery(b *testing.B) {
	srv, received := benchReceiver(b)
	spec := webhookSpec(b, "ops", srv.URL)
	db := benchStore(b, spec)
	// Queue b.N notices, 100 to a transaction, with no notifier running.
	for i := 0; i < b.N; i += 100 {
		rec := airlock.Record{Events: []airlock.Event{airlocktest.Event("decision", "a")}}
		for range min(100, b.N-i) {
			rec.Notifications = append(rec.Notifications, airlock.Notification{Kind: airlock.EventDecision, Recipients: []string{"alice"},
				Agent: "a", Subject: "a ran write_file"})
		}
		if _, err := db.Append(context.Background(), rec); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	t0 := time.Now()
	runNotifier(b, db, spec)
	for {
		ns, err := db.Notifications(context.Background(), airlock.NotificationFilter{Status: airlock.NotificationPending, Limit: 1})
		if err != nil {
			b.Fatal(err)
		}
		if len(ns) == 0 {
			failed, _ := db.Notifications(context.Background(), airlock.NotificationFilter{Status: airlock.NotificationFailed, Limit: 1})
			if len(failed) == 0 {
				break
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	elapsed := time.Since(t0)
	b.StopTimer()
	sent, err := db.Notifications(context.Background(), airlock.NotificationFilter{Status: airlock.NotificationSent, Limit: b.N + 1})
	if err != nil || len(sent) != b.N || received.Load() != int64(b.N) {
		b.Fatalf("%d sent, %d received, want %d (%v)", len(sent), received.Load(), b.N, err)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "deliveries/s")
}
