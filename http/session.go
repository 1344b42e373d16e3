package http

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
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
// Sessions live in this process's memory: a restart (or another replica)
// signs people out, and they sign in again.
const (
	sessionCookie  = "airlock_session"
	sessionPath    = "/inbox"
	sessionMaxAge  = 12 * time.Hour   // from sign-in, whatever the activity
	sessionIdle    = 30 * time.Minute // since the last request
	maxSessions    = 10000            // beyond it, the least recently used goes
	maxPerToken    = 32               // sessions of one token; beyond it, its least recently used goes
	maxStreams     = 16               // live event streams of one session (its open tabs)
	maxTokenLength = 4096             // a pasted token longer than this is not one
)

// session is one signed-in person.
type session struct {
	token   airlock.Token
	secret  airlock.Hash // the hash of the token's secret
	created time.Time
	seen    time.Time
	// streams counts the session's open event streams; done is closed
	// when the session ends, which ends them.
	streams int
	done    chan struct{}
}

// expired reports whether the session ended at now.
func (ss *session) expired(now time.Time) bool {
	return !now.Before(ss.created.Add(sessionMaxAge)) || !now.Before(ss.seen.Add(sessionIdle))
}

// sessions holds the live sessions, keyed by the SHA-256 of their ID so
// that the map never holds a usable cookie value.
type sessions struct {
	mu sync.Mutex
	m  map[[32]byte]*session
}

func sessionKey(id string) [32]byte { return sha256.Sum256([]byte(id)) }

// create starts a session for t and returns its ID: 256 random bits.
func (sm *sessions) create(t airlock.Token, secret airlock.Hash, now time.Time) string {
	var b [32]byte
	rand.Read(b[:]) // never fails (crypto/rand panics rather than return short)
	id := base64.RawURLEncoding.EncodeToString(b[:])
	sm.mu.Lock()
	defer sm.mu.Unlock()
	if sm.m == nil {
		sm.m = map[[32]byte]*session{}
	}
	// One token cannot crowd out everyone else's sessions: past its own
	// limit, its least recently used session goes; past the total, the
	// least recently used of all.
	var lru, lruOwn [32]byte
	var oldest, oldestOwn time.Time
	own := 0
	for k, v := range sm.m {
		if v.expired(now) {
			sm.drop(k)
			continue
		}
		if v.token.ID == t.ID {
			own++
			if oldestOwn.IsZero() || v.seen.Before(oldestOwn) {
				lruOwn, oldestOwn = k, v.seen
			}
		}
		if oldest.IsZero() || v.seen.Before(oldest) {
			lru, oldest = k, v.seen
		}
	}
	switch {
	case own >= maxPerToken:
		sm.drop(lruOwn)
	case len(sm.m) >= maxSessions:
		sm.drop(lru)
	}
	sm.m[sessionKey(id)] = &session{token: t, secret: secret, created: now, seen: now, done: make(chan struct{})}
	return id
}

// drop ends the session under key k, and its event streams; sm.mu is
// held.
func (sm *sessions) drop(k [32]byte) {
	if ss, ok := sm.m[k]; ok {
		close(ss.done)
		delete(sm.m, k)
	}
}

// get returns the session with this ID if it is still running; touch
// counts the call as activity (an event stream's checks do not).
func (sm *sessions) get(id string, now time.Time, touch bool) (session, bool) {
	if id == "" {
		return session{}, false
	}
	k := sessionKey(id)
	sm.mu.Lock()
	defer sm.mu.Unlock()
	ss, ok := sm.m[k]
	if !ok {
		return session{}, false
	}
	if ss.expired(now) {
		sm.drop(k)
		return session{}, false
	}
	if touch {
		ss.seen = now
	}
	return *ss, true
}

// streamOpening is what openStream found.
type streamOpening int

