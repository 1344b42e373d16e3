package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/internal/groupcommit"
	"github.com/airlock-dev/airlock/internal/sqlstore"
)

// op is one caller's write: its fn runs inside the batch's transaction.
//
// fn must check everything it can refuse (not found, conflict,
// unauthorised) before it writes anything: an op that fails after writing
// aborts its whole batch, since SQLite cannot undo one op's rows without
// savepoints, and savepoints per op would cost every caller.
type op = groupcommit.Op[func(*wtx) error]

// exec runs fn in a write transaction and returns once that transaction is
// durable (or failed): the callers writing at once share one transaction
// and one fsync (package groupcommit).
func (db *DB) exec(ctx context.Context, fn func(*wtx) error) error {
	switch {
	case db.write == nil && db.ReadOnly:
		return airlock.Errorf(airlock.EUNAVAILABLE, "sqlite: %s is open read-only", db.Path)
	case db.write == nil:
		return airlock.Errorf(airlock.EUNAVAILABLE, "sqlite: store is not open")
	}
	limit := db.MaxBatch
	if limit <= 0 {
		limit = DefaultMaxBatch
	}
	err := db.writes.Submit(ctx, fn, limit, db.run)
	if errors.Is(err, groupcommit.ErrClosed) {
		return airlock.Errorf(airlock.EUNAVAILABLE, "sqlite: store is closed")
	}
	return err
}

// run executes one batch: every op, then the buffered rows, then one
// commit. On any database failure every op of the batch fails with
// EUNAVAILABLE: nothing of it is acknowledged.
func (db *DB) run(batch []*op) {
	var w *wtx
	defer func() {
		// On a panic (a bug), roll back and fail every op of the batch
		// before the panic goes on up, so that the write connection is free
		// for the next batch (the queue answers every caller).
		if r := recover(); r != nil {
			if w != nil && w.tx != nil {
				w.tx.Rollback()
			}
			for _, o := range batch {
				o.Err = airlock.Errorf(airlock.EINTERNAL, "sqlite: write batch failed: %v", r)
			}
			panic(r)
		}
	}()
	w, err := db.begin()
	if err == nil {
		for _, o := range batch {
			if o.Ctx.Err() != nil {
				o.Err = o.Ctx.Err()
				continue
			}
			before := w.writes
			o.Err = o.W(w)
			if o.Err != nil && (w.writes != before || fatal(o.Err)) {
				err = o.Err
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
		now := time.Now()
		db.failedAt.Store(&now)
		for _, o := range batch {
			if o.Err == nil || !isRefusal(o.Err) {
				o.Err = err
			}
		}
	} else {
		if w.writes > 0 {
			// Only a commit that wrote proves writes work: an empty one
			// touches no page.
			db.failedAt.Store(nil)
		}
		if len(w.events) > 0 {
			w.changed = append(w.changed, eventsKey) // wake WaitEvents
		}
		if len(w.notes) > 0 {
			w.changed = append(w.changed, deliveriesKey) // wake WaitDeliveries
		}
		db.hub.Publish(w.changed)
	}
}

// fatal reports an op error that leaves the transaction unusable.
func fatal(err error) bool { return !isRefusal(err) }

// isRefusal reports an op's own refusal, made before it wrote anything.
func isRefusal(err error) bool {
	switch airlock.ErrorCode(err) {
	case airlock.ENOTFOUND, airlock.ECONFLICT, airlock.EUNAUTHORIZED, airlock.EINVALID, airlock.CodeHashMismatch,
		airlock.CodeUsed, airlock.CodeTimeout:
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
	changed []string          // approvals whose waiters to wake after commit
	budgets sqlstore.Accounts // the budgets' accounts the batch read, as it left them
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
	err = tx.StmtContext(ctx, db.stmts.head).QueryRowContext(ctx).Scan(&w.seq, &h)
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
	var router airlock.Router
	if r := w.db.router.Load(); r != nil {
		router = *r
	}
	trust, notes := rec.Rows(w.events[first:], approvalID, now, router)
	w.trust, w.notes = append(w.trust, trust...), append(w.notes, notes...)
	w.writes += len(rec.Events) + len(trust) + len(notes)
	return w.events[first:len(w.events):len(w.events)]
}

// flush writes the buffered rows with statements prepared once at Open:
// no SQL is parsed per batch, and single-row INSERTs need no statement
// journal.
func (w *wtx) flush() error {
	ctx := context.Background()
	if len(w.events) > 0 {
		st := w.tx.StmtContext(ctx, w.db.stmts.event)
		for i := range w.events {
			e := &w.events[i]
			if _, err := st.ExecContext(ctx, e.Seq, e.Time.UnixNano(), e.Kind, e.TraceID, e.Agent, e.Outcome,
				e.ApprovalID, []byte(e.Payload), e.Prev[:], e.Hash[:]); err != nil {
				return err
			}
		}
	}
	if len(w.trust) > 0 {
		st := w.tx.StmtContext(ctx, w.db.stmts.trust)
		for i := range w.trust {
			t := &w.trust[i]
			if _, err := st.ExecContext(ctx, t.Time.UnixNano(), t.Agent, string(t.Class), string(t.Outcome), int(t.Tier),
				t.TraceID, t.Label, t.Tool, t.AutonomyClass, t.RequiresHuman, t.Code, []byte(t.Args), t.ApprovalID,
				t.EventSeq); err != nil {
				return err
			}
		}
	}
	if len(w.notes) > 0 {
		st := w.tx.StmtContext(ctx, w.db.stmts.note)
		for i := range w.notes {
			n := &w.notes[i]
			if _, err := st.ExecContext(ctx, n.Key, n.Created.UnixNano(), n.Channel, n.Kind, names(n.Recipients),
				names(n.Reviewers), n.Agent, n.ApprovalID, n.Subject, []byte(n.Payload), n.EventSeq, n.Due.UnixNano()); err != nil {
				return err
			}
		}
	}
	return nil
}

// statements are the writer's hot statements, prepared once.
type statements struct {
	head, event, trust, note *sql.Stmt
	budgetRead, budgetUse    *sql.Stmt
}

func (db *DB) prepare(ctx context.Context) error {
	for _, p := range []struct {
		dst   **sql.Stmt
		query string
	}{
		{&db.stmts.head, `SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1`},
		{&db.stmts.event, `INSERT INTO events (seq, time, kind, trace_id, agent, outcome, approval_id, payload, prev, hash)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`},
		{&db.stmts.trust, `INSERT INTO trust (time, agent, class, outcome, tier, trace_id, label, tool, autonomy_class,
			requires_human, code, args, approval_id, event_seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`},
		{&db.stmts.note, `INSERT INTO deliveries (key, created, channel, kind, recipients, reviewers, agent, approval_id,
			subject, payload, event_seq, due) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`},
		{&db.stmts.budgetRead, sqlstore.BudgetQuery(dialect{})},
		{&db.stmts.budgetUse, `INSERT INTO budget_uses (key, time, total, cost, event_seq) VALUES (?, ?, ?, ?, ?)`},
	} {
		st, err := db.write.PrepareContext(ctx, p.query)
		if err != nil {
			return unavailable("prepare", err)
		}
		*p.dst = st
	}
	return nil
}
