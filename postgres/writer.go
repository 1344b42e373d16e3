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
	"github.com/airlock-dev/airlock/internal/sqlstore"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// op is one caller's write: its fn runs inside the batch's transaction.
//
// fn must check everything it can refuse (not found, conflict,
// unauthorised) before it writes anything: an op that fails after writing
// aborts its whole batch. A statement that fails aborts the transaction in
// PostgreSQL, so fn never runs one that a refusal could have avoided: it
// reads first, and writes with conditions (ON CONFLICT DO NOTHING, WHERE
// status = 'pending') whose miss it reports as a refusal.
type op = groupcommit.Op[func(*wtx) error]

// exec runs fn in a write transaction and returns once that transaction is
// durable (or failed): the callers writing at once share one transaction
// (package groupcommit), on this replica. Each batch holds the chain's lock
// from its first statement to its commit: batches of every replica run one
// at a time, each reading what the one before committed.
func (db *DB) exec(ctx context.Context, fn func(*wtx) error) error {
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
	err := db.writes.Submit(ctx, fn, limit, db.run)
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
// A batch takes two round trips: the first sends BEGIN, the chain's lock
// and the head's read with the batch's first statement (or before its
// first append seals events on the head); the second, the writes sent
// later (wtx.later), the rows, the notifications and the commit.
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
	conn, err := db.pool.Acquire(ctx)
	if err == nil {
		w = &wtx{db: db, ctx: ctx, conn: conn}
		for _, o := range batch {
			if o.Ctx.Err() != nil {
				o.Err = o.Ctx.Err()
				continue
			}
			before := w.writes
			o.Err = o.W(w)
			if w.err != nil {
				o.Err, err = nil, w.err
				break
			}
			if ctx.Err() != nil {
				// The batch's deadline, not the caller's: not its refusal.
				o.Err, err = nil, ctx.Err()
				break
			}
			if o.Err != nil && (w.writes != before || !isRefusal(o.Err)) {
				err = o.Err
				break
			}
		}
		if err == nil {
			err = w.commit()
		}
		w.end()
	}
	if err != nil {
		db.logger().Error("postgres: write batch failed", "ops", len(batch), "err", db.redact(err.Error()))
		if ctx.Err() != nil {
			err = airlock.Errorf(airlock.EUNAVAILABLE, "postgres: write: the database did not answer within %s", 2*db.statementTimeout())
		}
		err = db.unavailable("write", err)
		now := time.Now()
		db.failedAt.Store(&now)
		db.batchFailures.Add(1)
		for _, o := range batch {
			if o.Err == nil || !isRefusal(o.Err) {
				o.Err = err
			}
		}
		return
	}
	if w.writes > 0 || len(w.events)+len(w.trust)+len(w.notes) > 0 {
		db.batches.Add(1) // its ops were not all refused, nor ran nothing
	}
	db.failedAt.Store(nil)
	db.hub.Publish(w.keys())
}

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
// deliveries' states with statements of their own or sent later, and
// append events, trust records and new deliveries to buffers written once
// per batch.
type wtx struct {
	db   *DB
	ctx  context.Context // bounds the whole batch
	conn *pgxpool.Conn
	seq  int64        // the last sequence number assigned
	head airlock.Hash // its hash
	// unsent are writes whose outcome is certain (wtx.later), not sent
	// yet: they go ahead of the next statement, in its round trip.
	unsent  []*pgx.QueuedQuery
	sent    bool  // begun: seq and head hold the chain's head, read under the lock
	err     error // a failure outside an op's own statements: the batch fails with it
	writes  int64 // rows written, to tell whether an op wrote anything before failing
	events  []airlock.Event
	trust   []airlock.TrustRecord
	notes   []airlock.Notification
	changed []string          // approvals whose waiters to wake after commit
	uses    []budgetUse       // the batch's budget uses, written with its commit
	budgets sqlstore.Accounts // the budgets' accounts the batch read, as it left them
	queued  bool              // a delivery was queued or made due
	revoked bool              // a token was revoked: its sessions end
}

