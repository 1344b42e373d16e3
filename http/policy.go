package http

import (
	"context"

	"github.com/airlock-dev/airlock"
)

// PolicyLayer describes one policy of the stack in force.
type PolicyLayer struct {
	Name        string        `json:"name"`
	File        string        `json:"file"`
	Layer       airlock.Layer `json:"layer"`
	Description string        `json:"description,omitempty"`
}

// PolicyStack is the stack in force, from the organisation down.
type PolicyStack struct {
	Layers []PolicyLayer `json:"layers"`
}

type policyOutput struct {
	Body PolicyStack
}

func (s *Server) getPolicy(ctx context.Context, _ *struct{}) (*policyOutput, error) {
	if _, err := s.allow(ctx, "read the policy", airlock.RoleAgent, airlock.RoleReviewer, airlock.RoleAdmin); err != nil {
		return nil, err
	}
	out := &policyOutput{Body: PolicyStack{Layers: []PolicyLayer{}}}
	for _, p := range s.Enforcer.Gate.Layers() {
		out.Body.Layers = append(out.Body.Layers, PolicyLayer{Name: p.Name(), File: p.File(), Layer: p.Layer(), Description: p.Description()})
	}
	return out, nil
}

type explainInput struct {
	Body struct {
		Action airlock.Action `json:"action" doc:"The action to explain. Nothing is recorded and nothing runs."`
	}
}

// Explanation is how the policy in force decides an action.
type Explanation struct {
	Decision airlock.Decision `json:"decision"`
	// Summary is the decision in one line; Explanation in full.
	Summary     string `json:"summary"`
	Explanation string `json:"explanation"`
}

type explainOutput struct {
	Body Explanation
}

// explain decides an action against the live policy without recording or
// running anything.
func (s *Server) explain(ctx context.Context, in *explainInput) (*explainOutput, error) {
	t, err := s.allow(ctx, "explain actions", airlock.RoleAgent, airlock.RoleReviewer, airlock.RoleAdmin)
	if err != nil {
		return nil, err
	}
	a := in.Body.Action
	if err := a.Validate(); err != nil {
		return nil, err
	}
	if t.Role == airlock.RoleAgent {
		if err := s.actAs(ctx, t, a.Agent, "explain actions"); err != nil {
			return nil, err
		}
	}
	d := s.Enforcer.Gate.Decide(ctx, a)
	return &explainOutput{Body: Explanation{Decision: d, Summary: d.String(), Explanation: d.Explain()}}, nil
}

type effectiveInput struct {
	Agent string `query:"agent" maxLength:"512" doc:"The agent. An agent token may name only its own agent, and names it when this is left out."`
}

type effectiveOutput struct {
	Body airlock.EffectivePolicy
}

// effectivePolicy returns what the stack in force can apply to one agent's
// actions (see airlock.Gate.EffectivePolicy).
func (s *Server) effectivePolicy(ctx context.Context, in *effectiveInput) (*effectiveOutput, error) {
	t, err := s.allow(ctx, "read the policy", airlock.RoleAgent, airlock.RoleReviewer, airlock.RoleAdmin)
	if err != nil {
		return nil, err
	}
	agent, err := s.scopeAgent(ctx, t, in.Agent, "the effective policy")
	if err != nil {
		return nil, err
	}
	if agent == "" {
		return nil, airlock.Errorf(airlock.EINVALID, "agent is required: the effective policy is one agent's")
	}
	ep := s.Enforcer.Gate.EffectivePolicy(agent)
	if ep.Layers == nil {
		ep.Layers = []airlock.EffectiveLayer{}
	}
	return &effectiveOutput{Body: ep}, nil
}
