package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/airlock-dev/airlock"
)

var _ airlock.GrantStore = (*DB)(nil)

const grantColumns = `id, agent, tool, pattern, outcome, max_tier, granted_by, approval_id, reason,
	created, expires, revoked, revoked_by, revoke_reason`

func scanGrant(r rowScanner, g *airlock.Grant) error {
	var pattern, outcome, tier string
	var created, expires, revoked int64
	if err := r.Scan(&g.ID, &g.Agent, &g.Tool, &pattern, &outcome, &tier, &g.GrantedBy, &g.Approval, &g.Reason,
		&created, &expires, &revoked, &g.RevokedBy, &g.RevokeReason); err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(pattern), &g.Pattern); err != nil {
		return err
	}
	var err error
	if g.Outcome, err = airlock.ParseOutcome(outcome); err != nil {
		return err
	}
	if g.MaxTier, err = airlock.ParseRiskTier(tier); err != nil {
		return err
	}
	g.Created, g.Expires, g.Revoked = fromNanos(created), fromNanos(expires), fromNanos(revoked)
	return nil
}

// loadGrant reads one grant; ENOTFOUND when there is none.
func loadGrant(ctx context.Context, q querier, id string) (airlock.Grant, error) {
	var g airlock.Grant
	err := scanGrant(q.QueryRowContext(ctx, `SELECT `+grantColumns+` FROM grants WHERE id = ?`, id), &g)
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
		if _, err := w.exec(`INSERT INTO grants (id, agent, tool, pattern, outcome, max_tier, granted_by, approval_id, reason, created, expires)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			g.ID, g.Agent, g.Tool, string(pattern), g.Outcome.String(), g.MaxTier.String(), g.GrantedBy, g.Approval, g.Reason,
			nanos(g.Created), nanos(g.Expires)); err != nil {
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

// Grants lists the grants f selects, newest first. The agent filter
// matches globs in Go: a grant's agent may be one.
func (db *DB) Grants(ctx context.Context, f airlock.GrantFilter) ([]airlock.Grant, error) {
	q, args := `SELECT `+grantColumns+` FROM grants`, []any{}
	if !f.LiveAt.IsZero() {
		q += ` WHERE revoked = 0 AND expires > ?`
		args = append(args, nanos(f.LiveAt))
	}
	q += ` ORDER BY created DESC, id DESC`
	rows, err := db.read.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, unavailable("read grants", err)
	}
	defer rows.Close()
	limit := airlock.PageSize(f.Limit)
	out := []airlock.Grant{}
	for rows.Next() && len(out) < limit {
		var g airlock.Grant
		if err := scanGrant(rows, &g); err != nil {
			return nil, unavailable("read grants", err)
		}
		if f.Agent == "" || g.CoversAgent(f.Agent) {
			out = append(out, g)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, unavailable("read grants", err)
	}
	return out, nil
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
		rows, err := w.tx.Query(`SELECT `+grantColumns+` FROM grants
			WHERE revoked = 0 AND expiry_logged = 0 AND expires <= ? ORDER BY expires, id LIMIT ?`, nanos(w.now()), max)
		if err != nil {
			return unavailable("read grants", err)
		}
		for rows.Next() {
			var g airlock.Grant
			if err := scanGrant(rows, &g); err != nil {
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
