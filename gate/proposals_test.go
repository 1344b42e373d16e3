package gate_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/gate"
	"github.com/airlock-dev/airlock/shell"
	"github.com/airlock-dev/airlock/sqlite"
)

// TestPropose: a shape of action approved often enough, by enough people,
// after reading, and never rejected, is proposed with its evidence; one
// approved by one person, too fast, too rarely, or rejected once, is not;
// nor is one a live grant covers already.
func TestPropose(t *testing.T) {
	db, clock, advance := clockedStore(t)
	e := &gate.Enforcer{Gate: grantGate(t, clock()), Store: db}

	// settle asks for command as agent, each resolved by the next
	// reviewer after wait.
	settle := func(agent, command string, status airlock.ApprovalStatus, wait time.Duration, reviewers ...string) {
		t.Helper()
		for i, r := range reviewers {
			enf := e.Check(t.Context(), bash(agent, command+" --run="+string(rune('a'+i))))
			if !enf.Pending {
				t.Fatalf("%s: %+v, want an ask", command, enf)
			}
			advance(wait)
			if _, err := db.ResolveApproval(t.Context(), airlock.Resolution{ApprovalID: enf.Approval.ID, Status: status,
				ActionHash: enf.Decision.ActionHash, Reviewer: airlock.Reviewer{Name: r, Admin: true}, Reason: "x",
				Surface: airlock.SurfaceCLI}); err != nil {
				t.Fatal(err)
			}
		}
	}
	settle("coder-1", "npm test", airlock.StatusApproved, time.Minute, "bob", "alice", "bob", "alice", "bob")
	settle("coder-1", "make lint", airlock.StatusApproved, time.Minute, "bob", "bob", "bob", "bob", "bob")
	settle("coder-1", "cargo check", airlock.StatusApproved, time.Second, "bob", "alice", "bob", "alice", "bob")
	settle("coder-1", "go vet", airlock.StatusApproved, time.Minute, "bob", "alice", "bob")
	settle("coder-1", "tox run", airlock.StatusApproved, time.Minute, "bob", "alice", "bob", "alice", "bob")
	settle("coder-1", "tox run -e lint", airlock.StatusRejected, time.Minute, "carol")
	settle("coder-2", "npm test", airlock.StatusApproved, time.Minute, "bob", "alice", "bob", "alice", "bob", "carol")

	ps, err := e.Propose(t.Context(), gate.ProposalRules{}, "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range ps {
		got = append(got, p.Grant.Agent+" "+p.Grant.Pattern.String())
	}
	want := []string{"coder-2 `npm test …`", "coder-1 `npm test …`"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("proposals %q, want %q", got, want)
	}
	p := ps[1]
	// Its coverage: the 5 recorded asks of `npm test …` would have run,
	// and nothing else of coder-1's.
	if p.Covered != 5 {
		t.Errorf("the proposal for coder-1 would have covered %d asks of the last 30 days, want 5", p.Covered)
	}
	if len(p.Evidence) != 5 || len(p.Reviewers) != 2 || p.Reviewers[0] != "alice" || time.Duration(p.MedianWait) != time.Minute ||
		p.Grant.Tool != "Bash" || p.Grant.MaxTier != airlock.TierWrite || p.Grant.Outcome != airlock.Auto {
		t.Errorf("the proposal for coder-1: %+v", p)
	}
	for _, ev := range p.Evidence {
		ap, err := db.Approval(t.Context(), ev.ApprovalID)
		if err != nil || ap.ActionHash != ev.ActionHash || ap.ResolvedBy != ev.Reviewer || ap.Agent != "coder-1" {
			t.Errorf("evidence %+v does not match its request %+v (%v)", ev, ap, err)
		}
	}
	// One agent's proposals only.
	if ps, err := e.Propose(t.Context(), gate.ProposalRules{}, "coder-1"); err != nil || len(ps) != 1 || ps[0].Grant.Agent != "coder-1" {
		t.Errorf("coder-1's proposals: %+v, %v", ps, err)
	}
	// Ratified, it is proposed no more.
	g := p.Grant
	g.ID, g.GrantedBy, g.Expires = "g-ratified", "carol", clock().Add(time.Hour)
	if _, err := db.CreateGrant(t.Context(), g); err != nil {
		t.Fatal(err)
	}
	if ps, err := e.Propose(t.Context(), gate.ProposalRules{}, "coder-1"); err != nil || len(ps) != 0 {
		t.Errorf("after ratifying: %+v, %v; want none", ps, err)
	}
	// Looser rules propose more.
	ps, err = e.Propose(t.Context(), gate.ProposalRules{MinApprovals: 3, MinReviewers: 1, MinMedianWait: time.Nanosecond}, "coder-1")
	if err != nil {
		t.Fatal(err)
	}
	got = got[:0]
	for _, p := range ps {
		got = append(got, p.Grant.Pattern.String())
	}
	if len(got) != 2 || slices.Contains(got, "`cargo check …`") {
		t.Errorf("with looser rules: %q, want make lint and go vet (never tox run, rejected once; nor cargo check, approved faster than it could be read)", got)
	}
}

