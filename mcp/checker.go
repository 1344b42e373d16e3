package mcp

import (
	"context"
	"sync"
	"time"

	"github.com/airlock-dev/airlock"
	airlockhttp "github.com/airlock-dev/airlock/http"
)

// Local decides with an Enforcer in this process, on its store.
type Local struct{ Enforcer *airlock.Enforcer }

var _ Checker = Local{}

func (l Local) Check(ctx context.Context, a airlock.Action) (airlock.Enforcement, error) {
	return l.Enforcer.Check(ctx, a), nil
}

func (l Local) Await(ctx context.Context, id string) (airlock.Enforcement, error) {
	return l.Enforcer.Await(ctx, id)
}

func (l Local) Ran(ctx context.Context, enf airlock.Enforcement, took time.Duration, runErr error) error {
	return l.Enforcer.Ran(ctx, enf, took, runErr)
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
	Client *airlockhttp.Client

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

func (r *Remote) Ran(ctx context.Context, enf airlock.Enforcement, took time.Duration, runErr error) error {
	return r.Client.Ran(ctx, enf, took, runErr)
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
