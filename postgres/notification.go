package postgres

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/jackc/pgx/v5"
)

var _ airlock.NotificationQueue = (*DB)(nil)

const deliveryColumns = `id, key, created, channel, kind, recipients, reviewers, agent, approval_id, subject, payload,
	event_seq, status, attempts, last_error, due, sent_at, ref`

func scanDelivery(r pgx.Row, n *airlock.Notification) error {
	var created, due, sent int64
	var payload []byte
	var status string
	if err := r.Scan(&n.ID, &n.Key, &created, &n.Channel, &n.Kind, &n.Recipients, &n.Reviewers, &n.Agent, &n.ApprovalID,
		&n.Subject, &payload, &n.EventSeq, &status, &n.Attempts, &n.LastError, &due, &sent, &n.Ref); err != nil {
		return err
	}
	n.Created, n.Due, n.Status = fromNanos(created), fromNanos(due), airlock.NotificationStatus(status)
	n.SentAt = fromNanos(sent)
	if len(payload) > 0 {
		n.Payload = payload
	}
	return nil
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
//
// It is one statement of its own, outside the writer's batches (it appends
// no event): workers on every replica claim at once, each skipping the
// rows another is claiming or marking (FOR UPDATE SKIP LOCKED).
func (db *DB) ClaimNotifications(ctx context.Context, limit int, lease time.Duration) ([]airlock.Notification, error) {
	if limit <= 0 || lease <= 0 {
		return nil, airlock.Errorf(airlock.EINVALID, "claim needs a positive limit and lease")
	}
	if db.ReadOnly {
		return nil, airlock.Errorf(airlock.EUNAVAILABLE, "postgres: schema %s is open read-only", db.schema())
	}
	now := db.now().UnixNano()
	rows, err := db.query(ctx, `UPDATE deliveries d SET lease = $1, attempts = d.attempts + 1
		FROM (SELECT id FROM deliveries WHERE status IN ('pending', 'failed') AND due <= $2 AND lease <= $2
			ORDER BY due, id LIMIT $3 FOR UPDATE SKIP LOCKED) c
		WHERE d.id = c.id
		RETURNING `+prefixed("d.", deliveryColumns), now+int64(lease), now, limit)
	if err != nil {
		return nil, db.unavailable("claim deliveries", err)
	}
	defer rows.Close()
	var out []airlock.Notification
	for rows.Next() {
		var n airlock.Notification
		if err := scanDelivery(rows, &n); err != nil {
			return nil, db.unavailable("claim deliveries", err)
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		return nil, db.unavailable("claim deliveries", err)
	}
	// RETURNING keeps no order: oldest due first, as selected.
	slices.SortFunc(out, func(a, b airlock.Notification) int {
		if c := a.Due.Compare(b.Due); c != 0 {
			return c
		}
		return int(a.ID - b.ID)
	})
	return out, nil
}

// prefixed qualifies each column of a list with p.
func prefixed(p, columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = p + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}

// MarkNotification records a delivery attempt and audits it
// (notification.sent, or notification.failed), atomically.
func (db *DB) MarkNotification(ctx context.Context, id int64, a airlock.Attempt) error {
	return db.exec(ctx, func(w *wtx) error {
		n, _, err := w.delivery(id)
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
// for a delivery that is missing, already settled or claimed again since
// is skipped.
func (db *DB) MarkNotifications(ctx context.Context, marks []airlock.NotificationMark) error {
	if len(marks) == 0 {
		return nil
	}
	return db.exec(ctx, func(w *wtx) error {
		read := func(id int64) (airlock.Notification, error) {
			n, _, err := w.delivery(id)
			return n, err
		}
		return airlock.ApplyMarks(marks, read, w.mark)
	})
}

// mark records attempt a at delivery n, with its audit event.
func (w *wtx) mark(n *airlock.Notification, a airlock.Attempt) error {
	ev := n.Settle(a, w.now())
	if _, err := w.exec(`UPDATE deliveries SET status = $1, last_error = $2, due = $3,
		lease = 0, sent_at = $4, ref = $5 WHERE id = $6`,
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
		var lease int64
		var err error
		if n, lease, err = w.delivery(id); err != nil {
			return err
		}
		if n.Status != airlock.NotificationDead && n.Status != airlock.NotificationFailed {
			return airlock.Errorf(airlock.ECONFLICT, "notification %d is %s: only a failed or dead one is retried", id, n.Status)
		}
		if lease > w.now().UnixNano() {
			return airlock.Errorf(airlock.ECONFLICT, "notification %d is being attempted now: retry it once this attempt ends", id)
		}
		ev := n.Retried(by)
		now := w.now()
		if _, err := w.exec(`UPDATE deliveries SET status = 'pending', attempts = 0, due = $1, lease = 0 WHERE id = $2`,
			now.UnixNano(), id); err != nil {
			return err
		}
		w.append(airlock.Record{Events: []airlock.Event{ev}}, "")
		w.queued = true
		n.Status, n.Attempts, n.Due = airlock.NotificationPending, 0, now
		return nil
	})
	return n, err
}

// delivery reads one delivery and its lease in the writer's transaction,
// locking its row: a claim running meanwhile on any replica skips it, and
// one that ran before is seen.
func (w *wtx) delivery(id int64) (airlock.Notification, int64, error) {
	var n airlock.Notification
	var lease int64
	row := w.queryRow(`SELECT `+deliveryColumns+`, lease FROM deliveries WHERE id = $1 FOR UPDATE`, id)
	err := scanDelivery(scanAlso{row, &lease}, &n)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return n, 0, airlock.Errorf(airlock.ENOTFOUND, "no notification %d", id)
	case err != nil:
		return n, 0, err
	}
	return n, lease, nil
}

// scanAlso scans one more column after those its caller asks for.
type scanAlso struct {
	row  pgx.Row
	also any
}

func (s scanAlso) Scan(dest ...any) error { return s.row.Scan(append(dest, s.also)...) }

// Notification returns one delivery.
func (db *DB) Notification(ctx context.Context, id int64) (airlock.Notification, error) {
	var n airlock.Notification
	err := scanDelivery(db.queryRow(ctx, `SELECT `+deliveryColumns+` FROM deliveries WHERE id = $1`, id), &n)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return n, airlock.Errorf(airlock.ENOTFOUND, "no notification %d", id)
	case err != nil:
		return n, db.unavailable("read notification", err)
	}
	return n, nil
}

// Notifications lists deliveries, newest first.
func (db *DB) Notifications(ctx context.Context, f airlock.NotificationFilter) ([]airlock.Notification, error) {
	var where []string
	var args []any
	if f.Status != "" {
		// A literal, not a parameter: the planner then uses the partial
		// index of the dead letters (and of those due).
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
			args = append(args, c.v)
			where = append(where, c.col+" = $"+strconv.Itoa(len(args)))
		}
	}
	if f.BeforeID > 0 {
		args = append(args, f.BeforeID)
		where = append(where, "id < $"+strconv.Itoa(len(args)))
	}
	q := `SELECT ` + deliveryColumns + ` FROM deliveries`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	args = append(args, limit)
	rows, err := db.query(ctx, q+` ORDER BY id DESC LIMIT $`+strconv.Itoa(len(args)), args...)
	if err != nil {
		return nil, db.unavailable("read notifications", err)
	}
	defer rows.Close()
	var out []airlock.Notification
	for rows.Next() {
		var n airlock.Notification
		if err := scanDelivery(rows, &n); err != nil {
			return nil, db.unavailable("read notifications", err)
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		return nil, db.unavailable("read notifications", err)
	}
	return out, nil
}

// DeliveriesQueued returns a channel closed when a delivery is next queued
// (or made due again) by this process or another replica, and a func that
// stops the subscription: a worker subscribes before it claims, and so
// never misses one.
func (db *DB) DeliveriesQueued() (<-chan struct{}, func()) {
	return db.hub.Subscribe(deliveriesKey)
}
