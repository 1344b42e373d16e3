package postgres

import (
	"errors"
	"fmt"
	"strings"

	"github.com/airlock-dev/airlock"
	"github.com/jackc/pgx/v5"
)

// sealSpecs are the events' columns sealRows takes ($2–$9), as "name
// type": the client's part of each event, headers encoded.
var sealSpecs = []string{"time bigint", "kind text", "trace_id text", "agent text", "outcome text",
	"approval_id text", "payload bytea", "headers bytea"}

// maxSealed is the most events a batch the database seals may hold.
const maxSealed = 256

// sealRowsUsing is sealRows that also records a use of an approved
// request ($24 when, $25 the request), as insertRows does (see markUsed):
// it returns no seal, and fails with 22P02 (usedAlready), unless the
// request was unused. The chain's lock, taken by the statement before it,
// is taken before the row's.
var sealRowsUsing = func() string {
	tail := "\nSELECT seq, prev, hash FROM s ORDER BY i"
	if !strings.HasSuffix(sealRows, tail) {
		panic("postgres: sealRows does not end as sealRowsUsing expects")
	}
	return strings.TrimSuffix(sealRows, tail) + `, u AS (
	UPDATE approvals SET grant_used = $24::bigint WHERE id = $25::text AND grant_used = 0 RETURNING 1
)
SELECT seq, prev, hash FROM s
WHERE (CASE (SELECT count(*) FROM u) WHEN 1 THEN '1' ELSE 'the request was used' END)::int = 1
ORDER BY i`
}()

// sealErr maps sealRowsUsing's failure when the request was used already
// to a guard's miss: the batch runs again, reading the request.
func sealErr(err error) error {
	if usedAlready(err) {
		return errGuardMissed
	}
	return err
}

// sealRows seals a batch's events in the database and writes them with
// their trust records: what a batch on a contended chain sends
// (beginSealing), after the chain's lock, in one pipeline. It reads the
// head in its own snapshot, taken once the lock was granted, and hashes
// each event after the one before it as airlock.Event.ChainHash does:
// SHA-256 over the domain ($1), the previous hash, the seq and the time
// (8-byte big-endian: int8send), the headers as the client encoded them
// (Event.ChainHeaders, $9) and the payload. The events come as arrays, one
// per column ($2–$9), read by subscript as the recursion walks them. Trust
// records ($10 on) that link to an event of the batch give its place in
// the batch (1 for the first), made a seq here; any other link comes
// negated (0 for none). It returns every event's seq, previous hash and
// hash, in order.
var sealRows = func() string {
	hash := func(prev, seq, i string) string {
		return `sha256($1::bytea || ` + prev + ` || int8send(` + seq + `) || int8send(($2::bigint[])[` + i + `])
			|| ($9::bytea[])[` + i + `] || ($8::bytea[])[` + i + `])`
	}
	trust := make([]string, len(trustSpecs))
	pick := make([]string, len(trustSpecs))
	for i, c := range trustSpecs {
		name, typ, _ := strings.Cut(c, " ")
		trust[i] = fmt.Sprintf("$%d::%s[]", 10+i, typ)
		pick[i] = "x." + name
		if name == "event_seq" {
			pick[i] = "CASE WHEN x.event_seq > 0 THEN x.event_seq + (SELECT seq FROM head) ELSE -x.event_seq END"
		}
	}
	return `WITH RECURSIVE head AS (
	SELECT coalesce((SELECT seq FROM events ORDER BY seq DESC LIMIT 1), 0) AS seq,
		coalesce((SELECT hash FROM events ORDER BY seq DESC LIMIT 1), '\x` + strings.Repeat("00", len(airlock.Hash{})) + `'::bytea) AS hash
), s(i, seq, prev, hash) AS (
	SELECT 1, head.seq + 1, head.hash, ` + hash("head.hash", "head.seq + 1", "1") + `
	FROM head WHERE cardinality($2::bigint[]) > 0
	UNION ALL
	SELECT s.i + 1, s.seq + 1, s.hash, ` + hash("s.hash", "s.seq + 1", "s.i + 1") + `
	FROM s WHERE s.i < cardinality($2::bigint[])
), e AS (
	INSERT INTO events (seq, time, kind, trace_id, agent, outcome, approval_id, payload, prev, hash)
	SELECT s.seq, ($2::bigint[])[s.i], ($3::text[])[s.i], ($4::text[])[s.i], ($5::text[])[s.i], ($6::text[])[s.i],
		($7::text[])[s.i], ($8::bytea[])[s.i], s.prev, s.hash
	FROM s
), t AS (
	INSERT INTO trust (` + columns(trustSpecs) + `)
	SELECT ` + strings.Join(pick, ", ") + `
	FROM unnest(` + strings.Join(trust, ", ") + `) AS x(` + columns(trustSpecs) + `)
)
SELECT seq, prev, hash FROM s ORDER BY i`
}()

