package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/jackc/pgx/v5"
)

var _ airlock.TokenStore = (*DB)(nil)

const tokenColumns = `id, role, name, agent, created_by, created, expires, revoked, revoked_by`

func scanToken(r pgx.Row, t *airlock.Token) error {
	var role string
	var created, expires, revoked int64
	if err := r.Scan(&t.ID, &role, &t.Name, &t.Agent, &t.CreatedBy, &created, &expires, &revoked,
		&t.RevokedBy); err != nil {
		return err
	}
	t.Role = airlock.Role(role)
	t.Created, t.Expires, t.Revoked = fromNanos(created), fromNanos(expires), fromNanos(revoked)
	return nil
}

// oneToken scans the row of one token; ENOTFOUND when there is none.
func (db *DB) oneToken(r pgx.Row, what string) (airlock.Token, error) {
	var t airlock.Token
	err := scanToken(r, &t)
	if errors.Is(err, pgx.ErrNoRows) {
		return t, airlock.Errorf(airlock.ENOTFOUND, "no token %s", what)
	}
	if err != nil {
		return t, db.unavailable("read token", err)
	}
	return t, nil
}

// CreateToken stores t under the hash of its secret and audits it.
func (db *DB) CreateToken(ctx context.Context, t airlock.Token, secret airlock.Hash) (airlock.Token, error) {
	if err := t.ValidateNew(secret); err != nil {
		return t, err
	}
	t.Revoked, t.RevokedBy = time.Time{}, ""
	err := db.exec(ctx, func(w *wtx) error {
		// The batch holds the chain's lock, which every writer takes
		// first: nothing inserts between this check and the INSERT. Its
		// ON CONFLICT still turns a clash into a refusal, never a failed
		// statement (which would abort the whole batch).
		var idTaken, secretTaken bool
		err := w.queryRow(`SELECT EXISTS (SELECT 1 FROM tokens WHERE id = $1),
			EXISTS (SELECT 1 FROM tokens WHERE secret_hash = $2)`, t.ID, secret[:]).Scan(&idTaken, &secretTaken)
		switch {
		case err != nil:
			return err
		case idTaken:
			return airlock.Errorf(airlock.ECONFLICT, "token %s exists", t.ID)
		case secretTaken:
			return airlock.Errorf(airlock.ECONFLICT, "a token with this secret exists")
		}
		t.Created = w.now()
		tag, err := w.exec(`INSERT INTO tokens (id, role, name, agent, secret_hash, created_by, created, expires)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING`,
			t.ID, string(t.Role), t.Name, t.Agent, secret[:], t.CreatedBy, nanos(t.Created), nanos(t.Expires))
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return airlock.Errorf(airlock.ECONFLICT, "token %s or its secret exists", t.ID)
		}
		w.append(t.CreatedRecord(), "")
		return nil
	})
	if err != nil {
		return airlock.Token{}, err
	}
	return t, nil
}

// TokenBySecret returns the token stored under a secret hash, live or not.
func (db *DB) TokenBySecret(ctx context.Context, secret airlock.Hash) (airlock.Token, error) {
	return db.oneToken(db.queryRow(ctx, `SELECT `+tokenColumns+` FROM tokens WHERE secret_hash = $1`, secret[:]),
		"with this secret")
}

// Tokens lists every token, oldest first.
func (db *DB) Tokens(ctx context.Context) ([]airlock.Token, error) {
	rows, err := db.query(ctx, `SELECT `+tokenColumns+` FROM tokens ORDER BY created, id`)
	if err != nil {
		return nil, db.unavailable("read tokens", err)
	}
	defer rows.Close()
	out := []airlock.Token{}
	for rows.Next() {
		var t airlock.Token
		if err := scanToken(rows, &t); err != nil {
			return nil, db.unavailable("read tokens", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, db.unavailable("read tokens", err)
	}
	return out, nil
}

// RevokeToken revokes a token once and audits it.
func (db *DB) RevokeToken(ctx context.Context, id, by string) (airlock.Token, error) {
	var t airlock.Token
	err := db.exec(ctx, func(w *wtx) error {
		var err error
		if t, err = w.db.oneToken(w.queryRow(`SELECT `+tokenColumns+` FROM tokens WHERE id = $1 FOR UPDATE`, id), id); err != nil {
			return err
		}
		switch {
		case !t.Revoked.IsZero() && t.RevokedBy != "":
			return airlock.Errorf(airlock.ECONFLICT, "token %s was already revoked at %s by %s",
				id, t.Revoked.Format(time.RFC3339), t.RevokedBy)
		case !t.Revoked.IsZero():
			return airlock.Errorf(airlock.ECONFLICT, "token %s was already revoked at %s", id, t.Revoked.Format(time.RFC3339))
		}
		t.Revoked, t.RevokedBy = w.now(), by
		tag, err := w.exec(`UPDATE tokens SET revoked = $1, revoked_by = $2 WHERE id = $3 AND revoked = 0`,
			nanos(t.Revoked), by, id)
		if err != nil {
			return err
		}
		if tag.RowsAffected() != 1 {
			return airlock.Errorf(airlock.ECONFLICT, "token %s was already revoked", id)
		}
		w.append(t.RevokedRecord(), "")
		w.revoked = true
		return nil
	})
	if err != nil {
		return airlock.Token{}, err
	}
	return t, nil
}
