package http

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/gate"
	"github.com/airlock-dev/airlock/inbox"
	"github.com/airlock-dev/airlock/metrics"
	"github.com/airlock-dev/airlock/passkey"
)

// inboxHost is what the web inbox (package inbox) gets of the server it
// is mounted on.
type inboxHost struct{ s *Server }

var _ inbox.Host = inboxHost{}

func (h inboxHost) Store() airlock.Store                           { return h.s.store() }
func (h inboxHost) Gate() *gate.Gate                               { return h.s.Enforcer.Gate }
func (h inboxHost) Logger() *slog.Logger                           { return h.s.logger() }
func (h inboxHost) Metrics() *metrics.Metrics                      { return h.s.metrics }
func (h inboxHost) ProposalRules() gate.ProposalRules              { return h.s.ProposalRules }
func (h inboxHost) Passkeys() *passkey.RP                          { return h.s.Passkeys }
func (h inboxHost) SSO() *inbox.SSO                                { return h.s.SSO }
func (h inboxHost) RequestContext(r *http.Request) context.Context { return withRequestInfo(r) }

func (h inboxHost) LookupToken(ctx context.Context, secret airlock.Hash) (airlock.Token, error) {
	return h.s.lookupHash(ctx, secret)
}

func (h inboxHost) ReadToken(ctx context.Context, secret airlock.Hash) (airlock.Token, error) {
	for _, c := range h.s.tokens.configured {
		if c.Secret == secret {
			return c.Token, nil
		}
	}
	return h.s.store().TokenBySecret(ctx, secret)
}

func (h inboxHost) Refuse(ctx context.Context, t *airlock.Token, target, code, reason string) {
	h.s.refuse(ctx, t, target, code, reason)
}

func (h inboxHost) RefuseApproval(ctx context.Context, t *airlock.Token, ap *airlock.Approval, code, reason string) {
	h.s.refuseApproval(ctx, t, ap, code, reason)
}

func (h inboxHost) WaitContext(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return h.s.waitContext(ctx, d)
}