// commitSealing commits a batch begun by beginSealing: the chain's lock,
// then sealRows (sealRowsUsing with a request's use), then the batch's
// deliveries (insertDeliveries) and its notifications to the other
// replicas, the first naming the head the database left (notifyHead), in
// the pipeline's implicit transaction. The events then take the seqs and
// hashes the database gave them — in w.events and in every slice append
// returned — and the batch's head is the last of them.
func (w *wtx) commitSealing() error {
	// These run the two-trip way instead: a batch with a write sent later
	// (it may rest on a read under the lock), one with a use but no events
	// (the use's guard is in sealRows' rows), a large one (sealRows reads
	// its arrays by subscript, from the start each time), and one that
	// queues deliveries or notifications but has nothing to seal.
	notices := w.notices()
	switch {
	case len(w.unsent) > 0 || w.use != nil && len(w.events) == 0 || len(w.events) > maxSealed:
		return errNotSealable
	case len(w.events)+len(w.trust) == 0 && len(w.notes)+len(notices) > 0:
		return errNotSealable
	case len(w.events)+len(w.trust) == 0:
		w.headKnown = false // the stand-in head is no head
		return nil
	}
	args := appendColumns([]any{[]byte(airlock.EventDomain)}, sealSpecs, 0, len(w.events), func(i int) []any {
		e := &w.events[i]
		return []any{e.Time.UnixNano(), e.Kind, e.TraceID, e.Agent, e.Outcome, e.ApprovalID, []byte(e.Payload),
			e.ChainHeaders()}
	})
	args = appendColumns(args, trustSpecs, 0, len(w.trust), func(i int) []any {
		row := w.trustRow(i)
		row[len(row)-1] = w.link(w.trust[i].EventSeq)
		return row
	})
	args = text(args)
	q := sealRows
	if w.use != nil {
		q = sealRowsUsing
		args = append(args, w.use.at, w.use.id)
	}
	var b pgx.Batch
	b.Queue(`SELECT pg_advisory_xact_lock($1)`, w.db.chainKey)
	// The events' text was made storable before they were sealed here
	// (append): their headers were encoded from what is stored.
	b.Queue(q, args...)
	var after []pendingStmt
	if len(w.notes) > 0 {
		after = append(after, pendingStmt{query: insertDeliveries, args: w.deliveryArgs()})
	}
	for i, p := range notices {
		if i > 0 || len(w.events) == 0 {
			after = append(after, pendingStmt{query: notify, args: []any{w.db.channel, p}})
			continue
		}
		// The first names the head the batch leaves (notices), which
		// only the database knows: the word written for the stand-in
		// head, as long as any, gives way to it.
		before, rest, ok := strings.Cut(p, " "+headNotice(chainHead{seq: w.seq, hash: w.head}))
		if !ok {
			panic("postgres: the batch's notice does not name the head its events leave")
		}
		after = append(after, pendingStmt{query: notifyHead, args: []any{w.db.channel, before + " ", rest}})
	}
	for _, p := range after {
		b.Queue(p.query, p.args...)
	}
	br := w.conn.SendBatch(w.ctx, &b)
	err := w.readSeals(br)
	if err == nil {
		err = readPending(br, after)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, errSealedUnlikeGo) && len(w.notes) > 0 {
		w.dropDeliveries()
	}
	return err
}

