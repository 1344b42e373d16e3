package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/internal/sqlstore"
)

var _ airlock.GrantStore = (*DB)(nil)

// loadGrant reads one grant; ENOTFOUND when there is none.
func loadGrant(ctx context.Context, q querier, id string) (airlock.Grant, error) {
	var g airlock.Grant
	err := sqlstore.ScanGrant(q.QueryRowContext(ctx, `SELECT `+sqlstore.GrantColumns+` FROM grants WHERE id = ?`, id), &g)
	if errors.Is(err, sql.ErrNoRows) {
		return g, airlock.Errorf(airlock.ENOTFOUND, "no grant %s", id)
	}
	if err != nil {
		return g, unavailable("read grant", err)
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
		// The writer holds the write lock: nothing inserts between this
		// check and the INSERT, which so never fails on a constraint.
		var taken bool
		if err := w.tx.QueryRow(`SELECT EXISTS (SELECT 1 FROM grants WHERE id = ?)`, g.ID).Scan(&taken); err != nil {
			return unavailable("read grants", err)
		}
		if taken {
			return airlock.Errorf(airlock.ECONFLICT, "grant %s exists", g.ID)
		}
		if _, err := w.exec(`INSERT INTO grants (id, agent, tool, pattern, outcome, max_tier, granted_by, approval_id, reason, created, expires, budget)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			g.ID, g.Agent, g.Tool, string(pattern), g.Outcome.String(), g.MaxTier.String(), g.GrantedBy, g.Approval, g.Reason,
			nanos(g.Created), nanos(g.Expires), sqlstore.GrantBudget(&g)); err != nil {
			return err
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
	return loadGrant(ctx, db.read, id)
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
		if g, err = loadGrant(context.Background(), w.tx, id); err != nil {
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
		if _, err := w.exec(`UPDATE grants SET revoked = ?, revoked_by = ?, revoke_reason = ? WHERE id = ? AND revoked = 0`,
			nanos(g.Revoked), by, reason, id); err != nil {
			return err
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
		rows, err := w.tx.Query(`SELECT `+sqlstore.GrantColumns+` FROM grants
			WHERE revoked = 0 AND expiry_logged = 0 AND expires <= ? ORDER BY expires, id LIMIT ?`, nanos(w.now()), max)
		if err != nil {
			return unavailable("read grants", err)
		}
		for rows.Next() {
			var g airlock.Grant
			if err := sqlstore.ScanGrant(rows, &g); err != nil {
				rows.Close()
				return unavailable("read grants", err)
			}
			out = append(out, g)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return unavailable("read grants", err)
		}
		for i := range out {
			if _, err := w.exec(`UPDATE grants SET expiry_logged = 1 WHERE id = ?`, out[i].ID); err != nil {
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
