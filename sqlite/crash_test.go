package sqlite_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/gate"
	"github.com/airlock-dev/airlock/shell"
	"github.com/airlock-dev/airlock/sqlite"
)

// The crash test runs the test binary itself as a child process that
// enforces, resolves and appends concurrently against one database file,
// and kills it with SIGKILL at a random moment. The child writes one
// acknowledgement line to stdout for every write the store confirmed; after
// each kill the parent reopens the database and checks that nothing
// acknowledged was lost and that the state is consistent.
const (
	crashDBEnv        = "AIRLOCK_CRASH_DB"         // set in the child: the database file
	crashChildSeedEnv = "AIRLOCK_CRASH_CHILD_SEED" // set in the child: its random seed
	crashSeedEnv      = "AIRLOCK_CRASH_SEED"       // set by a person to replay a failing parent run

	crashAgent      = "agent-1"
	crashAppender   = "appender"
	crashAppendKind = "crash.append"
	crashAckPrefix  = "ACK "

	// crashChildLifetime bounds an orphaned child: it exits on its own if
	// nobody killed it by then, which the parent reports as a failure.
	crashChildLifetime = 60 * time.Second
)

// crashPolicy gives each outcome to a tool or command of agent-1 (owner
// alice): read_file and `git status` auto; deploy ask (reviewer bob);
// stale_deploy ask with a 1s deadline, which nobody resolves, so that
// requests expire, in the child or after a restart; propose suggest;
// wire_money needs-human; delete_file and `rm` deny.
const crashPolicy = `version: 1
name: crash
layer: project
preset: autonomous
agents:
  agent-1:
    owner: alice
rules:
  - id: reads
    tool: read_file
    outcome: auto
  - id: git-reads
    tool: Bash
    command: "git status *"
    outcome: auto
  - id: removals
    tool: Bash
    command: "rm *"
    outcome: deny
  - id: deploys
    tool: deploy
    outcome: ask
    reviewers: [bob]
    timeout: 10m
  - id: stale-deploys
    tool: stale_deploy
    outcome: ask
    reviewers: [bob]
    timeout: 1s
  - id: proposals
    tool: propose
    outcome: suggest
    timeout: 1h
  - id: money
    tool: wire_money
    outcome: auto
    needs_human: true
    timeout: 1h
  - id: forbidden
    tool: delete_file
    outcome: deny
tests:
  - name: reads run
    action: {agent: agent-1, tool: read_file, args: {path: /work/a}}
    expect: auto
  - name: git status runs
    action: {agent: agent-1, tool: Bash, args: {command: git status}}
    expect: auto
  - name: rm is refused
    action: {agent: agent-1, tool: Bash, args: {command: rm -rf /work/a}}
    expect: deny
  - name: deploys ask
    action: {agent: agent-1, tool: deploy, args: {target: a}}
    expect: ask
  - name: proposals wait for a reviewer
    action: {agent: agent-1, tool: propose, args: {path: /work/a}}
    expect: suggest
  - name: money needs a person
    action: {agent: agent-1, tool: wire_money, args: {amount: 1}}
    expect: {outcome: suggest, needs_human: true}
  - name: deletes are refused
    action: {agent: agent-1, tool: delete_file, args: {path: /work/a}}
    expect: deny
`

// TestCrashChild is the child process of TestCrashSafety; it skips unless
// started by it. It never returns: it works until it is killed.
func TestCrashChild(t *testing.T) {
	path := os.Getenv(crashDBEnv)
	if path == "" {
		t.Skip("the child process of TestCrashSafety: runs only when " + crashDBEnv + " is set")
	}
	seed, err := strconv.ParseUint(os.Getenv(crashChildSeedEnv), 10, 64)
	if err != nil {
		crashChildFail("bad %s: %v", crashChildSeedEnv, err)
	}
	runCrashChild(path, seed)
}

