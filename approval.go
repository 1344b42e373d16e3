package airlock

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/airlock-dev/airlock/visible"
)

// ApprovalStatus is where an approval request stands. Only pending changes,
// and only once.
type ApprovalStatus string

const (
	StatusPending   ApprovalStatus = "pending"
	StatusApproved  ApprovalStatus = "approved"
	StatusRejected  ApprovalStatus = "rejected"
	StatusExpired   ApprovalStatus = "expired"
	StatusCancelled ApprovalStatus = "cancelled"
)

// Valid reports whether s is one of the five statuses.
func (s ApprovalStatus) Valid() bool {
	switch s {
	case StatusPending, StatusApproved, StatusRejected, StatusExpired, StatusCancelled:
		return true
	}
	return false
}

// ParseApprovalStatus parses a status name.
func ParseApprovalStatus(s string) (ApprovalStatus, error) {
	if st := ApprovalStatus(s); st.Valid() {
		return st, nil
	}
	return "", Errorf(EINVALID, "unknown approval status %q%s", s,
		suggest(s, []string{"pending", "approved", "rejected", "expired", "cancelled"}))
}

// Surface is where a resolution came from.
type Surface string

const (
	SurfaceWeb     Surface = "web"
	SurfaceCLI     Surface = "cli"
	SurfaceAPI     Surface = "api"
	SurfaceSlack   Surface = "slack"
	SurfaceFeishu  Surface = "feishu"
	SurfaceWebhook Surface = "webhook"
	// SurfaceSystem marks a change no person made: an expiry, a cancellation
	// because the waiting caller left, an approval by a rule or a flag. It is
	// never recorded as human consent.
	SurfaceSystem Surface = "system"
)

// Valid reports whether s is a known surface.
func (s Surface) Valid() bool {
	switch s {
	case SurfaceWeb, SurfaceCLI, SurfaceAPI, SurfaceSlack, SurfaceFeishu, SurfaceWebhook, SurfaceSystem:
		return true
	}
	return false
}

// NeedsHumanSuffix marks the class of an approval request queued because of
// a needs-human tag.
const NeedsHumanSuffix = "#needs-human"

// Approval is a request for a person to approve one exact action. Ask
// requests block their caller; suggest and needs-human requests do not, and
// once approved they are one-shot grants: the same action (same hash) may
// run exactly once before GrantExpires.
type Approval struct {
	ID string `json:"id"` // UUIDv7: sorts by creation time
	// Action is the exact action to approve; its hash is ActionHash.
	Action
	ActionHash Hash `json:"action_hash"`
	// EffectHash is Action.EffectHash, set by the store: requests with the
	// same effect hash do the same thing for different sessions.
	EffectHash Hash `json:"effect_hash,omitzero"`
	// Class carries the "#needs-human" suffix when a needs-human tag applied.
	Class      string     `json:"class"`
	Tier       RiskTier   `json:"tier"`
	Capability Capability `json:"capability"`
	// Outcome is what the gate decided: ask (blocking) or suggest (a
	// proposal; needs-human requests are proposals too).
	Outcome    Outcome        `json:"outcome"`
	NeedsHuman bool           `json:"needs_human,omitempty"`
	Summary    string         `json:"summary"`
	Detail     ApprovalDetail `json:"detail"`
	// Reviewers may resolve the request, besides the agent's owner and admins.
	Reviewers []string `json:"reviewers,omitempty"`
	Owner     string   `json:"owner,omitempty"`

	// Timeout is how long the request may wait; the store sets Created and
	// Expires from its own clock.
	Timeout time.Duration  `json:"timeout"`
	Created time.Time      `json:"created"`
	Expires time.Time      `json:"expires"`
	Status  ApprovalStatus `json:"status"`

	ResolvedBy string    `json:"resolved_by,omitempty"`
	ResolvedAt time.Time `json:"resolved_at,omitzero"`
	Reason     string    `json:"reason,omitempty"`
	Surface    Surface   `json:"surface,omitempty"`

	// GrantTTL is how long an approved proposal may be used; GrantExpires is
	// set when it is approved, GrantUsed when the grant ran.
	GrantTTL     time.Duration `json:"grant_ttl,omitempty"`
	GrantExpires time.Time     `json:"grant_expires,omitzero"`
	GrantUsed    time.Time     `json:"grant_used,omitzero"`
	// RunNow is set when the person who approved a proposal asked that it
	// be run now by an executor that holds the tool (the MCP gateway),
	// instead of when the agent retries it. Either way it runs once.
	RunNow bool `json:"run_now,omitempty"`

	// Review is what the request needs before it settles beyond one
	// person's answer: a quorum, escalation, a passkey (the rule's).
	Review Review `json:"review,omitzero"`
	// Votes are the people's answers so far, in order: each is its own
	// event, and the request settles when its review is met.
	Votes []Vote `json:"votes,omitempty"`
	// Escalated is how many of Review.Escalate's steps were taken.
	Escalated int `json:"escalated,omitempty"`
	// Edit is a reviewer's edit of the action's arguments: once approved,
	// the edited action is what runs (Runs), never the original.
	Edit *Edit `json:"edit,omitempty"`
}