// Keys under which WaitEvents and DeliveriesQueued wait in the hub: no
// approval ID (a UUID) can take them.
const (
	eventsKey     = "\x00events"
	deliveriesKey = "\x00deliveries"
	sessionsKey   = "\x00sessions"
)

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

// later queues a statement to send ahead of the next one the batch runs,
// or with the commit: a write whose outcome the op made certain (the row
// is locked and was checked) costs no round trip of its own. A statement
// that must change rows should fail when it does not (see settle): its
// error aborts the batch. Reads made after it see it, as they come after
// it in the same transaction.
func (w *wtx) later(query string, args ...any) {
	w.unsent = append(w.unsent, &pgx.QueuedQuery{SQL: query, Arguments: text(args)})
}

// send sends the pending statements and then query (none when ""), in one
// round trip, and reads the pending ones' results: the returned results
// are at query's. The caller reads them and closes them.
//
// The batch's first send begins its transaction, takes the chain's lock
// and reads the chain's head, ahead of the rest. The head is read from the
// events, in a statement of its own, so that its snapshot holds what the
// lock's previous holder committed; READ COMMITTED is stated, whatever the
// database's default: a snapshot taken before the lock was granted would
// miss them.
func (w *wtx) send(query string, args []any) (pgx.BatchResults, error) {
	var b pgx.Batch
	first := !w.sent
	if first {
		b.Queue(`BEGIN ISOLATION LEVEL READ COMMITTED`)
		b.Queue(`SELECT pg_advisory_xact_lock($1)`, w.db.chainKey)
		b.Queue(`SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1`)
	}
	b.QueuedQueries = append(b.QueuedQueries, w.unsent...)
	if query != "" {
		b.Queue(query, text(args)...)
	}
	pending := len(w.unsent)
	w.unsent, w.sent = nil, true
	br := w.conn.SendBatch(w.ctx, &b)
	var err error
	if first {
		err = w.readHead(br)
	}
	for i := 0; i < pending && err == nil; i++ {
		_, err = br.Exec()
	}
	if err != nil {
		br.Close()
		return nil, err
	}
	return br, nil
}

// readHead reads the results of the batch's beginning: the chain's head.
func (w *wtx) readHead(br pgx.BatchResults) error {
	for range 2 { // BEGIN, the lock
		if _, err := br.Exec(); err != nil {
			return err
		}
	}
	var h []byte
	err := br.QueryRow().Scan(&w.seq, &h)
	copy(w.head[:], h)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil // an empty chain: seq 0, the zero hash
	}
	return err
}

// exec runs a statement in the batch's transaction; the rows it changes
// count as written.
func (w *wtx) exec(query string, args ...any) (pgconn.CommandTag, error) {
	br, err := w.send(query, args)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		w.writes += tag.RowsAffected()
	}
	return tag, err
}

// queryRow reads one row in the batch's transaction.
func (w *wtx) queryRow(query string, args ...any) pgx.Row {
	br, err := w.send(query, args)
	return sentRow{br: br, err: err}
}

// sentRow is queryRow's row: scanning it closes its batch.
type sentRow struct {
	br  pgx.BatchResults
	err error
}

func (r sentRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	err := r.br.QueryRow().Scan(dest...)
	if cerr := r.br.Close(); err == nil {
		err = cerr
	}
	return err
}

// query reads rows in the batch's transaction.
func (w *wtx) query(query string, args ...any) (pgx.Rows, error) {
	br, err := w.send(query, args)
	if err != nil {
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		br.Close()
		return nil, err
	}
	return &sentRows{Rows: rows, br: br, w: w}, nil
}

// sentRows are query's rows: closing them closes their batch (whose
// failure then fails the batch).
type sentRows struct {
	pgx.Rows
	br pgx.BatchResults
	w  *wtx
}

func (r *sentRows) Close() {
	r.Rows.Close()
	if err := r.br.Close(); err != nil && r.w.err == nil {
		r.w.err = err
	}
}

