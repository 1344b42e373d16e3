// Package airlocktest holds the conformance suite every airlock.Store must
// pass, and helpers for testing code that uses a store.
//
// A backend's test calls TestStore with a function that opens a fresh,
// empty store whose clock the suite controls:
//
//	func TestConformance(t *testing.T) {
//		airlocktest.TestStore(t, func(t *testing.T, clock func() time.Time) airlock.Store {
//			db := sqlite.NewDB(filepath.Join(t.TempDir(), "airlock.db"))
//			db.Clock = clock
//			...
//		})
//	}
package airlocktest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/google/uuid"
)

// Opener opens a fresh, empty store for one test. The store must read time
// from clock; the suite closes it.
type Opener func(t *testing.T, clock func() time.Time) airlock.Store

// Clock is a settable clock for stores under test.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock stopped at a fixed, round instant.
func NewClock() *Clock { return &Clock{now: time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// TestStore runs the conformance suite against stores made by open.
func TestStore(t *testing.T, open Opener) {
	tests := []struct {
		name string
		fn   func(*testing.T, airlock.Store, *Clock)
	}{
		{"AppendAssignsGaplessSequence", testAppendSequence},
		{"AppendRefusesMalformed", testAppendMalformed},
		{"ExportedEventsVerify", testExportVerifies},
		{"AppendIsAtomic", testAppendAtomic},
		{"ConcurrentAppendsStayChained", testConcurrentAppends},
		{"EventsFilterAndPage", testEventsFilter},
		{"RequestApproval", testRequestApproval},
		{"IdenticalPendingActionJoins", testJoin},
		{"OverdueRequestIsNotJoined", testJoinOverdue},
		{"ResolveExactlyOnce", testResolveOnce},
		{"ResolveChecksHash", testResolveHash},
		{"ResolveAuthorisation", testResolveAuth},
		{"ResolveAfterDeadline", testResolveAfterDeadline},
		{"SystemCannotApproveNeedsHuman", testSystemCannotApproveNeedsHuman},
		{"Cancel", testCancel},
		{"ExpireOnStoreClock", testExpire},
		{"ExpireDue", testExpireDue},
		{"GrantIsOneShot", testGrantOneShot},
		{"GrantExpires", testGrantExpires},
		{"FindApprovalsFilters", testFindFilters},
		{"FindApprovalsPages", testFindPages},
		{"FindApprovalsByDeadline", testFindByDeadline},
		{"FindApprovalsBySettled", testFindBySettled},
		{"EffectHash", testEffectHash},
		{"WaitApprovalWakes", testWait},
		{"WaitApprovalHonoursContext", testWaitContext},
		{"TrustSummaries", testTrust},
		{"Notifications", testNotifications},
		{"RacingResolvers", testRacingResolvers},
		{"Quorum", testQuorum},
		{"QuorumRejection", testQuorumRejection},
		{"QuorumRace", testQuorumRace},
		{"Escalation", testEscalation},
		{"Edit", testEdit},
		{"Passkeys", testPasskeys},
		{"CollectApprovalOnce", testCollect},
		{"CollectableApproval", testCollectable},
		{"Tokens", testTokens},
		{"StandingGrants", testStandingGrants},
		{"Budgets", testBudgets},
		{"GrantsUnlimited", testGrantsUnlimited},
		{"ToolPins", testToolPins},
		{"Sessions", testSessions},
		{"SessionsPerToken", testSessionsPerToken},
		{"RunNow", testRunNow},
		{"WaitEvents", testWaitEvents},
		{"Ready", testReady},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := NewClock()
			s := open(t, clock.Now)
			t.Cleanup(func() { s.Close() })
			tt.fn(t, s, clock)
			MustVerify(t, s)
		})
	}
}

// MustVerify fails the test unless the store's audit chain verifies.
func MustVerify(tb testing.TB, s airlock.AuditLog) airlock.ChainReport {
	tb.Helper()
	rep, err := s.Verify(context.Background())
	if err != nil {
		tb.Fatalf("verify: %v", err)
	}
	if !rep.OK() {
		tb.Fatalf("audit chain broken at seq %d: %s", rep.FirstBad, rep.Problem)
	}
	return rep
}

// Event returns a small, valid event of the given kind.
func Event(kind, agent string) airlock.Event {
	return airlock.Event{Kind: kind, Agent: agent, TraceID: "trace-1", Outcome: "auto",
		Payload: json.RawMessage(`{"n":1}`)}
}

// NewApproval returns a valid pending request for an action of agent with
// the given command, waiting at most timeout.
func NewApproval(agent, command string, o airlock.Outcome, timeout time.Duration) airlock.Approval {
	a := airlock.Action{Agent: agent, Tool: "Bash", Args: airlock.MustArgs(map[string]any{"command": command}),
		TraceID: "trace-" + agent, RequestedBy: "requester"}
	h, err := a.Hash()
	if err != nil {
		panic(err)
	}
	ap := airlock.Approval{
		ID: uuid.Must(uuid.NewV7()).String(), Action: a, ActionHash: h, Class: "process.exec",
		Tier: airlock.TierWrite, Capability: "process.exec", Outcome: o, Summary: "Bash `" + command + "`",
		Reviewers: []string{"rev"}, Owner: "owner", Timeout: timeout, Status: airlock.StatusPending,
		Detail: airlock.ApprovalDetail{AutonomyClass: o.String(), Rule: "test"},
	}
	if o == airlock.Suggest {
		ap.GrantTTL = time.Hour
	}
	return ap
}

// Approve returns a resolution by reviewer "rev" approving ap.
func Approve(ap airlock.Approval) airlock.Resolution {
	return airlock.Resolution{ApprovalID: ap.ID, Status: airlock.StatusApproved, ActionHash: ap.ActionHash,
		Reviewer: airlock.Reviewer{Name: "rev"}, Surface: airlock.SurfaceCLI}
}

func ctx(t *testing.T) context.Context { return t.Context() }

func mustRequest(t *testing.T, s airlock.Store, ap airlock.Approval, rec airlock.Record) airlock.Approval {
	t.Helper()
	got, joined, err := s.RequestApproval(ctx(t), ap, rec)
	if err != nil {
		t.Fatalf("request approval: %v", err)
	}
	if joined {
		t.Fatalf("request approval: joined %s, want a new request", got.ID)
	}
	return got
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := airlock.ErrorCode(err); got != code {
		t.Fatalf("error = %v (code %q), want code %q", err, got, code)
	}
}

func events(t *testing.T, s airlock.Store, f airlock.EventFilter) []airlock.Event {
	t.Helper()
	evs, err := s.Events(ctx(t), f)
	if err != nil {
		t.Fatalf("events: %v", err)
	}
	return evs
}

func kinds(evs []airlock.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Kind)
	}
	return out
}