// ApprovalDetail explains to a reviewer why the request exists.
type ApprovalDetail struct {
	// AutonomyClass is "needs-human" for needs-human requests, else the
	// outcome the policy resolved.
	AutonomyClass string `json:"autonomy_class"`
	RequiresHuman bool   `json:"requires_human,omitempty"`
	// Code is the refusal code the agent got while the request waits.
	Code string `json:"code,omitempty"`
	// Rule is the deciding rule, "file:line:col", or the default that decided.
	Rule string `json:"rule,omitempty"`
	// Decision is the full explanation of the gate's decision.
	Decision string `json:"decision,omitempty"`
	// Reason is the agent's own reason (Hints.Reason), shown as a claim.
	Reason string `json:"reason,omitempty"`
	// Notify names the channels that carry the request's notices (the
	// decision's Notify).
	Notify []string `json:"notify,omitempty"`
}

// IsGrant reports whether the request, once approved, is a one-shot grant
// rather than the release of a blocked caller.
func (ap *Approval) IsGrant() bool { return ap.Outcome == Suggest }

// Validate reports whether a new request is complete enough to queue.
func (ap *Approval) Validate() error {
	switch {
	case ap.ID == "":
		return Errorf(EINVALID, "approval request has no ID")
	case ap.ActionHash.IsZero():
		return Errorf(EINVALID, "approval request %s has no action hash", ap.ID)
	case ap.Outcome != Ask && ap.Outcome != Suggest:
		return Errorf(EINVALID, "approval request %s: outcome must be ask or suggest, not %s", ap.ID, ap.Outcome)
	case ap.Timeout <= 0:
		return Errorf(EINVALID, "approval request %s has no timeout", ap.ID)
	}
	return ap.Action.validateFields()
}

// Reviewer is an authenticated person (or an admin token) resolving
// requests. Identity comes from authentication, never from a request body.
type Reviewer struct {
	Name  string `json:"name"`
	Admin bool   `json:"admin,omitempty"`
	// Groups are the groups the person's sign-in says they are in (an
	// OpenID Connect groups claim): a rule's "group:NAME" reviewer names
	// them all.
	Groups []string `json:"groups,omitempty"`
}

// namedIn reports whether the reviewer entries name r: by name, or by a
// "group:" entry of one of r's groups.
func (r Reviewer) namedIn(entries []string) bool {
	for _, e := range entries {
		if g, ok := strings.CutPrefix(e, ReviewerGroupPrefix); ok {
			if slices.Contains(r.Groups, g) {
				return true
			}
		} else if e == r.Name {
			return true
		}
	}
	return false
}

// Authorize reports whether r may resolve the request: a reviewer named by
// the rule, the agent's owner or an admin — but never the requesting agent,
// and never the person the action was requested for.
func (ap *Approval) Authorize(r Reviewer) error {
	if err := ap.authorize(r, ap.Reviewers); err != nil {
		return err
	}
	if e := ap.Edit; e != nil && e.Decision.NeedsPerson() && !r.Admin && !(r.Name == ap.Owner && ap.Owner != "") &&
		!r.namedIn(e.Decision.Reviewers) {
		who := strings.Join(e.Decision.Reviewers, ", ")
		if who == "" {
			who = "the agent's owner or an admin"
		}
		return Errorf(EUNAUTHORIZED, "%s may not approve the edited action of approval %s: it is decided %s (%s), which only %s may approve",
			r.Name, ap.ID, e.Decision.Outcome, e.Decision.Tier, who)
	}
	return nil
}

