package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
	"github.com/airlock-dev/airlock/sqlite"
)

// MustOpen opens a fresh store in a temporary directory, closed when the
// test ends.
func MustOpen(tb testing.TB, clock func() time.Time) *sqlite.DB {
	tb.Helper()
	db := sqlite.NewDB(filepath.Join(tb.TempDir(), "airlock.db"))
	db.Clock = clock
	db.PollInterval = 20 * time.Millisecond
	if err := db.Open(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

func TestConformance(t *testing.T) {
	airlocktest.TestStore(t, func(t *testing.T, clock func() time.Time) airlock.Store {
		return MustOpen(t, clock)
	})
}
