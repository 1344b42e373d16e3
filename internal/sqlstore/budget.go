package sqlstore

import (
	"context"
	"time"

	"github.com/airlock-dev/airlock"
)

// BudgetUsedQuery returns the query of what a budget's window has used:
// the sum of its account's uses after a time (parameters: the key, then
// the window's start in Unix nanoseconds, -1 for a grant's whole life).
func BudgetUsedQuery(d Dialect) string {
	return `SELECT COALESCE(SUM(cost), 0) FROM budget_uses WHERE key = ` + d.Placeholder(1) + ` AND time > ` + d.Placeholder(2)
}

// WindowStart is the start of c's window at now, as BudgetUsedQuery takes
// it.
func WindowStart(c *airlock.BudgetCharge, now time.Time) int64 {
	if w := c.Budget.Window(); w > 0 {
		return now.Add(-w).UnixNano()
	}
	return -1
}

// BudgetUsed reads what each charge's window has used at now, from one
// snapshot of the store's reader.
func (r Reader) BudgetUsed(ctx context.Context, charges []airlock.BudgetCharge, now time.Time) ([]int64, error) {
	out := make([]int64, len(charges))
	q := BudgetUsedQuery(r.Dialect)
	for i := range charges {
		err := r.Query(ctx, "budget", q, []any{charges[i].Key, WindowStart(&charges[i], now)}, func(row Row) error {
			return row.Scan(&out[i])
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// BudgetPruneBefore is how old a use of a budget other than a grant's
// must be to be pruned: older than every rolling window.
const BudgetPruneBefore = airlock.MaxBudgetWindow
