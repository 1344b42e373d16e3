package airlock

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wI2L/jsondiff"
)

// Review is what an approval request needs before it settles, beyond one
// authorised person's answer: the deciding rule's `approvals:`,
// `rejections:`, `escalate:` and `passkey:` (docs/POLICY.md, "Review").
// The zero Review is one person's approval or rejection.
type Review struct {
	// Approvals is how many distinct people must approve; 0 or 1, one.
	// The requester and the agent never count.
	Approvals int `json:"approvals,omitempty"`
	// Rejections is how many distinct people's rejections reject; 0 or 1,
	// the first one.
	Rejections int `json:"rejections,omitempty"`
	// Escalate widens the reviewers, step by step, when nobody has settled
	// the request after each step's delay.
	Escalate []Escalation `json:"escalate,omitempty"`
	// Passkey requires each approval to carry a WebAuthn assertion of the
	// reviewer's registered passkey whose challenge commits to the
	// request's ID and action hash.
	Passkey bool `json:"passkey,omitempty"`
}

// Escalation is one step of a request's escalation: After the request was
// queued, To become its reviewers too, and are told.
type Escalation struct {
	After Duration `json:"after"`
	To    []string `json:"to"`
}

// MaxQuorum bounds a rule's approvals and rejections: a request no team
// could settle is a mistake, not a policy.
const MaxQuorum = 10

// Validate reports whether the review can be met: approvals and
// rejections from 0 to MaxQuorum, escalation steps with reviewers, each
// later than the one before and before timeout (0: not checked).
func (r Review) Validate(timeout time.Duration) error {
	switch {
	case r.Approvals < 0 || r.Approvals > MaxQuorum:
		return Errorf(EINVALID, "approvals must be from 1 to %d, not %d", MaxQuorum, r.Approvals)
	case r.Rejections < 0 || r.Rejections > MaxQuorum:
		return Errorf(EINVALID, "rejections must be from 1 to %d, not %d", MaxQuorum, r.Rejections)
	}
	var last time.Duration
	for i, s := range r.Escalate {
		after := time.Duration(s.After)
		switch {
		case after <= 0:
			return Errorf(EINVALID, "escalate[%d]: after must be a positive duration", i)
		case after <= last:
			return Errorf(EINVALID, "escalate[%d]: after %s must come later than the step before it (%s)", i, after, last)
		case timeout > 0 && after >= timeout:
			return Errorf(EINVALID, "escalate[%d]: after %s is not before the request's timeout %s: it would never happen", i, after, timeout)
		case len(s.To) == 0:
			return Errorf(EINVALID, "escalate[%d]: to names nobody", i)
		}
		last = after
	}
	return nil
}

// String says what the review needs: "2 approvals; escalate after 10m to
// oncall; passkey".
func (r Review) String() string {
	var parts []string
	if r.Approvals > 1 {
		parts = append(parts, fmt.Sprintf("%d approvals from distinct people", r.Approvals))
	}
	if r.Rejections > 1 {
		parts = append(parts, fmt.Sprintf("%d rejections to reject", r.Rejections))
	}
	for _, s := range r.Escalate {
		parts = append(parts, fmt.Sprintf("after %s escalate to %s", time.Duration(s.After), strings.Join(s.To, ", ")))
	}
	if r.Passkey {
		parts = append(parts, "each approval with the reviewer's passkey")
	}
	if len(parts) == 0 {
		return "one person's answer"
	}
	return strings.Join(parts, "; ")
}

// IsZero reports whether the review is one person's answer.
func (r Review) IsZero() bool {
	return r.Approvals <= 1 && r.Rejections <= 1 && len(r.Escalate) == 0 && !r.Passkey
}

// ReviewerGroupPrefix marks a reviewer entry that names a group of people
// rather than one ("group:sre"): a person in the group, by their sign-in's
// groups claim, is one of the reviewers.
const ReviewerGroupPrefix = "group:"

// Vote is one person's answer to a request: recorded as its own event,
// and counted until the request's review is met.
type Vote struct {
	By     string         `json:"by"`
	Status ApprovalStatus `json:"status"` // approved or rejected
	// ActionHash is the action the person answered: the request's, or a
	// reviewer's edit of it. An approval counts only for the action it
	// names.
	ActionHash Hash      `json:"action_hash"`
	At         time.Time `json:"at"`
	Surface    Surface   `json:"surface"`
	Reason     string    `json:"reason,omitempty"`
	Admin      bool      `json:"admin,omitempty"`
	// Passkey is the reviewer's passkey signing an approval, when the
	// request's review needs one.
	Passkey *PasskeyAssertion `json:"passkey,omitempty"`
}

