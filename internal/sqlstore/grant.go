package sqlstore

import (
	"context"
	"encoding/json"
	"math"
	"time"

	"github.com/airlock-dev/airlock"
)

// GrantColumns are a grants row's columns, in the order ScanGrant reads.
const GrantColumns = `id, agent, tool, pattern, outcome, max_tier, granted_by, approval_id, reason,
	created, expires, revoked, revoked_by, revoke_reason, budget`

// ScanGrant reads a grants row of GrantColumns.
func ScanGrant(r Row, g *airlock.Grant) error {
	var pattern, outcome, tier, budget string
	var created, expires, revoked int64
	if err := r.Scan(&g.ID, &g.Agent, &g.Tool, &pattern, &outcome, &tier, &g.GrantedBy, &g.Approval, &g.Reason,
		&created, &expires, &revoked, &g.RevokedBy, &g.RevokeReason, &budget); err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(pattern), &g.Pattern); err != nil {
		return err
	}
	g.Budget = nil
	if budget != "" {
		g.Budget = new(airlock.Budget)
		if err := json.Unmarshal([]byte(budget), g.Budget); err != nil {
			return err
		}
	}
	var err error
	if g.Outcome, err = airlock.ParseOutcome(outcome); err != nil {
		return err
	}
	if g.MaxTier, err = airlock.ParseRiskTier(tier); err != nil {
		return err
	}
	g.Created, g.Expires, g.Revoked = fromNanos(created), fromNanos(expires), fromNanos(revoked)
	return nil
}

// Grants lists the grants f selects, newest first. The agent filter is
// matched here, not in SQL: a grant's agent may be a glob.
func (r Reader) Grants(ctx context.Context, f airlock.GrantFilter) ([]airlock.Grant, error) {
	a := NewArgs(r.Dialect)
	q := `SELECT ` + GrantColumns + ` FROM grants`
	if !f.LiveAt.IsZero() {
		q += ` WHERE revoked = 0 AND expires > ` + a.Add(nanos(f.LiveAt))
	}
	q += ` ORDER BY created DESC, id DESC`
	limit := airlock.PageSize(f.Limit)
	if f.Unlimited {
		limit = math.MaxInt
	}
	out := []airlock.Grant{}
	err := r.Query(ctx, "grants", q, a.List(), func(row Row) error {
		var g airlock.Grant
		if err := ScanGrant(row, &g); err != nil {
			return err
		}
		if len(out) < limit && (f.Agent == "" || g.CoversAgent(f.Agent)) {
			out = append(out, g)
		}
		return nil
	})
	return out, err
}

// fromNanos is a stored time, 0 for the zero time.
func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// GrantBudget is the budget column's text of g: its budget's JSON, "" for
// none.
func GrantBudget(g *airlock.Grant) string {
	if g.Budget == nil {
		return ""
	}
	b, _ := json.Marshal(g.Budget) // a Budget always marshals
	return string(b)
}
