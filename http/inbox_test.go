package http_test

import (
	"bufio"
	"context"
	"fmt"
	"html"
	"html/template"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
	"github.com/google/uuid"
)

// waitBound bounds how long a test waits for a page or on a stream: it
// only stops a hang, it does not measure anything.
const waitBound = 20 * time.Second

// browser is a cookie-keeping client that does not follow redirects, so
// that a test sees each 303.
type browser struct {
	t    *testing.T
	base string
	c    *http.Client
}

func newBrowser(t *testing.T, ts *testServer) *browser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &browser{t: t, base: ts.URL, c: &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

type page struct {
	status int
	header http.Header
	body   string
}

func (b *browser) do(method, path string, form url.Values, hdr map[string]string) page {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	// A page that never ends (a stream where a refusal was due) fails the
	// test rather than hang it.
	ctx, cancel := context.WithTimeout(b.t.Context(), waitBound)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, b.base+path, body)
	if err != nil {
		b.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, path, err)
	}
	return page{status: resp.StatusCode, header: resp.Header, body: string(got)}
}

func (b *browser) get(path string) page { b.t.Helper(); return b.do("GET", path, nil, nil) }

func (b *browser) post(path string, form url.Values) page {
	b.t.Helper()
	return b.do("POST", path, form, nil)
}

// signIn signs in with secret and fails the test unless it worked.
func (b *browser) signIn(secret string) *http.Cookie {
	b.t.Helper()
	p := b.post("/inbox/signin", url.Values{"token": {secret}})
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/inbox" {
		b.t.Fatalf("sign-in: %d %s\n%s", p.status, p.header.Get("Location"), p.body)
	}
	for _, c := range (&http.Response{Header: p.header}).Cookies() {
		if c.Name == "airlock_session" {
			return c
		}
	}
	b.t.Fatal("sign-in set no airlock_session cookie")
	return nil
}

func (p page) want(t *testing.T, status int, contains ...string) {
	t.Helper()
	if p.status != status {
		t.Fatalf("status %d, want %d\n%s", p.status, status, p.body)
	}
	for _, s := range contains {
		if !strings.Contains(p.body, s) {
			t.Errorf("the page does not contain %q\n%s", s, p.body)
		}
	}
}

// queue has agent-1 ask for a deploy and returns the pending request.
func queue(t *testing.T, ts *testServer, a airlock.Action) airlock.Approval {
	t.Helper()
	enf, err := ts.Agent.CheckWait(t.Context(), a, 0)
	if err != nil || !enf.Pending || enf.Approval == nil {
		t.Fatalf("check: %+v %v", enf, err)
	}
	return *enf.Approval
}

