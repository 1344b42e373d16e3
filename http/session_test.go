package http_test

import (
	"context"
	"crypto/sha256"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
	"github.com/airlock-dev/airlock/gate"
	airlockhttp "github.com/airlock-dev/airlock/http"
	"github.com/airlock-dev/airlock/inbox"
	"github.com/airlock-dev/airlock/sqlite"
)

// syncServer is a server over a fresh store that serves requests in
// process, for tests inside a synctest bubble (its clock is the bubble's).
type syncServer struct {
	t  *testing.T
	s  *airlockhttp.Server
	db *sqlite.DB
}

func newSyncServer(t *testing.T) *syncServer {
	t.Helper()
	db := sqlite.NewDB(filepath.Join(t.TempDir(), "airlock.db"))
	if err := db.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	s := &airlockhttp.Server{Enforcer: &gate.Enforcer{Gate: airlocktest.NewGate(t), Store: db}}
	t.Cleanup(func() {
		s.Drain()
		db.Close()
	})
	return &syncServer{t: t, s: s, db: db}
}

// replica is another server on the same database, through a store handle
// of its own (as another process has): it shares nothing with ss but the
// file.
func (ss *syncServer) replica() *syncServer {
	ss.t.Helper()
	db := sqlite.NewDB(ss.db.Path)
	if err := db.Open(ss.t.Context()); err != nil {
		ss.t.Fatal(err)
	}
	s := &airlockhttp.Server{Enforcer: &gate.Enforcer{Gate: airlocktest.NewGate(ss.t), Store: db}}
	ss.t.Cleanup(func() {
		s.Drain()
		db.Close()
	})
	return &syncServer{t: ss.t, s: s, db: db}
}

// reviewer stores a reviewer token and returns its secret.
func (ss *syncServer) reviewer(name string) string {
	ss.t.Helper()
	return makeToken(ss.t, ss.db, airlock.Token{Role: airlock.RoleReviewer, Name: name})
}

func (ss *syncServer) request(ctx context.Context, method, path string, form url.Values, cookie *http.Cookie, hdr map[string]string) *http.Request {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req := httptest.NewRequestWithContext(ctx, method, path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if cookie != nil {
		req.AddCookie(cookie)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	return req
}

func (ss *syncServer) serve(method, path string, form url.Values, cookie *http.Cookie, hdr map[string]string) *http.Response {
	w := httptest.NewRecorder()
	ss.s.Handler().ServeHTTP(w, ss.request(ss.t.Context(), method, path, form, cookie, hdr))
	return w.Result()
}

// get serves a GET of path with the session cookie c.
func (ss *syncServer) get(path string, c *http.Cookie) page {
	ss.t.Helper()
	resp := ss.serve("GET", path, nil, c, nil)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		ss.t.Fatal(err)
	}
	return page{status: resp.StatusCode, header: resp.Header, body: string(body)}
}

func (ss *syncServer) signIn(secret string) *http.Cookie {
	ss.t.Helper()
	for _, c := range ss.serve("POST", "/inbox/signin", url.Values{"token": {secret}}, nil, nil).Cookies() {
		if c.Name == "airlock_session" {
			return c
		}
	}
	ss.t.Fatal("no session cookie")
	return nil
}

// live reports whether the session's cookie still opens the inbox.
func (ss *syncServer) live(c *http.Cookie) bool {
	return ss.serve("GET", "/inbox", nil, c, nil).StatusCode == http.StatusOK
}

// stream is an open /inbox/events request served in the bubble.
type stream struct {
	rec    *httptest.ResponseRecorder
	done   chan struct{} // closed when the handler returns
	cancel context.CancelFunc
}

func (ss *syncServer) stream(c *http.Cookie) *stream { return ss.streamHook(c, nil) }

// streamHook is stream with a hook called with each write, before it is
// recorded: what the page does on reading it.
func (ss *syncServer) streamHook(c *http.Cookie, hook func([]byte)) *stream {
	ctx, cancel := context.WithCancel(ss.t.Context())
	st := &stream{rec: httptest.NewRecorder(), done: make(chan struct{}), cancel: cancel}
	req := ss.request(ctx, "GET", "/inbox/events", nil, c, nil)
	var w http.ResponseWriter = st.rec
	if hook != nil {
		w = &hookRecorder{ResponseRecorder: st.rec, hook: hook}
	}
	go func() {
		defer close(st.done)
		ss.s.Handler().ServeHTTP(w, req)
	}()
	ss.t.Cleanup(cancel)
	return st
}

type hookRecorder struct {
	*httptest.ResponseRecorder
	hook func([]byte)
}

func (h *hookRecorder) Write(b []byte) (int, error) {
	h.hook(b)
	return h.ResponseRecorder.Write(b)
}

// ended reports, once every goroutine of the bubble waits, whether the
// stream's handler has returned.
func (st *stream) ended() bool {
	synctest.Wait()
	select {
	case <-st.done:
		return true
	default:
		return false
	}
}

// What an open page fetches by itself when an event arrives is not the
// person's activity: an unattended inbox goes idle like any other.
func TestInboxLiveFetchesAreNotActivity(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ss := newSyncServer(t)
		c := ss.signIn(ss.reviewer("bob"))
		time.Sleep(20 * time.Minute)
		live := map[string]string{"HX-Request": "true"}
		if got := ss.serve("GET", "/inbox/list", nil, c, live).StatusCode; got != http.StatusOK {
			t.Fatalf("the list's live re-fetch after 20 idle minutes: %d, want 200", got)
		}
		time.Sleep(11 * time.Minute)
		resp := ss.serve("GET", "/inbox/list", nil, c, live)
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("HX-Redirect") != "/inbox/signin" {
			t.Fatalf("31 minutes after the person's last request, with live re-fetches between: %d %q, want 401 to the sign-in page",
				resp.StatusCode, resp.Header.Get("HX-Redirect"))
		}
	})
}

