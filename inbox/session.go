package inbox

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/airlock-dev/airlock"
)

// Inbox sessions. A reviewer or admin signs in once with their token and
// gets a session cookie; the token's secret is never kept, only its hash,
// to re-check on every request that the token is still live.
//
// The store is the truth (airlock.SessionStore): every replica on it
// recognises a session another started, and a sign-out on one ends it on
// all at their next request — each request reads the session from the
// store (a primary-key lookup, beside the token's re-check). This
// process's map is a cache of what it has seen, with what cannot be
// shared: the live event streams of each session, and their end.
//
// A live event stream is one long request, which only events and
// heartbeats wake. One loop per server re-checks, every
// SessionCheckEvery, the sessions that hold streams here (one read of the
// session and one of its token, however many streams it holds): a session
// ended on another replica, or its token revoked, ends its streams here
// within that time — at once on a store that tells of such changes
// (airlock.SessionWatcher: PostgreSQL's notifications). Ended here, they
// end at once.
//
// The limit per token (MaxPerToken) is the store's to keep, counted at
// each sign-in over every replica's sessions: past it, the token's least
// recently used session ends everywhere (least recently used as the store
// knows it: a replica writes a session's last request at most every
// sessionTouchEvery). The limit in all (maxSessions)
// is this cache's: past it, the least recently used session without a
// stream only leaves the cache (it is read again from the store when it is
// next used).
const (
	sessionCookie     = "airlock_session"
	sessionPath       = "/inbox"
	sessionMaxAge     = 12 * time.Hour   // from sign-in, whatever the activity
	sessionIdle       = 30 * time.Minute // since the last request
	sessionTouchEvery = time.Minute      // a session's last request is written to the store at most this often
	sessionPruneEvery = time.Minute      // expired sessions are deleted from the store, at a sign-in, at most this often
	// Exported for the server's tests: the re-checks of sessions with
	// streams, and the limits per token and per session.
	SessionCheckEvery = 5 * time.Second        // a session with live streams here is re-checked against the store this often
	SessionRoundGap   = 250 * time.Millisecond // and, woken by changes (airlock.SessionWatcher), at most this often
	maxSessions       = 10000                  // in the cache; beyond it, the least recently used without a stream goes
	MaxPerToken       = 32                     // sessions of one token, on every replica; beyond it, its least recently used goes
	MaxStreams        = 16                     // live event streams of one session (its open tabs)
	maxTokenLength    = 4096                   // a pasted token longer than this is not one
)

// session is one signed-in person.
type session struct {
	token   airlock.Token // its ID at least; whole once checked
	secret  airlock.Hash  // the hash of the token's secret
	created time.Time
	seen    time.Time
	stored  time.Time // the seen the store holds, as far as this process knows
	// streams counts the session's open event streams; done is closed
	// when the session ends, which ends them.
	streams int
	done    chan struct{}
}

// sso reports whether an identity provider started the session: no
// token backs it, so none is re-checked; it ends at its own limits, or
// when its person signs out.
func (ss *session) sso() bool { return ss.secret.IsZero() }

// expired reports whether the session ended at now.
func (ss *session) expired(now time.Time) bool {
	return !now.Before(ss.created.Add(sessionMaxAge)) || !now.Before(ss.seen.Add(sessionIdle))
}

// sessions caches the live sessions, keyed by the SHA-256 of their ID (as
// the store keeps them) so that the map never holds a usable cookie value.
type sessions struct {
	mu       sync.Mutex
	m        map[airlock.Hash]*session
	pruned   time.Time // when expired sessions were last deleted from the store
	watching bool      // the loop that re-checks the sessions with streams runs
}

func sessionKey(id string) airlock.Hash { return sha256.Sum256([]byte(id)) }

