package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/internal/sqlstore"
)

var _ airlock.SessionStore = (*DB)(nil)

// CreateSession stores a web inbox session and trims its token's least
// recently used ones past perToken. The writer runs one transaction at a
// time (and SQLite one writer per file): each sign-in counts the sessions
// the one before left.
func (db *DB) CreateSession(ctx context.Context, s airlock.Session, perToken int) ([]airlock.Hash, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if perToken < 1 {
		return nil, airlock.Errorf(airlock.EINVALID, "a token must be allowed one session at least, not %d", perToken)
	}
	var ended []airlock.Hash
	err := db.exec(ctx, func(w *wtx) error {
		ended = nil
		// Checked and read first, under the writer's lock: a refusal
		// after a write would abort the whole batch.
		var taken bool
		if err := w.tx.QueryRow(`SELECT EXISTS (SELECT 1 FROM sessions WHERE id_hash = ?)`, s.ID[:]).Scan(&taken); err != nil {
			return unavailable("read sessions", err)
		}
		if taken {
			return airlock.Errorf(airlock.ECONFLICT, "the session exists")
		}
		rows, err := w.tx.Query(`SELECT id_hash FROM sessions WHERE token_id = ?
			ORDER BY seen DESC, created DESC, id_hash DESC LIMIT -1 OFFSET ?`, s.TokenID, perToken-1)
		if err != nil {
			return unavailable("read sessions", err)
		}
		defer rows.Close()
		for rows.Next() {
			var b []byte
			if err := rows.Scan(&b); err != nil {
				return unavailable("read sessions", err)
			}
			var k airlock.Hash
			copy(k[:], b)
			ended = append(ended, k)
		}
		if err := rows.Err(); err != nil {
			return unavailable("read sessions", err)
		}
		if _, err := w.exec(`INSERT INTO sessions (id_hash, token_id, secret_hash, created, seen, person) VALUES (?, ?, ?, ?, ?, ?)`,
			s.ID[:], s.TokenID, s.Secret[:], nanos(s.Created), nanos(s.Seen), sqlstore.PersonText(s.Person)); err != nil {
			return err
		}
		for _, k := range ended {
			if _, err := w.exec(`DELETE FROM sessions WHERE id_hash = ?`, k[:]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ended, nil
}

// Session returns the session stored under an ID hash.
func (db *DB) Session(ctx context.Context, id airlock.Hash) (airlock.Session, error) {
	s := airlock.Session{ID: id}
	var secret []byte
	var created, seen int64
	var person string
	err := db.read.QueryRowContext(ctx, `SELECT token_id, secret_hash, created, seen, person FROM sessions WHERE id_hash = ?`, id[:]).
		Scan(&s.TokenID, &secret, &created, &seen, &person)
	if errors.Is(err, sql.ErrNoRows) {
		return airlock.Session{}, airlock.Errorf(airlock.ENOTFOUND, "no such session")
	}
	if err != nil {
		return airlock.Session{}, unavailable("read session", err)
	}
	copy(s.Secret[:], secret)
	s.Created, s.Seen = fromNanos(created), fromNanos(seen)
	s.Person, err = sqlstore.ParsePerson(person)
	return s, err
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
