// Package storecopy moves a store between databases: it copies an
// embedded SQLite store whole into PostgreSQL, verified on both sides.
package storecopy

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/postgres"
	"github.com/airlock-dev/airlock/sqlite"
)

// A table copied: its name, the columns of the source, in order, and what
// the report calls one row.
type copyTable struct {
	name             string
	columns          []string
	notNull          map[string]bool
	one, many        string
	rows             int64
	targetConversion []func(any) (any, error)
}

// nouns name the rows of the tables the report lists, in its order.
var nouns = []struct{ table, one, many string }{
	{"events", "event", "events"},
	{"approvals", "approval", "approvals"},
	{"tokens", "token", "tokens"},
	{"trust", "trust record", "trust records"},
	{"deliveries", "delivery", "deliveries"},
	{"tool_pins", "tool pin", "tool pins"},
	{"sessions", "inbox session", "inbox sessions"},
	{"grants", "grant", "grants"},
	{"budget_uses", "budget use", "budget uses"},
	{"passkeys", "passkey", "passkeys"},
	{"passkey_enrolments", "passkey enrolment", "passkey enrolments"},
}

// SQLiteToPostgres copies the SQLite store at path, as of one moment, into
// the PostgreSQL schema of the database dsn names: every table, row for
// row, in one transaction. The source's chain must verify, the target's
// schema must hold no Airlock data, and the copy's chain must verify with
// the source's head; otherwise nothing is copied and the error says why.
func SQLiteToPostgres(ctx context.Context, path, dsn, schema string) (Report, error) {
	src := sqlite.NewDB(path)
	src.ReadOnly = true // refuses a schema other than this binary's
	if err := src.Open(ctx); err != nil {
		return Report{}, err
	}
	defer src.Close()
	// A broken chain is refused before anything is written: copied, it
	// would be just as broken, and the target would take the blame.
	if rep, err := src.Verify(ctx); err != nil {
		return Report{}, err
	} else if !rep.OK() {
		return Report{}, fmt.Errorf("the audit log of %s is broken at seq %d: %s; nothing copied (airlock audit verify --db %s)",
			path, rep.FirstBad, rep.Problem, path)
	}
	snap, err := src.Snapshot(ctx)
	if err != nil {
		return Report{}, err
	}
	defer snap.Rollback()
	tables, err := sourceTables(ctx, snap)
	if err != nil {
		return Report{}, fmt.Errorf("read %s: %w", path, err)
	}
	// The head as of the snapshot: an empty log's is seq 0 and the zero
	// hash, as Verify reports it.
	var srcSeq int64
	var srcHash airlock.Hash
	var h []byte
	err = snap.QueryRowContext(ctx, `SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1`).Scan(&srcSeq, &h)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return Report{}, fmt.Errorf("read the head of %s: %w", path, err)
	}
	copy(srcHash[:], h)

	dst := postgres.NewDB(dsn)
	dst.Schema = schema
	if err := dst.Open(ctx); err != nil {
		return Report{}, err
	}
	defer dst.Close()
	err = dst.Load(ctx, func(ctx context.Context, tx pgx.Tx) error {
		if err := matchTables(ctx, tx, tables); err != nil {
			return err
		}
		for _, t := range tables {
			if err := copyRows(ctx, snap, tx, t); err != nil {
				return err
			}
		}
		var seq int64
		var hash []byte
		err := tx.QueryRow(ctx, `SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1`).Scan(&seq, &hash)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("read the copied head: %w", err)
		}
		if seq != srcSeq || string(hash) != string(h) {
			return airlock.Errorf(airlock.EINTERNAL, "the copied head is seq %d sha256:%x, the source's seq %d sha256:%x", seq, hash, srcSeq, h)
		}
		return nil
	})
	if err != nil {
		return Report{}, fmt.Errorf("copy into schema %s: %s; nothing copied", schema, airlock.ErrorMessage(err))
	}

	rep, err := dst.Verify(ctx)
	if err != nil {
		return Report{}, err
	}
	switch {
	case !rep.OK():
		return Report{}, fmt.Errorf("copied, but the chain on the target is broken at seq %d: %s", rep.FirstBad, rep.Problem)
	case rep.HeadSeq != srcSeq || rep.Head != srcHash:
		return Report{}, fmt.Errorf("copied, but the target's head is seq %d sha256:%s, the source's head seq %d sha256:%s", rep.HeadSeq, rep.Head, srcSeq, srcHash)
	}
	r := Report{HeadSeq: srcSeq, Head: srcHash}
	for _, t := range tables {
		r.Tables = append(r.Tables, Table{Name: t.name, One: t.one, Many: t.many, Rows: t.rows})
	}
	return r, nil
}

