package sqlite

import (
	"context"
	"database/sql"

	"github.com/airlock-dev/airlock"
)

// Snapshot begins a read-only transaction for copying the whole store
// elsewhere (airlock store migrate): every table read through it is seen
// as it was at its first read, whatever writers do meanwhile, so the copy
// is of one consistent moment. The caller rolls it back.
func (db *DB) Snapshot(ctx context.Context) (*sql.Tx, error) {
	if db.read == nil {
		return nil, airlock.Errorf(airlock.EUNAVAILABLE, "sqlite: store is not open")
	}
	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, unavailable("begin snapshot", err)
	}
	return tx, nil
}
