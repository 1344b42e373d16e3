package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

var _ airlock.SessionStore = (*DB)(nil)

// Sessions are not part of the chain: each write is one statement of its
// own, outside the write batches, so that sign-ins never queue behind
// decisions nor hold the chain's lock.

// execSession runs one session write on the pool.
func (db *DB) execSession(ctx context.Context, what, q string, args ...any) (pgconn.CommandTag, error) {
	if db.pool == nil {
		return pgconn.CommandTag{}, airlock.Errorf(airlock.EUNAVAILABLE, "postgres: store is not open")
	}
	tag, err := db.pool.Exec(ctx, q, text(args)...)
	if err != nil {
		return tag, db.unavailable(what, err)
	}
	return tag, nil
}

// CreateSession stores a web inbox session.
func (db *DB) CreateSession(ctx context.Context, s airlock.Session) error {
	if err := s.Validate(); err != nil {
		return err
	}
	tag, err := db.execSession(ctx, "create session", `INSERT INTO sessions (id_hash, token_id, secret_hash, created, seen)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
		s.ID[:], s.TokenID, s.Secret[:], nanos(s.Created), nanos(s.Seen))
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return airlock.Errorf(airlock.ECONFLICT, "the session exists")
	}
	return nil
}

// Session returns the session stored under an ID hash.
func (db *DB) Session(ctx context.Context, id airlock.Hash) (airlock.Session, error) {
	s := airlock.Session{ID: id}
	var secret []byte
	var created, seen int64
	err := db.queryRow(ctx, `SELECT token_id, secret_hash, created, seen FROM sessions WHERE id_hash = $1`, id[:]).
		Scan(&s.TokenID, &secret, &created, &seen)
	if errors.Is(err, pgx.ErrNoRows) {
		return airlock.Session{}, airlock.Errorf(airlock.ENOTFOUND, "no such session")
	}
	if err != nil {
		return airlock.Session{}, db.unavailable("read session", err)
	}
	copy(s.Secret[:], secret)
	s.Created, s.Seen = fromNanos(created), fromNanos(seen)
	return s, nil
}

// TouchSession moves a session's last request forward.
func (db *DB) TouchSession(ctx context.Context, id airlock.Hash, seen time.Time) error {
	tag, err := db.execSession(ctx, "touch session", `UPDATE sessions SET seen = greatest(seen, $1) WHERE id_hash = $2`,
		nanos(seen), id[:])
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return airlock.Errorf(airlock.ENOTFOUND, "no such session")
	}
	return nil
}

// DeleteSession ends a session, if it still exists.
func (db *DB) DeleteSession(ctx context.Context, id airlock.Hash) error {
	_, err := db.execSession(ctx, "delete session", `DELETE FROM sessions WHERE id_hash = $1`, id[:])
	return err
}

// DeleteExpiredSessions deletes the sessions idle or old past the limits.
func (db *DB) DeleteExpiredSessions(ctx context.Context, seenBefore, createdBefore time.Time) (int64, error) {
	tag, err := db.execSession(ctx, "delete expired sessions", `DELETE FROM sessions WHERE seen < $1 OR created < $2`,
		nanos(seenBefore), nanos(createdBefore))
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}
