package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"github.com/airlock-dev/airlock"
)

var _ airlock.PasskeyStore = (*DB)(nil)

// CreateEnrolment stores a passkey enrolment, appending rec.
func (db *DB) CreateEnrolment(ctx context.Context, e airlock.PasskeyEnrolment, rec airlock.Record) error {
	if err := validateEnrolment(&e, &rec); err != nil {
		return err
	}
	return db.exec(ctx, func(w *wtx) error {
		var taken bool
		if err := w.tx.QueryRow(`SELECT EXISTS (SELECT 1 FROM passkey_enrolments WHERE code_hash = ?)`, e.Code[:]).Scan(&taken); err != nil {
			return unavailable("read passkey enrolments", err)
		}
		if taken {
			return airlock.Errorf(airlock.ECONFLICT, "the enrolment code exists")
		}
		// Enrolments past their expiry go as new ones come.
		if _, err := w.exec(`DELETE FROM passkey_enrolments WHERE expires <= ?`, nanos(w.now())); err != nil {
			return err
		}
		if _, err := w.exec(`INSERT INTO passkey_enrolments (code_hash, reviewer, made_by, created, expires) VALUES (?, ?, ?, ?, ?)`,
			e.Code[:], e.Reviewer, e.By, nanos(e.Created), nanos(e.Expires)); err != nil {
			return err
		}
		w.append(rec, "")
		return nil
	})
}

// validateEnrolment checks an enrolment and the record that goes with it.
func validateEnrolment(e *airlock.PasskeyEnrolment, rec *airlock.Record) error {
	if err := e.Validate(); err != nil {
		return err
	}
	return rec.Prepare()
}

// StartEnrolment keeps the registration ceremony's session with the live
// enrolment.
func (db *DB) StartEnrolment(ctx context.Context, code airlock.Hash, session json.RawMessage) (airlock.PasskeyEnrolment, error) {
	var e airlock.PasskeyEnrolment
	err := db.exec(ctx, func(w *wtx) error {
		var err error
		if e, err = w.enrolment(code); err != nil {
			return err
		}
		if session == nil {
			return nil // only read
		}
		if _, err := w.exec(`UPDATE passkey_enrolments SET session = ? WHERE code_hash = ?`, string(session), code[:]); err != nil {
			return err
		}
		e.Session = session
		return nil
	})
	return e, err
}

// enrolment reads the live enrolment whose code hashes to code.
func (w *wtx) enrolment(code airlock.Hash) (airlock.PasskeyEnrolment, error) {
	e := airlock.PasskeyEnrolment{Code: code}
	var created, expires int64
	var session string
	err := w.tx.QueryRow(`SELECT reviewer, made_by, created, expires, session FROM passkey_enrolments WHERE code_hash = ? AND expires > ?`,
		code[:], nanos(w.now())).Scan(&e.Reviewer, &e.By, &created, &expires, &session)
	if errors.Is(err, sql.ErrNoRows) {
		return e, airlock.Errorf(airlock.ENOTFOUND, "no such enrolment code: it was used, it expired, or it was never made (an admin makes one: airlock reviewers enrol NAME)")
	}
	if err != nil {
		return e, unavailable("read passkey enrolment", err)
	}
	e.Created, e.Expires, e.Session = fromNanos(created), fromNanos(expires), json.RawMessage(session)
	return e, nil
}

// RegisterPasskey uses the enrolment, once, to keep its person's passkey.
func (db *DB) RegisterPasskey(ctx context.Context, code airlock.Hash, c airlock.PasskeyCredential, rec airlock.Record) error {
	if err := c.Validate(); err != nil {
		return err
	}
	if err := rec.Prepare(); err != nil {
		return err
	}
	return db.exec(ctx, func(w *wtx) error {
		e, err := w.enrolment(code)
		if err != nil {
			return err
		}
		if e.Reviewer != c.Reviewer {
			return airlock.Errorf(airlock.EINVALID, "the enrolment is %s's, not %s's", e.Reviewer, c.Reviewer)
		}
		var taken bool
		if err := w.tx.QueryRow(`SELECT EXISTS (SELECT 1 FROM passkeys WHERE id = ?)`, c.ID).Scan(&taken); err != nil {
			return unavailable("read passkeys", err)
		}
		if taken {
			return airlock.Errorf(airlock.ECONFLICT, "this passkey is registered already")
		}
		if _, err := w.exec(`DELETE FROM passkey_enrolments WHERE code_hash = ?`, code[:]); err != nil {
			return err
		}
		if _, err := w.exec(`INSERT INTO passkeys (id, reviewer, name, public_key, credential, created) VALUES (?, ?, ?, ?, ?, ?)`,
			c.ID, c.Reviewer, c.Name, c.PublicKey, string(c.Credential), nanos(c.Created)); err != nil {
			return err
		}
		w.append(rec, "")
		return nil
	})
}

// Passkeys returns a reviewer's passkeys, oldest first.
func (db *DB) Passkeys(ctx context.Context, reviewer string) ([]airlock.PasskeyCredential, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT id, reviewer, name, public_key, credential, created FROM passkeys
		WHERE reviewer = ? ORDER BY created, id`, reviewer)
	if err != nil {
		return nil, unavailable("read passkeys", err)
	}
	defer rows.Close()
	var out []airlock.PasskeyCredential
	for rows.Next() {
		var c airlock.PasskeyCredential
		var cred string
		var created int64
		if err := rows.Scan(&c.ID, &c.Reviewer, &c.Name, &c.PublicKey, &cred, &created); err != nil {
			return nil, unavailable("read passkeys", err)
		}
		c.Credential, c.Created = json.RawMessage(cred), fromNanos(created)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, unavailable("read passkeys", err)
	}
	return out, nil
}

// RemovePasskey removes a reviewer's passkey.
func (db *DB) RemovePasskey(ctx context.Context, reviewer string, id []byte, rec airlock.Record) error {
	if err := rec.Prepare(); err != nil {
		return err
	}
	return db.exec(ctx, func(w *wtx) error {
		res, err := w.exec(`DELETE FROM passkeys WHERE id = ? AND reviewer = ?`, id, reviewer)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return airlock.Errorf(airlock.ENOTFOUND, "%s has no such passkey", reviewer)
		}
		w.append(rec, "")
		return nil
	})
}
