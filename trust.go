package airlock

import (
	"encoding/json"
	"time"
)

// TrustOutcome is how an enforced decision ended for the agent.
type TrustOutcome string

const (
	TrustSuccess TrustOutcome = "success" // the action ran
	TrustDenied  TrustOutcome = "denied"  // refused, skipped or rejected
	TrustTimeout TrustOutcome = "timeout" // nobody decided before the deadline
	TrustFailure TrustOutcome = "failure" // allowed, but running it failed
)

// Enforcement labels: how the gate carried out a decision. They are stable
// names stored in trust records (LabelApprovalRequested, LabelAskedAtHost
// and LabelApprovalEdited only in decision events and answers: nothing is
// settled yet to record, or the resolution recorded it).
const (
	LabelAuto              = "auto"
	LabelNotify            = "notify"
	LabelShadow            = "shadow_noop"
	LabelSuggest           = "suggest_approval_request"
	LabelApprovalRequested = "approval_requested"
	LabelApprovalGranted   = "approval_granted"
	LabelApprovalRejected  = "approval_rejected"
	LabelApprovalTimeout   = "approval_timeout"
	LabelApprovalCancelled = "approval_cancelled"
	LabelGrantUsed         = "grant_used"
	LabelDenied            = "denied"
	LabelNeedsHuman        = "needs_human_denied"
	LabelInvalid           = "invalid"
	LabelExecutionFailed   = "execution_failed"
	LabelAskedAtHost       = "asked_at_host" // an ask handed to the host's own prompt (CheckAtHost)
	// LabelApprovalEdited: approved as a reviewer edited it, which this
	// caller cannot run in place of its action (CodeEdited).
	LabelApprovalEdited = "approval_edited"
)

// TrustRecord is the outcome of one enforced decision for one agent and
// class. Aggregated per agent × class, trust records show how far an agent
// can be trusted.
type TrustRecord struct {
	Time    time.Time    `json:"time"`
	Agent   string       `json:"agent"`
	Class   Class        `json:"class"`
	Outcome TrustOutcome `json:"outcome"`
	Tier    RiskTier     `json:"tier"`
	TraceID string       `json:"trace_id,omitempty"`

	// Label is the enforcement label (LabelAuto, LabelShadow, ...).
	Label string `json:"label"`
	Tool  string `json:"tool"`
	// AutonomyClass is the outcome the policy resolved, or "needs-human".
	AutonomyClass string          `json:"autonomy_class"`
	RequiresHuman bool            `json:"requires_human,omitempty"`
	Code          string          `json:"code,omitempty"`
	Args          json.RawMessage `json:"args,omitempty"`
	ApprovalID    string          `json:"approval_id,omitempty"`
	// EventSeq is the audit event recording the same moment.
	EventSeq int64 `json:"event_seq,omitempty"`
}

// TrustFilter selects trust aggregates.
type TrustFilter struct {
	Agent string
	Class Class
	Since time.Time
}

// TrustSummary aggregates an agent's trust records for one class.
type TrustSummary struct {
	Agent string `json:"agent"`
	Class Class  `json:"class"`
	// Counts by outcome: success, denied, timeout, failure.
	Counts map[TrustOutcome]int64 `json:"counts"`
	Total  int64                  `json:"total"`
	// Approved, Rejected and Expired count the approval requests that a
	// person had to decide (or let expire); ApprovalRate is
	// Approved / (Approved + Rejected + Expired), 0 when none.
	Approved     int64   `json:"approved"`
	Rejected     int64   `json:"rejected"`
	Expired      int64   `json:"expired"`
	ApprovalRate float64 `json:"approval_rate"`
	// MedianDecision is the median time from request to resolution.
	MedianDecision time.Duration `json:"median_decision"`
}

// Rate computes ApprovalRate from the counts.
func (s *TrustSummary) Rate() float64 {
	n := s.Approved + s.Rejected + s.Expired
	if n == 0 {
		return 0
	}
	return float64(s.Approved) / float64(n)
}

// Median returns the median of durations sorted ascending, 0 for none.
func Median(sorted []time.Duration) time.Duration {
	n := len(sorted)
	switch {
	case n == 0:
		return 0
	case n%2 == 1:
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// TrustPage lists trust aggregates per agent × class.
type TrustPage struct {
	Trust []TrustSummary `json:"trust"`
}