// A page's event stream opening again (after a network hiccup, or refused
// and retried) is not the person's activity either.
func TestInboxStreamsAreNotActivity(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ss := newSyncServer(t)
		c := ss.signIn(ss.reviewer("bob"))
		time.Sleep(20 * time.Minute)
		st := ss.stream(c)
		st.ended() // let it open
		st.cancel()
		if !st.ended() {
			t.Fatal("a cancelled stream did not end")
		}
		time.Sleep(11 * time.Minute)
		probe := map[string]string{"HX-Request": "true"}
		if got := ss.serve("GET", "/inbox/session", nil, c, probe).StatusCode; got != http.StatusUnauthorized {
			t.Fatalf("31 minutes after the person's last request, with a stream opened between: %d, want 401", got)
		}
	})
}

// One token's sign-ins cannot crowd out others' sessions: past its limit,
// its own least recently used session ends.
func TestInboxSessionsPerToken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ss := newSyncServer(t)
		alice := ss.signIn(ss.reviewer("alice"))
		bob := ss.reviewer("bob")
		var cookies []*http.Cookie
		for range inbox.MaxPerToken + 1 {
			time.Sleep(time.Second) // distinct last uses
			cookies = append(cookies, ss.signIn(bob))
		}
		if ss.live(cookies[0]) {
			t.Errorf("bob's %d sessions kept the least recently used one past the limit", len(cookies))
		}
		for i, c := range cookies[1:] {
			if !ss.live(c) {
				t.Fatalf("bob's session %d of the last %d ended", i+1, inbox.MaxPerToken)
			}
		}
		if !ss.live(alice) {
			t.Error("another person's session ended when bob signed in many times")
		}
	})
}

// The limit of sessions per token holds across replicas: the sign-in past
// it, on whichever replica, ends the token's least recently used session
// on all of them, its streams with it.
func TestInboxSessionsPerTokenAcrossReplicas(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newSyncServer(t)
		b := a.replica()
		replicas := []*syncServer{a, b}
		bob := a.reviewer("bob")
		var cookies []*http.Cookie
		var st *stream
		for i := range inbox.MaxPerToken + 1 {
			time.Sleep(time.Second) // distinct last uses
			cookies = append(cookies, replicas[i%2].signIn(bob))
			if i == 0 {
				st = b.stream(cookies[0])
			}
		}
		time.Sleep(inbox.SessionCheckEvery)
		if !st.ended() || !st.closed() {
			t.Errorf("the stream of the session ended past the limit, on the other replica: ended %v\n%s", st.ended(), st.rec.Body)
		}
		for j, ss := range replicas {
			if ss.live(cookies[0]) {
				t.Errorf("replica %d: bob's %d sessions over two replicas kept the least recently used one past the limit", j, len(cookies))
			}
			for i, c := range cookies[1:] {
				if !ss.live(c) {
					t.Fatalf("replica %d: bob's session %d of the last %d ended", j, i+1, inbox.MaxPerToken)
				}
			}
		}
	})
}

