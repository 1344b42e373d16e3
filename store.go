package airlock

import (
	"context"
	"encoding/json"
	"slices"
	"time"
)

// Record is what one enforcement step writes: audit events, trust records
// and notifications, appended atomically — all or none — and durable when
// the call returns.
type Record struct {
	Events        []Event
	Trust         []TrustRecord
	Notifications []Notification
	// Charges are taken from their budgets with the record, under the
	// store's write lock: when one would overspend its budget, nothing is
	// written and the store returns a *BudgetSpent.
	Charges []BudgetCharge
}

// Prepare checks every entry before a store begins writing, and puts each
// event's payload in the form JSON encoders write (compact, HTML-escaped):
// the chain then covers exactly the bytes an export carries, so an exported
// log re-verifies byte for byte.
func (r *Record) Prepare() error {
	r.Events = slices.Clone(r.Events) // the caller's events stay as they were
	if err := validateCharges(r.Charges); err != nil {
		return err
	}
	for i := range r.Events {
		e := &r.Events[i]
		if e.encoded && e.Kind != "" {
			continue
		}
		if err := e.Validate(); err != nil {
			return err
		}
		p, err := json.Marshal(e.Payload)
		if err != nil {
			return Errorf(EINVALID, "event %s: payload: %v", e.Kind, err)
		}
		e.Payload = p
	}
	for i := range r.Trust {
		if seq := r.Trust[i].EventSeq; seq < 0 {
			return Errorf(EINVALID, "trust record of %s: event_seq %d is negative", r.Trust[i].Agent, seq)
		}
	}
	for i := range r.Notifications {
		n := &r.Notifications[i]
		switch {
		case n.Kind == "":
			return Errorf(EINVALID, "notification has no kind")
		case n.EventSeq < 0:
			return Errorf(EINVALID, "notification %s: event_seq %d is negative", n.Kind, n.EventSeq)
		}
	}
	return nil
}

// Rows returns the trust records and deliveries a store writes with r, at
// now, once it has sealed r's events as sealed (none when r has none): each
// is linked to approvalID when set and it names none, and to the first
// event (EventSeq) unless it names another. A trust record of a decision
// or proposal event keeps no copy of the arguments the event carries. Each
// notice is expanded into its deliveries by router (nil: kept as one), new
// and due now unless it says when, with a fresh idempotency key; a notice
// queued with its event is routed with the event's payload and keeps no
// copy of it (a notifier reads it by EventSeq).
func (r *Record) Rows(sealed []Event, approvalID string, now time.Time, router Router) ([]TrustRecord, []Notification) {
	var seq int64
	argsInEvent := false
	if len(sealed) > 0 {
		seq = sealed[0].Seq
		argsInEvent = sealed[0].Kind == EventDecision || sealed[0].Kind == EventProposal
	}
	trust := make([]TrustRecord, 0, len(r.Trust))
	for _, t := range r.Trust {
		t.Time = now
		if argsInEvent && t.EventSeq == 0 {
			t.Args = nil
		}
		if approvalID != "" && t.ApprovalID == "" {
			t.ApprovalID = approvalID
		}
		if t.EventSeq == 0 {
			t.EventSeq = seq
		}
		trust = append(trust, t)
	}
	var notes []Notification
	for _, n := range r.Notifications {
		if approvalID != "" && n.ApprovalID == "" {
			n.ApprovalID = approvalID
		}
		if n.EventSeq == 0 && len(sealed) > 0 {
			n.EventSeq = seq
		}
		ofEvent := n.Payload == nil && len(sealed) > 0
		if ofEvent {
			n.Payload = sealed[0].Payload
		}
		ds := []Notification{n}
		if router != nil {
			ds = router.Route(n)
		}
		for _, d := range ds {
			if ofEvent {
				d.Payload = nil
			}
			d.ID, d.Created, d.Status, d.Attempts = 0, now, NotificationPending, 0
			if d.Key == "" {
				d.Key = newDeliveryKey()
			}
			if d.Due.IsZero() {
				d.Due = now
			}
			notes = append(notes, d)
		}
	}
	return trust, notes
}

