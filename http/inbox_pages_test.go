package http_test

import (
	"database/sql"
	"fmt"
	"html"
	"math"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
)

// reviewPolicy asks bob about writes and shell commands, for the pages
// that need a real classification.
const reviewPolicy = `
version: 1
name: review
rules:
  - id: writes
    tool: write_file
    outcome: ask
    reviewers: [bob]
    timeout: 10m
  - id: shell
    tool: Bash
    outcome: ask
    reviewers: [bob]
    timeout: 20m
  - id: deploys
    tool: deploy
    outcome: ask
    reviewers: [bob]
    timeout: 5m
`

// useReviewPolicy puts reviewPolicy in force on ts.
func useReviewPolicy(t *testing.T, ts *testServer) {
	t.Helper()
	p, err := airlock.LoadPolicy("review.yaml", []byte(reviewPolicy))
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.Server.Enforcer.Gate.Replace(p); err != nil {
		t.Fatal(err)
	}
}

// writeAction is agent-1 writing path in a session.
func writeAction(path, session string) airlock.Action {
	return airlock.Action{Agent: "agent-1", Tool: "write_file", SessionID: session,
		Args: airlock.MustArgs(map[string]any{"path": "/work/" + path, "content": "hello"})}
}

func TestInboxSearchAndOrder(t *testing.T) {
	ts := newTestServer(t)
	useReviewPolicy(t, ts)
	x := queue(t, ts, airlocktest.Action("deploy", "alpha"))
	y := queue(t, ts, writeAction("beta", "t-2")) // waits 10m, x only 5m
	b := newBrowser(t, ts)
	b.signIn(ts.BobSecret)

	p := b.get("/inbox?q=BETA")
	p.want(t, http.StatusOK, y.ID, `value="BETA"`)
	if strings.Contains(p.body, x.ID) {
		t.Error("the search for beta lists the alpha request")
	}
	b.get("/inbox?q="+x.ID[len(x.ID)-8:]).want(t, http.StatusOK, x.ID)
	b.get("/inbox/list?q=%25").want(t, http.StatusOK, "Nothing here")

	// Most urgent first: x's deadline comes first although it is older.
	p = b.get("/inbox?order=urgent")
	p.want(t, http.StatusOK, x.ID, y.ID)
	if strings.Index(p.body, x.ID) > strings.Index(p.body, y.ID) {
		t.Error("order=urgent does not list the first deadline first")
	}
	p = b.get("/inbox")
	if strings.Index(p.body, y.ID) > strings.Index(p.body, x.ID) {
		t.Error("the default order is not newest first")
	}
	b.get("/inbox?order=sideways").want(t, http.StatusBadRequest, "unknown order")
	b.get("/inbox?q="+strings.Repeat("q", 201)).want(t, http.StatusBadRequest, "at most 200 characters")
	b.get("/inbox?q="+strings.Repeat("é", 200)).want(t, http.StatusOK)
	// The live list shows the error in place (htmx swaps only 200s).
	b.get("/inbox/list?order=sideways").want(t, http.StatusOK, "unknown order")

	// n opens the most urgent request.
	if p := b.get("/inbox/next"); p.status != http.StatusSeeOther || p.header.Get("Location") != "/inbox/approvals/"+x.ID {
		t.Fatalf("next: %d %q", p.status, p.header.Get("Location"))
	}
}

// n never lands on a request the reviewer may not decide.
func TestInboxNextWithNothingToDecide(t *testing.T) {
	ts := newTestServer(t)
	b := newBrowser(t, ts)
	b.signIn(ts.BobSecret)
	if p := b.get("/inbox/next"); p.status != http.StatusSeeOther || p.header.Get("Location") != "/inbox" {
		t.Fatalf("next with nothing pending: %d %q", p.status, p.header.Get("Location"))
	}
	a := airlocktest.Action("deploy", "x")
	a.RequestedBy = "bob"
	queue(t, ts, a)
	if p := b.get("/inbox/next"); p.status != http.StatusSeeOther || p.header.Get("Location") != "/inbox" {
		t.Fatalf("next with only bob's own request pending: %d %q", p.status, p.header.Get("Location"))
	}
}