func status(t *testing.T, ts *testServer, id string) airlock.Approval {
	t.Helper()
	ap, err := ts.Bob.Approval(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return ap
}

// proposal has agent-1 attempt a that queues a request without blocking
// (suggest, needs-human) and returns the request.
func proposal(t *testing.T, ts *testServer, a airlock.Action) airlock.Approval {
	t.Helper()
	enf, err := ts.Agent.CheckWait(t.Context(), a, 0)
	if err != nil || enf.Pending || enf.Approval == nil {
		t.Fatalf("check: %+v %v", enf, err)
	}
	return *enf.Approval
}

// request stores a pending request of agent for a shell command, waiting
// at most timeout, straight in the store: for agents without a token and
// for many requests at once.
func request(t *testing.T, ts *testServer, agent, command string, timeout time.Duration) airlock.Approval {
	t.Helper()
	ap, _, err := ts.DB.RequestApproval(t.Context(), airlocktest.NewApproval(agent, command, airlock.Ask, timeout), airlock.Record{})
	if err != nil {
		t.Fatal(err)
	}
	return ap
}

var rowRE = regexp.MustCompile(`(?s)<li class="row [^"]*">\s*<a class="row-link" href="/inbox/approvals/([^"]+)">.*?</li>`)

// rowIDs returns the IDs of a list's rows, in order.
func rowIDs(body string) []string {
	var out []string
	for _, m := range rowRE.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

// rowOf returns the list row of request id.
func rowOf(t *testing.T, body, id string) string {
	t.Helper()
	for _, m := range rowRE.FindAllStringSubmatch(body, -1) {
		if m[1] == id {
			return m[0]
		}
	}
	t.Fatalf("no row for %s in\n%s", id, body)
	return ""
}

var tagRE = regexp.MustCompile(`<[^>]*>`)

// textOf is the text a person reads in a piece of a page: tags made spaces,
// entities decoded, spaces collapsed.
func textOf(s string) string {
	return strings.Join(strings.Fields(html.UnescapeString(tagRE.ReplaceAllString(s, " "))), " ")
}

// ids returns the requests' IDs.
func ids(aps ...airlock.Approval) []string {
	out := []string{}
	for _, ap := range aps {
		out = append(out, ap.ID)
	}
	return out
}

// rfc3339 writes t as the pages do.
func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// A person who opens the server's address lands on the inbox; only "/"
// does, the rest of the unknown paths stay API 404s.
func TestRootLandsOnTheInbox(t *testing.T) {
	ts := newTestServer(t)
	b := newBrowser(t, ts)
	if p := b.get("/"); p.status != http.StatusSeeOther || p.header.Get("Location") != "/inbox" {
		t.Fatalf("GET /: %d %q, want a redirect to /inbox", p.status, p.header.Get("Location"))
	}
	if p := b.get("/inbox"); p.status != http.StatusSeeOther || !strings.HasPrefix(p.header.Get("Location"), "/inbox/signin") {
		t.Fatalf("GET /inbox without a session: %d %q, want the sign-in", p.status, p.header.Get("Location"))
	}
	for _, c := range []struct{ method, path string }{{"GET", "/index.html"}, {"POST", "/"}} {
		if p := b.do(c.method, c.path, nil, nil); p.status != http.StatusNotFound {
			t.Errorf("%s %s: %d, want 404", c.method, c.path, p.status)
		}
	}
}

func TestInboxSignIn(t *testing.T) {
	ts := newTestServer(t)
	b := newBrowser(t, ts)

	// Pages need a session.
	for _, path := range []string{"/inbox", "/inbox/list", "/inbox/approvals/x"} {
		if p := b.get(path); p.status != http.StatusSeeOther || p.header.Get("Location") != "/inbox/signin" {
			t.Errorf("GET %s without a session: %d %q, want 303 to /inbox/signin", path, p.status, p.header.Get("Location"))
		}
	}
	if p := b.do("GET", "/inbox/list", nil, map[string]string{"HX-Request": "true"}); p.status != http.StatusUnauthorized || p.header.Get("HX-Redirect") != "/inbox/signin" {
		t.Errorf("htmx request without a session: %d %q", p.status, p.header.Get("HX-Redirect"))
	}
	b.get("/inbox/signin").want(t, http.StatusOK, `<label for="token">`, `name="token"`)

	// An agent's token is refused, and the refusal audited.
	head := headSeq(t, ts)
	p := b.post("/inbox/signin", url.Values{"token": {ts.AgentSecret}})
	p.want(t, http.StatusForbidden, "Only reviewer and admin tokens")
	if len(p.header.Values("Set-Cookie")) != 0 {
		t.Fatalf("a refused sign-in set a cookie: %v", p.header.Values("Set-Cookie"))
	}
	if got := refusals(t, ts, head); len(got) != 1 || got[0].Code != airlock.EUNAUTHORIZED || got[0].Path != "/inbox/signin" {
		t.Fatalf("the agent's sign-in is not audited as refused: %+v", got)
	}
	b.post("/inbox/signin", url.Values{"token": {"not-a-token"}}).want(t, http.StatusUnauthorized, "not known")
	b.post("/inbox/signin", url.Values{}).want(t, http.StatusUnauthorized)

	// A reviewer's token gives a session.
	c := b.signIn(ts.BobSecret)
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/inbox" || len(c.Value) < 43 {
		t.Fatalf("session cookie %+v: want HttpOnly, SameSite=Strict, Path=/inbox, 256 random bits", c)
	}
	if strings.Contains(c.Value, ts.BobSecret) {
		t.Fatal("the cookie carries the token")
	}
	p = b.get("/inbox")
	p.want(t, http.StatusOK, "bob <small>(reviewer)</small>", "Sign out")
	for k, want := range map[string]string{"X-Frame-Options": "DENY", "Cache-Control": "no-store"} {
		if got := p.header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if csp := p.header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("Content-Security-Policy = %q", csp)
	}

	// An admin's token gives a session too (signIn wants the 303 to /inbox).
	admin := newBrowser(t, ts)
	admin.signIn(ts.Admin.Token)
	admin.get("/inbox").want(t, http.StatusOK, "root <small>(admin)</small>", "Sign out")
}

func TestInboxListsPending(t *testing.T) {
	ts := newTestServer(t)
	ap := queue(t, ts, airlocktest.Action("deploy", "x"))
	b := newBrowser(t, ts)
	b.signIn(ts.BobSecret)

	p := b.get("/inbox")
	p.want(t, http.StatusOK, "/inbox/approvals/"+ap.ID, "agent-1", "deploy", "tier-"+ap.Tier.String(),
		`data-countdown`, `sse-connect="/inbox/events?after=`, `hx-trigger="sse:approval"`)
	b.get("/inbox/list").want(t, http.StatusOK, "/inbox/approvals/"+ap.ID)
	if p := b.get("/inbox/list"); strings.Contains(p.body, "<html") {
		t.Fatal("the list fragment is a whole page")
	}
	if p := b.get("/inbox?agent=agent-2"); strings.Contains(p.body, ap.ID) {
		t.Fatal("the agent filter lets another agent's request through")
	}
	if p := b.get("/inbox?status=approved"); strings.Contains(p.body, ap.ID) {
		t.Fatal("the status filter lets a pending request through")
	}
	b.get("/inbox?min_tier=catastrophic").want(t, http.StatusBadRequest, "catastrophic")
}

// Each filter lets through the requests it names, and only those.
func TestInboxFilters(t *testing.T) {
	ts := newTestServer(t)
	useReviewPolicy(t, ts)
	write := queue(t, ts, writeAction("notes.txt", "s-1")) // fs.write, write
	fetch := queue(t, ts, airlock.Action{Agent: "agent-1", Tool: "Bash", Cwd: "/work",
		Args: airlock.MustArgs(map[string]any{"command": "curl -s https://example.com"})})
	other := request(t, ts, "agent-2", "make", time.Hour) // process.exec, write
	if fetch.Class != "net.http" || fetch.Tier != airlock.TierNetworkEgress || write.Class != "fs.write" || write.Tier != airlock.TierWrite {
		t.Fatalf("classified %s %s and %s %s", write.Class, write.Tier, fetch.Class, fetch.Tier)
	}
	b := newBrowser(t, ts)
	b.signIn(ts.BobSecret)

	for _, c := range []struct {
		query string
		want  []airlock.Approval // newest first, unless the query orders
	}{
		{"", []airlock.Approval{other, fetch, write}},
		{"class=fs.write", []airlock.Approval{write}},
		{"class=process.exec", []airlock.Approval{other}},
		{"min_tier=network-egress", []airlock.Approval{fetch}},
		{"min_tier=write", []airlock.Approval{other, fetch, write}},
		{"min_tier=spend", nil},
		{"agent=agent-2", []airlock.Approval{other}},
		{"agent=agent-1", []airlock.Approval{fetch, write}},
		{"agent=agent-1&min_tier=network-egress", []airlock.Approval{fetch}},
		{"agent=agent-2&class=fs.write", nil},
		{"order=oldest", []airlock.Approval{write, fetch, other}},
	} {
		for _, path := range []string{"/inbox?", "/inbox/list?"} {
			p := b.get(path + c.query)
			p.want(t, http.StatusOK)
			if got, want := rowIDs(p.body), ids(c.want...); !slices.Equal(got, want) {
				t.Errorf("GET %s%s lists %v, want %v", path, c.query, got, want)
			}
		}
	}

	// Settled, a request leaves the inbox but not a listing of every status.
	if _, err := ts.Bob.Resolve(t.Context(), write.ID, airlock.StatusApproved, write.ActionHash, "", ""); err != nil {
		t.Fatal(err)
	}
	for query, want := range map[string][]airlock.Approval{
		"":                              {other, fetch},
		"status=any&order=oldest":       {write, fetch, other},
		"status=approved":               {write},
		"status=settled&class=fs.write": {write},
	} {
		if got := rowIDs(b.get("/inbox?" + query).body); !slices.Equal(got, ids(want...)) {
			t.Errorf("GET /inbox?%s after approving %s lists %v, want %v", query, write.ID, got, ids(want...))
		}
	}
}

// A long list comes in pages of 50, each link to the next keeping the
// filter, in every order and in the history.
func TestInboxPaging(t *testing.T) {
	ts := newTestServer(t)
	var pager []airlock.Approval
	for i := range 55 {
		// The newest waits the least, so that the most urgent order is
		// not the order of creation.
		pager = append(pager, request(t, ts, "pager", fmt.Sprint("job ", i), time.Hour-time.Duration(i)*time.Minute))
	}
	var others []airlock.Approval
	for i := range 3 {
		others = append(others, request(t, ts, "other", fmt.Sprint("job ", i), time.Hour))
	}
	b := newBrowser(t, ts)
	b.signIn(ts.BobSecret)

	// pages follows the Next page links from path and returns each page's
	// rows.
	pages := func(path string) [][]string {
		t.Helper()
		var out [][]string
		for range 3 {
			p := b.get(path)
			p.want(t, http.StatusOK)
			out = append(out, rowIDs(p.body))
			m := regexp.MustCompile(`<a href="([^"]+)">Next page</a>`).FindStringSubmatch(p.body)
			if m == nil {
				return out
			}
			next := html.UnescapeString(m[1])
			u, err := url.Parse(next)
			if err != nil || u.Query().Get("agent") != "pager" || u.Query().Get("cursor") == "" {
				t.Fatalf("the Next page link %q of %s drops the filter or the cursor", next, path)
			}
			path = next
		}
		t.Fatalf("%s goes on past 3 pages", path)
		return nil
	}
	check := func(path string) {
		t.Helper()
		got := pages(path)
		if len(got) != 2 || len(got[0]) != 50 || len(got[1]) != 5 {
			var sizes []int
			for _, p := range got {
				sizes = append(sizes, len(p))
			}
			t.Fatalf("%s: pages of %v rows, want 50 then 5 and no further link", path, sizes)
		}
		seen := map[string]bool{}
		for _, id := range slices.Concat(got...) {
			if seen[id] {
				t.Errorf("%s: %s is listed twice", path, id)
			}
			seen[id] = true
		}
		for _, ap := range pager {
			if !seen[ap.ID] {
				t.Errorf("%s: %s is on no page", path, ap.ID)
			}
		}
		for _, ap := range others {
			if seen[ap.ID] {
				t.Errorf("%s: another agent's %s is listed", path, ap.ID)
			}
		}
	}
	check("/inbox?agent=pager")
	check("/inbox?agent=pager&order=urgent")
	check("/inbox?agent=pager&order=oldest")
	if first := pages("/inbox?agent=pager&order=urgent")[0][0]; first != pager[54].ID {
		t.Errorf("order=urgent starts with %s, want the first deadline, %s", first, pager[54].ID)
	}

	for _, ap := range slices.Concat(pager, others) {
		if _, err := ts.DB.ResolveApproval(t.Context(), airlocktest.Approve(ap)); err != nil {
			t.Fatal(err)
		}
	}
	check("/inbox/history?agent=pager")
	check("/inbox/history?agent=pager&order=newest")
	if p := b.get("/inbox?agent=pager"); len(rowIDs(p.body)) != 0 || strings.Contains(p.body, "Next page") {
		t.Errorf("with nothing pending the inbox lists %v", rowIDs(p.body))
	}

	for _, path := range []string{"/inbox?cursor=junk", "/inbox/history?cursor=junk", "/inbox?agent=pager&order=urgent&cursor=junk"} {
		b.get(path).want(t, http.StatusBadRequest)
	}
}

// Each row says what is asked, since when, and how it is marked:
// needs-human and suggest only on the requests they apply to.
func TestInboxRows(t *testing.T) {
	ts := newTestServer(t)
	ask := queue(t, ts, airlocktest.Action("deploy", "x"))
	suggest := proposal(t, ts, airlocktest.Action("propose", "y"))
	human := proposal(t, ts, airlocktest.Action("wire_money", "z"))
	b := newBrowser(t, ts)
	b.signIn(ts.BobSecret)

	p := b.get("/inbox")
	p.want(t, http.StatusOK)
	for _, c := range []struct {
		ap                  airlock.Approval
		needsHuman, suggest bool
	}{
		{ask, false, false},
		{suggest, false, true},
		{human, true, true},
	} {
		row := rowOf(t, p.body, c.ap.ID)
		for _, want := range []string{
			`<span class="summary">` + template.HTMLEscapeString(c.ap.Summary) + `</span>`,
			// (a needs-human request's class may be shown without its
			// suffix, the badge says it)
			`<span class="class">` + template.HTMLEscapeString(strings.TrimSuffix(c.ap.Class, airlock.NeedsHumanSuffix)),
			`<span class="tool">` + c.ap.Tool + `</span>`,
			`waiting <time datetime="` + rfc3339(c.ap.Created) + `" data-since>`,
			`<time datetime="` + rfc3339(c.ap.Expires) + `" data-countdown>`,
		} {
			if !strings.Contains(row, want) {
				t.Errorf("the row of %s (%s) does not contain %q\n%s", c.ap.ID, c.ap.Tool, want, row)
			}
		}
		if got := strings.Contains(row, `class="badge badge-human"`); got != c.needsHuman {
			t.Errorf("the row of %s (%s) marked needs-human: %v, want %v\n%s", c.ap.ID, c.ap.Tool, got, c.needsHuman, row)
		}
		if got := strings.Contains(row, `class="badge badge-suggest"`); got != c.suggest {
			t.Errorf("the row of %s (%s) marked suggest: %v, want %v\n%s", c.ap.ID, c.ap.Tool, got, c.suggest, row)
		}
	}
	if !human.NeedsHuman || !strings.HasSuffix(human.Class, "#needs-human") || !suggest.IsGrant() || ask.IsGrant() {
		t.Fatalf("the requests are not what the test needs: %+v", []airlock.Approval{ask, suggest, human})
	}
}

func TestInboxAssetsAreHashedAndCached(t *testing.T) {
	ts := newTestServer(t)
	b := newBrowser(t, ts)
	p := b.get("/inbox/signin")
	m := regexp.MustCompile(`src="(/inbox/assets/[0-9a-f]+/htmx\.min\.js)"`).FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no hashed htmx URL in\n%s", p.body)
	}
	a := b.get(m[1])
	a.want(t, http.StatusOK, "htmx")
	if cc := a.header.Get("Cache-Control"); !strings.Contains(cc, "immutable") {
		t.Errorf("asset Cache-Control = %q", cc)
	}
	if ct := a.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/javascript") {
		t.Errorf("asset Content-Type = %q", ct)
	}
	if a := b.get(strings.Replace(m[1], "/assets/", "/assets/0", 1)); a.status != http.StatusNotFound {
		t.Errorf("an asset under a stale hash: %d, want 404", a.status)
	}
	if strings.Contains(p.body, "http://") || strings.Contains(p.body, "https://") {
		t.Error("the page refers to another site")
	}
}

