package http

import (
	"context"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/gate"
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

type reviewSignalsInput struct {
	Agent string `query:"agent" doc:"Only the requests of this agent."`
	Since string `query:"since" doc:"Only requests created at or after this RFC 3339 time (default: 30 days ago)."`
}

type reviewSignalsOutput struct {
	Body airlock.ReviewSignals
}

// reviewSignals reports the rubber-stamp signals: approvals given faster
// than the request could be read, and long runs without a rejection, by
// reviewer and by agent. They name reviewers, so agents do not read them.
func (s *Server) reviewSignals(ctx context.Context, in *reviewSignalsInput) (*reviewSignalsOutput, error) {
	if _, err := s.allow(ctx, "read review signals", airlock.RoleReviewer, airlock.RoleAdmin); err != nil {
		return nil, err
	}
	since, err := parseTime("since", in.Since)
	if err != nil {
		return nil, err
	}
	if since.IsZero() {
		now, err := s.store().Now(ctx)
		if err != nil {
			return nil, err
		}
		since = now.Add(-30 * 24 * time.Hour)
	}
	sig, err := gate.ReviewSignals(ctx, s.store(), since, in.Agent)
	if err != nil {
		return nil, err
	}
	return &reviewSignalsOutput{Body: sig}, nil
}
