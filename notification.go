package airlock

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
)

// NotificationStatus is where a queued delivery stands.
type NotificationStatus string

const (
	NotificationPending NotificationStatus = "pending"
	NotificationSent    NotificationStatus = "sent"
	// NotificationFailed: the last attempt failed; another is due at Due.
	NotificationFailed NotificationStatus = "failed"
	// NotificationDead: every attempt failed; it waits for a person to
	// retry it (the dead letters).
	NotificationDead NotificationStatus = "dead"
	// NotificationDropped: there was nothing left to say when it came due
	// (a reminder of a request already settled).
	NotificationDropped NotificationStatus = "dropped"
)

// ParseNotificationStatus returns the status named s.
func ParseNotificationStatus(s string) (NotificationStatus, error) {
	switch st := NotificationStatus(s); st {
	case NotificationPending, NotificationSent, NotificationFailed, NotificationDead, NotificationDropped:
		return st, nil
	}
	return "", Errorf(EINVALID, "unknown notification status %q (valid: pending, sent, failed, dead, dropped)", s)
}

// Settled reports whether no attempt is due: sent, dead or dropped.
func (s NotificationStatus) Settled() bool {
	return s == NotificationSent || s == NotificationDead || s == NotificationDropped
}

// The kinds of notice besides the event kinds they report.
const (
	// NoticeReminder tells a request's reviewers that its deadline nears.
	NoticeReminder = "approval.reminder"
	// NoticeTest is a channel's test message (`airlock notifications test`).
	NoticeTest = "notification.test"
)

// Notification is one notice on its way to people through one channel: the
// owner told that a notify action ran, reviewers told that a request waits
// (and reminded before its deadline), the owner and the requester told how
// it ended.
//
// The enforcer and the store write notices (Channel "") with the events
// that cause them; the store's Router expands each into its deliveries,
// one per channel, in the same transaction, and a notifier delivers them
// at least once: every attempt carries the same Key.
type Notification struct {
	ID      int64     `json:"id"`
	Key     string    `json:"key"` // the idempotency key, the same on every attempt
	Created time.Time `json:"created"`
	Channel string    `json:"channel,omitempty"`
	Kind    string    `json:"kind"` // the event kind it reports, or a Notice kind
	// Recipients are the people it tells; "" stands for the admins (an
	// agent without an owner).
	Recipients []string `json:"recipients,omitempty"`
	// Reviewers are those who may resolve its request, on every notice of
	// a request: a chat room that showed the request shows its end.
	Reviewers []string `json:"reviewers,omitempty"`
	// Route names the channels a policy rule or agent chose (`notify:`);
	// empty, the channels' defaults apply.
	Route      []string `json:"route,omitempty"`
	Agent      string   `json:"agent"`
	ApprovalID string   `json:"approval_id,omitempty"`
	Subject    string   `json:"subject"`
	// Payload is the notice's own payload; a notice queued with the event
	// that causes it has none, and is delivered with that event's (the
	// event EventSeq).
	Payload  json.RawMessage `json:"payload,omitempty"`
	EventSeq int64           `json:"event_seq,omitempty"`

	Status    NotificationStatus `json:"status"`
	Attempts  int                `json:"attempts"`
	LastError string             `json:"last_error,omitempty"`
	// Due is when the next attempt may start (a reminder's moment, or a
	// retry's backoff).
	Due    time.Time `json:"due"`
	SentAt time.Time `json:"sent_at,omitzero"`
	// Ref is what the channel answered a delivery with, to update it
	// later: a Slack message's channel and timestamp, a Feishu message ID.
	Ref string `json:"ref,omitempty"`
}

// A Router expands a notice into its deliveries, one per channel that is to
// carry it (none: no channel carries it). A store applies it as it queues
// the notice, inside the transaction that records the notice's event, so
// that no event is without its deliveries and no delivery outlives a
// rolled-back event. Route must be fast and must not block: it runs under
// the store's write lock. A delivery keeps the notice's EventSeq as Route
// found it: a store may hand Route a stand-in for a seq not given yet, and
// writes the seq in its place.
type Router interface {
	Route(Notification) []Notification
}

// Attempt is the result of one delivery attempt.
type Attempt struct {
	// Err is why it failed; nil when it was delivered (or dropped).
	Err error
	// Retry is when the next attempt is due after a failure; zero: no more
	// attempts, the delivery is dead.
	Retry time.Time
	// Dropped says why there was nothing to deliver (Err nil).
	Dropped string
	// Ref is the channel's handle on what it delivered, kept on the row.
	Ref string
}

// NotificationMark is an attempt at one delivery, to record.
type NotificationMark struct {
	ID int64
	// Claim is the delivery's Attempts when it was claimed for this
	// attempt: the mark is skipped if the delivery was claimed again since
	// (a stale result). 0: not checked.
	Claim int
	Attempt
}

// NotificationFilter selects deliveries.
type NotificationFilter struct {
	Status     NotificationStatus // "": any
	Channel    string
	Kind       string
	ApprovalID string
	BeforeID   int64 // paging, newest first: IDs below this one
	Limit      int   // 0: 100
}

