package postgres

import (
	"context"
	"errors"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/internal/sqlstore"
	"github.com/jackc/pgx/v5"
)

var _ airlock.BudgetStore = (*DB)(nil)

// charge refuses, before anything is written, charges that would overspend
// a budget. The batch holds the chain's lock, which every writer of every
// replica takes first: what it reads is what the uses it writes next add
// to. A batch reads each account once; its later ops count on from there
// (sqlstore.Account).
func (w *wtx) charge(cs []airlock.BudgetCharge) error {
	query := func(q string, args []any, dest ...any) error { return w.queryRow(q, args...).Scan(dest...) }
	noRows := func(err error) bool { return errors.Is(err, pgx.ErrNoRows) }
	err := w.budgets.Charge(cs, w.now(), dialect{}, query, noRows)
	if err != nil && airlock.AsBudgetSpent(err) == nil {
		w.err = err // the batch's transaction cannot go on
	}
	return err
}

// spend queues the uses of charges that charge let through, linked to the
// first of the record's sealed events.
func (w *wtx) spend(cs []airlock.BudgetCharge, sealed []airlock.Event) {
	var seq int64
	if len(sealed) > 0 {
		seq = sealed[0].Seq
	}
	w.budgets.Spend(cs, nanos(w.now()), func(c *airlock.BudgetCharge, a sqlstore.Account) error {
		w.writes++
		w.later(`INSERT INTO budget_uses (key, time, total, cost, event_seq) VALUES ($1, $2, $3, $4, $5)`,
			c.Key, a.Head.Time, a.Head.Total, c.Cost, seq)
		return nil
	})
}

// BudgetUsed returns what each charge's window has used now.
func (db *DB) BudgetUsed(ctx context.Context, charges []airlock.BudgetCharge) ([]int64, error) {
	now, err := db.Now(ctx)
	if err != nil {
		return nil, err
	}
	return db.reader().BudgetUsed(ctx, charges, now)
}

// PruneBudgets forgets the uses no window counts any more.
func (db *DB) PruneBudgets(ctx context.Context) (int64, error) {
	var n int64
	err := db.exec(ctx, func(w *wtx) error {
		now := w.now()
		tag, err := w.exec(`DELETE FROM budget_uses WHERE (key NOT LIKE 'grant:%' AND time <= $1)
			OR (key LIKE 'grant:%' AND substr(key, 7) IN (SELECT id FROM grants WHERE revoked <> 0 OR expires <= $2))`,
			nanos(now.Add(-sqlstore.BudgetPruneBefore)), nanos(now))
		n = tag.RowsAffected()
		return err
	})
	return n, err
}
