package http

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/airlock-dev/airlock"
)

type listApprovalsInput struct {
	Status        string `query:"status" maxLength:"200" doc:"Comma-separated statuses: pending, approved, rejected, expired, cancelled." example:"pending"`
	Agent         string `query:"agent" doc:"Only this agent's requests (an agent token sees only its own)."`
	Class         string `query:"class" doc:"Only this action class, with or without #needs-human."`
	Tool          string `query:"tool"`
	MinTier       string `query:"min_tier" doc:"Only requests at or above this risk tier." example:"destructive"`
	CreatedBefore string `query:"created_before" doc:"RFC 3339 time." example:"2026-11-22T09:00:00Z"`
	CreatedAfter  string `query:"created_after" doc:"RFC 3339 time."`
	ActionHash    string `query:"action_hash"`
	Search        string `query:"search" maxLength:"200" doc:"Only requests whose ID, agent, tool, class, trace or summary contains this, ignoring ASCII case."`
	IDPrefix      string `query:"id_prefix" maxLength:"36" doc:"Only requests whose ID starts with this, ignoring ASCII case: how a person names a request by the first characters of its ID." example:"01937b6c"`
	Oldest        bool   `query:"oldest" doc:"Oldest first; the default is newest first."`
	ByDeadline    bool   `query:"by_deadline" doc:"The request whose deadline comes first, first (the most urgent); overrides oldest."`
	BySettled     bool   `query:"by_settled" doc:"Settled requests only, the most recently settled first (with oldest: the first settled first); overrides by_deadline."`
	Cursor        string `query:"cursor" doc:"next_cursor of the previous page."`
	Limit         int    `query:"limit" minimum:"0" maximum:"1000" doc:"Page size, 100 by default."`
}

type approvalPageOutput struct {
	Body airlock.ApprovalPage
}

func (s *Server) listApprovals(ctx context.Context, in *listApprovalsInput) (*approvalPageOutput, error) {
	t, err := s.allow(ctx, "list approval requests", airlock.RoleAgent, airlock.RoleReviewer, airlock.RoleAdmin)
	if err != nil {
		return nil, err
	}
	f := airlock.ApprovalFilter{Class: in.Class, Tool: in.Tool, Search: in.Search, IDPrefix: in.IDPrefix, Oldest: in.Oldest, ByDeadline: in.ByDeadline,
		BySettled: in.BySettled, Cursor: in.Cursor, Limit: in.Limit}
	if f.Agent, err = s.scopeAgent(ctx, t, in.Agent, "approval requests"); err != nil {
		return nil, err
	}
	if in.Status != "" {
		for _, v := range strings.Split(in.Status, ",") {
			st, err := airlock.ParseApprovalStatus(strings.TrimSpace(v))
			if err != nil {
				return nil, err
			}
			if !slices.Contains(f.Status, st) {
				f.Status = append(f.Status, st)
			}
		}
	}
	if in.MinTier != "" {
		if f.MinTier, err = airlock.ParseRiskTier(in.MinTier); err != nil {
			return nil, err
		}
	}
	if f.CreatedBefore, err = parseTime("created_before", in.CreatedBefore); err != nil {
		return nil, err
	}
	if f.CreatedAfter, err = parseTime("created_after", in.CreatedAfter); err != nil {
		return nil, err
	}
	if in.ActionHash != "" {
		if f.ActionHash, err = airlock.ParseHash(in.ActionHash); err != nil {
			return nil, err
		}
	}
	page, err := s.store().FindApprovals(ctx, f)
	if err != nil {
		return nil, err
	}
	if page.Approvals == nil {
		page.Approvals = []airlock.Approval{}
	}
	return &approvalPageOutput{Body: page}, nil
}

func parseTime(name, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return t, airlock.Errorf(airlock.EINVALID, "%s %q is not an RFC 3339 time such as 2026-11-22T09:00:00Z", name, v)
	}
	return t, nil
}

