package sqlite

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/airlock-dev/airlock/internal/sqlstore"
)

var _ sqlstore.Dialect = dialect{}

// dialect writes the terms SQLite spells its own way in the reads shared
// with the other SQL store (package sqlstore).
type dialect struct{}

// Placeholder returns ?: SQLite's parameters go by position.
func (dialect) Placeholder(int) string { return "?" }

// NotEqual returns !=, as the partial indexes write it.
func (dialect) NotEqual() string { return "!=" }

// Unindexed puts the unary + before col: SQLite uses no index on a column
// written so.
func (dialect) Unindexed(col string) string { return "+" + col }

// In lists a parameter for each value.
func (dialect) In(a *sqlstore.Args, col string, vs []string) string {
	marks := make([]string, len(vs))
	for i, v := range vs {
		marks[i] = a.Add(v)
	}
	return col + " IN (" + strings.Join(marks, ", ") + ")"
}

// Like relies on SQLite's LIKE, which ignores ASCII case.
func (dialect) Like(a *sqlstore.Args, cols []string, pat string) string {
	conds := make([]string, len(cols))
	for i, c := range cols {
		conds[i] = c + ` LIKE ` + a.Add(pat) + ` ESCAPE '\'`
	}
	return "(" + strings.Join(conds, " OR ") + ")"
}

// After is written without a row value: the first term bounds col alone,
// which the index on (col, id) can seek.
func (dialect) After(a *sqlstore.Args, col, cmp string, t int64, id string) string {
	return col + " " + cmp + "= " + a.Add(t) + " AND (" + col + " " + cmp + " " + a.Add(t) + " OR id " + cmp + " " + a.Add(id) + ")"
}

// HasPrefix compares col's first characters (substr counts characters, not
// bytes).
func (dialect) HasPrefix(a *sqlstore.Args, col, prefix string) string {
	return "substr(" + col + ", 1, " + a.Add(utf8.RuneCountInString(prefix)) + ") = " + a.Add(prefix)
}

// reader returns the store's read side for the reads of package sqlstore.
func (db *DB) reader() sqlstore.Reader {
	return sqlstore.Reader{Dialect: dialect{}, Query: db.queryEach}
}

// queryEach runs a read on the read pool and calls row on each row. A
// failure is unavailable(what, err).
func (db *DB) queryEach(ctx context.Context, what, q string, args []any, row func(sqlstore.Row) error) error {
	rows, err := db.read.QueryContext(ctx, q, args...)
	if err != nil {
		return unavailable(what, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := row(rows); err != nil {
			return unavailable(what, err)
		}
	}
	if err := rows.Err(); err != nil {
		return unavailable(what, err)
	}
	return nil
}
