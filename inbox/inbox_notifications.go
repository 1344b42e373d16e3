package inbox

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/airlock-dev/airlock"
)

// The deliveries in the inbox: by default those that need a person — the
// dead letters and those being retried — with their last error, and for
// admins a button that sends one again.

const notificationsPageSize = 50

// NotificationsPage lists deliveries.
type NotificationsPage struct {
	Base
	// Status is the state shown: "" for those needing attention (dead,
	// failed), or one state.
	Status   string
	Statuses []string
	Rows     []airlock.Notification
	NextURL  string
	// Retried is the delivery just sent again, 0 for none.
	Retried int64
	Error   string
}

// CanRetry reports whether the signed-in person may retry deliveries.
func (p *NotificationsPage) CanRetry() bool { return p.Role == airlock.RoleAdmin }

// Retryable reports whether n may be sent again.
func (p *NotificationsPage) Retryable(n airlock.Notification) bool {
	return n.Status == airlock.NotificationDead || n.Status == airlock.NotificationFailed
}

func (in *inbox) notifications(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p := &NotificationsPage{Base: baseFor(r, "Notifications"), Status: q.Get("status"),
		Statuses: []string{"pending", "sent", "failed", "dead", "dropped"}}
	p.Retried, _ = strconv.ParseInt(q.Get("retried"), 10, 64)
	var before int64
	if b := q.Get("before"); b != "" {
		var err error
		if before, err = strconv.ParseInt(b, 10, 64); err != nil || before <= 0 {
			p.Error = "before must be a delivery ID"
			in.render(w, http.StatusBadRequest, "notifications", p)
			return
		}
	}
	statuses := []airlock.NotificationStatus{airlock.NotificationDead, airlock.NotificationFailed}
	if p.Status != "" {
		st, err := airlock.ParseNotificationStatus(p.Status)
		if err != nil {
			p.Error = airlock.ErrorMessage(err)
			in.render(w, http.StatusBadRequest, "notifications", p)
			return
		}
		statuses = []airlock.NotificationStatus{st}
	}
	for _, st := range statuses {
		ns, err := in.host.Store().Notifications(r.Context(), airlock.NotificationFilter{Status: st, BeforeID: before, Limit: notificationsPageSize + 1})
		if err != nil {
			in.storeFail(w, r, err)
			return
		}
		p.Rows = append(p.Rows, ns...)
	}
	sortNewestFirst(p.Rows)
	if len(p.Rows) > notificationsPageSize {
		p.Rows = p.Rows[:notificationsPageSize]
		v := url.Values{"before": {strconv.FormatInt(p.Rows[len(p.Rows)-1].ID, 10)}}
		if p.Status != "" {
			v.Set("status", p.Status)
		}
		p.NextURL = "/inbox/notifications?" + v.Encode()
	}
	in.render(w, http.StatusOK, "notifications", p)
}

// sortNewestFirst orders deliveries by descending ID.
func sortNewestFirst(ns []airlock.Notification) {
	for i := 1; i < len(ns); i++ {
		for j := i; j > 0 && ns[j].ID > ns[j-1].ID; j-- {
			ns[j], ns[j-1] = ns[j-1], ns[j]
		}
	}
}

// retryNotification sends a failed or dead delivery again (admins).
func (in *inbox) retryNotification(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	t := principalFrom(ctx)
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		in.fail(w, r, http.StatusNotFound, "No such notification", "notification IDs are positive numbers")
		return
	}
	if t.Role != airlock.RoleAdmin {
		msg := t.Subject() + " may not retry notifications"
		in.host.Refuse(ctx, t, "", airlock.EUNAUTHORIZED, msg)
		in.fail(w, r, http.StatusForbidden, "Not allowed", msg+": only an admin may.")
		return
	}
	if _, err := in.host.Store().RetryNotification(ctx, id, t.Name); err != nil {
		switch airlock.ErrorCode(err) {
		case airlock.ENOTFOUND:
			in.fail(w, r, http.StatusNotFound, "No such notification", airlock.ErrorMessage(err))
		case airlock.ECONFLICT:
			in.fail(w, r, http.StatusConflict, "Not sent again", airlock.ErrorMessage(err))
		default:
			in.storeFail(w, r, err)
		}
		return
	}
	http.Redirect(w, r, "/inbox/notifications?retried="+strconv.FormatInt(id, 10), http.StatusSeeOther)
}
