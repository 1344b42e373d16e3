package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/internal/sqlstore"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

var (
	_ airlock.SessionStore   = (*DB)(nil)
	_ airlock.SessionWatcher = (*DB)(nil)
)

// Sessions are not part of the chain: each write is a statement of its
// own (a sign-in, a short transaction), outside the write batches, so that
// sign-ins never queue behind decisions nor hold the chain's lock. A write
// that ends sessions tells the other replicas ("s", in its transaction),
// as a token's revocation does.

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

// CreateSession stores a web inbox session and trims its token's least
// recently used ones past perToken.
//
// The sign-ins of one token take a lock of their own before they count:
// under READ COMMITTED, two replicas counting at once would each miss the
// other's new session and leave one too many. It is a transaction-level
// advisory lock keyed by two integers (hashes of the schema and of the
// token's ID), a key space apart from the single-integer keys of the chain
// and the migrations: a sign-in never waits for a write batch; two tokens
// whose IDs hash alike only take turns.
func (db *DB) CreateSession(ctx context.Context, s airlock.Session, perToken int) ([]airlock.Hash, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if perToken < 1 {
		return nil, airlock.Errorf(airlock.EINVALID, "a token must be allowed one session at least, not %d", perToken)
	}
	if db.pool == nil {
		return nil, airlock.Errorf(airlock.EUNAVAILABLE, "postgres: store is not open")
	}
	var ended []airlock.Hash
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		ended = nil
		schema, token := int32(fnvHash("airlock.sessions:"+db.schema())), int32(fnvHash(s.TokenID))
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, $2)`, schema, token); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `INSERT INTO sessions (id_hash, token_id, secret_hash, created, seen, person)
			VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
			text([]any{s.ID[:], s.TokenID, s.Secret[:], nanos(s.Created), nanos(s.Seen), sqlstore.PersonText(s.Person)})...)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return airlock.Errorf(airlock.ECONFLICT, "the session exists")
		}
		rows, err := tx.Query(ctx, `DELETE FROM sessions WHERE id_hash IN (
				SELECT id_hash FROM sessions WHERE token_id = $1 AND id_hash <> $2
				ORDER BY seen DESC, created DESC, id_hash DESC OFFSET $3)
			RETURNING id_hash`, text([]any{s.TokenID, s.ID[:], perToken - 1})...)
		if err != nil {
			return err
		}
		ended, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (airlock.Hash, error) {
			var b []byte
			var k airlock.Hash
			err := r.Scan(&b)
			copy(k[:], b)
			return k, err
		})
		if err == nil && len(ended) > 0 {
			_, err = tx.Exec(ctx, notify, db.channel, db.origin+" s")
		}
		return err
	})
	if err != nil {
		return nil, db.unavailable("create session", err)
	}
	if len(ended) > 0 {
		db.hub.Publish([]string{sessionsKey})
	}
	return ended, nil
}

// Session returns the session stored under an ID hash.
func (db *DB) Session(ctx context.Context, id airlock.Hash) (airlock.Session, error) {
	s := airlock.Session{ID: id}
	var secret []byte
	var created, seen int64
	var person string
	err := db.queryRow(ctx, `SELECT token_id, secret_hash, created, seen, person FROM sessions WHERE id_hash = $1`, id[:]).
		Scan(&s.TokenID, &secret, &created, &seen, &person)
	if errors.Is(err, pgx.ErrNoRows) {
		return airlock.Session{}, airlock.Errorf(airlock.ENOTFOUND, "no such session")
	}
	if err != nil {
		return airlock.Session{}, db.unavailable("read session", err)
	}
	copy(s.Secret[:], secret)
	s.Created, s.Seen = fromNanos(created), fromNanos(seen)
	s.Person, err = sqlstore.ParsePerson(person)
	return s, err
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
	tag, err := db.execSession(ctx, "delete session", `WITH d AS (DELETE FROM sessions WHERE id_hash = $1 RETURNING 1)
		SELECT pg_notify($2, $3) FROM d`, id[:], db.channel, db.origin+" s")
	if err == nil && tag.RowsAffected() > 0 {
		db.hub.Publish([]string{sessionsKey})
	}
	return err
}

// WatchSessions implements airlock.SessionWatcher: the channel is closed
// when a session ends or a token is revoked through this DB or, by its
// notification, through another replica (or when the listener reconnects,
// as every waiter is woken then).
func (db *DB) WatchSessions() (<-chan struct{}, func()) { return db.hub.Subscribe(sessionsKey) }

// DeleteExpiredSessions deletes the sessions idle or old past the limits.
func (db *DB) DeleteExpiredSessions(ctx context.Context, seenBefore, createdBefore time.Time) (int64, error) {
	tag, err := db.execSession(ctx, "delete expired sessions", `DELETE FROM sessions WHERE seen < $1 OR created < $2`,
		nanos(seenBefore), nanos(createdBefore))
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}
