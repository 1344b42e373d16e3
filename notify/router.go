package notify

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/airlock-dev/airlock"
)

// Router expands notices into deliveries by the channels' configuration
// (airlock.Router). Its rules, after seed Clawith's:
//
//   - A webhook (Everyone) carries every notice of its kinds, whatever a
//     rule names: an audit sink is never bypassed.
//   - A notice whose rule or agent named channels (`notify:`) goes to those
//     person channels of them that carry its kind; otherwise to every
//     person channel that does.
//   - A person channel carries a notice when it maps one of the people the
//     notice tells: the owner for a notify action that ran, the reviewers
//     for a request that waits (and its reminder), the owner and the
//     requester for a request's end. A chat channel also carries the end
//     of a request it showed (it maps a reviewer, or posts to a room and
//     only admins may resolve it): the message is updated in place. A room
//     the rule named carries the notice even when it maps nobody.
//   - A request that waits is also due a reminder, RemindBefore its
//     deadline, through the same channels (when that moment is after the
//     request was made); it is dropped if the request has ended by then.
//   - A test notice goes to the channels it names, and only there.
//
// A Router is immutable; a configuration reload builds a new one.
type Router struct {
	specs []*Spec
	// remind is how long before a request's deadline its reviewers are
	// reminded; 0: never.
	remind time.Duration
}

// NewRouter returns a router over specs, reminding remind before each
// request's deadline (0: no reminders).
func NewRouter(specs []*Spec, remind time.Duration) *Router {
	return &Router{specs: slices.Clone(specs), remind: remind}
}

// Route implements airlock.Router.
func (r *Router) Route(n airlock.Notification) []airlock.Notification {
	var out []airlock.Notification
	var reminder time.Time
	if n.Kind == airlock.EventApprovalRequested && r.remind > 0 {
		reminder = r.reminderDue(n.Payload)
	}
	for _, s := range r.specs {
		if !r.carries(s, &n) {
			continue
		}
		d := n
		d.Channel, d.Route = s.Name, nil
		out = append(out, d)
		if !reminder.IsZero() && s.carries(airlock.NoticeReminder) {
			rem := d
			rem.Kind, rem.Due = airlock.NoticeReminder, reminder
			rem.Subject = "reminder: " + n.Subject
			out = append(out, rem)
		}
	}
	return out
}

// carries decides whether channel s carries notice n.
func (r *Router) carries(s *Spec, n *airlock.Notification) bool {
	named := slices.Contains(n.Route, s.Name)
	switch {
	case n.Kind == airlock.NoticeTest:
		return named
	case !s.carries(n.Kind):
		return false
	case s.Everyone:
		return true
	case len(n.Route) > 0 && !named:
		return false
	case len(s.users(n.Recipients)) > 0:
		return true
	case named && s.Room:
		return true
	case n.ApprovalID == "" || !s.Updates:
		return false
	case len(s.users(n.Reviewers)) > 0:
		return true
	}
	return s.Room && slices.Contains(n.Reviewers, "")
}

// reminderDue returns when the reviewers of the request in payload are to
// be reminded, zero when that moment is not after the request was made.
func (r *Router) reminderDue(payload json.RawMessage) time.Time {
	var ap struct {
		Created time.Time `json:"created"`
		Expires time.Time `json:"expires"`
	}
	if json.Unmarshal(payload, &ap) != nil || ap.Expires.IsZero() {
		return time.Time{}
	}
	due := ap.Expires.Add(-r.remind)
	if !due.After(ap.Created) {
		return time.Time{}
	}
	return due
}
