package mcp

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/gate"
)

// Local decides with an Enforcer in this process, on its store.
type Local struct{ Enforcer *gate.Enforcer }

var _ Checker = Local{}

func (l Local) Check(ctx context.Context, a airlock.Action) (airlock.Enforcement, error) {
	return l.Enforcer.Check(ctx, a), nil
}

func (l Local) Await(ctx context.Context, id string) (airlock.Enforcement, error) {
	return l.Enforcer.Await(ctx, id)
}

func (l Local) Ran(ctx context.Context, enf airlock.Enforcement, took time.Duration, result json.RawMessage, runErr error) error {
	return l.Enforcer.RanWith(ctx, enf, took, result, runErr)
}

func (l Local) ReleaseTools(ctx context.Context, agent, server string, defs []airlock.ToolDefinition) ([]airlock.ToolRelease, error) {
	return l.Enforcer.ReleaseTools(ctx, agent, server, defs)
}

func (l Local) WaitApproval(ctx context.Context, id string) (airlock.Approval, error) {
	return l.Enforcer.Store.WaitApproval(ctx, id)
}

// Remote decides through an Airlock server's API, with the agent's token:
// the requests appear in that server's inbox and audit chain. An action
// without an agent is the token's agent's, asked of the server once it
// answers.
type Remote struct {
	Client *client.Client

	mu    sync.Mutex
	agent string
}

var _ Checker = (*Remote)(nil)

func (r *Remote) Check(ctx context.Context, a airlock.Action) (airlock.Enforcement, error) {
	if a.Agent == "" {
		agent, err := r.whoami(ctx)
		if err != nil {
			return airlock.Enforcement{}, err
		}
		a.Agent = agent
	}
	return r.Client.Check(ctx, a, 0)
}

// whoami is the token's agent.
func (r *Remote) whoami(ctx context.Context) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.agent != "" {
		return r.agent, nil
	}
	t, err := r.Client.Whoami(ctx)
	if err != nil {
		return "", err
	}
	if t.Role != airlock.RoleAgent {
		return "", airlock.Errorf(airlock.EUNAUTHORIZED, "%s is not an agent token", t.Subject())
	}
	r.agent = t.Agent
	return r.agent, nil
}

// Await long-polls the request until it is settled or ctx ends. A server
// that is restarting is asked again: the request survives it.
func (r *Remote) Await(ctx context.Context, id string) (airlock.Enforcement, error) {
	backoff := 100 * time.Millisecond
	for {
		enf, err := r.Client.Resume(ctx, id, 50*time.Second)
		switch {
		case ctx.Err() != nil:
			return airlock.Enforcement{Pending: true, Approval: &airlock.Approval{ID: id, Status: airlock.StatusPending}}, nil
		case err == nil && !enf.Pending:
			return enf, nil
		case err == nil:
			backoff = 100 * time.Millisecond
			continue
		case airlock.ErrorCode(err) != airlock.EUNAVAILABLE && airlock.ErrorCode(err) != airlock.EINTERNAL:
			return airlock.Enforcement{}, err
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

func (r *Remote) Ran(ctx context.Context, enf airlock.Enforcement, took time.Duration, result json.RawMessage, runErr error) error {
	return r.Client.RanWith(ctx, enf, took, result, runErr)
}

func (r *Remote) ReleaseTools(ctx context.Context, agent, server string, defs []airlock.ToolDefinition) ([]airlock.ToolRelease, error) {
	return r.Client.ReleaseTools(ctx, agent, server, defs)
}

// WaitApproval long-polls the request until it is settled or ctx ends.
func (r *Remote) WaitApproval(ctx context.Context, id string) (airlock.Approval, error) {
	for {
		ap, err := r.Client.WaitApproval(ctx, id, 50*time.Second)
		switch {
		case err == nil && ap.Status != airlock.StatusPending:
			return ap, nil
		case ctx.Err() != nil:
			return ap, ctx.Err()
		case err != nil && airlock.ErrorCode(err) != airlock.EUNAVAILABLE:
			return ap, err
		case err != nil:
			t := time.NewTimer(time.Second)
			select {
			case <-ctx.Done():
			case <-t.C:
			}
			t.Stop()
		}
	}
}

// runNowWindow is how far back a watch looks for requests approved to run
// now before it started: longer than any grant lasts by default.
const runNowWindow = 2 * gate.DefaultGrantTTL

// runNowEvent reads an approval.resolved event: its request, if a person
// approved it to run now.
func runNowEvent(e airlock.Event) (string, bool) {
	var p airlock.ApprovalChange
	if json.Unmarshal(e.Payload, &p) != nil || !p.RunNow || p.Status != airlock.StatusApproved {
		return "", false
	}
	return p.ID, true
}

// approvedToRun lists agent's requests approved to run now lately.
func approvedToRun(ctx context.Context, find func(context.Context, airlock.ApprovalFilter) (airlock.ApprovalPage, error), agent string) ([]airlock.Approval, error) {
	page, err := find(ctx, airlock.ApprovalFilter{Agent: agent, Status: []airlock.ApprovalStatus{airlock.StatusApproved},
		BySettled: true, CreatedAfter: time.Now().Add(-runNowWindow), Limit: 200})
	if err != nil {
		return nil, err
	}
	var out []airlock.Approval
	for _, ap := range page.Approvals {
		if ap.RunNow && ap.GrantUsed.IsZero() {
			out = append(out, ap)
		}
	}
	return out, nil
}

func (l Local) RunNow(ctx context.Context, agent string, fn func(airlock.Approval)) error {
	st := l.Enforcer.Store
	seen, err := st.Head(ctx)
	if err != nil {
		return err
	}
	earlier, err := approvedToRun(ctx, st.FindApprovals, agent)
	if err != nil {
		return err
	}
	for _, ap := range earlier {
		fn(ap)
	}
	for {
		if err := st.WaitEvents(ctx, seen); err != nil {
			return err
		}
		head, err := st.Head(ctx)
		if err != nil {
			return err
		}
		evs, err := st.Events(ctx, airlock.EventFilter{AfterSeq: seen, Kind: airlock.EventApprovalResolved, Agent: agent, Limit: 1000})
		if err != nil {
			return err
		}
		for _, e := range evs {
			seen = max(seen, e.Seq)
			if id, ok := runNowEvent(e); ok {
				if ap, err := st.Approval(ctx, id); err == nil {
					fn(ap)
				}
			}
		}
		seen = max(seen, head)
	}
}

func (r *Remote) RunNow(ctx context.Context, agent string, fn func(airlock.Approval)) error {
	if agent == "" {
		for {
			a, err := r.whoami(ctx)
			if err == nil {
				agent = a
				break
			}
			t := time.NewTimer(5 * time.Second) // the server is not up yet
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
		}
	}
	page, err := r.Client.Events(ctx, airlock.EventFilter{Agent: agent, Limit: 1})
	if err != nil {
		return err
	}
	earlier, err := approvedToRun(ctx, r.Client.Approvals, agent)
	if err != nil {
		return err
	}
	for _, ap := range earlier {
		fn(ap)
	}
	return r.Client.StreamEvents(ctx, max(page.Head, 1), airlock.EventApprovalResolved, agent, func(e airlock.Event) error {
		if id, ok := runNowEvent(e); ok {
			if ap, err := r.Client.Approval(ctx, id); err == nil {
				fn(ap)
			}
		}
		return nil
	})
}