func TestInboxDetailShowsHostileContentSafely(t *testing.T) {
	ts := newTestServer(t)
	a := airlocktest.Action("deploy", "x")
	a.Args = airlock.MustArgs(map[string]any{"path": "/work/x", "note": "<script>alert(1)</script> safe\u202etxt.exe", "big": strings.Repeat("y", 10<<10)})
	ap := queue(t, ts, a)
	b := newBrowser(t, ts)
	b.signIn(ts.BobSecret)

	p := b.get("/inbox/approvals/" + ap.ID)
	p.want(t, http.StatusOK,
		"&lt;script&gt;alert(1)&lt;/script&gt;", `<span class="hidden-char"`, `\u202e`,
		"sha256:"+ap.ActionHash.String(), "carol", "deploys", `<details class="args">`, strings.Repeat("y", 10<<10))
	if strings.Contains(p.body, "<script>alert(1)") {
		t.Fatal("the raw script tag is in the page")
	}
	if strings.ContainsRune(p.body, '\u202e') {
		t.Fatal("a raw right-to-left override is in the page")
	}
	b.get("/inbox/approvals/no-such-id").want(t, http.StatusNotFound)
}

// What a list shows of a request (agent, tool, class, summary) comes from
// agents: escaped, hidden characters shown.
func TestInboxListShowsHostileContentSafely(t *testing.T) {
	ts := newTestServer(t)
	ap := airlocktest.NewApproval("<script>alert(1)</script>", "echo <img src=x onerror=alert(2)>\u202eevil", airlock.Ask, time.Hour)
	ap.Tool, ap.Class = "<b>tool</b>", "<i>class</i>"
	h, err := ap.Action.Hash()
	if err != nil {
		t.Fatal(err)
	}
	ap.ActionHash = h
	if _, _, err := ts.DB.RequestApproval(t.Context(), ap, airlock.Record{}); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, ts)
	b.signIn(ts.BobSecret)
	for _, path := range []string{"/inbox", "/inbox/list", "/inbox?agent=" + url.QueryEscape(ap.Agent)} {
		p := b.get(path)
		p.want(t, http.StatusOK, "/inbox/approvals/"+ap.ID,
			"&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;b&gt;tool&lt;/b&gt;", "&lt;i&gt;class&lt;/i&gt;",
			`&lt;img src=x onerror=alert(2)&gt;<span class="hidden-char" title="hidden character, shown escaped">\u202e</span>evil`)
		for _, raw := range []string{"<script>alert", "<img src=x", "<b>tool", "<i>class", "\u202e"} {
			if strings.Contains(p.body, raw) {
				t.Errorf("GET %s renders %q raw", path, raw)
			}
		}
	}
}