// Edit is a reviewer's change to the arguments of the action a request
// holds, approved by that reviewer: the edited action has its own hash,
// was decided again by the gate, and is what runs once the request is
// approved (Approval.Runs). The original never runs.
type Edit struct {
	// Args are the edited arguments; ActionHash the edited action's hash.
	Args       json.RawMessage `json:"args"`
	ActionHash Hash            `json:"action_hash"`
	// Diff is the RFC 6902 JSON Patch from the request's arguments to Args.
	Diff json.RawMessage `json:"diff"`
	By   string          `json:"by,omitempty"`
	At   time.Time       `json:"at,omitzero"`
	// Decision is the gate's decision on the edited action: its outcome,
	// tier and rule, and the reviewers and review a person's approval of
	// it needs when it asks.
	Decision EditDecision `json:"decision"`
}

// EditDecision is what the gate decided of an edited action.
type EditDecision struct {
	Outcome    Outcome  `json:"outcome"`
	NeedsHuman bool     `json:"needs_human,omitempty"`
	Tier       RiskTier `json:"tier"`
	Class      string   `json:"class"`
	Rule       string   `json:"rule,omitempty"`
	Reviewers  []string `json:"reviewers,omitempty"`
	Review     Review   `json:"review,omitzero"`
}

// NeedsPerson reports whether the edited action, as decided, needs a
// person's approval of its own: its reviewers then must approve it.
func (d *EditDecision) NeedsPerson() bool {
	return d.NeedsHuman || d.Outcome == Ask || d.Outcome == Suggest
}

// NewEdit prepares a reviewer's edit of the request's arguments: args
// must be one strict JSON object (Action.Validate's rules), and differ
// from the request's. The caller decides the edited action (Edited) and
// sets Decision before resolving with it. Errors: EINVALID.
func NewEdit(ap *Approval, args json.RawMessage) (*Edit, error) {
	if t := bytes.TrimSpace(args); len(t) == 0 || string(t) == "null" {
		return nil, Errorf(EINVALID, "edited args must be a JSON object")
	}
	if err := validateArgs(args); err != nil {
		return nil, Errorf(EINVALID, "edited %s", ErrorMessage(err))
	}
	edited := ap.Action
	edited.Args = json.RawMessage(bytes.TrimSpace(args))
	h, err := edited.Hash()
	if err != nil {
		return nil, err
	}
	if h == ap.ActionHash {
		return nil, Errorf(EINVALID, "the edited arguments are the request's own: approve it as it is instead")
	}
	diff, err := ArgsDiff(ap.Args, edited.Args)
	if err != nil {
		return nil, err
	}
	return &Edit{Args: edited.Args, ActionHash: h, Diff: diff}, nil
}

// ArgsDiff is the RFC 6902 JSON Patch that turns arguments from into to.
func ArgsDiff(from, to json.RawMessage) (json.RawMessage, error) {
	if len(from) == 0 {
		from = emptyArgs
	}
	p, err := jsondiff.CompareJSON(from, to)
	if err != nil {
		return nil, Errorf(EINVALID, "diff of the edited args: %v", err)
	}
	b, err := json.Marshal(p)
	if err != nil {
		return nil, Errorf(EINTERNAL, "diff of the edited args: %v", err)
	}
	if string(b) == "null" {
		b = []byte("[]")
	}
	return b, nil
}

// Edited returns the request's action with a reviewer's edit applied
// (the request's own when there is none).
func (ap *Approval) Edited(e *Edit) Action {
	a := ap.Action
	if e != nil {
		a.Args = e.Args
	}
	return a
}

// Runs returns the action that runs once the request is approved: a
// reviewer's edit of it, or the request's own; and its hash.
func (ap *Approval) Runs() (Action, Hash) {
	if ap.Edit != nil {
		return ap.Edited(ap.Edit), ap.Edit.ActionHash
	}
	return ap.Action, ap.ActionHash
}

// Needed is how many distinct people must approve the request: its
// review's, or its edit's when that asks for more.
func (ap *Approval) Needed() int {
	n := max(1, ap.Review.Approvals)
	if ap.Edit != nil && ap.Edit.Decision.NeedsPerson() {
		n = max(n, ap.Edit.Decision.Review.Approvals)
	}
	return n
}

// RejectionsNeeded is how many distinct people's rejections reject it.
func (ap *Approval) RejectionsNeeded() int { return max(1, ap.Review.Rejections) }

// NeedsPasskey reports whether each approval of the request must carry a
// passkey assertion: its review's, or its edit's.
func (ap *Approval) NeedsPasskey() bool {
	return ap.Review.Passkey || ap.Edit != nil && ap.Edit.Decision.NeedsPerson() && ap.Edit.Decision.Review.Passkey
}

// Approvers returns who has approved the action that now runs, in order.
func (ap *Approval) Approvers() []string {
	_, h := ap.Runs()
	var who []string
	for _, v := range ap.Votes {
		if v.Status == StatusApproved && v.ActionHash == h {
			who = append(who, v.By)
		}
	}
	return who
}

// Rejecters returns who has rejected the request, whichever version.
func (ap *Approval) Rejecters() []string {
	var who []string
	for _, v := range ap.Votes {
		if v.Status == StatusRejected {
			who = append(who, v.By)
		}
	}
	return who
}

