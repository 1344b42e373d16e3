//go:build unix

package http_test

// Benchmarks for issue 4: what the JSON API costs on top of a bare loopback
// HTTP hop, the hop and a raw SQLite commit being measured in the same
// benchmark, paired round by round, so that a shared machine's drift
// cancels:
//
//	go test -run '^$' -bench 'HTTP(BareHop32|CheckAuto32)' -benchtime 40000x -count 5 ./http
//	go test -run '^$' -bench HTTPApprovalWakeup -benchtime 1x -count 5 ./http
//
// Figures and goals are in docs/BENCHMARKS.md. Unix only: the CPU time of
// a round is read with getrusage.

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
	"github.com/airlock-dev/airlock/gate"
	"github.com/airlock-dev/airlock/hook"
	airlockhttp "github.com/airlock-dev/airlock/http"
	"github.com/airlock-dev/airlock/sqlite"
	_ "modernc.org/sqlite"
)

const (
	// benchClients is how many clients the throughput benchmarks run at
	// once, each a goroutine on one shared keep-alive transport.
	benchClients = 32
	// benchRound is how many requests of one kind a paired round sends.
	benchRound = 2000
	// benchWakeups is how many approvals one op of
	// BenchmarkHTTPApprovalWakeup settles, one at a time.
	benchWakeups = 1000
	// benchSettle is how long the approver waits after the request is
	// queued, so that the waiting check is asleep when the approval lands
	// (a person takes seconds; without it the check may find the request
	// already approved and never sleep).
	benchSettle = 2 * time.Millisecond
	// benchRawPayload is the payload of the raw anchor's row: about a
	// decision event's.
	benchRawPayload = 500
)

var benchAllowed = []byte(`"allowed":true`)

// benchEnv is the API over a fresh durable SQLite store (agent-1's and
// bob's tokens) and, beside it, the bare hop: a loopback server that reads
// the body and answers a fixed JSON body the size of a check's answer.
type benchEnv struct {
	API, Hop           string // base URLs
	DB                 *sqlite.DB
	Enforcer           *gate.Enforcer // the API's
	AgentAuth, BobAuth string         // Authorization header values
	Answer             int            // bytes in a check's answer, and the hop's
	checks, deploys    benchBodies
	api, hop           *http.Client // benchClients keep-alive connections each
}

func newBenchEnv(b *testing.B) *benchEnv {
	b.Helper()
	s, hs, db := startServer(b)
	env := &benchEnv{API: hs.URL, DB: db, Enforcer: s.Enforcer,
		checks:  newBenchBodies(b, "read_file", "f-", ""),
		deploys: newBenchBodies(b, "deploy", "svc-", "60s"),
		api:     newBenchClient(b, benchClients),
		hop:     newBenchClient(b, benchClients),
	}
	token := func(tok airlock.Token) string { return "Bearer " + makeToken(b, db, tok) }
	env.AgentAuth = token(airlock.Token{Role: airlock.RoleAgent, Name: "agent-1", Agent: "agent-1"})
	env.BobAuth = token(airlock.Token{Role: airlock.RoleReviewer, Name: "bob"})

	// The hop answers as many bytes as a check does.
	code, answer, err := benchPost(env.api, env.API+"/v1/check", env.AgentAuth, newBenchBodies(b, "read_file", "size-", "").body(nil, 0))
	if err != nil || code != http.StatusOK || !bytes.Contains(answer, benchAllowed) {
		b.Fatalf("check read_file: %d %s %v", code, answer, err)
	}
	env.Answer = len(answer)
	hopAnswer := benchAnswer(len(answer))
	hop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(hopAnswer)
	}))
	b.Cleanup(hop.Close)
	env.Hop = hop.URL

	// Open every client's connection to both before the timer.
	warm := make([]time.Duration, 4*benchClients)
	env.checks32(b, -len(warm), warm)
	env.hop32(b, -len(warm), warm)
	return env
}

// newBenchClient returns a keep-alive client that keeps up to conns idle
// connections to a host.
func newBenchClient(b *testing.B, conns int) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.MaxIdleConns = conns
	tr.MaxIdleConnsPerHost = conns
	b.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// benchAnswer is a JSON object of n bytes.
func benchAnswer(n int) []byte {
	const head, tail = `{"allowed":true,"message":"`, `"}`
	return []byte(head + strings.Repeat("x", max(n-len(head)-len(tail), 0)) + tail)
}

