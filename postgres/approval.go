package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/internal/sqlstore"
	"github.com/jackc/pgx/v5"
)

var _ airlock.ApprovalStore = (*DB)(nil)

// approvalColumns are the columns scanApproval reads, in its order.
const approvalColumns = sqlstore.ApprovalColumns

func scanApproval(r pgx.Row, ap *airlock.Approval) error {
	var (
		action, hash, effect, detail                                    []byte
		outcome, status, surface, capability                            string
		timeout, created, expires, resolvedAt, ttl, grantExp, grantUsed int64
		tier                                                            int
		review                                                          sqlstore.ReviewText
	)
	err := r.Scan(&ap.ID, &action, &hash, &effect, &ap.Class, &tier, &capability, &outcome, &ap.NeedsHuman, &ap.Summary,
		&detail, &ap.Reviewers, &ap.Owner, &timeout, &created, &expires, &status, &ap.ResolvedBy, &resolvedAt,
		&ap.Reason, &surface, &ttl, &grantExp, &grantUsed, &ap.RunNow, &review.Review, &review.Votes, &review.Escalated,
		&review.Edit)
	if err != nil {
		return err
	}
	if err := review.Decode(ap); err != nil {
		return err
	}
	if err := json.Unmarshal(action, &ap.Action); err != nil {
		return airlock.Errorf(airlock.EINTERNAL, "approval %s: stored action: %v", ap.ID, err)
	}
	if err := json.Unmarshal(detail, &ap.Detail); err != nil {
		return airlock.Errorf(airlock.EINTERNAL, "approval %s: stored detail: %v", ap.ID, err)
	}
	if ap.Outcome, err = airlock.ParseOutcome(outcome); err != nil {
		return err
	}
	copy(ap.ActionHash[:], hash)
	copy(ap.EffectHash[:], effect)
	ap.Tier = airlock.RiskTier(tier)
	ap.Capability = airlock.Capability(capability)
	ap.Status, ap.Surface = airlock.ApprovalStatus(status), airlock.Surface(surface)
	ap.Timeout, ap.GrantTTL = time.Duration(timeout), time.Duration(ttl)
	ap.Created, ap.Expires, ap.ResolvedAt = fromNanos(created), fromNanos(expires), fromNanos(resolvedAt)
	ap.GrantExpires, ap.GrantUsed = fromNanos(grantExp), fromNanos(grantUsed)
	return nil
}

// oneApproval scans the row of one request; ENOTFOUND when there is none.
func (db *DB) oneApproval(r pgx.Row, what string) (airlock.Approval, error) {
	var ap airlock.Approval
	err := scanApproval(r, &ap)
	if errors.Is(err, pgx.ErrNoRows) {
		return ap, airlock.Errorf(airlock.ENOTFOUND, "no approval request %s", what)
	}
	if err != nil {
		return ap, db.unavailable("read approval", err)
	}
	return ap, nil
}

// Approval returns one request.
func (db *DB) Approval(ctx context.Context, id string) (airlock.Approval, error) {
	return db.oneApproval(db.queryRow(ctx, `SELECT `+approvalColumns+` FROM approvals WHERE id = $1`, id), strconv.Quote(id))
}

// approval reads one request in the writer's transaction, locking its row
// until the batch commits.
func (w *wtx) approval(id string) (airlock.Approval, error) {
	return w.db.oneApproval(w.queryRow(`SELECT `+approvalColumns+` FROM approvals WHERE id = $1 FOR UPDATE`, id), strconv.Quote(id))
}