// authorize is Authorize against one list of reviewers.
func (ap *Approval) authorize(r Reviewer, reviewers []string) error {
	switch {
	case r.Name == "":
		return Errorf(EUNAUTHORIZED, "an anonymous reviewer cannot resolve approval %s", ap.ID)
	case r.Name == ap.Agent:
		return Errorf(EUNAUTHORIZED, "agent %s cannot resolve its own approval request %s", r.Name, ap.ID)
	case ap.RequestedBy != "" && r.Name == ap.RequestedBy:
		return Errorf(EUNAUTHORIZED, "%s requested this action and cannot approve it themselves (approval %s)", r.Name, ap.ID)
	case r.Admin, r.Name == ap.Owner && ap.Owner != "", r.namedIn(reviewers):
		return nil
	}
	who := append([]string(nil), reviewers...)
	if ap.Owner != "" {
		who = append(who, ap.Owner+" (owner)")
	}
	if len(who) == 0 {
		return Errorf(EUNAUTHORIZED, "%s may not resolve approval %s: only an admin may", r.Name, ap.ID)
	}
	return Errorf(EUNAUTHORIZED, "%s may not resolve approval %s: reviewers are %s, or an admin",
		r.Name, ap.ID, strings.Join(who, ", "))
}

// Resolution is a person's answer to an approval request.
type Resolution struct {
	ApprovalID string         `json:"approval_id"`
	Status     ApprovalStatus `json:"status"` // approved or rejected
	// ActionHash must echo the request's hash: a resolution binds exactly the
	// action the reviewer saw.
	ActionHash Hash     `json:"action_hash"`
	Reviewer   Reviewer `json:"reviewer"`
	Reason     string   `json:"reason,omitempty"`
	Surface    Surface  `json:"surface"`
	// RunNow asks, with an approval of a proposal, that an executor run the
	// action now (Approval.RunNow).
	RunNow bool `json:"run_now,omitempty"`
	// Edit, with an approval, is the reviewer's edit of the action's
	// arguments (NewEdit), decided again by the gate: the reviewer
	// approves the edited action, and ActionHash still echoes the action
	// the reviewer was shown.
	Edit *Edit `json:"edit,omitempty"`
	// Passkey, with an approval, is the reviewer's passkey signing it,
	// verified by the server against the reviewer's registered key
	// (package passkey) before it resolves: a request whose review needs
	// a passkey is approved with one only.
	Passkey *PasskeyAssertion `json:"passkey,omitempty"`
}

// maxReason bounds a reason so that one field cannot bloat the log.
const maxReason = 4096

// Validate checks the resolution's own fields.
func (r *Resolution) Validate() error {
	switch {
	case r.ApprovalID == "":
		return Errorf(EINVALID, "resolution names no approval")
	case r.Status != StatusApproved && r.Status != StatusRejected:
		return Errorf(EINVALID, "resolution status must be approved or rejected, not %q", r.Status)
	case r.ActionHash.IsZero():
		return Errorf(EINVALID, "resolution of %s must echo the action hash it approves", r.ApprovalID)
	case !r.Surface.Valid():
		return Errorf(EINVALID, "unknown surface %q", r.Surface)
	case len(r.Reason) > maxReason || !utf8.ValidString(r.Reason):
		return Errorf(EINVALID, "reason must be valid UTF-8 of at most %d bytes", maxReason)
	}
	return nil
}