// benchBodies are check bodies encoded once: an action of agent-1 whose
// path ends in a request number, spliced in per request.
type benchBodies struct {
	tool, prefix string
	head, tail   []byte
}

func newBenchBodies(b *testing.B, tool, prefix, wait string) benchBodies {
	b.Helper()
	const mark = "@@"
	body, err := json.Marshal(struct {
		Action airlock.Action `json:"action"`
		Wait   string         `json:"wait,omitempty"`
	}{airlocktest.Action(tool, prefix+mark), wait})
	if err != nil {
		b.Fatal(err)
	}
	head, tail, ok := bytes.Cut(body, []byte(mark))
	if !ok {
		b.Fatalf("no %s in %s", mark, body)
	}
	return benchBodies{tool: tool, prefix: prefix, head: head, tail: tail}
}

// body appends the n-th request's body to dst[:0].
func (bb benchBodies) body(dst []byte, n int) []byte {
	dst = append(dst[:0], bb.head...)
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, bb.tail...)
}

// action is the n-th request's action.
func (bb benchBodies) action(n int) airlock.Action {
	return airlocktest.Action(bb.tool, bb.prefix+strconv.Itoa(n))
}

// benchPost sends one JSON body and reads the whole answer.
func benchPost(c *http.Client, url, auth string, body []byte) (int, []byte, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", auth)
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, data, err
}

// checks32 has benchClients clients send len(lat) auto checks (read_file,
// distinct paths numbered from first) to the API, and returns the elapsed
// time.
func (env *benchEnv) checks32(b *testing.B, first int, lat []time.Duration) time.Duration {
	return env.concurrently(b, env.api, env.API+"/v1/check", first, lat, func(code int, data []byte) bool {
		return code == http.StatusOK && bytes.Contains(data, benchAllowed)
	})
}

// hop32 sends the same requests to the bare hop.
func (env *benchEnv) hop32(b *testing.B, first int, lat []time.Duration) time.Duration {
	return env.concurrently(b, env.hop, env.Hop+"/v1/check", first, lat, func(code int, _ []byte) bool {
		return code == http.StatusOK
	})
}