// RequestApproval queues ap, or joins the identical pending request.
func (db *DB) RequestApproval(ctx context.Context, ap airlock.Approval, rec airlock.Record) (airlock.Approval, bool, error) {
	if err := ap.Validate(); err != nil {
		return ap, false, err
	}
	if err := rec.Prepare(); err != nil {
		return ap, false, err
	}
	action, err := json.Marshal(ap.Action)
	if err != nil {
		return ap, false, airlock.Errorf(airlock.EINVALID, "approval %s: action: %v", ap.ID, err)
	}
	detail, err := json.Marshal(ap.Detail)
	if err != nil {
		return ap, false, airlock.Errorf(airlock.EINVALID, "approval %s: detail: %v", ap.ID, err)
	}
	if ap.EffectHash, err = ap.Action.EffectHash(); err != nil {
		return ap, false, err
	}
	var joined bool
	err = db.exec(ctx, func(w *wtx) error {
		now := w.now()
		existing, err := w.pending(ap.ActionHash, ap.Outcome)
		switch {
		case err == nil && now.Before(existing.Expires):
			// Joining takes nothing from rec's budgets: it asks no one anew.
			ap, joined = existing, true
			w.append(rec, ap.ID)
			return nil
		case err != nil && airlock.ErrorCode(err) != airlock.ENOTFOUND:
			return err
		}
		if cerr := w.charge(rec.Charges); cerr != nil {
			return cerr
		}
		if err == nil { // pending past its deadline: expire it, queue anew
			if err := w.settle(&existing, existing.Expire(now)); err != nil {
				return err
			}
		}
		ap.Status, ap.Created, ap.Expires = airlock.StatusPending, now, now.Add(ap.Timeout)
		ap.ResolvedBy, ap.ResolvedAt, ap.Reason, ap.Surface = "", time.Time{}, "", ""
		ap.GrantExpires, ap.GrantUsed, ap.RunNow = time.Time{}, time.Time{}, false
		review, escalateAt, _ := sqlstore.EncodeReview(&ap)
		tag, err := w.exec(`INSERT INTO approvals (id, agent, tool, trace_id, class, tier, capability, outcome, needs_human,
			action_hash, effect_hash, action, summary, detail, reviewers, owner, requested_by, timeout, created, expires, status,
			grant_ttl, review, escalate_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17,
			$18, $19, $20, $21, $22, $23, $24)
			ON CONFLICT (id) DO NOTHING`,
			ap.ID, ap.Agent, ap.Tool, ap.TraceID, ap.Class, int(ap.Tier), string(ap.Capability), ap.Outcome.String(),
			ap.NeedsHuman, ap.ActionHash[:], ap.EffectHash[:], string(action), ap.Summary, string(detail), nonNil(ap.Reviewers),
			ap.Owner, ap.RequestedBy, int64(ap.Timeout), nanos(ap.Created), nanos(ap.Expires), string(ap.Status),
			int64(ap.GrantTTL), review.Review, escalateAt)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return airlock.Errorf(airlock.ECONFLICT, "approval request %s exists", ap.ID)
		}
		w.append(ap.Requested(), ap.ID)
		w.spend(rec.Charges, w.append(rec, ap.ID))
		return nil
	})
	return ap, joined, err
}

// pending finds the pending request for an action hash and kind, locking
// it.
func (w *wtx) pending(h airlock.Hash, o airlock.Outcome) (airlock.Approval, error) {
	return w.db.oneApproval(w.queryRow(`SELECT `+approvalColumns+` FROM approvals
		WHERE action_hash = $1 AND outcome = $2 AND status = 'pending' FOR UPDATE`, h[:], o.String()),
		"pending for sha256:"+h.String())
}

