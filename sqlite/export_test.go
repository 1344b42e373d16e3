package sqlite

import (
	"context"
	"database/sql/driver"
)

// WrapDriver makes db open its connections through wrap, to inject faults
// below the store. Call it before Open.
func WrapDriver(db *DB, wrap func(driver.Driver) driver.Driver) { db.wrapDriver = wrap }

// SynchronousLevel reads PRAGMA synchronous on the store's write
// connection.
func SynchronousLevel(ctx context.Context, db *DB) (int, error) {
	var n int
	err := db.write.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&n)
	return n, err
}
