package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/internal/sqlstore"
)

var _ airlock.ApprovalStore = (*DB)(nil)

// approvalColumns are the columns scanApproval reads, in its order.
const approvalColumns = sqlstore.ApprovalColumns

// querier is a transaction or a pool.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

type rowScanner interface{ Scan(dest ...any) error }

func scanApproval(r rowScanner, ap *airlock.Approval) error {
	var (
		action, hash, effect, detail, reviewers                         []byte
		outcome, status, surface, capability                            string
		timeout, created, expires, resolvedAt, ttl, grantExp, grantUsed int64
		tier                                                            int
		review                                                          sqlstore.ReviewText
	)
	err := r.Scan(&ap.ID, &action, &hash, &effect, &ap.Class, &tier, &capability, &outcome, &ap.NeedsHuman, &ap.Summary,
		&detail, &reviewers, &ap.Owner, &timeout, &created, &expires, &status, &ap.ResolvedBy, &resolvedAt,
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
	if err := json.Unmarshal(reviewers, &ap.Reviewers); err != nil {
		return airlock.Errorf(airlock.EINTERNAL, "approval %s: stored reviewers: %v", ap.ID, err)
	}
	if ap.Outcome, err = airlock.ParseOutcome(outcome); err != nil {
		return err
	}
	copy(ap.ActionHash[:], hash)
	copy(ap.EffectHash[:], effect) // empty for requests queued before migration 3
	ap.Tier = airlock.RiskTier(tier)
	ap.Capability = airlock.Capability(capability)
	ap.Status, ap.Surface = airlock.ApprovalStatus(status), airlock.Surface(surface)
	ap.Timeout, ap.GrantTTL = time.Duration(timeout), time.Duration(ttl)
	ap.Created, ap.Expires, ap.ResolvedAt = fromNanos(created), fromNanos(expires), fromNanos(resolvedAt)
	ap.GrantExpires, ap.GrantUsed = fromNanos(grantExp), fromNanos(grantUsed)
	return nil
}

// loadApproval reads one request; ENOTFOUND when there is none.
func loadApproval(ctx context.Context, q querier, id string) (airlock.Approval, error) {
	var ap airlock.Approval
	err := scanApproval(q.QueryRowContext(ctx, `SELECT `+approvalColumns+` FROM approvals WHERE id = ?`, id), &ap)
	if errors.Is(err, sql.ErrNoRows) {
		return ap, airlock.Errorf(airlock.ENOTFOUND, "no approval request %q", id)
	}
	if err != nil {
		return ap, unavailable("read approval", err)
	}
	return ap, nil
}

// Approval returns one request.
func (db *DB) Approval(ctx context.Context, id string) (airlock.Approval, error) {
	return loadApproval(ctx, db.read, id)
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
		ap.GrantExpires, ap.GrantUsed = time.Time{}, time.Time{}
		if err := w.insertApproval(&ap, action); err != nil {
			return err
		}
		w.append(ap.Requested(), ap.ID)
		return w.spend(rec.Charges, w.append(rec, ap.ID))
	})
	return ap, joined, err
}

// pending finds the pending request for an action hash and kind.
func (w *wtx) pending(h airlock.Hash, o airlock.Outcome) (airlock.Approval, error) {
	var ap airlock.Approval
	err := scanApproval(w.tx.QueryRow(`SELECT `+approvalColumns+` FROM approvals
		WHERE action_hash = ? AND outcome = ? AND status = 'pending'`, h[:], o.String()), &ap)
	if errors.Is(err, sql.ErrNoRows) {
		return ap, airlock.Errorf(airlock.ENOTFOUND, "no pending request for sha256:%s", h)
	}
	if err != nil {
		return ap, unavailable("read approval", err)
	}
	return ap, nil
}