// The streams' checks cost one read of each session and of each token a
// round, however many streams they hold.
func TestInboxStreamChecksPerSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newSyncServer(t)
		cs := &countingStore{DB: a.db}
		b := &syncServer{t: t, s: &airlockhttp.Server{Enforcer: &gate.Enforcer{Gate: airlocktest.NewGate(t), Store: cs}}, db: a.db}
		t.Cleanup(b.s.Drain)
		bob, alice := a.reviewer("bob"), a.reviewer("alice")
		var open []*stream
		for _, c := range []*http.Cookie{a.signIn(bob), a.signIn(bob), a.signIn(alice)} {
			for range 4 {
				open = append(open, b.stream(c))
			}
		}
		for i, st := range open {
			if st.ended() {
				t.Fatalf("stream %d ended: %d %s", i, st.rec.Code, st.rec.Body)
			}
		}
		cs.sessions.Store(0)
		cs.tokens.Store(0)
		time.Sleep(inbox.SessionCheckEvery)
		synctest.Wait()
		if got, want := cs.sessions.Load(), int64(3); got != want {
			t.Errorf("a round over 12 streams of 3 sessions read %d sessions, want %d", got, want)
		}
		if got, want := cs.tokens.Load(), int64(2); got != want {
			t.Errorf("a round over 12 streams of 2 tokens read %d tokens, want %d", got, want)
		}
	})
}

// countingStore counts the reads of sessions and tokens.
type countingStore struct {
	*sqlite.DB
	sessions, tokens atomic.Int64
}

func (cs *countingStore) Session(ctx context.Context, id airlock.Hash) (airlock.Session, error) {
	cs.sessions.Add(1)
	return cs.DB.Session(ctx, id)
}

func (cs *countingStore) TokenBySecret(ctx context.Context, secret airlock.Hash) (airlock.Token, error) {
	cs.tokens.Add(1)
	return cs.DB.TokenBySecret(ctx, secret)
}

// Signing out ends the session's open event streams at once, not at their
// next heartbeat.
func TestInboxSignOutEndsStreams(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ss := newSyncServer(t)
		c := ss.signIn(ss.reviewer("bob"))
		st := ss.stream(c)
		if st.ended() {
			t.Fatalf("the stream ended by itself: %d %s", st.rec.Code, st.rec.Body)
		}
		if got := ss.serve("POST", "/inbox/signout", nil, c, nil).StatusCode; got != http.StatusSeeOther {
			t.Fatalf("sign-out: %d", got)
		}
		if !st.ended() {
			t.Fatal("signing out left the session's event stream open")
		}
		if !st.closed() {
			t.Fatalf("the stream of a session signed out ended without the closing event:\n%s", st.rec.Body)
		}
	})
}

// A page told that its stream closed for good asks at once whether its
// session lives (inbox.js): by then, the answer is no.
func TestInboxStreamClosedAfterSessionGone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ss := newSyncServer(t)
		c := ss.signIn(ss.reviewer("bob"))
		probe := map[string]string{"HX-Request": "true"}
		asked := 0
		st := ss.streamHook(c, func(b []byte) {
			if !strings.Contains(string(b), "event: airlock-closed") {
				return
			}
			asked++
			// The page's cookie is still set: the sign-out's answer, which
			// clears it, may come after the stream's last event.
			if got := ss.serve("GET", "/inbox/session", nil, c, probe).StatusCode; got != http.StatusUnauthorized {
				t.Errorf("the session when its stream is closed: %d, want 401", got)
			}
		})
		if st.ended() {
			t.Fatalf("the stream ended by itself: %d %s", st.rec.Code, st.rec.Body)
		}
		if got := ss.serve("POST", "/inbox/signout", nil, c, nil).StatusCode; got != http.StatusSeeOther {
			t.Fatalf("sign-out: %d", got)
		}
		if !st.ended() || asked != 1 {
			t.Fatalf("the stream after sign-out: ended %v, closing events %d, want 1\n%s", st.ended(), asked, st.rec.Body)
		}
	})
}

// closed reports whether the stream ended with the event that closes a
// page's stream for good, saying that its session ended.
func (st *stream) closed() bool {
	return strings.HasSuffix(st.rec.Body.String(), "\n\nevent: airlock-closed\ndata: signed out\n\n")
}

