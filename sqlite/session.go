package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/airlock-dev/airlock"
)

var _ airlock.SessionStore = (*DB)(nil)

// CreateSession stores a web inbox session.
func (db *DB) CreateSession(ctx context.Context, s airlock.Session) error {
	if err := s.Validate(); err != nil {
		return err
	}
	return db.exec(ctx, func(w *wtx) error {
		// Checked first, under the writer's lock: a refusal after a write
		// would abort the whole batch.
		var taken bool
		if err := w.tx.QueryRow(`SELECT EXISTS (SELECT 1 FROM sessions WHERE id_hash = ?)`, s.ID[:]).Scan(&taken); err != nil {
			return unavailable("read sessions", err)
		}
		if taken {
			return airlock.Errorf(airlock.ECONFLICT, "the session exists")
		}
		_, err := w.exec(`INSERT INTO sessions (id_hash, token_id, secret_hash, created, seen) VALUES (?, ?, ?, ?, ?)`,
			s.ID[:], s.TokenID, s.Secret[:], nanos(s.Created), nanos(s.Seen))
		return err
	})
}

// Session returns the session stored under an ID hash.
func (db *DB) Session(ctx context.Context, id airlock.Hash) (airlock.Session, error) {
	s := airlock.Session{ID: id}
	var secret []byte
	var created, seen int64
	err := db.read.QueryRowContext(ctx, `SELECT token_id, secret_hash, created, seen FROM sessions WHERE id_hash = ?`, id[:]).
		Scan(&s.TokenID, &secret, &created, &seen)
	if errors.Is(err, sql.ErrNoRows) {
		return airlock.Session{}, airlock.Errorf(airlock.ENOTFOUND, "no such session")
	}
	if err != nil {
		return airlock.Session{}, unavailable("read session", err)
	}
	copy(s.Secret[:], secret)
	s.Created, s.Seen = fromNanos(created), fromNanos(seen)
	return s, nil
}

// TouchSession moves a session's last request forward.
func (db *DB) TouchSession(ctx context.Context, id airlock.Hash, seen time.Time) error {
	return db.exec(ctx, func(w *wtx) error {
		var found bool
		if err := w.tx.QueryRow(`SELECT EXISTS (SELECT 1 FROM sessions WHERE id_hash = ?)`, id[:]).Scan(&found); err != nil {
			return unavailable("read sessions", err)
		}
		if !found {
			return airlock.Errorf(airlock.ENOTFOUND, "no such session")
		}
		_, err := w.exec(`UPDATE sessions SET seen = max(seen, ?) WHERE id_hash = ?`, nanos(seen), id[:])
		return err
	})
}

// DeleteSession ends a session, if it still exists.
func (db *DB) DeleteSession(ctx context.Context, id airlock.Hash) error {
	return db.exec(ctx, func(w *wtx) error {
		_, err := w.exec(`DELETE FROM sessions WHERE id_hash = ?`, id[:])
		return err
	})
}

// DeleteExpiredSessions deletes the sessions idle or old past the limits.
func (db *DB) DeleteExpiredSessions(ctx context.Context, seenBefore, createdBefore time.Time) (int64, error) {
	var n int64
	err := db.exec(ctx, func(w *wtx) error {
		res, err := w.exec(`DELETE FROM sessions WHERE seen < ? OR created < ?`, nanos(seenBefore), nanos(createdBefore))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		if err != nil {
			return unavailable("delete sessions", err)
		}
		return nil
	})
	return n, err
}
