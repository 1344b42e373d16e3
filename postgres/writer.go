package postgres

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/internal/groupcommit"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// op is one caller's write: fn runs inside the batch's transaction.
//
// fn must check everything it can refuse (not found, conflict,
// unauthorised) before it writes anything: an op that fails after writing
// aborts its whole batch. A statement that fails aborts the transaction in
// PostgreSQL, so fn never runs one that a refusal could have avoided: it
// reads first, and writes with conditions (ON CONFLICT DO NOTHING, WHERE
// status = 'pending') whose miss it reports as a refusal.
type op = groupcommit.Op[write]

// write is what an op runs in the batch's transaction.
type write struct {
	fn func(*wtx) error
	// appendOnly: fn only seals and buffers rows (wtx.append) — it runs no
	// statement and can run again on another head (see DB.run).
	appendOnly bool
}

// exec runs fn in a write transaction and returns once that transaction is
// durable (or failed): the callers writing at once share one transaction
// (package groupcommit), on this replica.
//
// Each batch is one transaction that holds the chain's lock from its first
// statement to its commit: batches of every replica run one at a time, each
// reading what the one before committed.
func (db *DB) exec(ctx context.Context, fn func(*wtx) error) error {
	return db.submit(ctx, write{fn: fn})
}

// execAppend is exec for an fn that only appends (wtx.append): it runs no
// statement, reads nothing from the database and, when its batch's first
// attempt finds the head moved, runs again on the real one. A batch of
// such ops alone may take one round trip (see DB.run).
func (db *DB) execAppend(ctx context.Context, fn func(*wtx) error) error {
	return db.submit(ctx, write{fn: fn, appendOnly: true})
}

// submit runs w in the next batch.
func (db *DB) submit(ctx context.Context, w write) error {
	switch {
	case db.pool == nil:
		return airlock.Errorf(airlock.EUNAVAILABLE, "postgres: store is not open")
	case db.ReadOnly:
		return airlock.Errorf(airlock.EUNAVAILABLE, "postgres: schema %s is open read-only", db.schema())
	}
	limit := db.MaxBatch
	if limit <= 0 {
		limit = DefaultMaxBatch
	}
	err := db.writes.Submit(ctx, w, limit, db.run)
	if errors.Is(err, groupcommit.ErrClosed) {
		return airlock.Errorf(airlock.EUNAVAILABLE, "postgres: store is closed")
	}
	return err
}

