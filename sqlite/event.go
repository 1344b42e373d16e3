package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/internal/sqlstore"
)

var _ airlock.AuditLog = (*DB)(nil)

// Append writes rec in the next group commit and returns its sealed events
// once they are durable.
func (db *DB) Append(ctx context.Context, rec airlock.Record) ([]airlock.Event, error) {
	if err := rec.Prepare(); err != nil {
		return nil, err
	}
	var out []airlock.Event
	err := db.exec(ctx, func(w *wtx) error {
		if err := w.charge(rec.Charges); err != nil {
			return err
		}
		out = w.append(rec, "")
		return w.spend(rec.Charges, out)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// eventsKey is the hub key under which WaitEvents waits for new events: no
// approval ID (a UUID) can take it.
const eventsKey = "\x00events"

// WaitEvents blocks until the log holds an event after seq after. Every
// commit of this process that appends events wakes it at once; it rereads
// the head every PollInterval to notice another process's.
func (db *DB) WaitEvents(ctx context.Context, after int64) error {
	poll := db.PollInterval
	if poll <= 0 {
		poll = DefaultPollInterval
	}
	for {
		// Subscribe before reading, so that an append committed in between
		// still wakes this wait.
		appended, unsubscribe := db.hub.Subscribe(eventsKey)
		head, err := db.Head(ctx)
		if err != nil {
			unsubscribe()
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		if head > after {
			unsubscribe()
			return nil
		}
		t := time.NewTimer(poll)
		select {
		case <-appended:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			unsubscribe()
			return ctx.Err()
		}
		t.Stop()
		unsubscribe()
	}
}

// Head returns the sequence number of the last event, 0 for an empty log.
func (db *DB) Head(ctx context.Context) (int64, error) {
	var head int64
	if err := db.read.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM events`).Scan(&head); err != nil {
		return 0, unavailable("read events head", err)
	}
	return head, nil
}

// eventColumns are the columns scanEvent reads, in its order.
const eventColumns = sqlstore.EventColumns

// Events returns a page of events in sequence order.
func (db *DB) Events(ctx context.Context, f airlock.EventFilter) ([]airlock.Event, error) {
	return db.reader().Events(ctx, f, func(r sqlstore.Row, e *airlock.Event) error {
		return scanEvent(r, e, true)
	})
}

// eventRow holds the columns of one event as scanned.
type eventRow struct {
	t                   int64
	payload, prev, hash sql.RawBytes
	kind, trace, agent  string
	outcome, approval   string
}

// scanEvent reads one row into e. With own set, e keeps copies of the
// byte columns; without, they alias the driver's buffers until the next
// row (enough for verifying).
func scanEvent(rows rowScanner, e *airlock.Event, own bool) error {
	var r eventRow
	if err := rows.Scan(&e.Seq, &r.t, &e.Kind, &e.TraceID, &e.Agent, &e.Outcome, &e.ApprovalID,
		&r.payload, &r.prev, &r.hash); err != nil {
		return err
	}
	e.Time = fromNanos(r.t)
	if own {
		e.Payload = append([]byte(nil), r.payload...)
	} else {
		e.Payload = []byte(r.payload)
	}
	copy(e.Prev[:], r.prev)
	copy(e.Hash[:], r.hash)
	// A prev or hash of the wrong length cannot match any chain hash; make
	// sure it does not pass by zero-padding.
	if len(r.prev) != len(e.Prev) {
		e.Prev[0] ^= 0xff
	}
	if len(r.hash) != len(e.Hash) {
		e.Hash[0] ^= 0xff
	}
	return nil
}

// Verify walks the whole log in one read transaction (a consistent
// snapshot, while writers go on) and reports the first bad sequence
// number.
func (db *DB) Verify(ctx context.Context) (airlock.ChainReport, error) {
	var rep airlock.ChainReport
	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return rep, unavailable("verify", err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT `+eventColumns+` FROM events ORDER BY seq`)
	if err != nil {
		return rep, unavailable("verify", err)
	}
	defer rows.Close()
	var v airlock.ChainVerifier
	var e airlock.Event
	for rows.Next() {
		if err := scanEvent(rows, &e, false); err != nil {
			return rep, unavailable("verify", err)
		}
		if err := v.Check(&e); err != nil {
			ce := err.(*airlock.ChainError)
			rep.FirstBad, rep.Problem = ce.Seq, ce.Reason
			break
		}
	}
	if err := rows.Err(); err != nil {
		return rep, unavailable("verify", err)
	}
	rep.Events = v.Checked()
	rep.HeadSeq, rep.Head = v.Head()
	return rep, nil
}
