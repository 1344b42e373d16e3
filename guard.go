package airlock

import (
	"context"
	"encoding/json"
	"time"
)

// Guard enforces actions for an agent. The in-process gate.Enforcer is one
// and client.Client, over a server's API, is another, so an agent switches
// between an embedded gate and a remote server by changing one line.
type Guard interface {
	// Enforce decides the action and carries the decision out, blocking
	// while an ask request waits for a person. It never fails: a zero
	// Enforcement is a refusal.
	Enforce(ctx context.Context, a Action) Enforcement
	// Run calls fn only when the action is allowed, with the action to run
	// — a, or a reviewer's edit of it (Enforcement.ToRun) — and records how
	// it went. fn must run the action it is given, not a.
	Run(ctx context.Context, a Action, fn func(context.Context, Action) error) (Enforcement, error)
}

// A Checker is a Guard an adapter drives step by step, to answer its host
// between the steps: the MCP gateway tells its client that a request is
// queued, and how it stands, while a person decides. gate.Enforcer is one,
// in process; client.Client is the other, over a server's API; an adapter
// is the same code on either, a translator between its host's messages and
// actions.
type Checker interface {
	Guard
	// Check decides and records a without waiting for a person: an ask
	// comes back Pending, its request queued or joined. It never fails: a
	// zero Enforcement is a refusal, with CodeUnavailable (and Err) when
	// Airlock could not be asked.
	Check(ctx context.Context, a Action) Enforcement
	// Await waits on the request id that Check left pending until a person
	// or the deadline settles it, or ctx ends; then the result is still
	// Pending and the request stays pending, for the identical action to
	// collect later.
	Await(ctx context.Context, id string) (Enforcement, error)
	// RanWith records that an allowed action ran, or failed with runErr;
	// result, when not nil, is kept with the record for a person to read.
	RanWith(ctx context.Context, enf Enforcement, took time.Duration, result json.RawMessage, runErr error) error
	// ReleaseTools checks an MCP server's listing against the definitions
	// released to agent for it (see gate.Enforcer.ReleaseTools).
	ReleaseTools(ctx context.Context, agent, server string, defs []ToolDefinition) ([]ToolRelease, error)
	// WaitApproval waits until the request is settled or ctx ends, and
	// returns it as it stands.
	WaitApproval(ctx context.Context, id string) (Approval, error)
	// RunNow calls fn with each of agent's requests that a person approved
	// to run now: those approved in the last RunNowWindow, then each as it
	// is approved, until ctx ends. fn may see one twice; the grant lets it
	// run once. A client may name no agent: its token's.
	RunNow(ctx context.Context, agent string, fn func(Approval)) error
}

// Enforcement is what happened to one action. The zero value is a refusal:
// callers run the action only when Allowed is set.
type Enforcement struct {
	// Allowed is set when the action may run now.
	Allowed bool `json:"allowed"`
	// Code is the stable refusal code when it may not.
	Code string `json:"code,omitempty"`
	// Message says what was attempted, under which rule, and what to do next.
	Message string `json:"message"`
	// Pending is set when an ask request waits for a person and the caller
	// chose not to block (Check): it may Await the request by its ID.
	Pending bool `json:"pending,omitempty"`
	// Label is the enforcement label of the trust record (LabelAuto, ...).
	Label    string   `json:"label"`
	Decision Decision `json:"decision"`
	// Approval is the request queued, joined, waited on or used as a grant.
	Approval *Approval `json:"approval,omitempty"`
	// Edit, on an allowed enforcement, is a reviewer's edit of the action
	// the caller checked: what runs is the edited action (ToRun), never
	// the original.
	Edit *Edit `json:"edit,omitempty"`
	// Seq is the sequence number of the decision's audit event.
	Seq int64 `json:"seq,omitempty"`
	// Err is the cause of an AIRLOCK-UNAVAILABLE refusal.
	Err error `json:"-"`
	// Consent, on an execution record, says who let the action run when it
	// was not Airlock: ConsentHost when the host's user consented at its own
	// prompt, ConsentNone when nothing Airlock decided allowed it (a host
	// ran a call its hook never cleared).
	Consent string `json:"consent,omitempty"`
}

// ToRun returns the action the caller runs when the enforcement allows
// it: the one it checked, or a reviewer's edit of it.
func (e *Enforcement) ToRun() Action {
	a := e.Decision.Action
	if e.Edit != nil {
		a.Args = e.Edit.Args
	}
	return a
}

// Consent values of an execution record.
const (
	// ConsentHost: the host's own user let it run (CheckAtHost), not Airlock.
	ConsentHost = "host"
	// ConsentNone: no decision of Airlock allowed it.
	ConsentNone = "none"
)

// Refusal is the error Run returns when the gate did not allow the action.
type Refusal struct{ Enforcement Enforcement }

func (r *Refusal) Error() string { return r.Enforcement.Code + ": " + r.Enforcement.Message }

// ErrorCode lets airlock.ErrorCode read the refusal code.
func (r *Refusal) Unwrap() error {
	return &Error{Code: r.Enforcement.Code, Message: r.Enforcement.Message}
}