// A stream held open on one replica ends within SessionCheckEvery of its
// session's sign-out on another, where nothing wakes it (sessions are not
// audited), well before its next heartbeat.
func TestInboxSignOutEndsStreamsOnOtherReplicas(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newSyncServer(t)
		b := a.replica()
		bob := a.signIn(a.reviewer("bob"))
		alice := a.signIn(a.reviewer("alice"))
		st, other := b.stream(bob), b.stream(alice)
		if st.ended() {
			t.Fatalf("the stream ended by itself: %d %s", st.rec.Code, st.rec.Body)
		}
		time.Sleep(inbox.SessionCheckEvery / 2)
		if got := a.serve("POST", "/inbox/signout", nil, bob, nil).StatusCode; got != http.StatusSeeOther {
			t.Fatalf("sign-out: %d", got)
		}
		time.Sleep(inbox.SessionCheckEvery)
		if !st.ended() {
			t.Fatalf("a sign-out on another replica left the session's event stream open %s later", inbox.SessionCheckEvery)
		}
		if !st.closed() {
			t.Fatalf("the stream ended without the closing event:\n%s", st.rec.Body)
		}
		if other.ended() {
			t.Fatalf("another person's stream ended: %s", other.rec.Body)
		}
	})
}

// watchedStore is a store that tells of session changes, as one that
// several servers share does (airlock.SessionWatcher); the test says when.
type watchedStore struct {
	*sqlite.DB
	mu    sync.Mutex
	ch    chan struct{}
	reads int
}

func (w *watchedStore) WatchSessions() (<-chan struct{}, func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ch == nil {
		w.ch = make(chan struct{})
	}
	return w.ch, func() {}
}

// Session counts the reads of sessions.
func (w *watchedStore) Session(ctx context.Context, id airlock.Hash) (airlock.Session, error) {
	w.mu.Lock()
	w.reads++
	w.mu.Unlock()
	return w.DB.Session(ctx, id)
}

func (w *watchedStore) sessionReads() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.reads
}

// sessionsChanged wakes the watchers.
func (w *watchedStore) sessionsChanged() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ch != nil {
		close(w.ch)
		w.ch = nil
	}
}

// On a store that tells of session changes, a sign-out on another
// replica ends the session's streams here at once: no time passes.
func TestInboxSignOutEndsWatchedStreamsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newSyncServer(t)
		b := a.replica()
		watched := &watchedStore{DB: b.db}
		b.s.Enforcer.Store = watched
		bob := a.signIn(a.reviewer("bob"))
		alice := a.signIn(a.reviewer("alice"))
		st, other := b.stream(bob), b.stream(alice)
		if st.ended() {
			t.Fatalf("the stream ended by itself: %d %s", st.rec.Code, st.rec.Body)
		}
		start := time.Now()
		if got := a.serve("POST", "/inbox/signout", nil, bob, nil).StatusCode; got != http.StatusSeeOther {
			t.Fatalf("sign-out: %d", got)
		}
		watched.sessionsChanged()
		synctest.Wait()
		if !st.ended() || !st.closed() {
			t.Fatalf("the stream of a session signed out on another replica, %s later (ended %v):\n%s",
				time.Since(start), st.ended(), st.rec.Body)
		}
		if other.ended() {
			t.Fatalf("another person's stream ended: %s", other.rec.Body)
		}
	})
}

// A burst of session changes — sign-outs, or notifications that anyone
// who may write to a shared database can send — costs one round of
// re-checks per SessionRoundGap, not one per change.
func TestInboxSessionChangesCoalesce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ss := newSyncServer(t)
		watched := &watchedStore{DB: ss.db}
		ss.s.Enforcer.Store = watched
		st := ss.stream(ss.signIn(ss.reviewer("bob")))
		synctest.Wait()
		before := watched.sessionReads()
		for range 50 {
			watched.sessionsChanged()
			synctest.Wait()
		}
		time.Sleep(inbox.SessionRoundGap)
		synctest.Wait()
		if n := watched.sessionReads() - before; n < 1 || n > 2 {
			t.Fatalf("50 changes at once: %d reads of the streaming session, want 1 or 2", n)
		}
		if st.ended() {
			t.Fatalf("the stream of a live session ended: %s", st.rec.Body)
		}
	})
}