func TestInboxHistory(t *testing.T) {
	ts := newTestServer(t)
	ok := queue(t, ts, airlocktest.Action("deploy", "ok"))
	no := queue(t, ts, airlocktest.Action("deploy", "no"))
	waiting := queue(t, ts, airlocktest.Action("deploy", "later"))
	ctx := t.Context()
	// Settled in the other order than asked.
	if _, err := ts.Bob.Resolve(ctx, no.ID, airlock.StatusRejected, no.ActionHash, "not <b>today</b>", airlock.SurfaceSlack); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Bob.Resolve(ctx, ok.ID, airlock.StatusApproved, ok.ActionHash, "", airlock.SurfaceCLI); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, ts)
	b.signIn(ts.BobSecret)

	p := b.get("/inbox/history")
	p.want(t, http.StatusOK, ok.ID, no.ID, "approved</span> by bob via cli", "rejected</span> by bob via slack",
		"not &lt;b&gt;today&lt;/b&gt;", `hx-get="/inbox/history/list?order=settled&amp;status=settled"`, `aria-current="page">History`,
		`<option value="settled" selected>last settled first</option>`)
	if strings.Contains(p.body, waiting.ID) {
		t.Error("the history lists a pending request")
	}
	if strings.Index(p.body, ok.ID) > strings.Index(p.body, no.ID) {
		t.Error("the history does not list the last settled first")
	}
	if p := b.get("/inbox/history?order=newest"); strings.Index(p.body, ok.ID) < strings.Index(p.body, no.ID) {
		t.Error("order=newest does not list the newest request first")
	}
	if p := b.get("/inbox/history?status=any"); !strings.Contains(p.body, waiting.ID) ||
		!strings.Contains(p.body, `<option value="newest" selected>`) {
		t.Error("the history with status=any leaves out the pending request, or does not say it lists the newest first")
	}
	b.get("/inbox/history?status=rejected").want(t, http.StatusOK, no.ID)
	if p := b.get("/inbox/history/list?status=rejected"); strings.Contains(p.body, ok.ID) || !strings.Contains(p.body, no.ID) {
		t.Errorf("the history filtered on rejected:\n%s", p.body)
	}
	if p := b.get("/inbox"); strings.Contains(p.body, ok.ID) || !strings.Contains(p.body, waiting.ID) {
		t.Errorf("the inbox lists settled requests or misses a pending one:\n%s", p.body)
	}
}

func TestInboxAuditLog(t *testing.T) {
	ts := newTestServer(t)
	ap := queue(t, ts, airlocktest.Action("deploy", "x"))
	for i := range 60 {
		a := airlocktest.Action("read_file", fmt.Sprint("f", i))
		a.Agent, a.TraceID = "agent-1", fmt.Sprint("run-", i%3)
		if enf := ts.Agent.Enforce(t.Context(), a); !enf.Allowed {
			t.Fatalf("read: %+v", enf)
		}
	}
	b := newBrowser(t, ts)
	b.signIn(ts.BobSecret)

	p := b.get("/inbox/audit")
	p.want(t, http.StatusOK, "<strong>Verified</strong>", `href="/inbox/audit?agent=agent-1"`, "Older events", `aria-current="page">Audit log`)
	older := regexpFind(t, p.body, `href="(/inbox/audit\?before=\d+)"`)
	b.get(older).want(t, http.StatusOK, "approval.requested")

	p = b.get("/inbox/audit?trace=run-2")
	p.want(t, http.StatusOK, "run-2")
	if strings.Contains(p.body, "trace=run-1") {
		t.Error("the trace filter lists another trace")
	}
	b.get("/inbox/audit?approval="+ap.ID).want(t, http.StatusOK, "approval.requested", "decision")
	b.get("/inbox/audit?before=soon").want(t, http.StatusBadRequest, "sequence number")

	b.get("/inbox/audit/1").want(t, http.StatusOK, "Event #1", "token.created")
	b.get("/inbox/audit/100000").want(t, http.StatusNotFound, "no event 100000")
	b.get("/inbox/audit/first").want(t, http.StatusBadRequest)
}