// store32 has benchClients goroutines make the same decisions in process,
// through the API's Enforcer.Check, without HTTP.
func (env *benchEnv) store32(b *testing.B, first int, lat []time.Duration) time.Duration {
	ctx := context.Background()
	var next, refused atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range benchClients {
		wg.Go(func() {
			<-start
			for {
				i := int(next.Add(1)) - 1
				if i >= len(lat) {
					return
				}
				a := env.checks.action(first + i)
				t0 := time.Now()
				enf := env.Enforcer.Check(ctx, a)
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

func (env *benchEnv) concurrently(b *testing.B, c *http.Client, url string, first int, lat []time.Duration, ok func(int, []byte) bool) time.Duration {
	var next atomic.Int64
	var failed sync.Once
	var failure error
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range benchClients {
		wg.Go(func() {
			var body []byte
			<-start
			for {
				i := int(next.Add(1)) - 1
				if i >= len(lat) {
					return
				}
				body = env.checks.body(body, first+i)
				t0 := time.Now()
				code, data, err := benchPost(c, url, env.AgentAuth, body)
				lat[i] = time.Since(t0)
				if err == nil && !ok(code, data) {
					err = fmt.Errorf("status %d: %s", code, data)
				}
				if err != nil {
					failed.Do(func() { failure = err })
					next.Store(int64(len(lat)))
					return
				}
			}
		})
	}
	t0 := time.Now()
	close(start)
	wg.Wait()
	elapsed := time.Since(t0)
	if failure != nil {
		b.Fatalf("POST %s: %v", url, failure)
	}
	return elapsed
}

// benchPercentile returns the p-th percentile (0 < p ≤ 1, nearest rank)
// of sorted durations, 0 when there are none.
func benchPercentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// reportP50P99 reports the p50 and p99 of durations in microseconds, as
// prefix+"p50-µs" and prefix+"p99-µs", and returns them.
func reportP50P99(b *testing.B, lat []time.Duration, prefix string) (p50, p99 float64) {
	s := slices.Clone(lat)
	slices.Sort(s)
	p50 = float64(benchPercentile(s, 0.50)) / float64(time.Microsecond)
	p99 = float64(benchPercentile(s, 0.99)) / float64(time.Microsecond)
	b.ReportMetric(p50, prefix+"p50-µs")
	b.ReportMetric(p99, prefix+"p99-µs")
	return p50, p99
}

// benchCPU is the CPU time (user and system) this process has used: the
// clients' and the servers' both.
func benchCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// timed runs one round and adds its wall and CPU time to *wall and *cpu.
func timed(b *testing.B, wall, cpu *time.Duration, round func() time.Duration) {
	c0 := benchCPU(b)
	*wall += round()
	*cpu += benchCPU(b) - c0
}

// alternate runs a round's legs, each first in turn: round r starts with
// leg r mod len(legs) and goes on in order, so that no leg always runs
// first (after the other's garbage, in its warmed caches) or last.
func alternate(round int, legs []func()) {
	for i := range legs {
		legs[(round+i)%len(legs)]()
	}
}

// reportCPU reports the CPU time per request in microseconds, and the
// cores used while the requests ran.
func reportCPU(b *testing.B, n int, wall, cpu time.Duration, prefix string) {
	b.ReportMetric(float64(cpu)/float64(time.Microsecond)/float64(n), prefix+"cpu-µs")
	if wall > 0 {
		b.ReportMetric(cpu.Seconds()/wall.Seconds(), prefix+"cores")
	}
}

func benchPerSec(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// BenchmarkHTTPBareHop32 is the anchor alone: 32 clients share b.N
// requests to the bare hop.
func BenchmarkHTTPBareHop32(b *testing.B) { benchAlone(b, (*benchEnv).hop32) }

// BenchmarkHTTPCheckAuto32 is 32 clients sharing b.N auto checks (POST
// /v1/check, read_file with a distinct path each), each answered once its
// decision is durable.
func BenchmarkHTTPCheckAuto32(b *testing.B) { benchAlone(b, (*benchEnv).checks32) }

// benchAlone runs b.N requests of one kind by 32 clients and reports their
// rate and latencies.
func benchAlone(b *testing.B, run func(env *benchEnv, b *testing.B, first int, lat []time.Duration) time.Duration) {
	env := newBenchEnv(b)
	lat := make([]time.Duration, b.N)
	b.ResetTimer()
	elapsed := run(env, b, 0, lat)
	b.StopTimer()
	b.ReportMetric(benchPerSec(b.N, elapsed), "req/s")
	reportP50P99(b, lat, "")
	b.ReportMetric(float64(env.Answer), "answer-B")
}

// BenchmarkHTTPCheckAuto32Paired alternates rounds of benchRound requests
// by 32 clients to the bare hop and as many auto checks to the API, the
// same bodies and headers to both, so that both see the machine at the
// same moments; the pairs alternate which round runs first. An op is one
// request of each. Goal: ratio (check req/s over hop req/s) at least 0.5.
func BenchmarkHTTPCheckAuto32Paired(b *testing.B) {
	env := newBenchEnv(b)
	hopLat := make([]time.Duration, b.N)
	checkLat := make([]time.Duration, b.N)
	var hop, check, hopCPU, checkCPU time.Duration
	b.ResetTimer()
	for round, done := 0, 0; done < b.N; round++ {
		n := min(benchRound, b.N-done)
		alternate(round, []func(){
			func() {
				timed(b, &hop, &hopCPU, func() time.Duration { return env.hop32(b, done, hopLat[done:done+n]) })
			},
			func() {
				timed(b, &check, &checkCPU, func() time.Duration { return env.checks32(b, done, checkLat[done:done+n]) })
			},
		})
		done += n
	}
	b.StopTimer()
	hopRate, checkRate := benchPerSec(b.N, hop), benchPerSec(b.N, check)
	b.ReportMetric(hopRate, "hop-req/s")
	b.ReportMetric(checkRate, "check-req/s")
	if hopRate > 0 {
		b.ReportMetric(checkRate/hopRate, "ratio")
	}
	reportP50P99(b, hopLat, "hop-")
	reportP50P99(b, checkLat, "check-")
	reportCPU(b, b.N, hop, hopCPU, "hop-")
	reportCPU(b, b.N, check, checkCPU, "check-")
	b.ReportMetric(float64(env.Answer), "answer-B")
}

// BenchmarkHTTPCheckAuto32Split is a diagnosis, not a goal: it adds to
// the paired rounds a third, the same decisions made in process by 32
// goroutines calling the API's Enforcer.Check on the same store, without
// HTTP; each of the three legs runs first in turn. store-req/s bounds what the API could reach with a free HTTP
// layer; cpu-µs (per request, clients and servers) and cores (CPU seconds
// per second while the round ran) tell whether a leg is short of CPU or
// waiting.
func BenchmarkHTTPCheckAuto32Split(b *testing.B) {
	env := newBenchEnv(b)
	lat := make([]time.Duration, benchRound)
	var hop, check, store, hopCPU, checkCPU, storeCPU time.Duration
	b.ResetTimer()
	for round, done := 0, 0; done < b.N; round++ {
		n := min(benchRound, b.N-done)
		alternate(round, []func(){
			func() { timed(b, &hop, &hopCPU, func() time.Duration { return env.hop32(b, done, lat[:n]) }) },
			func() { timed(b, &check, &checkCPU, func() time.Duration { return env.checks32(b, done, lat[:n]) }) },
			func() { timed(b, &store, &storeCPU, func() time.Duration { return env.store32(b, b.N+done, lat[:n]) }) },
		})
		done += n
	}
	b.StopTimer()
	hopRate, checkRate, storeRate := benchPerSec(b.N, hop), benchPerSec(b.N, check), benchPerSec(b.N, store)
	b.ReportMetric(hopRate, "hop-req/s")
	b.ReportMetric(checkRate, "check-req/s")
	b.ReportMetric(storeRate, "store-req/s")
	if hopRate > 0 && storeRate > 0 {
		b.ReportMetric(checkRate/hopRate, "ratio")
		b.ReportMetric(storeRate/hopRate, "store/hop")
		b.ReportMetric(checkRate/storeRate, "check/store")
	}
	reportCPU(b, b.N, hop, hopCPU, "hop-")
	reportCPU(b, b.N, check, checkCPU, "check-")
	reportCPU(b, b.N, store, storeCPU, "store-")
}

// openBenchRaw opens a fresh SQLite database with the store's durability
// (WAL, synchronous=FULL, BEGIN IMMEDIATE, one connection) and one
// event-shaped table, without the store.
func openBenchRaw(b *testing.B) *sql.DB {
	b.Helper()
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Set("_txlock", "immediate")
	u := url.URL{Scheme: "file", Opaque: (&url.URL{Path: filepath.Join(b.TempDir(), "raw.db")}).EscapedPath(), RawQuery: q.Encode()}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	var mode string
	var synchronous int
	if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		b.Fatalf("journal_mode %q, %v", mode, err)
	}
	if err := db.QueryRow(`PRAGMA synchronous`).Scan(&synchronous); err != nil || synchronous != 2 {
		b.Fatalf("synchronous %d, %v; want 2 (FULL)", synchronous, err)
	}
	if _, err := db.Exec(`CREATE TABLE events (seq INTEGER PRIMARY KEY, time INTEGER NOT NULL, kind TEXT NOT NULL,
		agent TEXT NOT NULL, payload BLOB NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	return db
}

// benchRawRow is the raw anchor's payload: benchRawPayload bytes of JSON.
var benchRawRow = benchAnswer(benchRawPayload)

// benchRawCommit commits one event-shaped row in a transaction of its own and
// returns how long it took.
func benchRawCommit(b *testing.B, db *sql.DB, seq int) time.Duration {
	t0 := time.Now()
	tx, err := db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	if _, err := tx.Exec(`INSERT INTO events (seq, time, kind, agent, payload) VALUES (?, ?, ?, ?, ?)`,
		seq, time.Now().UnixNano(), airlock.EventDecision, "agent-1", benchRawRow); err != nil {
		b.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	return time.Since(t0)
}

// pending polls the store until the request for the action with hash h is
// queued.
func (env *benchEnv) pending(b *testing.B, h airlock.Hash) airlock.Approval {
	f := airlock.ApprovalFilter{Status: []airlock.ApprovalStatus{airlock.StatusPending}, Agent: "agent-1", ActionHash: h, Limit: 1}
	deadline := time.Now().Add(30 * time.Second)
	for {
		page, err := env.DB.FindApprovals(context.Background(), f)
		if err != nil {
			b.Fatal(err)
		}
		if len(page.Approvals) > 0 {
			return page.Approvals[0]
		}
		if time.Now().After(deadline) {
			b.Fatalf("no pending request for %s after 30s", h)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// BenchmarkHTTPApprovalWakeup settles benchWakeups approvals per op, one
// at a time: a check of a deploy action (an ask) waits with "wait":"60s",
// bob approves it, and wake is the time from the approval's answer to the
// waiting check's (negative when the check answers first). Each approval is
// paired with the anchors, in alternating order: one request to the bare
// hop (one client, sequential) and one raw single-row SQLite commit.
// Goals: wake p50 ≤ goal-p50 = hop p50 + commit p50; wake p99 ≤ goal-p99 =
// 3 × (hop p99 + commit p99).
func BenchmarkHTTPApprovalWakeup(b *testing.B) {
	env := newBenchEnv(b)
	raw := openBenchRaw(b)
	waiter, approver, hopper := newBenchClient(b, 1), newBenchClient(b, 1), newBenchClient(b, 1)
	n := b.N * benchWakeups
	wake := make([]time.Duration, n)
	approve := make([]time.Duration, n)
	hop := make([]time.Duration, n)
	commit := make([]time.Duration, n)
	type answer struct {
		at  time.Time
		err error
	}
	var hopBody []byte
	b.ResetTimer()
	for i := range n {
		body := env.deploys.body(nil, i)
		done := make(chan answer, 1)
		go func() {
			code, data, err := benchPost(waiter, env.API+"/v1/check", env.AgentAuth, body)
			at := time.Now()
			if err == nil && (code != http.StatusOK || !bytes.Contains(data, benchAllowed)) {
				err = fmt.Errorf("waiting check: status %d: %s", code, data)
			}
			done <- answer{at, err}
		}()
		h, err := env.deploys.action(i).Hash()
		if err != nil {
			b.Fatal(err)
		}
		ap := env.pending(b, h)
		time.Sleep(benchSettle)
		res, err := json.Marshal(struct {
			Status     airlock.ApprovalStatus `json:"status"`
			ActionHash airlock.Hash           `json:"action_hash"`
		}{airlock.StatusApproved, ap.ActionHash})
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		code, data, err := benchPost(approver, env.API+"/v1/approvals/"+ap.ID+"/resolution", env.BobAuth, res)
		approved := time.Now()
		if err != nil || code != http.StatusOK {
			b.Fatalf("approve %s: status %d: %s %v", ap.ID, code, data, err)
		}
		approve[i] = approved.Sub(t0)
		got := <-done
		if got.err != nil {
			b.Fatal(got.err)
		}
		wake[i] = got.at.Sub(approved)

		hopOnce := func() {
			hopBody = env.deploys.body(hopBody, i)
			t0 := time.Now()
			code, _, err := benchPost(hopper, env.Hop+"/v1/check", env.AgentAuth, hopBody)
			hop[i] = time.Since(t0)
			if err != nil || code != http.StatusOK {
				b.Fatalf("hop: status %d, %v", code, err)
			}
		}
		if i%2 == 0 {
			hopOnce()
			commit[i] = benchRawCommit(b, raw, i+1)
		} else {
			commit[i] = benchRawCommit(b, raw, i+1)
			hopOnce()
		}
	}
	b.StopTimer()
	wakeP50, wakeP99 := reportP50P99(b, wake, "wake-")
	early := 0
	for _, d := range wake {
		if d < 0 {
			early++
		}
	}
	b.ReportMetric(100*float64(early)/float64(n), "wake-early-%")
	b.ReportMetric(float64(slices.Min(wake))/float64(time.Microsecond), "wake-min-µs")
	reportP50P99(b, approve, "approve-")
	hopP50, hopP99 := reportP50P99(b, hop, "hop-")
	commitP50, commitP99 := reportP50P99(b, commit, "commit-")
	goalP50, goalP99 := hopP50+commitP50, 3*(hopP99+commitP99)
	b.ReportMetric(goalP50, "goal-p50-µs")
	b.ReportMetric(goalP99, "goal-p99-µs")
	b.ReportMetric(wakeP50/goalP50, "x-goal-p50")
	b.ReportMetric(wakeP99/goalP99, "x-goal-p99")
}

// benchHookPayload is Claude Code's PreToolUse of `ls -la` (an auto
// decision) for call n of one session.
func benchHookPayload(n int) []byte {
	return []byte(`{"session_id":"sess-bench","transcript_path":"/tmp/t.jsonl","cwd":"/work/app","permission_mode":"default",` +
		`"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls -la","description":"List files"},` +
		`"tool_use_id":"toolu_bench_` + strconv.Itoa(n) + `"}`)
}

// hookBench is the API's handler, called in process, and the two requests
// of BenchmarkHookEndpoint.
type hookBench struct {
	h    http.Handler
	auth string
	n    int // calls made, each with its own call ID
}

// serve sends one request to the handler and checks that it allowed the
// action.
func (hb *hookBench) serve(b *testing.B, target, accept string, body []byte) {
	req := httptest.NewRequest(http.MethodPost, target, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", hb.auth)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	rec := httptest.NewRecorder()
	hb.h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || !bytes.Contains(rec.Body.Bytes(), []byte(accept2allow[accept])) {
		b.Fatalf("POST %s: %d %s", target, rec.Code, rec.Body)
	}
}

// accept2allow is what an answer that allows says, by the Accept asked for.
var accept2allow = map[string]string{
	"":                        `"allowed":true`,
	airlockhttp.HookReplyType: `permissionDecision\":\"allow\"`,
}

// hook sends the next call's PreToolUse to POST /v1/hooks/claude-code, as
// `airlock hook claude-code` does.
func (hb *hookBench) hook(b *testing.B) {
	hb.n++
	hb.serve(b, "/v1/hooks/claude-code?hold=9m50s", airlockhttp.HookReplyType, benchHookPayload(hb.n))
}

// check sends the same action, as the hook's payload reads, to POST
// /v1/check.
func (hb *hookBench) check(b *testing.B) {
	hb.n++
	ev, err := hook.Claude{}.Parse(benchHookPayload(hb.n))
	if err != nil {
		b.Fatal(err)
	}
	ev.Action.Agent = "agent-1"
	body, err := json.Marshal(struct {
		Action airlock.Action `json:"action"`
	}{ev.Action})
	if err != nil {
		b.Fatal(err)
	}
	hb.serve(b, "/v1/check", "", body)
}

// BenchmarkHookEndpoint is one auto decision per op through the API's
// handler, in process (no network): POST /v1/hooks/claude-code with Claude
// Code's PreToolUse of `ls -la` (hook), and the same action to POST
// /v1/check (check, the anchor), each call with its own call ID in one
// session; paired alternates the two (an op is one of each) and reports
// ratio = hook time / check time. Before the timer the session already
// holds more decisions than a hook looks back through. Goal: ratio at most
// 1.2.
//
//	go test -run '^$' -bench HookEndpoint -benchtime 2000x -count 10 ./http
func BenchmarkHookEndpoint(b *testing.B) {
	s, _, db := startServer(b)
	hb := &hookBench{h: s.Handler(), auth: "Bearer " + makeToken(b, db, airlock.Token{Role: airlock.RoleAgent, Name: "agent-1", Agent: "agent-1"})}
	for range 250 {
		hb.hook(b)
	}
	b.Run("check", func(b *testing.B) {
		for b.Loop() {
			hb.check(b)
		}
	})
	b.Run("hook", func(b *testing.B) {
		for b.Loop() {
			hb.hook(b)
		}
	})
	b.Run("paired", func(b *testing.B) {
		var hookTime, checkTime time.Duration
		i := 0
		for b.Loop() {
			t0 := time.Now()
			if i%2 == 0 {
				hb.hook(b)
				t1 := time.Now()
				hb.check(b)
				hookTime, checkTime = hookTime+t1.Sub(t0), checkTime+time.Since(t1)
			} else {
				hb.check(b)
				t1 := time.Now()
				hb.hook(b)
				checkTime, hookTime = checkTime+t1.Sub(t0), hookTime+time.Since(t1)
			}
			i++
		}
		b.ReportMetric(float64(hookTime.Microseconds())/float64(i), "hook-µs")
		b.ReportMetric(float64(checkTime.Microseconds())/float64(i), "check-µs")
		if checkTime > 0 {
			b.ReportMetric(float64(hookTime)/float64(checkTime), "ratio")
		}
	})
}
