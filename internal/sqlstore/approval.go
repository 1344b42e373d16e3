package sqlstore

import (
	"context"
	"strconv"
	"strings"

	"github.com/airlock-dev/airlock"
	"github.com/google/uuid"
)

// ApprovalColumns are the columns of an approval request, in the order
// the stores scan them.
const ApprovalColumns = `id, action, action_hash, effect_hash, class, tier, capability, outcome, needs_human, summary, detail,
	reviewers, owner, timeout, created, expires, status, resolved_by, resolved_at, reason, surface,
	grant_ttl, grant_expires, grant_used, run_now, ` + ReviewColumns

// searchColumns are the columns ApprovalFilter.Search looks in.
var searchColumns = []string{"id", "agent", "tool", "class", "trace_id", "summary"}

// likeEscaper escapes LIKE's wildcards and its escape character.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// FindApprovals returns a page of requests, newest first unless f.Oldest.
// scan reads one row of ApprovalColumns.
func (r Reader) FindApprovals(ctx context.Context, f airlock.ApprovalFilter, scan func(Row, *airlock.Approval) error) (airlock.ApprovalPage, error) {
	var page airlock.ApprovalPage
	d := r.Dialect
	a := NewArgs(d)
	var where []string
	switch {
	case len(f.Status) == 1 && f.Status[0] == airlock.StatusPending:
		// Written out, so that the partial indexes on pending requests apply.
		where = append(where, "status = 'pending'")
	case len(f.Status) > 0:
		st := make([]string, len(f.Status))
		for i, s := range f.Status {
			if !s.Valid() {
				return page, airlock.Errorf(airlock.EINVALID, "unknown approval status %q", s)
			}
			st[i] = string(s)
		}
		// Listing by settlement, the status must not steer the planner
		// away from the index that holds that order.
		col := "status"
		if f.BySettled {
			col = d.Unindexed(col)
		}
		where = append(where, d.In(a, col, st))
	}
	if f.Agent != "" {
		where = append(where, "agent = "+a.Add(f.Agent))
	}
	if f.Class != "" {
		base := strings.TrimSuffix(f.Class, airlock.NeedsHumanSuffix)
		if base != f.Class {
			where = append(where, "class = "+a.Add(f.Class))
		} else {
			where = append(where, "class IN ("+a.Add(base)+", "+a.Add(base+airlock.NeedsHumanSuffix)+")")
		}
	}
	if f.Tool != "" {
		where = append(where, "tool = "+a.Add(f.Tool))
	}
	if f.MinTier > 0 {
		where = append(where, "tier >= "+a.Add(int(f.MinTier)))
	}
	if !f.CreatedBefore.IsZero() {
		where = append(where, "created < "+a.Add(f.CreatedBefore.UnixNano()))
	}
	if !f.CreatedAfter.IsZero() {
		where = append(where, "created > "+a.Add(f.CreatedAfter.UnixNano()))
	}
	if !f.ActionHash.IsZero() {
		where = append(where, "action_hash = "+a.Add(f.ActionHash[:]))
	}
	if !f.EffectHash.IsZero() {
		where = append(where, "effect_hash = "+a.Add(f.EffectHash[:]))
	}
	if f.Search != "" {
		where = append(where, d.Like(a, searchColumns, "%"+likeEscaper.Replace(f.Search)+"%"))
	}
	if f.IDPrefix != "" {
		where = append(where, d.Like(a, []string{"id"}, likeEscaper.Replace(f.IDPrefix)+"%"))
	}
	order, cmp := "id DESC", "<"
	if f.Oldest {
		order, cmp = "id ASC", ">"
	}
	// A time-ordered listing pages by "<time in Unix ns>.<id>", the last
	// row of the previous page.
	byTime := ""
	switch {
	case f.BySettled:
		// The literal status term lets the planner use the partial index.
		where = append(where, "status "+d.NotEqual()+" 'pending'")
		byTime = "resolved_at"
		order = "resolved_at DESC, id DESC"
		if f.Oldest {
			order = "resolved_at ASC, id ASC"
		}
	case f.ByDeadline:
		byTime, order, cmp = "expires", "expires ASC, id ASC", ">"
	}
	if f.Cursor != "" {
		badCursor := airlock.Errorf(airlock.EINVALID, "invalid cursor %q: use the next_cursor of the previous page", f.Cursor)
		if byTime != "" {
			at, id, ok := strings.Cut(f.Cursor, ".")
			t, err := strconv.ParseInt(at, 10, 64)
			if !ok || err != nil || uuid.Validate(id) != nil {
				return page, badCursor
			}
			where = append(where, d.After(a, byTime, cmp, t, id))
		} else {
			if uuid.Validate(f.Cursor) != nil {
				return page, badCursor
			}
			where = append(where, "id "+cmp+" "+a.Add(f.Cursor))
		}
	}
	q := `SELECT ` + ApprovalColumns + ` FROM approvals`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	limit := airlock.PageSize(f.Limit)
	q += ` ORDER BY ` + order + ` LIMIT ` + a.Add(limit+1)
	page.Approvals = []airlock.Approval{}
	err := r.Query(ctx, "find approvals", q, a.List(), func(row Row) error {
		var ap airlock.Approval
		if err := scan(row, &ap); err != nil {
			return err
		}
		page.Approvals = append(page.Approvals, ap)
		return nil
	})
	if err != nil {
		return page, err
	}
	if len(page.Approvals) > limit {
		page.Approvals = page.Approvals[:limit]
		last := &page.Approvals[limit-1]
		page.NextCursor = last.ID
		switch {
		case f.BySettled:
			page.NextCursor = strconv.FormatInt(nanos(last.ResolvedAt), 10) + "." + last.ID
		case f.ByDeadline:
			page.NextCursor = strconv.FormatInt(last.Expires.UnixNano(), 10) + "." + last.ID
		}
	}
	return page, nil
}