type approvalIDInput struct {
	ID string `path:"id" doc:"The approval request's ID."`
}

type approvalOutput struct {
	Body airlock.Approval
}

// readable loads a request the caller may read: an agent only its own.
func (s *Server) readable(ctx context.Context, id, what string) (*airlock.Token, airlock.Approval, error) {
	t, err := s.allow(ctx, what, airlock.RoleAgent, airlock.RoleReviewer, airlock.RoleAdmin)
	if err != nil {
		return nil, airlock.Approval{}, err
	}
	ap, err := s.store().Approval(ctx, id)
	if err != nil {
		return nil, ap, err
	}
	if t.Role == airlock.RoleAgent && ap.Agent != t.Agent {
		// As if it did not exist: an agent learns nothing of others'.
		s.refuseApproval(ctx, t, &ap, airlock.EUNAUTHORIZED, t.Subject()+" may not "+what+" of agent "+ap.Agent)
		return nil, ap, airlock.Errorf(airlock.ENOTFOUND, "no approval request %s", id)
	}
	return t, ap, nil
}

type approvalWithRunsOutput struct {
	Body airlock.ApprovalWithRuns
}

func (s *Server) getApproval(ctx context.Context, in *approvalIDInput) (*approvalWithRunsOutput, error) {
	_, ap, err := s.readable(ctx, in.ID, "read approval requests")
	if err != nil {
		return nil, err
	}
	evs, err := s.store().Events(ctx, airlock.EventFilter{ApprovalID: ap.ID, Kind: airlock.EventActionExecuted, Limit: maxRuns})
	if err != nil {
		return nil, err
	}
	d := airlock.ApprovalWithRuns{Approval: ap}
	for _, x := range airlock.Executions(evs) {
		if len(x.Result) > 0 {
			d.Runs = append(d.Runs, x)
		}
	}
	return &approvalWithRunsOutput{Body: d}, nil
}

// maxRuns bounds the runs a request's detail carries; a one-shot grant
// runs once.
const maxRuns = 20

type resolveInput struct {
	ID   string `path:"id" doc:"The approval request's ID."`
	Body struct {
		Status     string          `json:"status" enum:"approved,rejected" doc:"The decision."`
		ActionHash airlock.Hash    `json:"action_hash" doc:"The action hash the reviewer saw: a resolution applies only to exactly that action."`
		Reason     string          `json:"reason,omitempty" maxLength:"2000" doc:"Why; shown to the agent and its owner."`
		Surface    string          `json:"surface,omitempty" enum:"api,cli,web,slack,feishu,webhook" doc:"Where the reviewer decided; api by default."`
		RunNow     bool            `json:"run_now,omitempty" doc:"With the approval of a proposal (suggest, needs-human): an executor that holds the tool — the MCP gateway — runs it now, once, and its result is recorded with the request."`
		Args       json.RawMessage `json:"args,omitempty" doc:"With an approval of an ask: the reviewer's edit of the action's arguments, a JSON object. The edited action gets its own hash and is decided again: an edit into what the policy refuses is refused (403), and one the policy asks other reviewers for needs them. Once approved, the edited action is what runs, never the original. action_hash still echoes the action the reviewer was shown."`
	}
}

// resolveApproval approves or rejects a request, exactly once, as the
// person the token names.
func (s *Server) resolveApproval(ctx context.Context, in *resolveInput) (*approvalOutput, error) {
	t, err := s.allow(ctx, "resolve approval requests", airlock.RoleReviewer, airlock.RoleAdmin)
	if err != nil {
		return nil, err
	}
	b := &in.Body
	r := airlock.Resolution{
		ApprovalID: in.ID, Status: airlock.ApprovalStatus(b.Status), ActionHash: b.ActionHash,
		Reviewer: t.Reviewer(), Reason: b.Reason, Surface: airlock.SurfaceAPI, RunNow: b.RunNow,
	}
	if b.Surface != "" {
		r.Surface = airlock.Surface(b.Surface)
	}
	ap, err := s.Enforcer.Resolve(ctx, r, b.Args)
	switch code := airlock.ErrorCode(err); code {
	case "":
		s.metrics.Resolved(&ap)
		return &approvalOutput{Body: ap}, nil
	case airlock.EUNAUTHORIZED, airlock.CodeHashMismatch:
		return nil, s.refuseApproval(ctx, t, &ap, code, airlock.ErrorMessage(err))
	default:
		return nil, err
	}
}