// create starts a session for t and returns its ID: 256 random bits. The
// store keeps it first, and ends the token's least recently used sessions
// past MaxPerToken, whichever replica started them; nothing is cached if
// it cannot.
// A person an identity provider signed in (person not nil) has no token:
// t is person.Token(), and secret zero.
func (sm *sessions) create(ctx context.Context, st airlock.SessionStore, log *slog.Logger,
	t airlock.Token, secret airlock.Hash, person *airlock.Person, now time.Time) (string, error) {
	var b [32]byte
	rand.Read(b[:]) // never fails (crypto/rand panics rather than return short)
	id := base64.RawURLEncoding.EncodeToString(b[:])
	k := sessionKey(id)
	ended, err := st.CreateSession(ctx, airlock.Session{ID: k, TokenID: t.ID, Secret: secret, Created: now, Seen: now, Person: person}, MaxPerToken)
	if err != nil {
		return "", err
	}
	sm.mu.Lock()
	if sm.m == nil {
		sm.m = map[airlock.Hash]*session{}
	}
	// The sessions the store ended end here at once, with their streams;
	// the other replicas find them gone at their next request, or their
	// next check of their streams.
	for _, k := range ended {
		sm.drop(k)
	}
	for k, v := range sm.m {
		if v.expired(now) {
			sm.drop(k)
		}
	}
	if len(sm.m) >= maxSessions {
		sm.evictLRU()
	}
	sm.m[k] = &session{token: t, secret: secret, created: now, seen: now, stored: now, done: make(chan struct{})}
	prune := now.Sub(sm.pruned) >= sessionPruneEvery
	if prune {
		sm.pruned = now
	}
	sm.mu.Unlock()

	if prune {
		if _, err := st.DeleteExpiredSessions(ctx, now.Add(-sessionIdle), now.Add(-sessionMaxAge)); err != nil {
			log.Warn("inbox: delete expired sessions", "err", err)
		}
	}
	return id, nil
}

// drop ends the session under key k here, and its event streams; sm.mu is
// held.
func (sm *sessions) drop(k airlock.Hash) {
	if ss, ok := sm.m[k]; ok {
		close(ss.done)
		delete(sm.m, k)
	}
}

// sessionState is what get found.
type sessionState int

const (
	sessionLive    sessionState = iota
	sessionGone                 // never started, signed out (on any replica), or expired
	sessionUnknown              // the store did not answer: try again later
)

// get returns the session with this ID if it is still running, as the
// store has it (another replica may have started it, or ended it); touch
// counts the call as activity (an event stream's checks do not).
func (sm *sessions) get(ctx context.Context, st airlock.SessionStore, log *slog.Logger,
	id string, now time.Time, touch bool) (session, sessionState) {
	if id == "" {
		return session{}, sessionGone
	}
	return sm.lookup(ctx, st, log, sessionKey(id), now, touch)
}

// lookup is get by the key the store and the cache hold.
func (sm *sessions) lookup(ctx context.Context, st airlock.SessionStore, log *slog.Logger,
	k airlock.Hash, now time.Time, touch bool) (session, sessionState) {
	stored, err := st.Session(ctx, k)
	switch {
	case airlock.ErrorCode(err) == airlock.ENOTFOUND:
		sm.end(k)
		return session{}, sessionGone
	case err != nil:
		log.Warn("inbox: read a session", "err", err)
		return session{}, sessionUnknown
	}
	sm.mu.Lock()
	if sm.m == nil {
		sm.m = map[airlock.Hash]*session{}
	}
	ss, ok := sm.m[k]
	if !ok {
		if len(sm.m) >= maxSessions {
			sm.evictLRU()
		}
		t := airlock.Token{ID: stored.TokenID}
		if stored.Person != nil {
			t = stored.Person.Token()
		}
		ss = &session{token: t, secret: stored.Secret, created: stored.Created,
			seen: stored.Seen, stored: stored.Seen, done: make(chan struct{})}
		sm.m[k] = ss
	}
	if stored.Seen.After(ss.seen) { // a request on another replica
		ss.seen = stored.Seen
	}
	if stored.Seen.After(ss.stored) {
		ss.stored = stored.Seen
	}
	if ss.expired(now) {
		sm.drop(k)
		sm.mu.Unlock()
		return session{}, sessionGone
	}
	var write bool
	if touch {
		ss.seen = now
		if now.Sub(ss.stored) >= sessionTouchEvery {
			ss.stored, write = now, true
		}
	}
	got := *ss
	sm.mu.Unlock()

	if write {
		err := st.TouchSession(ctx, k, now)
		switch {
		case airlock.ErrorCode(err) == airlock.ENOTFOUND: // signed out meanwhile
			sm.end(k)
			return session{}, sessionGone
		case err != nil:
			// The activity is still this process's; the other replicas
			// learn it at the next write.
			log.Warn("inbox: write a session's last request", "err", err)
		}
	}
	return got, sessionLive
}

// evictLRU takes the least recently used session without a stream out of
// the cache; sm.mu is held. It does not end: the store holds it, and its
// next request reads it again. Sessions with streams stay, however many
// (each holds a connection open): their count, and their end, are only
// here.
func (sm *sessions) evictLRU() {
	var lru airlock.Hash
	var oldest time.Time
	found := false
	for k, v := range sm.m {
		if v.streams == 0 && (!found || v.seen.Before(oldest)) {
			lru, oldest, found = k, v.seen, true
		}
	}
	if found {
		delete(sm.m, lru)
	}
}