// approveForm is what the detail page's approve form sends.
func approveForm(h airlock.Hash, reason string) url.Values {
	return url.Values{"action_hash": {h.String()}, "reason": {reason}}
}

func TestInboxApprove(t *testing.T) {
	ts := newTestServer(t)
	ap := queue(t, ts, airlocktest.Action("deploy", "x"))
	b := newBrowser(t, ts)
	b.signIn(ts.BobSecret)
	b.get("/inbox/approvals/"+ap.ID).want(t, http.StatusOK,
		`action="/inbox/approvals/`+ap.ID+`/approve"`, `name="action_hash" value="`+ap.ActionHash.String()+`"`, `<label for="reject-reason">`)

	p := b.post("/inbox/approvals/"+ap.ID+"/approve", approveForm(ap.ActionHash, "looks right"))
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/inbox?done="+ap.ID {
		t.Fatalf("approve: %d %q\n%s", p.status, p.header.Get("Location"), p.body)
	}
	// The inbox says what was settled, read from the store.
	done := regexp.MustCompile(`(?s)<p class="done" role="status">(.*?)</p>`)
	m := done.FindStringSubmatch(b.get(p.header.Get("Location")).body)
	if m == nil || !strings.HasPrefix(textOf(m[1]), "approved by bob via web at ") || !strings.Contains(m[1], `href="/inbox/approvals/`+ap.ID+`"`) {
		t.Errorf("after approving, the inbox's note: %q", m)
	}
	pending := queue(t, ts, airlocktest.Action("deploy", "y"))
	for _, id := range []string{pending.ID, "no-such", "<b>"} {
		if done.MatchString(b.get("/inbox?done=" + url.QueryEscape(id)).body) {
			t.Errorf("?done=%s: a note about a request not settled", id)
		}
	}
	got := status(t, ts, ap.ID)
	if got.Status != airlock.StatusApproved || got.Surface != airlock.SurfaceWeb || got.ResolvedBy != "bob" || got.Reason != "looks right" {
		t.Fatalf("after approving in the inbox: %s by %q via %s (%q)", got.Status, got.ResolvedBy, got.Surface, got.Reason)
	}
	// The blocked agent is let through.
	enf, err := ts.Agent.Resume(t.Context(), ap.ID, time.Second)
	if err != nil || !enf.Allowed {
		t.Fatalf("resume after web approval: %+v %v", enf, err)
	}
}

func TestInboxWrongHash(t *testing.T) {
	ts := newTestServer(t)
	ap := queue(t, ts, airlocktest.Action("deploy", "x"))
	other := queue(t, ts, airlocktest.Action("deploy", "y"))
	b := newBrowser(t, ts)
	b.signIn(ts.BobSecret)

	for _, action := range []string{"approve", "reject"} {
		b.post("/inbox/approvals/"+ap.ID+"/"+action, approveForm(other.ActionHash, "no")).want(t, http.StatusConflict,
			"sha256:"+other.ActionHash.String(), "sha256:"+ap.ActionHash.String(), "Nothing was applied")
		b.post("/inbox/approvals/"+ap.ID+"/"+action, url.Values{"reason": {"no"}}).want(t, http.StatusBadRequest, "action hash")
		if got := status(t, ts, ap.ID); got.Status != airlock.StatusPending {
			t.Fatalf("after a wrong hash to %s the request is %s", action, got.Status)
		}
	}
}