// Check verifies a resolution against the stored request at the moment it
// would apply; stores call it inside their write transaction. It returns
// ECONFLICT when the request is no longer pending (naming who resolved it),
// CodeHashMismatch when the echoed hash differs, and EUNAUTHORIZED when
// the reviewer may not resolve it.
func (r *Resolution) Check(ap *Approval, now time.Time) error {
	if err := r.Validate(); err != nil {
		return err
	}
	// Whoever may resolve the request may reject it; approving an edit
	// also takes the reviewers its decision names (Authorize).
	authorize := ap.Authorize
	if r.Status == StatusRejected {
		authorize = func(rv Reviewer) error { return ap.authorize(rv, ap.Reviewers) }
	}
	if err := authorize(r.Reviewer); err != nil {
		return err
	}
	if ap.NeedsHuman && r.Status == StatusApproved && r.Surface == SurfaceSystem {
		return Errorf(EUNAUTHORIZED, "approval %s is needs-human: only a person can approve it, not the system", ap.ID)
	}
	if _, h := ap.Runs(); r.ActionHash != h {
		if ap.Edit != nil && r.ActionHash == ap.ActionHash {
			return Errorf(CodeHashMismatch, "approval %s was edited by %s: what runs now is action sha256:%s, not the original sha256:%s; reload it and review the edit",
				ap.ID, ap.Edit.By, h, r.ActionHash)
		}
		return Errorf(CodeHashMismatch, "approval %s is for action sha256:%s, not sha256:%s: reload it and review what it now holds",
			ap.ID, h, r.ActionHash)
	}
	if ap.Status != StatusPending {
		return ap.settled()
	}
	if !now.Before(ap.Expires) {
		return Errorf(ECONFLICT, "approval %s expired at %s", ap.ID, ap.Expires.Format(time.RFC3339))
	}
	switch {
	case r.RunNow && r.Status != StatusApproved:
		return Errorf(EINVALID, "run now goes with an approval, not a rejection")
	case r.RunNow && ap.Outcome == Ask:
		return Errorf(EINVALID, "approval %s is an ask: the agent waiting on it runs it once approved; run now is for a proposal", ap.ID)
	case r.Edit != nil:
		if err := r.checkEdit(ap); err != nil {
			return err
		}
	}
	next := *ap
	if r.Edit != nil {
		next.Edit = r.Edit
	}
	if r.Status == StatusApproved && next.NeedsPasskey() && r.Passkey == nil {
		return Errorf(EUNAUTHORIZED, "approval %s needs %s's passkey: approve it in the inbox, on the device that holds it", ap.ID, r.Reviewer.Name)
	}
	if v := ap.VoteOf(r.Reviewer.Name); v != nil && (r.Edit == nil || v.Status == StatusRejected) {
		return Errorf(ECONFLICT, "%s already %s approval %s at %s: %s", r.Reviewer.Name, v.Status, ap.ID,
			v.At.UTC().Format(time.RFC3339), ap.standing())
	}
	return nil
}

// checkEdit checks an edit that comes with a resolution: an approval of an
// ask, by a person the edited action's decision lets approve it, of an
// action the policy does not refuse.
func (r *Resolution) checkEdit(ap *Approval) error {
	e := r.Edit
	switch {
	case r.Status != StatusApproved:
		return Errorf(EINVALID, "an edit goes with an approval: reject the request instead of editing it")
	case ap.Outcome != Ask:
		return Errorf(EINVALID, "approval %s is a proposal (%s): its agent is not waiting to receive an edit; reject it, or approve it as it is",
			ap.ID, ap.Detail.AutonomyClass)
	case r.Surface == SurfaceSystem:
		return Errorf(EUNAUTHORIZED, "only a person edits an action")
	case e.ActionHash.IsZero() || e.Decision.Outcome == 0:
		return Errorf(EINVALID, "the edit of approval %s was not decided by the gate", ap.ID)
	case e.Decision.Refuses():
		return Errorf(EUNAUTHORIZED, "the edited action is %s by %s: an edit cannot turn a request into what the policy refuses",
			map[Outcome]string{Deny: "denied", Shadow: "shadowed"}[e.Decision.Outcome], cmp.Or(e.Decision.Rule, "the policy"))
	}
	next := *ap
	next.Edit = e
	return next.Authorize(r.Reviewer)
}

// standing says where a pending request's review stands: who approved,
// and how many more it needs.
func (ap *Approval) standing() string {
	who := ap.Approvers()
	if len(who) == 0 {
		return fmt.Sprintf("it needs %d approval(s) from other reviewers", ap.Needed())
	}
	return fmt.Sprintf("approved by %s; it needs %d more from other reviewers", strings.Join(who, ", "), ap.Remaining())
}

// settled is the conflict returned when a request was already resolved.
func (ap *Approval) settled() error {
	if who := ap.Approvers(); ap.Status == StatusApproved && len(who) > 1 {
		return Errorf(ECONFLICT, "approval %s was already approved by %s (the last at %s)", ap.ID, strings.Join(who, ", "),
			ap.ResolvedAt.Format(time.RFC3339))
	}
	if ap.ResolvedBy != "" {
		return Errorf(ECONFLICT, "approval %s was already %s by %s at %s", ap.ID, ap.Status, ap.ResolvedBy,
			ap.ResolvedAt.Format(time.RFC3339))
	}
	return Errorf(ECONFLICT, "approval %s is already %s", ap.ID, ap.Status)
}

// Apply records a checked resolution (or expiry, or cancellation) on the
// request, and sets the grant's deadline for an approved proposal.
func (ap *Approval) apply(status ApprovalStatus, by string, reason string, s Surface, now time.Time) {
	ap.Status, ap.ResolvedBy, ap.Reason, ap.Surface, ap.ResolvedAt = status, by, reason, s, now
	if status == StatusApproved && ap.IsGrant() {
		ap.GrantExpires = now.Add(ap.GrantTTL)
	}
}

