package airlock

import "context"

// Guard enforces actions for an agent. The in-process Enforcer is one and
// the HTTP client (package http) is another, so an agent switches between
// an embedded gate and a remote server by changing one line.
type Guard interface {
	// Enforce decides the action and carries the decision out, blocking
	// while an ask request waits for a person. It never fails: a zero
	// Enforcement is a refusal.
	Enforce(ctx context.Context, a Action) Enforcement
	// Run calls fn only when the action is allowed, and records how it went.
	Run(ctx context.Context, a Action, fn func(context.Context) error) (Enforcement, error)
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
