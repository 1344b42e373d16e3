package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/airlock-dev/airlock"
)

var _ airlock.NotificationQueue = (*DB)(nil)

const notificationColumns = `id, created, recipient, kind, agent, approval_id, subject, payload, status, attempts, last_error, event_seq`

func scanNotification(r rowScanner, n *airlock.Notification) error {
	var created int64
	var payload []byte
	var status string
	if err := r.Scan(&n.ID, &created, &n.Recipient, &n.Kind, &n.Agent, &n.ApprovalID, &n.Subject, &payload,
		&status, &n.Attempts, &n.LastError, &n.EventSeq); err != nil {
		return err
	}
	n.Created, n.Status = fromNanos(created), airlock.NotificationStatus(status)
	if len(payload) > 0 {
		n.Payload = payload
	}
	return nil
}

// PendingNotifications returns notices not yet delivered, oldest first.
func (db *DB) PendingNotifications(ctx context.Context, limit int) ([]airlock.Notification, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+notificationColumns+` FROM notifications
		WHERE status != 'sent' ORDER BY id LIMIT ?`, airlock.PageSize(limit))
	if err != nil {
		return nil, unavailable("read notifications", err)
	}
	defer rows.Close()
	var out []airlock.Notification
	for rows.Next() {
		var n airlock.Notification
		if err := scanNotification(rows, &n); err != nil {
			return nil, unavailable("read notifications", err)
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		return nil, unavailable("read notifications", err)
	}
	return out, nil
}

// MarkNotification records a delivery attempt and audits it.
func (db *DB) MarkNotification(ctx context.Context, id int64, deliveryErr error) error {
	return db.exec(ctx, func(w *wtx) error {
		var n airlock.Notification
		err := scanNotification(w.tx.QueryRow(`SELECT `+notificationColumns+` FROM notifications WHERE id = ?`, id), &n)
		if errors.Is(err, sql.ErrNoRows) {
			return airlock.Errorf(airlock.ENOTFOUND, "no notification %d", id)
		}
		if err != nil {
			return unavailable("read notification", err)
		}
		if n.Status == airlock.NotificationSent {
			return airlock.Errorf(airlock.ECONFLICT, "notification %d was already sent", id)
		}
		ev := n.Delivered(deliveryErr)
		status, lastErr, sentAt := airlock.NotificationSent, "", int64(0)
		if deliveryErr != nil {
			status, lastErr = airlock.NotificationFailed, deliveryErr.Error()
		} else {
			sentAt = w.now().UnixNano()
		}
		if _, err := w.exec(`UPDATE notifications SET status = ?, attempts = attempts + 1, last_error = ?, sent_at = ?
			WHERE id = ?`, string(status), lastErr, sentAt, id); err != nil {
			return err
		}
		w.append(airlock.Record{Events: []airlock.Event{ev}}, "")
		return nil
	})
}