// crashChildFail reports an unexpected result to the parent (on stderr,
// with the exit status) and ends the child.
func crashChildFail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "crash child: "+format+"\n", args...)
	os.Exit(3)
}

// crashChild is the state the child's goroutines share.
type crashChild struct {
	db   *sqlite.DB
	enf  *gate.Enforcer
	mu   sync.Mutex // serialises acknowledgement lines
	seed uint64
	n    atomic.Int64 // numbers trace IDs
}

// ack writes one acknowledgement line in a single write, so that a kill
// leaves either the whole line or none of it.
func (c *crashChild) ack(fields ...string) {
	line := []byte(crashAckPrefix + strings.Join(fields, " ") + "\n")
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := os.Stdout.Write(line); err != nil {
		crashChildFail("write acknowledgement: %v", err)
	}
}

func (c *crashChild) ackApproval(ap *airlock.Approval) {
	c.ack("approval", ap.ID, string(ap.Status))
}

// trace returns a trace ID unique in this child.
func (c *crashChild) trace() string { return fmt.Sprintf("crash-%d-%d", c.seed%1_000_000, c.n.Add(1)) }

// action returns an action of agent-1 with a fresh trace ID (trace IDs are
// not hashed: a retry still matches its approval).
func (c *crashChild) action(tool string, args map[string]any) airlock.Action {
	return airlock.Action{Agent: crashAgent, Tool: tool, Args: airlock.MustArgs(args), TraceID: c.trace()}
}

func runCrashChild(path string, seed uint64) {
	ctx := context.Background()
	p, err := gate.LoadPolicy("crash.yaml", []byte(crashPolicy))
	if err != nil {
		crashChildFail("policy: %v", err)
	}
	g, err := gate.New(shell.Analyser{}, p)
	if err != nil {
		crashChildFail("gate: %v", err)
	}
	db := sqlite.NewDB(path)
	db.PollInterval = 20 * time.Millisecond
	if err := db.Open(ctx); err != nil {
		crashChildFail("open: %v", err)
	}
	c := &crashChild{db: db, enf: &gate.Enforcer{Gate: g, Store: db, GrantTTL: time.Hour}, seed: seed}
	c.ack("ready") // the parent starts the kill delay now, mostly
	workers := []func(*rand.Rand){
		c.auto, c.auto, c.deny,
		c.propose, c.propose, c.propose,
		c.resolve,
		func(r *rand.Rand) { c.ask(r, "deploy", 4) },
		func(r *rand.Rand) { c.ask(r, "deploy", 4) },
		func(r *rand.Rand) { c.ask(r, "stale_deploy", 2) },
		c.sweep,
		c.appendRecords, c.appendRecords,
	}
	for i, w := range workers {
		go w(rand.New(rand.NewPCG(seed, uint64(i))))
	}
	time.Sleep(crashChildLifetime)
	crashChildFail("not killed after %s", crashChildLifetime)
}

// auto enforces actions the policy runs.
func (c *crashChild) auto(r *rand.Rand) {
	for {
		a := c.action("read_file", map[string]any{"path": fmt.Sprintf("/work/f%d", r.IntN(100))})
		if r.IntN(2) == 0 {
			a = c.action("Bash", map[string]any{"command": "git status -s"})
		}
		enf := c.enf.Enforce(context.Background(), a)
		if !enf.Allowed || enf.Label != airlock.LabelAuto || enf.Seq == 0 {
			crashChildFail("auto %s: allowed %v label %s seq %d: %s %s", a.Tool, enf.Allowed, enf.Label, enf.Seq, enf.Code, enf.Message)
		}
		c.ack("decision", strconv.FormatInt(enf.Seq, 10), a.TraceID)
	}
}

