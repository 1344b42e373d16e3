package http

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/airlock-dev/airlock"
)

// tokenCacheTTL bounds how long a token looked up in the store is trusted
// without asking again: a revocation made through another replica takes
// effect within it (one made through this server, at once).
const tokenCacheTTL = 5 * time.Second

// tokenCache remembers recent lookups so that a check does not cost a
// store read for its token.
type tokenCache struct {
	configured []ConfigToken
	mu         sync.Mutex
	seen       map[airlock.Hash]cachedToken
}

type cachedToken struct {
	token airlock.Token
	at    time.Time
}

func (c *tokenCache) forget(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for h, t := range c.seen {
		if t.token.ID == id {
			delete(c.seen, h)
		}
	}
}

// lookup finds the token with this secret: configured tokens first, then
// the store.
func (s *Server) lookup(ctx context.Context, secret string) (airlock.Token, error) {
	return s.lookupHash(ctx, airlock.HashTokenSecret(secret))
}

// lookupHash is lookup by the secret's hash.
func (s *Server) lookupHash(ctx context.Context, h airlock.Hash) (airlock.Token, error) {
	for _, t := range s.tokens.configured {
		if t.Secret == h {
			return t.Token, nil
		}
	}
	now := time.Now()
	s.tokens.mu.Lock()
	c, ok := s.tokens.seen[h]
	s.tokens.mu.Unlock()
	if ok && now.Sub(c.at) < tokenCacheTTL {
		return c.token, nil
	}
	t, err := s.store().TokenBySecret(ctx, h)
	if err != nil {
		return t, err
	}
	s.tokens.mu.Lock()
	if s.tokens.seen == nil || len(s.tokens.seen) > 10000 {
		s.tokens.seen = map[airlock.Hash]cachedToken{}
	}
	s.tokens.seen[h] = cachedToken{token: t, at: now}
	s.tokens.mu.Unlock()
	return t, nil
}

type ctxKey int

const (
	principalKey ctxKey = iota
	requestKey
	secretKey // the hash of the request's token secret, for long streams
)

// requestInfo is what an audit record of a refusal says about the request.
type requestInfo struct {
	method, path, remote string
}

// withRequestInfo returns r's context carrying what a refusal record says
// of r.
func withRequestInfo(r *http.Request) context.Context {
	return context.WithValue(r.Context(), requestKey, requestInfo{method: r.Method, path: r.URL.Path, remote: r.RemoteAddr})
}

// principalFrom returns the authenticated token of the request.
func principalFrom(ctx context.Context) *airlock.Token {
	t, _ := ctx.Value(principalKey).(*airlock.Token)
	return t
}

// authenticate admits requests with a live bearer token and refuses — and
// audits — the rest.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, p := s.authenticated(r)
		if p != nil {
			writeProblem(w, p)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		inner := r.WithContext(ctx)
		next.ServeHTTP(w, inner)
		r.Pattern = inner.Pattern // the route, for metrics and logs
	})
}

// authenticated checks the request's bearer token and returns a context
// carrying it, or the problem that refuses the request (audited).
func (s *Server) authenticated(r *http.Request) (context.Context, *Problem) {
	ctx := withRequestInfo(r)
	secret, ok := bearer(r)
	if !ok {
		return nil, s.refuse(ctx, nil, "", airlock.EUNAUTHENTICATED, "no bearer token: send Authorization: Bearer <token> (airlock token create)")
	}
	h := airlock.HashTokenSecret(secret)
	t, err := s.lookupHash(ctx, h)
	switch {
	case airlock.ErrorCode(err) == airlock.ENOTFOUND:
		return nil, s.refuse(ctx, nil, "", airlock.EUNAUTHENTICATED, "unknown token")
	case err != nil:
		s.logger().Error("look up a token", "err", err)
		return nil, newProblem(http.StatusServiceUnavailable, airlock.EUNAVAILABLE, "the token cannot be checked now; retry")
	case !t.Live(time.Now()):
		return nil, s.refuse(ctx, &t, "", airlock.EUNAUTHENTICATED, "the token was revoked or has expired")
	}
	ctx = context.WithValue(ctx, secretKey, h)
	return context.WithValue(ctx, principalKey, &t), nil
}

func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	scheme, secret, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(secret) == "" {
		return "", false
	}
	return strings.TrimSpace(secret), true
}

