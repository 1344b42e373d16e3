package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/airlock-dev/airlock"
)

var _ airlock.TokenStore = (*DB)(nil)

const tokenColumns = `id, role, name, agent, created_by, created, expires, revoked, revoked_by`

func scanToken(r rowScanner, t *airlock.Token) error {
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

// loadToken reads one token by a condition on one column; ENOTFOUND when
// there is none.
func loadToken(ctx context.Context, q querier, where string, arg any, what string) (airlock.Token, error) {
	var t airlock.Token
	err := scanToken(q.QueryRowContext(ctx, `SELECT `+tokenColumns+` FROM tokens WHERE `+where, arg), &t)
	if errors.Is(err, sql.ErrNoRows) {
		return t, airlock.Errorf(airlock.ENOTFOUND, "no token %s", what)
	}
	if err != nil {
		return t, unavailable("read token", err)
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
		// The writer holds the database's write lock: nothing can insert
		// between this check and the INSERT, which therefore never fails on
		// a constraint (a failed write would abort the whole batch).
		var idTaken, secretTaken bool
		err := w.tx.QueryRow(`SELECT
			EXISTS (SELECT 1 FROM tokens WHERE id = ?), EXISTS (SELECT 1 FROM tokens WHERE secret_hash = ?)`,
			t.ID, secret[:]).Scan(&idTaken, &secretTaken)
		switch {
		case err != nil:
			return unavailable("read tokens", err)
		case idTaken:
			return airlock.Errorf(airlock.ECONFLICT, "token %s exists", t.ID)
		case secretTaken:
			return airlock.Errorf(airlock.ECONFLICT, "a token with this secret exists")
		}
		t.Created = w.now()
		if _, err := w.exec(`INSERT INTO tokens (id, role, name, agent, secret_hash, created_by, created, expires)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			t.ID, string(t.Role), t.Name, t.Agent, secret[:], t.CreatedBy, nanos(t.Created), nanos(t.Expires)); err != nil {
			return err
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
	return loadToken(ctx, db.read, `secret_hash = ?`, secret[:], "with this secret")
}

// Tokens lists every token, oldest first.
func (db *DB) Tokens(ctx context.Context) ([]airlock.Token, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+tokenColumns+` FROM tokens ORDER BY created, id`)
	if err != nil {
		return nil, unavailable("read tokens", err)
	}
	defer rows.Close()
	out := []airlock.Token{}
	for rows.Next() {
		var t airlock.Token
		if err := scanToken(rows, &t); err != nil {
			return nil, unavailable("read tokens", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, unavailable("read tokens", err)
	}
	return out, nil
}

// RevokeToken revokes a token once and audits it.
func (db *DB) RevokeToken(ctx context.Context, id, by string) (airlock.Token, error) {
	var t airlock.Token
	err := db.exec(ctx, func(w *wtx) error {
		var err error
		if t, err = loadToken(context.Background(), w.tx, `id = ?`, id, id); err != nil {
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
		if _, err := w.exec(`UPDATE tokens SET revoked = ?, revoked_by = ? WHERE id = ? AND revoked = 0`,
			nanos(t.Revoked), by, id); err != nil {
			return err
		}
		w.append(t.RevokedRecord(), "")
		return nil
	})
	if err != nil {
		return airlock.Token{}, err
	}
	return t, nil
}
