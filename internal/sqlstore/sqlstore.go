// Package sqlstore holds what the SQL stores (sqlite, postgres) read the
// same way: the listings' filters, orders and cursors, the trust summaries.
//
// They are written once, with each store's Dialect spelling the terms its
// database writes differently.
package sqlstore

import (
	"context"
	"time"
)

// A Dialect writes the terms of the shared SQL that one database spells
// its own way. A method that takes parameters adds them to a, in the
// order of their placeholders in the term it returns.
type Dialect interface {
	// Placeholder returns the marker of the nth parameter, counted from 1.
	Placeholder(n int) string
	// NotEqual returns the inequality operator, as the store's indexes
	// write it.
	NotEqual() string
	// Unindexed returns col written so that a condition on it does not
	// steer the planner to an index on col.
	Unindexed(col string) string
	// In returns the condition that col holds one of vs.
	In(a *Args, col string, vs []string) string
	// Like returns the condition that one of cols matches the LIKE
	// pattern pat, whose escape character is \, ASCII case ignored.
	Like(a *Args, cols []string, pat string) string
	// After returns the condition that the row comes after (t, id) in the
	// order of (col, id), cmp being "<" (descending) or ">" (ascending).
	After(a *Args, col, cmp string, t int64, id string) string
	// HasPrefix returns the condition that col starts with prefix.
	HasPrefix(a *Args, col, prefix string) string
}

// Row is the current row of a query.
type Row interface {
	Scan(dest ...any) error
}

// Reader is a SQL store's read side, as the shared code uses it.
type Reader struct {
	Dialect Dialect
	// Query runs query on the store's read connections and calls row on
	// each row it returns. A failure of the query or of row comes back
	// wrapped as the store reports a failed read of what.
	Query func(ctx context.Context, what, query string, args []any, row func(Row) error) error
}

// Args collects a query's parameters.
type Args struct {
	d    Dialect
	list []any
}

// NewArgs returns an empty parameter list written in d's placeholders.
func NewArgs(d Dialect) *Args {
	return &Args{d: d}
}

// Add appends v and returns its placeholder.
func (a *Args) Add(v any) string {
	a.list = append(a.list, v)
	return a.d.Placeholder(len(a.list))
}

// List returns the parameters in order.
func (a *Args) List() []any {
	return a.list
}

// nanos is a stored time as Unix nanoseconds, 0 for the zero time, as
// both stores store it.
func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}
