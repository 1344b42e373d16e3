package airlock

import "time"

// The payloads of the audit log's events, one type per kind, used by the
// writer and by every reader (the CLI, the inbox, the hooks, the gateway):
//
//	decision                      DecisionPayload
//	proposal                      ProposalPayload
//	approval.requested            Approval
//	approval.resolved, .expired,
//	.cancelled, grant.used        ApprovalChange
//	action.executed               ActionExecuted
//	policy.changed                PolicyChange
//	policy.reload_refused         PolicyReloadRefusal
//	token.created, token.revoked  Token
//	access.refused                AccessRefused
//	audit.checkpoint              CheckpointPayload

// DecisionPayload is the payload of a decision event: what the audit log
// keeps of a decision.
type DecisionPayload struct {
	Action         Action        `json:"action"`
	ActionHash     Hash          `json:"action_hash"`
	Outcome        Outcome       `json:"outcome"`
	Label          string        `json:"label"`
	Code           string        `json:"code,omitempty"`
	NeedsHuman     string        `json:"needs_human,omitempty"`
	Class          Class         `json:"class"`
	Capability     Capability    `json:"capability"`
	Tier           RiskTier      `json:"tier"`
	DecidedBy      string        `json:"decided_by"`
	Overrides      []Override    `json:"overrides,omitempty"`
	ConditionError []string      `json:"condition_errors,omitempty"`
	Commands       []CommandNote `json:"commands,omitempty"`
	// Budgets are what running it took from budgets (an allowed decision),
	// Spent the budgets found spent, whose grants and rules did not apply.
	Budgets []BudgetCharge `json:"budgets,omitempty"`
	Spent   []BudgetCharge `json:"spent,omitempty"`
}

// CommandNote is one shell command of a decision event, as a reviewer
// reads it: what it is, how it was classified and why, and what it got.
type CommandNote struct {
	Text    string   `json:"text"`
	Class   Class    `json:"class"`
	Tier    RiskTier `json:"tier"`
	Outcome Outcome  `json:"outcome"`
	// Inert commands (cd, echo) change nothing and take no part.
	Inert  bool     `json:"inert,omitempty"`
	Reason string   `json:"reason,omitempty"`
	Via    []string `json:"via,omitempty"`
	// By is the rule (or the default) that gave the outcome; Deciding
	// marks the command whose outcome is the action's.
	By       string `json:"by,omitempty"`
	Deciding bool   `json:"deciding,omitempty"`
}

// Verdict is what the command got: its outcome, or "inert" for a command
// that changes nothing (cd, echo) and takes no part in the decision.
func (c *CommandNote) Verdict() string {
	if c.Inert || !c.Outcome.Valid() {
		return "inert"
	}
	return c.Outcome.String()
}

// ProposalPayload is the payload of a proposal event: an action that was
// skipped (suggest, shadow), as it would have run.
type ProposalPayload struct {
	Action     Action   `json:"action"`
	ActionHash Hash     `json:"action_hash"`
	Class      Class    `json:"class"`
	Tier       RiskTier `json:"tier"`
	Summary    string   `json:"summary"`
}

// ApprovalChange is the payload of the events of a request's life after it
// was queued: approval.resolved, approval.expired, approval.cancelled and
// grant.used. (approval.requested carries the Approval itself.)
type ApprovalChange struct {
	ID         string         `json:"id"`
	Status     ApprovalStatus `json:"status"`
	ActionHash Hash           `json:"action_hash"`
	Class      string         `json:"class"`
	Tool       string         `json:"tool"`
	By         string         `json:"by,omitempty"`
	Admin      bool           `json:"admin,omitempty"`
	Reason     string         `json:"reason,omitempty"`
	Surface    Surface        `json:"surface,omitempty"`
	Waited     Duration       `json:"waited"`
	GrantUntil time.Time      `json:"grant_until,omitzero"`
	RunNow     bool           `json:"run_now,omitempty"`
	// Edit is the reviewer's edit that was approved: both hashes and the
	// diff (the action that ran is Edit.To).
	Edit *EditRecord `json:"edit,omitempty"`
	// Approvers lists, for a request approved by a quorum, everyone who
	// approved it (each also has an EventApprovalVoted, but the last).
	Approvers []string `json:"approvers,omitempty"`
	// Passkey is the passkey assertion of the approval that settled it,
	// when its review needs one (`airlock audit verify` checks it).
	Passkey *PasskeyAssertion `json:"passkey,omitempty"`
}

// CheckpointPayload is the payload of an EventCheckpoint: the signed note
// and the verifier key that checks it.
type CheckpointPayload struct {
	Note string `json:"note"`
	Key  string `json:"key"`
}
