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

// BudgetQuery reads, in one statement, an account's latest use (its
// total and time) and the total before its first use after a time (the
// latest total when the window holds none); no row for an account without
// uses. Parameters: the key, then the window's start in Unix nanoseconds
// (-1 for a grant's whole life).
func BudgetQuery(d Dialect) string {
	// The key's placeholder comes first in the text: SQLite's are
	// positional.
	return `WITH h AS (SELECT key, total, time FROM budget_uses WHERE key = ` + d.Placeholder(1) + `
		ORDER BY time DESC, total DESC LIMIT 1)
	SELECT h.total, h.time, COALESCE((SELECT s.total - s.cost FROM budget_uses s
		WHERE s.key = h.key AND s.time > ` + d.Placeholder(2) + ` ORDER BY s.time, s.total LIMIT 1), h.total)
	FROM h`
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
// with query, which runs BudgetQuery and scans its one row (noRows tells
// the error of none).
func ReadBudget(c *airlock.BudgetCharge, now time.Time, d Dialect, query func(q string, args []any, dest ...any) error,
	noRows func(error) bool) (BudgetHead, int64, error) {
	var h BudgetHead
	var before int64
	if err := query(BudgetQuery(d), []any{c.Key, WindowStart(c, now)}, &h.Total, &h.Time, &before); err != nil {
		if noRows(err) {
			return BudgetHead{}, 0, nil
		}
		return h, 0, err
	}
	return h, h.Total - before, nil
}

// WindowStart is the start of c's window at now, as BudgetQuery takes
// it.
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

// Accounts are the budgets' accounts a write batch has read and written,
// by key.
type Accounts map[string]Account

// Charge refuses, before anything is written, charges that would overspend
// a budget (a *airlock.BudgetSpent): each account is read once per batch
// with query (ReadBudget), and counted on from there.
func (as *Accounts) Charge(cs []airlock.BudgetCharge, now time.Time, d Dialect, query func(q string, args []any, dest ...any) error,
	noRows func(error) bool) error {
	if len(cs) == 0 {
		return nil
	}
	return airlock.Spends(cs, func(c *airlock.BudgetCharge) (int64, error) {
		if a, ok := (*as)[c.Key]; ok {
			return a.Used, nil
		}
		h, used, err := ReadBudget(c, now, d, query, noRows)
		if err != nil {
			return 0, err
		}
		if *as == nil {
			*as = Accounts{}
		}
		(*as)[c.Key] = Account{Head: h, Used: used}
		return used, nil
	})
}

// Spend takes the charges Charge let through at now (Unix nanoseconds),
// and has write record each use: the charge and its account after it.
func (as Accounts) Spend(cs []airlock.BudgetCharge, now int64, write func(c *airlock.BudgetCharge, a Account) error) error {
	for i := range cs {
		c := &cs[i]
		if c.Cost == 0 {
			continue
		}
		a := as[c.Key]
		a.Spend(c.Cost, now)
		as[c.Key] = a
		if err := write(c, a); err != nil {
			return err
		}
	}
	return nil
}
