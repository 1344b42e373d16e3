package http_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
	airlockhttp "github.com/airlock-dev/airlock/http"
	"github.com/airlock-dev/airlock/sqlite"
)

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
	req, err := http.NewRequestWithContext(b.t.Context(), method, b.base+path, body)
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
		b.t.Fatal(err)
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
	enf, err := ts.Agent.Check(t.Context(), a, 0)
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
	p.want(t, http.StatusOK, "bob", "Sign out")
	for k, want := range map[string]string{"X-Frame-Options": "DENY", "Cache-Control": "no-store"} {
		if got := p.header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if csp := p.header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("Content-Security-Policy = %q", csp)
	}
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
	b.get("/inbox?status=any&oldest=1&min_tier=read").want(t, http.StatusOK, ap.ID)
	b.get("/inbox?min_tier=catastrophic").want(t, http.StatusBadRequest, "catastrophic")
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
		"sha256:"+ap.ActionHash.String(), "carol", "deploys", "<details>", strings.Repeat("y", 10<<10))
	if strings.Contains(p.body, "<script>alert(1)") {
		t.Fatal("the raw script tag is in the page")
	}
	if strings.ContainsRune(p.body, '\u202e') {
		t.Fatal("a raw right-to-left override is in the page")
	}
	b.get("/inbox").want(t, http.StatusOK)
	if p := b.get("/inbox"); strings.ContainsRune(p.body, '\u202e') || strings.Contains(p.body, "<script>alert") {
		t.Fatal("the inbox renders hostile content raw")
	}
	b.get("/inbox/approvals/no-such-id").want(t, http.StatusNotFound)
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
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/inbox" {
		t.Fatalf("approve: %d %q\n%s", p.status, p.header.Get("Location"), p.body)
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

	b.post("/inbox/approvals/"+ap.ID+"/approve", approveForm(other.ActionHash, "")).want(t, http.StatusConflict,
		"sha256:"+other.ActionHash.String(), "sha256:"+ap.ActionHash.String(), "Nothing was applied")
	b.post("/inbox/approvals/"+ap.ID+"/approve", url.Values{}).want(t, http.StatusBadRequest, "action hash")
	if got := status(t, ts, ap.ID); got.Status != airlock.StatusPending {
		t.Fatalf("after a wrong hash the request is %s", got.Status)
	}
}

func TestInboxRefusesCrossOriginPosts(t *testing.T) {
	ts := newTestServer(t)
	ap := queue(t, ts, airlocktest.Action("deploy", "x"))
	b := newBrowser(t, ts)
	b.signIn(ts.BobSecret)

	form := approveForm(ap.ActionHash, "")
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

func TestInboxAlreadyResolved(t *testing.T) {
	ts := newTestServer(t)
	ap := queue(t, ts, airlocktest.Action("deploy", "x"))
	if _, err := ts.Admin.Resolve(t.Context(), ap.ID, airlock.StatusRejected, ap.ActionHash, "frozen", ""); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, ts)
	b.signIn(ts.BobSecret)
	b.post("/inbox/approvals/"+ap.ID+"/approve", approveForm(ap.ActionHash, "")).want(t, http.StatusConflict,
		"Already rejected", "root", "api", "frozen", "<time datetime=")
	if got := status(t, ts, ap.ID); got.Status != airlock.StatusRejected || got.ResolvedBy != "root" {
		t.Fatalf("the first resolution changed: %s by %s", got.Status, got.ResolvedBy)
	}
	// The detail page offers no forms for it.
	if p := b.get("/inbox/approvals/" + ap.ID); strings.Contains(p.body, "/approve") {
		t.Fatal("a settled request still shows the approve form")
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

// The inbox's stream sends an "approval" event, data the request's ID,
// when a request is queued.
func TestInboxEventStream(t *testing.T) {
	ts := newTestServer(t)
	b := newBrowser(t, ts)
	b.signIn(ts.BobSecret)

	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", ts.URL+"/inbox/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	sc := bufio.NewScanner(resp.Body)
	if !sc.Scan() || !strings.HasPrefix(sc.Text(), ":") {
		t.Fatalf("the stream does not open with a comment: %q", sc.Text())
	}
	queued := make(chan airlock.Approval, 1)
	go func() {
		enf, err := ts.Agent.Check(ctx, airlocktest.Action("deploy", "x"), 0)
		if err != nil || enf.Approval == nil {
			t.Errorf("check: %+v %v", enf, err)
			close(queued)
			return
		}
		queued <- *enf.Approval
	}()
	var event, data string
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "event: "); ok {
			event = v
		}
		if v, ok := strings.CutPrefix(line, "data: "); ok {
			data = v
		}
		if line == "" && event != "" {
			break
		}
	}
	ap := within(t, queued, 20*time.Second, "queueing a request")
	if event != "approval" || data != ap.ID {
		t.Fatalf("stream sent event %q data %q, want approval %s", event, data, ap.ID)
	}
	// Then the same change under the request's own name, for its page.
	event = ""
	for sc.Scan() && sc.Text() != "" {
		if v, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
			event = v
		}
	}
	if event != "approval-"+ap.ID {
		t.Fatalf("stream sent event %q, want approval-%s", event, ap.ID)
	}

	// Without a session there is no stream.
	if p := newBrowser(t, ts).get("/inbox/events"); p.status != http.StatusUnauthorized {
		t.Fatalf("stream without a session: %d", p.status)
	}
}

// Sessions end after 30 minutes without a request, and after 12 hours
// whatever the activity.
func TestInboxSessionsExpire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db := sqlite.NewDB(filepath.Join(t.TempDir(), "airlock.db"))
		if err := db.Open(t.Context()); err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		s := &airlockhttp.Server{Enforcer: &airlock.Enforcer{Gate: airlocktest.NewGate(t), Store: db}}
		defer s.Drain()
		secret, h := airlock.NewTokenSecret()
		if _, err := db.CreateToken(t.Context(), airlock.Token{ID: "bob", Role: airlock.RoleReviewer, Name: "bob"}, h); err != nil {
			t.Fatal(err)
		}
		serve := func(method, path string, form url.Values, cookie *http.Cookie) *http.Response {
			var body io.Reader
			if form != nil {
				body = strings.NewReader(form.Encode())
			}
			req := httptest.NewRequest(method, path, body)
			if form != nil {
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			}
			if cookie != nil {
				req.AddCookie(cookie)
			}
			w := httptest.NewRecorder()
			s.Handler().ServeHTTP(w, req)
			return w.Result()
		}
		signIn := func() *http.Cookie {
			for _, c := range serve("POST", "/inbox/signin", url.Values{"token": {secret}}, nil).Cookies() {
				if c.Name == "airlock_session" {
					return c
				}
			}
			t.Fatal("no session cookie")
			return nil
		}
		live := func(c *http.Cookie) bool { return serve("GET", "/inbox", nil, c).StatusCode == http.StatusOK }

		c := signIn()
		time.Sleep(29 * time.Minute)
		if !live(c) {
			t.Fatal("a session ended before 30 idle minutes")
		}
		time.Sleep(30 * time.Minute)
		if live(c) {
			t.Fatal("a session outlived 30 idle minutes")
		}

		c = signIn()
		for range 12 * 3 {
			if !live(c) {
				t.Fatal("an active session ended before 12 hours")
			}
			time.Sleep(20 * time.Minute)
		}
		if live(c) {
			t.Fatal("a session outlived 12 hours")
		}
	})
}