// AuditLog is the append-only event log. It has no way to change or remove
// an event: a store may only add to it and read it.
type AuditLog interface {
	// Append writes rec atomically and returns its events with their
	// sequence numbers, times and hashes. It returns only once they are
	// durable. Errors: EINVALID (a malformed event), EUNAVAILABLE.
	Append(ctx context.Context, rec Record) ([]Event, error)
	// Events returns a page of events in sequence order.
	Events(ctx context.Context, f EventFilter) ([]Event, error)
	// Head returns the sequence number of the last event, 0 for an empty
	// log. Errors: EUNAVAILABLE.
	Head(ctx context.Context) (int64, error)
	// WaitEvents blocks until the log holds an event with a sequence number
	// greater than after, or ctx ends. Errors: EUNAVAILABLE, ctx.Err().
	WaitEvents(ctx context.Context, after int64) error
	// Verify checks the whole chain and reports the first bad sequence
	// number. A broken chain is a report, not an error; an error means the
	// log could not be read (EUNAVAILABLE).
	Verify(ctx context.Context) (ChainReport, error)
}

// ApprovalStore keeps approval requests. Every change to a request appends
// its audit events in the same transaction.
type ApprovalStore interface {
	// RequestApproval queues ap (its ID, action, hash and timeout set) and
	// appends rec with it; the store sets Created and Expires from its
	// clock. When a request for the same action hash is already pending, ap
	// joins it instead: the existing request is returned with joined true,
	// and rec's events and trust records are linked to it. A new request
	// takes rec's charges (a join takes none), or is refused with a
	// *BudgetSpent before anything is written. Errors: EINVALID,
	// EUNAVAILABLE.
	RequestApproval(ctx context.Context, ap Approval, rec Record) (got Approval, joined bool, err error)
	// ResolveApproval applies a person's resolution exactly once. Errors:
	// ENOTFOUND, ECONFLICT (already resolved, expired: the message says by
	// whom), CodeHashMismatch, EUNAUTHORIZED, EINVALID, EUNAVAILABLE.
	ResolveApproval(ctx context.Context, r Resolution) (Approval, error)
	// CancelApproval withdraws a pending request. by is "" when the system
	// cancels it. Errors: ENOTFOUND, ECONFLICT, EUNAVAILABLE.
	CancelApproval(ctx context.Context, id, by, reason string, s Surface) (Approval, error)
	// ExpireApproval expires one request if its deadline has passed on the
	// store's clock, and returns it as it stands (still pending when the
	// deadline is ahead, or resolved meanwhile). Errors: ENOTFOUND,
	// EUNAVAILABLE.
	ExpireApproval(ctx context.Context, id string) (Approval, error)
	// ExpireDue expires up to limit pending requests whose deadline passed,
	// auditing each, and returns them.
	ExpireDue(ctx context.Context, limit int) ([]Approval, error)
	// EscalateDue takes the next escalation step (Approval.Escalate) of up
	// to limit pending requests whose step is due, auditing each and
	// telling the people it adds, and returns them.
	EscalateDue(ctx context.Context, limit int) ([]Approval, error)
	// UseGrant consumes the approved, unused, unexpired proposal for this
	// action hash and agent, appending rec with it: it succeeds at most once
	// per grant. Errors: ENOTFOUND (no usable grant), EUNAVAILABLE.
	UseGrant(ctx context.Context, agent string, h Hash, rec Record) (Approval, error)
	// CollectApproval marks an approved ask request as used by the one
	// check it releases (Approval.Collect), appending rec with it: it
	// succeeds at most once per request. Errors: ENOTFOUND, ECONFLICT,
	// CodeUsed, CodeTimeout, EUNAVAILABLE.
	CollectApproval(ctx context.Context, id string, rec Record) (Approval, error)
	// CollectableApproval returns an approved ask request for this action
	// hash and agent that no check has collected and whose deadline has not
	// passed on the store's clock (of several, the one due first), for an
	// identical check to collect with CollectApproval. It writes nothing.
	// Errors: ENOTFOUND (none), EUNAVAILABLE.
	CollectableApproval(ctx context.Context, agent string, h Hash) (Approval, error)
	// Approval returns one request. Errors: ENOTFOUND, EUNAVAILABLE.
	Approval(ctx context.Context, id string) (Approval, error)
	// FindApprovals returns a page of requests. Errors: EINVALID (a bad
	// cursor), EUNAVAILABLE.
	FindApprovals(ctx context.Context, f ApprovalFilter) (ApprovalPage, error)
	// CountApprovals returns how many requests have this status, without
	// reading them. Errors: EUNAVAILABLE.
	CountApprovals(ctx context.Context, status ApprovalStatus) (int64, error)
	// WaitApproval blocks until the request is no longer pending or ctx
	// ends, and returns it as it stands. Errors: ENOTFOUND, EUNAVAILABLE,
	// ctx.Err().
	WaitApproval(ctx context.Context, id string) (Approval, error)
}

