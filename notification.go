package airlock

import (
	"encoding/json"
	"time"
)

// NotificationStatus is where a queued notice stands.
type NotificationStatus string

const (
	NotificationPending NotificationStatus = "pending"
	NotificationSent    NotificationStatus = "sent"
	NotificationFailed  NotificationStatus = "failed" // the last attempt failed; it stays queued
)

// Notification is a notice queued for a person: the owner told that a
// notify action ran, the owner and the requester told how an approval
// request ended. Notifiers (web inbox, chat, webhooks) deliver them.
type Notification struct {
	ID         int64              `json:"id"`
	Created    time.Time          `json:"created"`
	Recipient  string             `json:"recipient"` // "" when the agent has no owner: admins
	Kind       string             `json:"kind"`      // the event kind it reports
	Agent      string             `json:"agent"`
	ApprovalID string             `json:"approval_id,omitempty"`
	Subject    string             `json:"subject"`
	Payload    json.RawMessage    `json:"payload,omitempty"`
	Status     NotificationStatus `json:"status"`
	Attempts   int                `json:"attempts"`
	LastError  string             `json:"last_error,omitempty"`
	EventSeq   int64              `json:"event_seq,omitempty"`
}

// Delivered returns the audit event of a delivery attempt.
func (n *Notification) Delivered(deliveryErr error) Event {
	kind, outcome := EventNotificationSent, string(NotificationSent)
	p := struct {
		ID        int64  `json:"id"`
		Recipient string `json:"recipient"`
		Kind      string `json:"kind"`
		Attempt   int    `json:"attempt"`
		Error     string `json:"error,omitempty"`
	}{ID: n.ID, Recipient: n.Recipient, Kind: n.Kind, Attempt: n.Attempts + 1}
	if deliveryErr != nil {
		kind, outcome, p.Error = EventNotificationFail, string(NotificationFailed), deliveryErr.Error()
	}
	e := newEvent(kind, nil, outcome, n.ApprovalID, p)
	e.Agent = n.Agent
	return e
}
