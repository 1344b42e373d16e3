package http

import (
	"context"
	"time"

	"github.com/airlock-dev/airlock"
)

type rememberInput struct {
	ID   string `path:"id" doc:"The approved request's ID."`
	Body struct {
		TTL    string `json:"ttl,omitempty" doc:"How long the grant lasts, a Go duration (168h; the default is 7 days, at most 90)."`
		Reason string `json:"reason,omitempty" maxLength:"2000" doc:"Why; kept with the grant."`
		// Shape, when set, is the reviewer's own instead of the narrowest:
		// it must still cover the approved action.
		Shape  *airlock.GrantPattern `json:"shape,omitempty" doc:"The reviewer's shape instead of the narrowest one Airlock proposes: {kind: command, command: [npm, test]}, {kind: path, path: /w/docs} or {kind: exact, hash: …}; it must still cover the approved action."`
		Budget *airlock.Budget       `json:"budget,omitempty" doc:"Bounds what the grant lets run: {uses: 10, per: day} or {sum: amount, max: 500, currency: USD, per: grant} (per hour, day or grant); spent, covered actions ask again."`
	}
}

type grantOutput struct {
	Body airlock.Grant
}

// remember makes the standing grant of an approved request (approve and
// remember): the narrowest shape that covers its action, for its agent
// and tool, up to the tier it was approved at. Only a person who may
// resolve the request grants it.
func (s *Server) remember(ctx context.Context, in *rememberInput) (*grantOutput, error) {
	t, err := s.allow(ctx, "grant standing grants", airlock.RoleReviewer, airlock.RoleAdmin)
	if err != nil {
		return nil, err
	}
	var ttl time.Duration
	if in.Body.TTL != "" {
		if ttl, err = time.ParseDuration(in.Body.TTL); err != nil || ttl <= 0 {
			return nil, airlock.Errorf(airlock.EINVALID, "ttl %q: want a positive Go duration such as 168h", in.Body.TTL)
		}
	}
	ap, err := s.store().Approval(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	if err := ap.Authorize(t.Reviewer()); err != nil {
		return nil, s.refuseApproval(ctx, t, &ap, airlock.EUNAUTHORIZED, airlock.ErrorMessage(err))
	}
	g, err := s.Enforcer.RememberApproved(ctx, ap, in.Body.Shape, in.Body.Budget, t.Reviewer().Name, in.Body.Reason, ttl)
	if err != nil {
		return nil, err
	}
	return &grantOutput{Body: g}, nil
}

type listGrantsInput struct {
	Agent string `query:"agent" doc:"Only the grants covering this agent."`
	Live  bool   `query:"live" doc:"Only the grants in force now."`
	Limit int    `query:"limit" minimum:"0" maximum:"1000" doc:"At most this many (default 50)."`
}

type grantListOutput struct {
	Body airlock.GrantList
}

func (s *Server) listGrants(ctx context.Context, in *listGrantsInput) (*grantListOutput, error) {
	if _, err := s.allow(ctx, "list grants", airlock.RoleReviewer, airlock.RoleAdmin); err != nil {
		return nil, err
	}
	f := airlock.GrantFilter{Agent: in.Agent, Limit: in.Limit}
	if in.Live {
		now, err := s.store().Now(ctx)
		if err != nil {
			return nil, err
		}
		f.LiveAt = now
	}
	gs, err := s.store().Grants(ctx, f)
	if err != nil {
		return nil, err
	}
	if err := s.budgetsUsed(ctx, gs); err != nil {
		return nil, err
	}
	return &grantListOutput{Body: airlock.GrantList{Grants: gs}}, nil
}

// budgetsUsed sets what the budgets of grants have used.
func (s *Server) budgetsUsed(ctx context.Context, gs []airlock.Grant) error {
	var charges []airlock.BudgetCharge
	var of []int
	for i := range gs {
		if b := gs[i].Budget; b != nil {
			charges, of = append(charges, airlock.BudgetCharge{Key: gs[i].BudgetKey(), Budget: *b}), append(of, i)
		}
	}
	if len(charges) == 0 {
		return nil
	}
	used, err := s.store().BudgetUsed(ctx, charges)
	if err != nil {
		return err
	}
	for j, i := range of {
		gs[i].BudgetUsed = used[j]
	}
	return nil
}

type grantIDInput struct {
	ID string `path:"id" doc:"The grant's ID."`
}

func (s *Server) getGrant(ctx context.Context, in *grantIDInput) (*grantOutput, error) {
	if _, err := s.allow(ctx, "read grants", airlock.RoleReviewer, airlock.RoleAdmin); err != nil {
		return nil, err
	}
	g, err := s.store().Grant(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	gs := []airlock.Grant{g}
	if err := s.budgetsUsed(ctx, gs); err != nil {
		return nil, err
	}
	return &grantOutput{Body: gs[0]}, nil
}

type revokeGrantInput struct {
	ID   string `path:"id" doc:"The grant's ID."`
	Body struct {
		Reason string `json:"reason,omitempty" maxLength:"2000" doc:"Why; kept with the grant."`
	}
}

// revokeGrant ends a grant at once, on every replica. Any reviewer may:
// a revocation only tightens.
func (s *Server) revokeGrant(ctx context.Context, in *revokeGrantInput) (*grantOutput, error) {
	t, err := s.allow(ctx, "revoke grants", airlock.RoleReviewer, airlock.RoleAdmin)
	if err != nil {
		return nil, err
	}
	g, err := s.store().RevokeGrant(ctx, in.ID, t.Reviewer().Name, in.Body.Reason)
	if err != nil {
		return nil, err
	}
	return &grantOutput{Body: g}, nil
}

type proposalsInput struct {
	Agent string `query:"agent" doc:"Only this agent's proposals."`
}

type proposalListOutput struct {
	Body airlock.ProposalList
}

// listProposals proposes grants from the record: shapes of action
// approved often, by several people, after reading, never rejected.
func (s *Server) listProposals(ctx context.Context, in *proposalsInput) (*proposalListOutput, error) {
	if _, err := s.allow(ctx, "read grant proposals", airlock.RoleReviewer, airlock.RoleAdmin); err != nil {
		return nil, err
	}
	ps, err := s.Enforcer.Propose(ctx, s.ProposalRules, in.Agent)
	if err != nil {
		return nil, err
	}
	return &proposalListOutput{Body: airlock.ProposalList{Proposals: ps}}, nil
}

type ratifyInput struct {
	Body struct {
		Agent  string               `json:"agent" minLength:"1" doc:"The proposal's agent."`
		Tool   string               `json:"tool" minLength:"1" doc:"The proposal's tool."`
		Shape  airlock.GrantPattern `json:"shape" doc:"The proposal's shape, as listed."`
		TTL    string               `json:"ttl,omitempty" doc:"How long the grant lasts, a Go duration (default 7 days, at most 90)."`
		Reason string               `json:"reason,omitempty" maxLength:"2000" doc:"Why; kept with the grant."`
	}
}

// currentProposal finds the current proposal of agent, tool and shape,
// for t to ratify or dismiss: only a person who may approve such requests
// may, an admin or one the latest approval it rests on names.
func (s *Server) currentProposal(ctx context.Context, t *airlock.Token, agent, tool string, shape airlock.GrantPattern) (airlock.Proposal, error) {
	p, last, err := s.Enforcer.FindProposal(ctx, s.ProposalRules, agent, tool, shape)
	if err != nil {
		return p, err
	}
	if err := last.Authorize(t.Reviewer()); err != nil {
		return p, s.refuseApproval(ctx, t, &last, airlock.EUNAUTHORIZED, airlock.ErrorMessage(err))
	}
	return p, nil
}

// ratifyProposal makes the grant a current proposal describes.
func (s *Server) ratifyProposal(ctx context.Context, in *ratifyInput) (*grantOutput, error) {
	t, err := s.allow(ctx, "ratify grant proposals", airlock.RoleReviewer, airlock.RoleAdmin)
	if err != nil {
		return nil, err
	}
	b := &in.Body
	ttl := airlock.DefaultRememberTTL
	if b.TTL != "" {
		if ttl, err = time.ParseDuration(b.TTL); err != nil || ttl <= 0 {
			return nil, airlock.Errorf(airlock.EINVALID, "ttl %q: want a positive Go duration such as 168h", b.TTL)
		}
	}
	p, err := s.currentProposal(ctx, t, b.Agent, b.Tool, b.Shape)
	if err != nil {
		return nil, err
	}
	g, err := s.Enforcer.RatifyProposal(ctx, p, t.Reviewer().Name, b.Reason, ttl)
	if err != nil {
		return nil, err
	}
	return &grantOutput{Body: g}, nil
}

type dismissInput struct {
	Body struct {
		Agent  string               `json:"agent" minLength:"1" doc:"The proposal's agent."`
		Tool   string               `json:"tool" minLength:"1" doc:"The proposal's tool."`
		Shape  airlock.GrantPattern `json:"shape" doc:"The proposal's shape, as listed."`
		Reason string               `json:"reason,omitempty" maxLength:"2000" doc:"Why; kept in the audit log."`
	}
}

type dismissOutput struct {
	Body airlock.ProposalDismissal
}

// dismissProposal records a person's "no" to a current proposal: it is
// not proposed again until an approval it did not rest on comes to count
// for it.
func (s *Server) dismissProposal(ctx context.Context, in *dismissInput) (*dismissOutput, error) {
	t, err := s.allow(ctx, "dismiss grant proposals", airlock.RoleReviewer, airlock.RoleAdmin)
	if err != nil {
		return nil, err
	}
	b := &in.Body
	p, err := s.currentProposal(ctx, t, b.Agent, b.Tool, b.Shape)
	if err != nil {
		return nil, err
	}
	d, err := s.Enforcer.DismissProposal(ctx, p, t.Reviewer().Name, b.Reason)
	if err != nil {
		return nil, err
	}
	return &dismissOutput{Body: d}, nil
}