// The same for a token revoked elsewhere when this replica misses the
// wake-up its audit event brings (a PostgreSQL notification lost with its
// connection; here, another process's append, which an SQLite store sees
// at its next poll, made rare).
func TestInboxRevokedTokenEndsStreamsOnOtherReplicas(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newSyncServer(t)
		b := a.replica()
		b.db.PollInterval = time.Hour
		c := a.signIn(a.reviewer("eve"))
		st := b.stream(c)
		if st.ended() {
			t.Fatalf("the stream ended by itself: %d %s", st.rec.Code, st.rec.Body)
		}
		if _, err := a.db.RevokeToken(t.Context(), "reviewer:eve", "root"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(inbox.SessionCheckEvery)
		if !st.ended() || !st.closed() {
			t.Fatalf("a token revoked elsewhere left its session's event stream open %s later (ended %v):\n%s",
				inbox.SessionCheckEvery, st.ended(), st.rec.Body)
		}
	})
}

// A token revoked ends its sessions' open event streams at the next event,
// which is not shown.
func TestInboxRevokedTokenEndsStreams(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ss := newSyncServer(t)
		c := ss.signIn(ss.reviewer("eve"))
		st := ss.stream(c)
		if st.ended() {
			t.Fatalf("the stream ended by itself: %d %s", st.rec.Code, st.rec.Body)
		}
		// Revoked straight in the store, as another replica or the CLI does.
		if _, err := ss.db.RevokeToken(t.Context(), "reviewer:eve", "root"); err != nil {
			t.Fatal(err)
		}
		ap, _, err := ss.db.RequestApproval(t.Context(), airlocktest.NewApproval("agent-1", "make", airlock.Ask, time.Hour), airlock.Record{})
		if err != nil {
			t.Fatal(err)
		}
		if !st.ended() {
			t.Fatal("revoking the token left its session's event stream open")
		}
		if body := st.rec.Body.String(); strings.Contains(body, ap.ID) {
			t.Fatalf("the revoked token's stream announced a request queued after the revocation:\n%s", body)
		}
	})
}

// A session holds at most MaxStreams live streams (its open tabs); one
// closing makes room for another.
func TestInboxStreamsPerSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ss := newSyncServer(t)
		c := ss.signIn(ss.reviewer("bob"))
		var open []*stream
		for range inbox.MaxStreams {
			open = append(open, ss.stream(c))
		}
		for i, st := range open {
			if st.ended() {
				t.Fatalf("stream %d ended: %d %s", i, st.rec.Code, st.rec.Body)
			}
		}
		// One more is closed for good with the event the pages' sse-close
		// names: an error status would be retried by the page forever.
		over := ss.stream(c)
		if !over.ended() || over.rec.Code != http.StatusOK || !strings.HasPrefix(over.rec.Body.String(), "event: airlock-closed\ndata: too many live pages") {
			t.Fatalf("stream %d: ended %v, %d %q, want the closing event", inbox.MaxStreams+1, over.ended(), over.rec.Code, over.rec.Body)
		}
		open[0].cancel()
		if !open[0].ended() {
			t.Fatal("a cancelled stream did not end")
		}
		if again := ss.stream(c); again.ended() {
			t.Fatalf("no room for a stream after one closed: %d %s", again.rec.Code, again.rec.Body)
		}
	})
}

// Behind the TLS-terminating proxy a deployment puts in front, the session
// cookie is Secure.
func TestInboxCookieSecureBehindProxy(t *testing.T) {
	ts := newTestServer(t)
	for _, tc := range []struct {
		proto  string
		secure bool
	}{{"", false}, {"http", false}, {"https", true}, {"HTTPS", true}} {
		b := newBrowser(t, ts)
		p := b.do("POST", "/inbox/signin", url.Values{"token": {ts.BobSecret}}, map[string]string{"X-Forwarded-Proto": tc.proto})
		var found bool
		for _, c := range (&http.Response{Header: p.header}).Cookies() {
			if c.Name == "airlock_session" {
				found = true
				if c.Secure != tc.secure {
					t.Errorf("X-Forwarded-Proto %q: Secure %v, want %v", tc.proto, c.Secure, tc.secure)
				}
			}
		}
		if !found {
			t.Errorf("X-Forwarded-Proto %q: no session cookie (%d)", tc.proto, p.status)
		}
	}
}