// errSealedUnlikeGo: the database sealed an event with another hash than
// Go computes for it (readSeals) — found once the batch had committed.
var errSealedUnlikeGo = errors.New("sealed with another hash than Airlock computes")

// dropDeliveries drops the deliveries of a batch that committed although
// its callers are refused (errSealedUnlikeGo): they would tell people of
// actions that did not run. A notifier that claimed one in the moment
// between the commit and this may still deliver it; the chain shows the
// batch broken in any case.
func (w *wtx) dropDeliveries() {
	keys := make([]string, len(w.notes))
	from, to := w.notes[0].Due.UnixNano(), w.notes[0].Due.UnixNano()
	for i := range w.notes {
		keys[i] = w.notes[i].Key
		from, to = min(from, w.notes[i].Due.UnixNano()), max(to, w.notes[i].Due.UnixNano())
	}
	// Found by the pending deliveries' index (deliveries_due), by when
	// they are due: key has none.
	if _, err := w.conn.Exec(w.ctx, `UPDATE deliveries SET status = 'dropped',
		last_error = 'its event was sealed with another hash than Airlock computes: its action did not run'
		WHERE status = 'pending' AND due BETWEEN $2 AND $3 AND key = ANY($1)`, text([]any{keys, from, to})...); err != nil {
		w.db.logger().Error("postgres: cannot drop the deliveries of a batch sealed unlike Airlock",
			"deliveries", len(keys), "err", w.db.redact(err.Error()))
	}
}

// notifyHead is notify for a batch the database sealed: its payload is $2,
// the head the batch's events left (as headNotice writes it), then $3.
const notifyHead = `SELECT pg_notify($1, $2 || (SELECT 'h:' || seq || ':' || encode(hash, 'hex')
	FROM events ORDER BY seq DESC LIMIT 1) || $3)`

// readSeals reads the lock's result, then the seals sealRows returns, and
// gives them to the batch's events.
func (w *wtx) readSeals(br pgx.BatchResults) error {
	if _, err := br.Exec(); err != nil {
		return err
	}
	rows, err := br.Query()
	if err != nil {
		return sealErr(err)
	}
	i := 0
	for rows.Next() {
		var prev, hash []byte
		if i == len(w.events) {
			rows.Close()
			return errors.New("postgres: the database sealed more events than the batch holds")
		}
		e := &w.events[i]
		if err := rows.Scan(&e.Seq, &prev, &hash); err != nil {
			rows.Close()
			return err
		}
		copy(e.Prev[:], prev)
		copy(e.Hash[:], hash)
		if e.ChainHash(e.Prev) != e.Hash {
			// The statement hashes as ChainHash does; were they ever to
			// differ (a bug), the chain fails verification from here.
			// Fail closed — the callers' actions do not run — and seal in
			// Go from now on.
			rows.Close()
			w.db.noSealing = true
			w.db.logger().Error("postgres: the database sealed an event with another hash than Airlock computes; "+
				"sealing in the database is off", "seq", e.Seq)
			return fmt.Errorf("postgres: event %d: %w", e.Seq, errSealedUnlikeGo)
		}
		i++
	}
	if err := rows.Err(); err != nil {
		return sealErr(err)
	}
	if i != len(w.events) {
		return fmt.Errorf("postgres: the database sealed %d of the batch's %d events", i, len(w.events))
	}
	if i == 0 {
		w.headKnown = false // trust records alone: the head was not returned
		return nil
	}
	first, last := &w.events[0], &w.events[len(w.events)-1]
	w.start = chainHead{seq: first.Seq - 1, hash: first.Prev, ok: true}
	w.seq, w.head = last.Seq, last.Hash
	for _, h := range w.handed {
		copy(h.evs, w.events[h.first:])
	}
	return nil
}
