package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/airlock-dev/airlock"
)

// A budget's account is its uses, each with the account's running total
// after it, stamped in order (a use is never stamped before the one before
// it): what a window used is the latest total less the total before the
// window's first use.

// BudgetHeadQuery reads an account's latest use: its total and time
// (parameter: the key).
func BudgetHeadQuery(d Dialect) string {
	return `SELECT total, time FROM budget_uses WHERE key = ` + d.Placeholder(1) + ` ORDER BY time DESC, total DESC LIMIT 1`
}

// BudgetStartQuery reads the total before an account's first use after a
// time (parameters: the key, then the window's start in Unix nanoseconds,
// -1 for a grant's whole life).
func BudgetStartQuery(d Dialect) string {
	return `SELECT total - cost FROM budget_uses WHERE key = ` + d.Placeholder(1) + ` AND time > ` + d.Placeholder(2) +
		` ORDER BY time, total LIMIT 1`
}

// BudgetHead is an account's latest use, the zero value for none.
type BudgetHead struct {
	Total int64
	Time  int64 // Unix nanoseconds
}

// An Account is a budget's account as a write batch has read and written
// it: its latest use, and what its window has used. A batch reads each
// account once and counts on from there: its uses are as of one moment,
// so a use leaving the window meanwhile is still counted, which only ever
// refuses, never overspends.
type Account struct {
	Head BudgetHead
	Used int64
}

// Spend takes cost at now (Unix nanoseconds): the new use is stamped no
// earlier than the latest, and carries the account's total after it.
func (a *Account) Spend(cost, now int64) {
	a.Head = BudgetHead{Total: a.Head.Total + cost, Time: max(now, a.Head.Time)}
	a.Used += cost
}

// ReadBudget reads an account's head and what c's window has used at now
// with query, which runs one statement and scans its one row (sql.ErrNoRows,
// or the driver's, for none: noRows tells them).
func ReadBudget(c *airlock.BudgetCharge, now time.Time, d Dialect, query func(q string, args []any, dest ...any) error,
	noRows func(error) bool) (BudgetHead, int64, error) {
	var h BudgetHead
	if err := query(BudgetHeadQuery(d), []any{c.Key}, &h.Total, &h.Time); err != nil {
		if noRows(err) {
			return BudgetHead{}, 0, nil
		}
		return h, 0, err
	}
	var before int64
	if err := query(BudgetStartQuery(d), []any{c.Key, WindowStart(c, now)}, &before); err != nil {
		if noRows(err) {
			return h, 0, nil // no use in the window
		}
		return h, 0, err
	}
	return h, h.Total - before, nil
}

// WindowStart is the start of c's window at now, as BudgetStartQuery
// takes it.
func WindowStart(c *airlock.BudgetCharge, now time.Time) int64 {
	if w := c.Budget.Window(); w > 0 {
		return now.Add(-w).UnixNano()
	}
	return -1
}

// BudgetUsed reads what each charge's window has used at now, from the
// store's reader.
func (r Reader) BudgetUsed(ctx context.Context, charges []airlock.BudgetCharge, now time.Time) ([]int64, error) {
	out := make([]int64, len(charges))
	query := func(q string, args []any, dest ...any) error {
		found := false
		err := r.Query(ctx, "budget", q, args, func(row Row) error {
			found = true
			return row.Scan(dest...)
		})
		if err == nil && !found {
			return sql.ErrNoRows
		}
		return err
	}
	noRows := func(err error) bool { return errors.Is(err, sql.ErrNoRows) }
	for i := range charges {
		_, used, err := ReadBudget(&charges[i], now, r.Dialect, query, noRows)
		if err != nil {
			return nil, err
		}
		out[i] = used
	}
	return out, nil
}

// BudgetPruneBefore is how old a use of a budget other than a grant's
// must be to be pruned: older than every rolling window.
const BudgetPruneBefore = airlock.MaxBudgetWindow
