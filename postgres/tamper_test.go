package postgres_test

import (
	"testing"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
	"github.com/airlock-dev/airlock/postgres/pgtest"
	"github.com/jackc/pgx/v5"
)

// TestAuditLogIsAppendOnly: SQL cannot change or remove an event while the
// triggers stand; with them dropped, Verify names the first event edited,
// removed or re-linked.
func TestAuditLogIsAppendOnly(t *testing.T) {
	dsn, schema := pgtest.NewSchema(t)
	db := OpenSchema(t, dsn, schema, nil)
	for range 5 {
		if _, err := db.Append(t.Context(), airlock.Record{Events: []airlock.Event{airlocktest.Event("decision", "a")}}); err != nil {
			t.Fatal(err)
		}
	}
	conn := connect(t, dsn)
	events := pgx.Identifier{schema, "events"}.Sanitize()
	for _, stmt := range []string{
		`UPDATE ` + events + ` SET payload = '{"n":2}' WHERE seq = 3`,
		`DELETE FROM ` + events + ` WHERE seq = 5`,
		`TRUNCATE ` + events,
	} {
		if _, err := conn.Exec(t.Context(), stmt); err == nil {
			t.Fatalf("%s: allowed", stmt)
		}
	}
	airlocktest.MustVerify(t, db)

	for _, tt := range []struct {
		stmt string
		bad  int64
	}{
		{`UPDATE ` + events + ` SET payload = convert_to('{"n":2}', 'UTF8') WHERE seq = 4`, 4},
		{`UPDATE ` + events + ` SET time = time + 1 WHERE seq = 3`, 3},
		{`DELETE FROM ` + events + ` WHERE seq = 2`, 2},
	} {
		if _, err := conn.Exec(t.Context(), `ALTER TABLE `+events+` DISABLE TRIGGER USER; `+tt.stmt+
			`; ALTER TABLE `+events+` ENABLE TRIGGER USER`); err != nil {
			t.Fatal(err)
		}
		rep, err := db.Verify(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if rep.FirstBad != tt.bad {
			t.Fatalf("after %s: verify reports %+v, want the first bad seq %d", tt.stmt, rep, tt.bad)
		}
	}
}
