package postgres

import (
	"context"
	"time"
)

// hintInterval bounds how often a DB tells the other replicas that it
// appended events: a hint goes out at once after a quiet spell, then at
// most once per interval however many batches commit meanwhile.
const hintInterval = 10 * time.Millisecond

// hinter sends, after the fact, the notification of batches that only
// appended events (an auto decision's record): their waiters elsewhere —
// live event streams, long polls — need to know soon, not within the
// caller's transaction, so the NOTIFY is taken off the caller's path. A
// hint lost with a replica that dies between its commit and the hint
// leaves the others' waiters to their PollInterval rereads: notifications
// are hints, the table is the truth. Changes that wake checks (approvals)
// and notifiers (deliveries) are still notified inside their transaction.
type hinter struct {
	db     *DB
	kick   chan struct{} // one pending hint
	cancel context.CancelFunc
	done   chan struct{}
}

func (db *DB) startHinter() *hinter {
	ctx, cancel := context.WithCancel(context.Background())
	h := &hinter{db: db, kick: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{})}
	go h.run(ctx)
	return h
}

// hintEvents asks for a hint that this DB appended events.
func (db *DB) hintEvents() {
	if db.hints == nil {
		return
	}
	select {
	case db.hints.kick <- struct{}{}:
	default: // one is pending already
	}
}

// stop sends the hint still pending, if any, and ends the hinter.
func (h *hinter) stop() {
	h.cancel()
	<-h.done
}

func (h *hinter) run(ctx context.Context) {
	defer close(h.done)
	for {
		select {
		case <-h.kick:
		case <-ctx.Done():
			select {
			case <-h.kick:
				h.send(context.Background())
			default:
			}
			return
		}
		h.send(ctx)
		select {
		case <-time.After(hintInterval):
		case <-ctx.Done():
		}
	}
}

// send notifies the other replicas. Its transaction commits without
// waiting for the WAL flush: a hint needs no durability, and the caller's
// commit was durable already.
func (h *hinter) send(ctx context.Context) {
	db := h.db
	c, cancel := context.WithTimeout(ctx, db.statementTimeout())
	defer cancel()
	payload := db.origin + " e"
	if tip := db.tip.Load(); tip != nil {
		payload = db.origin + " " + headNotice(*tip) + " e"
	}
	_, err := db.pool.Exec(c, `SELECT set_config('synchronous_commit', 'off', true), pg_notify($1, $2)`,
		db.channel, payload)
	if err != nil && ctx.Err() == nil {
		db.logger().Debug("postgres: cannot hint the other replicas of appended events", "err", db.redact(err.Error()))
	}
}
