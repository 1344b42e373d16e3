package postgres

import (
	"context"
	"fmt"

	"github.com/airlock-dev/airlock"
	"github.com/jackc/pgx/v5"
)

// Bookkeeping tables of the schema, not Airlock data: Load leaves them as
// they are and requires nothing of them.
var loadSkip = map[string]bool{"schema_migrations": true}

// Load copies a whole store into this one (airlock store migrate): fn
// writes every row, identity columns included, in one transaction that
// commits all of it or nothing. The transaction holds the chain's lock, so
// no replica writes meanwhile, and has no statement timeout (a large copy
// takes long). Load refuses, before fn writes anything, a schema that
// already holds any Airlock data: it never merges. After fn, every
// identity sequence is moved past the largest ID copied, so that the rows
// written next do not collide. Errors: ECONFLICT (not empty),
// EUNAVAILABLE, and fn's.
func (db *DB) Load(ctx context.Context, fn func(ctx context.Context, tx pgx.Tx) error) error {
	if db.pool == nil {
		return airlock.Errorf(airlock.EUNAVAILABLE, "postgres: store is not open")
	}
	if db.ReadOnly {
		return airlock.Errorf(airlock.EUNAVAILABLE, "postgres: schema %s is open read-only", db.schema())
	}
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL statement_timeout = 0`); err != nil {
			return db.unavailable("load", err)
		}
		if _, err := tx.Exec(ctx, `SET LOCAL idle_in_transaction_session_timeout = 0`); err != nil {
			return db.unavailable("load", err)
		}
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, db.chainKey); err != nil {
			return db.unavailable("lock the chain", err)
		}
		tables, err := loadTables(ctx, tx)
		if err != nil {
			return db.unavailable("list tables", err)
		}
		for _, t := range tables {
			var found bool
			q := `SELECT EXISTS (SELECT 1 FROM ` + pgx.Identifier{t}.Sanitize() + `)`
			if err := tx.QueryRow(ctx, q).Scan(&found); err != nil {
				return db.unavailable("read "+t, err)
			}
			if found {
				return airlock.Errorf(airlock.ECONFLICT,
					"postgres: schema %s already holds airlock data (table %s is not empty): a store is copied only into an empty one, never merged", db.schema(), t)
			}
		}
		if err := fn(ctx, tx); err != nil {
			return err
		}
		return advanceIdentities(ctx, tx)
	})
	if err != nil {
		return db.unavailable("load", err)
	}
	return nil
}

// loadTables lists the schema's tables that hold Airlock data.
func loadTables(ctx context.Context, tx pgx.Tx) ([]string, error) {
	rows, err := tx.Query(ctx, `SELECT table_name FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`)
	if err != nil {
		return nil, err
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range names {
		if !loadSkip[n] {
			out = append(out, n)
		}
	}
	return out, nil
}

// advanceIdentities sets every identity sequence of the schema past the
// largest value its column holds.
func advanceIdentities(ctx context.Context, tx pgx.Tx) error {
	rows, err := tx.Query(ctx, `SELECT table_name, column_name FROM information_schema.columns
		WHERE table_schema = current_schema() AND is_identity = 'YES'`)
	if err != nil {
		return fmt.Errorf("list identity columns: %w", err)
	}
	type col struct{ table, column string }
	cols, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (col, error) {
		var c col
		return c, r.Scan(&c.table, &c.column)
	})
	if err != nil {
		return fmt.Errorf("list identity columns: %w", err)
	}
	for _, c := range cols {
		table := pgx.Identifier{c.table}.Sanitize()
		column := pgx.Identifier{c.column}.Sanitize()
		// A table left empty keeps its sequence as it was: its next value
		// is still its first.
		q := `SELECT setval(pg_get_serial_sequence($1, $2), max(` + column + `)) FROM ` + table +
			` HAVING max(` + column + `) IS NOT NULL`
		if _, err := tx.Exec(ctx, q, table, c.column); err != nil {
			return fmt.Errorf("advance the identity of %s.%s: %w", c.table, c.column, err)
		}
	}
	return nil
}
