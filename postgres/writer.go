package postgres

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
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
	// oneTrip: on a batch begun on an assumed head (wtx.assumed), fn runs
	// no statement — it seals and buffers rows (wtx.append) and queues
	// guarded writes (wtx.later) — and it can run again on another head
	// (see DB.run). A batch of such ops alone may take one round trip.
	oneTrip bool
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
	return db.submit(ctx, write{fn: fn, oneTrip: true})
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
// A batch takes two round trips: the first sends BEGIN, the chain's lock
// and the head's read with the batch's first statement; the second, the
// writes sent later (wtx.later), the rows and the commit. A batch of
// one-trip ops (appends; a collection of a request seen approved) takes
// one:
//
//   - when this DB knows the head — its last batch's, or a later one
//     another replica's notification told of — and has not seen another
//     replica write for contendedFor, its events are sealed on that head,
//     and one statement takes the lock, checks that the head is still that
//     one, and writes the rows, in the pipeline's implicit transaction; if
//     the head moved, nothing of the attempt commits and the batch runs
//     again, sealed by the database;
//   - otherwise the database seals its events, under the lock, in the one
//     statement that writes them (beginSealing) — its deliveries and
//     notifications follow in the same pipeline — unless the batch holds
//     a write sent later (a settlement, a new request: see commitSealing)
//     or is large (maxSealed): then it runs the two-trip way.
//
// A failed attempt also costs its connection the statements pgx had
// prepared for it: they are prepared again at their next use.
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
	// A hint is taken once: one that was wrong (stale, or forged by
	// whoever may NOTIFY on the database) costs one attempt, not one per
	// batch from then on (and the attempt's connection its prepared
	// statements: see above).
	if h := db.hinted.Swap(nil); h != nil && !db.ignoreHints && (!db.last.ok || h.seq > db.last.seq) {
		db.last = *h // another replica's commit moved the head there
	}
	oneTrip := !slices.ContainsFunc(batch, func(o *op) bool { return !o.W.oneTrip })
	fast := oneTrip && db.last.ok && (time.Now().After(db.contendedUntil) || db.alwaysAssume)
	seal := oneTrip && !fast && !db.noSealing
	var err error
	for {
		switch {
		case fast:
			w, err = db.beginAssumed(ctx, db.last)
		case seal:
			w, err = db.beginSealing(ctx)
		default:
			w, err = db.begin(ctx)
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
				if w.err != nil {
					o.Err, err = nil, w.err
					break
				}
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
		switch {
		case fast && errors.Is(err, errHeadMoved):
			// Another replica appended: the check aborted the transaction
			// before its COMMIT, and end rolled it back. Seal again on the
			// head under the lock: in the database, in one round trip.
			fast, seal, err = false, !db.noSealing, nil
			db.contendedUntil, db.last = time.Now().Add(contendedFor), chainHead{}
			db.headMoved.Add(1)
			continue
		case (fast || seal) && (errors.Is(err, errGuardMissed) || errors.Is(err, errNotSealable)):
			// A write an op made on what it knew of a row found the row
			// changed, or the batch holds what the database cannot seal:
			// nothing of the attempt committed. Run again the two-trip
			// way, every op reading what it writes.
			fast, seal, err = false, false, nil
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
		db.batchFailures.Add(1)
		for _, o := range batch {
			if o.Err == nil || !isRefusal(o.Err) {
				o.Err = err
			}
		}
	} else {
		if !fast && w.headKnown && db.last.ok && w.start != db.last {
			db.contendedUntil = time.Now().Add(contendedFor) // another replica wrote since our last batch
		}

		if w.headKnown {
			db.last = chainHead{seq: w.seq, hash: w.head, ok: true}
			tip := db.last
			db.tip.Store(&tip)
		}
		switch {
		case w.writes == 0 && len(w.events)+len(w.trust)+len(w.notes) == 0 && w.use == nil:
			// Its ops were refused, or ran nothing: no batch to count.
		case fast:
			db.oneTrip.Add(1)
		case seal:
			db.sealed.Add(1)
		default:
			db.twoTrips.Add(1)
		}
		db.failedAt.Store(nil)
		keys := w.keys()
		db.hub.Publish(keys)
		if len(keys) == 1 && keys[0] == eventsKey {
			db.hintEvents()
		}
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
// deliveries' states with statements of their own or sent later, and
// append events, trust records and new deliveries to buffers written once
// per batch.
type wtx struct {
	db   *DB
	ctx  context.Context // bounds the whole batch
	conn *pgxpool.Conn
	seq  int64        // the last sequence number assigned
	head airlock.Hash // its hash
	// start is the head the batch began on: insertRows checks it.
	start chainHead
	// assumed: start was not read but assumed (beginAssumed); the batch
	// runs as the implicit transaction of commit's pipeline.
	assumed bool
	// sealing: the database seals the batch's events (beginSealing); the
	// batch is assumed too, on a stand-in head.
	sealing bool
	// handed are the slices of events append returned, to be given the
	// database's seals.
	handed []handedEvents
	// headKnown: seq and head hold the chain's head (read under the lock,
	// or assumed): events may be sealed.
	headKnown bool
	// unsent are statements not sent yet: the batch's beginning, and
	// writes whose outcome is certain (wtx.later); they go ahead of the
	// next statement, in its round trip.
	unsent []pendingStmt
	sent   bool // a statement was sent: the transaction has begun
	// err is a failure outside an op's own statements (sending what was
	// pending before sealing): the batch fails with it.
	err error
	// writes counts rows written, to tell whether an op wrote anything
	// before failing.
	writes int64
	// use is a request's use that the rows' statement records (in a batch
	// on an assumed head: see markUsed).
	use     *approvalUse
	events  []airlock.Event
	trust   []airlock.TrustRecord
	notes   []airlock.Notification
	changed []string // approvals whose waiters to wake after commit
	queued  bool     // a delivery was queued or made due
	revoked bool     // a token was revoked: its sessions end
}

// Keys under which WaitEvents and DeliveriesQueued wait in the hub: no
// approval ID (a UUID) can take them.
const (
	eventsKey     = "\x00events"
	deliveriesKey = "\x00deliveries"
	sessionsKey   = "\x00sessions"
)

// beginBatch starts a batch's transaction and takes the chain's lock, then
// reads the chain's head from the events themselves (a statement of its
// own, so that its snapshot holds what the lock's previous holder
// committed). READ COMMITTED is stated, whatever the database's default: a
// snapshot taken before the lock was granted would miss the previous
// holder's events.
var beginBatch = []string{
	`BEGIN ISOLATION LEVEL READ COMMITTED`,
	`SELECT pg_advisory_xact_lock($1)`,
	`SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1`,
}

// begin starts a batch: its BEGIN, the chain's lock and the head's read
// are sent with the first statement the batch runs (or, for a batch whose
// ops only append, before they seal their events), in one round trip.
func (db *DB) begin(ctx context.Context) (*wtx, error) {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	w := &wtx{db: db, ctx: ctx, conn: conn}
	w.later(beginBatch[0], nil, nil)
	w.later(beginBatch[1], []any{db.chainKey}, nil)
	w.later(beginBatch[2], nil, func(br pgx.BatchResults) error {
		var h []byte
		err := br.QueryRow().Scan(&w.seq, &h)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			err = nil
		case err == nil:
			copy(w.head[:], h)
		}
		w.start, w.headKnown = chainHead{seq: w.seq, hash: w.head, ok: true}, err == nil
		return err
	})
	return w, nil
}

// chainHead is the chain's head: the last event's seq and hash (0 and the
// zero hash for an empty chain); ok when known.
type chainHead struct {
	seq  int64
	hash airlock.Hash
	ok   bool
}

// contendedFor is how long after it last saw another replica write a DB
// seals its batches under the lock (in the database, or on the head read
// under it) rather than on a head it assumes: an attempt on an assumed
// head that another replica has moved costs a round trip for nothing.
const contendedFor = 100 * time.Millisecond

// standIn is the seq of the head on which a batch the database seals is
// sealed in Go (beginSealing): its events take the seqs after it, so that a
// trust record or a delivery whose event is one of them tells it by its
// EventSeq (see link). No chain, gapless from 1, gets that far.
const standIn = 1 << 62

// errHeadMoved: a batch sealed on an assumed head found, under the lock,
// that the chain had moved on; nothing of it was committed.
var errHeadMoved = errors.New("the chain's head moved")

// errNotSealable: a batch begun for the database to seal its events
// (beginSealing) holds more than events, trust records and a request's
// use; nothing of it was sent.
var errNotSealable = errors.New("the batch holds more than the database seals")

// handedEvents are events append returned: w.events[first:] when it did.
type handedEvents struct {
	first int
	evs   []airlock.Event
}

// approvalUse is a request's use: its ID and when (grant_used).
type approvalUse struct {
	id string
	at int64
}

// errGuardMissed: a guarded write of a batch begun on an assumed head (a
// write sent later, or a use recorded by the rows' statement: 22P02)
// changed no row — the op wrote on what it knew of the row, not on a read
// under the lock, and the row had changed; nothing of the batch was
// committed.
var errGuardMissed = errors.New("a guarded write missed")

// beginAssumed starts a batch on the head h without a round trip: its rows
// are written by one pipeline that runs as an implicit transaction, in
// which insertRows takes the lock and checks h.
func (db *DB) beginAssumed(ctx context.Context, h chainHead) (*wtx, error) {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	return &wtx{db: db, ctx: ctx, conn: conn, seq: h.seq, head: h.hash, start: h, assumed: true, headKnown: true}, nil
}

// beginSealing starts a batch whose events the database seals: they are
// sealed here on a stand-in head (seq standIn, the zero hash) so that the
// records' rows can be made, and commit sends what the database needs to
// seal them again on the chain's head, which it reads under the lock
// (sealRows) — one round trip, the lock held for no round trip at all.
// Then the events take the seqs and hashes the database gave them.
func (db *DB) beginSealing(ctx context.Context) (*wtx, error) {
	w, err := db.beginAssumed(ctx, chainHead{seq: standIn, ok: true})
	if err != nil {
		return nil, err
	}
	w.sealing = true
	return w, nil
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

// pendingStmt is a statement sent later: result, when set, reads its
// result (else it is executed and its error, if any, returned).
type pendingStmt struct {
	query  string
	args   []any
	result func(pgx.BatchResults) error
}

// later queues a statement to send ahead of the next one the batch runs,
// or with the commit: a write whose outcome the op made certain (the row
// is locked and was checked) costs no round trip of its own. A statement
// that must change rows should fail when it does not (see settle): its
// error aborts the batch. Reads made after it see it, as they come after
// it in the same transaction.
func (w *wtx) later(query string, args []any, result func(pgx.BatchResults) error) {
	w.unsent = append(w.unsent, pendingStmt{query: query, args: text(args), result: result})
}

// send sends the pending statements and then query (none when ""), in one
// round trip, and reads the pending ones' results: the returned results
// are at query's. The caller reads them and closes them.
func (w *wtx) send(query string, args []any) (pgx.BatchResults, error) {
	if w.assumed {
		// Outside the transaction commit's pipeline makes, a statement
		// would commit on its own.
		panic("postgres: a statement in a batch begun on an assumed head")
	}
	var b pgx.Batch
	for _, p := range w.unsent {
		b.Queue(p.query, p.args...)
	}
	if query != "" {
		b.Queue(query, text(args)...)
	}
	pending := w.unsent
	w.unsent, w.sent = nil, true
	br := w.conn.SendBatch(w.ctx, &b)
	if err := readPending(br, pending); err != nil {
		br.Close()
		return nil, err
	}
	return br, nil
}

// readPending reads the results of statements sent from pending.
func readPending(br pgx.BatchResults, pending []pendingStmt) error {
	for _, p := range pending {
		if err := exec(br, p.result); err != nil {
			return err
		}
	}
	return nil
}

// exec reads the next result of br with result, or as a statement's
// outcome when result is nil.
func exec(br pgx.BatchResults, result func(pgx.BatchResults) error) error {
	if result != nil {
		return result(br)
	}
	_, err := br.Exec()
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
	if err != nil {
		return tag, err
	}
	w.writes += tag.RowsAffected()
	return tag, nil
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

// append seals rec's events onto the chain and buffers its rows, linking
// them to approvalID when set. It returns the sealed events.
func (w *wtx) append(rec airlock.Record, approvalID string) []airlock.Event {
	if !w.headKnown && w.err == nil {
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
	out := w.events[first:len(w.events):len(w.events)]
	if w.sealing {
		w.handed = append(w.handed, handedEvents{first: first, evs: out})
	}
	return out
}

// insertRows are the statements that write a batch's events and trust
// records, one statement for both tables: insertRows[e][t] takes e events
// as that many rows of values, or as arrays, unnested, when e is 0 (more
// than maxValues events), and likewise t trust records (t is 0 for arrays,
// -1 for none: insertRows[e][t+1]). PostgreSQL spends more on decoding and
// unnesting arrays than a small batch — one caller's decision, a
// collection's two events — saves. Its one-time filter takes the chain's
// lock ($1, held until the transaction ends) and fails (division by zero:
// SQLSTATE 22012) unless the chain's head is seq $2 with hash $3 — or the
// chain is empty and $2 is 0 — before an event is written.
//
// The check reads the statement's snapshot, which may be older than the
// lock when the statement had to wait for it: a head that moved meanwhile
// then either fails the check or, if the check passed on the stale head,
// the first event's seq collides with the one another transaction
// committed (unique violation on events_pkey, SQLSTATE 23505). Either way
// nothing of the batch is written and the chain cannot fork or skip. A
// batch that read the head under the lock (DB.begin) always passes.
//
// The trust CTE runs whether or not it is read, and may run first; an
// error anywhere aborts the whole statement, its rows with it.
//
// insertRows[e][t+1][1] also records a use of an approved request (see
// markUsed): the update's guard takes the chain's lock before the row's —
// the final SELECT reads it first — and the statement fails unless the
// request was unused, with an error of its own (22P02, the text that is not
// a number: see usedAlready).
var insertRows [maxValues + 1][maxValues + 2][2]string

// maxValues is the most rows of a table a batch writes as values.
const maxValues = 4

// The columns insertRows writes, as "name type".
var (
	eventSpecs = []string{"seq bigint", "time bigint", "kind text", "trace_id text", "agent text", "outcome text",
		"approval_id text", "payload bytea", "prev bytea", "hash bytea"}
	trustSpecs = []string{"time bigint", "agent text", "class text", "outcome text", "tier smallint",
		"trace_id text", "label text", "tool text", "autonomy_class text", "requires_human boolean", "code text",
		"args bytea", "approval_id text", "event_seq bigint"}
)

func init() {
	for e := range maxValues + 1 {
		for t := -1; t <= maxValues; t++ {
			q := `WITH e AS (
	INSERT INTO events (` + columns(eventSpecs) + `)
	SELECT * FROM ` + rowSource(eventSpecs, 4, e) + `
	WHERE (SELECT true FROM pg_advisory_xact_lock($1))
		AND 1 / coalesce((SELECT seq = $2 AND hash = $3 FROM events ORDER BY seq DESC LIMIT 1), $2 = 0)::int = 1
)`
			next := 4 + max(e, 1)*len(eventSpecs)
			if t >= 0 {
				q += `, t AS (
	INSERT INTO trust (` + columns(trustSpecs) + `)
	SELECT * FROM ` + rowSource(trustSpecs, next, t) + `
)`
				next += max(t, 1) * len(trustSpecs)
			}
			insertRows[e][t+1][0] = q + `
SELECT 1`
			insertRows[e][t+1][1] = q + fmt.Sprintf(`, u AS (
	UPDATE approvals SET grant_used = $%d::bigint
	WHERE id = $%d::text AND grant_used = 0 AND (SELECT true FROM pg_advisory_xact_lock($1))
	RETURNING 1
)
SELECT (CASE (SELECT count(*) FROM u) WHEN 1 THEN '1' ELSE 'the request was used' END)::int`, next, next+1)
		}
	}
}

// columns returns the names of "name type" column specs.
func columns(specs []string) string {
	names := make([]string, len(specs))
	for i, c := range specs {
		names[i], _, _ = strings.Cut(c, " ")
	}
	return strings.Join(names, ", ")
}

// rowSource returns the rows of columns given as parameters from $first
// on: n rows of values, row after row, or (n 0) one array per column,
// unnested.
func rowSource(specs []string, first, n int) string {
	if n == 0 {
		ps := make([]string, len(specs))
		for i, c := range specs {
			_, typ, _ := strings.Cut(c, " ")
			ps[i] = fmt.Sprintf("$%d::%s[]", first+i, typ)
		}
		return "unnest(" + strings.Join(ps, ", ") + ")"
	}
	rows := make([]string, n)
	for r := range rows {
		ps := make([]string, len(specs))
		for i, c := range specs {
			_, typ, _ := strings.Cut(c, " ")
			ps[i] = fmt.Sprintf("$%d::%s", first+r*len(specs)+i, typ)
		}
		rows[r] = "(" + strings.Join(ps, ", ") + ")"
	}
	return "(VALUES " + strings.Join(rows, ", ") + ") v"
}

// notify sends a notification to the other replicas ($1 the channel, $2
// the payload: see notices).
const notify = `SELECT pg_notify($1, $2)`

// insertDeliveries writes a batch's deliveries, one statement for all of
// them, in their order (their IDs follow it). Each column comes as an
// array, one element per delivery, but recipients and reviewers: each of
// those comes as one array of every delivery's names in turn ($5, $6),
// a delivery's share given by its bounds ($7–$10, from and to: to below
// from for none). The event a delivery links to comes as link encodes it
// ($15): a place in the batch ($16 events), made a seq from the head the
// batch's events left — the database sealed them, the chain's lock is
// held — or a seq, negated.
const insertDeliveries = `INSERT INTO deliveries (key, created, channel, kind, recipients, reviewers, agent, approval_id,
		subject, payload, event_seq, due)
	SELECT x.key, x.created, x.channel, x.kind, ($5::text[])[x.r0:x.r1], ($6::text[])[x.v0:x.v1], x.agent, x.approval_id,
		x.subject, x.payload,
		CASE WHEN x.link > 0 THEN x.link + (SELECT seq FROM events ORDER BY seq DESC LIMIT 1) - $16::bigint ELSE -x.link END,
		x.due
	FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $7::int[], $8::int[], $9::int[], $10::int[],
		$11::text[], $12::text[], $13::text[], $14::bytea[], $15::bigint[], $17::bigint[])
		WITH ORDINALITY AS x(key, created, channel, kind, r0, r1, v0, v1, agent, approval_id, subject, payload, link, due, i)
	ORDER BY x.i`

// deliveryArgs returns insertDeliveries' arguments for the batch's
// deliveries.
func (w *wtx) deliveryArgs() []any {
	k := len(w.notes)
	var (
		key, channel, kind, agent, approval, subject = make([]string, k), make([]string, k), make([]string, k),
			make([]string, k), make([]string, k), make([]string, k)
		created, link, due    = make([]int64, k), make([]int64, k), make([]int64, k)
		r0, r1, v0, v1        = make([]int32, k), make([]int32, k), make([]int32, k), make([]int32, k)
		recipients, reviewers = []string{}, []string{}
		payload               = make([][]byte, k)
	)
	for i := range w.notes {
		n := &w.notes[i]
		key[i], channel[i], kind[i], agent[i], approval[i], subject[i] = n.Key, n.Channel, n.Kind, n.Agent, n.ApprovalID, n.Subject
		created[i], link[i], due[i] = n.Created.UnixNano(), w.link(n.EventSeq), n.Due.UnixNano()
		payload[i] = nilBytes(n.Payload)
		r0[i] = int32(len(recipients) + 1)
		recipients = append(recipients, n.Recipients...)
		r1[i] = int32(len(recipients))
		v0[i] = int32(len(reviewers) + 1)
		reviewers = append(reviewers, n.Reviewers...)
		v1[i] = int32(len(reviewers))
	}
	return text([]any{key, created, channel, kind, recipients, reviewers, r0, r1, v0, v1, agent, approval, subject,
		payload, link, int64(len(w.events)), due})
}

// link encodes the seq of an event a trust record or a delivery links to,
// as sealRows and insertDeliveries take it: in a batch the database seals,
// a link to one of the batch's own events (past standIn) is the event's
// place in the batch, 1 for the first; any other seq is negated (0 for
// none).
func (w *wtx) link(seq int64) int64 {
	if w.sealing && seq > standIn {
		return seq - standIn
	}
	return -seq
}

// rowArgs returns the statement of insertRows that writes the buffered
// events and trust records, and its arguments.
func (w *wtx) rowArgs() (string, []any) {
	n, m := len(w.events), len(w.trust)
	e, t := form(n), form(m)
	if m == 0 {
		t = -1
	}
	args := make([]any, 0, 3+max(n, 1)*len(eventSpecs)+max(m, 1)*len(trustSpecs))
	args = append(args, w.db.chainKey, w.start.seq, w.start.hash[:])
	args = appendColumns(args, eventSpecs, e, n, func(i int) []any {
		ev := &w.events[i]
		return []any{ev.Seq, ev.Time.UnixNano(), ev.Kind, ev.TraceID, ev.Agent, ev.Outcome, ev.ApprovalID,
			[]byte(ev.Payload), ev.Prev[:], ev.Hash[:]}
	})
	if t >= 0 {
		args = appendColumns(args, trustSpecs, t, m, w.trustRow)
	}
	u := 0
	if w.use != nil {
		u = 1
		args = append(args, w.use.at, w.use.id)
	}
	return insertRows[e][t+1][u], text(args)
}

// trustRow returns the columns of the batch's trust record i, in the
// order of trustSpecs.
func (w *wtx) trustRow(i int) []any {
	tr := &w.trust[i]
	return []any{tr.Time.UnixNano(), tr.Agent, string(tr.Class), string(tr.Outcome), int16(tr.Tier), tr.TraceID,
		tr.Label, tr.Tool, tr.AutonomyClass, tr.RequiresHuman, tr.Code, nilBytes(tr.Args), tr.ApprovalID, tr.EventSeq}
}

// form is how insertRows takes n rows of a table: as values (n), or as
// arrays (0) when there are more than maxValues.
func form(n int) int {
	if n > maxValues {
		return 0
	}
	return n
}

// appendColumns appends n rows of the columns specs, row(i) each, as the
// parameters of the form f: each row's values in turn, or one array per
// column.
func appendColumns(args []any, specs []string, f, n int, row func(i int) []any) []any {
	if f > 0 {
		for i := range n {
			args = append(args, row(i)...)
		}
		return args
	}
	rows := make([][]any, n)
	for i := range rows {
		rows[i] = row(i)
	}
	for c, spec := range specs {
		switch _, typ, _ := strings.Cut(spec, " "); typ {
		case "bigint":
			args = append(args, columnOf[int64](rows, c))
		case "smallint":
			args = append(args, columnOf[int16](rows, c))
		case "text":
			args = append(args, columnOf[string](rows, c))
		case "boolean":
			args = append(args, columnOf[bool](rows, c))
		case "bytea":
			args = append(args, columnOf[[]byte](rows, c))
		default:
			panic("postgres: no array of " + typ)
		}
	}
	return args
}

// columnOf returns column c of rows as an array parameter.
func columnOf[T any](rows [][]any, c int) []T {
	s := make([]T, len(rows))
	for i, r := range rows {
		s[i] = r[c].(T)
	}
	return s
}

// commit writes the buffered rows, tells the other replicas what changed
// (NOTIFY, delivered only if the transaction commits) and commits: one
// pipeline, one round trip. A batch begun without a round trip
// (beginAssumed) runs as the pipeline's implicit transaction; its rows'
// statement, which takes the chain's lock, goes ahead of its guarded
// writes, so that it locks rows in the order every batch does: the chain
// first.
func (w *wtx) commit() error {
	if !w.assumed && !w.sent && w.writes == 0 && len(w.events)+len(w.trust)+len(w.notes) == 0 {
		return nil // the batch ran nothing and wrote nothing: it never began
	}
	if w.sealing {
		return w.commitSealing()
	}
	var stmts []pendingStmt
	if len(w.events)+len(w.trust) > 0 || w.use != nil {
		q, args := w.rowArgs()
		stmts = append(stmts, pendingStmt{query: q, args: args, result: func(br pgx.BatchResults) error {
			_, err := br.Exec()
			switch {
			case !w.assumed:
			case usedAlready(err):
				return errGuardMissed
			case headMoved(err):
				return errHeadMoved
			}
			return err
		}})
	}
	if w.assumed {
		for _, p := range w.unsent {
			stmts = append(stmts, pendingStmt{query: p.query, args: p.args, result: func(br pgx.BatchResults) error {
				err := exec(br, p.result)
				if guardMissed(err) {
					return errGuardMissed
				}
				return err
			}})
		}
	} else {
		stmts = append(w.unsent, stmts...)
	}
	w.unsent = nil
	if len(w.notes) > 0 {
		stmts = append(stmts, pendingStmt{query: insertDeliveries, args: w.deliveryArgs()})
	}
	for _, p := range w.notices() {
		stmts = append(stmts, pendingStmt{query: notify, args: []any{w.db.channel, p}})
	}
	if !w.assumed {
		stmts = append(stmts, pendingStmt{query: `COMMIT`, result: func(br pgx.BatchResults) error {
			tag, err := br.Exec()
			if err == nil && tag.String() != "COMMIT" {
				err = errors.New("commit: the transaction was rolled back")
			}
			return err
		}})
	}
	if len(stmts) == 0 {
		if w.assumed {
			w.headKnown = false // the assumed head was never checked
		}
		return nil
	}
	var b pgx.Batch
	for _, p := range stmts {
		b.Queue(p.query, p.args...)
	}
	br := w.conn.SendBatch(w.ctx, &b)
	err := readPending(br, stmts)
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return err
}

// usedAlready reports insertRows' failure when the request whose use it
// records was used already.
func usedAlready(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "22P02"
}

// guardMissed reports the failure of a guarded write that changed no row
// (see settle): its division by zero.
func guardMissed(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "22012"
}

// headMoved reports insertRows' failures that mean the head it was given
// is no longer the chain's: the check's division by zero, or the first
// seq taken by another transaction's event.
func headMoved(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "22012" || pe.Code == "23505" && pe.ConstraintName == "events_pkey")
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

// maxNotice bounds a NOTIFY payload below PostgreSQL's 8000 bytes.
const maxNotice = 7900

// notices are the payloads of the NOTIFY, sent in the batch's transaction,
// that tells the other replicas what this batch changed: this DB's origin
// (its own listener skips them), then the chain's head the batch leaves
// (headNotice), "e" (events appended), "d" (deliveries queued), "s" (a
// token revoked) and the IDs of the approvals that changed, split to fit. A batch that only appended
// events sends none: its commit is hinted after the fact (DB.hintEvents),
// off the caller's path.
func (w *wtx) notices() []string {
	keys := w.keys()
	if len(keys) == 0 || len(keys) == 1 && keys[0] == eventsKey {
		return nil
	}
	if len(w.events) > 0 {
		keys = append([]string{headNotice(chainHead{seq: w.seq, hash: w.head})}, keys...)
	}
	var out []string
	var s strings.Builder
	for _, k := range keys {
		switch {
		case k == eventsKey:
			k = "e"
		case k == deliveriesKey:
			k = "d"
		case k == sessionsKey:
			k = "s"
		case !strings.HasPrefix(k, "h:"):
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

// headNotice is the word of a notification that tells the chain's head:
// "h:" then its seq and hash, e.g. h:42:9f86…08 (64 hex digits).
func headNotice(h chainHead) string {
	return "h:" + strconv.FormatInt(h.seq, 10) + ":" + hex.EncodeToString(h.hash[:])
}

// parseHeadNotice reads headNotice's word; ok false when w is not one.
func parseHeadNotice(w string) (chainHead, bool) {
	seq, hash, ok := strings.Cut(strings.TrimPrefix(w, "h:"), ":")
	if !ok || !strings.HasPrefix(w, "h:") {
		return chainHead{}, false
	}
	h := chainHead{ok: true}
	var err error
	if h.seq, err = strconv.ParseInt(seq, 10, 64); err != nil || h.seq <= 0 {
		return chainHead{}, false
	}
	if len(hash) != hex.EncodedLen(len(h.hash)) {
		return chainHead{}, false
	}
	if _, err := hex.Decode(h.hash[:], []byte(hash)); err != nil {
		return chainHead{}, false
	}
	return h, true
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