func TestInboxAuditShowsBrokenChain(t *testing.T) {
	ts := newTestServer(t)
	queue(t, ts, airlocktest.Action("deploy", "x"))
	raw, err := sql.Open("sqlite", "file:"+ts.DB.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, q := range []string{`DROP TRIGGER events_no_update`, `UPDATE events SET kind = 'forged' WHERE seq = 2`} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	b := newBrowser(t, ts)
	b.signIn(ts.BobSecret)
	p := b.get("/inbox/audit")
	p.want(t, http.StatusOK, "Broken at event #2", "chain-bad")
	if strings.Contains(p.body, "<strong>Verified</strong>") {
		t.Error("a tampered log is shown as verified")
	}
}

func TestInboxDetailShellCommands(t *testing.T) {
	ts := newTestServer(t)
	useReviewPolicy(t, ts)
	a := airlock.Action{Agent: "agent-1", Tool: "Bash", TraceID: "t-1", Cwd: "/work",
		Args: airlock.MustArgs(map[string]any{"command": "cat notes.txt > out.txt && curl -s 'https://example.com/<x>'"})}
	ap := queue(t, ts, a)
	b := newBrowser(t, ts)
	b.signIn(ts.BobSecret)
	p := b.get("/inbox/approvals/" + ap.ID)
	p.want(t, http.StatusOK, "Shell commands (3)", "<code>cat notes.txt</code>", "<code>&gt; out.txt</code>",
		"https://example.com/&lt;x&gt;", "network-egress", `class="tier tier-write"`,
		"approval.requested", "decision", `href="/inbox/audit/`)
}

func TestInboxBatchApproval(t *testing.T) {
	ts := newTestServer(t)
	useReviewPolicy(t, ts)
	var same []airlock.Approval
	for i := range 3 {
		same = append(same, queue(t, ts, writeAction("notes.txt", fmt.Sprint("run-", i))))
	}
	other := queue(t, ts, writeAction("other.txt", "run-9"))
	// The same again, asked for bob: bob may not approve it, so it is not
	// offered to him and spoils any batch that holds it.
	forBob := writeAction("notes.txt", "run-8")
	forBob.RequestedBy = "bob"
	own := queue(t, ts, forBob)
	b := newBrowser(t, ts)
	b.signIn(ts.BobSecret)

	b.get("/inbox").want(t, http.StatusOK, "×3 identical")
	p := b.get("/inbox/approvals/" + same[0].ID)
	p.want(t, http.StatusOK, "2 more identical requests", "Approve all 3", `action="/inbox/batch/approve"`,
		`name="id" value="`+same[1].ID+`"`, `name="action_hash" value="`+same[2].ActionHash.String()+`"`)
	if strings.Contains(p.body, other.ID) {
		t.Error("a request with other arguments is offered in the batch")
	}
	if strings.Contains(p.body, own.ID) {
		t.Error("a request bob may not resolve is offered to him in the batch")
	}

	form := func(aps ...airlock.Approval) url.Values {
		f := url.Values{"reason": {"same file, same content"}}
		for _, ap := range aps {
			f.Add("id", ap.ID)
			f.Add("action_hash", ap.ActionHash.String())
		}
		return f
	}
	pending := func() {
		t.Helper()
		for _, ap := range append(same, other, own) {
			if got := status(t, ts, ap.ID); got.Status != airlock.StatusPending {
				t.Fatalf("request %s is %s after a refused batch", ap.ID, got.Status)
			}
		}
	}
	// Refused whole, nothing applied: another effect, a wrong hash, a
	// repeated request, a missing hash, a cross-origin post.
	b.post("/inbox/batch/approve", form(same[0], other)).want(t, http.StatusConflict, "Nothing was approved", "only identical requests")
	b.post("/inbox/batch/approve", form(same[0], own)).want(t, http.StatusConflict, "Nothing was approved", "Request "+own.ID+": ")
	wrong := form(same[0], same[1])
	wrong["action_hash"][1] = same[2].ActionHash.String()
	b.post("/inbox/batch/approve", wrong).want(t, http.StatusConflict, "another action than the page showed")
	b.post("/inbox/batch/approve", form(same[0], same[0])).want(t, http.StatusConflict, "appears twice")
	b.post("/inbox/batch/approve", url.Values{"id": {same[0].ID}}).want(t, http.StatusBadRequest, "pair every request")
	b.do("POST", "/inbox/batch/approve", form(same...), map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}).
		want(t, http.StatusForbidden, "Cross-origin request refused")
	pending()

	b.post("/inbox/batch/approve", form(same...)).want(t, http.StatusOK, "3 of 3 approved")
	for _, ap := range same {
		got := status(t, ts, ap.ID)
		if got.Status != airlock.StatusApproved || got.ResolvedBy != "bob" || got.Surface != airlock.SurfaceWeb || got.Reason != "same file, same content" {
			t.Errorf("after the batch: %s by %q via %s (%q)", got.Status, got.ResolvedBy, got.Surface, got.Reason)
		}
	}
	// A stale batch page: the requests are settled, and the page says by whom.
	b.post("/inbox/batch/approve", form(same...)).want(t, http.StatusConflict, "was approved meanwhile, by bob via web")
}

