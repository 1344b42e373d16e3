package airlock

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"
)

// Event kinds of the audit log. A kind is a topic and a verb; consumers
// match on it, so a kind is never renamed.
const (
	EventDecision          = "decision"           // the gate decided an action
	EventProposal          = "proposal"           // a skipped action (suggest, shadow): what would have run
	EventApprovalRequested = "approval.requested" // an approval request was queued
	EventApprovalResolved  = "approval.resolved"  // a person approved or rejected a request
	EventApprovalExpired   = "approval.expired"   // a request's deadline passed
	EventApprovalCancelled = "approval.cancelled" // a request was withdrawn
	EventApprovalVoted     = "approval.voted"     // one person's answer that did not settle a request needing more
	EventApprovalEscalated = "approval.escalated" // nobody answered in time: the request's reviewers widened
	EventGrantUsed         = "grant.used"         // an approved proposal ran, once
	EventActionExecuted    = "action.executed"    // an allowed action ran (or failed)
	EventNotificationSent  = "notification.sent"
	EventNotificationFail  = "notification.failed"
	EventNotificationRetry = "notification.retried" // a person sent a failed or dead delivery again
	EventPolicyChanged     = "policy.changed"
	EventTokenCreated      = "token.created"  // a bearer token was created (never its secret)
	EventTokenRevoked      = "token.revoked"  // a bearer token was revoked
	EventAccessRefused     = "access.refused" // the API refused a caller: no token, a bad one, or not allowed

	// EventCheckpoint records a checkpoint the server signed (Checkpointer):
	// its payload holds the signed note and the verifier key.
	EventCheckpoint = "audit.checkpoint"
)

// Event is one entry of the audit log. Seq is gapless and Hash chains every
// field, the timestamp included, to the previous event: any edit, deletion,
// insertion or reordering breaks the chain at a sequence number that
// Verify names. The store assigns Seq, Time, Prev and Hash.
type Event struct {
	Seq  int64     `json:"seq"`
	Time time.Time `json:"time"`
	Kind string    `json:"kind"`

	// Headers, indexed for filtering.
	TraceID    string `json:"trace_id,omitempty"`
	Agent      string `json:"agent,omitempty"`
	Outcome    string `json:"outcome,omitempty"`
	ApprovalID string `json:"approval_id,omitempty"`

	// Payload is a JSON object; the chain covers its exact bytes.
	Payload json.RawMessage `json:"payload"`

	Prev Hash `json:"prev"`
	Hash Hash `json:"hash"`

	// encoded marks a payload Airlock marshalled itself: already a compact
	// JSON object as encoders write it, so Record.Prepare need not check it.
	encoded bool
}

// EventDomain separates event hashes from every other SHA-256 in Airlock:
// ChainHash's input begins with it.
const EventDomain = "airlock.event.v1\x00"

// ChainHash returns the hash that links e after prev: SHA-256 over the
// previous hash and every field of e, each length-prefixed so that no two
// different events encode alike. Time counts in nanoseconds since the Unix
// epoch, the precision every store keeps.
//
// The input is, in order: EventDomain, prev, Seq and the time as 8-byte
// big-endian integers, ChainHeaders, then the payload.
func (e *Event) ChainHash(prev Hash) Hash {
	var stack [512]byte
	b := append(stack[:0], EventDomain...)
	b = append(b, prev[:]...)
	b = binary.BigEndian.AppendUint64(b, uint64(e.Seq))
	b = binary.BigEndian.AppendUint64(b, uint64(e.Time.UnixNano()))
	b = e.appendHeaders(b)
	h := sha256.New()
	h.Write(b)
	h.Write(e.Payload)
	var out Hash
	h.Sum(out[:0])
	return out
}

// ChainHeaders returns the part of ChainHash's input between the time and
// the payload: the kind, trace ID, agent, outcome and approval ID, each
// after its length (a uvarint), then the payload's length. A store that
// seals events in its database hashes the rest around it.
func (e *Event) ChainHeaders() []byte { return e.appendHeaders(nil) }

func (e *Event) appendHeaders(b []byte) []byte {
	for _, s := range [...]string{e.Kind, e.TraceID, e.Agent, e.Outcome, e.ApprovalID} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return binary.AppendUvarint(b, uint64(len(e.Payload)))
}

// Seal sets e's sequence number, previous hash and hash so that it follows
// an event with sequence seq-1 and hash prev. Stores call it while holding
// the log's write lock.
func (e *Event) Seal(seq int64, prev Hash) {
	e.Seq = seq
	e.Prev = prev
	e.Hash = e.ChainHash(prev)
}

// Validate reports whether an event can be appended: a known shape, a
// payload that is a JSON object.
func (e *Event) Validate() error {
	if e.Kind == "" {
		return Errorf(EINVALID, "event has no kind")
	}
	if len(e.Payload) == 0 || e.Payload[0] != '{' || !json.Valid(e.Payload) {
		return Errorf(EINVALID, "event %s: payload must be a JSON object", e.Kind)
	}
	return nil
}