// testReady: a healthy store, written to, is ready.
func testReady(t *testing.T, s airlock.Store, _ *Clock) {
	if err := s.Ready(ctx(t)); err != nil {
		t.Fatalf("a fresh store: %v", err)
	}
	if _, err := s.Append(ctx(t), airlock.Record{Events: []airlock.Event{Event("decision", "a")}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Ready(ctx(t)); err != nil {
		t.Fatalf("a store that just wrote: %v", err)
	}
}

func testAppendSequence(t *testing.T, s airlock.Store, clock *Clock) {
	got, err := s.Append(ctx(t), airlock.Record{Events: []airlock.Event{Event("decision", "a"), Event("proposal", "a")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Seq != 1 || got[1].Seq != 2 {
		t.Fatalf("sequence numbers %v, want 1, 2", got)
	}
	if got[1].Prev != got[0].Hash || !got[0].Prev.IsZero() {
		t.Fatalf("events are not chained: %+v", got)
	}
	if !got[0].Time.Equal(clock.Now()) {
		t.Fatalf("event time %v, want the store clock's %v", got[0].Time, clock.Now())
	}
	clock.Advance(time.Second)
	more, err := s.Append(ctx(t), airlock.Record{Events: []airlock.Event{Event("decision", "b")}})
	if err != nil {
		t.Fatal(err)
	}
	if more[0].Seq != 3 || more[0].Prev != got[1].Hash {
		t.Fatalf("third event %+v does not follow the second", more[0])
	}
	read := events(t, s, airlock.EventFilter{})
	if len(read) != 3 {
		t.Fatalf("read %d events, want 3", len(read))
	}
	for i, e := range read {
		want := append(got, more...)[i]
		if e.Hash != want.Hash || !e.Time.Equal(want.Time) || string(e.Payload) != string(want.Payload) {
			t.Errorf("event %d read back as %+v, appended as %+v", i+1, e, want)
		}
	}
	if rep := MustVerify(t, s); rep.Events != 3 || rep.HeadSeq != 3 || rep.Head != more[0].Hash {
		t.Fatalf("verify report %+v", rep)
	}
}

// testExportVerifies checks that events written as JSON (an export) and
// read back still verify, whatever spacing the appended payload had.
func testExportVerifies(t *testing.T, s airlock.Store, _ *Clock) {
	e := Event("decision", "a")
	e.Payload = json.RawMessage("{ \"html\" : \"<b>&</b>\",\n \"n\": [1, 2] }")
	if _, err := s.Append(ctx(t), airlock.Record{Events: []airlock.Event{e, Event("proposal", "a")}}); err != nil {
		t.Fatal(err)
	}
	var v airlock.ChainVerifier
	for _, e := range events(t, s, airlock.EventFilter{}) {
		line, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var back airlock.Event
		if err := json.Unmarshal(line, &back); err != nil {
			t.Fatal(err)
		}
		if err := v.Check(&back); err != nil {
			t.Fatalf("exported event does not verify: %v\n%s", err, line)
		}
	}
	if v.Checked() != 2 {
		t.Fatalf("verified %d exported events, want 2", v.Checked())
	}
}

func testAppendMalformed(t *testing.T, s airlock.Store, _ *Clock) {
	for _, e := range []airlock.Event{
		{Kind: "", Payload: json.RawMessage(`{}`)},
		{Kind: "decision", Payload: json.RawMessage(`[1]`)},
		{Kind: "decision", Payload: json.RawMessage(`{"a":`)},
	} {
		_, err := s.Append(ctx(t), airlock.Record{Events: []airlock.Event{Event("decision", "a"), e}})
		wantCode(t, err, airlock.EINVALID)
	}
	// A link to an event is a seq, never negative.
	for _, rec := range []airlock.Record{
		{Trust: []airlock.TrustRecord{{Agent: "a", Class: airlock.ClassFSRead, Outcome: airlock.TrustSuccess, Tool: "ls",
			Label: airlock.LabelAuto, EventSeq: -1}}},
		{Notifications: []airlock.Notification{{Kind: "decision", Subject: "s", EventSeq: -2}}},
	} {
		rec.Events = []airlock.Event{Event("decision", "a")}
		_, err := s.Append(ctx(t), rec)
		wantCode(t, err, airlock.EINVALID)
	}
	if evs := events(t, s, airlock.EventFilter{}); len(evs) != 0 {
		t.Fatalf("a refused record wrote %d events", len(evs))
	}
}

func testAppendAtomic(t *testing.T, s airlock.Store, _ *Clock) {
	rec := airlock.Record{
		Events: []airlock.Event{Event("decision", "a")},
		Trust: []airlock.TrustRecord{{Agent: "a", Class: "fs.write", Outcome: airlock.TrustSuccess,
			Tier: airlock.TierWrite, Label: airlock.LabelAuto, Tool: "write_file"}},
		Notifications: []airlock.Notification{{Recipients: []string{"owner"}, Kind: "decision", Agent: "a", Subject: "ran"}},
	}
	evs, err := s.Append(ctx(t), rec)
	if err != nil {
		t.Fatal(err)
	}
	sums, err := s.TrustSummaries(ctx(t), airlock.TrustFilter{Agent: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if len(sums) != 1 || sums[0].Counts[airlock.TrustSuccess] != 1 {
		t.Fatalf("trust summaries %+v, want one success for a × fs.write", sums)
	}
	ns, err := s.Notifications(ctx(t), airlock.NotificationFilter{})
	if err != nil {
		t.Fatal(err)
	}
	// Without a router a notice is one delivery, for no channel, linked
	// to its event.
	if len(ns) != 1 || !slices.Equal(ns[0].Recipients, []string{"owner"}) || ns[0].EventSeq != evs[0].Seq ||
		ns[0].Key == "" || ns[0].Status != airlock.NotificationPending {
		t.Fatalf("notifications %+v, want one to owner linked to seq %d", ns, evs[0].Seq)
	}
	// A record that fails leaves no delivery behind.
	bad := rec
	bad.Events = []airlock.Event{Event("decision", "a"), {}}
	if _, err := s.Append(ctx(t), bad); err == nil {
		t.Fatal("a malformed record was appended")
	}
	if ns, _ := s.Notifications(ctx(t), airlock.NotificationFilter{}); len(ns) != 1 {
		t.Fatalf("%d deliveries after a failed append, want 1", len(ns))
	}
}

func testConcurrentAppends(t *testing.T, s airlock.Store, _ *Clock) {
	const callers, each = 32, 20
	var wg sync.WaitGroup
	seqs := make(chan int64, callers*each)
	for c := range callers {
		wg.Go(func() {
			for range each {
				evs, err := s.Append(context.Background(), airlock.Record{Events: []airlock.Event{Event("decision", fmt.Sprint("agent-", c))}})
				if err != nil {
					t.Error(err)
					return
				}
				seqs <- evs[0].Seq
			}
		})
	}
	wg.Wait()
	close(seqs)
	var got []int64
	for q := range seqs {
		got = append(got, q)
	}
	slices.Sort(got)
	for i, q := range got {
		if q != int64(i+1) {
			t.Fatalf("acknowledged sequence numbers are not 1..%d: %v", len(got), got)
		}
	}
	if rep := MustVerify(t, s); rep.Events != callers*each {
		t.Fatalf("verified %d events, want %d", rep.Events, callers*each)
	}
}

func testEventsFilter(t *testing.T, s airlock.Store, clock *Clock) {
	for i := range 10 {
		e := Event("decision", fmt.Sprint("agent-", i%2))
		if i == 7 {
			e.Kind, e.TraceID = "proposal", "trace-7"
		}
		if i == 3 {
			e.ApprovalID = "request-3"
		}
		if _, err := s.Append(ctx(t), airlock.Record{Events: []airlock.Event{e}}); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Minute)
	}
	start := NewClock().Now()
	for _, tt := range []struct {
		f    airlock.EventFilter
		want []int64
	}{
		{airlock.EventFilter{Limit: 3}, []int64{1, 2, 3}},
		{airlock.EventFilter{AfterSeq: 8}, []int64{9, 10}},
		{airlock.EventFilter{Agent: "agent-1", Limit: 2}, []int64{2, 4}},
		{airlock.EventFilter{Kind: "proposal"}, []int64{8}},
		{airlock.EventFilter{TraceID: "trace-7"}, []int64{8}},
		{airlock.EventFilter{Since: start.Add(8 * time.Minute)}, []int64{9, 10}},
		{airlock.EventFilter{ApprovalID: "request-3"}, []int64{4}},
		{airlock.EventFilter{KindPrefix: "prop"}, []int64{8}},
		{airlock.EventFilter{KindPrefix: "decision", Agent: "agent-1", Limit: 2}, []int64{2, 4}},
		{airlock.EventFilter{Newest: true, Limit: 3}, []int64{10, 9, 8}},
		{airlock.EventFilter{Newest: true, BeforeSeq: 5, Limit: 2}, []int64{4, 3}},
		{airlock.EventFilter{Agent: "agent-1", Newest: true, BeforeSeq: 8}, []int64{6, 4, 2}},
		{airlock.EventFilter{AfterSeq: 2, BeforeSeq: 5}, []int64{3, 4}},
	} {
		var got []int64
		for _, e := range events(t, s, tt.f) {
			got = append(got, e.Seq)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("Events(%+v) = %v, want %v", tt.f, got, tt.want)
		}
	}
}

func testRequestApproval(t *testing.T, s airlock.Store, clock *Clock) {
	ap := NewApproval("agent-1", "make deploy", airlock.Ask, 10*time.Minute)
	rec := airlock.Record{Events: []airlock.Event{Event("decision", "agent-1")}}
	got := mustRequest(t, s, ap, rec)
	if !got.Created.Equal(clock.Now()) || !got.Expires.Equal(clock.Now().Add(10*time.Minute)) {
		t.Fatalf("created %v expires %v: deadlines must come from the store clock %v", got.Created, got.Expires, clock.Now())
	}
	read, err := s.Approval(ctx(t), ap.ID)
	if err != nil {
		t.Fatal(err)
	}
	for st, want := range map[airlock.ApprovalStatus]int64{airlock.StatusPending: 1, airlock.StatusApproved: 0} {
		if n, err := s.CountApprovals(ctx(t), st); err != nil || n != want {
			t.Fatalf("CountApprovals(%s) = %d, %v; want %d", st, n, err, want)
		}
	}
	if read.Status != airlock.StatusPending || read.ActionHash != ap.ActionHash || read.Agent != "agent-1" ||
		string(read.Args) != string(ap.Args) || read.RequestedBy != "requester" || !slices.Equal(read.Reviewers, []string{"rev"}) ||
		read.Owner != "owner" || !reflect.DeepEqual(read.Detail, ap.Detail) || read.Class != ap.Class || read.Tier != ap.Tier ||
		read.Summary != ap.Summary || read.Timeout != ap.Timeout || !read.Expires.Equal(got.Expires) {
		t.Fatalf("stored request differs:\n got %+v\nwant %+v", read, got)
	}
	if h, _ := read.Action.Hash(); h != read.ActionHash {
		t.Fatalf("stored action hashes to %s, request says %s", h, read.ActionHash)
	}
	evs := events(t, s, airlock.EventFilter{})
	if !slices.Equal(kinds(evs), []string{airlock.EventApprovalRequested, "decision"}) {
		t.Fatalf("events %v", kinds(evs))
	}
	for _, e := range evs {
		if e.ApprovalID != ap.ID {
			t.Errorf("event %s not linked to request %s: %q", e.Kind, ap.ID, e.ApprovalID)
		}
	}
	_, err = s.Approval(ctx(t), uuid.Must(uuid.NewV7()).String())
	wantCode(t, err, airlock.ENOTFOUND)

	bad := ap
	bad.ID, bad.ActionHash = uuid.Must(uuid.NewV7()).String(), airlock.Hash{}
	_, _, err = s.RequestApproval(ctx(t), bad, airlock.Record{})
	wantCode(t, err, airlock.EINVALID)
}

func testJoin(t *testing.T, s airlock.Store, _ *Clock) {
	first := mustRequest(t, s, NewApproval("a", "make deploy", airlock.Ask, time.Minute), airlock.Record{})
	again := NewApproval("a", "make deploy", airlock.Ask, time.Minute)
	got, joined, err := s.RequestApproval(ctx(t), again, airlock.Record{Events: []airlock.Event{Event("decision", "a")}})
	if err != nil {
		t.Fatal(err)
	}
	if !joined || got.ID != first.ID {
		t.Fatalf("identical pending action queued %s (joined %v), want it to join %s", got.ID, joined, first.ID)
	}
	evs := events(t, s, airlock.EventFilter{Kind: "decision"})
	if len(evs) != 1 || evs[0].ApprovalID != first.ID {
		t.Fatalf("the joining decision is not linked to the request: %+v", evs)
	}
	// A different action, or the same one as a proposal, is a new request.
	other := mustRequest(t, s, NewApproval("a", "make deploy2", airlock.Ask, time.Minute), airlock.Record{})
	prop := mustRequest(t, s, NewApproval("a", "make deploy", airlock.Suggest, time.Minute), airlock.Record{})
	if other.ID == first.ID || prop.ID == first.ID {
		t.Fatal("different requests joined")
	}
	// Once resolved, the same action queues anew.
	if _, err := s.ResolveApproval(ctx(t), Approve(first)); err != nil {
		t.Fatal(err)
	}
	mustRequest(t, s, NewApproval("a", "make deploy", airlock.Ask, time.Minute), airlock.Record{})
}

func testJoinOverdue(t *testing.T, s airlock.Store, clock *Clock) {
	first := mustRequest(t, s, NewApproval("a", "make deploy", airlock.Ask, time.Minute), airlock.Record{})
	clock.Advance(time.Minute)
	second := mustRequest(t, s, NewApproval("a", "make deploy", airlock.Ask, time.Minute), airlock.Record{})
	if second.ID == first.ID {
		t.Fatal("joined a request past its deadline")
	}
	old, err := s.Approval(ctx(t), first.ID)
	if err != nil {
		t.Fatal(err)
	}
	if old.Status != airlock.StatusExpired {
		t.Fatalf("overdue request is %s, want expired", old.Status)
	}
}

func testResolveOnce(t *testing.T, s airlock.Store, clock *Clock) {
	ap := mustRequest(t, s, NewApproval("a", "make deploy", airlock.Ask, time.Hour), airlock.Record{})
	clock.Advance(90 * time.Second)
	r := Approve(ap)
	r.Reason = "looks right"
	got, err := s.ResolveApproval(ctx(t), r)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != airlock.StatusApproved || got.ResolvedBy != "rev" || got.Reason != "looks right" ||
		got.Surface != airlock.SurfaceCLI || !got.ResolvedAt.Equal(clock.Now()) {
		t.Fatalf("resolved request %+v", got)
	}
	rej := Approve(ap)
	rej.Status, rej.Reviewer.Name = airlock.StatusRejected, "owner"
	_, err = s.ResolveApproval(ctx(t), rej)
	wantCode(t, err, airlock.ECONFLICT)
	if msg := airlock.ErrorMessage(err); !strings.Contains(msg, "rev") {
		t.Errorf("conflict %q does not say who resolved it", msg)
	}
	evs := events(t, s, airlock.EventFilter{Kind: airlock.EventApprovalResolved})
	if len(evs) != 1 || evs[0].Outcome != "approved" || evs[0].ApprovalID != ap.ID {
		t.Fatalf("resolution events %+v", evs)
	}
	// The owner and the requester are told; the reviewers were told it
	// waited.
	ns, err := s.Notifications(ctx(t), airlock.NotificationFilter{ApprovalID: ap.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(ns) != 2 || ns[0].Kind != airlock.EventApprovalResolved || !slices.Equal(ns[0].Recipients, []string{"owner", "requester"}) ||
		ns[1].Kind != airlock.EventApprovalRequested || !slices.Equal(ns[1].Recipients, []string{"rev", "owner"}) ||
		!slices.Equal(ns[0].Reviewers, ns[1].Reviewers) {
		t.Fatalf("notices %+v, want the request to rev and owner, its resolution to owner and requester", ns)
	}
	_, err = s.ResolveApproval(ctx(t), airlock.Resolution{ApprovalID: uuid.Must(uuid.NewV7()).String(),
		Status: airlock.StatusApproved, ActionHash: ap.ActionHash, Reviewer: airlock.Reviewer{Name: "rev"}, Surface: airlock.SurfaceCLI})
	wantCode(t, err, airlock.ENOTFOUND)
}

func testResolveHash(t *testing.T, s airlock.Store, _ *Clock) {
	ap := mustRequest(t, s, NewApproval("a", "make deploy", airlock.Ask, time.Hour), airlock.Record{})
	r := Approve(ap)
	r.ActionHash[0] ^= 1
	_, err := s.ResolveApproval(ctx(t), r)
	wantCode(t, err, airlock.CodeHashMismatch)
	r.ActionHash = airlock.Hash{}
	_, err = s.ResolveApproval(ctx(t), r)
	wantCode(t, err, airlock.EINVALID)
	if got, _ := s.Approval(ctx(t), ap.ID); got.Status != airlock.StatusPending {
		t.Fatalf("a refused resolution changed the request to %s", got.Status)
	}
}

func testResolveAuth(t *testing.T, s airlock.Store, _ *Clock) {
	for _, tt := range []struct {
		who  airlock.Reviewer
		code string
	}{
		{airlock.Reviewer{Name: "a"}, airlock.EUNAUTHORIZED},                      // the agent itself
		{airlock.Reviewer{Name: "a", Admin: true}, airlock.EUNAUTHORIZED},         // even as admin
		{airlock.Reviewer{Name: "requester"}, airlock.EUNAUTHORIZED},              // asked for it
		{airlock.Reviewer{Name: "requester", Admin: true}, airlock.EUNAUTHORIZED}, // even as admin
		{airlock.Reviewer{Name: "mallory"}, airlock.EUNAUTHORIZED},                // nobody's reviewer
		{airlock.Reviewer{Name: ""}, airlock.EUNAUTHORIZED},                       // anonymous
		{airlock.Reviewer{Name: "rev"}, ""},                                       // listed on the rule
		{airlock.Reviewer{Name: "owner"}, ""},                                     // the agent's owner
		{airlock.Reviewer{Name: "root", Admin: true}, ""},                         // an admin
	} {
		ap := mustRequest(t, s, NewApproval("a", "deploy by "+tt.who.Name+fmt.Sprint(tt.who.Admin), airlock.Ask, time.Hour), airlock.Record{})
		r := Approve(ap)
		r.Reviewer = tt.who
		_, err := s.ResolveApproval(ctx(t), r)
		if got := airlock.ErrorCode(err); got != tt.code {
			t.Errorf("%+v resolving: error %v, want code %q", tt.who, err, tt.code)
		}
	}
}

func testSystemCannotApproveNeedsHuman(t *testing.T, s airlock.Store, _ *Clock) {
	ap := NewApproval("a", "wire money", airlock.Suggest, time.Hour)
	ap.NeedsHuman, ap.Class = true, ap.Class+airlock.NeedsHumanSuffix
	ap = mustRequest(t, s, ap, airlock.Record{})
	r := Approve(ap)
	r.Reviewer, r.Surface = airlock.Reviewer{Name: "root", Admin: true}, airlock.SurfaceSystem
	_, err := s.ResolveApproval(ctx(t), r)
	wantCode(t, err, airlock.EUNAUTHORIZED)
	// The system may still reject it, and a person may approve it.
	r.Surface = airlock.SurfaceWeb
	if _, err := s.ResolveApproval(ctx(t), r); err != nil {
		t.Fatal(err)
	}
}

func testResolveAfterDeadline(t *testing.T, s airlock.Store, clock *Clock) {
	ap := mustRequest(t, s, NewApproval("a", "make deploy", airlock.Ask, time.Minute), airlock.Record{})
	clock.Advance(time.Minute)
	_, err := s.ResolveApproval(ctx(t), Approve(ap))
	wantCode(t, err, airlock.ECONFLICT)
}

func testCancel(t *testing.T, s airlock.Store, _ *Clock) {
	ap := mustRequest(t, s, NewApproval("a", "make deploy", airlock.Ask, time.Hour), airlock.Record{})
	got, err := s.CancelApproval(ctx(t), ap.ID, "", "caller went away", airlock.SurfaceSystem)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != airlock.StatusCancelled || got.Surface != airlock.SurfaceSystem {
		t.Fatalf("cancelled request %+v", got)
	}
	_, err = s.ResolveApproval(ctx(t), Approve(ap))
	wantCode(t, err, airlock.ECONFLICT)
	_, err = s.CancelApproval(ctx(t), ap.ID, "", "again", airlock.SurfaceSystem)
	wantCode(t, err, airlock.ECONFLICT)
	if evs := events(t, s, airlock.EventFilter{Kind: airlock.EventApprovalCancelled}); len(evs) != 1 {
		t.Fatalf("%d cancellation events, want 1", len(evs))
	}
}

func testExpire(t *testing.T, s airlock.Store, clock *Clock) {
	ap := mustRequest(t, s, NewApproval("a", "make deploy", airlock.Ask, time.Minute), airlock.Record{})
	clock.Advance(59 * time.Second)
	got, err := s.ExpireApproval(ctx(t), ap.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != airlock.StatusPending {
		t.Fatalf("expired %s before its deadline on the store's clock", ap.ID)
	}
	clock.Advance(time.Second)
	if got, err = s.ExpireApproval(ctx(t), ap.ID); err != nil {
		t.Fatal(err)
	}
	if got.Status != airlock.StatusExpired || got.Surface != airlock.SurfaceSystem {
		t.Fatalf("request at its deadline is %+v, want expired by the system", got)
	}
	// Expiring again changes nothing and audits nothing more.
	if got, err = s.ExpireApproval(ctx(t), ap.ID); err != nil || got.Status != airlock.StatusExpired {
		t.Fatalf("expire again: %v %v", got.Status, err)
	}
	if evs := events(t, s, airlock.EventFilter{Kind: airlock.EventApprovalExpired}); len(evs) != 1 {
		t.Fatalf("%d expiry events, want 1", len(evs))
	}
}

func testExpireDue(t *testing.T, s airlock.Store, clock *Clock) {
	var due []string
	for i := range 5 {
		ap := mustRequest(t, s, NewApproval("a", fmt.Sprint("job ", i), airlock.Suggest, time.Duration(i+1)*time.Minute), airlock.Record{})
		if i < 3 {
			due = append(due, ap.ID)
		}
	}
	clock.Advance(3 * time.Minute)
	got, err := s.ExpireDue(ctx(t), 100)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, ap := range got {
		if ap.Status != airlock.StatusExpired {
			t.Errorf("%s is %s", ap.ID, ap.Status)
		}
		ids = append(ids, ap.ID)
	}
	if !slices.Equal(ids, due) {
		t.Fatalf("expired %v, want %v", ids, due)
	}
	if got, _ = s.ExpireDue(ctx(t), 100); len(got) != 0 {
		t.Fatalf("second sweep expired %d more", len(got))
	}
}

func grantRecord(agent string) airlock.Record {
	return airlock.Record{Events: []airlock.Event{Event("decision", agent)},
		Trust: []airlock.TrustRecord{{Agent: agent, Class: "process.exec", Outcome: airlock.TrustSuccess,
			Tier: airlock.TierWrite, Label: airlock.LabelGrantUsed, Tool: "Bash"}}}
}

func testGrantOneShot(t *testing.T, s airlock.Store, clock *Clock) {
	ap := mustRequest(t, s, NewApproval("a", "make deploy", airlock.Suggest, time.Hour), airlock.Record{})
	_, err := s.UseGrant(ctx(t), "a", ap.ActionHash, grantRecord("a"))
	wantCode(t, err, airlock.ENOTFOUND) // pending is no grant
	if _, err := s.ResolveApproval(ctx(t), Approve(ap)); err != nil {
		t.Fatal(err)
	}
	other := NewApproval("a", "make deploy ", airlock.Suggest, time.Hour)
	_, err = s.UseGrant(ctx(t), "a", other.ActionHash, grantRecord("a"))
	wantCode(t, err, airlock.ENOTFOUND) // a different action
	_, err = s.UseGrant(ctx(t), "b", ap.ActionHash, grantRecord("b"))
	wantCode(t, err, airlock.ENOTFOUND) // another agent

	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			_, err := s.UseGrant(context.Background(), "a", ap.ActionHash, grantRecord("a"))
			switch airlock.ErrorCode(err) {
			case "":
				wins.Add(1)
			case airlock.ENOTFOUND:
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("grant used %d times, want exactly once", wins.Load())
	}
	got, _ := s.Approval(ctx(t), ap.ID)
	if got.GrantUsed.IsZero() {
		t.Fatal("used grant not marked")
	}
	if evs := events(t, s, airlock.EventFilter{Kind: airlock.EventGrantUsed}); len(evs) != 1 {
		t.Fatalf("%d grant.used events, want 1", len(evs))
	}
	// An ask request approved is no grant: its caller ran it.
	ask := mustRequest(t, s, NewApproval("a", "make ask", airlock.Ask, time.Hour), airlock.Record{})
	if _, err := s.ResolveApproval(ctx(t), Approve(ask)); err != nil {
		t.Fatal(err)
	}
	_, err = s.UseGrant(ctx(t), "a", ask.ActionHash, grantRecord("a"))
	wantCode(t, err, airlock.ENOTFOUND)
}

func testGrantExpires(t *testing.T, s airlock.Store, clock *Clock) {
	ap := mustRequest(t, s, NewApproval("a", "make deploy", airlock.Suggest, time.Hour), airlock.Record{})
	got, err := s.ResolveApproval(ctx(t), Approve(ap))
	if err != nil {
		t.Fatal(err)
	}
	if !got.GrantExpires.Equal(clock.Now().Add(time.Hour)) {
		t.Fatalf("grant expires %v, want an hour after approval", got.GrantExpires)
	}
	clock.Advance(time.Hour)
	_, err = s.UseGrant(ctx(t), "a", ap.ActionHash, grantRecord("a"))
	wantCode(t, err, airlock.ENOTFOUND)
}

func testFindFilters(t *testing.T, s airlock.Store, clock *Clock) {
	mk := func(agent, cmd string, o airlock.Outcome, tier airlock.RiskTier, class string) airlock.Approval {
		ap := NewApproval(agent, cmd, o, time.Hour)
		ap.Tier, ap.Class = tier, class
		clock.Advance(time.Minute)
		return mustRequest(t, s, ap, airlock.Record{})
	}
	a := mk("a", "one", airlock.Ask, airlock.TierWrite, "fs.write")
	b := mk("b", "two", airlock.Suggest, airlock.TierDestructive, "fs.delete#needs-human")
	c := mk("a", "three", airlock.Ask, airlock.TierPrivileged, "fs.delete")
	if _, err := s.ResolveApproval(ctx(t), Approve(c)); err != nil {
		t.Fatal(err)
	}
	ids := func(f airlock.ApprovalFilter) []string {
		page, err := s.FindApprovals(ctx(t), f)
		if err != nil {
			t.Fatalf("find %+v: %v", f, err)
		}
		var out []string
		for _, ap := range page.Approvals {
			out = append(out, ap.ID)
		}
		return out
	}
	for _, tt := range []struct {
		name string
		f    airlock.ApprovalFilter
		want []string
	}{
		{"all, newest first", airlock.ApprovalFilter{}, []string{c.ID, b.ID, a.ID}},
		{"oldest first", airlock.ApprovalFilter{Oldest: true}, []string{a.ID, b.ID, c.ID}},
		{"pending", airlock.ApprovalFilter{Status: []airlock.ApprovalStatus{airlock.StatusPending}}, []string{b.ID, a.ID}},
		{"agent", airlock.ApprovalFilter{Agent: "a"}, []string{c.ID, a.ID}},
		{"class with needs-human", airlock.ApprovalFilter{Class: "fs.delete"}, []string{c.ID, b.ID}},
		{"class needs-human only", airlock.ApprovalFilter{Class: "fs.delete#needs-human"}, []string{b.ID}},
		{"risk", airlock.ApprovalFilter{MinTier: airlock.TierDestructive}, []string{c.ID, b.ID}},
		{"older than", airlock.ApprovalFilter{CreatedBefore: b.Created}, []string{a.ID}},
		{"newer than", airlock.ApprovalFilter{CreatedAfter: a.Created}, []string{c.ID, b.ID}},
		{"hash", airlock.ApprovalFilter{ActionHash: b.ActionHash}, []string{b.ID}},
		{"search the summary, any case", airlock.ApprovalFilter{Search: "TWO"}, []string{b.ID}},
		{"search the class", airlock.ApprovalFilter{Search: "delete#need"}, []string{b.ID}},
		{"search the ID", airlock.ApprovalFilter{Search: c.ID[len(c.ID)-12:]}, []string{c.ID}},
		{"search with a filter", airlock.ApprovalFilter{Search: "fs.", Agent: "a"}, []string{c.ID, a.ID}},
		{"search wildcards are literal", airlock.ApprovalFilter{Search: "%"}, nil},
		{"search underscore is literal", airlock.ApprovalFilter{Search: "_"}, nil},
		{"ID prefix", airlock.ApprovalFilter{IDPrefix: c.ID[:len(c.ID)-1]}, []string{c.ID}},
		{"ID prefix, any case", airlock.ApprovalFilter{IDPrefix: strings.ToUpper(b.ID[:len(b.ID)-1])}, []string{b.ID}},
		{"ID prefix of all", airlock.ApprovalFilter{IDPrefix: commonPrefix(a.ID, b.ID, c.ID)}, []string{c.ID, b.ID, a.ID}},
		{"ID prefix is not a search", airlock.ApprovalFilter{IDPrefix: c.ID[1:]}, nil},
		{"ID prefix wildcards are literal", airlock.ApprovalFilter{IDPrefix: "%"}, nil},
	} {
		if got := ids(tt.f); !slices.Equal(got, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
	_, err := s.FindApprovals(ctx(t), airlock.ApprovalFilter{Cursor: "not-a-cursor"})
	wantCode(t, err, airlock.EINVALID)
}

// pageThrough lists the IDs FindApprovals returns for f, following
// NextCursor for at most pages pages.
func pageThrough(t *testing.T, s airlock.Store, f airlock.ApprovalFilter, pages int) []string {
	t.Helper()
	var got []string
	for n := 0; ; n++ {
		if n > pages {
			t.Fatal("paging does not end")
		}
		page, err := s.FindApprovals(ctx(t), f)
		if err != nil {
			t.Fatal(err)
		}
		for _, ap := range page.Approvals {
			got = append(got, ap.ID)
		}
		if page.NextCursor == "" {
			return got
		}
		f.Cursor = page.NextCursor
	}
}

// The same action in another session is another request with the same
// effect: the store records the effect hash and finds requests by it.
func testEffectHash(t *testing.T, s airlock.Store, clock *Clock) {
	a := mustRequest(t, s, NewApproval("a", "one", airlock.Ask, time.Hour), airlock.Record{})
	same := NewApproval("a", "one", airlock.Ask, time.Hour)
	same.SessionID, same.RequestedBy = "other-session", "someone-else"
	same.ActionHash, _ = same.Action.Hash()
	clock.Advance(time.Minute)
	same = mustRequest(t, s, same, airlock.Record{})
	other := mustRequest(t, s, NewApproval("b", "one", airlock.Ask, time.Hour), airlock.Record{})
	if same.ID == a.ID || same.ActionHash == a.ActionHash {
		t.Fatal("a session change joined the first request")
	}
	want, err := a.Action.EffectHash()
	if err != nil {
		t.Fatal(err)
	}
	if a.EffectHash != want || same.EffectHash != want || other.EffectHash == want || want == a.ActionHash {
		t.Fatalf("effect hashes %s, %s and %s; want the first two %s", a.EffectHash, same.EffectHash, other.EffectHash, want)
	}
	if got, err := s.Approval(ctx(t), a.ID); err != nil || got.EffectHash != want {
		t.Fatalf("stored effect hash %s (%v), want %s", got.EffectHash, err, want)
	}
	page, err := s.FindApprovals(ctx(t), airlock.ApprovalFilter{EffectHash: want, Oldest: true})
	if err != nil || len(page.Approvals) != 2 || page.Approvals[0].ID != a.ID || page.Approvals[1].ID != same.ID {
		t.Fatalf("find by effect: %+v %v", page.Approvals, err)
	}
}

func testFindByDeadline(t *testing.T, s airlock.Store, clock *Clock) {
	var aps []airlock.Approval
	for i, h := range []int{5, 1, 3, 1, 2, 4} {
		ap := mustRequest(t, s, NewApproval("a", fmt.Sprint("job ", i), airlock.Ask, time.Duration(h)*time.Hour), airlock.Record{})
		aps = append(aps, ap)
		clock.Advance(time.Second)
	}
	if _, err := s.ResolveApproval(ctx(t), Approve(aps[5])); err != nil {
		t.Fatal(err)
	}
	// Expiring first: 1h (the older), 1h, 2h, 3h, 5h; the settled one is not pending.
	want := []string{aps[1].ID, aps[3].ID, aps[4].ID, aps[2].ID, aps[0].ID}
	got := pageThrough(t, s, airlock.ApprovalFilter{Status: []airlock.ApprovalStatus{airlock.StatusPending}, ByDeadline: true, Limit: 2}, 3)
	if !slices.Equal(got, want) {
		t.Errorf("by deadline: got %v, want %v", got, want)
	}
	for _, bad := range []string{aps[0].ID, "12.not-a-uuid", "soon." + aps[0].ID} {
		_, err := s.FindApprovals(ctx(t), airlock.ApprovalFilter{ByDeadline: true, Cursor: bad})
		wantCode(t, err, airlock.EINVALID)
	}
}

// The history lists requests by when they were settled, however settled,
// not by when they were asked.
func testFindBySettled(t *testing.T, s airlock.Store, clock *Clock) {
	var aps []airlock.Approval
	for i := range 5 {
		aps = append(aps, mustRequest(t, s, NewApproval("a", fmt.Sprint("job ", i), airlock.Ask, time.Hour), airlock.Record{}))
		clock.Advance(time.Second)
	}
	// Settled in the order 3, 0, 4 (two at the same instant), 1; 2 waits.
	if _, err := s.ResolveApproval(ctx(t), Approve(aps[3])); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	if _, err := s.CancelApproval(ctx(t), aps[0].ID, "", "withdrawn", airlock.SurfaceCLI); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	if _, err := s.ResolveApproval(ctx(t), Approve(aps[4])); err != nil {
		t.Fatal(err)
	}
	reject := Approve(aps[1])
	reject.Status, reject.Reason = airlock.StatusRejected, "no"
	if _, err := s.ResolveApproval(ctx(t), reject); err != nil {
		t.Fatal(err)
	}
	// At the same instant, the greater ID (the later request) first.
	newest := []string{aps[4].ID, aps[1].ID, aps[0].ID, aps[3].ID}
	got := pageThrough(t, s, airlock.ApprovalFilter{BySettled: true, Limit: 1}, 5)
	if !slices.Equal(got, newest) {
		t.Errorf("by settled: got %v, want %v", got, newest)
	}
	oldest := slices.Clone(newest)
	slices.Reverse(oldest)
	if got := pageThrough(t, s, airlock.ApprovalFilter{BySettled: true, Oldest: true, Limit: 3}, 2); !slices.Equal(got, oldest) {
		t.Errorf("by settled, oldest first: got %v, want %v", got, oldest)
	}
	// It takes precedence over the deadline, and other filters still hold.
	approved := pageThrough(t, s, airlock.ApprovalFilter{BySettled: true, ByDeadline: true,
		Status: []airlock.ApprovalStatus{airlock.StatusApproved, airlock.StatusPending}, Limit: 1}, 3)
	if want := []string{aps[4].ID, aps[3].ID}; !slices.Equal(approved, want) {
		t.Errorf("approved, by settled: got %v, want %v", approved, want)
	}
	for _, bad := range []string{aps[0].ID, "12.not-a-uuid", "soon." + aps[0].ID} {
		_, err := s.FindApprovals(ctx(t), airlock.ApprovalFilter{BySettled: true, Cursor: bad})
		wantCode(t, err, airlock.EINVALID)
	}
}

func testFindPages(t *testing.T, s airlock.Store, clock *Clock) {
	var want []string
	for i := range 25 {
		ap := mustRequest(t, s, NewApproval("a", fmt.Sprint("job ", i), airlock.Suggest, time.Hour), airlock.Record{})
		want = append(want, ap.ID)
		if i%3 == 0 {
			clock.Advance(time.Millisecond)
		}
	}
	slices.Reverse(want)
	got := pageThrough(t, s, airlock.ApprovalFilter{Limit: 10}, 3)
	if !slices.Equal(got, want) {
		t.Fatalf("paged through %d requests in order %v, want %v", len(got), got, want)
	}
}

func testWait(t *testing.T, s airlock.Store, _ *Clock) {
	ap := mustRequest(t, s, NewApproval("a", "make deploy", airlock.Ask, time.Hour), airlock.Record{})
	done := make(chan airlock.Approval, 1)
	go func() {
		got, err := s.WaitApproval(context.Background(), ap.ID)
		if err != nil {
			t.Error(err)
		}
		done <- got
	}()
	if _, err := s.ResolveApproval(ctx(t), Approve(ap)); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-done:
		if got.Status != airlock.StatusApproved {
			t.Fatalf("woke with %s, want approved", got.Status)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("WaitApproval did not wake after the resolution")
	}
	// A settled request returns at once.
	if got, err := s.WaitApproval(ctx(t), ap.ID); err != nil || got.Status != airlock.StatusApproved {
		t.Fatalf("wait on a settled request: %v %v", got.Status, err)
	}
	_, err := s.WaitApproval(ctx(t), uuid.Must(uuid.NewV7()).String())
	wantCode(t, err, airlock.ENOTFOUND)
}

func testWaitContext(t *testing.T, s airlock.Store, _ *Clock) {
	ap := mustRequest(t, s, NewApproval("a", "make deploy", airlock.Ask, time.Hour), airlock.Record{})
	c, cancel := context.WithCancel(ctx(t))
	cancel()
	_, err := s.WaitApproval(c, ap.ID)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("wait with an ended context: %v, want context.Canceled", err)
	}
}

func testTrust(t *testing.T, s airlock.Store, clock *Clock) {
	rec := func(agent string, class airlock.Class, out airlock.TrustOutcome) airlock.Record {
		return airlock.Record{Trust: []airlock.TrustRecord{{Agent: agent, Class: class, Outcome: out,
			Tier: airlock.TierWrite, Label: "x", Tool: "t"}}}
	}
	for _, r := range []airlock.Record{
		rec("a", "fs.write", airlock.TrustSuccess), rec("a", "fs.write", airlock.TrustSuccess),
		rec("a", "fs.write", airlock.TrustDenied), rec("a", "fs.delete", airlock.TrustTimeout),
		rec("b", "fs.write", airlock.TrustFailure),
	} {
		if _, err := s.Append(ctx(t), r); err != nil {
			t.Fatal(err)
		}
	}
	// Three requests for a × process.exec: approved after 1m, approved
	// after 3m, rejected after 2m; one expired; one approved by the system.
	resolve := func(cmd string, after time.Duration, st airlock.ApprovalStatus, surface airlock.Surface) {
		ap := mustRequest(t, s, NewApproval("a", cmd, airlock.Ask, time.Hour), airlock.Record{})
		clock.Advance(after)
		r := Approve(ap)
		r.Status, r.Surface = st, surface
		if _, err := s.ResolveApproval(ctx(t), r); err != nil {
			t.Fatal(err)
		}
	}
	resolve("one", time.Minute, airlock.StatusApproved, airlock.SurfaceWeb)
	resolve("two", 3*time.Minute, airlock.StatusApproved, airlock.SurfaceCLI)
	resolve("three", 2*time.Minute, airlock.StatusRejected, airlock.SurfaceWeb)
	resolve("four", time.Second, airlock.StatusApproved, airlock.SurfaceSystem)
	mustRequest(t, s, NewApproval("a", "five", airlock.Ask, time.Minute), airlock.Record{})
	clock.Advance(time.Minute)
	if _, err := s.ExpireDue(ctx(t), 10); err != nil {
		t.Fatal(err)
	}

	sums, err := s.TrustSummaries(ctx(t), airlock.TrustFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, x := range sums {
		got = append(got, fmt.Sprintf("%s %s total=%d success=%d denied=%d timeout=%d failure=%d approved=%d rejected=%d expired=%d rate=%.2f median=%s",
			x.Agent, x.Class, x.Total, x.Counts[airlock.TrustSuccess], x.Counts[airlock.TrustDenied], x.Counts[airlock.TrustTimeout],
			x.Counts[airlock.TrustFailure], x.Approved, x.Rejected, x.Expired, x.ApprovalRate, x.MedianDecision))
	}
	want := []string{
		"a fs.delete total=1 success=0 denied=0 timeout=1 failure=0 approved=0 rejected=0 expired=0 rate=0.00 median=0s",
		"a fs.write total=3 success=2 denied=1 timeout=0 failure=0 approved=0 rejected=0 expired=0 rate=0.00 median=0s",
		// Settling an ask request writes its trust record: three approved,
		// one rejected, one expired.
		"a process.exec total=5 success=3 denied=1 timeout=1 failure=0 approved=2 rejected=1 expired=1 rate=0.50 median=2m0s",
		"b fs.write total=1 success=0 denied=0 timeout=0 failure=1 approved=0 rejected=0 expired=0 rate=0.00 median=0s",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("summaries:\n%s\nwant:\n%s", "  "+strings.Join(got, "\n  "), "  "+strings.Join(want, "\n  "))
	}
	only, err := s.TrustSummaries(ctx(t), airlock.TrustFilter{Agent: "b"})
	if err != nil || len(only) != 1 || only[0].Agent != "b" {
		t.Fatalf("filtered summaries %+v, %v", only, err)
	}
}

// fanOut routes each notice to channels "a" and "b", and reminds of a
// request a minute before its deadline through "b".
type fanOut struct{}

func (fanOut) Route(n airlock.Notification) []airlock.Notification {
	var out []airlock.Notification
	for _, ch := range []string{"a", "b"} {
		d := n
		d.Channel = ch
		out = append(out, d)
	}
	if n.Kind == airlock.EventApprovalRequested {
		var ap airlock.Approval
		if err := json.Unmarshal(n.Payload, &ap); err == nil {
			r := n
			r.Channel, r.Kind, r.Due = "b", airlock.NoticeReminder, ap.Expires.Add(-time.Minute)
			out = append(out, r)
		}
	}
	return out
}

func testNotifications(t *testing.T, s airlock.Store, clock *Clock) {
	queued, stop := s.DeliveriesQueued()
	defer stop()
	s.SetRouter(fanOut{})
	_, err := s.Append(ctx(t), airlock.Record{
		Events: []airlock.Event{Event("decision", "a")},
		Notifications: []airlock.Notification{
			{Recipients: []string{"owner"}, Kind: "decision", Agent: "a", Subject: "one"},
			{Recipients: []string{"owner"}, Kind: "decision", Agent: "a", Subject: "two"},
		}})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-queued:
	default:
		t.Fatal("queueing deliveries did not wake DeliveriesQueued")
	}
	ap := mustRequest(t, s, NewApproval("a", "make deploy", airlock.Ask, time.Hour), airlock.Record{})
	all, err := s.Notifications(ctx(t), airlock.NotificationFilter{})
	if err != nil || len(all) != 7 {
		t.Fatalf("deliveries %+v, %v; want 7 (2 notices × 2 channels, the request × 2, its reminder)", all, err)
	}
	keys := map[string]bool{}
	for _, n := range all {
		keys[n.Key] = true
	}
	if len(keys) != 7 {
		t.Fatalf("idempotency keys are not unique: %v", keys)
	}

	// Claims lease what is due, oldest first: not the reminder.
	got, err := s.ClaimNotifications(ctx(t), 10, time.Minute)
	if err != nil || len(got) != 6 {
		t.Fatalf("claimed %+v, %v; want the 6 due", got, err)
	}
	if again, err := s.ClaimNotifications(ctx(t), 10, time.Minute); err != nil || len(again) != 0 {
		t.Fatalf("claimed again within the lease: %+v, %v", again, err)
	}
	// The worker dies: past the lease they are due again.
	clock.Advance(61 * time.Second)
	if got, err = s.ClaimNotifications(ctx(t), 10, time.Minute); err != nil || len(got) != 6 {
		t.Fatalf("after the lease ran out, claimed %+v, %v; want 6", got, err)
	}
	byKind := func(kind, channel string) airlock.Notification {
		t.Helper()
		for _, n := range got {
			if n.Kind == kind && n.Channel == channel && (kind != "decision" || n.Subject == "one") {
				return n
			}
		}
		t.Fatalf("no %s delivery via %s in %+v", kind, channel, got)
		return airlock.Notification{}
	}
	sent, failed, dead := byKind("decision", "a"), byKind("decision", "b"), byKind(airlock.EventApprovalRequested, "a")
	if err := s.MarkNotification(ctx(t), sent.ID, airlock.Attempt{Ref: "C1/1700.01"}); err != nil {
		t.Fatal(err)
	}
	retry := clock.Now().Add(30 * time.Second)
	if err := s.MarkNotification(ctx(t), failed.ID, airlock.Attempt{Err: errors.New("receiver down"), Retry: retry}); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkNotification(ctx(t), dead.ID, airlock.Attempt{Err: errors.New("410 gone")}); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.MarkNotification(ctx(t), sent.ID, airlock.Attempt{}), airlock.ECONFLICT)
	wantCode(t, s.MarkNotification(ctx(t), dead.ID, airlock.Attempt{}), airlock.ECONFLICT)
	wantCode(t, s.MarkNotification(ctx(t), 9999, airlock.Attempt{}), airlock.ENOTFOUND)

	n, err := s.Notification(ctx(t), sent.ID)
	// Claimed twice: two attempts, the first never reported.
	if err != nil || n.Status != airlock.NotificationSent || n.Attempts != 2 || n.Ref != "C1/1700.01" || n.SentAt.IsZero() {
		t.Fatalf("sent: %+v, %v", n, err)
	}
	n, err = s.Notification(ctx(t), failed.ID)
	if err != nil || n.Status != airlock.NotificationFailed || n.Attempts != 2 || n.LastError != "receiver down" || !n.Due.Equal(retry) {
		t.Fatalf("failed: %+v, %v", n, err)
	}
	// A failed delivery is not due before its retry, even once its lease
	// ends; the others claimed but unmarked are.
	clock.Advance(61 * time.Second)
	later, err := s.ClaimNotifications(ctx(t), 10, time.Minute)
	if err != nil || len(later) != 4 || !slices.ContainsFunc(later, func(n airlock.Notification) bool { return n.ID == failed.ID }) {
		t.Fatalf("claimed %+v, %v; want the 3 unmarked and the failed one (its retry has come)", later, err)
	}
	// Several attempts in one transaction; marks of a delivery already
	// settled (another worker recorded it) or missing are skipped.
	batch := []airlock.NotificationMark{{ID: sent.ID, Attempt: airlock.Attempt{Err: errors.New("late")}}, {ID: 9999}}
	for _, n := range later {
		batch = append(batch, airlock.NotificationMark{ID: n.ID, Attempt: airlock.Attempt{Dropped: "nothing to say"}})
	}
	if err := s.MarkNotifications(ctx(t), batch); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Notification(ctx(t), sent.ID); err != nil || n.Status != airlock.NotificationSent {
		t.Fatalf("a settled delivery changed by a late mark: %+v, %v", n, err)
	}
	if n, err := s.Notification(ctx(t), later[0].ID); err != nil || n.Status != airlock.NotificationDropped || n.LastError != "nothing to say" {
		t.Fatalf("batch-marked delivery %+v, %v", n, err)
	}
	deadOnes, err := s.Notifications(ctx(t), airlock.NotificationFilter{Status: airlock.NotificationDead})
	if err != nil || len(deadOnes) != 1 || deadOnes[0].ID != dead.ID || deadOnes[0].LastError != "410 gone" {
		t.Fatalf("dead letters %+v, %v", deadOnes, err)
	}
	viaB, err := s.Notifications(ctx(t), airlock.NotificationFilter{Channel: "b", Kind: airlock.NoticeReminder})
	if err != nil || len(viaB) != 1 || viaB[0].ApprovalID != ap.ID || !viaB[0].Due.Equal(ap.Expires.Add(-time.Minute)) {
		t.Fatalf("reminder %+v, %v", viaB, err)
	}

	// A person retries the dead letter: due now, attempts counted afresh.
	_, err = s.RetryNotification(ctx(t), sent.ID, "alice")
	wantCode(t, err, airlock.ECONFLICT)
	r, err := s.RetryNotification(ctx(t), dead.ID, "alice")
	if err != nil || r.Status != airlock.NotificationPending || r.Attempts != 0 {
		t.Fatalf("retried: %+v, %v", r, err)
	}
	if got, err := s.ClaimNotifications(ctx(t), 10, time.Minute); err != nil || len(got) != 1 || got[0].ID != dead.ID {
		t.Fatalf("after retry, claimed %+v, %v", got, err)
	}
	want := []string{airlock.EventNotificationSent, airlock.EventNotificationFail, airlock.EventNotificationFail,
		airlock.EventNotificationSent, airlock.EventNotificationSent, airlock.EventNotificationSent,
		airlock.EventNotificationSent, airlock.EventNotificationRetry}
	if got := kinds(events(t, s, airlock.EventFilter{AfterSeq: 2})); !slices.Equal(got, want) {
		t.Fatalf("delivery events %v\nwant %v", got, want)
	}

	// A result that comes back after its delivery was claimed again (its
	// lease ran out meanwhile) is stale: skipped.
	again, err := s.ClaimNotifications(ctx(t), 10, time.Minute)
	if err != nil || len(again) != 0 {
		t.Fatalf("claimed %+v while leased, %v", again, err)
	}
	clock.Advance(61 * time.Second)
	again, err = s.ClaimNotifications(ctx(t), 10, time.Minute)
	if err != nil || len(again) != 1 || again[0].ID != dead.ID || again[0].Attempts != 2 {
		t.Fatalf("reclaimed %+v, %v", again, err)
	}
	if err := s.MarkNotifications(ctx(t), []airlock.NotificationMark{
		{ID: dead.ID, Claim: 1, Attempt: airlock.Attempt{Err: errors.New("stale")}},
		{ID: dead.ID, Claim: 2, Attempt: airlock.Attempt{Err: errors.New("503"), Retry: clock.Now()}},
		{ID: dead.ID, Claim: 2, Attempt: airlock.Attempt{Ref: "twice"}},
	}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Notification(ctx(t), dead.ID); err != nil || n.Status != airlock.NotificationFailed || n.LastError != "503" || n.Ref != "" {
		t.Fatalf("after a stale, a current and a repeated mark: %+v, %v", n, err)
	}
	// A failed delivery under way again may not be retried by a person.
	if again, err = s.ClaimNotifications(ctx(t), 10, time.Minute); err != nil || len(again) != 1 {
		t.Fatalf("claimed %+v, %v", again, err)
	}
	_, err = s.RetryNotification(ctx(t), dead.ID, "alice")
	wantCode(t, err, airlock.ECONFLICT)
	s.SetRouter(nil)
}

// RaceResolvers has n reviewers resolve one request at once and returns
// how many succeeded; every other attempt must get ECONFLICT.
func RaceResolvers(t testing.TB, s airlock.Store, ap airlock.Approval, n int) int {
	t.Helper()
	var wins atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			r := Approve(ap)
			if i%2 == 1 {
				r.Status = airlock.StatusRejected
			}
			if i%3 == 0 {
				r.Reviewer = airlock.Reviewer{Name: fmt.Sprint("admin-", i), Admin: true}
			}
			<-start
			_, err := s.ResolveApproval(context.Background(), r)
			switch airlock.ErrorCode(err) {
			case "":
				wins.Add(1)
			case airlock.ECONFLICT:
			default:
				t.Errorf("racing resolver %d: %v", i, err)
			}
		})
	}
	close(start)
	wg.Wait()
	return int(wins.Load())
}

func testRacingResolvers(t *testing.T, s airlock.Store, _ *Clock) {
	for i := range 20 {
		ap := mustRequest(t, s, NewApproval("a", fmt.Sprint("race ", i), airlock.Ask, time.Hour), airlock.Record{})
		if wins := RaceResolvers(t, s, ap, 50); wins != 1 {
			t.Fatalf("round %d: %d resolvers won, want exactly 1", i, wins)
		}
		if evs := events(t, s, airlock.EventFilter{Kind: airlock.EventApprovalResolved, Limit: 1000}); len(evs) != i+1 {
			t.Fatalf("round %d: %d resolution events, want %d", i, len(evs), i+1)
		}
	}
}

// commonPrefix is the longest prefix every one of ss starts with.
func commonPrefix(ss ...string) string {
	p := ss[0]
	for _, s := range ss[1:] {
		for !strings.HasPrefix(s, p) {
			p = p[:len(p)-1]
		}
	}
	return p
}