// deny enforces actions the policy refuses.
func (c *crashChild) deny(r *rand.Rand) {
	for {
		a := c.action("delete_file", map[string]any{"path": fmt.Sprintf("/work/f%d", r.IntN(100))})
		if r.IntN(2) == 0 {
			a = c.action("Bash", map[string]any{"command": "rm -rf /work/build"})
		}
		enf := c.enf.Enforce(context.Background(), a)
		if enf.Allowed || enf.Code != airlock.CodeDenied || enf.Seq == 0 {
			crashChildFail("deny %s: allowed %v code %s seq %d: %s", a.Tool, enf.Allowed, enf.Code, enf.Seq, enf.Message)
		}
		c.ack("decision", strconv.FormatInt(enf.Seq, 10), a.TraceID)
	}
}

// proposal handles the enforcement of a suggest or needs-human action: a
// grant used, or a request queued (or joined). It returns the pending
// request, nil when a grant was used.
func (c *crashChild) proposal(a airlock.Action, enf airlock.Enforcement) *airlock.Approval {
	switch {
	case enf.Code == airlock.CodeUnavailable:
		crashChildFail("propose %s: %s", a.Tool, enf.Message)
	case enf.Approval == nil:
		crashChildFail("propose %s: no approval (%s %s)", a.Tool, enf.Code, enf.Message)
	case enf.Allowed:
		if enf.Label != airlock.LabelGrantUsed || enf.Approval.Status != airlock.StatusApproved || enf.Approval.GrantUsed.IsZero() {
			crashChildFail("propose %s: allowed as %s, approval %s %s", a.Tool, enf.Label, enf.Approval.ID, enf.Approval.Status)
		}
		c.ack("grant", enf.Approval.ID)
		c.ackApproval(enf.Approval)
		return nil
	case enf.Code != airlock.CodeSuggested && enf.Code != airlock.CodeNeedsHuman:
		crashChildFail("propose %s: %s %s", a.Tool, enf.Code, enf.Message)
	case enf.Approval.Status != airlock.StatusPending:
		crashChildFail("propose %s: request %s is %s", a.Tool, enf.Approval.ID, enf.Approval.Status)
	}
	c.ackApproval(enf.Approval)
	return enf.Approval
}

// propose enforces suggest and needs-human actions from a small set, so
// that goroutines join each other's requests and race for grants; it often
// resolves its own request at once, then retries the action to use the
// grant.
func (c *crashChild) propose(r *rand.Rand) {
	ctx := context.Background()
	for {
		a := c.action("propose", map[string]any{"path": fmt.Sprintf("/work/p%d", r.IntN(6))})
		if r.IntN(3) == 0 {
			a = c.action("wire_money", map[string]any{"amount": r.IntN(3) + 1})
		}
		ap := c.proposal(a, c.enf.Enforce(ctx, a))
		if ap == nil || r.IntN(10) < 3 {
			continue // a grant was used, or the resolver will see to it
		}
		status := airlock.StatusApproved
		if r.IntN(5) == 0 {
			status = airlock.StatusRejected
		}
		c.resolveOne(ap, status, "alice")
		// The same action again (a new trace ID, the same hash).
		a.TraceID = c.trace()
		c.proposal(a, c.enf.Enforce(ctx, a))
	}
}

// resolveOne resolves a request; losing a race to another resolver is
// expected.
func (c *crashChild) resolveOne(ap *airlock.Approval, status airlock.ApprovalStatus, reviewer string) {
	got, err := c.db.ResolveApproval(context.Background(), airlock.Resolution{
		ApprovalID: ap.ID, Status: status, ActionHash: ap.ActionHash,
		Reviewer: airlock.Reviewer{Name: reviewer}, Reason: "crash test", Surface: airlock.SurfaceCLI,
	})
	switch {
	case err == nil:
		if got.Status != status {
			crashChildFail("resolve %s as %s: got %s", ap.ID, status, got.Status)
		}
		c.ackApproval(&got)
	case airlock.ErrorCode(err) != airlock.ECONFLICT:
		crashChildFail("resolve %s: %v", ap.ID, err)
	}
}

