package http_test

// Benchmarks for issue 5: the inbox with 10 000 pending requests renders in
// at most 3× the time of one with 10, because a page reads one page of
// requests through the store's (status, id) index and never the whole queue;
// the history, likewise, reads the last settled through its own index:
//
//	go test -run '^$' -bench Inbox -benchtime 2s -count 5 ./http
//
// Figures and the goal are in docs/BENCHMARKS.md.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
	"github.com/airlock-dev/airlock/sqlite"
)

const (
	// inboxBenchFew and inboxBenchMany are the two queues compared.
	inboxBenchFew  = 10
	inboxBenchMany = 10000
	// inboxBenchPage is the inbox's page size (inbox/inbox.go): a page
	// shows at most this many rows. A queue of exactly this many is the
	// control: as many rows as inboxBenchMany's page, a short queue.
	inboxBenchPage = 50
	// inboxBenchFillers is how many goroutines queue the requests at
	// once, so that the store's group commit writes them in batches.
	inboxBenchFillers = 32
)

// inboxRow opens one request's row in the list.
var inboxRow = []byte(`<li class="row `)

// inboxBench is a server over a fresh SQLite store holding Pending
// requests, pending or (Settled) approved, and a client signed in to its
// inbox as bob the reviewer.
type inboxBench struct {
	URL     string
	Pending int
	Settled bool
	c       *http.Client
	session *http.Cookie
}

func newInboxBench(b *testing.B, pending int) *inboxBench { return newListBench(b, pending, false) }

func newListBench(b *testing.B, n int, settled bool) *inboxBench {
	b.Helper()
	_, hs, db := startServer(b)
	secret := makeToken(b, db, airlock.Token{Role: airlock.RoleReviewer, Name: "bob"})
	fillInbox(b, db, n, settled)

	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	b.Cleanup(tr.CloseIdleConnections)
	ib := &inboxBench{URL: hs.URL, Pending: n, Settled: settled, c: &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
	ib.signIn(b, secret)
	return ib
}

// fillInbox queues n requests of agent-1, each a distinct command so that
// none joins another, and approves each if settle.
func fillInbox(b *testing.B, db *sqlite.DB, n int, settle bool) {
	b.Helper()
	ctx := context.Background()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, inboxBenchFillers)
	for range inboxBenchFillers {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				ap := airlocktest.NewApproval("agent-1", fmt.Sprintf("make deploy-%05d", i), airlock.Ask, time.Hour)
				ap, joined, err := db.RequestApproval(ctx, ap, airlock.Record{})
				if err != nil || joined {
					errs <- fmt.Errorf("queue request %d: joined %v, %v", i, joined, err)
					return
				}
				if !settle {
					continue
				}
				if _, err := db.ResolveApproval(ctx, airlocktest.Approve(ap)); err != nil {
					errs <- fmt.Errorf("approve request %d: %v", i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

func (ib *inboxBench) signIn(b *testing.B, secret string) {
	b.Helper()
	req, err := http.NewRequest("POST", ib.URL+"/inbox/signin", strings.NewReader(url.Values{"token": {secret}}.Encode()))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", ib.URL)
	resp, err := ib.c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		b.Fatalf("sign-in: %d", resp.StatusCode)
	}
	for _, c := range resp.Cookies() {
		if c.Name == "airlock_session" {
			ib.session = c
			return
		}
	}
	b.Fatal("sign-in set no airlock_session cookie")
}

// get fetches path with the session and returns the body's size; it fails
// the benchmark unless the answer is 200 and lists a full first page.
func (ib *inboxBench) get(b *testing.B, path string) int {
	req, err := http.NewRequest("GET", ib.URL+path, nil)
	if err != nil {
		b.Fatal(err)
	}
	req.AddCookie(ib.session)
	resp, err := ib.c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		b.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("GET %s: %d\n%s", path, resp.StatusCode, body)
	}
	if got, want := bytes.Count(body, inboxRow), min(ib.Pending, inboxBenchPage); got != want {
		b.Fatalf("GET %s with %d requests (settled %v): %d rows, want %d", path, ib.Pending, ib.Settled, got, want)
	}
	return len(body)
}

// inboxPaths are the two views timed: the whole page, and the list
// fragment the page re-fetches when a request changes.
var inboxPaths = []struct{ name, path string }{
	{"page", "/inbox"},
	{"list", "/inbox/list"},
}

// BenchmarkInboxPage times one GET of the inbox, signed in, over a queue
// of 10 and one of 10 000 pending requests, and over one of 50, which
// shows as many rows as the 10 000 (one full page) from a short queue.
func BenchmarkInboxPage(b *testing.B) {
	// Filled once here, not in the sub-benchmarks, which testing runs
	// again for every -count.
	benches := []*inboxBench{newInboxBench(b, inboxBenchFew), newInboxBench(b, inboxBenchPage), newInboxBench(b, inboxBenchMany)}
	for _, p := range inboxPaths {
		for _, ib := range benches {
			b.Run(fmt.Sprintf("%s/pending=%d", p.name, ib.Pending), func(b *testing.B) {
				size := ib.get(b, p.path) // and warm the connection
				for b.Loop() {
					ib.get(b, p.path)
				}
				b.ReportMetric(float64(size), "body-B")
			})
		}
	}
}

// BenchmarkInboxPagePaired alternates the two queues request by request
// (the order swapped every op), so that the machine's drift reaches both
// alike, and reports ratio = time(10 000 pending) / time(10 pending), the
// issue's goal being ratio ≤ 3. One op is one GET of each.
func BenchmarkInboxPagePaired(b *testing.B) {
	benchPaired(b, newInboxBench(b, inboxBenchFew), newInboxBench(b, inboxBenchMany), inboxPaths)
}

// BenchmarkInboxHistoryPaired is the same for the history, the last
// settled first, over 10 and 10 000 settled requests.
func BenchmarkInboxHistoryPaired(b *testing.B) {
	benchPaired(b, newListBench(b, inboxBenchFew, true), newListBench(b, inboxBenchMany, true),
		[]struct{ name, path string }{{"page", "/inbox/history"}, {"list", "/inbox/history/list?order=settled&status=settled"}, {"list-newest", "/inbox/history/list?order=newest&status=settled"}})
}

func benchPaired(b *testing.B, few, many *inboxBench, paths []struct{ name, path string }) {
	for _, p := range paths {
		b.Run(p.name, func(b *testing.B) {
			few.get(b, p.path)
			many.get(b, p.path)
			var tFew, tMany time.Duration
			timeGet := func(ib *inboxBench, d *time.Duration) {
				start := time.Now()
				ib.get(b, p.path)
				*d += time.Since(start)
			}
			n := 0
			for b.Loop() {
				if n%2 == 0 {
					timeGet(few, &tFew)
					timeGet(many, &tMany)
				} else {
					timeGet(many, &tMany)
					timeGet(few, &tFew)
				}
				n++
			}
			b.ReportMetric(float64(tFew.Nanoseconds())/float64(n), "ns/few")
			b.ReportMetric(float64(tMany.Nanoseconds())/float64(n), "ns/many")
			b.ReportMetric(float64(tMany)/float64(tFew), "ratio")
		})
	}
}