// Report is what SQLiteToPostgres copied.
type Report struct {
	// Tables are the tables copied, events first, with their rows.
	Tables []Table
	// HeadSeq and Head are the audit chain's head, the same on both sides.
	HeadSeq int64
	Head    airlock.Hash
}

// Table is one table copied and what a row of it is called.
type Table struct {
	Name, One, Many string
	Rows            int64
}

// String says what was copied, e.g. "copied 12 events (head seq 12
// sha256:…), 3 approvals, … — the chain verifies on the target".
func (r Report) String() string {
	var parts []string
	for _, t := range r.Tables {
		noun := t.Many
		if t.Rows == 1 {
			noun = t.One
		}
		p := fmt.Sprintf("%d %s", t.Rows, noun)
		if t.Name == "events" {
			p += fmt.Sprintf(" (head seq %d sha256:%s)", r.HeadSeq, r.Head)
		}
		parts = append(parts, p)
	}
	return "copied " + strings.Join(parts, ", ") + " — the chain verifies on the target"
}

// sourceTables lists the source's tables, but for its migrations' record
// (each store keeps its own), with their columns.
func sourceTables(ctx context.Context, tx *sql.Tx) ([]*copyTable, error) {
	rows, err := tx.QueryContext(ctx, `SELECT name FROM sqlite_schema
		WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name != 'schema_migrations' ORDER BY name`)
	if err != nil {
		return nil, err
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return nil, err
		}
		names = append(names, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var tables []*copyTable
	for _, n := range names {
		t := &copyTable{name: n, one: "row of " + n, many: "rows of " + n, notNull: map[string]bool{}}
		for _, w := range nouns {
			if w.table == n {
				t.one, t.many = w.one, w.many
			}
		}
		cols, err := tx.QueryContext(ctx, `SELECT name, "notnull" FROM pragma_table_info(?) ORDER BY cid`, n)
		if err != nil {
			return nil, err
		}
		for cols.Next() {
			var c string
			var notNull bool
			if err := cols.Scan(&c, &notNull); err != nil {
				cols.Close()
				return nil, err
			}
			t.columns = append(t.columns, c)
			t.notNull[c] = notNull
		}
		cols.Close()
		if err := cols.Err(); err != nil {
			return nil, err
		}
		tables = append(tables, t)
	}
	// The report's order: the tables it names first.
	rank := func(t *copyTable) int {
		i := slices.IndexFunc(nouns, func(w struct{ table, one, many string }) bool { return w.table == t.name })
		if i < 0 {
			return len(nouns)
		}
		return i
	}
	slices.SortStableFunc(tables, func(a, b *copyTable) int { return rank(a) - rank(b) })
	return tables, nil
}

// matchTables checks that the target has exactly the source's tables and
// columns — nothing of the source may be dropped, nothing of the target
// left to a default — and sets how each column's values convert.
func matchTables(ctx context.Context, tx pgx.Tx, tables []*copyTable) error {
	rows, err := tx.Query(ctx, `SELECT c.table_name, c.column_name, c.data_type, c.udt_name
		FROM information_schema.columns c JOIN information_schema.tables t USING (table_schema, table_name)
		WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
			AND c.table_name <> 'schema_migrations'`)
	if err != nil {
		return fmt.Errorf("read the target's columns: %w", err)
	}
	target := map[string]map[string]string{} // table → column → type
	for rows.Next() {
		var table, column, typ, udt string
		if err := rows.Scan(&table, &column, &typ, &udt); err != nil {
			rows.Close()
			return fmt.Errorf("read the target's columns: %w", err)
		}
		if typ == "ARRAY" {
			typ = udt
		}
		if target[table] == nil {
			target[table] = map[string]string{}
		}
		target[table][column] = typ
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read the target's columns: %w", err)
	}
	for _, t := range tables {
		cols, ok := target[t.name]
		if !ok {
			return airlock.Errorf(airlock.EINVALID, "the target has no table %s", t.name)
		}
		delete(target, t.name)
		t.targetConversion = make([]func(any) (any, error), len(t.columns))
		for i, c := range t.columns {
			typ, ok := cols[c]
			if !ok {
				return airlock.Errorf(airlock.EINVALID, "the target's table %s has no column %s", t.name, c)
			}
			delete(cols, c)
			conv, err := converter(typ, t.notNull[c])
			if err != nil {
				return airlock.Errorf(airlock.EINVALID, "column %s.%s: %v", t.name, c, err)
			}
			t.targetConversion[i] = conv
		}
		for c := range cols {
			return airlock.Errorf(airlock.EINVALID, "the source's table %s has no column %s, which the target has", t.name, c)
		}
	}
	for table := range target {
		return airlock.Errorf(airlock.EINVALID, "the source has no table %s, which the target has", table)
	}
	return nil
}

// converter returns how a SQLite value (of a STRICT table: int64, string,
// []byte or nil) becomes a value of the PostgreSQL type, exactly.
func converter(typ string, notNull bool) (func(any) (any, error), error) {
	switch typ {
	case "bigint", "integer", "smallint":
		return func(v any) (any, error) {
			switch v.(type) {
			case int64, nil:
				return v, nil
			}
			return nil, fmt.Errorf("want an integer, got %T", v)
		}, nil
	case "boolean":
		return func(v any) (any, error) {
			switch v {
			case int64(0):
				return false, nil
			case int64(1):
				return true, nil
			case nil:
				return nil, nil
			}
			return nil, fmt.Errorf("want 0 or 1, got %v", v)
		}, nil
	case "text":
		return func(v any) (any, error) {
			switch v.(type) {
			case string, nil:
				return v, nil
			}
			return nil, fmt.Errorf("want text, got %T", v)
		}, nil
	case "bytea":
		return func(v any) (any, error) {
			switch b := v.(type) {
			case []byte:
				return b, nil
			case nil:
				if notNull { // an empty blob, which the driver reads as nil
					return []byte{}, nil
				}
				return nil, nil
			}
			return nil, fmt.Errorf("want a blob, got %T", v)
		}, nil
	case "json", "jsonb":
		return func(v any) (any, error) {
			var s string
			switch b := v.(type) {
			case []byte:
				s = string(b)
			case string:
				s = b
			case nil:
				return nil, nil
			default:
				return nil, fmt.Errorf("want JSON, got %T", v)
			}
			if !json.Valid([]byte(s)) {
				return nil, fmt.Errorf("not valid JSON: %.40q", s)
			}
			return s, nil
		}, nil
	case "_text": // a text[] the SQLite store keeps as a JSON array
		return func(v any) (any, error) {
			var b []byte
			switch x := v.(type) {
			case []byte:
				b = x
			case string:
				b = []byte(x)
			case nil:
				return nil, nil
			default:
				return nil, fmt.Errorf("want a JSON array, got %T", v)
			}
			var s []string
			if err := json.Unmarshal(b, &s); err != nil {
				return nil, fmt.Errorf("want a JSON array of strings: %v", err)
			}
			if s == nil {
				s = []string{}
			}
			return s, nil
		}, nil
	}
	return nil, fmt.Errorf("the target's type %s is not one this copy knows", typ)
}

// withoutRowid orders the rows of the tables that have no rowid (WITHOUT
// ROWID): by their primary key.
var withoutRowid = map[string]string{"budget_uses": "key, time, total"}

// copyRows streams one table from the snapshot into the target and checks
// that the target holds as many rows as the source.
func copyRows(ctx context.Context, snap *sql.Tx, tx pgx.Tx, t *copyTable) error {
	cols := make([]string, len(t.columns))
	for i, c := range t.columns {
		cols[i] = `"` + strings.ReplaceAll(c, `"`, `""`) + `"`
	}
	order := cmp.Or(withoutRowid[t.name], "rowid")
	rows, err := snap.QueryContext(ctx, `SELECT `+strings.Join(cols, ", ")+` FROM "`+strings.ReplaceAll(t.name, `"`, `""`)+`" ORDER BY `+order)
	if err != nil {
		return fmt.Errorf("read %s: %w", t.name, err)
	}
	defer rows.Close()
	vals := make([]any, len(t.columns))
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var read int64
	next := func() ([]any, error) {
		if !rows.Next() {
			if err := rows.Err(); err != nil {
				return nil, fmt.Errorf("read %s: %w", t.name, err)
			}
			return nil, nil
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("read %s: %w", t.name, err)
		}
		read++
		row := make([]any, len(vals))
		for i, v := range vals {
			var err error
			if row[i], err = t.targetConversion[i](v); err != nil {
				return nil, airlock.Errorf(airlock.EINVALID, "%s row %d, column %s: %v", t.name, read, t.columns[i], err)
			}
		}
		return row, nil
	}
	n, err := tx.CopyFrom(ctx, pgx.Identifier{t.name}, t.columns, pgx.CopyFromFunc(next))
	if err != nil {
		return fmt.Errorf("copy %s: %w", t.name, err)
	}
	var have int64
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{t.name}.Sanitize()).Scan(&have); err != nil {
		return fmt.Errorf("count %s: %w", t.name, err)
	}
	if n != read || have != read {
		return airlock.Errorf(airlock.EINTERNAL, "%s: %d rows read, %d copied, %d on the target", t.name, read, n, have)
	}
	t.rows = read
	return nil
}
