package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/internal/sqlstore"
)

var _ airlock.BudgetStore = (*DB)(nil)

// charge refuses, before anything is written, charges that would overspend
// a budget: the writer holds the write lock, so what it reads is what the
// uses it writes next add to. A batch reads each account once; its later
// ops count on from there (sqlstore.Account).
func (w *wtx) charge(cs []airlock.BudgetCharge) error {
	query := func(_ string, args []any, dest ...any) error {
		return w.tx.Stmt(w.db.stmts.budgetRead).QueryRow(args...).Scan(dest...) // BudgetQuery, prepared
	}
	noRows := func(err error) bool { return errors.Is(err, sql.ErrNoRows) }
	err := w.budgets.Charge(cs, w.now(), dialect{}, query, noRows)
	if err != nil && airlock.AsBudgetSpent(err) == nil {
		return unavailable("read budget", err)
	}
	return err
}

// spend writes the uses of charges that charge let through, linked to the
// first of the record's sealed events.
func (w *wtx) spend(cs []airlock.BudgetCharge, sealed []airlock.Event) error {
	var seq int64
	if len(sealed) > 0 {
		seq = sealed[0].Seq
	}
	return w.budgets.Spend(cs, nanos(w.now()), func(c *airlock.BudgetCharge, a sqlstore.Account) error {
		w.writes++
		if _, err := w.tx.Stmt(w.db.stmts.budgetUse).Exec(c.Key, a.Head.Time, a.Head.Total, c.Cost, seq); err != nil {
			return unavailable("write budget", err)
		}
		return nil
	})
}

// BudgetUsed returns what each charge's window has used now.
func (db *DB) BudgetUsed(ctx context.Context, charges []airlock.BudgetCharge) ([]int64, error) {
	return db.reader().BudgetUsed(ctx, charges, db.now())
}

// PruneBudgets forgets the uses no window counts any more.
func (db *DB) PruneBudgets(ctx context.Context) (int64, error) {
	var n int64
	err := db.exec(ctx, func(w *wtx) error {
		now := w.now()
		res, err := w.exec(`DELETE FROM budget_uses WHERE key NOT LIKE 'grant:%' AND time <= ?`, nanos(now.Add(-sqlstore.BudgetPruneBefore)))
		if err != nil {
			return err
		}
		n, _ = res.RowsAffected()
		res, err = w.exec(`DELETE FROM budget_uses WHERE key LIKE 'grant:%' AND substr(key, 7) IN
			(SELECT id FROM grants WHERE revoked != 0 OR expires <= ?)`, nanos(now))
		if err != nil {
			return err
		}
		m, _ := res.RowsAffected()
		n += m
		return nil
	})
	return n, err
}