// ChainError reports the first event at which the audit log's chain breaks.
type ChainError struct {
	Seq    int64  // the first bad sequence number
	Reason string // what is wrong there
}

func (e *ChainError) Error() string {
	return fmt.Sprintf("audit log chain broken at seq %d: %s", e.Seq, e.Reason)
}

// ChainVerifier checks events one by one, in the order a store returns them
// by sequence. Its zero value expects the log to start at sequence 1.
type ChainVerifier struct {
	next int64 // the sequence number the next event must have
	prev Hash
	n    int64
}

// ResumeChain returns a verifier that continues after the event with
// sequence seq and hash h (for verifying from a trusted checkpoint).
func ResumeChain(seq int64, h Hash) *ChainVerifier {
	return &ChainVerifier{next: seq + 1, prev: h}
}

// Check verifies the next event of the log. It returns a *ChainError naming
// the first bad sequence number: a gap (deletion), an event out of order, a
// link to the wrong predecessor (insertion, reordering) or a hash that does
// not cover the event's fields (an edit).
func (v *ChainVerifier) Check(e *Event) error {
	if v.next == 0 {
		v.next = 1
	}
	switch {
	case e.Seq > v.next:
		return &ChainError{Seq: v.next, Reason: fmt.Sprintf("missing: the next event has seq %d", e.Seq)}
	case e.Seq < v.next:
		// Named by the sequence number expected here, never by the stray
		// event's own (which may be 0 or negative: not a valid report).
		return &ChainError{Seq: v.next, Reason: fmt.Sprintf("an event with seq %d is out of order after seq %d", e.Seq, v.next-1)}
	case e.Prev != v.prev:
		return &ChainError{Seq: e.Seq, Reason: "does not link to the previous event (inserted, deleted or reordered)"}
	case e.ChainHash(v.prev) != e.Hash:
		return &ChainError{Seq: e.Seq, Reason: "contents do not match its hash (edited)"}
	}
	v.prev = e.Hash
	v.next++
	v.n++
	return nil
}

// Head returns the sequence number and hash of the last event checked.
func (v *ChainVerifier) Head() (int64, Hash) { return max(v.next-1, 0), v.prev }

// Checked returns how many events passed.
func (v *ChainVerifier) Checked() int64 { return v.n }

// ChainReport is the result of verifying an audit log.
type ChainReport struct {
	// Events is how many events were verified.
	Events int64 `json:"events"`
	// HeadSeq and Head identify the last good event; record them elsewhere to
	// detect a log rewritten from scratch later (ResumeChain).
	HeadSeq int64 `json:"head_seq"`
	Head    Hash  `json:"head"`
	// FirstBad is the first bad sequence number, 0 when the chain is intact.
	FirstBad int64  `json:"first_bad,omitempty"`
	Problem  string `json:"problem,omitempty"`
}

// OK reports whether the whole log verified.
func (r ChainReport) OK() bool { return r.FirstBad == 0 }

// EventFilter selects events of the audit log, in sequence order (the
// newest first with Newest).
type EventFilter struct {
	AfterSeq int64 // only events with a greater sequence number
	// BeforeSeq, when positive, keeps only events with a smaller sequence
	// number: with Newest, it pages back through the log.
	BeforeSeq int64
	Since     time.Time
	Kind      string
	// KindPrefix keeps the events whose kind starts with it ("approval.").
	KindPrefix string
	Agent      string
	TraceID    string
	ApprovalID string
	// Newest lists the newest events first.
	Newest bool
	// Limit caps the page; 0 means 100, and no store returns more than 1000.
	Limit int
}

// Page limits shared by every store.
const (
	DefaultPageSize = 100
	MaxPageSize     = 1000
)

// PageSize returns the effective page size for a requested limit.
func PageSize(limit int) int {
	switch {
	case limit <= 0:
		return DefaultPageSize
	case limit > MaxPageSize:
		return MaxPageSize
	}
	return limit
}

// NewEvent returns an event with its payload marshalled from v. Payloads
// are built from Airlock's own types, so a marshalling failure is a bug.
func NewEvent(kind string, a *Action, outcome, approvalID string, v any) Event {
	e := Event{Kind: kind, Outcome: outcome, ApprovalID: approvalID, Payload: marshalJSON(v), encoded: true}
	if a != nil {
		e.TraceID, e.Agent = a.TraceID, a.Agent
	}
	return e
}

// EventPage is one page of the audit log.
type EventPage struct {
	Events []Event `json:"events"`
	// NextAfter continues the listing (as after); 0 on the last page.
	NextAfter int64 `json:"next_after,omitempty"`
	// NextBefore continues a newest-first listing (as before); 0 on the
	// last page.
	NextBefore int64 `json:"next_before,omitempty"`
	// Head is the sequence number of the log's last event.
	Head int64 `json:"head"`
}
