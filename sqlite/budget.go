package sqlite

import (
	"context"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/internal/sqlstore"
)

var _ airlock.BudgetStore = (*DB)(nil)

// charge refuses, before anything is written, charges that would overspend
// a budget: the writer holds the write lock, so what it reads is what the
// uses it writes next add to.
func (w *wtx) charge(cs []airlock.BudgetCharge) error {
	if len(cs) == 0 {
		return nil
	}
	now := w.now()
	return airlock.Spends(cs, func(c *airlock.BudgetCharge) (int64, error) {
		var used int64
		if err := w.tx.Stmt(w.db.stmts.budgetUsed).QueryRow(c.Key, sqlstore.WindowStart(c, now)).Scan(&used); err != nil {
			return 0, unavailable("read budget", err)
		}
		return used, nil
	})
}

// spend writes the uses of charges that charge let through, linked to the
// first of the record's sealed events.
func (w *wtx) spend(cs []airlock.BudgetCharge, sealed []airlock.Event) error {
	var seq int64
	if len(sealed) > 0 {
		seq = sealed[0].Seq
	}
	now := nanos(w.now())
	for _, c := range cs {
		if c.Cost == 0 {
			continue
		}
		w.writes++
		if _, err := w.tx.Stmt(w.db.stmts.budgetUse).Exec(c.Key, now, c.Cost, seq); err != nil {
			return unavailable("write budget", err)
		}
	}
	return nil
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