// settle writes a request's new state (set by Resolve, Expire, Cancel or
// Escalate: its settlement, votes, edit and reviewers) and appends what
// the change records. Every caller read the request
// pending and locked its row (FOR UPDATE) in this transaction, so the
// update cannot miss: it is sent with the batch's next statement or its
// commit (wtx.later), not in a round trip of its own. The condition stays
// as the last guard of a single resolution: an update that changes no row
// fails (division by zero), which aborts the transaction and the batch.
func (w *wtx) settle(ap *airlock.Approval, rec airlock.Record) error {
	review, escalateAt, editHash := sqlstore.EncodeReview(ap)
	w.later(`WITH u AS (UPDATE approvals SET status = $1, resolved_by = $2, resolved_at = $3, reason = $4, surface = $5,
		grant_expires = $6, run_now = $7, votes = $8, escalated = $9, escalate_at = $10, edit = $11, edit_hash = $12,
		reviewers = $13 WHERE id = $14 AND status = 'pending' RETURNING 1)
		SELECT 1 / count(*)::int FROM u`,
		string(ap.Status), ap.ResolvedBy, nanos(ap.ResolvedAt), ap.Reason, string(ap.Surface), nanos(ap.GrantExpires),
		ap.RunNow, review.Votes, review.Escalated, escalateAt, review.Edit, editHash, nonNil(ap.Reviewers), ap.ID)
	w.writes++
	w.append(rec, ap.ID)
	w.changed = append(w.changed, ap.ID)
	return nil
}

// ResolveApproval applies a resolution exactly once: the check and the
// update run in one transaction that holds the chain's lock and the
// request's row, so of racing reviewers — on any replica — the first wins
// and the rest see the conflict.
func (db *DB) ResolveApproval(ctx context.Context, r airlock.Resolution) (airlock.Approval, error) {
	if err := r.Validate(); err != nil {
		return airlock.Approval{}, err
	}
	var ap airlock.Approval
	err := db.exec(ctx, resolve(r, &ap))
	return ap, err
}

// resolve is ResolveApproval's op: it applies r, setting *ap.
func resolve(r airlock.Resolution, ap *airlock.Approval) func(*wtx) error {
	return func(w *wtx) error {
		var err error
		if *ap, err = w.approval(r.ApprovalID); err != nil {
			return err
		}
		now := w.now()
		if err := r.Check(ap, now); err != nil {
			return err
		}
		return w.settle(ap, ap.Resolve(&r, now))
	}
}

// CancelApproval withdraws a pending request.
func (db *DB) CancelApproval(ctx context.Context, id, by, reason string, s airlock.Surface) (airlock.Approval, error) {
	var ap airlock.Approval
	err := db.exec(ctx, func(w *wtx) error {
		var err error
		if ap, err = w.approval(id); err != nil {
			return err
		}
		if err := ap.CheckCancel(); err != nil {
			return err
		}
		return w.settle(&ap, ap.Cancel(by, reason, s, w.now()))
	})
	return ap, err
}

// ExpireApproval expires one request if its deadline passed.
func (db *DB) ExpireApproval(ctx context.Context, id string) (airlock.Approval, error) {
	var ap airlock.Approval
	err := db.exec(ctx, func(w *wtx) error {
		var err error
		if ap, err = w.approval(id); err != nil {
			return err
		}
		if now := w.now(); ap.Status == airlock.StatusPending && !now.Before(ap.Expires) {
			return w.settle(&ap, ap.Expire(now))
		}
		return nil
	})
	return ap, err
}