// Resolve applies a resolution checked with Check and returns what the
// store must append in the same transaction. A person's answer is a vote: the request settles with the vote that
// meets its review (the N-th approval, or the rejection that rejects),
// and the votes before it are each an EventApprovalVoted. An edit replaces
// the action that runs: the approvals of the action before it no longer
// count.
func (ap *Approval) Resolve(r *Resolution, now time.Time) Record {
	if r.Edit != nil {
		e := *r.Edit
		e.By, e.At = r.Reviewer.Name, now
		ap.Edit = &e
	}
	_, h := ap.Runs()
	v := Vote{By: r.Reviewer.Name, Status: r.Status, ActionHash: h, At: now, Surface: r.Surface, Reason: r.Reason, Admin: r.Reviewer.Admin}
	if r.Status == StatusApproved {
		v.Passkey = r.Passkey
	}
	ap.Votes = append(ap.Votes, v)
	if r.Status == StatusApproved && len(ap.Approvers()) < ap.Needed() ||
		r.Status == StatusRejected && len(ap.Rejecters()) < ap.RejectionsNeeded() {
		return ap.voteRecord(r, h)
	}
	ap.apply(r.Status, r.Reviewer.Name, r.Reason, r.Surface, now)
	ap.RunNow = r.RunNow && r.Status == StatusApproved
	return ap.changed(EventApprovalResolved, r.Reviewer.Admin)
}

// voteRecord is the record of a vote that leaves the request pending.
func (ap *Approval) voteRecord(r *Resolution, h Hash) Record {
	p := ApprovalVote{
		ID: ap.ID, Status: r.Status, ActionHash: h, By: r.Reviewer.Name, Admin: r.Reviewer.Admin, Reason: r.Reason,
		Surface: r.Surface, Approvals: len(ap.Approvers()), Needed: ap.Needed(), Rejections: len(ap.Rejecters()),
	}
	if r.Status == StatusApproved {
		p.Passkey = r.Passkey
	}
	if r.Edit != nil {
		p.Edit = ap.editRecord()
	}
	return Record{Events: []Event{NewEvent(EventApprovalVoted, &ap.Action, string(r.Status), ap.ID, p)}}
}

// Expire marks a pending request whose deadline passed as expired and
// returns what the store must append.
func (ap *Approval) Expire(now time.Time) Record {
	ap.apply(StatusExpired, "", "deadline passed", SurfaceSystem, now)
	return ap.changed(EventApprovalExpired, false)
}

// Cancel withdraws a pending request and returns what the store must
// append. by is who cancelled it ("" when the system did, e.g. because the
// blocked caller went away).
func (ap *Approval) Cancel(by, reason string, s Surface, now time.Time) Record {
	ap.apply(StatusCancelled, by, reason, s, now)
	return ap.changed(EventApprovalCancelled, false)
}

// CheckCancel reports whether the request can be cancelled now.
func (ap *Approval) CheckCancel() error {
	if ap.Status != StatusPending {
		return ap.settled()
	}
	return nil
}

// changed builds the event and the notices of a settled request: the
// agent's owner and the person who asked for the action (when different)
// are told the result.
func (ap *Approval) changed(kind string, admin bool) Record {
	ev := NewEvent(kind, &ap.Action, string(ap.Status), ap.ID, ApprovalChange{
		ID: ap.ID, Status: ap.Status, ActionHash: ap.ActionHash, Class: ap.Class, Tool: ap.Tool,
		By: ap.ResolvedBy, Admin: admin, Reason: ap.Reason, Surface: ap.Surface,
		Waited: Duration(ap.ResolvedAt.Sub(ap.Created)), GrantUntil: ap.GrantExpires, RunNow: ap.RunNow,
		Edit: ap.editRecord(), Approvers: ap.quorumApprovers(), Passkey: ap.lastPasskey(),
	})
	rec := Record{Events: []Event{ev}}
	if ap.Outcome == Ask {
		// The person's (or the deadline's) verdict on a blocking request is
		// the trust record of the decision that asked, written once with it
		// whoever waits, reconnects or has gone.
		rec.Trust = []TrustRecord{ap.trustRecord()}
	}
	// The notice goes out even when nobody is left to tell (the owner
	// resolved it): a chat message that showed the request shows its end.
	rec.Notifications = []Notification{{
		Recipients: ap.recipients(), Reviewers: ap.reviewers(), Route: ap.Detail.Notify, Kind: kind,
		Agent: ap.Agent, ApprovalID: ap.ID, Subject: "approval " + string(ap.Status) + ": " + ap.Summary,
	}}
	return rec
}