// Remaining is how many more approvals the request needs.
func (ap *Approval) Remaining() int { return max(0, ap.Needed()-len(ap.Approvers())) }

// VoteOf returns the vote of by that still counts: an approval of the
// action that now runs, or any rejection; nil when by has none.
func (ap *Approval) VoteOf(by string) *Vote {
	_, h := ap.Runs()
	for i := range ap.Votes {
		v := &ap.Votes[i]
		if v.By == by && (v.Status == StatusRejected || v.ActionHash == h) {
			return v
		}
	}
	return nil
}

// NextEscalation returns the step the request escalates to next and when,
// ok false when none is left.
func (ap *Approval) NextEscalation() (step Escalation, at time.Time, ok bool) {
	if ap.Escalated >= len(ap.Review.Escalate) {
		return Escalation{}, time.Time{}, false
	}
	s := ap.Review.Escalate[ap.Escalated]
	return s, ap.Created.Add(time.Duration(s.After)), true
}

// EscalateAt is when the request escalates next; the zero time when it
// does not (settled, or no step left).
func (ap *Approval) EscalateAt() time.Time {
	if ap.Status != StatusPending {
		return time.Time{}
	}
	_, at, _ := ap.NextEscalation()
	return at
}

// Escalate takes the request's next escalation step at now: its people
// become reviewers too, and are told. It returns what the store appends,
// and false when no step is due.
func (ap *Approval) Escalate(now time.Time) (Record, bool) {
	step, at, ok := ap.NextEscalation()
	if !ok || ap.Status != StatusPending || now.Before(at) || !now.Before(ap.Expires) {
		return Record{}, false
	}
	var added []string
	for _, p := range step.To {
		if !slices.Contains(ap.Reviewers, p) {
			ap.Reviewers = append(ap.Reviewers, p)
			added = append(added, p)
		}
	}
	ap.Escalated++
	ev := NewEvent(EventApprovalEscalated, &ap.Action, string(ap.Status), ap.ID, ApprovalEscalation{
		ID: ap.ID, ActionHash: ap.ActionHash, Step: ap.Escalated, Of: len(ap.Review.Escalate),
		After: step.After, To: step.To, Added: added, Reviewers: ap.Reviewers, Expires: ap.Expires,
	})
	rec := Record{Events: []Event{ev}}
	if len(step.To) > 0 {
		rec.Notifications = []Notification{{
			Recipients: step.To, Reviewers: step.To, Route: ap.Detail.Notify, Kind: EventApprovalEscalated,
			Agent: ap.Agent, ApprovalID: ap.ID,
			Subject: fmt.Sprintf("approval escalated to you (nobody answered in %s): %s", time.Duration(step.After), ap.Summary),
		}}
	}
	return rec, true
}

// ApprovalEscalation is the payload of an EventApprovalEscalated.
type ApprovalEscalation struct {
	ID         string    `json:"id"`
	ActionHash Hash      `json:"action_hash"`
	Step       int       `json:"step"` // 1-based
	Of         int       `json:"of"`
	After      Duration  `json:"after"`
	To         []string  `json:"to"`
	Added      []string  `json:"added,omitempty"` // who was not a reviewer before
	Reviewers  []string  `json:"reviewers"`       // the reviewers now
	Expires    time.Time `json:"expires"`
}

// ApprovalVote is the payload of an EventApprovalVoted: one person's
// answer that did not (yet) settle the request.
type ApprovalVote struct {
	ID         string            `json:"id"`
	Status     ApprovalStatus    `json:"status"` // the vote: approved or rejected
	ActionHash Hash              `json:"action_hash"`
	By         string            `json:"by"`
	Admin      bool              `json:"admin,omitempty"`
	Reason     string            `json:"reason,omitempty"`
	Surface    Surface           `json:"surface"`
	Approvals  int               `json:"approvals"` // counted so far for the action that runs
	Needed     int               `json:"needed"`
	Rejections int               `json:"rejections,omitempty"`
	Edit       *EditRecord       `json:"edit,omitempty"`
	Passkey    *PasskeyAssertion `json:"passkey,omitempty"`
}

// EditRecord is what the audit log keeps of an edit: both hashes and the
// diff, who edited it, and how the edited action was decided.
type EditRecord struct {
	From     Hash            `json:"from"`
	To       Hash            `json:"to"`
	Diff     json.RawMessage `json:"diff"`
	By       string          `json:"by"`
	Decision EditDecision    `json:"decision"`
}

func (ap *Approval) editRecord() *EditRecord {
	if ap.Edit == nil {
		return nil
	}
	e := ap.Edit
	return &EditRecord{From: ap.ActionHash, To: e.ActionHash, Diff: e.Diff, By: e.By, Decision: e.Decision}
}

// Refuses reports whether the policy refuses the edited action (deny,
// shadow): such an edit is never approved.
func (d *EditDecision) Refuses() bool { return d.Outcome == Deny || d.Outcome == Shadow }
