package postgres

import (
	"context"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/internal/sqlstore"
)

var _ airlock.BudgetStore = (*DB)(nil)

// charge refuses, before anything is written, charges that would overspend
// a budget. The batch holds the chain's lock, which every writer of every
// replica takes first: what it reads is what the uses it writes next add
// to. A batch reads each account once; its later ops count on from there
// (its uses are as of one moment: a use leaving a window meanwhile is still
// counted, which only ever refuses, never overspends).
func (w *wtx) charge(cs []airlock.BudgetCharge) error {
	if len(cs) == 0 {
		return nil
	}
	now := w.now()
	return airlock.Spends(cs, func(c *airlock.BudgetCharge) (int64, error) {
		if u, ok := w.budgets[c.Key]; ok {
			return u, nil
		}
		var used int64
		if err := w.queryRow(sqlstore.BudgetUsedQuery(dialect{}), c.Key, sqlstore.WindowStart(c, now)).Scan(&used); err != nil {
			w.err = err // the batch's transaction cannot go on
			return 0, err
		}
		if w.budgets == nil {
			w.budgets = map[string]int64{}
		}
		w.budgets[c.Key] = used
		return used, nil
	})
}

// spend queues the uses of charges that charge let through, linked to the
// first of the record's sealed events.
func (w *wtx) spend(cs []airlock.BudgetCharge, sealed []airlock.Event) {
	var seq int64
	if len(sealed) > 0 {
		seq = sealed[0].Seq
	}
	now := nanos(w.now())
	for _, c := range cs {
		w.budgets[c.Key] += c.Cost
		if c.Cost == 0 {
			continue
		}
		w.writes++
		w.later(`INSERT INTO budget_uses (key, time, cost, event_seq) VALUES ($1, $2, $3, $4)`, c.Key, now, c.Cost, seq)
	}
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