// lastPasskey is the passkey assertion of the vote that settled the
// request, if it carried one.
func (ap *Approval) lastPasskey() *PasskeyAssertion {
	if len(ap.Votes) == 0 || ap.Status != StatusApproved {
		return nil
	}
	return ap.Votes[len(ap.Votes)-1].Passkey
}

// quorumApprovers lists who approved an approved request that needed
// more than one person; nil otherwise (By says who).
func (ap *Approval) quorumApprovers() []string {
	if ap.Status != StatusApproved || ap.Needed() < 2 {
		return nil
	}
	return ap.Approvers()
}

// trustRecord is the outcome of a settled ask request for the agent.
func (ap *Approval) trustRecord() TrustRecord {
	out, label, code := AskResult(ap.Status)
	return TrustRecord{
		Agent: ap.Agent, Class: Class(ap.Class), Outcome: out, Tier: ap.Tier, TraceID: ap.TraceID,
		Label: label, Tool: ap.Tool, AutonomyClass: ap.Detail.AutonomyClass, Code: code,
		Args: ap.Args, ApprovalID: ap.ID,
	}
}

// AskResult maps a settled ask request to its trust outcome, label and
// refusal code.
func AskResult(s ApprovalStatus) (TrustOutcome, string, string) {
	switch s {
	case StatusApproved:
		return TrustSuccess, LabelApprovalGranted, ""
	case StatusRejected:
		return TrustDenied, LabelApprovalRejected, CodeRejected
	case StatusExpired:
		return TrustTimeout, LabelApprovalTimeout, CodeTimeout
	default:
		return TrustDenied, LabelApprovalCancelled, CodeCancelled
	}
}

// recipients are the people told about the request's result.
func (ap *Approval) recipients() []string {
	var to []string
	for _, p := range []string{ap.Owner, ap.RequestedBy} {
		if p != "" && p != ap.ResolvedBy && !slices.Contains(to, p) {
			to = append(to, p)
		}
	}
	return to
}

// reviewers returns who may resolve the request by name: its reviewers and
// the agent's owner; "" (the admins) when there is neither.
func (ap *Approval) reviewers() []string {
	who := slices.Clone(ap.Reviewers)
	if ap.Owner != "" && !slices.Contains(who, ap.Owner) {
		who = append(who, ap.Owner)
	}
	if len(who) == 0 {
		return []string{""}
	}
	return who
}

// Requested returns what a store appends when it queues a new request: its
// event, and the notice that tells its reviewers it waits. (A request
// joined by an identical action is not requested again: no second notice.)
func (ap *Approval) Requested() Record {
	ev := NewEvent(EventApprovalRequested, &ap.Action, ap.Outcome.String(), ap.ID, ap)
	who := ap.reviewers()
	return Record{Events: []Event{ev}, Notifications: []Notification{{
		Recipients: who, Reviewers: who, Route: ap.Detail.Notify, Kind: EventApprovalRequested,
		Agent: ap.Agent, ApprovalID: ap.ID, Subject: "approval requested: " + ap.Summary,
	}}}
}

// UseGrant marks an approved request as used (a proposal's grant, or an
// ask's collection) and returns the event the store must append with it.
func (ap *Approval) UseGrant(now time.Time) Record {
	ap.GrantUsed = now
	_, h := ap.Runs()
	ev := NewEvent(EventGrantUsed, &ap.Action, string(ap.Status), ap.ID, ApprovalChange{
		ID: ap.ID, Status: ap.Status, ActionHash: h, Class: ap.Class, Tool: ap.Tool,
		By: ap.ResolvedBy, Surface: ap.Surface, Waited: Duration(now.Sub(ap.Created)), GrantUntil: ap.GrantExpires,
	})
	return Record{Events: []Event{ev}}
}

// Collect marks an approved ask request as used by the check it released,
// at now, and returns the event the store must append with it. An
// approval releases one check: a second collection, one after the
// request's deadline, or of a request not approved, is refused. Errors:
// ECONFLICT (with when and why), CodeUsed (collected already), CodeTimeout
// (past the deadline).
func (ap *Approval) Collect(now time.Time) (Record, error) {
	switch {
	case ap.Outcome != Ask:
		return Record{}, Errorf(ECONFLICT, "approval %s is a proposal: it is used by retrying the action", ap.ID)
	case ap.Status != StatusApproved:
		return Record{}, Errorf(ECONFLICT, "approval %s is %s, not approved", ap.ID, ap.Status)
	case !ap.GrantUsed.IsZero():
		return Record{}, Errorf(CodeUsed, "approval %s already released a check at %s", ap.ID, ap.GrantUsed.UTC().Format(time.RFC3339))
	case now.After(ap.Expires):
		return Record{}, Errorf(CodeTimeout, "approval %s was not collected before its deadline %s", ap.ID, ap.Expires.UTC().Format(time.RFC3339))
	}
	return ap.UseGrant(now), nil
}