func TestInboxBatchRefusesRiskyRequests(t *testing.T) {
	ts := newTestServer(t)
	useReviewPolicy(t, ts)
	var risky []airlock.Approval
	for i := range 2 {
		a := airlock.Action{Agent: "agent-1", Tool: "Bash", SessionID: fmt.Sprint("run-", i), Cwd: "/work",
			Args: airlock.MustArgs(map[string]any{"command": "rm -rf build"})}
		risky = append(risky, queue(t, ts, a))
	}
	if risky[0].Tier < airlock.TierDestructive {
		t.Fatalf("rm -rf classified %s", risky[0].Tier)
	}
	b := newBrowser(t, ts)
	b.signIn(ts.BobSecret)
	p := b.get("/inbox/approvals/" + risky[0].ID)
	p.want(t, http.StatusOK)
	if strings.Contains(p.body, "/inbox/batch/approve") {
		t.Error("a destructive request is offered for batch approval")
	}
	if p := b.get("/inbox"); strings.Contains(p.body, "×2 identical") {
		t.Error("destructive requests are marked as batchable in the list")
	}
	f := url.Values{}
	for _, ap := range risky {
		f.Add("id", ap.ID)
		f.Add("action_hash", ap.ActionHash.String())
	}
	b.post("/inbox/batch/approve", f).want(t, http.StatusConflict, "must be approved on its own")
	for _, ap := range risky {
		if got := status(t, ts, ap.ID); got.Status != airlock.StatusPending {
			t.Fatalf("a destructive request was batch-%s", got.Status)
		}
	}
}

func TestInboxPagesNeedASession(t *testing.T) {
	ts := newTestServer(t)
	b := newBrowser(t, ts)
	for _, path := range []string{"/inbox/history", "/inbox/history/list", "/inbox/audit", "/inbox/audit/1", "/inbox/next", "/inbox/agents"} {
		p := b.get(path)
		if p.status != http.StatusSeeOther || p.header.Get("Location") != "/inbox/signin" {
			t.Errorf("GET %s signed out: %d %q", path, p.status, p.header.Get("Location"))
		}
	}
	p := b.post("/inbox/batch/approve", url.Values{"id": {"x"}, "action_hash": {"y"}})
	if p.status != http.StatusUnauthorized {
		t.Errorf("batch approval signed out: %d", p.status)
	}
}

// regexpFind returns the first group of pattern's first match in s.
func regexpFind(t *testing.T, s, pattern string) string {
	t.Helper()
	m := regexp.MustCompile(pattern).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("no match for %s in\n%s", pattern, s)
	}
	return html.UnescapeString(m[1])
}

// A reviewer looking at a request that someone else settles sees who
// settled it, and how: the page's decision region re-fetches itself on the
// request's own events.
func TestInboxDetailShowsSettlementLive(t *testing.T) {
	ts := newTestServer(t)
	ap := queue(t, ts, airlocktest.Action("deploy", "x"))
	b := newBrowser(t, ts)
	b.signIn(ts.BobSecret)
	b.get("/inbox/approvals/"+ap.ID).want(t, http.StatusOK,
		`hx-get="/inbox/approvals/`+ap.ID+`/decide" hx-trigger="sse:approval-`+ap.ID+`"`, `sse-connect="/inbox/events?after=`)
	b.get("/inbox/approvals/"+ap.ID+"/decide").want(t, http.StatusOK, `action="/inbox/approvals/`+ap.ID+`/approve"`)

	if _, err := ts.Admin.Resolve(t.Context(), ap.ID, airlock.StatusRejected, ap.ActionHash, "wrong <env>", airlock.SurfaceCLI); err != nil {
		t.Fatal(err)
	}
	p := b.get("/inbox/approvals/" + ap.ID + "/decide")
	p.want(t, http.StatusOK, "Settled: rejected", "by root via cli", "wrong &lt;env&gt;")
	if strings.Contains(p.body, "/approve") {
		t.Error("a settled request still offers the approve form")
	}
	b.get("/inbox/approvals/no-such/decide").want(t, http.StatusNotFound)
}