// append seals rec's events onto the chain, on the head read under the
// lock, and buffers its rows, linking them to approvalID when set. It
// returns the sealed events.
func (w *wtx) append(rec airlock.Record, approvalID string) []airlock.Event {
	if !w.sent && w.err == nil {
		// Nothing sent yet: begin, lock and read the head now.
		br, err := w.send("", nil)
		if err == nil {
			err = br.Close()
		}
		w.err = err
	}
	if w.err != nil {
		return nil // the batch fails with w.err
	}
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
	var router airlock.Router
	if r := w.db.router.Load(); r != nil {
		router = *r
	}
	trust, notes := rec.Rows(w.events[first:], approvalID, now, router)
	w.trust, w.notes = append(w.trust, trust...), append(w.notes, notes...)
	w.writes += int64(len(rec.Events) + len(trust) + len(notes))
	return w.events[first:len(w.events):len(w.events)]
}

// insertEvents, insertTrust and insertDeliveries write a batch's buffered
// rows, one statement per table, each column as an array with one element
// per row, in the rows' order. Recipients and reviewers come as one array
// of every delivery's names in turn ($5, $6), a delivery's share given by
// its bounds ($7–$10, from and to: to below from for none).
const (
	insertEvents = `INSERT INTO events (seq, time, kind, trace_id, agent, outcome, approval_id, payload, prev, hash)
	SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
		$8::bytea[], $9::bytea[], $10::bytea[])`
	insertTrust = `INSERT INTO trust (time, agent, class, outcome, tier, trace_id, label, tool, autonomy_class,
		requires_human, code, args, approval_id, event_seq)
	SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::smallint[], $6::text[], $7::text[],
		$8::text[], $9::text[], $10::boolean[], $11::text[], $12::bytea[], $13::text[], $14::bigint[])`
	insertDeliveries = `INSERT INTO deliveries (key, created, channel, kind, recipients, reviewers, agent, approval_id,
		subject, payload, event_seq, due)
	SELECT x.key, x.created, x.channel, x.kind, ($5::text[])[x.r0:x.r1], ($6::text[])[x.v0:x.v1], x.agent, x.approval_id,
		x.subject, x.payload, x.event_seq, x.due
	FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $7::int[], $8::int[], $9::int[], $10::int[],
		$11::text[], $12::text[], $13::text[], $14::bytea[], $15::bigint[], $16::bigint[])
		WITH ORDINALITY AS x(key, created, channel, kind, r0, r1, v0, v1, agent, approval_id, subject, payload, event_seq, due, i)
	ORDER BY x.i`
)

// eventArgs returns insertEvents' arguments for the batch's events.
func (w *wtx) eventArgs() []any {
	n := len(w.events)
	seq, at, kind, trace, agent := make([]int64, n), make([]int64, n), make([]string, n), make([]string, n), make([]string, n)
	outcome, approval, payload, prev, hash := make([]string, n), make([]string, n), make([][]byte, n), make([][]byte, n), make([][]byte, n)
	for i := range w.events {
		e := &w.events[i]
		seq[i], at[i], kind[i], trace[i], agent[i] = e.Seq, e.Time.UnixNano(), e.Kind, e.TraceID, e.Agent
		outcome[i], approval[i], payload[i], prev[i], hash[i] = e.Outcome, e.ApprovalID, []byte(e.Payload), e.Prev[:], e.Hash[:]
	}
	return []any{seq, at, kind, trace, agent, outcome, approval, payload, prev, hash}
}

// trustArgs returns insertTrust's arguments for the batch's trust records.
func (w *wtx) trustArgs() []any {
	n := len(w.trust)
	at, event, tier, human, args := make([]int64, n), make([]int64, n), make([]int16, n), make([]bool, n), make([][]byte, n)
	agent, class, outcome, trace, label := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	tool, autonomy, code, approval := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	for i := range w.trust {
		t := &w.trust[i]
		at[i], event[i], tier[i], human[i], args[i] = t.Time.UnixNano(), t.EventSeq, int16(t.Tier), t.RequiresHuman, nilBytes(t.Args)
		agent[i], class[i], outcome[i], trace[i], label[i] = t.Agent, string(t.Class), string(t.Outcome), t.TraceID, t.Label
		tool[i], autonomy[i], code[i], approval[i] = t.Tool, t.AutonomyClass, t.Code, t.ApprovalID
	}
	return []any{at, agent, class, outcome, tier, trace, label, tool, autonomy, human, code, args, approval, event}
}