func TestInboxRefusesCrossOriginPosts(t *testing.T) {
	ts := newTestServer(t)
	ap := queue(t, ts, airlocktest.Action("deploy", "x"))
	b := newBrowser(t, ts)
	b.signIn(ts.BobSecret)

	form := approveForm(ap.ActionHash, "")
	head := headSeq(t, ts)
	for _, hdr := range []map[string]string{
		{"Sec-Fetch-Site": "cross-site"},
		{"Sec-Fetch-Site": "same-site"},
		{"Origin": "http://evil.example"},
	} {
		p := b.do("POST", "/inbox/approvals/"+ap.ID+"/approve", form, hdr)
		p.want(t, http.StatusForbidden, "Cross-origin request refused")
		b.do("POST", "/inbox/approvals/"+ap.ID+"/reject", url.Values{"action_hash": {ap.ActionHash.String()}, "reason": {"x"}}, hdr).
			want(t, http.StatusForbidden)
		b.do("POST", "/inbox/signout", nil, hdr).want(t, http.StatusForbidden)
		b.do("POST", "/inbox/signin", url.Values{"token": {ts.BobSecret}}, hdr).want(t, http.StatusForbidden)
	}
	if got := status(t, ts, ap.ID); got.Status != airlock.StatusPending {
		t.Fatalf("after cross-origin posts the request is %s", got.Status)
	}
	// Each refusal is audited, as the API's are: where, from where, why.
	rs := refusals(t, ts, head)
	if len(rs) != 12 {
		t.Fatalf("%d cross-origin refusals audited, want 12", len(rs))
	}
	if r := rs[0]; r.Code != airlock.EUNAUTHORIZED || r.Method != "POST" || r.Path != "/inbox/approvals/"+ap.ID+"/approve" ||
		!strings.Contains(r.Reason, "cross-origin POST to the inbox refused") || !strings.Contains(r.Reason, `Sec-Fetch-Site "cross-site"`) ||
		r.Remote == "" {
		t.Errorf("the audit of a cross-origin post: %+v", r)
	}
	if r := rs[len(rs)-1]; !strings.Contains(r.Reason, `Origin "http://evil.example"`) || r.Path != "/inbox/signin" {
		t.Errorf("the audit of a cross-origin sign-in: %+v", r)
	}
	// A same-origin browser post goes through.
	p := b.do("POST", "/inbox/approvals/"+ap.ID+"/approve", form, map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": ts.URL})
	if p.status != http.StatusSeeOther {
		t.Fatalf("same-origin approve: %d\n%s", p.status, p.body)
	}
	// Every state-changing route is POST-only.
	ap2 := queue(t, ts, airlocktest.Action("deploy", "y"))
	if p := b.get("/inbox/approvals/" + ap2.ID + "/approve?action_hash=" + ap2.ActionHash.String()); p.status < 400 {
		t.Fatalf("GET approve: %d, want a refusal", p.status)
	}
	if got := status(t, ts, ap2.ID); got.Status != airlock.StatusPending {
		t.Fatalf("a GET changed the request to %s", got.Status)
	}
}

// Cross-origin posts are audited at a bounded rate, like callers without
// a token: another site cannot fill the log through a reviewer's browser.
func TestInboxCrossOriginRefusalsAreBounded(t *testing.T) {
	ts := newTestServer(t)
	b := newBrowser(t, ts)
	head := headSeq(t, ts)
	const n = 120
	for range n {
		b.do("POST", "/inbox/signout", nil, map[string]string{"Sec-Fetch-Site": "cross-site"}).want(t, http.StatusForbidden)
	}
	if got := len(refusals(t, ts, head)); got == 0 || got >= n {
		t.Fatalf("%d of %d cross-origin refusals audited, want some but not all", got, n)
	}
}

func TestInboxAlreadyResolved(t *testing.T) {
	ts := newTestServer(t)
	ap := queue(t, ts, airlocktest.Action("deploy", "x"))
	if _, err := ts.Admin.Resolve(t.Context(), ap.ID, airlock.StatusRejected, ap.ActionHash, "frozen", ""); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, ts)
	b.signIn(ts.BobSecret)
	for _, action := range []string{"approve", "reject"} {
		b.post("/inbox/approvals/"+ap.ID+"/"+action, approveForm(ap.ActionHash, "me too")).want(t, http.StatusConflict,
			"Already rejected", "root", "api", "frozen", "<time datetime=")
		if got := status(t, ts, ap.ID); got.Status != airlock.StatusRejected || got.ResolvedBy != "root" || got.Reason != "frozen" {
			t.Fatalf("a second %s changed the first resolution: %s by %s (%q)", action, got.Status, got.ResolvedBy, got.Reason)
		}
	}
	// The detail page offers no forms for it.
	if p := b.get("/inbox/approvals/" + ap.ID); strings.Contains(p.body, "/approve") {
		t.Fatal("a settled request still shows the approve form")
	}
}

// Past its deadline a request cannot be resolved: before the store
// expires it, it is too late; after, it was expired by the system.
func TestInboxTooLate(t *testing.T) {
	ts, b, clock := agentsServer(t)
	ap := queue(t, ts, airlocktest.Action("deploy", "x")) // waits 10m
	clock.advance(11 * time.Minute)
	for _, action := range []string{"approve", "reject"} {
		p := b.post("/inbox/approvals/"+ap.ID+"/"+action, approveForm(ap.ActionHash, "late"))
		p.want(t, http.StatusConflict, "<h1>Too late: the request&#39;s deadline passed</h1>", "expired at")
		if strings.Contains(p.body, "Already") {
			t.Errorf("%s past the deadline says the request is settled\n%s", action, p.body)
		}
		if got := status(t, ts, ap.ID); got.Status != airlock.StatusPending {
			t.Fatalf("%s past the deadline left the request %s", action, got.Status)
		}
	}

	if got, err := ts.DB.ExpireApproval(t.Context(), ap.ID); err != nil || got.Status != airlock.StatusExpired {
		t.Fatalf("expire: %s %v", got.Status, err)
	}
	for _, action := range []string{"approve", "reject"} {
		b.post("/inbox/approvals/"+ap.ID+"/"+action, approveForm(ap.ActionHash, "late")).want(t, http.StatusConflict,
			"<h1>Already expired</h1>", `<dt>By</dt><dd class="ident">the system</dd>`)
		if got := status(t, ts, ap.ID); got.Status != airlock.StatusExpired {
			t.Fatalf("%s after the expiry: the request is %s", action, got.Status)
		}
	}
}

