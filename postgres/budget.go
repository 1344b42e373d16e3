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
		w.uses = append(w.uses, budgetUse{key: c.Key, time: a.Head.Time, total: a.Head.Total, cost: c.Cost, seq: seq})
		return nil
	})
}

// budgetUse is a use a batch writes with its commit, in one statement
// with the batch's others (insertUses): the batch reads each account once
// and counts on from what it wrote, so no statement of it reads them
// before.
type budgetUse struct {
	key                    string
	time, total, cost, seq int64
}

// insertUses writes a batch's budget uses, each column an array.
const insertUses = `INSERT INTO budget_uses (key, time, total, cost, event_seq)
	SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[])`

// usesArgs returns insertUses' arguments for the batch's uses.
func (w *wtx) usesArgs() []any {
	n := len(w.uses)
	key, at, total, cost, seq := make([]string, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	for i, u := range w.uses {
		key[i], at[i], total[i], cost[i], seq[i] = u.key, u.time, u.total, u.cost, u.seq
	}
	return []any{key, at, total, cost, seq}
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