// streamOpening is what openStream found.
type streamOpening int

const (
	streamOpened  streamOpening = iota
	streamEnded                 // the session ended meanwhile
	streamTooMany               // the session holds MaxStreams streams
)

// openStream counts a new event stream of the session with this ID and
// returns a channel closed when the session ends. closeStream undoes it.
func (sm *sessions) openStream(id string) (<-chan struct{}, streamOpening) {
	sm.mu.Lock()
	defer sm.mu.Unlock()
	ss, found := sm.m[sessionKey(id)]
	switch {
	case !found:
		return nil, streamEnded
	case ss.streams >= MaxStreams:
		return nil, streamTooMany
	}
	ss.streams++
	return ss.done, streamOpened
}

func (sm *sessions) closeStream(id string) {
	sm.mu.Lock()
	defer sm.mu.Unlock()
	if ss, ok := sm.m[sessionKey(id)]; ok && ss.streams > 0 {
		ss.streams--
	}
}

// watch reports whether the caller is to start the loop that re-checks the
// sessions with streams (inbox.watchStreams): none runs.
func (sm *sessions) watch() bool {
	sm.mu.Lock()
	defer sm.mu.Unlock()
	if sm.watching {
		return false
	}
	sm.watching = true
	return true
}

// streaming returns the keys of the sessions with live streams here. None:
// the loop that asked is to stop, and the next stream starts another.
func (sm *sessions) streaming() []airlock.Hash {
	sm.mu.Lock()
	defer sm.mu.Unlock()
	var ks []airlock.Hash
	for k, v := range sm.m {
		if v.streams > 0 {
			ks = append(ks, k)
		}
	}
	if len(ks) == 0 {
		sm.watching = false
	}
	return ks
}

// end ends the session under key k here.
func (sm *sessions) end(k airlock.Hash) {
	sm.mu.Lock()
	defer sm.mu.Unlock()
	sm.drop(k)
}

// endToken ends every session of a token, once it is found revoked.
func (sm *sessions) endToken(tokenID string) {
	sm.mu.Lock()
	defer sm.mu.Unlock()
	for k, v := range sm.m {
		if v.token.ID == tokenID {
			sm.drop(k)
		}
	}
}

// watchStreams re-checks against the store, every SessionCheckEvery —
// and at once when a store several servers share says sessions changed
// (airlock.SessionWatcher) — each session holding live event streams here,
// until none does or the server drains: a session signed out on another replica (or trimmed there past
// MaxPerToken), expired, or whose token was revoked, ends here, and its
// streams with it. A round reads each such session and each of their
// tokens once, however many streams they hold; a store that does not
// answer ends the round early (the streams stay: the next round tries
// again).
func (in *inbox) watchStreams() {
	ctx, cancel := in.host.WaitContext(context.Background(), 1<<62)
	defer cancel()
	tick := time.NewTicker(SessionCheckEvery)
	defer tick.Stop()
	watcher, _ := in.host.Store().(airlock.SessionWatcher)
	watch := func() (<-chan struct{}, func()) {
		if watcher == nil {
			return nil, func() {}
		}
		return watcher.WatchSessions()
	}
	changed, stop := watch()
	defer func() { stop() }()
	var last time.Time // the last round
	for {
		select {
		case <-ctx.Done():
			// Draining: every stream ends now, and none starts again.
			return
		case <-tick.C:
		case <-changed:
		}
		// A burst of changes (sign-outs, or notifications anyone who may
		// write to the database can send) makes one round per
		// SessionRoundGap, not one per change.
		if wait := SessionRoundGap - time.Since(last); wait > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		}
		// Watch again before the round reads: a change during it wakes the
		// next.
		stop()
		changed, stop = watch()
		ks := in.sessions.streaming()
		if len(ks) == 0 {
			return
		}
		in.recheck(ctx, ks)
		last = time.Now()
	}
}

// recheck is one round of watchStreams over the sessions under keys ks.
func (in *inbox) recheck(ctx context.Context, ks []airlock.Hash) {
	ctx, cancel := context.WithTimeout(ctx, SessionCheckEvery)
	defer cancel()
	now := time.Now()
	tokens := map[airlock.Hash]tokenState{} // by secret hash
	for _, k := range ks {
		if ctx.Err() != nil {
			return
		}
		ss, state := in.sessions.lookup(ctx, in.host.Store(), in.host.Logger(), k, now, false)
		switch state {
		case sessionGone: // lookup ended it here, and its streams
			continue
		case sessionUnknown:
			return
		}
		if ss.sso() {
			continue // no token to re-check: it lives to its own limits
		}
		ts, ok := tokens[ss.secret]
		if !ok {
			_, ts = in.checkToken(ctx, ss.secret)
			tokens[ss.secret] = ts
		}
		switch ts {
		case tokenDead:
			in.sessions.endToken(ss.token.ID)
		case tokenUnknown:
			return
		}
	}
}