// BudgetStore reads the budgets that records' charges take from
// (Record.Charges: every store's Append takes them, under its write lock).
type BudgetStore interface {
	// BudgetUsed returns what each charge's budget window has used at the
	// store's now, in order. Errors: EUNAVAILABLE.
	BudgetUsed(ctx context.Context, charges []BudgetCharge) ([]int64, error)
	// PruneBudgets forgets the uses no window counts any more: a grant's
	// once the grant is revoked or expired, any other's after a day.
	// It returns how many it forgot. Errors: EUNAVAILABLE.
	PruneBudgets(ctx context.Context) (int64, error)
}

// TrustStore aggregates trust records.
type TrustStore interface {
	// TrustSummaries returns the aggregates per agent × class, ordered by
	// agent then class.
	TrustSummaries(ctx context.Context, f TrustFilter) ([]TrustSummary, error)
}

// NotificationQueue is the outbox of deliveries to people: notices written
// with the events that cause them, expanded by the Router into one delivery
// per channel, delivered at least once by a notifier.
type NotificationQueue interface {
	// SetRouter sets how notices are expanded into deliveries from now on;
	// nil keeps each notice as one delivery for no channel. Safe to call
	// at any time (a configuration reload).
	SetRouter(Router)
	// ClaimNotifications leases up to limit due deliveries, oldest due
	// first, and counts an attempt for each; one whose lease runs out
	// unmarked is due again. Errors: EINVALID, EUNAVAILABLE.
	ClaimNotifications(ctx context.Context, limit int, lease time.Duration) ([]Notification, error)
	// MarkNotification records an attempt — sent, failed (due again at
	// a.Retry), dead (failed, no retry) or dropped — and audits it,
	// atomically. Errors: ENOTFOUND, ECONFLICT (already settled).
	MarkNotification(ctx context.Context, id int64, a Attempt) error
	// MarkNotifications records several attempts in one transaction, as
	// MarkNotification does each; a mark for a delivery that is missing,
	// already settled (another worker recorded it) or claimed again since
	// (NotificationMark.Claim) is skipped. Errors: EUNAVAILABLE.
	MarkNotifications(ctx context.Context, marks []NotificationMark) error
	// RetryNotification makes a failed or dead delivery due now with a
	// fresh count of attempts, audited as by's. Errors: ENOTFOUND,
	// ECONFLICT (not failed or dead, or an attempt is under way).
	RetryNotification(ctx context.Context, id int64, by string) (Notification, error)
	// Notification returns one delivery. Errors: ENOTFOUND.
	Notification(ctx context.Context, id int64) (Notification, error)
	// Notifications lists deliveries, newest first.
	Notifications(ctx context.Context, f NotificationFilter) ([]Notification, error)
	// DeliveriesQueued returns a channel closed when a delivery is next
	// queued in this process, and a func that ends the subscription.
	DeliveriesQueued() (<-chan struct{}, func())
}

