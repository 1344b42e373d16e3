package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"slices"
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
	ctx context.Context
	fn  func(*wtx) error
	err error
	// wake receives one signal: the op is finished (finished set), or its
	// caller is to lead the next batch.
	wake     chan struct{}
	finished bool
}

// exec runs fn in a write transaction and returns once that transaction is
// durable (or failed).
//
// Group commit without a writer goroutine: the caller that finds no batch
// running leads one itself — its own op and every op queued meanwhile —
// so a lone caller pays no hand-off between goroutines. Callers arriving
// while a batch commits queue up; when it is done, the leader wakes the
// first of them to lead the next batch, with all the others. An op whose
// ctx ends while it still waits in the queue is withdrawn (ctx's error):
// a caller with a deadline — a chat click that must be answered within
// seconds — is not held behind a stalled batch. Once a batch has taken
// it, an op is waited for even if ctx ends, so that a caller never
// reports failure for a write that then commits unseen.
func (db *DB) exec(ctx context.Context, fn func(*wtx) error) error {
	o := &op{ctx: ctx, fn: fn, wake: make(chan struct{}, 1)}
	db.mu.Lock()
	switch {
	case db.write == nil && db.ReadOnly:
		db.mu.Unlock()
		return airlock.Errorf(airlock.EUNAVAILABLE, "sqlite: %s is open read-only", db.Path)
	case db.write == nil:
		db.mu.Unlock()
		return airlock.Errorf(airlock.EUNAVAILABLE, "sqlite: store is not open")
	case db.closed:
		db.mu.Unlock()
		return airlock.Errorf(airlock.EUNAVAILABLE, "sqlite: store is closed")
	}
	db.queue = append(db.queue, o)
	if db.leading {
		db.mu.Unlock()
		if err := db.await(o); err != nil {
			return err
		}
		if o.finished {
			return o.err
		}
		db.mu.Lock() // promoted: lead the next batch
	}
	db.leading = true
	max := db.MaxBatch
	if max <= 0 {
		max = DefaultMaxBatch
	}
	n := min(len(db.queue), max)
	batch := slices.Clone(db.queue[:n]) // o is first: a leader is always the queue's head
	db.queue = slices.Delete(db.queue, 0, n)
	db.mu.Unlock()

	defer db.handOff()
	db.run(batch)
	return o.err
}

// await waits until queued op o is finished or promoted to lead. When its
// ctx ends first and no batch has taken it, it is withdrawn from the queue
// and await returns ctx's error.
func (db *DB) await(o *op) error {
	select {
	case <-o.wake:
		return nil
	case <-o.ctx.Done():
	}
	db.mu.Lock()
	select {
	case <-o.wake: // promoted (handOff signals under db.mu) or finished meanwhile
		db.mu.Unlock()
		return nil
	default:
	}
	if i := slices.Index(db.queue, o); i >= 0 {
		db.queue = slices.Delete(db.queue, i, i+1)
		db.mu.Unlock()
		return o.ctx.Err()
	}
	db.mu.Unlock()
	<-o.wake // a batch has it: its result stands
	return nil
}

// handOff ends a leader's batch: the first queued op's caller leads the
// next one. It runs deferred, so that even a panic in a batch (a bug) never
// leaves the store with a leader that will not come back.
func (db *DB) handOff() {
	db.mu.Lock()
	defer db.mu.Unlock()
	if len(db.queue) > 0 {
		db.queue[0].wake <- struct{}{}
		return
	}
	db.leading = false
	db.idle.Broadcast()
}

// run executes one batch: every op, then the buffered rows, then one
// commit. On any database failure every op of the batch fails with
// EUNAVAILABLE: nothing of it is acknowledged.
func (db *DB) run(batch []*op) {
	var w *wtx
	defer func() {
		// On a panic (a bug), roll back and fail every op of the batch
		// before the panic goes on up, so that no caller waits forever and
		// the write connection is free for the next batch.
		if r := recover(); r != nil {
			if w != nil && w.tx != nil {
				w.tx.Rollback()
			}
			for _, o := range batch[1:] {
				if !o.finished {
					o.err = airlock.Errorf(airlock.EINTERNAL, "sqlite: write batch failed: %v", r)
					o.finished = true
					o.wake <- struct{}{}
				}
			}
			panic(r)
		}
	}()
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
		now := time.Now()
		db.failedAt.Store(&now)
		for _, o := range batch {
			if o.err == nil || !isRefusal(o.err) {
				o.err = err
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
		db.hub.publish(w.changed)
	}
	for _, o := range batch[1:] { // batch[0] is the leader's own op
		o.finished = true
		o.wake <- struct{}{}
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
	var seq int64
	// A decision or proposal event carries the action with its arguments:
	// its trust records need not keep a second copy.
	argsInEvent := false
	if len(rec.Events) > 0 {
		seq = w.events[first].Seq
		k := w.events[first].Kind
		argsInEvent = k == airlock.EventDecision || k == airlock.EventProposal
	}
	for _, t := range rec.Trust {
		t.Time = now
		if argsInEvent && t.EventSeq == 0 {
			t.Args = nil
		}
		if approvalID != "" && t.ApprovalID == "" {
			t.ApprovalID = approvalID
		}
		if t.EventSeq == 0 {
			t.EventSeq = seq
		}
		w.trust = append(w.trust, t)
	}
	router, queued := w.db.router.Load(), len(w.notes)
	for _, n := range rec.Notifications {
		if approvalID != "" && n.ApprovalID == "" {
			n.ApprovalID = approvalID
		}
		if n.EventSeq == 0 && len(rec.Events) > 0 {
			n.EventSeq = seq
		}
		// The router sees the causing event's payload; the deliveries do
		// not keep a copy of it (a request's is kilobytes): a notifier
		// reads it by EventSeq.
		ofEvent := n.Payload == nil && len(rec.Events) > 0
		if ofEvent {
			n.Payload = w.events[first].Payload
		}
		ds := []airlock.Notification{n}
		if router != nil {
			ds = (*router).Route(n)
		}
		for _, d := range ds {
			if ofEvent {
				d.Payload = nil
			}
			d.ID, d.Created, d.Status, d.Attempts = 0, now, airlock.NotificationPending, 0
			if d.Key == "" {
				d.Key = newDeliveryKey()
			}
			if d.Due.IsZero() {
				d.Due = now
			}
			w.notes = append(w.notes, d)
		}
	}
	w.writes += len(rec.Events) + len(rec.Trust) + len(w.notes) - queued
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
	} {
		st, err := db.write.PrepareContext(ctx, p.query)
		if err != nil {
			return unavailable("prepare", err)
		}
		*p.dst = st
	}
	return nil
}
