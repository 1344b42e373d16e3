package http

import (
	"context"

	"github.com/airlock-dev/airlock"
)

type listTrustInput struct {
	Agent string `query:"agent" doc:"Only this agent (an agent token sees only its own)."`
	Class string `query:"class" doc:"Only this action class."`
	Since string `query:"since" doc:"Only records at or after this RFC 3339 time."`
}

type trustOutput struct {
	Body airlock.TrustPage
}

func (s *Server) listTrust(ctx context.Context, in *listTrustInput) (*trustOutput, error) {
	t, err := s.allow(ctx, "read trust records", airlock.RoleAgent, airlock.RoleReviewer, airlock.RoleAdmin)
	if err != nil {
		return nil, err
	}
	f := airlock.TrustFilter{Class: airlock.Class(in.Class)}
	if f.Agent, err = s.scopeAgent(ctx, t, in.Agent, "trust records"); err != nil {
		return nil, err
	}
	if f.Since, err = parseTime("since", in.Since); err != nil {
		return nil, err
	}
	sums, err := s.store().TrustSummaries(ctx, f)
	if err != nil {
		return nil, err
	}
	if sums == nil {
		sums = []airlock.TrustSummary{}
	}
	return &trustOutput{Body: airlock.TrustPage{Trust: sums}}, nil
}