// TokenStore keeps the API's bearer tokens: only the hash of each secret.
// Creation and revocation are audited in the same transaction.
type TokenStore interface {
	// CreateToken stores t (its ID set, valid for its role) under the hash
	// of its secret; the store sets Created from its clock. Errors:
	// EINVALID, ECONFLICT (the ID or secret hash exists), EUNAVAILABLE.
	CreateToken(ctx context.Context, t Token, secret Hash) (Token, error)
	// TokenBySecret returns the token stored under this secret hash, live
	// or not: the caller checks Live. Errors: ENOTFOUND, EUNAVAILABLE.
	TokenBySecret(ctx context.Context, secret Hash) (Token, error)
	// Tokens lists every token, revoked ones included, oldest first.
	Tokens(ctx context.Context) ([]Token, error)
	// RevokeToken revokes a live token; by is who did. Errors: ENOTFOUND,
	// ECONFLICT (already revoked), EUNAVAILABLE.
	RevokeToken(ctx context.Context, id, by string) (Token, error)
}

// ToolPinStore keeps the MCP tool definitions released to each agent
// (ToolPin). It only adds: a released definition stays released.
type ToolPinStore interface {
	// ToolPins returns the definitions released to agent for server, oldest
	// first. Errors: EUNAVAILABLE.
	ToolPins(ctx context.Context, agent, server string) ([]ToolPin, error)
	// PinTools records pins — one already recorded (same agent, server,
	// tool and hash) stays as it was — and appends rec with them,
	// atomically. Errors: EINVALID, EUNAVAILABLE.
	PinTools(ctx context.Context, pins []ToolPin, rec Record) error
}

// Session is a person's web inbox sign-in as a store keeps it, so that
// every replica recognises it: the hash of the cookie's value (never the
// value), and the hash of the token's secret, to re-check on each request
// that the token is still live.
type Session struct {
	ID      Hash   // the SHA-256 of the session cookie's value
	TokenID string // the token signed in with
	Secret  Hash   // the hash of that token's secret
	Created time.Time
	// Seen is the person's last request as last written: a server writes
	// it at most every minute or so, so it may lag by that much.
	Seen time.Time
	// Person is who a single sign-on session signed in, as the identity
	// provider said (TokenID is then "sso:" and their name, and Secret
	// zero: no token backs it); nil for a token's session.
	Person *Person
}

// Person is someone an identity provider signed in to the inbox: their
// name, role and groups from its claims, and who they are to it.
type Person struct {
	Name    string   `json:"name"`
	Role    Role     `json:"role"`
	Groups  []string `json:"groups,omitempty"`
	Issuer  string   `json:"issuer"`
	Subject string   `json:"subject"`
}

// Token is the principal the person acts as: their name and role, with
// their groups (ID "sso:" and their name).
func (p *Person) Token() Token {
	return Token{ID: "sso:" + p.Name, Role: p.Role, Name: p.Name, Groups: p.Groups, CreatedBy: p.Issuer}
}

// SessionWatcher is implemented by a store that several servers share
// (package postgres): WatchSessions returns a channel closed once a
// session may have ended, or a token been revoked, through any server —
// so that a server ends the live streams of a session signed out on
// another at once, not at its next re-check — and a func that stops the
// watch. Watch before reading what is watched.
type SessionWatcher interface {
	WatchSessions() (changed <-chan struct{}, stop func())
}