// sessionKeyCtx carries the request's session ID and session.
type sessionCtxKey struct{}

type sessionInfo struct {
	id string
	session
}

func sessionFrom(ctx context.Context) *sessionInfo {
	si, _ := ctx.Value(sessionCtxKey{}).(*sessionInfo)
	return si
}

// tokenState is what a re-check of a session's token found.
type tokenState int

const (
	tokenLive    tokenState = iota
	tokenDead               // revoked, expired or gone: the session ends
	tokenUnknown            // the store did not answer: try again later
)

// checkToken re-checks that the token with this secret hash is still
// live, and returns it. It reads the store every time: a revocation ends
// the session at once.
func (in *inbox) checkToken(ctx context.Context, secret airlock.Hash) (airlock.Token, tokenState) {
	t, err := in.host.ReadToken(ctx, secret)
	switch {
	case airlock.ErrorCode(err) == airlock.ENOTFOUND:
		return airlock.Token{}, tokenDead
	case err != nil:
		in.host.Logger().Warn("inbox: re-check a session's token", "err", err)
		return airlock.Token{}, tokenUnknown
	case !t.Live(time.Now()):
		return airlock.Token{}, tokenDead
	}
	return t, tokenLive
}

// withSession admits requests of a running session whose token is still
// live. Others go to the sign-in page (or get 401 when a script asked).
func (in *inbox) withSession(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx := in.host.RequestContext(r)
		secure(w)
		var id string
		if c, err := r.Cookie(sessionCookie); err == nil {
			id = c.Value
		}
		// What a page does by itself (htmx's fetches on a live event, its
		// event stream opening again) is not the person's activity: an
		// unattended tab must still go idle.
		touch := r.Header.Get("HX-Request") != "true" && r.URL.Path != "/inbox/events"
		ss, state := in.sessions.get(ctx, in.host.Store(), in.host.Logger(), id, time.Now(), touch)
		ok := state == sessionLive
		if ok && !ss.sso() {
			t, ts := in.checkToken(ctx, ss.secret)
			switch ts {
			case tokenLive:
				ss.token = t
			case tokenDead:
				in.sessions.endToken(ss.token.ID)
				ok = false
			case tokenUnknown:
				state = sessionUnknown
			}
		}
		if state == sessionUnknown {
			in.fail(w, r, http.StatusServiceUnavailable, "Airlock cannot check your sign-in now", "The store did not answer. Retry in a moment.")
			return
		}
		if !ok {
			if id != "" {
				clearCookie(w, r)
			}
			switch {
			case r.Header.Get("HX-Request") == "true":
				w.Header().Set("HX-Redirect", "/inbox/signin")
				http.Error(w, "signed out", http.StatusUnauthorized)
			case r.Method == http.MethodGet && !strings.HasPrefix(r.URL.Path, "/inbox/events"):
				http.Redirect(w, r, "/inbox/signin", http.StatusSeeOther)
			default:
				http.Error(w, "signed out: sign in again at /inbox/signin", http.StatusUnauthorized)
			}
			return
		}
		ctx = context.WithValue(ctx, principalKey{}, &ss.token)
		ctx = context.WithValue(ctx, sessionCtxKey{}, &sessionInfo{id: id, session: ss})
		next(w, r.WithContext(ctx))
	}
}

// SigninPage is the sign-in form.
type SigninPage struct {
	Base
	Error string
	// SSO names the identity provider people sign in with; "" when the
	// server has none (tokens only).
	SSO string
}

func (in *inbox) signinForm(w http.ResponseWriter, r *http.Request) {
	secure(w)
	in.render(w, http.StatusOK, "signin", &SigninPage{Base: Base{Title: "Sign in"}, SSO: in.ssoName()})
}

// ssoName is the identity provider's name, "" without one.
func (in *inbox) ssoName() string {
	if s := in.host.SSO(); s != nil {
		return s.Name()
	}
	return ""
}

