package inbox

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/gate"
	"github.com/airlock-dev/airlock/metrics"
	"github.com/airlock-dev/airlock/passkey"
)

// Host is what the inbox needs of the API server that mounts it: the
// store and the gate it decides with, its tokens, its audit of refusals,
// its metrics and its shutdown.
type Host interface {
	// Store is the server's store, as it decides with it.
	Store() airlock.Store
	// Gate is the policy stack in force.
	Gate() *gate.Gate
	Logger() *slog.Logger
	Metrics() *metrics.Metrics
	// LookupToken returns the token whose secret hashes to h, the
	// configured tokens first, then the store's (briefly cached).
	// Errors: ENOTFOUND, EUNAVAILABLE.
	LookupToken(ctx context.Context, h airlock.Hash) (airlock.Token, error)
	// ReadToken is LookupToken without the cache: a revocation shows at
	// once.
	ReadToken(ctx context.Context, h airlock.Hash) (airlock.Token, error)
	// RequestContext is r's context carrying what a refusal's audit record
	// says of r (its method, path and remote address).
	RequestContext(r *http.Request) context.Context
	// Refuse records that the server refused t (nil: a caller without a
	// valid token) on target's behalf: an access.refused event, counted.
	Refuse(ctx context.Context, t *airlock.Token, target, code, reason string)
	// RefuseApproval is Refuse on a request: the record names it and, for
	// a person, its action.
	RefuseApproval(ctx context.Context, t *airlock.Token, ap *airlock.Approval, code, reason string)
	// WaitContext bounds a wait by d and by the server's shutdown.
	WaitContext(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc)
	// ProposalRules are what the record must show before a grant is
	// proposed.
	ProposalRules() gate.ProposalRules
	// Passkeys is the relying party of reviewers' passkeys; nil when the
	// server has no inbox URL to bind them to.
	Passkeys() *passkey.RP
	// SSO is the identity provider people sign in with; nil for tokens
	// only.
	SSO() *SSO
}

// As the API's: the largest form body read, and how often a live event
// stream says it is still there.
const (
	maxBodyBytes = 64 << 10
	heartbeat    = 15 * time.Second
)

type principalKey struct{}

// principalFrom returns the token of the request's session.
func principalFrom(ctx context.Context) *airlock.Token {
	t, _ := ctx.Value(principalKey{}).(*airlock.Token)
	return t
}
