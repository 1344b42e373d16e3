// Package notify delivers Airlock's notices to people and lets them answer
// from where they are.
//
// The enforcer and the store queue notices with the events that cause
// them (airlock.Notification); a Router, set on the store, expands each
// into one delivery per channel inside the same transaction; a Notifier
// claims due deliveries, hands each to its Channel, and records every
// attempt — notification.sent, notification.failed — in the audit log.
// Delivery is at least once: a delivery whose worker dies is claimed
// again once its lease ends, and every attempt carries the same
// idempotency key. Failures are retried with exponential backoff and
// jitter, up to a number of attempts, then kept as dead letters that a
// person may retry.
//
// The channels live in packages of their own (notify/webhook,
// notify/slack, notify/feishu, notify/email); chat channels resolve
// requests for the people who click in them through Clicks.
package notify

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/airlock-dev/airlock"
)

// A Channel delivers notices to one destination: a webhook receiver, a
// Slack workspace, a Feishu app, a mail server.
type Channel interface {
	// Deliver sends d and returns the channel's handle on what it sent,
	// kept with the delivery ("" when there is none to keep): a chat
	// message that later notices of the same request update in place.
	// An error is retried; wrap it with Permanent when no retry can help.
	Deliver(ctx context.Context, d *Delivery) (ref string, err error)
}

// Delivery is a notice to deliver through one channel, with what a channel
// needs to say it.
type Delivery struct {
	airlock.Notification
	// Approval is the request the notice is about, as it stands when the
	// delivery is attempted; nil for a notice of no request.
	Approval *airlock.Approval
	// Shown is the Ref of this channel's delivery of the request itself
	// (its approval.requested notice): the message to update in place; ""
	// when there is none (yet).
	Shown string
	// Users are the channel's IDs of the notice's recipients that the
	// channel maps (for direct messages and mail), in the order of the
	// recipients.
	Users []string
	// Link is the request's page in the web inbox, "" when no inbox URL
	// is configured.
	Link string
}

// Spec is one configured channel: its name, what it carries and whom it
// reaches, and the Channel that delivers.
type Spec struct {
	Name string
	// Type is webhook, slack, feishu or email.
	Type string
	// Events are the kinds of notice it carries; empty: every kind.
	Events []string
	// Users maps the channel's user IDs (Slack user IDs, Feishu open_ids,
	// mail addresses) to Airlock identities.
	Users map[string]string
	// Everyone: it carries every notice of its kinds whoever it is for (a
	// webhook). Otherwise it carries a notice only to people it maps.
	Everyone bool
	// Room: it posts to a shared room (a Slack channel, a Feishu chat),
	// where the reviewers of a request see it and its end.
	Room bool
	// Updates: it updates the messages that showed a request when the
	// request ends (chat channels), so a request's end goes wherever the
	// request went, whoever is told.
	Updates bool
	Channel
}

// Kinds are the kinds of notice, for a channel's events.
var Kinds = []string{
	airlock.EventDecision, airlock.EventApprovalRequested, airlock.NoticeReminder, airlock.EventApprovalResolved,
	airlock.EventApprovalExpired, airlock.EventApprovalCancelled, airlock.EventApprovalEscalated, airlock.EventProposalDigest,
	airlock.NoticeTest,
}

// Types are the channel types.
var Types = []string{"webhook", "slack", "feishu", "email"}

// carries reports whether the channel carries notices of kind.
func (s *Spec) carries(kind string) bool {
	return kind == airlock.NoticeTest || len(s.Events) == 0 || slices.Contains(s.Events, kind)
}

// users returns the channel's IDs of the given identities, in their order;
// "" (the admins) maps to nobody.
func (s *Spec) users(names []string) []string {
	var ids []string
	for _, name := range names {
		if name == "" {
			continue
		}
		for id, who := range s.Users {
			if who == name && !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	slices.Sort(ids) // map order is random; deliveries are not
	return ids
}

// Permanent marks an error no retry can help (a rejected configuration):
// the delivery is dead at once, for a person to retry after fixing it.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanent{err}
}

type permanent struct{ error }

func (p permanent) Unwrap() error { return p.error }

// IsPermanent reports whether err was marked Permanent.
func IsPermanent(err error) bool {
	var p permanent
	return errors.As(err, &p)
}

// InboxLink returns the page of request id under the inbox's base URL
// (like https://airlock.example.com), "" when base is "".
func InboxLink(base, id string) string {
	if base == "" || id == "" {
		return ""
	}
	return strings.TrimRight(base, "/") + "/inbox/approvals/" + url.PathEscape(id)
}

// ValidateBaseURL checks an inbox base URL: absolute http(s), no query.
func ValidateBaseURL(base string) error {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%q is not an absolute http(s) URL without query (like https://airlock.example.com)", base)
	}
	return nil
}