// An open page asks whether its session lives when its stream fails:
// 204 while it does, 401 after, and the question is not activity.
func TestInboxSessionProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ss := newSyncServer(t)
		c := ss.signIn(ss.reviewer("bob"))
		probe := map[string]string{"HX-Request": "true"}
		if got := ss.serve("GET", "/inbox/session", nil, c, probe).StatusCode; got != http.StatusNoContent {
			t.Fatalf("a live session: %d, want 204", got)
		}
		time.Sleep(20 * time.Minute)
		ss.serve("GET", "/inbox/session", nil, c, probe)
		time.Sleep(11 * time.Minute)
		if got := ss.serve("GET", "/inbox/session", nil, c, probe).StatusCode; got != http.StatusUnauthorized {
			t.Fatalf("a session idle for 31 minutes, asked about meanwhile: %d, want 401", got)
		}
	})
}

// Sessions end after 30 minutes without a request, and after 12 hours
// whatever the activity.
func TestInboxSessionsExpire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ss := newSyncServer(t)
		bob := ss.reviewer("bob")

		c := ss.signIn(bob)
		time.Sleep(29 * time.Minute)
		if !ss.live(c) {
			t.Fatal("a session ended before 30 idle minutes")
		}
		time.Sleep(30 * time.Minute)
		if ss.live(c) {
			t.Fatal("a session outlived 30 idle minutes")
		}

		c = ss.signIn(bob)
		for range 12 * 3 {
			if !ss.live(c) {
				t.Fatal("an active session ended before 12 hours")
			}
			time.Sleep(20 * time.Minute)
		}
		if ss.live(c) {
			t.Fatal("a session outlived 12 hours")
		}
	})
}

// Two replicas on one store: a session started on one is recognised on the
// other, and signing out on either ends it on both.
func TestInboxSessionsAcrossReplicas(t *testing.T) {
	ts := newTestServer(t)
	other := &airlockhttp.Server{Enforcer: &gate.Enforcer{Gate: airlocktest.NewGate(t), Store: ts.DB}}
	hs := httptest.NewServer(other.Handler())
	t.Cleanup(hs.Close)
	t.Cleanup(other.Drain)

	a := newBrowser(t, ts)
	c := a.signIn(ts.BobSecret)
	b := newBrowser(t, &testServer{URL: hs.URL})
	b.c.Jar.SetCookies(mustURL(t, hs.URL+"/inbox"), []*http.Cookie{{Name: c.Name, Value: c.Value, Path: c.Path}})

	if p := b.get("/inbox"); p.status != http.StatusOK || !strings.Contains(p.body, "bob") {
		t.Fatalf("the other replica, with the session's cookie: %d, want bob's inbox\n%s", p.status, p.body)
	}
	if p := a.get("/inbox"); p.status != http.StatusOK {
		t.Fatalf("the replica that started the session: %d", p.status)
	}
	if p := b.post("/inbox/signout", nil); p.status != http.StatusSeeOther {
		t.Fatalf("sign-out on the other replica: %d", p.status)
	}
	// The first replica's browser still holds the cookie: only the
	// other's was cleared.
	if p := a.get("/inbox"); p.status != http.StatusSeeOther || p.header.Get("Location") != "/inbox/signin" {
		t.Fatalf("the first replica after a sign-out on the other: %d %q, want a redirect to sign in",
			p.status, p.header.Get("Location"))
	}
	if _, err := ts.DB.Session(t.Context(), sha256.Sum256([]byte(c.Value))); airlock.ErrorCode(err) != airlock.ENOTFOUND {
		t.Errorf("the store after sign-out: %v, want ENOTFOUND", err)
	}

	// A session signed in on the other replica, and its token revoked:
	// refused on both.
	c = b.signIn(ts.BobSecret)
	a.c.Jar.SetCookies(mustURL(t, ts.URL+"/inbox"), []*http.Cookie{{Name: c.Name, Value: c.Value, Path: c.Path}})
	if p := a.get("/inbox"); p.status != http.StatusOK {
		t.Fatalf("the first replica, with a session of the other: %d", p.status)
	}
	if _, err := ts.DB.RevokeToken(t.Context(), "reviewer:bob", "root"); err != nil {
		t.Fatal(err)
	}
	for name, br := range map[string]*browser{"first": a, "other": b} {
		if p := br.get("/inbox"); p.status != http.StatusSeeOther {
			t.Errorf("the %s replica after the token's revocation: %d, want a redirect to sign in", name, p.status)
		}
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