// SessionStore keeps the web inbox's sessions. They are not audited: a
// sign-in is, by the server, when it is refused. Times are the caller's;
// how long a session lives and how many one token may hold are the
// caller's rules, the store only keeps, trims and prunes.
type SessionStore interface {
	// CreateSession stores s and, in the same transaction, ends the
	// least recently used sessions of its token (the oldest Seen first,
	// then the oldest Created) so that the token holds at most perToken,
	// s among them whatever its times; it returns the IDs of those it
	// deleted. Sign-ins of one token are counted one at a time, on every
	// process on the store, so that the limit holds across replicas.
	// Errors: EINVALID (no ID, token ID or secret hash, or perToken < 1),
	// ECONFLICT (the ID exists: nothing is stored nor deleted),
	// EUNAVAILABLE.
	CreateSession(ctx context.Context, s Session, perToken int) (ended []Hash, err error)
	// Session returns the session stored under this ID hash. Errors:
	// ENOTFOUND (never created, signed out, trimmed or pruned),
	// EUNAVAILABLE.
	Session(ctx context.Context, id Hash) (Session, error)
	// TouchSession moves the session's Seen forward to seen (never back).
	// Errors: ENOTFOUND, EUNAVAILABLE.
	TouchSession(ctx context.Context, id Hash, seen time.Time) error
	// DeleteSession ends a session everywhere; one already gone is not an
	// error. Errors: EUNAVAILABLE.
	DeleteSession(ctx context.Context, id Hash) error
	// DeleteExpiredSessions deletes the sessions last seen before
	// seenBefore or created before createdBefore, and returns how many.
	// Errors: EUNAVAILABLE.
	DeleteExpiredSessions(ctx context.Context, seenBefore, createdBefore time.Time) (int64, error)
}

// Validate reports whether the session can be stored.
func (s *Session) Validate() error {
	switch {
	case s.ID.IsZero():
		return Errorf(EINVALID, "session has no id")
	case s.TokenID == "":
		return Errorf(EINVALID, "session has no token")
	case s.Person != nil && (s.Person.Name == "" || s.Person.Subject == "" || !s.Secret.IsZero()):
		return Errorf(EINVALID, "a single sign-on session needs its person's name and subject, and no token secret")
	case s.Person == nil && s.Secret.IsZero():
		return Errorf(EINVALID, "session has no token secret hash")
	}
	return nil
}

// GrantStore keeps standing grants. Every change to a grant appends its
// audit event in the same transaction.
type GrantStore interface {
	// CreateGrant stores g (its ID, scope, outcome, ceiling, expiry and
	// granter set) and appends its grant.created event; the store sets
	// Created by its clock, and refuses an expiry that is not after it.
	// Errors: EINVALID, ECONFLICT (the ID exists), EUNAVAILABLE.
	CreateGrant(ctx context.Context, g Grant) (Grant, error)
	// Grant returns one grant, revoked or expired ones included. Errors:
	// ENOTFOUND, EUNAVAILABLE.
	Grant(ctx context.Context, id string) (Grant, error)
	// Grants lists the grants f selects, newest first. Errors:
	// EUNAVAILABLE.
	Grants(ctx context.Context, f GrantFilter) ([]Grant, error)
	// RevokeGrant revokes a live grant once, by whom and why, and appends
	// its grant.revoked event. Errors: ENOTFOUND, ECONFLICT (revoked or
	// expired already), EUNAVAILABLE.
	RevokeGrant(ctx context.Context, id, by, reason string) (Grant, error)
	// ExpireGrants appends a grant.expired event for each unrevoked grant
	// whose expiry has passed by the store's clock, once per grant, at most
	// max of them, and returns those. Errors: EUNAVAILABLE.
	ExpireGrants(ctx context.Context, max int) ([]Grant, error)
}

// Store is everything the enforcer needs to make decisions durable.
// Implementations: sqlite (embedded, the default), postgres. Every store
// passes the conformance suite in package airlocktest.
type Store interface {
	AuditLog
	ApprovalStore
	TrustStore
	NotificationQueue
	TokenStore
	ToolPinStore
	SessionStore
	GrantStore
	BudgetStore
	PasskeyStore
	// Now returns the store's clock: deadlines are set and checked by it.
	Now(ctx context.Context) (time.Time, error)
	// Ready reports whether the store can record decisions now: it answers
	// reads and can commit writes. Errors: EUNAVAILABLE, saying what fails.
	Ready(ctx context.Context) error
	Close() error
}
