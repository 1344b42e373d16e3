package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/airlock-dev/airlock"
)

// op is one caller's write: fn runs inside the batch's transaction.
//
// fn must check everything it can refuse (not found, conflict,
// unauthorised) before it writes anything: an op that fails after writing
// aborts its whole batch, since SQLite cannot undo one op's rows without
// savepoints, and savepoints per op would cost every caller.
type op struct {
	ctx  context.Context
	fn   func(*wtx) error
	err  error
	done chan struct{}
}

// exec runs fn in the writer's next transaction and returns once that
// transaction is durable (or failed). Once submitted, an op is waited for
// even if ctx ends, so that a caller never reports failure for a write
// that then commits unseen.
func (db *DB) exec(ctx context.Context, fn func(*wtx) error) error {
	if db.ops == nil {
		if db.ReadOnly {
			return airlock.Errorf(airlock.EUNAVAILABLE, "sqlite: %s is open read-only", db.Path)
		}
		return airlock.Errorf(airlock.EUNAVAILABLE, "sqlite: store is not open")
	}
	o := &op{ctx: ctx, fn: fn, done: make(chan struct{})}
	select {
	case db.ops <- o:
	case <-ctx.Done():
		return ctx.Err()
	case <-db.closing:
		return airlock.Errorf(airlock.EUNAVAILABLE, "sqlite: store is closed")
	}
	<-o.done
	return o.err
}

// writer owns the write connection: it collects every op waiting, runs them
// in one transaction and commits once.
func (db *DB) writer() {
	defer close(db.stopped)
	max := db.MaxBatch
	if max <= 0 {
		max = DefaultMaxBatch
	}
	batch := make([]*op, 0, max)
	for {
		select {
		case o := <-db.ops:
			batch = append(batch[:0], o)
		case <-db.closing:
			return
		}
	collect:
		for len(batch) < max {
			select {
			case o := <-db.ops:
				batch = append(batch, o)
			default:
				break collect
			}
		}
		db.run(batch)
		clear(batch)
	}
}

// run executes one batch: every op, then the buffered rows, then one
// commit. On any database failure every op of the batch fails with
// EUNAVAILABLE: nothing of it is acknowledged.
func (db *DB) run(batch []*op) {
	w, err := db.begin()
	if err == nil {
		for _, o := range batch {
			if o.ctx.Err() != nil {
				o.err = o.ctx.Err()
				continue
			}
			before := w.writes
			o.err = o.fn(w)
			if o.err != nil && (w.writes != before || fatal(o.err)) {
				err = o.err
				break
			}
		}
		if err == nil {
			err = w.flush()
		}
		if err == nil {
			err = w.tx.Commit()
			w.tx = nil
		}
		if w.tx != nil {
			w.tx.Rollback()
		}
	}
	if err != nil {
		db.logger().Error("sqlite: write batch failed", "ops", len(batch), "err", err)
		err = unavailable("write", err)
		for _, o := range batch {
			if o.err == nil || !isRefusal(o.err) {
				o.err = err
			}
		}
	} else {
		db.hub.publish(w.changed)
	}
	for _, o := range batch {
		close(o.done)
	}
}

// fatal reports an op error that leaves the transaction unusable.
func fatal(err error) bool { return !isRefusal(err) }

// isRefusal reports an op's own refusal, made before it wrote anything.
func isRefusal(err error) bool {
	switch airlock.ErrorCode(err) {
	case airlock.ENOTFOUND, airlock.ECONFLICT, airlock.EUNAUTHORIZED, airlock.EINVALID, airlock.CodeHashMismatch:
		return true
	}
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

func (db *DB) logger() *slog.Logger {
	if db.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return db.Logger
}

// wtx is the writer's transaction: ops write approvals directly and append
// events, trust records and notices to buffers flushed once per batch.
type wtx struct {
	db   *DB
	tx   *sql.Tx
	seq  int64        // the last sequence number assigned
	head airlock.Hash // its hash
	// writes counts statements and buffered rows, to tell whether an op
	// wrote anything before failing.
	writes  int
	events  []airlock.Event
	trust   []airlock.TrustRecord
	notes   []airlock.Notification
	changed []string // approvals whose waiters to wake after commit
}

// begin starts the batch's transaction and reads the chain's head from the
// database itself, so that a batch whose commit reply was lost, or another
// process's writes, can never fork the chain.
func (db *DB) begin() (*wtx, error) {
	ctx := context.Background()
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	w := &wtx{db: db, tx: tx}
	var h []byte
	err = tx.QueryRowContext(ctx, `SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1`).Scan(&w.seq, &h)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		tx.Rollback()
		return nil, err
	default:
		copy(w.head[:], h)
	}
	return w, nil
}

