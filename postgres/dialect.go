package postgres

import (
	"context"
	"strconv"
	"strings"

	"github.com/airlock-dev/airlock/internal/sqlstore"
)

var _ sqlstore.Dialect = dialect{}

// dialect writes the terms PostgreSQL spells its own way in the reads
// shared with the other SQL store (package sqlstore).
type dialect struct{}

// Placeholder returns $n.
func (dialect) Placeholder(n int) string { return "$" + strconv.Itoa(n) }

// NotEqual returns <>, as the partial indexes write it.
func (dialect) NotEqual() string { return "<>" }

// Unindexed returns col as it is: PostgreSQL has no spelling that keeps
// its planner off an index, and is left to choose.
func (dialect) Unindexed(col string) string { return col }

// In passes the values as one array parameter.
func (dialect) In(a *sqlstore.Args, col string, vs []string) string {
	return col + " = ANY(" + a.Add(vs) + ")"
}

// Like ignores ASCII case as SQLite's LIKE does: lower() in the "C"
// collation folds ASCII only, and so does asciiLower.
func (dialect) Like(a *sqlstore.Args, cols []string, pat string) string {
	p := a.Add(asciiLower(pat))
	conds := make([]string, len(cols))
	for i, c := range cols {
		conds[i] = "lower(" + c + ` COLLATE "C") LIKE ` + p + ` ESCAPE '\'`
	}
	return "(" + strings.Join(conds, " OR ") + ")"
}

// After compares row values.
func (dialect) After(a *sqlstore.Args, col, cmp string, t int64, id string) string {
	return "(" + col + ", id) " + cmp + " (" + a.Add(t) + ", " + a.Add(id) + ")"
}

// HasPrefix uses starts_with.
func (dialect) HasPrefix(a *sqlstore.Args, col, prefix string) string {
	return "starts_with(" + col + ", " + a.Add(prefix) + ")"
}

// reader returns the store's read side for the reads of package sqlstore.
func (db *DB) reader() sqlstore.Reader {
	return sqlstore.Reader{Dialect: dialect{}, Query: db.queryEach}
}

// queryEach runs a read on the pool (as query) and calls row on each row.
// A failure is db.unavailable(what, err).
func (db *DB) queryEach(ctx context.Context, what, q string, args []any, row func(sqlstore.Row) error) error {
	rows, err := db.query(ctx, q, args...)
	if err != nil {
		return db.unavailable(what, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := row(rows); err != nil {
			return db.unavailable(what, err)
		}
	}
	if err := rows.Err(); err != nil {
		return db.unavailable(what, err)
	}
	return nil
}