// TestDigestProposals: the digest tells each agent's owner of the grants
// proposed for the agent, once per period, in one audited notice; an
// agent without an owner is listed in the audit event, no one told.
func TestDigestProposals(t *testing.T) {
	db, _, advance := clockedStore(t)
	p, err := gate.LoadPolicy("policy.yaml", []byte("name: owners\nagents:\n  coder-1: {owner: alice}\n"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := gate.New(shell.Analyser{}, p)
	if err != nil {
		t.Fatal(err)
	}
	e := &gate.Enforcer{Gate: g, Store: db}
	rules := gate.ProposalRules{MinApprovals: 2, MinReviewers: 1}
	for _, agent := range []string{"coder-1", "coder-2"} {
		for i := range 2 {
			enf := e.Check(t.Context(), bash(agent, fmt.Sprintf("npm test --run=%d", i)))
			advance(time.Minute)
			if _, err := db.ResolveApproval(t.Context(), airlock.Resolution{ApprovalID: enf.Approval.ID, Status: airlock.StatusApproved,
				ActionHash: enf.Decision.ActionHash, Reviewer: airlock.Reviewer{Name: "bob", Admin: true}, Surface: airlock.SurfaceCLI}); err != nil {
				t.Fatal(err)
			}
		}
	}
	told, err := e.DigestProposals(t.Context(), rules, 7*24*time.Hour)
	if err != nil || told != 1 {
		t.Fatalf("digest: told %d, %v; want alice, once", told, err)
	}
	ns, err := db.Notifications(t.Context(), airlock.NotificationFilter{Kind: airlock.EventProposalDigest})
	if err != nil || len(ns) != 1 || ns[0].Agent != "coder-1" || !slices.Contains(ns[0].Recipients, "alice") ||
		!strings.Contains(ns[0].Subject, "1 standing grant proposed for coder-1") || !strings.Contains(ns[0].Subject, "`npm test …`") {
		t.Fatalf("notices %+v, %v", ns, err)
	}
	evs, err := db.Events(t.Context(), airlock.EventFilter{Kind: airlock.EventProposalDigest})
	if err != nil || len(evs) != 1 || !strings.Contains(string(evs[0].Payload), `"agent":"coder-2"`) {
		t.Fatalf("digest events %+v, %v", evs, err)
	}
	// Not again within the period; again after it.
	advance(24 * time.Hour)
	if told, err := e.DigestProposals(t.Context(), rules, 7*24*time.Hour); err != nil || told != 0 {
		t.Fatalf("a day later: told %d, %v; want nobody", told, err)
	}
	advance(7 * 24 * time.Hour)
	// Two replicas (here, two enforcers over the store) racing: one digest.
	other := &gate.Enforcer{Gate: g, Store: db}
	results := make(chan int, 2)
	for _, en := range []*gate.Enforcer{e, other} {
		go func() {
			told, err := en.DigestProposals(t.Context(), rules, 7*24*time.Hour)
			if err != nil {
				t.Error(err)
			}
			results <- told
		}()
	}
	if sum := <-results + <-results; sum != 1 {
		t.Fatalf("a week later, two racing: told %d in all, want alice once", sum)
	}
	if evs, _ := db.Events(t.Context(), airlock.EventFilter{Kind: airlock.EventProposalDigest}); len(evs) != 2 {
		t.Fatalf("%d digest events, want 2 (one a week)", len(evs))
	}
}

// clockedStore opens a fresh SQLite store on a clock the test moves, from
// 2026-11-28 12:00 UTC.
func clockedStore(t *testing.T) (db *sqlite.DB, clock func() time.Time, advance func(time.Duration)) {
	var mu sync.Mutex
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	clock = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance = func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	db = sqlite.NewDB(filepath.Join(t.TempDir(), "airlock.db"))
	db.Clock = clock
	if err := db.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, clock, advance
}