// refuse audits a refused request and returns its problem. target is the
// agent the caller reached for, if any. An agent's refusal is filed under
// its own agent, so that the target learns nothing of it; a person's under
// the agent whose request they reached for.
// Refusals of callers without a valid token are audited at most
// unauthAuditRate a second (the rest are counted, and the next record says
// how many): they must not be a way to fill the log.
func (s *Server) refuse(ctx context.Context, t *airlock.Token, target, code, reason string) *Problem {
	return s.refuseOn(ctx, t, target, nil, code, reason)
}

// refuseApproval is refuse for a caller refused on a request: the record
// names the request and, for a person, its action.
func (s *Server) refuseApproval(ctx context.Context, t *airlock.Token, ap *airlock.Approval, code, reason string) *Problem {
	return s.refuseOn(ctx, t, ap.Agent, ap, code, reason)
}

func (s *Server) refuseOn(ctx context.Context, t *airlock.Token, target string, ap *airlock.Approval, code, reason string) *Problem {
	info, _ := ctx.Value(requestKey).(requestInfo)
	ev := airlock.AccessRefused{Method: info.method, Path: info.path, Remote: info.remote, Code: code, Reason: reason}
	if ap != nil {
		ev.ApprovalID = ap.ID
		if t != nil && t.Role != airlock.RoleAgent {
			ev.Action = ap.Summary
		}
	}
	agent := target
	if t != nil {
		ev.Subject, ev.TokenID = t.Subject(), t.ID
		if t.Role == airlock.RoleAgent {
			agent = t.Agent // never in another agent's log
		}
		if target != agent {
			ev.Target = target
		}
	}
	s.metrics.Refused(code)
	if t == nil || !t.Live(time.Now()) {
		ok, suppressed := s.unauthAudit.allow(time.Now())
		if !ok {
			return newProblem(statusOf[code], code, reason)
		}
		ev.Suppressed = suppressed
	}
	if _, err := s.store().Append(context.WithoutCancel(ctx), ev.Record(agent)); err != nil {
		s.logger().Error("audit refused request", "path", info.path, "err", err)
	}
	return newProblem(statusOf[code], code, reason)
}

// unauthAuditRate and unauthAuditBurst bound the audit records of callers
// without a valid token.
const (
	unauthAuditRate  = 10.0
	unauthAuditBurst = 50.0
)

// auditLimiter is a token bucket for refusal records.
type auditLimiter struct {
	mu         sync.Mutex
	tokens     float64
	last       time.Time
	suppressed int64
}

// allow reports whether a record may be written now and, if so, how many
// were suppressed since the last one.
func (l *auditLimiter) allow(now time.Time) (bool, int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last.IsZero() {
		l.tokens = unauthAuditBurst
	} else {
		l.tokens = min(unauthAuditBurst, l.tokens+now.Sub(l.last).Seconds()*unauthAuditRate)
	}
	l.last = now
	if l.tokens < 1 {
		l.suppressed++
		return false, 0
	}
	l.tokens--
	n := l.suppressed
	l.suppressed = 0
	return true, n
}

// allow refuses (and audits) a caller whose role is not among roles.
func (s *Server) allow(ctx context.Context, what string, roles ...airlock.Role) (*airlock.Token, error) {
	t := principalFrom(ctx)
	if t == nil {
		return nil, newProblem(http.StatusUnauthorized, airlock.EUNAUTHENTICATED, "not authenticated")
	}
	for _, r := range roles {
		if t.Role == r {
			return t, nil
		}
	}
	return nil, s.refuse(ctx, t, "", airlock.EUNAUTHORIZED, t.Subject()+" may not "+what)
}

// actAs checks that the caller may act for agent: an agent token only for
// its own agent; admins for any.
func (s *Server) actAs(ctx context.Context, t *airlock.Token, agent, what string) error {
	if t.Role == airlock.RoleAdmin || (t.Role == airlock.RoleAgent && t.Agent == agent) {
		return nil
	}
	return s.refuse(ctx, t, agent, airlock.EUNAUTHORIZED, t.Subject()+" may not "+what+" for agent "+agent)
}

// scopeAgent narrows a read to the caller's own agent when it is an agent
// token, and refuses one asking for another agent's.
func (s *Server) scopeAgent(ctx context.Context, t *airlock.Token, agent, what string) (string, error) {
	if t.Role != airlock.RoleAgent {
		return agent, nil
	}
	if agent != "" && agent != t.Agent {
		return "", s.refuse(ctx, t, agent, airlock.EUNAUTHORIZED, t.Subject()+" may not read "+what+" of agent "+agent)
	}
	return t.Agent, nil
}