// run executes one batch: every op, then the buffered rows, the
// notifications to other replicas and the commit. On any database failure
// every op of the batch fails with EUNAVAILABLE: nothing of it is
// acknowledged.
//
// A batch takes two round trips: begin (lock, read the head), then the
// rows and the commit. A batch of append-only ops (execAppend) takes one
// when this DB knows the head its last batch committed and no other
// replica has been writing: its events are sealed on that head, and one
// pipeline begins, locks, checks that the head is still that one (a
// statement that fails otherwise, which aborts the transaction before its
// COMMIT), writes and commits. If another replica appended meanwhile,
// nothing of the attempt commits, and the batch runs again the two-trip
// way, sealed on the head read under the lock.
func (db *DB) run(batch []*op) {
	var w *wtx
	defer func() {
		// On a panic (a bug), roll back and fail every op of the batch
		// before the panic goes on up (the queue answers every caller).
		if r := recover(); r != nil {
			if w != nil {
				w.end()
			}
			for _, o := range batch {
				o.Err = airlock.Errorf(airlock.EINTERNAL, "postgres: write batch failed: %v", r)
			}
			panic(r)
		}
	}()
	// A batch never waits forever: a database out of reach (a network
	// partition: the server cannot time us out) fails it, and its
	// callers, rather than stall every write of this replica.
	ctx, cancel := context.WithTimeout(context.Background(), 2*db.statementTimeout())
	defer cancel()
	fast := db.last.ok && (!db.contended || db.alwaysAssume) && !slices.ContainsFunc(batch, func(o *op) bool { return !o.W.appendOnly })
	var err error
	for {
		if fast {
			w, err = db.beginAssumed(ctx, db.last)
		} else {
			w, err = db.begin(ctx)
			if err == nil && db.last.ok && w.seq == db.last.seq && w.head == db.last.hash {
				db.contended = false // no other replica wrote since our last batch
			}
		}
		if err == nil {
			for _, o := range batch {
				o.Err = nil // of an attempt that did not commit
			}
			for _, o := range batch {
				if o.Ctx.Err() != nil {
					o.Err = o.Ctx.Err()
					continue
				}
				before := w.writes
				o.Err = o.W.fn(w)
				if ctx.Err() != nil {
					// The batch's deadline, not the caller's: not its refusal.
					o.Err, err = nil, ctx.Err()
					break
				}
				if o.Err != nil && (w.writes != before || fatal(o.Err)) {
					err = o.Err
					break
				}
			}
			if err == nil {
				err = w.commit()
			}
			w.end()
		}
		if fast && errors.Is(err, errHeadMoved) {
			// Another replica appended: the check aborted the transaction
			// before its COMMIT, and end rolled it back. Seal again on the
			// head read under the lock.
			fast, err = false, nil
			db.contended, db.last = true, chainHead{}
			db.headMoved.Add(1)
			continue
		}
		break
	}
	if err != nil {
		// The commit may have happened (its reply lost): the head is
		// unknown until a batch reads it again.
		db.last = chainHead{}
		db.logger().Error("postgres: write batch failed", "ops", len(batch), "err", db.redact(err.Error()))
		if ctx.Err() != nil {
			err = airlock.Errorf(airlock.EUNAVAILABLE, "postgres: write: the database did not answer within %s", 2*db.statementTimeout())
		}
		err = db.unavailable("write", err)
		now := time.Now()
		db.failedAt.Store(&now)
		for _, o := range batch {
			if o.Err == nil || !isRefusal(o.Err) {
				o.Err = err
			}
		}
	} else {
		db.last = chainHead{seq: w.seq, hash: w.head, ok: true}
		if fast {
			db.oneTrip.Add(1)
		}
		db.failedAt.Store(nil)
		db.hub.Publish(w.keys())
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

// wtx is the writer's transaction: ops write approvals, tokens and
// deliveries' states directly, and append events, trust records and new
// deliveries to buffers written once per batch.
type wtx struct {
	db   *DB
	ctx  context.Context // bounds the whole batch
	conn *pgxpool.Conn
	seq  int64        // the last sequence number assigned
	head airlock.Hash // its hash
	// assumed, when set, is the head the batch was sealed on without
	// reading it: commit begins the transaction, takes the lock and checks
	// it first (see DB.run).
	assumed *chainHead
	// writes counts rows written, to tell whether an op wrote anything
	// before failing.
	writes  int64
	events  []airlock.Event
	trust   []airlock.TrustRecord
	notes   []airlock.Notification
	changed []string // approvals whose waiters to wake after commit
	queued  bool     // a delivery was queued or made due
}

// Keys under which WaitEvents and DeliveriesQueued wait in the hub: no
// approval ID (a UUID) can take them.
const (
	eventsKey     = "\x00events"
	deliveriesKey = "\x00deliveries"
)

// beginBatch starts a batch's transaction and takes the chain's lock, then
// reads the chain's head from the events themselves (a statement of its
// own, so that it sees what the lock's previous holder committed): a head
// remembered from the last batch is never trusted unchecked (checkHead), so
// a batch whose commit reply was lost, or another replica's, can never fork
// the chain. READ COMMITTED is stated, whatever
// the database's default: a snapshot taken before the lock was granted
// would miss the previous holder's events.
var beginBatch = []string{
	`BEGIN ISOLATION LEVEL READ COMMITTED`,
	`SELECT id FROM chain_lock FOR UPDATE`,
	`SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1`,
}

// begin starts a batch: one round trip.
func (db *DB) begin(ctx context.Context) (*wtx, error) {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	w := &wtx{db: db, ctx: ctx, conn: conn}
	var b pgx.Batch
	for _, q := range beginBatch {
		b.Queue(q)
	}
	br := conn.SendBatch(ctx, &b)
	_, err = br.Exec()
	if err == nil {
		var locked bool
		if err = br.QueryRow().Scan(&locked); errors.Is(err, pgx.ErrNoRows) {
			err = errors.New("the chain's lock (the row of table chain_lock) is missing: restore it before writing")
		}
	}
	if err == nil {
		var h []byte
		err = br.QueryRow().Scan(&w.seq, &h)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			err = nil
		case err == nil:
			copy(w.head[:], h)
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		w.end()
		return nil, err
	}
	return w, nil
}

// chainHead is the chain's head: the last event's seq and hash (0 and the
// zero hash for an empty chain); ok when known.
type chainHead struct {
	seq  int64
	hash airlock.Hash
	ok   bool
}

// errHeadMoved: a batch sealed on an assumed head found, under the lock,
// that the chain had moved on; nothing of it was committed.
var errHeadMoved = errors.New("the chain's head moved")

// checkHead fails (division by zero: SQLSTATE 22012) unless the chain's
// head is seq $1 with hash $2 — or the chain is empty and $1 is 0 — and
// the chain's lock row exists (the statement before locked it). It is a
// statement of its own, after the lock's: under READ COMMITTED its
// snapshot holds every event the lock's previous holder committed. Its
// operands read tables: the planner cannot fold the division.
const checkHead = `SELECT 1 / (EXISTS (SELECT FROM chain_lock)
	AND coalesce((SELECT seq = $1 AND hash = $2 FROM events ORDER BY seq DESC LIMIT 1), $1 = 0))::int`

// beginAssumed starts a batch on the head h without a round trip: the
// transaction begins in commit, in the same pipeline as the rows.
func (db *DB) beginAssumed(ctx context.Context, h chainHead) (*wtx, error) {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	return &wtx{db: db, ctx: ctx, conn: conn, seq: h.seq, head: h.hash, assumed: &h}, nil
}

// end rolls back what was not committed and returns the connection to the
// pool (which discards a broken one).
func (w *wtx) end() {
	if w.conn == nil {
		return
	}
	pc := w.conn.Conn().PgConn()
	if !pc.IsClosed() && pc.TxStatus() != 'I' {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if _, err := w.conn.Exec(ctx, `ROLLBACK`); err != nil {
			w.conn.Conn().Close(ctx)
		}
		cancel()
	}
	w.conn.Release()
	w.conn = nil
}

func (w *wtx) now() time.Time { return w.db.now() }

// exec runs a statement in the batch's transaction; the rows it changes
// count as written.
func (w *wtx) exec(query string, args ...any) (pgconn.CommandTag, error) {
	tag, err := w.conn.Exec(w.ctx, query, text(args)...)
	if err != nil {
		return tag, err
	}
	w.writes += tag.RowsAffected()
	return tag, nil
}

// queryRow reads one row in the batch's transaction.
func (w *wtx) queryRow(query string, args ...any) pgx.Row {
	return w.conn.QueryRow(w.ctx, query, text(args)...)
}

// query reads rows in the batch's transaction.
func (w *wtx) query(query string, args ...any) (pgx.Rows, error) {
	return w.conn.Query(w.ctx, query, text(args)...)
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
		// The chain covers the headers as stored: made storable first.
		e.Kind, e.TraceID, e.Agent = storable(e.Kind), storable(e.TraceID), storable(e.Agent)
		e.Outcome, e.ApprovalID = storable(e.Outcome), storable(e.ApprovalID)
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
	w.writes += int64(len(rec.Events) + len(rec.Trust) + len(w.notes) - queued)
	return w.events[first:len(w.events):len(w.events)]
}

// The statements that write the buffered rows.
const (
	insertEvent = `INSERT INTO events (seq, time, kind, trace_id, agent, outcome, approval_id, payload, prev, hash)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`
	insertTrust = `INSERT INTO trust (time, agent, class, outcome, tier, trace_id, label, tool, autonomy_class,
		requires_human, code, args, approval_id, event_seq) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`
	insertDelivery = `INSERT INTO deliveries (key, created, channel, kind, recipients, reviewers, agent, approval_id,
		subject, payload, event_seq, due) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`
	notify = `SELECT pg_notify($1, $2)`
)

// commit writes the buffered rows, tells the other replicas what changed
// (NOTIFY, delivered only if the transaction commits) and commits: one
// pipeline, one round trip.
func (w *wtx) commit() error {
	var b pgx.Batch
	check := -1 // the index of checkHead in b
	if w.assumed != nil {
		b.Queue(beginBatch[0])
		b.Queue(beginBatch[1])
		check = b.Len()
		b.Queue(checkHead, w.assumed.seq, w.assumed.hash[:])
	}
	for i := range w.events {
		e := &w.events[i]
		b.Queue(insertEvent, e.Seq, e.Time.UnixNano(), e.Kind, e.TraceID, e.Agent, e.Outcome,
			e.ApprovalID, []byte(e.Payload), e.Prev[:], e.Hash[:])
	}
	for i := range w.trust {
		t := &w.trust[i]
		b.Queue(insertTrust, text([]any{t.Time.UnixNano(), t.Agent, string(t.Class), string(t.Outcome), int(t.Tier),
			t.TraceID, t.Label, t.Tool, t.AutonomyClass, t.RequiresHuman, t.Code, nilBytes(t.Args), t.ApprovalID,
			t.EventSeq})...)
	}
	for i := range w.notes {
		n := &w.notes[i]
		b.Queue(insertDelivery, text([]any{n.Key, n.Created.UnixNano(), n.Channel, n.Kind, nonNil(n.Recipients),
			nonNil(n.Reviewers), n.Agent, n.ApprovalID, n.Subject, nilBytes(n.Payload), n.EventSeq, n.Due.UnixNano()})...)
	}
	for _, p := range w.notices() {
		b.Queue(notify, w.db.channel, p)
	}
	b.Queue(`COMMIT`)
	br := w.conn.SendBatch(w.ctx, &b)
	var err error
	for i := range b.Len() - 1 {
		if _, err = br.Exec(); err != nil {
			if pe := (*pgconn.PgError)(nil); i == check && errors.As(err, &pe) && pe.Code == "22012" {
				err = errHeadMoved
			}
			break
		}
	}
	if err == nil {
		var tag pgconn.CommandTag
		if tag, err = br.Exec(); err == nil && tag.String() != "COMMIT" {
			err = errors.New("commit: the transaction was rolled back")
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return err
}

// keys are the hub keys whose waiters this batch's commit wakes.
func (w *wtx) keys() []string {
	keys := slices.Clip(w.changed)
	if len(w.events) > 0 {
		keys = append(keys, eventsKey)
	}
	if len(w.notes) > 0 || w.queued {
		keys = append(keys, deliveriesKey)
	}
	return keys
}

// maxNotice bounds a NOTIFY payload below PostgreSQL's 8000 bytes.
const maxNotice = 7900

// notices are the payloads of the NOTIFY that tells the other replicas
// what this batch changed: this DB's origin (its own listener skips them),
// then "e" (events appended), "d" (deliveries queued) and the IDs of the
// approvals that changed, split to fit.
func (w *wtx) notices() []string {
	keys := w.keys()
	if len(keys) == 0 {
		return nil
	}
	var out []string
	var s strings.Builder
	for _, k := range keys {
		switch k {
		case eventsKey:
			k = "e"
		case deliveriesKey:
			k = "d"
		default:
			k = "a:" + k
		}
		if s.Len() > 0 && s.Len()+1+len(k) > maxNotice {
			out = append(out, s.String())
			s.Reset()
		}
		if s.Len() == 0 {
			s.WriteString(w.db.origin)
		}
		s.WriteByte(' ')
		s.WriteString(k)
	}
	return append(out, s.String())
}

// storable returns s as a PostgreSQL text value can hold it: valid UTF-8
// without NUL bytes, each bad byte or NUL replaced by U+FFFD. Names that
// reach the store are validated before (no control characters); free text
// — a summary taken from arguments, an error a channel returned — may
// carry anything, and a statement that failed on it would abort every
// caller's writes in its batch.
func storable(s string) string {
	if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// text makes the string arguments of a statement storable.
func text(args []any) []any {
	for i, a := range args {
		switch v := a.(type) {
		case string:
			args[i] = storable(v)
		case []string:
			var c []string
			for j, s := range v {
				if t := storable(s); t != s {
					if c == nil {
						c = slices.Clone(v)
					}
					c[j] = t
				}
			}
			if c != nil {
				args[i] = c
			}
		}
	}
	return args
}

// nilBytes passes raw JSON as bytea, NULL when empty.
func nilBytes(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