// No one but a person who may decide a request can, through any of the
// inbox's forms; the request stays pending whatever the others send.
func TestInboxRefusesWhoMayNotDecide(t *testing.T) {
	ts := newTestServer(t)
	dave, err := ts.Admin.CreateToken(t.Context(), airlock.RoleReviewer, "dave", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	// bob is the rule's reviewer, but asked for this one himself.
	a := airlocktest.Action("deploy", "x")
	a.RequestedBy = "bob"
	ap := queue(t, ts, a)

	signedIn := func(secret string) *browser {
		b := newBrowser(t, ts)
		b.signIn(secret)
		return b
	}
	form := approveForm(ap.ActionHash, "why not")
	batch := url.Values{"id": {ap.ID}, "action_hash": {ap.ActionHash.String()}}
	for _, who := range []struct {
		name string
		b    *browser
		hdr  map[string]string
		// the status of approve, reject, the decide fragment and a batch
		approve, reject, decide, batch int
		// says is why the person may not decide, "" for the signed out
		says string
	}{
		{"signed out", newBrowser(t, ts), nil, 401, 401, 303, 401, ""},
		{"an agent's bearer token", newBrowser(t, ts), map[string]string{"Authorization": "Bearer " + ts.AgentSecret}, 401, 401, 303, 401, ""},
		{"a reviewer not on the rule", signedIn(dave.Secret), nil, 403, 403, 200, 409, "dave may not resolve approval " + ap.ID},
		{"the requester", signedIn(ts.BobSecret), nil, 403, 403, 200, 409, "bob requested this action and cannot approve it themselves"},
	} {
		for _, r := range []struct {
			method, path string
			form         url.Values
			status       int
		}{
			{"POST", "/inbox/approvals/" + ap.ID + "/approve", form, who.approve},
			{"POST", "/inbox/approvals/" + ap.ID + "/reject", form, who.reject},
			{"GET", "/inbox/approvals/" + ap.ID + "/decide", nil, who.decide},
			{"POST", "/inbox/batch/approve", batch, who.batch},
		} {
			p := who.b.do(r.method, r.path, r.form, who.hdr)
			if p.status != r.status {
				t.Errorf("%s, %s %s: %d, want %d\n%s", who.name, r.method, r.path, p.status, r.status, p.body)
			}
			if r.status == http.StatusSeeOther && p.header.Get("Location") != "/inbox/signin" {
				t.Errorf("%s, %s %s: to %q, want /inbox/signin", who.name, r.method, r.path, p.header.Get("Location"))
			}
			if !strings.Contains(p.body, who.says) {
				t.Errorf("%s, %s %s does not say %q\n%s", who.name, r.method, r.path, who.says, p.body)
			}
			if strings.Contains(p.body, `action="/inbox/approvals/`+ap.ID+`/approve"`) || strings.Contains(p.body, `action="/inbox/batch/approve"`) {
				t.Errorf("%s, %s %s offers a form to approve\n%s", who.name, r.method, r.path, p.body)
			}
			if got := status(t, ts, ap.ID); got.Status != airlock.StatusPending {
				t.Fatalf("%s, %s %s: the request is %s", who.name, r.method, r.path, got.Status)
			}
		}
	}
}

func TestInboxRejectNeedsReason(t *testing.T) {
	ts := newTestServer(t)
	ap := queue(t, ts, airlocktest.Action("deploy", "x"))
	b := newBrowser(t, ts)
	b.signIn(ts.BobSecret)

	b.post("/inbox/approvals/"+ap.ID+"/reject", approveForm(ap.ActionHash, "  ")).want(t, http.StatusBadRequest, "needs a reason")
	if got := status(t, ts, ap.ID); got.Status != airlock.StatusPending {
		t.Fatalf("a reject without reason left the request %s", got.Status)
	}
	if p := b.post("/inbox/approvals/"+ap.ID+"/reject", approveForm(ap.ActionHash, "not today")); p.status != http.StatusSeeOther {
		t.Fatalf("reject: %d\n%s", p.status, p.body)
	}
	if got := status(t, ts, ap.ID); got.Status != airlock.StatusRejected || got.Reason != "not today" || got.Surface != airlock.SurfaceWeb {
		t.Fatalf("after rejecting: %s %q via %s", got.Status, got.Reason, got.Surface)
	}
}

func TestInboxUnauthorisedReviewer(t *testing.T) {
	ts := newTestServer(t)
	ap := queue(t, ts, airlocktest.Action("deploy", "x"))
	dave, err := ts.Admin.CreateToken(t.Context(), airlock.RoleReviewer, "dave", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, ts)
	b.signIn(dave.Secret)
	if p := b.get("/inbox/approvals/" + ap.ID); !strings.Contains(p.body, "dave may not resolve") || strings.Contains(p.body, "/approve\"") {
		t.Fatalf("the detail page offers dave a form he may not use\n%s", p.body)
	}
	head := headSeq(t, ts)
	b.post("/inbox/approvals/"+ap.ID+"/approve", approveForm(ap.ActionHash, "")).want(t, http.StatusForbidden, "dave may not resolve")
	if got := status(t, ts, ap.ID); got.Status != airlock.StatusPending {
		t.Fatalf("an unauthorised approval left the request %s", got.Status)
	}
	if got := refusals(t, ts, head); len(got) != 1 || got[0].Code != airlock.EUNAUTHORIZED {
		t.Fatalf("the refusal is not audited: %+v", got)
	}
}

func TestInboxSignOut(t *testing.T) {
	ts := newTestServer(t)
	b := newBrowser(t, ts)
	c := b.signIn(ts.BobSecret)
	p := b.post("/inbox/signout", nil)
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/inbox/signin" {
		t.Fatalf("sign-out: %d %q", p.status, p.header.Get("Location"))
	}
	if p := b.get("/inbox"); p.status != http.StatusSeeOther {
		t.Fatalf("after sign-out: %d", p.status)
	}
	// The old cookie, replayed, is dead too.
	old := newBrowser(t, ts)
	u, _ := url.Parse(ts.URL + "/inbox")
	old.c.Jar.SetCookies(u, []*http.Cookie{{Name: c.Name, Value: c.Value, Path: "/inbox"}})
	if p := old.get("/inbox"); p.status != http.StatusSeeOther {
		t.Fatalf("a signed-out session's cookie still works: %d", p.status)
	}
}

func TestInboxRevokedTokenEndsSession(t *testing.T) {
	ts := newTestServer(t)
	eve, err := ts.Admin.CreateToken(t.Context(), airlock.RoleReviewer, "eve", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, ts)
	b.signIn(eve.Secret)
	b.get("/inbox").want(t, http.StatusOK, "eve")
	// Revoked straight in the store: the session must not lean on a cache.
	if _, err := ts.DB.RevokeToken(t.Context(), eve.Token.ID, "root"); err != nil {
		t.Fatal(err)
	}
	if p := b.get("/inbox"); p.status != http.StatusSeeOther || p.header.Get("Location") != "/inbox/signin" {
		t.Fatalf("a revoked token's session still works: %d", p.status)
	}
	// Nor can it sign in again.
	b.post("/inbox/signin", url.Values{"token": {eve.Secret}}).want(t, http.StatusUnauthorized)
}

// eventStream is an open /inbox/events response, read event by event.
type eventStream struct {
	t  *testing.T
	sc *bufio.Scanner
}