// ApprovalFilter selects approval requests. Zero fields match everything.
type ApprovalFilter struct {
	Status []ApprovalStatus
	Agent  string
	// Class matches the request's class with or without the needs-human
	// suffix.
	Class   string
	Tool    string
	MinTier RiskTier
	// CreatedBefore and CreatedAfter bound the request's age.
	CreatedBefore time.Time
	CreatedAfter  time.Time
	ActionHash    Hash
	EffectHash    Hash
	// Search keeps the requests whose ID, agent, tool, class, trace or
	// summary contains it, ignoring ASCII case.
	Search string
	// IDPrefix keeps the requests whose ID starts with it, ignoring ASCII
	// case: a person names a request by the first characters of its ID,
	// as git names a commit.
	IDPrefix string
	// Oldest lists the oldest first; the default is newest first.
	Oldest bool
	// ByDeadline lists the request whose deadline comes first (the most
	// urgent) first; it takes precedence over Oldest.
	ByDeadline bool
	// BySettled lists settled requests only, the most recently settled
	// first (Oldest: the first settled first); it takes precedence over
	// ByDeadline.
	BySettled bool
	// Cursor continues a listing where the previous page ended (NextCursor).
	Cursor string
	Limit  int
}

// ApprovalPage is one page of requests.
type ApprovalPage struct {
	Approvals []Approval `json:"approvals"`
	// NextCursor continues the listing; "" on the last page.
	NextCursor string `json:"next_cursor,omitempty"`
}

// Duration is a time.Duration that reads and writes as "1m30s" in JSON.
type Duration time.Duration

// MarshalText implements encoding.TextMarshaler.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return Errorf(EINVALID, "invalid duration %q", b)
	}
	*d = Duration(v)
	return nil
}

// marshalJSON is json.Marshal for Airlock's own types, which always
// marshal.
func marshalJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic("airlock: " + err.Error())
	}
	return b
}

// Decision rebuilds, from the request, the decision that queued it: what a
// caller resuming the wait gets back.
func (ap *Approval) Decision() Decision {
	return Decision{
		Outcome: ap.Outcome, NeedsHuman: ap.NeedsHuman, Action: ap.Action, ActionHash: ap.ActionHash,
		Classification: Classification{Class: Class(strings.TrimSuffix(ap.Class, NeedsHumanSuffix)), Tier: ap.Tier, Capability: ap.Capability},
		Source:         ap.Detail.Rule, Reviewers: ap.Reviewers, Owner: ap.Owner, Timeout: ap.Timeout,
	}
}

// ReadableArgs renders arguments for a person to review: indented, as the
// same JSON value, with the \u escapes in its strings written as the
// characters they stand for (a reviewer reads "a && b", not
// "a \u0026\u0026 b"), except where JSON needs them. ok is false when args
// is not valid JSON: text is then args as they are. Either way the caller
// must still make control and bidi characters visible.
func ReadableArgs(args json.RawMessage) (text string, ok bool) {
	var buf bytes.Buffer
	if err := json.Indent(&buf, args, "", "  "); err != nil {
		return string(args), false
	}
	return string(readableJSON(buf.Bytes())), true
}

// readableJSON rewrites the \u escapes in the strings of valid JSON as the
// characters they stand for, where JSON allows them literally. The result
// is the same JSON value.
func readableJSON(b []byte) []byte {
	out := make([]byte, 0, len(b))
	inString := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '"':
			inString = !inString
		case c == '\\' && inString:
			if r, n := jsonEscape(b[i:]); n > 0 && r >= 0x20 && r != '"' && r != '\\' {
				out = utf8.AppendRune(out, r)
				i += n - 1
				continue
			}
			// Any other escape, \" and \\ among them, stays as it is.
			out = append(out, c)
			if i+1 < len(b) {
				i++
				out = append(out, b[i])
			}
			continue
		}
		out = append(out, c)
	}
	return out
}

