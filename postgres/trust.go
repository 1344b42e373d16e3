package postgres

import (
	"context"

	"github.com/airlock-dev/airlock"
)

var _ airlock.TrustStore = (*DB)(nil)

// TrustSummaries aggregates trust records and person-decided approval
// requests per agent × class.
func (db *DB) TrustSummaries(ctx context.Context, f airlock.TrustFilter) ([]airlock.TrustSummary, error) {
	return db.reader().TrustSummaries(ctx, f)
}