func (w *wtx) insertApproval(ap *airlock.Approval, action []byte) error {
	detail, err := json.Marshal(ap.Detail)
	if err != nil {
		return airlock.Errorf(airlock.EINVALID, "approval %s: detail: %v", ap.ID, err)
	}
	reviewers, _ := json.Marshal(nonNil(ap.Reviewers))
	review, escalateAt, _ := sqlstore.EncodeReview(ap)
	_, err = w.exec(`INSERT INTO approvals (id, agent, tool, trace_id, class, tier, capability, outcome, needs_human,
		action_hash, effect_hash, action, summary, detail, reviewers, owner, requested_by, timeout, created, expires, status,
		grant_ttl, review, escalate_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		ap.ID, ap.Agent, ap.Tool, ap.TraceID, ap.Class, int(ap.Tier), string(ap.Capability), ap.Outcome.String(),
		ap.NeedsHuman, ap.ActionHash[:], ap.EffectHash[:], action, ap.Summary, detail, reviewers, ap.Owner, ap.RequestedBy,
		int64(ap.Timeout), nanos(ap.Created), nanos(ap.Expires), string(ap.Status), int64(ap.GrantTTL), review.Review, escalateAt)
	return err
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// settle writes a request's new state (set by Resolve, Expire, Cancel or
// Escalate: its settlement, votes, edit and reviewers) and appends what
// the change records. Only a pending request changes.
func (w *wtx) settle(ap *airlock.Approval, rec airlock.Record) error {
	review, escalateAt, editHash := sqlstore.EncodeReview(ap)
	reviewers, _ := json.Marshal(nonNil(ap.Reviewers))
	res, err := w.exec(`UPDATE approvals SET status = ?, resolved_by = ?, resolved_at = ?, reason = ?, surface = ?,
		grant_expires = ?, run_now = ?, votes = ?, escalated = ?, escalate_at = ?, edit = ?, edit_hash = ?, reviewers = ?
		WHERE id = ? AND status = 'pending'`,
		string(ap.Status), ap.ResolvedBy, nanos(ap.ResolvedAt), ap.Reason, string(ap.Surface), nanos(ap.GrantExpires), ap.RunNow,
		review.Votes, review.Escalated, escalateAt, review.Edit, editHash, reviewers, ap.ID)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return airlock.Errorf(airlock.EINTERNAL, "approval %s changed under the writer", ap.ID)
	}
	w.append(rec, ap.ID)
	w.changed = append(w.changed, ap.ID)
	return nil
}

// ResolveApproval applies a resolution exactly once: the check and the
// update run in the writer, one op after another, so of racing reviewers
// the first wins and the rest see the conflict.
func (db *DB) ResolveApproval(ctx context.Context, r airlock.Resolution) (airlock.Approval, error) {
	if err := r.Validate(); err != nil {
		return airlock.Approval{}, err
	}
	var ap airlock.Approval
	err := db.exec(ctx, func(w *wtx) error {
		var err error
		if ap, err = loadApproval(context.Background(), w.tx, r.ApprovalID); err != nil {
			return err
		}
		now := w.now()
		if err := r.Check(&ap, now); err != nil {
			return err
		}
		return w.settle(&ap, ap.Resolve(&r, now))
	})
	return ap, err
}

// CancelApproval withdraws a pending request.
func (db *DB) CancelApproval(ctx context.Context, id, by, reason string, s airlock.Surface) (airlock.Approval, error) {
	var ap airlock.Approval
	err := db.exec(ctx, func(w *wtx) error {
		var err error
		if ap, err = loadApproval(context.Background(), w.tx, id); err != nil {
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
		if ap, err = loadApproval(context.Background(), w.tx, id); err != nil {
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
// requests whose step is due.
func (db *DB) EscalateDue(ctx context.Context, limit int) ([]airlock.Approval, error) {
	var out []airlock.Approval
	err := db.exec(ctx, func(w *wtx) error {
		now := w.now()
		rows, err := w.tx.Query(`SELECT `+approvalColumns+` FROM approvals INDEXED BY approvals_escalate
			WHERE status = 'pending' AND escalate_at > 0 AND escalate_at <= ? ORDER BY escalate_at LIMIT ?`,
			now.UnixNano(), airlock.PageSize(limit))
		if err != nil {
			return unavailable("read due escalations", err)
		}
		var due []airlock.Approval
		for rows.Next() {
			var ap airlock.Approval
			if err := scanApproval(rows, &ap); err != nil {
				rows.Close()
				return unavailable("read due escalations", err)
			}
			due = append(due, ap)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return unavailable("read due escalations", err)
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
	return out, err
}

// ExpireDue expires up to limit overdue pending requests.
func (db *DB) ExpireDue(ctx context.Context, limit int) ([]airlock.Approval, error) {
	var out []airlock.Approval
	err := db.exec(ctx, func(w *wtx) error {
		now := w.now()
		rows, err := w.tx.Query(`SELECT `+approvalColumns+` FROM approvals
			WHERE status = 'pending' AND expires <= ? ORDER BY expires LIMIT ?`, now.UnixNano(), airlock.PageSize(limit))
		if err != nil {
			return unavailable("read due approvals", err)
		}
		for rows.Next() {
			var ap airlock.Approval
			if err := scanApproval(rows, &ap); err != nil {
				rows.Close()
				return unavailable("read due approvals", err)
			}
			out = append(out, ap)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return unavailable("read due approvals", err)
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
		// As in CollectableApproval: the partial index holds only unused
		// approvals, where the planner would walk all of the agent's.
		err := scanApproval(w.tx.QueryRow(`SELECT `+approvalColumns+` FROM approvals INDEXED BY approvals_grant
			WHERE action_hash = ? AND agent = ? AND outcome = 'suggest' AND status = 'approved'
			AND grant_used = 0 AND grant_expires > ? ORDER BY resolved_at LIMIT 1`, h[:], agent, now.UnixNano()), &ap)
		if errors.Is(err, sql.ErrNoRows) {
			return airlock.Errorf(airlock.ENOTFOUND, "no approved grant for sha256:%s", h)
		}
		if err != nil {
			return unavailable("read grant", err)
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
		if ap, err = loadApproval(context.Background(), w.tx, id); err != nil {
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
	var ap airlock.Approval
	// Every ask check asks this: the partial index holds only the approved
	// requests not yet used, where the planner would otherwise walk all of
	// the agent's (or all approved) requests. Collect refuses only after
	// the deadline: one due now is collectable.
	now := db.now().UnixNano()
	err := scanApproval(db.read.QueryRowContext(ctx, `SELECT `+approvalColumns+` FROM approvals INDEXED BY approvals_grant
		WHERE action_hash = ? AND agent = ? AND outcome = 'ask' AND status = 'approved'
		AND grant_used = 0 AND expires >= ? ORDER BY expires LIMIT 1`, h[:], agent, now), &ap)
	if errors.Is(err, sql.ErrNoRows) {
		// An approval of this action as a reviewer edited it, which the
		// original's caller could not take: the edited action collects it.
		err = scanApproval(db.read.QueryRowContext(ctx, `SELECT `+approvalColumns+` FROM approvals INDEXED BY approvals_edited
			WHERE edit_hash = ? AND agent = ? AND outcome = 'ask' AND status = 'approved'
			AND grant_used = 0 AND expires >= ? ORDER BY expires LIMIT 1`, h[:], agent, now), &ap)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return ap, airlock.Errorf(airlock.ENOTFOUND, "no approval to collect for sha256:%s", h)
	}
	if err != nil {
		return ap, unavailable("read approval", err)
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
	if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM approvals WHERE status = ?`, string(status)).Scan(&n); err != nil {
		return 0, unavailable("count approvals", err)
	}
	return n, nil
}

// WaitApproval blocks until the request is no longer pending. In-process
// resolutions wake it at once; it rereads every PollInterval to notice
// another process's.
func (db *DB) WaitApproval(ctx context.Context, id string) (airlock.Approval, error) {
	poll := db.PollInterval
	if poll <= 0 {
		poll = DefaultPollInterval
	}
	for {
		changed, unsubscribe := db.hub.Subscribe(id)
		ap, err := db.Approval(ctx, id)
		if err != nil || ap.Status != airlock.StatusPending {
			unsubscribe()
			return ap, err
		}
		t := time.NewTimer(poll)
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

// markUsed records that an approved request was used (a grant, or an
// ask's collection) and appends the caller's record, then the use. The op
// checked it was unused: a row that changed anyway is a bug, and the batch
// fails.
func (w *wtx) markUsed(ap *airlock.Approval, rec, used airlock.Record) error {
	res, err := w.exec(`UPDATE approvals SET grant_used = ? WHERE id = ? AND grant_used = 0`, nanos(ap.GrantUsed), ap.ID)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return airlock.Errorf(airlock.EINTERNAL, "approval %s changed under the writer", ap.ID)
	}
	w.append(rec, ap.ID)
	w.append(used, ap.ID)
	return nil
}