// deliveryArgs returns insertDeliveries' arguments for the batch's
// deliveries.
func (w *wtx) deliveryArgs() []any {
	k := len(w.notes)
	key, channel, kind, agent, approval, subject := make([]string, k), make([]string, k), make([]string, k),
		make([]string, k), make([]string, k), make([]string, k)
	created, event, due, payload := make([]int64, k), make([]int64, k), make([]int64, k), make([][]byte, k)
	r0, r1, v0, v1 := make([]int32, k), make([]int32, k), make([]int32, k), make([]int32, k)
	recipients, reviewers := []string{}, []string{}
	for i := range w.notes {
		n := &w.notes[i]
		key[i], channel[i], kind[i], agent[i], approval[i], subject[i] = n.Key, n.Channel, n.Kind, n.Agent, n.ApprovalID, n.Subject
		created[i], event[i], due[i] = n.Created.UnixNano(), n.EventSeq, n.Due.UnixNano()
		payload[i] = nilBytes(n.Payload)
		r0[i] = int32(len(recipients) + 1)
		recipients = append(recipients, n.Recipients...)
		r1[i] = int32(len(recipients))
		v0[i] = int32(len(reviewers) + 1)
		reviewers = append(reviewers, n.Reviewers...)
		v1[i] = int32(len(reviewers))
	}
	return []any{key, created, channel, kind, recipients, reviewers, r0, r1, v0, v1, agent, approval, subject,
		payload, event, due}
}

// commit writes the buffered rows, tells the other replicas what changed
// (NOTIFY, delivered only if the transaction commits) and commits, with
// what is pending: one pipeline, one round trip.
func (w *wtx) commit() error {
	if !w.sent && w.writes == 0 && len(w.events)+len(w.trust)+len(w.notes) == 0 {
		return nil // the batch ran nothing and wrote nothing: it never began
	}
	if len(w.events) > 0 {
		w.later(insertEvents, w.eventArgs()...)
	}
	if len(w.trust) > 0 {
		w.later(insertTrust, w.trustArgs()...)
	}
	if len(w.notes) > 0 {
		w.later(insertDeliveries, w.deliveryArgs()...)
	}
	if len(w.uses) > 0 {
		w.later(insertUses, w.usesArgs()...)
	}
	for _, p := range w.notices() {
		w.later(notify, w.db.channel, p)
	}
	br, err := w.send(`COMMIT`, nil)
	if err != nil {
		return err
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err == nil && tag.String() != "COMMIT" {
		err = errors.New("commit: the transaction was rolled back")
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
	if w.revoked {
		keys = append(keys, sessionsKey)
	}
	return keys
}

// notify sends a notification to the other replicas ($1 the channel, $2
// the payload: see notices).
const notify = `SELECT pg_notify($1, $2)`

// noticeWords are the words of a notification for the hub's keys but
// approvals' ("a:" and the approval's ID).
var noticeWords = map[string]string{eventsKey: "e", deliveriesKey: "d", sessionsKey: "s"}

// maxNotice bounds a NOTIFY payload below PostgreSQL's 8000 bytes.
const maxNotice = 7900

// notices are the payloads of the NOTIFY, sent in the batch's transaction,
// that tells the other replicas what this batch changed: this DB's origin
// (its own listener skips them), then "e" (events appended), "d"
// (deliveries queued), "s" (a token revoked) and the IDs of the approvals
// that changed, split to fit.
func (w *wtx) notices() []string {
	var out []string
	var s strings.Builder
	for _, k := range w.keys() {
		if word, ok := noticeWords[k]; ok {
			k = word
		} else {
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
	if s.Len() > 0 {
		out = append(out, s.String())
	}
	return out
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
