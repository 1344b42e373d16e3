package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/airlock-dev/airlock"
)

var _ airlock.NotificationQueue = (*DB)(nil)

// deliveriesKey is the hub key under which WaitDeliveries waits for new
// deliveries: no approval ID has a NUL byte.
const deliveriesKey = "\x00deliveries"

const deliveryColumns = `id, key, created, channel, kind, recipients, reviewers, agent, approval_id, subject, payload,
	event_seq, status, attempts, last_error, due, sent_at, ref`

func scanDelivery(r rowScanner, n *airlock.Notification) error {
	var created, due, sent int64
	var recipients, reviewers string
	var payload []byte
	var status string
	if err := r.Scan(&n.ID, &n.Key, &created, &n.Channel, &n.Kind, &recipients, &reviewers, &n.Agent, &n.ApprovalID,
		&n.Subject, &payload, &n.EventSeq, &status, &n.Attempts, &n.LastError, &due, &sent, &n.Ref); err != nil {
		return err
	}
	n.Created, n.Due, n.Status = fromNanos(created), fromNanos(due), airlock.NotificationStatus(status)
	if sent != 0 {
		n.SentAt = fromNanos(sent)
	}
	if len(payload) > 0 {
		n.Payload = payload
	}
	if err := json.Unmarshal([]byte(recipients), &n.Recipients); err != nil {
		return fmt.Errorf("delivery %d: recipients: %w", n.ID, err)
	}
	if err := json.Unmarshal([]byte(reviewers), &n.Reviewers); err != nil {
		return fmt.Errorf("delivery %d: reviewers: %w", n.ID, err)
	}
	return nil
}

// names encodes a list of names as a JSON array ("[]" for none).
func names(ns []string) string {
	if len(ns) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(ns) // strings always encode
	return string(b)
}

// SetRouter sets how notices are expanded into deliveries from now on (nil:
// each notice is kept as one delivery for no channel). It may be called at
// any time, from any goroutine: a configuration reload swaps it.
func (db *DB) SetRouter(r airlock.Router) {
	if r == nil {
		db.router.Store(nil)
		return
	}
	db.router.Store(&r)
}