// Delivered returns the audit event of a delivery attempt: notification.sent
// when it was delivered, notification.failed (dead when no attempt
// follows) when not. A dropped delivery is recorded as sent, saying why.
func (n *Notification) Delivered(a Attempt) Event {
	kind, outcome := EventNotificationSent, string(NotificationSent)
	p := struct {
		ID      int64     `json:"id"`
		Key     string    `json:"key"`
		Channel string    `json:"channel"`
		Kind    string    `json:"kind"`
		To      []string  `json:"to,omitempty"`
		Attempt int       `json:"attempt"`
		Error   string    `json:"error,omitempty"`
		Retry   time.Time `json:"retry,omitzero"`
		Dead    bool      `json:"dead,omitempty"`
		Dropped string    `json:"dropped,omitempty"`
	}{ID: n.ID, Key: n.Key, Channel: n.Channel, Kind: n.Kind, To: n.Recipients, Attempt: n.Attempts, Dropped: a.Dropped}
	switch {
	case a.Err != nil:
		kind, p.Error, p.Retry = EventNotificationFail, a.Err.Error(), a.Retry
		outcome, p.Dead = string(NotificationFailed), a.Retry.IsZero()
		if p.Dead {
			outcome = string(NotificationDead)
		}
	case a.Dropped != "":
		outcome = string(NotificationDropped)
	}
	e := NewEvent(kind, nil, outcome, n.ApprovalID, p)
	e.Agent = n.Agent
	return e
}

// Settle applies attempt a, made at now, to n as a store records it — its
// status, error, due time, time sent and reference — and returns the
// attempt's audit event (Delivered).
func (n *Notification) Settle(a Attempt, now time.Time) Event {
	ev := n.Delivered(a)
	n.Status, n.LastError, n.SentAt = NotificationSent, "", now
	switch {
	case a.Err != nil && a.Retry.IsZero():
		n.Status, n.LastError, n.SentAt = NotificationDead, a.Err.Error(), time.Time{}
	case a.Err != nil:
		n.Status, n.LastError, n.Due, n.SentAt = NotificationFailed, a.Err.Error(), a.Retry, time.Time{}
	case a.Dropped != "":
		n.Status, n.LastError = NotificationDropped, a.Dropped
	}
	if a.Ref != "" {
		n.Ref = a.Ref
	}
	return ev
}

// ApplyMarks is how a store applies several marks in one transaction: it
// reads every delivery first (read; ENOTFOUND skips the mark), since a
// refusal after a write would abort the store's whole batch, then settles
// each one that is live — not settled already, its claim not superseded
// (Claim 0 or the delivery's attempts), and not marked earlier in marks.
func ApplyMarks(marks []NotificationMark, read func(id int64) (Notification, error), settle func(n *Notification, a Attempt) error) error {
	ns := make([]Notification, len(marks))
	live := make([]bool, len(marks))
	for i, m := range marks {
		n, err := read(m.ID)
		switch {
		case ErrorCode(err) == ENOTFOUND:
			continue
		case err != nil:
			return err
		}
		ns[i], live[i] = n, !n.Status.Settled() && (m.Claim == 0 || m.Claim == n.Attempts)
	}
	for i := range marks {
		if !live[i] {
			continue
		}
		if err := settle(&ns[i], marks[i].Attempt); err != nil {
			return err
		}
		for j := i + 1; j < len(marks); j++ {
			if marks[j].ID == marks[i].ID {
				live[j] = false // a second mark of it is stale
			}
		}
	}
	return nil
}

// newDeliveryKey returns a fresh idempotency key.
func newDeliveryKey() string {
	id, err := uuid.NewV7()
	if err != nil {
		id = uuid.New()
	}
	return "msg_" + strings.ReplaceAll(id.String(), "-", "")
}

// Retried returns the audit event of a person sending a dead or failed
// delivery again.
func (n *Notification) Retried(by string) Event {
	e := NewEvent(EventNotificationRetry, nil, string(NotificationPending), n.ApprovalID, struct {
		ID       int64  `json:"id"`
		Key      string `json:"key"`
		Channel  string `json:"channel"`
		By       string `json:"by"`
		Attempts int    `json:"attempts"`
	}{n.ID, n.Key, n.Channel, by, n.Attempts})
	e.Agent = n.Agent
	return e
}

// String is the delivery's state, for a log line.
func (n *Notification) String() string {
	s := fmt.Sprintf("#%d %s %s via %s", n.ID, n.Status, n.Kind, n.Channel)
	if n.LastError != "" {
		s += ": " + n.LastError
	}
	return s
}

// TestNotice returns the record of a test message through channel, asked
// for by by: an audit event and a notice that only that channel carries.
func TestNotice(by, channel string) Record {
	ev := NewEvent(NoticeTest, nil, "queued", "", struct {
		Channel string `json:"channel"`
		By      string `json:"by"`
	}{channel, by})
	return Record{Events: []Event{ev}, Notifications: []Notification{{
		Kind: NoticeTest, Route: []string{channel}, Recipients: []string{by},
		Subject: fmt.Sprintf("Airlock test message through %s, sent by %s", channel, by),
	}}}
}

// NotificationList is a page of deliveries, newest first.
type NotificationList struct {
	Notifications []Notification `json:"notifications"`
	// Next is the before= of the next page, 0 on the last one.
	Next int64 `json:"next,omitempty"`
}