// resolve plays the reviewers: it approves, rejects or cancels pending
// requests (all but stale_deploy's, left to expire).
func (c *crashChild) resolve(r *rand.Rand) {
	ctx := context.Background()
	for {
		page, err := c.db.FindApprovals(ctx, airlock.ApprovalFilter{
			Status: []airlock.ApprovalStatus{airlock.StatusPending}, Agent: crashAgent, Oldest: r.IntN(2) == 0, Limit: 20})
		if err != nil {
			crashChildFail("find approvals: %v", err)
		}
		busy := false
		for i := range page.Approvals {
			ap := &page.Approvals[i]
			switch {
			case ap.Tool == "stale_deploy":
				continue
			case ap.Tool != "deploy":
				status := airlock.StatusApproved
				if r.IntN(5) == 0 {
					status = airlock.StatusRejected
				}
				c.resolveOne(ap, status, "alice")
			case r.IntN(7) == 0:
				got, err := c.db.CancelApproval(ctx, ap.ID, "bob", "withdrawn by the crash test", airlock.SurfaceCLI)
				switch {
				case err == nil:
					if got.Status != airlock.StatusCancelled {
						crashChildFail("cancel %s: got %s", ap.ID, got.Status)
					}
					c.ackApproval(&got)
				case airlock.ErrorCode(err) != airlock.ECONFLICT:
					crashChildFail("cancel %s: %v", ap.ID, err)
				}
			case r.IntN(3) == 0:
				c.resolveOne(ap, airlock.StatusRejected, "bob")
			default:
				c.resolveOne(ap, airlock.StatusApproved, "bob")
			}
			busy = true
		}
		if !busy {
			time.Sleep(2 * time.Millisecond) // nothing to review yet
		}
	}
}

// ask enforces actions that block until a person decides (or, for
// stale_deploy, until the request expires).
func (c *crashChild) ask(r *rand.Rand, tool string, targets int) {
	for {
		a := c.action(tool, map[string]any{"target": fmt.Sprintf("t%d", r.IntN(targets))})
		enf := c.enf.Enforce(context.Background(), a)
		switch {
		case enf.Code == airlock.CodeUnavailable:
			crashChildFail("ask %s: %s", tool, enf.Message)
		case enf.Approval == nil || enf.Approval.Status == airlock.StatusPending:
			crashChildFail("ask %s: no settled request (%s %s)", tool, enf.Code, enf.Message)
		case enf.Allowed != (enf.Approval.Status == airlock.StatusApproved && enf.Code != airlock.CodeUsed):
			// A joined caller finds the approval used by another: one
			// approval releases one caller.
			crashChildFail("ask %s: allowed %v with request %s %s", tool, enf.Allowed, enf.Approval.ID, enf.Approval.Status)
		}
		c.ackApproval(enf.Approval)
	}
}