// ClaimNotifications leases up to limit due deliveries (pending, or failed
// and due again) for lease, oldest due first, and counts an attempt for
// each. A delivery whose lease ran out unmarked (its worker died) is due
// again: that attempt counts too.
func (db *DB) ClaimNotifications(ctx context.Context, limit int, lease time.Duration) ([]airlock.Notification, error) {
	if limit <= 0 || lease <= 0 {
		return nil, airlock.Errorf(airlock.EINVALID, "claim needs a positive limit and lease")
	}
	var out []airlock.Notification
	err := db.exec(ctx, func(w *wtx) error {
		out = out[:0]
		now := w.now().UnixNano()
		rows, err := w.tx.QueryContext(ctx, `SELECT `+deliveryColumns+` FROM deliveries
			WHERE status IN ('pending', 'failed') AND due <= ? AND lease <= ? ORDER BY due, id LIMIT ?`, now, now, limit)
		if err != nil {
			return unavailable("read deliveries", err)
		}
		defer rows.Close()
		for rows.Next() {
			var n airlock.Notification
			if err := scanDelivery(rows, &n); err != nil {
				return unavailable("read deliveries", err)
			}
			out = append(out, n)
		}
		if err := rows.Err(); err != nil {
			return unavailable("read deliveries", err)
		}
		rows.Close()
		until := now + int64(lease)
		for i := range out {
			if _, err := w.exec(`UPDATE deliveries SET lease = ?, attempts = attempts + 1 WHERE id = ?`, until, out[i].ID); err != nil {
				return err
			}
			out[i].Attempts++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// MarkNotification records a delivery attempt and audits it
// (notification.sent, or notification.failed), atomically.
func (db *DB) MarkNotification(ctx context.Context, id int64, a airlock.Attempt) error {
	return db.exec(ctx, func(w *wtx) error {
		n, err := w.delivery(id)
		if err != nil {
			return err
		}
		if n.Status.Settled() {
			return airlock.Errorf(airlock.ECONFLICT, "notification %d is already %s", id, n.Status)
		}
		return w.mark(&n, a)
	})
}

// MarkNotifications records several attempts in one transaction; a mark
// for a delivery that is missing or already settled is skipped.
func (db *DB) MarkNotifications(ctx context.Context, marks []airlock.NotificationMark) error {
	if len(marks) == 0 {
		return nil
	}
	return db.exec(ctx, func(w *wtx) error {
		return airlock.ApplyMarks(marks, w.delivery, w.mark)
	})
}

// mark records attempt a at delivery n, with its audit event.
func (w *wtx) mark(n *airlock.Notification, a airlock.Attempt) error {
	ev := n.Settle(a, w.now())
	if _, err := w.exec(`UPDATE deliveries SET status = ?, last_error = ?, due = ?,
		lease = 0, sent_at = ?, ref = ? WHERE id = ?`,
		string(n.Status), n.LastError, n.Due.UnixNano(), nanos(n.SentAt), n.Ref, n.ID); err != nil {
		return err
	}
	w.append(airlock.Record{Events: []airlock.Event{ev}}, "")
	return nil
}

// RetryNotification makes a failed or dead delivery due now, with a fresh
// count of attempts, and audits who asked.
func (db *DB) RetryNotification(ctx context.Context, id int64, by string) (airlock.Notification, error) {
	var n airlock.Notification
	err := db.exec(ctx, func(w *wtx) error {
		var err error
		if n, err = w.delivery(id); err != nil {
			return err
		}
		if n.Status != airlock.NotificationDead && n.Status != airlock.NotificationFailed {
			return airlock.Errorf(airlock.ECONFLICT, "notification %d is %s: only a failed or dead one is retried", id, n.Status)
		}
		var lease int64
		if err := w.tx.QueryRow(`SELECT lease FROM deliveries WHERE id = ?`, id).Scan(&lease); err != nil {
			return unavailable("read notification", err)
		}
		if lease > w.now().UnixNano() {
			return airlock.Errorf(airlock.ECONFLICT, "notification %d is being attempted now: retry it once this attempt ends", id)
		}
		ev := n.Retried(by)
		now := w.now()
		if _, err := w.exec(`UPDATE deliveries SET status = 'pending', attempts = 0, due = ?, lease = 0 WHERE id = ?`,
			now.UnixNano(), id); err != nil {
			return err
		}
		w.append(airlock.Record{Events: []airlock.Event{ev}}, "")
		w.changed = append(w.changed, deliveriesKey)
		n.Status, n.Attempts, n.Due = airlock.NotificationPending, 0, now
		return nil
	})
	return n, err
}

// delivery reads one delivery in the writer's transaction.
func (w *wtx) delivery(id int64) (airlock.Notification, error) {
	return oneDelivery(w.tx.QueryRow(`SELECT `+deliveryColumns+` FROM deliveries WHERE id = ?`, id), id)
}

// Notification returns one delivery.
func (db *DB) Notification(ctx context.Context, id int64) (airlock.Notification, error) {
	return oneDelivery(db.read.QueryRowContext(ctx, `SELECT `+deliveryColumns+` FROM deliveries WHERE id = ?`, id), id)
}

// oneDelivery scans the delivery row r, id's.
func oneDelivery(r rowScanner, id int64) (airlock.Notification, error) {
	var n airlock.Notification
	err := scanDelivery(r, &n)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return n, airlock.Errorf(airlock.ENOTFOUND, "no notification %d", id)
	case err != nil:
		return n, unavailable("read notification", err)
	}
	return n, nil
}

// Notifications lists deliveries, newest first.
func (db *DB) Notifications(ctx context.Context, f airlock.NotificationFilter) ([]airlock.Notification, error) {
	var where []string
	var args []any
	if f.Status != "" {
		// A literal, not a parameter: SQLite then uses the partial index
		// of the dead letters (and of those due).
		st, err := airlock.ParseNotificationStatus(string(f.Status))
		if err != nil {
			return nil, err
		}
		where = append(where, "status = '"+string(st)+"'")
	}
	for _, c := range []struct {
		col string
		v   string
	}{{"channel", f.Channel}, {"kind", f.Kind}, {"approval_id", f.ApprovalID}} {
		if c.v != "" {
			where, args = append(where, c.col+" = ?"), append(args, c.v)
		}
	}
	if f.BeforeID > 0 {
		where, args = append(where, "id < ?"), append(args, f.BeforeID)
	}
	q := `SELECT ` + deliveryColumns + ` FROM deliveries`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	rows, err := db.read.QueryContext(ctx, q+` ORDER BY id DESC LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, unavailable("read notifications", err)
	}
	defer rows.Close()
	var out []airlock.Notification
	for rows.Next() {
		var n airlock.Notification
		if err := scanDelivery(rows, &n); err != nil {
			return nil, unavailable("read notifications", err)
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		return nil, unavailable("read notifications", err)
	}
	return out, nil
}

// DeliveriesQueued returns a channel closed when a delivery is next queued
// (or made due by a person) in this process, and a func that stops the
// subscription: a worker subscribes before it claims, and so never misses
// one. Deliveries queued by another process are seen at the next poll.
func (db *DB) DeliveriesQueued() (<-chan struct{}, func()) {
	return db.hub.Subscribe(deliveriesKey)
}