func (w *wtx) now() time.Time { return w.db.now() }

// exec runs a statement in the batch's transaction.
func (w *wtx) exec(query string, args ...any) (sql.Result, error) {
	w.writes++
	res, err := w.tx.Exec(query, args...)
	if err != nil {
		return nil, unavailable("write", err)
	}
	return res, nil
}

// append seals rec's events onto the chain and buffers its rows, linking
// them to approvalID when set. It returns the sealed events.
func (w *wtx) append(rec airlock.Record, approvalID string) []airlock.Event {
	now := w.now()
	first := len(w.events)
	for _, e := range rec.Events {
		if approvalID != "" && e.ApprovalID == "" {
			e.ApprovalID = approvalID
		}
		e.Time = now
		w.seq++
		e.Seal(w.seq, w.head)
		w.head = e.Hash
		w.events = append(w.events, e)
	}
	var seq int64
	if len(rec.Events) > 0 {
		seq = w.events[first].Seq
	}
	for _, t := range rec.Trust {
		t.Time = now
		if approvalID != "" && t.ApprovalID == "" {
			t.ApprovalID = approvalID
		}
		if t.EventSeq == 0 {
			t.EventSeq = seq
		}
		w.trust = append(w.trust, t)
	}
	for _, n := range rec.Notifications {
		n.Created = now
		if approvalID != "" && n.ApprovalID == "" {
			n.ApprovalID = approvalID
		}
		if n.EventSeq == 0 {
			n.EventSeq = seq
		}
		w.notes = append(w.notes, n)
	}
	w.writes += len(rec.Events) + len(rec.Trust) + len(rec.Notifications)
	return w.events[first:len(w.events):len(w.events)]
}

// rowsPerInsert bounds a multi-row INSERT well below SQLite's limit on
// bound parameters.
const rowsPerInsert = 200

// flush writes the buffered rows with multi-row INSERTs.
func (w *wtx) flush() error {
	if err := insertRows(w.tx, `INSERT INTO events (seq, time, kind, trace_id, agent, outcome, approval_id, payload, prev, hash) VALUES `,
		10, len(w.events), func(i int, args []any) []any {
			e := &w.events[i]
			return append(args, e.Seq, e.Time.UnixNano(), e.Kind, e.TraceID, e.Agent, e.Outcome, e.ApprovalID,
				[]byte(e.Payload), e.Prev[:], e.Hash[:])
		}); err != nil {
		return err
	}
	if err := insertRows(w.tx, `INSERT INTO trust (time, agent, class, outcome, tier, trace_id, label, tool, autonomy_class, requires_human, code, args, approval_id, event_seq) VALUES `,
		14, len(w.trust), func(i int, args []any) []any {
			t := &w.trust[i]
			return append(args, t.Time.UnixNano(), t.Agent, string(t.Class), string(t.Outcome), int(t.Tier), t.TraceID,
				t.Label, t.Tool, t.AutonomyClass, t.RequiresHuman, t.Code, []byte(t.Args), t.ApprovalID, t.EventSeq)
		}); err != nil {
		return err
	}
	return insertRows(w.tx, `INSERT INTO notifications (created, recipient, kind, agent, approval_id, subject, payload, event_seq) VALUES `,
		8, len(w.notes), func(i int, args []any) []any {
			n := &w.notes[i]
			return append(args, n.Created.UnixNano(), n.Recipient, n.Kind, n.Agent, n.ApprovalID, n.Subject, []byte(n.Payload), n.EventSeq)
		})
}

// insertRows inserts n rows of cols columns, rowsPerInsert per statement.
func insertRows(tx *sql.Tx, prefix string, cols, n int, row func(i int, args []any) []any) error {
	if n == 0 {
		return nil
	}
	tuple := "(" + strings.Repeat("?, ", cols-1) + "?)"
	args := make([]any, 0, min(n, rowsPerInsert)*cols)
	for start := 0; start < n; start += rowsPerInsert {
		end := min(start+rowsPerInsert, n)
		var q strings.Builder
		q.WriteString(prefix)
		args = args[:0]
		for i := start; i < end; i++ {
			if i > start {
				q.WriteString(", ")
			}
			q.WriteString(tuple)
			args = row(i, args)
		}
		if _, err := tx.Exec(q.String(), args...); err != nil {
			return err
		}
	}
	return nil
}