// sweep expires overdue requests, as a server's sweeper does.
func (c *crashChild) sweep(*rand.Rand) {
	for {
		aps, err := c.db.ExpireDue(context.Background(), 100)
		if err != nil {
			crashChildFail("expire due: %v", err)
		}
		for i := range aps {
			if aps[i].Status != airlock.StatusExpired {
				crashChildFail("expire due: %s is %s", aps[i].ID, aps[i].Status)
			}
			c.ackApproval(&aps[i])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// appendRecords appends records of two events and one trust record.
func (c *crashChild) appendRecords(r *rand.Rand) {
	for {
		n := r.Int64()
		ev := func(part int) airlock.Event {
			return airlock.Event{Kind: crashAppendKind, Agent: crashAppender, Outcome: "auto",
				Payload: json.RawMessage(fmt.Sprintf(`{"n":%d,"part":%d}`, n, part))}
		}
		rec := airlock.Record{
			Events: []airlock.Event{ev(1), ev(2)},
			Trust: []airlock.TrustRecord{{Agent: crashAppender, Class: "crash.test", Outcome: airlock.TrustSuccess,
				Tier: airlock.TierRead, Label: airlock.LabelAuto, Tool: "append", AutonomyClass: "auto"}},
		}
		evs, err := c.db.Append(context.Background(), rec)
		if err != nil {
			crashChildFail("append: %v", err)
		}
		if len(evs) != 2 {
			crashChildFail("append returned %d events, want 2", len(evs))
		}
		for _, e := range evs {
			c.ack("event", strconv.FormatInt(e.Seq, 10), e.Hash.String())
		}
	}
}

// crashAcks is what one child acknowledged.
type crashAcks struct {
	events    map[int64]string // seq → hash, from Append
	decisions map[int64]string // seq → trace ID, from Enforce
	approvals []crashApprovalAck
	grants    []string
	lines     int
}

type crashApprovalAck struct {
	id     string
	status airlock.ApprovalStatus
}

// parseCrashAcks reads the complete acknowledgement lines of a child's
// stdout; a last line cut by the kill has no newline and is dropped.
func parseCrashAcks(t *testing.T, out []byte) crashAcks {
	t.Helper()
	acks := crashAcks{events: map[int64]string{}, decisions: map[int64]string{}}
	if i := bytes.LastIndexByte(out, '\n'); i >= 0 {
		out = out[:i+1]
	} else {
		out = nil
	}
	for line := range strings.Lines(string(out)) {
		line = strings.TrimSuffix(line, "\n")
		rest, ok := strings.CutPrefix(line, crashAckPrefix)
		if !ok {
			continue // the test framework's own output
		}
		f := strings.Fields(rest)
		bad := func() { t.Fatalf("malformed acknowledgement %q", line) }
		if len(f) == 0 {
			bad()
		}
		acks.lines++
		switch f[0] {
		case "ready":
		case "event", "decision":
			if len(f) != 3 {
				bad()
			}
			seq, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil || seq <= 0 {
				bad()
			}
			m := acks.events
			if f[0] == "decision" {
				m = acks.decisions
			}
			if _, dup := m[seq]; dup {
				t.Fatalf("seq %d acknowledged twice (%q)", seq, line)
			}
			m[seq] = f[2]
		case "approval":
			if len(f) != 3 || !airlock.ApprovalStatus(f[2]).Valid() {
				bad()
			}
			acks.approvals = append(acks.approvals, crashApprovalAck{f[1], airlock.ApprovalStatus(f[2])})
		case "grant":
			if len(f) != 2 {
				bad()
			}
			acks.grants = append(acks.grants, f[1])
		default:
			bad()
		}
	}
	return acks
}

// crashState is what the parent knows across runs: what was acknowledged
// and what the log held after the previous run.
type crashState struct {
	headSeq int64
	head    airlock.Hash
	// approvals acknowledged: a settled status once any acknowledgement
	// said so, else pending.
	approvals map[string]airlock.ApprovalStatus
	grants    map[string]bool
	// Per approval, from the log: approval.requested events, settlement
	// events (resolved, expired, cancelled) and grant.used events.
	requested, settled, used map[string]int
	appended                 int64 // crash.append events in the log

	ackedEvents, ackedDecisions, ackedApprovalLines, ackedSettled int
}

// check reopens the database after a kill and checks it against what the
// child acknowledged and against the previous run.
func (st *crashState) check(t *testing.T, path string, acks crashAcks) {
	t.Helper()
	ctx := t.Context()
	db := sqlite.NewDB(path)
	if err := db.Open(ctx); err != nil {
		t.Fatalf("reopen after the kill: %v", err)
	}
	defer func() {
		if err := db.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	}()

	// The chain verifies and continues the previous run's: the previous head
	// is still there, with the same hash, so (the chain linking every event
	// to its predecessor) nothing before it changed.
	rep, err := db.Verify(ctx)
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	if !rep.OK() {
		t.Fatalf("audit chain broken at seq %d: %s", rep.FirstBad, rep.Problem)
	}
	if rep.HeadSeq < st.headSeq {
		t.Fatalf("the log shrank: head seq %d, was %d before this run", rep.HeadSeq, st.headSeq)
	}
	if st.headSeq > 0 {
		evs, err := db.Events(ctx, airlock.EventFilter{AfterSeq: st.headSeq - 1, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != 1 || evs[0].Seq != st.headSeq || evs[0].Hash != st.head {
			t.Fatalf("the previous head (seq %d, %s) changed: %+v", st.headSeq, st.head, evs)
		}
	}

	// The events this run added.
	type seen struct {
		hash        airlock.Hash
		kind, trace string
	}
	added := map[int64]seen{}
	for after := st.headSeq; ; {
		evs, err := db.Events(ctx, airlock.EventFilter{AfterSeq: after, Limit: airlock.MaxPageSize})
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 0 {
			break
		}
		for i := range evs {
			e := &evs[i]
			added[e.Seq] = seen{e.Hash, e.Kind, e.TraceID}
			switch e.Kind {
			case airlock.EventApprovalRequested:
				st.requested[e.ApprovalID]++
			case airlock.EventApprovalResolved, airlock.EventApprovalExpired, airlock.EventApprovalCancelled:
				st.settled[e.ApprovalID]++
			case airlock.EventGrantUsed:
				if e.ApprovalID == "" {
					t.Fatalf("grant.used event %d names no approval", e.Seq)
				}
				st.used[e.ApprovalID]++
			case crashAppendKind:
				st.appended++
			}
		}
		after = evs[len(evs)-1].Seq
	}
	if int64(len(added)) != rep.HeadSeq-st.headSeq {
		t.Fatalf("read %d new events, the chain has %d after seq %d", len(added), rep.HeadSeq-st.headSeq, st.headSeq)
	}
	st.headSeq, st.head = rep.HeadSeq, rep.Head

	// Every acknowledged event is there, as acknowledged.
	for seq, h := range acks.events {
		e, ok := added[seq]
		switch {
		case !ok:
			t.Fatalf("acknowledged event seq %d is missing (the log's head is %d)", seq, rep.HeadSeq)
		case e.hash.String() != h:
			t.Fatalf("acknowledged event seq %d has hash %s, acknowledged %s", seq, e.hash, h)
		}
	}
	for seq, trace := range acks.decisions {
		e, ok := added[seq]
		switch {
		case !ok:
			t.Fatalf("acknowledged decision seq %d is missing (the log's head is %d)", seq, rep.HeadSeq)
		case e.kind != airlock.EventDecision || e.trace != trace:
			t.Fatalf("acknowledged decision seq %d (trace %s) is a %s event of trace %s", seq, trace, e.kind, e.trace)
		}
	}
	for seq := range acks.decisions {
		if _, dup := acks.events[seq]; dup {
			t.Fatalf("seq %d acknowledged both as an appended event and as a decision", seq)
		}
	}
	st.ackedEvents += len(acks.events)
	st.ackedDecisions += len(acks.decisions)

	// Every approval request, with its audit events.
	all := map[string]airlock.Approval{}
	pending := map[string]string{}
	for cursor := ""; ; {
		page, err := db.FindApprovals(ctx, airlock.ApprovalFilter{Oldest: true, Cursor: cursor, Limit: airlock.MaxPageSize})
		if err != nil {
			t.Fatal(err)
		}
		for _, ap := range page.Approvals {
			all[ap.ID] = ap
			if ap.Status == airlock.StatusPending {
				k := ap.ActionHash.String() + "/" + ap.Outcome.String()
				if other, dup := pending[k]; dup {
					t.Fatalf("requests %s and %s are both pending for %s", other, ap.ID, k)
				}
				pending[k] = ap.ID
			}
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	for id := range st.requested {
		if _, ok := all[id]; !ok {
			t.Fatalf("approval.requested event for %s, which does not exist", id)
		}
	}
	for id := range st.settled {
		if _, ok := all[id]; !ok {
			t.Fatalf("settlement event for %s, which does not exist", id)
		}
	}
	for id, ap := range all {
		wantSettled := 1
		if ap.Status == airlock.StatusPending {
			wantSettled = 0
		}
		switch {
		case st.requested[id] != 1:
			t.Fatalf("approval %s has %d approval.requested events, want 1", id, st.requested[id])
		case st.settled[id] != wantSettled:
			t.Fatalf("approval %s is %s with %d settlement events, want %d", id, ap.Status, st.settled[id], wantSettled)
		case st.used[id] > 1:
			t.Fatalf("grant %s was consumed %d times", id, st.used[id])
		case (st.used[id] == 1) != !ap.GrantUsed.IsZero():
			t.Fatalf("approval %s: grant used at %v, but %d grant.used events", id, ap.GrantUsed, st.used[id])
		case st.used[id] == 1 && ap.Status != airlock.StatusApproved:
			// A grant used, or an approved ask collected by the caller it
			// released: either way only once, and only when approved.
			t.Fatalf("approval %s (%s, %s) was used", id, ap.Outcome, ap.Status)
		}
	}
	for id := range st.used {
		if _, ok := all[id]; !ok {
			t.Fatalf("grant.used event for %s, which does not exist", id)
		}
	}

	// Every acknowledged request exists, and a settled one stays settled
	// as acknowledged.
	for _, a := range acks.approvals {
		prev, known := st.approvals[a.id]
		switch {
		case a.status == airlock.StatusPending:
			if !known {
				st.approvals[a.id] = a.status
			}
		case known && prev != airlock.StatusPending && prev != a.status:
			t.Fatalf("approval %s was acknowledged as both %s and %s", a.id, prev, a.status)
		default:
			if prev != a.status {
				st.ackedSettled++
			}
			st.approvals[a.id] = a.status
		}
	}
	st.ackedApprovalLines += len(acks.approvals)
	for id, status := range st.approvals {
		ap, ok := all[id]
		switch {
		case !ok:
			t.Fatalf("acknowledged approval %s (%s) is missing", id, status)
		case status != airlock.StatusPending && ap.Status != status:
			t.Fatalf("approval %s was acknowledged %s, but is %s", id, status, ap.Status)
		}
	}

	// Every acknowledged grant use is recorded exactly once, and no grant
	// was acknowledged twice.
	for _, id := range acks.grants {
		if st.grants[id] {
			t.Fatalf("grant %s was used twice", id)
		}
		st.grants[id] = true
	}
	for id := range st.grants {
		if st.used[id] != 1 {
			t.Fatalf("acknowledged grant use of %s has %d grant.used events, want 1", id, st.used[id])
		}
	}

	// Appends are atomic: each record's two events and its trust record.
	sums, err := db.TrustSummaries(ctx, airlock.TrustFilter{Agent: crashAppender})
	if err != nil {
		t.Fatal(err)
	}
	var trust int64
	for _, s := range sums {
		trust += s.Total
	}
	if st.appended != 2*trust {
		t.Fatalf("%d %s events but %d trust records of %s: a record was written in part", st.appended, crashAppendKind, trust, crashAppender)
	}
}

// TestCrashSafety kills a child process doing enforcement with pending
// approvals, grants and appends with SIGKILL at random moments, over and
// over on one database, and checks after every kill that the chain
// verifies, that no acknowledged event or request is missing or changed,
// and that no grant was consumed twice. Replay a failure with
// AIRLOCK_CRASH_SEED=<the logged seed> (it replays the kill delays and the
// children's choices, not the goroutines' scheduling).
func TestCrashSafety(t *testing.T) {
	if os.Getenv(crashDBEnv) != "" {
		t.Skip("inside a crash child")
	}
	const runs = 50
	minDelay, maxDelay := 20*time.Millisecond, 300*time.Millisecond

	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(crashSeedEnv); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("%s=%q: %v", crashSeedEnv, s, err)
		}
	}
	t.Logf("seed %d (replay with %s=%d)", seed, crashSeedEnv, seed)
	rng := rand.New(rand.NewPCG(seed, 0))

	path := filepath.Join(t.TempDir(), "airlock.db")
	st := &crashState{
		approvals: map[string]airlock.ApprovalStatus{}, grants: map[string]bool{},
		requested: map[string]int{}, settled: map[string]int{}, used: map[string]int{},
	}
	start := time.Now()
	for run := range runs {
		// Mostly, the delay counts from the moment the child has opened the
		// database (a child of a -race binary takes ~150ms to get there);
		// one run in five counts it from the start, to kill some children
		// while they open it.
		fromStart := rng.IntN(5) == 0
		delay := minDelay + time.Duration(rng.Int64N(int64(maxDelay-minDelay)))
		childSeed := rng.Uint64()
		cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestCrashChild$", "-test.v=false")
		cmd.Env = append(os.Environ(), crashDBEnv+"="+path, crashChildSeedEnv+"="+strconv.FormatUint(childSeed, 10))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		pipe, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		ready, stdout := make(chan struct{}), make(chan []byte, 1)
		go func() {
			var out []byte
			buf := make([]byte, 64<<10)
			signalled := false
			for {
				n, err := pipe.Read(buf)
				out = append(out, buf[:n]...)
				if !signalled && bytes.Contains(out, []byte(crashAckPrefix+"ready\n")) {
					close(ready)
					signalled = true
				}
				if err != nil { // EOF once the child is gone
					break
				}
			}
			if !signalled {
				close(ready)
			}
			stdout <- out
		}()
		if !fromStart {
			<-ready
		}
		time.Sleep(delay)
		killErr := cmd.Process.Kill()
		out := <-stdout
		waitErr := cmd.Wait()
		if code := cmd.ProcessState.ExitCode(); code != -1 {
			t.Fatalf("run %d: the child exited by itself (status %d, %v; kill: %v) before being killed after %s:\n%s",
				run, code, waitErr, killErr, delay, stderr.String())
		}
		if strings.Contains(stderr.String(), "crash child:") || strings.Contains(stderr.String(), "DATA RACE") {
			t.Fatalf("run %d: the child reported:\n%s", run, stderr.String())
		}
		acks := parseCrashAcks(t, out)
		func() {
			defer func() { // t.Fatal in check runs this on its way out
				if t.Failed() {
					t.Logf("failed after run %d (killed %s after its %s, %d acknowledgements, child seed %d); replay with %s=%d",
						run, delay, map[bool]string{true: "start", false: "open"}[fromStart], acks.lines, childSeed, crashSeedEnv, seed)
				}
			}()
			st.check(t, path, acks)
		}()
	}
	grantsUsed := 0
	for _, n := range st.used {
		grantsUsed += n
	}
	t.Logf("%d runs in %s: acknowledged %d appended events, %d decisions, %d approval lines for %d requests (%d settled), %d grant uses; the log holds %d events, %d requests, %d grants used",
		runs, time.Since(start).Round(time.Millisecond), st.ackedEvents, st.ackedDecisions, st.ackedApprovalLines,
		len(st.approvals), st.ackedSettled, len(st.grants), st.headSeq, len(st.requested), grantsUsed)
	if st.ackedEvents+st.ackedDecisions < 200 || len(st.grants) < 5 {
		t.Fatalf("the children did too little before being killed: %d events and %d grant uses acknowledged, want at least 200 and 5",
			st.ackedEvents+st.ackedDecisions, len(st.grants))
	}
}
