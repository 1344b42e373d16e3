package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/postgres/pgtest"
)

// The replica tests run two `airlock serve` processes, A and B, on one
// fresh PostgreSQL schema, as a team behind a load balancer does, and hold
// them to the promises a single server keeps: one resolution, one
// collection, one chain, a wake-up across replicas.

// replicas is two airlock serve processes on one PostgreSQL schema, with
// the tokens provisioned in their configuration.
type replicas struct {
	a, b              *serveProcess
	configA, configB  string
	admin, agent, bob string // secrets
}

// startReplicas starts replicas A and B on a fresh schema; both are
// killed, then the schema dropped, when the test ends.
func startReplicas(t *testing.T) *replicas {
	t.Helper()
	dsn, schema := pgtest.NewSchema(t) // first: its cleanup (the drop) runs after the kills
	policy, err := filepath.Abs(filepath.Join("testdata", "e2e.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	r := &replicas{
		admin: "airlock_" + strings.Repeat("r", 43),
		agent: "airlock_" + strings.Repeat("s", 43),
		bob:   "airlock_" + strings.Repeat("t", 43),
	}
	config := func(name string) string {
		dir := t.TempDir()
		path := filepath.Join(dir, name+".yaml")
		writeFile(t, path, fmt.Sprintf(`listen: 127.0.0.1:0
data_dir: %s
policies: [%s]
store: {driver: postgres, dsn: %q, schema: %s}
timeouts: {sweep: 100ms} # both sweepers busy, racing to expire
asks: {limit: 0}         # the trials ask more than the default limit
tokens:
  - {role: admin, name: root, secret: %s}
  - {role: agent, agent: coder-1, secret: %s}
  - {role: reviewer, name: bob, secret: %s}
`, filepath.Join(dir, "data"), policy, dsn, schema, r.admin, r.agent, r.bob))
		return path
	}
	r.configA, r.configB = config("a"), config("b")
	// Started together, so that both run the migrations at once (one
	// under the lock, the other waiting for it).
	var wg sync.WaitGroup
	var errA, errB error
	wg.Go(func() { r.a, errA = launchServe(t, r.configA) })
	wg.Go(func() { r.b, errB = launchServe(t, r.configB) })
	wg.Wait()
	if err := errors.Join(errA, errB); err != nil {
		t.Fatal(err)
	}
	return r
}

// client returns an API client of the replica at url.
func (r *replicas) client(url, secret string) *client.Client {
	return client.New(url, secret)
}

// pendingOn waits until the replica at url lists the pending request for
// act, and returns it.
func (r *replicas) pendingOn(t *testing.T, url string, act airlock.Action) airlock.Approval {
	t.Helper()
	c := r.client(url, r.bob)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		page, err := c.Approvals(t.Context(), airlock.ApprovalFilter{Status: []airlock.ApprovalStatus{airlock.StatusPending}, Tool: act.Tool})
		if err != nil {
			t.Fatal(err)
		}
		for _, ap := range page.Approvals {
			if string(ap.Action.Args) == string(act.Args) {
				return ap
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("%s never listed the pending request for %s %s", url, act.Tool, act.Args)
	return airlock.Approval{}
}

// percentile returns the p-th percentile (0 < p ≤ 100) of ds, sorted in
// place.
func percentile(ds []time.Duration, p float64) time.Duration {
	slices.Sort(ds)
	i := int(float64(len(ds))*p/100+0.5) - 1
	return ds[min(max(i, 0), len(ds)-1)]
}

// TestReplicasRacingReviewers: a request queued on A is resolved by 50
// reviewers at once, split over both replicas, half approving and half
// rejecting, as bob and as an admin: exactly one wins, every other is told
// the request is settled (ECONFLICT), and the request ends as the winner
// said, with one approval.resolved event.
func TestReplicasRacingReviewers(t *testing.T) {
	// 200 trials (10,000 racing resolutions) take 6–8 s on a 2-core
	// machine under -race, well inside a minute; 20 under -short.
	trials := 200
	if testing.Short() {
		trials = 20
	}
	const racers = 50
	r := startReplicas(t)
	agent := r.client(r.a.url, r.agent)
	type reviewer struct {
		name   string
		client *client.Client
	}
	var reviewers [2][2]reviewer // [replica][who]
	for i, url := range []string{r.a.url, r.b.url} {
		reviewers[i][0] = reviewer{"bob", r.client(url, r.bob)}
		reviewers[i][1] = reviewer{"root", r.client(url, r.admin)}
	}

	start := time.Now()
	for trial := range trials {
		act := action("deploy", fmt.Sprintf("race-%d", trial))
		enf, err := agent.CheckWait(t.Context(), act, 0)
		if err != nil || !enf.Pending || enf.Approval == nil {
			t.Fatalf("trial %d: check on A: %+v, %v; want a pending request", trial, enf, err)
		}
		id := enf.Approval.ID

		type win struct {
			status airlock.ApprovalStatus
			by     string
			got    airlock.Approval
		}
		var (
			mu    sync.Mutex
			wins  []win
			wg    sync.WaitGroup
			ready = make(chan struct{})
		)
		for g := range racers {
			// Replica, verdict and person vary independently.
			rv := reviewers[g%2][(g/4)%2]
			status := airlock.StatusApproved
			if (g/2)%2 == 1 {
				status = airlock.StatusRejected
			}
			wg.Go(func() {
				<-ready
				got, err := rv.client.Resolve(t.Context(), id, status, enf.Decision.ActionHash, fmt.Sprintf("racer %d", g), airlock.SurfaceAPI)
				switch airlock.ErrorCode(err) {
				case "":
					mu.Lock()
					wins = append(wins, win{status, rv.name, got})
					mu.Unlock()
				case airlock.ECONFLICT:
				default:
					t.Errorf("trial %d: racer %d (%s, %s): %v; want success or a conflict", trial, g, rv.name, status, err)
				}
			})
		}
		close(ready)
		wg.Wait()
		if len(wins) != 1 {
			t.Fatalf("trial %d: %d reviewers won (%+v), want exactly 1", trial, len(wins), wins)
		}
		w := wins[0]
		if w.got.Status != w.status || w.got.ResolvedBy != w.by {
			t.Fatalf("trial %d: the winner (%s, %s) was answered %s by %s", trial, w.by, w.status, w.got.Status, w.got.ResolvedBy)
		}
		for _, c := range []*client.Client{reviewers[0][0].client, reviewers[1][0].client} {
			got, err := c.Approval(t.Context(), id)
			if err != nil || got.Status != w.status || got.ResolvedBy != w.by || got.Reason != w.got.Reason {
				t.Fatalf("trial %d: request %s reads %s by %s (%q), %v; want %s by %s (%q)",
					trial, id, got.Status, got.ResolvedBy, got.Reason, err, w.status, w.by, w.got.Reason)
			}
		}
		page, err := reviewers[1][1].client.Events(t.Context(), airlock.EventFilter{ApprovalID: id, Kind: airlock.EventApprovalResolved})
		if err != nil || len(page.Events) != 1 {
			t.Fatalf("trial %d: approval.resolved events of %s: %d, %v; want 1", trial, id, len(page.Events), err)
		}
	}
	t.Logf("%d trials × %d racers over two replicas in %v", trials, racers, time.Since(start).Round(time.Millisecond))
}

// TestReplicaKilledMidWait: a check waits on A; A is killed (SIGKILL). The
// client resumes the request on B by its ID while bob approves on B, and
// a duplicate of the client resumes it at once on A restarted: exactly one
// of them collects the approval (one grant.used), the other is told it was
// used; waiting on it again is refused, and checking the same action again
// asks anew.
func TestReplicaKilledMidWait(t *testing.T) {
	r := startReplicas(t)
	act := action("deploy", "killed-mid-wait")

	type result struct {
		enf airlock.Enforcement
		err error
	}
	onA := make(chan result, 1)
	go func() {
		enf, err := r.client(r.a.url, r.agent).CheckWait(t.Context(), act, 50*time.Second)
		onA <- result{enf, err}
	}()
	ap := r.pendingOn(t, r.b.url, act)
	time.Sleep(50 * time.Millisecond) // let A's check settle into its wait
	if err := r.a.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	r.a.cmd.Wait()
	select {
	case res := <-onA:
		if res.err == nil || res.enf.Allowed {
			t.Fatalf("the check on A, killed mid-wait: %+v, %v; want the connection lost", res.enf, res.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the check on the killed A never returned")
	}

	a2 := startServe(t, r.configA) // A restarted, on a new port
	resumed := make(chan result, 2)
	for _, url := range []string{r.b.url, a2.url} {
		go func() {
			enf, err := r.client(url, r.agent).Resume(t.Context(), ap.ID, 30*time.Second)
			resumed <- result{enf, err}
		}()
	}
	time.Sleep(50 * time.Millisecond) // let both waiters wait
	if _, err := r.client(r.b.url, r.bob).Resolve(t.Context(), ap.ID, airlock.StatusApproved, ap.ActionHash, "after the crash", airlock.SurfaceAPI); err != nil {
		t.Fatal(err)
	}
	var allowed, used int
	for range 2 {
		select {
		case res := <-resumed:
			switch {
			case res.err != nil:
				t.Errorf("resume: %v", res.err)
			case res.enf.Allowed && res.enf.Approval != nil && res.enf.Approval.ID == ap.ID && !res.enf.Approval.GrantUsed.IsZero():
				allowed++
			case !res.enf.Allowed && res.enf.Code == airlock.CodeUsed:
				used++
			default:
				t.Errorf("resume: %+v; want allowed (collected) or AIRLOCK-USED", res.enf)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the approval on B did not release the resumed checks")
		}
	}
	if allowed != 1 || used != 1 {
		t.Fatalf("of two waiters racing on two replicas, %d were allowed and %d told it was used; want 1 and 1", allowed, used)
	}

	for _, url := range []string{r.b.url, a2.url} {
		enf, err := r.client(url, r.agent).Resume(t.Context(), ap.ID, 0)
		if err != nil || enf.Allowed || enf.Code != airlock.CodeUsed {
			t.Errorf("waiting again on %s after the collection: %+v, %v; want AIRLOCK-USED", url, enf, err)
		}
	}
	enf, err := r.client(r.b.url, r.agent).CheckWait(t.Context(), act, 0)
	if err != nil || enf.Allowed || !enf.Pending || enf.Approval == nil || enf.Approval.ID == ap.ID {
		t.Errorf("the same action checked again: %+v, %v; want a new pending request", enf, err)
	}
	page, err := r.client(r.b.url, r.admin).Events(t.Context(), airlock.EventFilter{ApprovalID: ap.ID, Kind: airlock.EventGrantUsed})
	if err != nil || len(page.Events) != 1 {
		t.Errorf("grant.used events of %s: %+v, %v; want exactly one", ap.ID, page.Events, err)
	}
}

// TestReplicasOneChain: 16 callers check auto-allowed actions against
// both replicas for a few seconds; every decision has its own sequence
// number, and `audit verify` through either replica reports one intact
// chain with the same head and no gap.
func TestReplicasOneChain(t *testing.T) {
	const callers = 16
	run := 3 * time.Second
	if testing.Short() {
		run = time.Second
	}
	r := startReplicas(t)
	var (
		mu   sync.Mutex
		seqs []int64
		wg   sync.WaitGroup
	)
	stop := time.Now().Add(run)
	for g := range callers {
		wg.Go(func() {
			clients := [2]*client.Client{r.client(r.a.url, r.agent), r.client(r.b.url, r.agent)}
			for i := 0; time.Now().Before(stop); i++ {
				enf, err := clients[i%2].CheckWait(t.Context(), action("read_file", fmt.Sprintf("g%d-%d", g, i)), 0)
				if err != nil || !enf.Allowed || enf.Seq <= 0 {
					t.Errorf("caller %d, check %d: %+v, %v; want allowed with its decision's seq", g, i, enf, err)
					return
				}
				mu.Lock()
				seqs = append(seqs, enf.Seq)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	slices.Sort(seqs)
	if c := slices.Compact(slices.Clone(seqs)); len(c) != len(seqs) {
		t.Fatalf("%d decisions share %d sequence numbers", len(seqs), len(c))
	}
	t.Logf("%d decisions from %d callers over two replicas in %v", len(seqs), callers, run)

	var reports []airlock.ChainReport
	for _, url := range []string{r.a.url, r.b.url} {
		rep, err := r.client(url, r.admin).Verify(t.Context())
		if err != nil || !rep.OK() {
			t.Fatalf("verify through %s: %+v, %v", url, rep, err)
		}
		if rep.Events != rep.HeadSeq {
			t.Errorf("verify through %s: %d events up to seq %d: a gap", url, rep.Events, rep.HeadSeq)
		}
		if last := seqs[len(seqs)-1]; rep.HeadSeq < last {
			t.Errorf("verify through %s: head seq %d, before the last decision's %d", url, rep.HeadSeq, last)
		}
		reports = append(reports, rep)

		e := &e2e{url: url, admin: r.admin}
		out := e.cli(t, r.admin, 0, "audit", "verify")
		want := fmt.Sprintf("ok: %d events, head seq %d sha256:%s", rep.HeadSeq, rep.HeadSeq, rep.Head)
		if !strings.Contains(out, want) {
			t.Errorf("airlock audit verify through %s:\n%s\nwant %q", url, out, want)
		}
	}
	if reports[0].Head != reports[1].Head || reports[0].HeadSeq != reports[1].HeadSeq {
		t.Errorf("the replicas verify different chains: A %d %s, B %d %s", reports[0].HeadSeq, reports[0].Head, reports[1].HeadSeq, reports[1].Head)
	}
}

// TestReplicasWakeUpLatency: a check waiting on A is released by an
// approval on B; the time from sending the approval to A's answer is
// logged (p50, p99), each bounded only by a generous 5 s.
func TestReplicasWakeUpLatency(t *testing.T) {
	trials := 50
	if testing.Short() {
		trials = 10
	}
	r := startReplicas(t)
	agent := r.client(r.a.url, r.agent)
	bob := r.client(r.b.url, r.bob)
	var fromSend, fromAck []time.Duration
	for trial := range trials {
		act := action("deploy", fmt.Sprintf("wake-%d", trial))
		type result struct {
			enf airlock.Enforcement
			err error
			at  time.Time
		}
		done := make(chan result, 1)
		go func() {
			enf, err := agent.CheckWait(t.Context(), act, 30*time.Second)
			done <- result{enf, err, time.Now()}
		}()
		ap := r.pendingOn(t, r.b.url, act)
		time.Sleep(20 * time.Millisecond) // let A's check settle into its wait
		sent := time.Now()
		if _, err := bob.Resolve(t.Context(), ap.ID, airlock.StatusApproved, ap.ActionHash, "", airlock.SurfaceAPI); err != nil {
			t.Fatal(err)
		}
		acked := time.Now()
		select {
		case res := <-done:
			if res.err != nil || !res.enf.Allowed {
				t.Fatalf("trial %d: the check on A: %+v, %v; want allowed", trial, res.enf, res.err)
			}
			if d := res.at.Sub(sent); d > 5*time.Second {
				t.Errorf("trial %d: the approval on B released A's check after %v", trial, d)
			}
			fromSend = append(fromSend, res.at.Sub(sent))
			fromAck = append(fromAck, res.at.Sub(acked))
		case <-time.After(30 * time.Second):
			t.Fatalf("trial %d: the approval on B did not release the check waiting on A", trial)
		}
	}
	t.Logf("cross-replica wake-up over %d trials, from the approval sent: p50 %v, p99 %v; from its answer: p50 %v, p99 %v",
		trials, percentile(fromSend, 50), percentile(fromSend, 99), percentile(fromAck, 50), percentile(fromAck, 99))
}

// TestReplicasExpireOnce: requests queued on both replicas pass their
// deadline (1 s) while the sweepers of both run every 100 ms: a check
// waiting on each replica is refused with AIRLOCK-TIMEOUT, and every
// request is expired once — one approval.expired event each.
func TestReplicasExpireOnce(t *testing.T) {
	const requests = 20
	r := startReplicas(t)
	urls := []string{r.a.url, r.b.url}
	var ids []string
	for i := range requests {
		enf, err := r.client(urls[i%2], r.agent).CheckWait(t.Context(), action("page_oncall", fmt.Sprintf("db-%d", i)), 0)
		if err != nil || !enf.Pending || enf.Approval == nil {
			t.Fatalf("check %d: %+v, %v; want a pending request", i, enf, err)
		}
		ids = append(ids, enf.Approval.ID)
	}
	var wg sync.WaitGroup
	for i, url := range urls {
		wg.Go(func() {
			enf, err := r.client(url, r.agent).Resume(t.Context(), ids[1-i], 30*time.Second) // queued on the other
			if err != nil || enf.Allowed || enf.Code != airlock.CodeTimeout {
				t.Errorf("waiting on %s past the deadline: %+v, %v; want AIRLOCK-TIMEOUT", url, enf, err)
			}
		})
	}
	wg.Wait()

	admin := r.client(r.b.url, r.admin)
	deadline := time.Now().Add(10 * time.Second)
	for _, id := range ids {
		for {
			ap, err := admin.Approval(t.Context(), id)
			if err != nil {
				t.Fatal(err)
			}
			if ap.Status == airlock.StatusExpired {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("request %s is %s long past its deadline", id, ap.Status)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	time.Sleep(300 * time.Millisecond) // a few more sweeps on both
	for _, id := range ids {
		page, err := admin.Events(t.Context(), airlock.EventFilter{ApprovalID: id, Kind: airlock.EventApprovalExpired})
		if err != nil || len(page.Events) != 1 {
			t.Errorf("approval.expired events of %s: %d, %v; want exactly one", id, len(page.Events), err)
		}
	}
}