type cancelInput struct {
	ID   string `path:"id" doc:"The approval request's ID."`
	Body struct {
		Reason  string `json:"reason,omitempty" maxLength:"2000"`
		Surface string `json:"surface,omitempty" enum:"api,cli,web,slack,feishu,webhook" doc:"Where it was cancelled; api by default."`
	}
}

// cancelApproval withdraws a pending request: its agent, a person who may
// resolve it, or an admin.
func (s *Server) cancelApproval(ctx context.Context, in *cancelInput) (*approvalOutput, error) {
	t, ap, err := s.readable(ctx, in.ID, "cancel approval requests")
	if err != nil {
		return nil, err
	}
	by := t.Name
	if t.Role == airlock.RoleAgent {
		by = t.Subject()
	} else if err := ap.Authorize(t.Reviewer()); err != nil {
		return nil, s.refuseApproval(ctx, t, &ap, airlock.EUNAUTHORIZED, airlock.ErrorMessage(err))
	}
	surface := airlock.SurfaceAPI
	if in.Body.Surface != "" {
		surface = airlock.Surface(in.Body.Surface)
	}
	ap, err = s.store().CancelApproval(ctx, in.ID, by, in.Body.Reason, surface)
	if err != nil {
		return nil, err
	}
	return &approvalOutput{Body: ap}, nil
}

type waitApprovalInput struct {
	ID      string `path:"id" doc:"The approval request's ID."`
	Timeout string `query:"timeout" doc:"How long to wait (capped by the server)." example:"30s"`
}

// waitApproval blocks until the request is settled or the wait ends, and
// returns it as it stands.
func (s *Server) waitApproval(ctx context.Context, in *waitApprovalInput) (*approvalOutput, error) {
	_, ap, err := s.readable(ctx, in.ID, "wait on approval requests")
	if err != nil {
		return nil, err
	}
	wait, err := s.parseWait("timeout", in.Timeout)
	if err != nil {
		return nil, err
	}
	if wait == 0 {
		wait = s.checkWait()
	}
	wctx, cancel := s.waitContext(ctx, wait)
	defer cancel()
	got, err := s.store().WaitApproval(wctx, ap.ID)
	if err != nil && wctx.Err() == nil {
		return nil, err
	}
	if got.ID == "" {
		got = ap
	}
	return &approvalOutput{Body: got}, nil
}

type approvalGroupsInput struct {
	Agent string `query:"agent" doc:"Only this agent's pending requests."`
}

type approvalGroupsOutput struct {
	Body airlock.ApprovalGroups
}

// maxGrouped bounds the pending requests one grouping reads.
const maxGrouped = 5000

// approvalGroups groups the pending requests by agent, tool and shape,
// for batch review: one decision may settle a batchable group, each
// request bound to its own hash.
func (s *Server) approvalGroups(ctx context.Context, in *approvalGroupsInput) (*approvalGroupsOutput, error) {
	if _, err := s.allow(ctx, "group approval requests", airlock.RoleReviewer, airlock.RoleAdmin); err != nil {
		return nil, err
	}
	gs, err := s.Enforcer.Gate.GroupPending(ctx, s.store(), in.Agent, maxGrouped)
	if err != nil {
		return nil, err
	}
	return &approvalGroupsOutput{Body: gs}, nil
}