// signin exchanges a reviewer's or admin's token for a session. Refusals
// are audited like the API's (and, for unknown tokens, rate-limited the
// same way); there is no lock-out beyond that.
func (in *inbox) signin(w http.ResponseWriter, r *http.Request) {
	secure(w)
	ctx := in.host.RequestContext(r)
	r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
	if err := r.ParseForm(); err != nil {
		in.fail(w, r, http.StatusBadRequest, "The form could not be read", err.Error())
		return
	}
	refused := func(status int, msg string) {
		in.render(w, status, "signin", &SigninPage{Base: Base{Title: "Sign in"}, Error: msg, SSO: in.ssoName()})
	}
	secret := strings.TrimSpace(r.PostForm.Get("token"))
	if secret == "" || len(secret) > maxTokenLength {
		in.host.Refuse(ctx, nil, "", airlock.EUNAUTHENTICATED, "inbox sign-in without a token")
		refused(http.StatusUnauthorized, "Paste your reviewer token (airlock token create --role reviewer).")
		return
	}
	t, err := in.host.LookupToken(ctx, airlock.HashTokenSecret(secret))
	switch {
	case airlock.ErrorCode(err) == airlock.ENOTFOUND:
		in.host.Refuse(ctx, nil, "", airlock.EUNAUTHENTICATED, "inbox sign-in with an unknown token")
		refused(http.StatusUnauthorized, "That token is not known.")
		return
	case err != nil:
		in.host.Logger().Error("inbox sign-in: look up a token", "err", err)
		refused(http.StatusServiceUnavailable, "The token cannot be checked now; retry in a moment.")
		return
	case !t.Live(time.Now()):
		in.host.Refuse(ctx, &t, "", airlock.EUNAUTHENTICATED, "inbox sign-in with a revoked or expired token")
		refused(http.StatusUnauthorized, "That token was revoked or has expired.")
		return
	case t.Role != airlock.RoleReviewer && t.Role != airlock.RoleAdmin:
		in.host.Refuse(ctx, &t, "", airlock.EUNAUTHORIZED, t.Subject()+" may not sign in to the inbox: only reviewer and admin tokens may")
		refused(http.StatusForbidden, "Only reviewer and admin tokens can sign in; this one is an agent's.")
		return
	}
	// The lookup may be cached (auth.go's tokenCacheTTL): ask the store
	// itself, so that a token revoked elsewhere cannot start a session.
	hashed := airlock.HashTokenSecret(secret)
	switch _, ts := in.checkToken(ctx, hashed); ts {
	case tokenDead:
		in.host.Refuse(ctx, &t, "", airlock.EUNAUTHENTICATED, "inbox sign-in with a revoked or expired token")
		refused(http.StatusUnauthorized, "That token was revoked or has expired.")
		return
	case tokenUnknown:
		refused(http.StatusServiceUnavailable, "The token cannot be checked now; retry in a moment.")
		return
	}
	id, err := in.sessions.create(ctx, in.host.Store(), in.host.Logger(), t, hashed, nil, time.Now())
	if err != nil {
		in.host.Logger().Error("inbox sign-in: keep the session", "err", err)
		refused(http.StatusServiceUnavailable, "The session cannot be kept now; retry in a moment.")
		return
	}
	setSessionCookie(w, r, id)
	http.Redirect(w, r, "/inbox", http.StatusSeeOther)
}

// setSessionCookie gives the browser its session.
func setSessionCookie(w http.ResponseWriter, r *http.Request, id string) {
	http.SetCookie(w, &http.Cookie{
		Name: sessionCookie, Value: id, Path: sessionPath,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: viaHTTPS(r),
		MaxAge: int(sessionMaxAge / time.Second),
	})
}

// signout ends the session, if any, on every replica, and clears its
// cookie.
func (in *inbox) signout(w http.ResponseWriter, r *http.Request) {
	secure(w)
	if c, err := r.Cookie(sessionCookie); err == nil && c.Value != "" {
		k := sessionKey(c.Value)
		if err := in.host.Store().DeleteSession(in.host.RequestContext(r), k); err != nil {
			// The browser forgets the cookie all the same; the session
			// ends at its idle limit.
			in.host.Logger().Error("inbox sign-out: delete the session", "err", err)
		}
		// Its streams end after the store forgot it: a page told its
		// stream closed asks at once whether its session lives.
		in.sessions.end(k)
	}
	clearCookie(w, r)
	http.Redirect(w, r, "/inbox/signin", http.StatusSeeOther)
}

// viaHTTPS reports whether the browser reached the inbox over HTTPS: TLS
// here, or at the TLS-terminating proxy the deployment puts in front
// (X-Forwarded-Proto). Believing the header can only make the cookie
// stricter: a Secure cookie is never sent over plain HTTP.
func viaHTTPS(r *http.Request) bool {
	return r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

func clearCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{
		Name: sessionCookie, Value: "", Path: sessionPath, MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: viaHTTPS(r),
	})
}