// EscalateDue takes the next escalation step of up to limit pending
// requests whose step is due. Every replica's sweeper may run it: batches
// take turns, and each finds only the steps the ones before left due.
func (db *DB) EscalateDue(ctx context.Context, limit int) ([]airlock.Approval, error) {
	var out []airlock.Approval
	err := db.exec(ctx, func(w *wtx) error {
		now := w.now()
		rows, err := w.query(`SELECT `+approvalColumns+` FROM approvals
			WHERE status = 'pending' AND escalate_at > 0 AND escalate_at <= $1 ORDER BY escalate_at, id LIMIT $2 FOR UPDATE`,
			now.UnixNano(), airlock.PageSize(limit))
		var due []airlock.Approval
		if err == nil {
			due, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (ap airlock.Approval, err error) {
				err = scanApproval(r, &ap)
				return
			})
		}
		if err != nil {
			return err
		}
		out = out[:0]
		for i := range due {
			if rec, ok := due[i].Escalate(now); ok {
				if err := w.settle(&due[i], rec); err != nil {
					return err
				}
				out = append(out, due[i])
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ExpireDue expires up to limit overdue pending requests. Every replica's
// sweeper may run it: batches take turns, and each finds only what the
// ones before left pending.
func (db *DB) ExpireDue(ctx context.Context, limit int) ([]airlock.Approval, error) {
	var out []airlock.Approval
	err := db.exec(ctx, func(w *wtx) error {
		now := w.now()
		rows, err := w.query(`SELECT `+approvalColumns+` FROM approvals
			WHERE status = 'pending' AND expires <= $1 ORDER BY expires, id LIMIT $2 FOR UPDATE`,
			now.UnixNano(), airlock.PageSize(limit))
		if err == nil {
			out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (ap airlock.Approval, err error) {
				err = scanApproval(r, &ap)
				return
			})
		}
		if err != nil {
			return err
		}
		for i := range out {
			if err := w.settle(&out[i], out[i].Expire(now)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// UseGrant consumes the approved proposal for this action, once.
func (db *DB) UseGrant(ctx context.Context, agent string, h airlock.Hash, rec airlock.Record) (airlock.Approval, error) {
	if err := rec.Prepare(); err != nil {
		return airlock.Approval{}, err
	}
	var ap airlock.Approval
	err := db.exec(ctx, func(w *wtx) error {
		now := w.now()
		err := scanApproval(w.queryRow(`SELECT `+approvalColumns+` FROM approvals
			WHERE action_hash = $1 AND agent = $2 AND outcome = 'suggest' AND status = 'approved'
			AND grant_used = 0 AND grant_expires > $3 ORDER BY resolved_at, id LIMIT 1 FOR UPDATE`,
			h[:], agent, now.UnixNano()), &ap)
		if errors.Is(err, pgx.ErrNoRows) {
			return airlock.Errorf(airlock.ENOTFOUND, "no approved grant for sha256:%s", h)
		}
		if err != nil {
			return err
		}
		return w.markUsed(&ap, rec, ap.UseGrant(now))
	})
	return ap, err
}

// CollectApproval marks an approved ask request as used, once.
func (db *DB) CollectApproval(ctx context.Context, id string, rec airlock.Record) (airlock.Approval, error) {
	if err := rec.Prepare(); err != nil {
		return airlock.Approval{}, err
	}
	var ap airlock.Approval
	err := db.exec(ctx, func(w *wtx) error {
		var err error
		if ap, err = w.approval(id); err != nil {
			return err
		}
		used, err := ap.Collect(w.now())
		if err != nil {
			return err
		}
		return w.markUsed(&ap, rec, used)
	})
	return ap, err
}

// CollectableApproval finds an approved ask request no check has collected
// yet, before its deadline.
func (db *DB) CollectableApproval(ctx context.Context, agent string, h airlock.Hash) (airlock.Approval, error) {
	// Collect refuses only after the deadline: one due now is collectable.
	var ap airlock.Approval
	now := db.now().UnixNano()
	err := scanApproval(db.queryRow(ctx, `SELECT `+approvalColumns+` FROM approvals
		WHERE action_hash = $1 AND agent = $2 AND outcome = 'ask' AND status = 'approved'
		AND grant_used = 0 AND expires >= $3 ORDER BY expires, id LIMIT 1`, h[:], agent, now), &ap)
	if errors.Is(err, pgx.ErrNoRows) {
		// An approval of this action as a reviewer edited it, which the
		// original's caller could not take: the edited action collects it.
		err = scanApproval(db.queryRow(ctx, `SELECT `+approvalColumns+` FROM approvals
			WHERE edit_hash = $1 AND agent = $2 AND outcome = 'ask' AND status = 'approved'
			AND grant_used = 0 AND expires >= $3 ORDER BY expires, id LIMIT 1`, h[:], agent, now), &ap)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return ap, airlock.Errorf(airlock.ENOTFOUND, "no approval to collect for sha256:%s", h)
	}
	if err != nil {
		return ap, db.unavailable("read approval", err)
	}
	return ap, nil
}

// FindApprovals returns a page of requests, newest first unless f.Oldest.
func (db *DB) FindApprovals(ctx context.Context, f airlock.ApprovalFilter) (airlock.ApprovalPage, error) {
	return db.reader().FindApprovals(ctx, f, func(r sqlstore.Row, ap *airlock.Approval) error {
		return scanApproval(r, ap)
	})
}

// CountApprovals counts the requests with a status.
func (db *DB) CountApprovals(ctx context.Context, status airlock.ApprovalStatus) (int64, error) {
	var n int64
	if err := db.queryRow(ctx, `SELECT count(*) FROM approvals WHERE status = $1`, string(status)).Scan(&n); err != nil {
		return 0, db.unavailable("count approvals", err)
	}
	return n, nil
}

// WaitApproval blocks until the request is no longer pending. A change in
// this process wakes it at once, another replica's through its
// notification; it rereads every PollInterval in case a notification was
// lost.
func (db *DB) WaitApproval(ctx context.Context, id string) (airlock.Approval, error) {
	var ap airlock.Approval
	for read := false; ; read = true {
		changed, unsubscribe := db.hub.Subscribe(id)
		var err error
		if !read {
			ap, err = db.Approval(ctx, id)
		} else {
			err = db.rereadState(ctx, &ap)
		}
		if err != nil || ap.Status != airlock.StatusPending {
			unsubscribe()
			if err != nil && ctx.Err() != nil {
				return ap, ctx.Err()
			}
			return ap, err
		}
		t := time.NewTimer(db.pollInterval())
		select {
		case <-changed:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			unsubscribe()
			return ap, ctx.Err()
		}
		t.Stop()
		unsubscribe()
	}
}

// rereadState reads again what a request's settlement, use and review
// change — nothing else of a request ever changes — into ap, read whole
// before: a waiter woken by a change need not read the action again,
// however large.
func (db *DB) rereadState(ctx context.Context, ap *airlock.Approval) error {
	var status, surface string
	var resolvedAt, grantExp, grantUsed int64
	var review sqlstore.ReviewText
	err := db.queryRow(ctx, `SELECT status, resolved_by, resolved_at, reason, surface, grant_expires, grant_used, run_now,
		reviewers, `+sqlstore.ReviewColumns+` FROM approvals WHERE id = $1`, ap.ID).Scan(&status, &ap.ResolvedBy, &resolvedAt,
		&ap.Reason, &surface, &grantExp, &grantUsed, &ap.RunNow, &ap.Reviewers, &review.Review, &review.Votes,
		&review.Escalated, &review.Edit)
	if errors.Is(err, pgx.ErrNoRows) {
		return airlock.Errorf(airlock.ENOTFOUND, "no approval request %s", strconv.Quote(ap.ID))
	}
	if err != nil {
		return db.unavailable("read approval", err)
	}
	ap.Status, ap.Surface = airlock.ApprovalStatus(status), airlock.Surface(surface)
	ap.ResolvedAt, ap.GrantExpires, ap.GrantUsed = fromNanos(resolvedAt), fromNanos(grantExp), fromNanos(grantUsed)
	return review.Decode(ap)
}

// markUsed records that an approved request was used (a grant, or an
// ask's collection) and appends the caller's record, then the use. Every
// caller found it approved and unused, locking the row (FOR UPDATE), so
// the update is sent with the commit (wtx.later); its condition guards it:
// an update that changes no row aborts the batch (see settle). The
// condition names the row by its key alone, so that no partial index of
// approved requests, whose scan grows with them, can serve it.
func (w *wtx) markUsed(ap *airlock.Approval, rec, used airlock.Record) error {
	w.later(`WITH u AS (UPDATE approvals SET grant_used = $1 WHERE id = $2 AND grant_used = 0 RETURNING 1)
		SELECT 1 / count(*)::int FROM u`, nanos(ap.GrantUsed), ap.ID)
	w.writes++
	w.append(rec, ap.ID)
	w.append(used, ap.ID)
	return nil
}

// asciiLower lowers the ASCII letters of s, and only them.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