// inboxEvent is one named event of an inbox stream.
type inboxEvent struct{ name, id, data string }

// events opens path, an /inbox/events address, with the headers hdr and
// fails the test unless a stream starts.
func (b *browser) events(path string, hdr map[string]string) *eventStream {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.t.Context(), waitBound)
	b.t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, "GET", b.base+path, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	b.t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b.t.Fatalf("stream %s: %d %s", path, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	sc := bufio.NewScanner(resp.Body)
	if !sc.Scan() || !strings.HasPrefix(sc.Text(), ":") {
		b.t.Fatalf("the stream does not open with a comment: %q", sc.Text())
	}
	return &eventStream{t: b.t, sc: sc}
}

// next returns the stream's next named event, skipping comments and
// bare IDs; ok is false when the stream ended.
func (s *eventStream) next() (e inboxEvent, ok bool) {
	s.t.Helper()
	for s.sc.Scan() {
		line := s.sc.Text()
		switch k, v, _ := strings.Cut(line, ": "); {
		case line == "" && e.name != "":
			return e, true
		case line == "":
			e = inboxEvent{}
		case k == "event":
			e.name = v
		case k == "id":
			e.id = v
		case k == "data":
			e.data = v
		}
	}
	if err := s.sc.Err(); err != nil {
		s.t.Fatalf("the stream neither sent an event nor ended within %s: %v", waitBound, err)
	}
	return inboxEvent{}, false
}

// approval reads the stream's next change: an "approval" event naming a
// request, then the same under the request's own name, for its page. It
// returns the request's ID and the event's audit sequence number.
func (s *eventStream) approval() (id string, seq int64) {
	s.t.Helper()
	e, ok := s.next()
	if !ok || e.name != "approval" {
		s.t.Fatalf("the stream sent %+v (ended: %v), want an approval event", e, !ok)
	}
	seq, err := strconv.ParseInt(e.id, 10, 64)
	if err != nil {
		s.t.Fatalf("the approval event of %s has the ID %q, not a sequence number", e.data, e.id)
	}
	if own, ok := s.next(); !ok || own.name != "approval-"+e.data || own.data != e.data {
		s.t.Fatalf("after approval %s the stream sent %+v, want approval-%s", e.data, own, e.data)
	}
	return e.data, seq
}

