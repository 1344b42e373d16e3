package postgres

import (
	"context"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/internal/sqlstore"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
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
		w.spend(rec.Charges, out)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// WaitEvents blocks until the log holds an event after seq after. Every
// commit of this process that appends events wakes it at once, another
// replica's through its notification; it rereads the head every
// PollInterval in case a notification was lost.
func (db *DB) WaitEvents(ctx context.Context, after int64) error {
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
		t := time.NewTimer(db.pollInterval())
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
	if db.pool == nil {
		return 0, airlock.Errorf(airlock.EUNAVAILABLE, "postgres: store is not open")
	}
	var head int64
	if err := db.pool.QueryRow(ctx, `SELECT coalesce(max(seq), 0) FROM events`).Scan(&head); err != nil {
		return 0, db.unavailable("read events head", err)
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

// scanEvent reads one row into e. With own set, e keeps copies of the byte
// columns; without, they alias the driver's buffers until the next row
// (enough for verifying).
func scanEvent(rows pgx.Row, e *airlock.Event, own bool) error {
	var t int64
	var payload, prev, hash []byte
	if own {
		if err := rows.Scan(&e.Seq, &t, &e.Kind, &e.TraceID, &e.Agent, &e.Outcome, &e.ApprovalID, &payload, &prev, &hash); err != nil {
			return err
		}
	} else {
		// The driver's bytes: no copy of the payload for each row verified.
		var p, pr, h pgtype.DriverBytes
		if err := rows.Scan(&e.Seq, &t, &e.Kind, &e.TraceID, &e.Agent, &e.Outcome, &e.ApprovalID, &p, &pr, &h); err != nil {
			return err
		}
		payload, prev, hash = p, pr, h
	}
	e.Time = fromNanos(t)
	e.Payload = payload
	copy(e.Prev[:], prev)
	copy(e.Hash[:], hash)
	// A prev or hash of the wrong length cannot match any chain hash; make
	// sure it does not pass by zero-padding.
	if len(prev) != len(e.Prev) {
		e.Prev[0] ^= 0xff
	}
	if len(hash) != len(e.Hash) {
		e.Hash[0] ^= 0xff
	}
	return nil
}

// Verify walks the whole log in one read-only REPEATABLE READ transaction
// (a consistent snapshot, while writers go on) and reports the first bad
// sequence number.
func (db *DB) Verify(ctx context.Context) (airlock.ChainReport, error) {
	var rep airlock.ChainReport
	if db.pool == nil {
		return rep, airlock.Errorf(airlock.EUNAVAILABLE, "postgres: store is not open")
	}
	tx, err := db.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return rep, db.unavailable("verify", err)
	}
	defer tx.Rollback(context.Background())
	rows, err := tx.Query(ctx, `SELECT `+eventColumns+` FROM events ORDER BY seq`)
	if err != nil {
		return rep, db.unavailable("verify", err)
	}
	defer rows.Close()
	var v airlock.ChainVerifier
	var e airlock.Event
	for rows.Next() {
		if err := scanEvent(rows, &e, false); err != nil {
			return rep, db.unavailable("verify", err)
		}
		if err := v.Check(&e); err != nil {
			ce := err.(*airlock.ChainError)
			rep.FirstBad, rep.Problem = ce.Seq, ce.Reason
			break
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return rep, db.unavailable("verify", err)
	}
	rep.Events = v.Checked()
	rep.HeadSeq, rep.Head = v.Head()
	return rep, nil
}

// query runs a read on the pool, its string arguments made storable (a
// lookup by a string no row can hold finds nothing, rather than failing).
func (db *DB) query(ctx context.Context, q string, args ...any) (pgx.Rows, error) {
	if db.pool == nil {
		return nil, airlock.Errorf(airlock.EUNAVAILABLE, "postgres: store is not open")
	}
	return db.pool.Query(ctx, q, text(args)...)
}

// queryRow reads one row on the pool, as query.
func (db *DB) queryRow(ctx context.Context, q string, args ...any) pgx.Row {
	if db.pool == nil {
		return errRow{airlock.Errorf(airlock.EUNAVAILABLE, "postgres: store is not open")}
	}
	return db.pool.QueryRow(ctx, q, text(args)...)
}

// errRow is a row that fails to scan.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }
