package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/internal/sqlstore"
	"github.com/jackc/pgx/v5"
)

var _ airlock.GrantStore = (*DB)(nil)

// oneGrant scans the row of one grant; ENOTFOUND when there is none.
func (db *DB) oneGrant(r pgx.Row, id string) (airlock.Grant, error) {
	var g airlock.Grant
	err := sqlstore.ScanGrant(r, &g)
	if errors.Is(err, pgx.ErrNoRows) {
		return g, airlock.Errorf(airlock.ENOTFOUND, "no grant %s", id)
	}
	if err != nil {
		return g, db.unavailable("read grant", err)
	}
	return g, nil
}

// CreateGrant stores g and audits it, in one transaction.
func (db *DB) CreateGrant(ctx context.Context, g airlock.Grant) (airlock.Grant, error) {
	if err := g.Validate(); err != nil {
		return g, err
	}
	g.Revoked, g.RevokedBy, g.RevokeReason = time.Time{}, "", ""
	pattern, err := json.Marshal(g.Pattern)
	if err != nil {
		return g, airlock.Errorf(airlock.EINVALID, "grant %s: pattern: %v", g.ID, err)
	}
	err = db.exec(ctx, func(w *wtx) error {
		g.Created = w.now()
		if err := g.ValidateNew(g.Created); err != nil {
			return err
		}
		// The batch holds the chain's lock, which every writer takes
		// first; ON CONFLICT still turns a clash into a refusal, never a
		// failed statement (which would abort the whole batch).
		tag, err := w.exec(`INSERT INTO grants (id, agent, tool, pattern, outcome, max_tier, granted_by, approval_id, reason, created, expires, budget)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT DO NOTHING`,
			g.ID, g.Agent, g.Tool, string(pattern), g.Outcome.String(), g.MaxTier.String(), g.GrantedBy, g.Approval, g.Reason,
			nanos(g.Created), nanos(g.Expires), sqlstore.GrantBudget(&g))
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return airlock.Errorf(airlock.ECONFLICT, "grant %s exists", g.ID)
		}
		w.append(g.CreatedRecord(), "")
		return nil
	})
	if err != nil {
		return airlock.Grant{}, err
	}
	return g, nil
}

// Grant returns one grant.
func (db *DB) Grant(ctx context.Context, id string) (airlock.Grant, error) {
	return db.oneGrant(db.queryRow(ctx, `SELECT `+sqlstore.GrantColumns+` FROM grants WHERE id = $1`, id), id)
}

// Grants lists the grants f selects, newest first.
func (db *DB) Grants(ctx context.Context, f airlock.GrantFilter) ([]airlock.Grant, error) {
	return db.reader().Grants(ctx, f)
}

// RevokeGrant revokes a live grant once and audits it.
func (db *DB) RevokeGrant(ctx context.Context, id, by, reason string) (airlock.Grant, error) {
	var g airlock.Grant
	err := db.exec(ctx, func(w *wtx) error {
		var err error
		if g, err = w.db.oneGrant(w.queryRow(`SELECT `+sqlstore.GrantColumns+` FROM grants WHERE id = $1 FOR UPDATE`, id), id); err != nil {
			return err
		}
		now := w.now()
		switch {
		case !g.Revoked.IsZero():
			return airlock.Errorf(airlock.ECONFLICT, "grant %s was already revoked at %s by %s",
				id, g.Revoked.UTC().Format(time.RFC3339), g.RevokedBy)
		case !now.Before(g.Expires):
			return airlock.Errorf(airlock.ECONFLICT, "grant %s expired at %s", id, g.Expires.UTC().Format(time.RFC3339))
		}
		g.Revoked, g.RevokedBy, g.RevokeReason = now, by, reason
		if err := g.Validate(); err != nil {
			return err
		}
		tag, err := w.exec(`UPDATE grants SET revoked = $1, revoked_by = $2, revoke_reason = $3 WHERE id = $4 AND revoked = 0`,
			nanos(g.Revoked), by, reason, id)
		if err != nil {
			return err
		}
		if tag.RowsAffected() != 1 {
			return airlock.Errorf(airlock.ECONFLICT, "grant %s was already revoked", id)
		}
		w.append(g.RevokedRecord(), "")
		return nil
	})
	if err != nil {
		return airlock.Grant{}, err
	}
	return g, nil
}

// ExpireGrants audits, once each, the unrevoked grants past their expiry.
func (db *DB) ExpireGrants(ctx context.Context, max int) ([]airlock.Grant, error) {
	var out []airlock.Grant
	err := db.exec(ctx, func(w *wtx) error {
		out = out[:0]
		rows, err := w.query(`SELECT `+sqlstore.GrantColumns+` FROM grants
			WHERE revoked = 0 AND NOT expiry_logged AND expires <= $1 ORDER BY expires, id LIMIT $2 FOR UPDATE`, nanos(w.now()), max)
		if err != nil {
			return err
		}
		for rows.Next() {
			var g airlock.Grant
			if err := sqlstore.ScanGrant(rows, &g); err != nil {
				rows.Close()
				return err
			}
			out = append(out, g)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for i := range out {
			if _, err := w.exec(`UPDATE grants SET expiry_logged = true WHERE id = $1`, out[i].ID); err != nil {
				return err
			}
			w.append(out[i].ExpiredRecord(), "")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