// The inbox's stream sends an "approval" event, data the request's ID,
// when a request is queued.
func TestInboxEventStream(t *testing.T) {
	ts := newTestServer(t)
	b := newBrowser(t, ts)
	b.signIn(ts.BobSecret)

	s := b.events("/inbox/events", nil)
	ap := queue(t, ts, airlocktest.Action("deploy", "x"))
	if id, _ := s.approval(); id != ap.ID {
		t.Fatalf("stream announced %s, want %s", id, ap.ID)
	}

	// Without a session there is no stream, nor with an agent's token.
	if p := newBrowser(t, ts).get("/inbox/events"); p.status != http.StatusUnauthorized {
		t.Fatalf("stream without a session: %d", p.status)
	}
	agent := map[string]string{"Authorization": "Bearer " + ts.AgentSecret}
	if p := newBrowser(t, ts).do("GET", "/inbox/events", nil, agent); p.status != http.StatusUnauthorized {
		t.Fatalf("stream with an agent's token: %d", p.status)
	}
	for _, c := range []struct {
		path string
		hdr  map[string]string
	}{
		{"/inbox/events?after=-1", nil},
		{"/inbox/events?after=soon", nil},
		{"/inbox/events", map[string]string{"Last-Event-ID": "-1"}},
		{"/inbox/events?after=0", map[string]string{"Last-Event-ID": "x"}},
	} {
		// Only the status is read: a stream opened by mistake would not end.
		req, err := http.NewRequestWithContext(t.Context(), "GET", ts.URL+c.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range c.hdr {
			req.Header.Set(k, v)
		}
		resp, err := b.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusBadRequest {
			resp.Body.Close()
			t.Errorf("GET %s %v: %d, want 400", c.path, c.hdr, resp.StatusCode)
			continue
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || !strings.Contains(string(body), "after must be an audit sequence number") {
			t.Errorf("GET %s %v: %q %v", c.path, c.hdr, body, err)
		}
	}
}

// A request resolved elsewhere (the API) or expired reaches an open inbox
// as one queued does; a reconnecting stream resumes after the last event
// it received, whatever its address says.
func TestInboxEventStreamChanges(t *testing.T) {
	ts, b, clock := agentsServer(t)
	ctx := t.Context()
	resolved := queue(t, ts, airlocktest.Action("deploy", "x"))
	expired := queue(t, ts, airlocktest.Action("deploy", "y")) // waits 10m

	s := b.events("/inbox/events", nil)
	if _, err := ts.Admin.Resolve(ctx, resolved.ID, airlock.StatusApproved, resolved.ActionHash, "", airlock.SurfaceCLI); err != nil {
		t.Fatal(err)
	}
	clock.advance(11 * time.Minute)
	if got, err := ts.DB.ExpireApproval(ctx, expired.ID); err != nil || got.Status != airlock.StatusExpired {
		t.Fatalf("expire: %s %v", got.Status, err)
	}
	// Then a new request: the stream keeps the log's order, so had it
	// left a change out, the next one would come in its place.
	later := queue(t, ts, airlocktest.Action("deploy", "z"))
	var last int64 // the resolution's sequence number
	for _, want := range []struct {
		what string
		ap   airlock.Approval
	}{{"an approval by the API", resolved}, {"an expiry", expired}, {"a new request", later}} {
		id, seq := s.approval()
		if id != want.ap.ID {
			t.Fatalf("for %s the stream announced %s, want %s", want.what, id, want.ap.ID)
		}
		if last == 0 {
			last = seq
		}
	}

	// A page that read a log ahead of this one (restored from a backup)
	// is told to read again (lists hear "approval", a request's page
	// "reset"), and then hears of what comes.
	ahead := b.events("/inbox/events", map[string]string{"Last-Event-ID": "1000000"})
	for _, name := range []string{"approval", "reset"} {
		if e, ok := ahead.next(); !ok || e.name != name || e.data != "changed" {
			t.Fatalf("a stream resumed beyond the log's head sent %+v (%v), want %q to re-read", e, ok, name)
		}
	}
	newest := queue(t, ts, airlocktest.Action("deploy", "w"))
	if id, _ := ahead.approval(); id != newest.ID {
		t.Fatalf("after resuming beyond the head, the stream announced %s, want %s", id, newest.ID)
	}

	// The browser reconnects with the page's after= and the last ID it
	// got: the ID wins, the events after it are replayed, none before.
	r := b.events("/inbox/events?after=0", map[string]string{"Last-Event-ID": strconv.FormatInt(last, 10)})
	for _, want := range []airlock.Approval{expired, later} {
		if id, seq := r.approval(); id != want.ID || seq <= last {
			t.Fatalf("resumed after %d, the stream announced %s (event %d), want %s", last, id, seq, want.ID)
		}
	}
}

// Requests the signed-in person may not decide stay listed, muted and
// marked as such.
func TestInboxRowsNotYours(t *testing.T) {
	ts := newTestServer(t)
	ap := queue(t, ts, airlocktest.Action("deploy", "x"))
	dave, err := ts.Admin.CreateToken(t.Context(), airlock.RoleReviewer, "dave", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		who     string
		secret  string
		foreign bool
	}{{"bob", ts.BobSecret, false}, {"dave", dave.Secret, true}} {
		b := newBrowser(t, ts)
		b.signIn(tc.secret)
		row := rowOf(t, b.get("/inbox").body, ap.ID)
		if got := strings.Contains(row, "not yours to decide") && strings.Contains(row, "row-foreign"); got != tc.foreign {
			t.Errorf("%s's row of the request marked not theirs: %v, want %v\n%s", tc.who, got, tc.foreign, row)
		}
	}
}

// TestInboxApproveAndRemember: the detail page of an ask offers "approve
// and remember", saying what the grant would cover; approving so makes the
// grant, recorded with the request and named on the inbox; a needs-human
// request offers no such button.
func TestInboxApproveAndRemember(t *testing.T) {
	ts := newTestServer(t)
	secret, h := airlock.NewTokenSecret()
	if _, err := ts.DB.CreateToken(t.Context(), airlock.Token{ID: uuid.Must(uuid.NewV7()).String(), Role: airlock.RoleAdmin, Name: "root"}, h); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, ts)
	b.signIn(secret)
	ap := queue(t, ts, airlock.Action{Agent: "agent-1", Tool: "Bash", Cwd: "/w", Args: airlock.MustArgs(map[string]any{"command": "npm test"})})
	b.get("/inbox/approvals/"+ap.ID).want(t, http.StatusOK, `name="remember" value="1"`, "Approve and remember for 7 days",
		"agent-1 may then run `npm test …` (Bash) without asking, up to write")

	form := approveForm(ap.ActionHash, "the tests run often")
	form.Set("remember", "1")
	p := b.post("/inbox/approvals/"+ap.ID+"/approve", form)
	loc := p.header.Get("Location")
	gid, ok := strings.CutPrefix(loc, "/inbox?done="+ap.ID+"&grant=")
	if p.status != http.StatusSeeOther || !ok {
		t.Fatalf("approve and remember: %d %q\n%s", p.status, loc, p.body)
	}
	g, err := ts.DB.Grant(t.Context(), gid)
	if err != nil || g.Approval != ap.ID || g.GrantedBy != "root" || g.Agent != "agent-1" || g.Tool != "Bash" ||
		g.Pattern.String() != "`npm test …`" || g.MaxTier != airlock.TierWrite || g.Reason != "the tests run often" {
		t.Fatalf("the grant made: %+v, %v", g, err)
	}
	b.get(loc).want(t, http.StatusOK, "Remembered: agent-1 may run `npm test …` without asking", "grant <code>"+gid+"</code>")
	if got := status(t, ts, ap.ID); got.Status != airlock.StatusApproved {
		t.Fatalf("the request after approve and remember: %s", got.Status)
	}

	enf, err := ts.Agent.CheckWait(t.Context(), airlocktest.Action("wire_money", "y"), 0)
	if err != nil || enf.Approval == nil {
		t.Fatalf("wire_money: %+v %v", enf, err)
	}
	page := b.get("/inbox/approvals/" + enf.Approval.ID)
	page.want(t, http.StatusOK, `action="/inbox/approvals/`+enf.Approval.ID+`/approve"`)
	if strings.Contains(page.body, `name="remember"`) {
		t.Errorf("a needs-human request offers approve and remember")
	}
	deploy := queue(t, ts, airlocktest.Action("deploy", "x"))
	page = b.get("/inbox/approvals/" + deploy.ID)
	page.want(t, http.StatusOK, `action="/inbox/approvals/`+deploy.ID+`/approve"`)
	if strings.Contains(page.body, `name="remember"`) {
		t.Errorf("a %s request offers approve and remember", deploy.Tier)
	}
}

// TestInboxRememberShapes: the detail page offers, besides the proposed
// shape, the exact action and one step wider, each saying what it covers;
// the one chosen is granted; a shape not offered is refused.
func TestInboxRememberShapes(t *testing.T) {
	ts := newTestServer(t)
	secret, h := airlock.NewTokenSecret()
	if _, err := ts.DB.CreateToken(t.Context(), airlock.Token{ID: uuid.Must(uuid.NewV7()).String(), Role: airlock.RoleAdmin, Name: "root"}, h); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, ts)
	b.signIn(secret)
	ask := func(command string) airlock.Approval {
		return queue(t, ts, airlock.Action{Agent: "agent-1", Tool: "Bash", Cwd: "/w", Args: airlock.MustArgs(map[string]any{"command": command})})
	}
	ap := ask("go test ./pkg")
	b.get("/inbox/approvals/"+ap.ID).want(t, http.StatusOK, `name="remember_shape" value="narrowest" checked`,
		"`go test ./pkg …` (proposed)", `value="exact"`, "Only this exact action: the action sha256:", `value="wider"`, "One step wider: `go test …`")
	form := approveForm(ap.ActionHash, "")
	form.Set("remember", "1")
	form.Set("remember_shape", "wider")
	p := b.post("/inbox/approvals/"+ap.ID+"/approve", form)
	gid, ok := strings.CutPrefix(p.header.Get("Location"), "/inbox?done="+ap.ID+"&grant=")
	if p.status != http.StatusSeeOther || !ok {
		t.Fatalf("approve and remember wider: %d\n%s", p.status, p.body)
	}
	if g, err := ts.DB.Grant(t.Context(), gid); err != nil || g.Pattern.String() != "`go test …`" {
		t.Fatalf("the grant made: %+v, %v; want `go test …`", g, err)
	}
	other := ask("make lint")
	form = approveForm(other.ActionHash, "")
	form.Set("remember", "1")
	form.Set("remember_shape", "everything")
	b.post("/inbox/approvals/"+other.ID+"/approve", form).want(t, http.StatusConflict, "Approved, but not remembered", "no shape ", "everything")
}
