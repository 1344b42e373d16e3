// Package pgtest gives tests a PostgreSQL database to run against: the
// machine's (AIRLOCK_TEST_POSTGRES), a fresh schema per test.
package pgtest

import (
	"context"
	"crypto/rand"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// defaultDSN is the PostgreSQL every machine of this project runs.
const defaultDSN = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// DSN returns the database the tests use (AIRLOCK_TEST_POSTGRES), and
// skips the test when it cannot be reached — or fails it under CI=true,
// where a missing database must never pass as a skip.
func DSN(tb testing.TB) string {
	tb.Helper()
	dsn := os.Getenv("AIRLOCK_TEST_POSTGRES")
	if dsn == "" {
		dsn = defaultDSN
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err == nil {
		err = conn.Ping(ctx)
		conn.Close(ctx)
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("PostgreSQL unreachable (set AIRLOCK_TEST_POSTGRES): %v", err)
		}
		tb.Skipf("PostgreSQL unreachable (set AIRLOCK_TEST_POSTGRES): %v", err)
	}
	return dsn
}

// NewSchema returns the name of a fresh schema for one test, dropped when
// the test ends (after the stores on it are closed).
func NewSchema(tb testing.TB) (dsn, schema string) {
	tb.Helper()
	dsn = DSN(tb)
	schema = "airlock_test_" + strings.ToLower(rand.Text()[:12])
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			tb.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`); err != nil {
			tb.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return dsn, schema
}