// Names, directories and reasons come from agents and people: every page
// escapes them and shows hidden characters.
func TestInboxPagesEscapeHostileContent(t *testing.T) {
	ts := newTestServer(t)
	a := airlocktest.Action("deploy", "x")
	a.TraceID, a.SessionID, a.Cwd = `<script>alert(1)</script>`, `"'><img src=x onerror=alert(2)>`, "/work/\u202eexe.txt"
	ap := queue(t, ts, a)
	if _, err := ts.Bob.Resolve(t.Context(), ap.ID, airlock.StatusRejected, ap.ActionHash, "no\u202e<i>way</i>\x1b[31m", ""); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, ts)
	b.signIn(ts.BobSecret)
	seq := regexpFind(t, b.get("/inbox/audit?approval="+ap.ID).body, `href="/inbox/audit/(\d+)"`)
	for _, path := range []string{"/inbox/history", "/inbox/history/list", "/inbox/approvals/" + ap.ID, "/inbox/audit",
		"/inbox/audit?trace=" + url.QueryEscape(a.TraceID), "/inbox/audit/" + seq} {
		p := b.get(path)
		p.want(t, http.StatusOK)
		for _, raw := range []string{"<script>alert", "<img src=x", "<i>way", "\u202e", "\x1b"} {
			if strings.Contains(p.body, raw) {
				t.Errorf("GET %s renders %q raw", path, raw)
			}
		}
	}
	b.get("/inbox/history").want(t, http.StatusOK, `no<span class="hidden-char" title="hidden character, shown escaped">\u202e</span>&lt;i&gt;way`)
	b.get("/inbox/audit").want(t, http.StatusOK, "&lt;script&gt;alert(1)&lt;/script&gt;", `href="/inbox/audit?trace=%3cscript%3ealert%281%29%3c%2fscript%3e"`)
}

// Every rule of the inbox's style sheets that sets both a text colour and
// a background keeps a contrast ratio of at least 4.5:1 (WCAG AA for body
// text), and so does the page's default text on its default background.
func TestInboxColoursKeepContrast(t *testing.T) {
	vars := map[string]string{}
	checked := 0
	decl := regexp.MustCompile(`(?:^|;)\s*(--[a-z-]+|color|background)\s*:\s*([^;]+)`)
	rule := regexp.MustCompile(`([^{}]+)\{([^{}]*)\}`)
	for _, name := range []string{"web/assets/inbox.css", "web/assets/agents.css"} {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		css := regexp.MustCompile(`(?s)/\*.*?\*/`).ReplaceAllString(string(src), "")
		for _, m := range rule.FindAllStringSubmatch(css, -1) {
			props := map[string]string{}
			for _, d := range decl.FindAllStringSubmatch(m[2], -1) {
				v := strings.TrimSpace(d[2])
				if ref, ok := strings.CutPrefix(v, "var("); ok {
					v = vars[strings.TrimSuffix(ref, ")")]
				}
				props[d[1]] = v
				if strings.HasPrefix(d[1], "--") {
					vars[d[1]] = v
				}
			}
			if strings.TrimSpace(m[1]) == "body" {
				props["color"], props["background"] = vars["--fg"], vars["--bg"]
			}
			fg, bg := props["color"], props["background"]
			if !isHex(fg) || !isHex(bg) {
				continue
			}
			checked++
			if r := contrast(fg, bg); r < 4.5 {
				t.Errorf("%s: %s on %s has contrast %.2f, want at least 4.5", strings.TrimSpace(m[1]), fg, bg, r)
			}
		}
	}
	if checked < 10 {
		t.Fatalf("only %d colour pairs found: the style sheets moved?", checked)
	}
}

func isHex(s string) bool {
	return regexp.MustCompile(`^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$`).MatchString(s)
}

// contrast is WCAG 2's contrast ratio of two #rgb or #rrggbb colours.
func contrast(a, b string) float64 {
	lum := func(h string) float64 {
		h = strings.TrimPrefix(h, "#")
		if len(h) == 3 {
			h = string([]byte{h[0], h[0], h[1], h[1], h[2], h[2]})
		}
		var l float64
		for i, w := range []float64{0.2126, 0.7152, 0.0722} {
			n, _ := strconv.ParseUint(h[2*i:2*i+2], 16, 8)
			c := float64(n) / 255
			if c <= 0.03928 {
				c /= 12.92
			} else {
				c = math.Pow((c+0.055)/1.055, 2.4)
			}
			l += w * c
		}
		return l
	}
	la, lb := lum(a), lum(b)
	return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)
}
