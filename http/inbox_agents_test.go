package http_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
	"github.com/airlock-dev/airlock/gate"
)

// storeClock is a store clock that tests move forward, to control how long
// people take to decide.
type storeClock struct {
	mu  sync.Mutex
	off time.Duration
}

func (c *storeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

func (c *storeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.off += d
}

// agentsServer is a test server whose store runs on a clock the test
// moves, signed in as bob.
func agentsServer(t *testing.T) (*testServer, *browser, *storeClock) {
	t.Helper()
	ts := newTestServer(t)
	clock := &storeClock{}
	ts.DB.Clock = clock.now // before any request reads it
	b := newBrowser(t, ts)
	b.signIn(ts.BobSecret)
	return ts, b, clock
}

// trust appends one trust record per outcome for agent and class.
func trust(t *testing.T, ts *testServer, agent string, class airlock.Class, outcomes ...airlock.TrustOutcome) {
	t.Helper()
	var rec airlock.Record
	for _, o := range outcomes {
		rec.Trust = append(rec.Trust, airlock.TrustRecord{Agent: agent, Class: class, Outcome: o, Tier: airlock.TierWrite,
			Label: airlock.LabelAuto, Tool: "t"})
	}
	if _, err := ts.DB.Append(t.Context(), rec); err != nil {
		t.Fatal(err)
	}
}

// settle queues a process.exec request of agent, waiting at most an hour,
// and has a person settle it after wait; for StatusExpired, wait must pass
// the deadline.
func settle(t *testing.T, ts *testServer, clock *storeClock, agent string, st airlock.ApprovalStatus, wait time.Duration) {
	t.Helper()
	ctx := t.Context()
	ap, _, err := ts.DB.RequestApproval(ctx, airlocktest.NewApproval(agent, fmt.Sprintf("run %s %s", st, wait), airlock.Ask, time.Hour), airlock.Record{})
	if err != nil {
		t.Fatal(err)
	}
	clock.advance(wait)
	if st == airlock.StatusExpired {
		if got, err := ts.DB.ExpireApproval(ctx, ap.ID); err != nil || got.Status != airlock.StatusExpired {
			t.Fatalf("expire after %s: %s, %v", wait, got.Status, err)
		}
		return
	}
	r := airlocktest.Approve(ap)
	r.Status = st
	if _, err := ts.DB.ResolveApproval(ctx, r); err != nil {
		t.Fatal(err)
	}
}

func TestInboxAgentsNeedASession(t *testing.T) {
	ts := newTestServer(t)
	b := newBrowser(t, ts)
	for _, path := range []string{"/inbox/agents", "/inbox/agents/agent-1"} {
		p := b.get(path)
		if p.status != http.StatusSeeOther || p.header.Get("Location") != "/inbox/signin" {
			t.Errorf("GET %s signed out: %d %q, want 303 to /inbox/signin", path, p.status, p.header.Get("Location"))
		}
	}
}

// The charts draw the trust records' figures, and say them in words.
func TestInboxAgentsChartTrust(t *testing.T) {
	ts, b, clock := agentsServer(t)
	settle(t, ts, clock, "ci-bot", airlock.StatusApproved, time.Minute)
	settle(t, ts, clock, "ci-bot", airlock.StatusApproved, 3*time.Minute)
	settle(t, ts, clock, "ci-bot", airlock.StatusRejected, 2*time.Minute)
	settle(t, ts, clock, "ci-bot", airlock.StatusExpired, 2*time.Hour)
	trust(t, ts, "ci-bot", "fs.write", airlock.TrustSuccess, airlock.TrustSuccess, airlock.TrustDenied)
	settle(t, ts, clock, "dev", airlock.StatusApproved, time.Minute)
	trust(t, ts, "dev", "fs.read", airlock.TrustSuccess)

	rate := `aria-label="Approval rate 50%: 2 approved, 1 rejected, 1 expired"`
	bars := `<rect class="bar-approved" x="0" width="500" height="16"/><rect class="bar-rejected" x="500" width="250" height="16"/><rect class="bar-expired" x="750" width="250" height="16"/>`
	wait := `aria-label="Median time to decision 2m0s, over 3 decisions"`
	p := b.get("/inbox/agents")
	p.want(t, http.StatusOK, "2 agents.", `href="/inbox/agents/ci-bot"`, `href="/inbox/agents/dev"`,
		rate, bars, "50% approved (2/4)", wait, `<rect class="bar-time" x="0" width="1000" height="16"/>`, "median 2m0s",
		"No request went to a person: 2 of 3 ran.", "7 recorded outcomes in 2 classes",
		"the longest on this page, 2m0s, fills the bar",
		// dev's median, 1m, on the same scale
		`aria-label="Median time to decision 1m0s, over 1 decision"`, `<rect class="bar-time" x="0" width="500" height="16"/>`)
	if n := strings.Count(p.body, `role="img"`); n != 4 {
		t.Errorf("%d charts, want a rate and a time chart for each class a person decided", n)
	}

	p = b.get("/inbox/agents/ci-bot")
	p.want(t, http.StatusOK, rate, bars, wait,
		`aria-label="4 recorded outcomes: 2 succeeded, 1 denied, 1 timed out, 0 failed"`,
		`<tr><th scope="row"><code>process.exec</code></th><td>4</td><td>2</td><td>1</td><td>1</td><td>0</td>`+"\n    "+
			`<td>2</td><td>1</td><td>1</td><td>50%</td><td>2m0s</td></tr>`,
		`<tr><th scope="row"><code>fs.write</code></th><td>3</td><td>2</td><td>1</td><td>0</td><td>0</td>`+"\n    "+
			`<td>0</td><td>0</td><td>0</td><td>-</td><td>-</td></tr>`,
		`href="/inbox?agent=ci-bot"`, `href="/inbox/audit?agent=ci-bot"`)
	if strings.Contains(p.body, "fs.read") {
		t.Error("ci-bot's page shows dev's records")
	}

	// Thirds fill the bar exactly.
	settle(t, ts, clock, "ops", airlock.StatusApproved, time.Second)
	settle(t, ts, clock, "ops", airlock.StatusRejected, time.Second)
	settle(t, ts, clock, "ops", airlock.StatusExpired, 2*time.Hour)
	b.get("/inbox/agents?q=ops").want(t, http.StatusOK, "33% approved (1/3)",
		`<rect class="bar-approved" x="0" width="333" height="16"/><rect class="bar-rejected" x="333" width="334" height="16"/><rect class="bar-expired" x="667" width="333" height="16"/>`)

	b.get("/inbox/agents?class=fs.write").want(t, http.StatusOK, "1 agent.", `href="/inbox/agents/ci-bot"`)
	b.get("/inbox/agents?q=DEV").want(t, http.StatusOK, "1 agent.", `href="/inbox/agents/dev"`)
	b.get("/inbox/agents?q=nobody").want(t, http.StatusOK, "No agent with trust records matches.")
	b.get("/inbox/agents?period=7d").want(t, http.StatusOK, "3 agents.", `<option value="7d" selected>`, `href="/inbox/agents/ci-bot?period=7d"`)
	b.get("/inbox/agents?period=forever").want(t, http.StatusBadRequest, "unknown period")
	b.get("/inbox/agents/ci-bot?period=forever").want(t, http.StatusBadRequest, "unknown period", "rule <code>deploys</code>")
	b.get("/inbox/agents/ci-bot?period=24h").want(t, http.StatusOK, `href="/inbox/agents/ci-bot?period=24h" aria-current="page"`, rate)
}

// A long list is cut into pages, and the page says so.
func TestInboxAgentsPages(t *testing.T) {
	ts, b, _ := agentsServer(t)
	for i := range 55 {
		trust(t, ts, fmt.Sprintf("agent-%02d", i), "fs.write", airlock.TrustSuccess)
	}
	for _, c := range []airlock.Class{"c1", "c2", "c3", "c4", "c5", "c6", "c7"} {
		trust(t, ts, "agent-00", c, airlock.TrustSuccess)
	}
	trust(t, ts, "agent-00", "c8", airlock.TrustSuccess, airlock.TrustSuccess)

	p := b.get("/inbox/agents")
	p.want(t, http.StatusOK, "Showing agents 1–50 of 55", `href="/inbox/agents?after=agent-49"`,
		"9 classes, the 6 most frequent below", "3 more classes</a>")
	if !strings.Contains(p.body, "agent-49") || strings.Contains(p.body, "agent-50") {
		t.Error("the first page does not end at the 50th agent")
	}
	if c8, c1 := strings.Index(p.body, ">c8<"), strings.Index(p.body, ">c1<"); c8 < 0 || c1 >= 0 && c1 < c8 {
		t.Error("the card does not list the most frequent class first")
	}
	p = b.get("/inbox/agents?after=agent-49")
	p.want(t, http.StatusOK, "Showing agents 51–55 of 55", "agent-54")
	if strings.Contains(p.body, ">agent-49<") || strings.Contains(p.body, "Next agents") {
		t.Error("the last page repeats an agent or offers a next page")
	}
	b.get("/inbox/agents?after=zzz").want(t, http.StatusOK, "No more agents", `href="/inbox/agents?"`)
}

const agentsOrg = `name: acme
layer: organisation
floors:
  tiers:
    privileged: deny
rules:
  - id: no-prod
    tool: mcp__deploy__*
    when: args.env == "prod"
    outcome: deny
`

const agentsProject = `name: webapp
agents:
  "ci-*":
    preset: conservative
    owner: carol
rules:
  - id: ci-deploys
    agent: ci-*
    tool: deploy
    outcome: ask
    reviewers: [bob]
    timeout: 5m
  - id: dev-writes
    agent: dev
    tool: write_file
    outcome: auto
  - id: reads
    class: fs.read
    outcome: auto
`

// The agent's page shows the rules that can apply to it, layer by layer,
// and not those for other agents.
func TestInboxAgentPolicy(t *testing.T) {
	ts, b, _ := agentsServer(t)
	org, err := gate.LoadPolicy("org.yaml", []byte(agentsOrg))
	if err != nil {
		t.Fatal(err)
	}
	project, err := gate.LoadPolicy("project.yaml", []byte(agentsProject))
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.Server.Enforcer.Gate.Replace(org, project); err != nil {
		t.Fatal(err)
	}

	p := b.get("/inbox/agents/ci-bot")
	p.want(t, http.StatusOK, "organisation layer: <code>acme</code>", "project layer: <code>webapp</code>",
		"conservative, from agent ci-* in project policy webapp", "carol",
		"rule <code>ci-deploys</code> <span class=\"step\">agent × tool</span>", "project.yaml:7:5",
		`<span class="badge badge-conditional">conditional</span>`, "<code>args.env == &#34;prod&#34;</code>", "org.yaml:7:5",
		`<span class="tier tier-privileged">privileged</span> and above: at least <span class="outcome outcome-deny">deny</span>`,
		"1 more rule of this policy names other agents only.")
	if strings.Index(p.body, "organisation layer") > strings.Index(p.body, "project layer") {
		t.Error("the organisation's layer does not come first")
	}
	if strings.Index(p.body, "ci-deploys") > strings.Index(p.body, "<code>reads</code>") {
		t.Error("the agent × tool rule is not listed before the class rule")
	}
	if strings.Contains(p.body, "dev-writes") {
		t.Error("ci-bot's page lists dev's rule")
	}
	p = b.get("/inbox/agents/dev")
	p.want(t, http.StatusOK, "dev-writes", "<code>reads</code>", "no-prod", "none: the rules alone decide")
	if strings.Contains(p.body, "ci-deploys") {
		t.Error("dev's page lists ci-bot's rule")
	}
}

// An agent with no trust records yet has a page: its policy applies.
func TestInboxAgentWithoutTrust(t *testing.T) {
	_, b, _ := agentsServer(t)
	p := b.get("/inbox/agents/agent-1")
	p.want(t, http.StatusOK, "No trust records for this agent yet", "rule <code>deploys</code>", "airlocktest.yaml",
		"alice", `href="/inbox?agent=agent-1"`)
	if strings.Contains(p.body, `role="img"`) {
		t.Error("a chart without records")
	}
	b.get("/inbox/agents").want(t, http.StatusOK, "No agent has trust records yet")
}

// Agent and class names come from agents: both pages escape them, show
// hidden characters and keep links working.
func TestInboxAgentsEscapeHostileNames(t *testing.T) {
	ts, b, _ := agentsServer(t)
	agent := "<script>alert(1)</script>\u202egnp.exe"
	trust(t, ts, agent, "<img src=x onerror=alert(2)>", airlock.TrustSuccess)

	shown := `&lt;script&gt;alert(1)&lt;/script&gt;<span class="hidden-char" title="hidden character, shown escaped">\u202e</span>gnp.exe`
	link := `/inbox/agents/%3Cscript%3Ealert%281%29%3C%2Fscript%3E%E2%80%AEgnp.exe`
	pages := map[string]page{"/inbox/agents": b.get("/inbox/agents"), link: b.get(link)}
	pages["/inbox/agents"].want(t, http.StatusOK, shown, `href="`+link+`"`, "&lt;img src=x onerror=alert(2)&gt;")
	pages[link].want(t, http.StatusOK, shown, "&lt;img src=x onerror=alert(2)&gt;",
		`href="/inbox?agent=%3Cscript%3Ealert%281%29%3C%2Fscript%3E%E2%80%AEgnp.exe"`,
		`<title>Agent &lt;script&gt;alert(1)&lt;/script&gt;\u202egnp.exe · Airlock</title>`)
	for path, p := range pages {
		for _, raw := range []string{"<script>alert", "<img src=x", "\u202e"} {
			if strings.Contains(p.body, raw) {
				t.Errorf("GET %s renders %q raw", path, raw)
			}
		}
	}
	if got, err := url.PathUnescape(strings.TrimPrefix(link, "/inbox/agents/")); err != nil || got != agent {
		t.Fatalf("the link names %q, not the agent", got)
	}
}

// TestInboxAgentReviewSignals: an agent's page shows the review signals of
// its requests: who settled them, how many approvals came faster than the
// request could be read, and the flags.
func TestInboxAgentReviewSignals(t *testing.T) {
	ts, b, clock := agentsServer(t)
	ctx := t.Context()
	for i, wait := range []time.Duration{time.Second, time.Minute} {
		enf, err := ts.Agent.CheckWait(ctx, airlocktest.Action("deploy", fmt.Sprint("prod-", i)), 0)
		if err != nil || !enf.Pending {
			t.Fatalf("check: %+v %v", enf, err)
		}
		clock.advance(wait)
		if _, err := ts.Admin.Resolve(ctx, enf.Approval.ID, airlock.StatusApproved, enf.Decision.ActionHash, "", ""); err != nil {
			t.Fatal(err)
		}
	}
	b.get("/inbox/agents/agent-1").want(t, http.StatusOK, `id="h-signals"`, "2 of this agent's requests approved, 0 rejected; 1 approved faster than they could be read",
		"1 approval faster than the request could be read", "<th scope=\"row\">root</th>")
}

// TestInboxProposals: the Proposals page lists a proposal with its
// evidence and coverage; a person who may not approve its requests is
// refused; one who may ratifies it into a grant, after which it is gone;
// another is dismissed and stays gone.
func TestInboxProposals(t *testing.T) {
	ts, b, clock := agentsServer(t)
	ts.Server.ProposalRules = gate.ProposalRules{MinApprovals: 2, MinReviewers: 1, MinMedianWait: time.Nanosecond}
	ctx := t.Context()
	for i, command := range []string{"npm test --a", "npm test --b", "make lint", "make lint x"} {
		enf, err := ts.Agent.CheckWait(ctx, airlock.Action{Agent: "agent-1", Tool: "Bash", Cwd: "/w",
			Args: airlock.MustArgs(map[string]any{"command": command})}, 0)
		if err != nil || !enf.Pending {
			t.Fatalf("check %d: %+v %v", i, enf, err)
		}
		clock.advance(time.Minute)
		if _, err := ts.Admin.Resolve(ctx, enf.Approval.ID, airlock.StatusApproved, enf.Decision.ActionHash, "", ""); err != nil {
			t.Fatal(err)
		}
	}
	p := b.get("/inbox/proposals")
	p.want(t, http.StatusOK, "agent-1 may run <code>`npm test …`</code> (Bash)", "Approved 2 times by", "would have let 2 asks run without a person (for example <a href=\"/inbox/audit/",
		"agent-1 may run <code>`make lint …`</code>", `action="/inbox/proposals/ratify"`)
	form := url.Values{"agent": {"agent-1"}, "tool": {"Bash"}, "kind": {airlock.PatternCommand}, "command": {"npm test"}}
	// bob is no reviewer of these requests (root approved them as an
	// admin; the rule names no reviewer bob).
	b.post("/inbox/proposals/ratify", form).want(t, http.StatusForbidden, "Not allowed")
	admin := newBrowser(t, ts)
	admin.signIn(makeToken(t, ts.DB, airlock.Token{ID: "admin-2", Role: airlock.RoleAdmin, Name: "dana"}))
	follow := func(p page) page {
		t.Helper()
		if p.status != http.StatusSeeOther {
			t.Fatalf("status %d, want a redirect:\n%s", p.status, p.body)
		}
		return admin.get(p.header.Get("Location"))
	}
	follow(admin.post("/inbox/proposals/ratify", form)).want(t, http.StatusOK, "Granted ", "agent-1 may run `npm test …` without asking, up to write")
	gs, err := ts.DB.Grants(ctx, airlock.GrantFilter{})
	if err != nil || len(gs) != 1 || gs[0].GrantedBy != "dana" {
		t.Fatalf("grants %+v, %v", gs, err)
	}
	lint := url.Values{"agent": {"agent-1"}, "tool": {"Bash"}, "kind": {airlock.PatternCommand}, "command": {"make lint"}}
	follow(admin.post("/inbox/proposals/dismiss", lint)).want(t, http.StatusOK, "Dismissed: agent-1 `make lint …`")
	p = admin.get("/inbox/proposals")
	p.want(t, http.StatusOK, "No proposals")
	admin.post("/inbox/proposals/dismiss", lint).want(t, http.StatusNotFound, "No such proposal now")
}

// TestInboxGrants: the Grants page lists the grants in force with what
// their budgets have left; Revoke ends one at once, and it is gone from
// the page; revoking it again is refused.
func TestInboxGrants(t *testing.T) {
	ts, b, _ := agentsServer(t)
	ctx := t.Context()
	now, _ := ts.DB.Now(ctx)
	g := airlock.Grant{ID: "g-make", Agent: "agent-1", Tool: "Bash",
		Pattern: airlock.GrantPattern{Kind: airlock.PatternCommand, Command: []string{"make"}},
		Outcome: airlock.Auto, MaxTier: airlock.TierWrite, GrantedBy: "alice", Expires: now.Add(time.Hour),
		Budget: &airlock.Budget{Uses: 3, Per: airlock.BudgetPerGrant}}
	if _, err := ts.DB.CreateGrant(ctx, g); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.DB.Append(ctx, airlock.Record{Events: []airlock.Event{airlocktest.Event(airlock.EventDecision, "agent-1")},
		Charges: []airlock.BudgetCharge{{Key: g.BudgetKey(), Budget: *g.Budget, Cost: 1}}}); err != nil {
		t.Fatal(err)
	}
	b.get("/inbox/grants").want(t, http.StatusOK, "agent-1</span> may run <code>`make …`</code> (Bash)", "grant g-make",
		"budget grant:g-make (3 uses per grant): 2 uses left", `action="/inbox/grants/g-make/revoke"`)
	p := b.post("/inbox/grants/g-make/revoke", url.Values{"reason": {"done with it"}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("revoke: %d\n%s", p.status, p.body)
	}
	b.get(p.header.Get("Location")).want(t, http.StatusOK, "Revoked grant g-make", "No standing grant is in force")
	if got, err := ts.DB.Grant(ctx, "g-make"); err != nil || got.RevokedBy != "bob" || got.RevokeReason != "done with it" {
		t.Fatalf("after revoking: %+v, %v", got, err)
	}
	b.post("/inbox/grants/g-make/revoke", nil).want(t, http.StatusConflict, "already revoked")
}

// TestInboxAgentRuleBudgets: an agent's page shows each rule's budget as
// the agent's account of it, with what is left now.
func TestInboxAgentRuleBudgets(t *testing.T) {
	ts, b, _ := agentsServer(t)
	p, err := gate.LoadPolicy("budgets.yaml", []byte("name: budgets\nrules:\n  - {id: tests, tool: Bash, command: \"npm test*\", outcome: auto, budget: {uses: 5, per: hour}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.Server.Enforcer.Gate.Replace(p); err != nil {
		t.Fatal(err)
	}
	if enf := ts.Agent.Enforce(t.Context(), airlock.Action{Agent: "agent-1", Tool: "Bash", Cwd: "/w",
		Args: airlock.MustArgs(map[string]any{"command": "npm test"})}); !enf.Allowed {
		t.Fatalf("npm test under a budget of 5: %s", enf.Message)
	}
	b.get("/inbox/agents/agent-1").want(t, http.StatusOK, "<dt>Budget</dt>", "budget rule:budgets/tests@agent-1 (5 uses per hour): 4 uses left")
}