const (
	streamOpened  streamOpening = iota
	streamEnded                 // the session ended meanwhile
	streamTooMany               // the session holds maxStreams streams
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
	case ss.streams >= maxStreams:
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

// end ends the session with this ID.
func (sm *sessions) end(id string) {
	sm.mu.Lock()
	defer sm.mu.Unlock()
	sm.drop(sessionKey(id))
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

// checkToken re-checks that the session's token is still live. It reads
// the store every time: a revocation ends the session at once.
func (in *inbox) checkToken(ctx context.Context, ss *session) tokenState {
	for _, c := range in.s.tokens.configured {
		if c.Secret == ss.secret {
			if c.Token.Live(time.Now()) {
				return tokenLive
			}
			return tokenDead
		}
	}
	t, err := in.s.store().TokenBySecret(ctx, ss.secret)
	switch {
	case airlock.ErrorCode(err) == airlock.ENOTFOUND:
		return tokenDead
	case err != nil:
		in.s.logger().Warn("inbox: re-check a session's token", "err", err)
		return tokenUnknown
	case !t.Live(time.Now()):
		return tokenDead
	}
	return tokenLive
}

// withSession admits requests of a running session whose token is still
// live. Others go to the sign-in page (or get 401 when a script asked).
func (in *inbox) withSession(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx := withRequestInfo(r)
		secure(w)
		var id string
		if c, err := r.Cookie(sessionCookie); err == nil {
			id = c.Value
		}
		// What a page does by itself (htmx's fetches on a live event, its
		// event stream opening again) is not the person's activity: an
		// unattended tab must still go idle.
		touch := r.Header.Get("HX-Request") != "true" && r.URL.Path != "/inbox/events"
		ss, ok := in.sessions.get(id, time.Now(), touch)
		if ok {
			switch in.checkToken(ctx, &ss) {
			case tokenDead:
				in.sessions.endToken(ss.token.ID)
				ok = false
			case tokenUnknown:
				in.fail(w, r, http.StatusServiceUnavailable, "Airlock cannot check your sign-in now", "The store did not answer. Retry in a moment.")
				return
			}
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
		ctx = context.WithValue(ctx, principalKey, &ss.token)
		ctx = context.WithValue(ctx, sessionCtxKey{}, &sessionInfo{id: id, session: ss})
		next(w, r.WithContext(ctx))
	}
}

// SigninPage is the sign-in form.
type SigninPage struct {
	Base
	Error string
}

func (in *inbox) signinForm(w http.ResponseWriter, r *http.Request) {
	secure(w)
	in.render(w, http.StatusOK, "signin", &SigninPage{Base: Base{Title: "Sign in"}})
}

// signin exchanges a reviewer's or admin's token for a session. Refusals
// are audited like the API's (and, for unknown tokens, rate-limited the
// same way); there is no lock-out beyond that.
func (in *inbox) signin(w http.ResponseWriter, r *http.Request) {
	secure(w)
	ctx := withRequestInfo(r)
	r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
	if err := r.ParseForm(); err != nil {
		in.fail(w, r, http.StatusBadRequest, "The form could not be read", err.Error())
		return
	}
	refused := func(status int, msg string) {
		in.render(w, status, "signin", &SigninPage{Base: Base{Title: "Sign in"}, Error: msg})
	}
	secret := strings.TrimSpace(r.PostForm.Get("token"))
	if secret == "" || len(secret) > maxTokenLength {
		in.s.refuse(ctx, nil, "", codeUnauthenticated, "inbox sign-in without a token")
		refused(http.StatusUnauthorized, "Paste your reviewer token (airlock token create --role reviewer).")
		return
	}
	t, err := in.s.lookup(ctx, secret)
	switch {
	case airlock.ErrorCode(err) == airlock.ENOTFOUND:
		in.s.refuse(ctx, nil, "", codeUnauthenticated, "inbox sign-in with an unknown token")
		refused(http.StatusUnauthorized, "That token is not known.")
		return
	case err != nil:
		in.s.logger().Error("inbox sign-in: look up a token", "err", err)
		refused(http.StatusServiceUnavailable, "The token cannot be checked now; retry in a moment.")
		return
	case !t.Live(time.Now()):
		in.s.refuse(ctx, &t, "", codeUnauthenticated, "inbox sign-in with a revoked or expired token")
		refused(http.StatusUnauthorized, "That token was revoked or has expired.")
		return
	case t.Role != airlock.RoleReviewer && t.Role != airlock.RoleAdmin:
		in.s.refuse(ctx, &t, "", airlock.EUNAUTHORIZED, t.Subject()+" may not sign in to the inbox: only reviewer and admin tokens may")
		refused(http.StatusForbidden, "Only reviewer and admin tokens can sign in; this one is an agent's.")
		return
	}
	// The lookup may be cached (auth.go's tokenCacheTTL): ask the store
	// itself, so that a token revoked elsewhere cannot start a session.
	ss := session{token: t, secret: airlock.HashTokenSecret(secret)}
	switch in.checkToken(ctx, &ss) {
	case tokenDead:
		in.s.refuse(ctx, &t, "", codeUnauthenticated, "inbox sign-in with a revoked or expired token")
		refused(http.StatusUnauthorized, "That token was revoked or has expired.")
		return
	case tokenUnknown:
		refused(http.StatusServiceUnavailable, "The token cannot be checked now; retry in a moment.")
		return
	}
	id := in.sessions.create(t, ss.secret, time.Now())
	http.SetCookie(w, &http.Cookie{
		Name: sessionCookie, Value: id, Path: sessionPath,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: viaHTTPS(r),
		MaxAge: int(sessionMaxAge / time.Second),
	})
	http.Redirect(w, r, "/inbox", http.StatusSeeOther)
}

// signout ends the session, if any, and clears its cookie.
func (in *inbox) signout(w http.ResponseWriter, r *http.Request) {
	secure(w)
	if c, err := r.Cookie(sessionCookie); err == nil {
		in.sessions.end(c.Value)
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
