package http

import (
	"context"
	"errors"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/gate"
)

// PolicyLayer is one policy of the stack in force: its name, file and
// layer, what it holds (its default, floors, classifiers, rules and how far
// each reaches) and the hash of its file.
type PolicyLayer struct {
	gate.PolicyContents
	// SHA256 is the hash of the file's bytes as loaded, hex ("" when the
	// server was not told).
	SHA256 string `json:"sha256,omitempty"`
}

// NewPolicyStack describes the gate's stack, each layer with the hash
// files gives for its file ("" for one files does not name).
func NewPolicyStack(g *gate.Gate, files []airlock.PolicySource) PolicyStack {
	st := PolicyStack{Layers: []PolicyLayer{}}
	for i, c := range g.Contents() {
		l := PolicyLayer{PolicyContents: c}
		// The watcher's record and the gate agree but for a reload
		// between the two reads: a hash is given only for the same file.
		if i < len(files) && files[i].File == c.File && files[i].Name == c.Name {
			l.SHA256 = files[i].SHA256
		}
		st.Layers = append(st.Layers, l)
	}
	return st
}

// PolicyStack is the stack in force, from the organisation down.
type PolicyStack struct {
	Layers []PolicyLayer `json:"layers"`
	// Stale is set while the policy files on disk are not the stack in
	// force: their last reload was refused.
	Stale *StalePolicy `json:"stale,omitempty"`
}

// PolicyFiles is what the server's policy watcher knows of the files
// behind the stack in force (Server.PolicyFiles).
type PolicyFiles struct {
	// InForce are the files of the stack in force, with their hashes.
	InForce []airlock.PolicySource
	// Stale is set while the files on disk are not the stack in force.
	Stale *StalePolicy
}

// StalePolicy says that the policy files on disk are not the stack in
// force: a reload of them was refused (the policy.reload_refused event
// records it) and the previous stack still decides. A later reload that
// succeeds, or the files put back as they were, clears it.
type StalePolicy struct {
	// Refused is when the latest reload was refused, and Reason what
	// triggered it ("file changed", "SIGHUP").
	Refused time.Time `json:"refused"`
	Reason  string    `json:"reason"`
	// Errors are the latest refusal's problems, file:line:col where known.
	Errors []string `json:"errors"`
	// OnDisk are the files as read at the refusal (SHA256 "" for one that
	// could not be read); InForce the stack still deciding.
	OnDisk  []airlock.PolicyFileOnDisk `json:"on_disk"`
	InForce []airlock.PolicySource     `json:"in_force"`
}

type policyOutput struct {
	Body PolicyStack
}

func (s *Server) getPolicy(ctx context.Context, _ *struct{}) (*policyOutput, error) {
	if _, err := s.allow(ctx, "read the policy", airlock.RoleAgent, airlock.RoleReviewer, airlock.RoleAdmin); err != nil {
		return nil, err
	}
	files := s.policyFiles()
	out := &policyOutput{Body: NewPolicyStack(s.Enforcer.Gate, files.InForce)}
	out.Body.Stale = files.Stale
	return out, nil
}

// policyFiles asks the policy watcher, if the server has one.
func (s *Server) policyFiles() PolicyFiles {
	if s.PolicyFiles == nil {
		return PolicyFiles{}
	}
	return s.PolicyFiles()
}

type explainInput struct {
	Body struct {
		Action airlock.Action `json:"action" doc:"The action to explain. Nothing is recorded and nothing runs."`
	}
}

type explainOutput struct {
	Body airlock.Explanation
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
	d, err := s.Enforcer.Explain(ctx, a)
	if err != nil {
		return nil, err
	}
	return &explainOutput{Body: airlock.Explanation{Decision: d, Summary: d.String(), Explanation: d.Explain()}}, nil
}

type effectiveInput struct {
	Agent string `query:"agent" maxLength:"512" doc:"The agent. An agent token may name only its own agent, and names it when this is left out."`
}

type effectiveOutput struct {
	Body gate.EffectivePolicy
}

// effectivePolicy returns what the stack in force can apply to one agent's
// actions (see gate.Gate.EffectivePolicy).
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
		ep.Layers = []gate.EffectiveLayer{}
	}
	return &effectiveOutput{Body: ep}, nil
}

type backtestInput struct {
	Body struct {
		Files []struct {
			Name   string `json:"name" minLength:"1" doc:"The file's name, for error locations (org.yaml)."`
			Policy string `json:"policy" doc:"The policy file's YAML."`
		} `json:"files" minItems:"1" doc:"The policy files to test, from the top layer down, as serve stacks them."`
		Since time.Time `json:"since,omitzero" doc:"Only decisions at or after this time."`
		Agent string    `json:"agent,omitempty" doc:"Only this agent's decisions."`
	}
}

type backtestOutput struct {
	Body gate.BacktestReport
}

// backtest replays the recorded decisions through the uploaded policy
// files' stack and reports what would change; nothing is recorded.
func (s *Server) backtest(ctx context.Context, in *backtestInput) (*backtestOutput, error) {
	if _, err := s.allow(ctx, "back-test policies", airlock.RoleReviewer, airlock.RoleAdmin); err != nil {
		return nil, err
	}
	var layers []*gate.Policy
	for _, f := range in.Body.Files {
		p, err := gate.LoadPolicy(f.Name, []byte(f.Policy))
		var pe *gate.PolicyError
		if errors.As(err, &pe) {
			return nil, airlock.Errorf(airlock.EINVALID, "%s", pe.Error()) // every problem, located
		}
		if err != nil {
			return nil, err
		}
		layers = append(layers, p)
	}
	g, err := gate.New(s.Enforcer.Gate.Shell(), layers...)
	if err != nil {
		return nil, err
	}
	rep, err := g.BacktestLog(ctx, s.store().Events, airlock.EventFilter{Since: in.Body.Since, Agent: in.Body.Agent})
	if err != nil {
		return nil, err
	}
	return &backtestOutput{Body: rep}, nil
}