// jsonEscape decodes the \uXXXX escape (or surrogate pair) at the start of
// b, returning its rune and length, or 0 when there is none.
func jsonEscape(b []byte) (rune, int) {
	hex4 := func(b []byte) (rune, bool) {
		if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
			return 0, false
		}
		v, err := strconv.ParseUint(string(b[2:6]), 16, 16)
		return rune(v), err == nil
	}
	r, ok := hex4(b)
	switch {
	case !ok:
		return 0, 0
	case !utf16.IsSurrogate(r):
		return r, 6
	}
	if lo, ok := hex4(b[6:]); ok {
		if pair := utf16.DecodeRune(r, lo); pair != utf8.RuneError {
			return pair, 12
		}
	}
	return 0, 0 // a lone surrogate: keep it escaped
}

// ApprovalWithRuns is a request with the runs of its action that kept a
// result: an approved proposal an executor ran now (run_now) carries what
// it returned.
type ApprovalWithRuns struct {
	Approval
	Runs []Execution `json:"runs,omitempty" doc:"The runs of the request's action that kept what it returned (an executor running an approved proposal now), oldest first."`
}

// HiddenCount is how many hidden characters one field holds.
type HiddenCount struct {
	Field string
	N     int
}

// Hidden counts, per field the agent sent, the characters of the request
// shown as escapes (control, format, bidirectional, invisible; package
// visible), its arguments as pretty-printed: what the inbox warns of above
// a request, and `airlock approvals show` as well, so that a reviewer in a
// terminal is told what one in a browser is. total sums them.
func (ap *Approval) Hidden() (counts []HiddenCount, total int) {
	for _, f := range []struct {
		name, text string
		lines      bool
	}{
		{"arguments", readableOrNone(ap.Args), true}, {"agent's reason", ap.Detail.Reason, false}, {"tool", ap.Tool, false}, {"agent", ap.Agent, false},
		{"working directory", ap.Cwd, false}, {"summary", ap.Summary, false}, {"requested by", ap.RequestedBy, false},
		{"session", ap.SessionID, false}, {"trace", ap.TraceID, false}, {"call", ap.CallID, false},
	} {
		if n := visible.Count(f.text, f.lines); n > 0 {
			counts = append(counts, HiddenCount{Field: f.name, N: n})
			total += n
		}
	}
	return counts, total
}

// readableOrNone is the arguments as a reviewer reads them, "(none)" for
// none.
func readableOrNone(args json.RawMessage) string {
	if len(args) == 0 {
		return "(none)"
	}
	text, _ := ReadableArgs(args)
	return text
}

// Batchable reports whether ap may be approved in a batch, with others of
// its shape (docs/INBOX.md, "Batch review"): a pending request of the read
// or write tier that no needs-human tag applies to, with an effect hash.
// Network egress, spending, destructive and privileged actions are always
// approved one by one.
func (ap *Approval) Batchable() bool {
	return ap.Status == StatusPending && ap.Tier >= TierRead && ap.Tier <= TierWrite && ap.Review.IsZero() && ap.Edit == nil &&
		!ap.NeedsHuman && !ap.Detail.RequiresHuman && !strings.HasSuffix(ap.Class, NeedsHumanSuffix) &&
		!ap.EffectHash.IsZero()
}

// An ApprovalGroup is pending requests of one shape: one agent, one tool,
// the same shape of action (a command by its program and subcommand, a
// directory, an exact action). One decision may settle a batchable group,
// each request still bound to its own action hash and audited as its own
// resolution.
type ApprovalGroup struct {
	Agent string       `json:"agent"`
	Tool  string       `json:"tool"`
	Shape GrantPattern `json:"shape"`
	// Batchable is false for a request that is approved on its own
	// (Approval.Batchable): it is then alone in its group.
	Batchable bool       `json:"batchable"`
	Approvals []Approval `json:"approvals"`
}

// ApprovalGroups is the pending requests, grouped, the largest group
// first.
type ApprovalGroups struct {
	Groups []ApprovalGroup `json:"groups"`
}

// Rememberable reports whether approving ap may also remember it: an ask
// of a read, write or network-egress action that no needs-human tag
// applies to (docs/POLICY.md, "Grants"). Whether the policy lets a grant
// cover it is the gate's to say (Gate.Remember).
func (ap *Approval) Rememberable() bool {
	return ap.Status == StatusPending && ap.Outcome == Ask && !ap.NeedsHuman && !ap.Detail.RequiresHuman && ap.Tier <= TierNetworkEgress &&
		ap.Review.IsZero() && ap.Edit == nil
}
