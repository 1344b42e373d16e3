package postgres

import (
	"context"
	"time"
)

// ListenerPID returns the server process of db's listener connection, 0
// while it is disconnected.
func ListenerPID(db *DB) uint32 { return db.listen.backend() }

// ListenerLost returns how many times db's listener lost its connection.
func ListenerLost(db *DB) int64 { return db.listen.lost.Load() }

// BeforeListen makes db's listener call f before each attempt to
// reconnect.
func BeforeListen(db *DB, f func()) { db.listen.beforeConnect.Store(&f) }

// Setting reads a run-time setting on one of db's pooled connections.
func Setting(db *DB, name string) (string, error) {
	var v string
	err := db.pool.QueryRow(context.Background(), `SELECT current_setting($1)`, name).Scan(&v)
	return v, err
}

// AlwaysAssume makes every append-only batch of db try one round trip on
// the head its last batch left, even after another replica moved it.
func AlwaysAssume(db *DB) { db.alwaysAssume = true }

// IgnoreHints makes db's batches assume only the head its own last batch
// left, not one another replica's notification told of.
func IgnoreHints(db *DB) { db.ignoreHints = true }

// Sealed reports how many of db's batches the database sealed.
func Sealed(db *DB) int64 { return db.sealed.Load() }

// Contend makes db behave as if it had just seen another replica write:
// its batches of appends are sealed by the database.
func Contend(db *DB) { db.contendedUntil = time.Now().Add(time.Hour) }

// NoSealing keeps the database from sealing db's batches: a contended
// batch reads the head under the lock and seals it in Go.
func NoSealing(db *DB) { db.noSealing = true }

// OneTrip reports how many of db's batches committed in one round trip,
// and how many attempts found the head moved and ran again.
func OneTrip(db *DB) (committed, moved int64) { return db.oneTrip.Load(), db.headMoved.Load() }

// Waiting returns how many of db's waiters wait for approval id.
func Waiting(db *DB, id string) int { return db.hub.Waiting(id) }

// WaitingEvents returns how many of db's waiters wait for events.
func WaitingEvents(db *DB) int { return db.hub.Waiting(eventsKey) }

// PoolSize returns how many connections db's pool may hold.
func PoolSize(db *DB) int { return int(db.pool.Config().MaxConns) }

// Channel returns the NOTIFY channel of db's schema.
func Channel(db *DB) string { return db.channel }

// Hinted returns the seq of the head a notification told db of and no
// batch has taken yet, 0 when there is none.
func Hinted(db *DB) int64 {
	if h := db.hinted.Load(); h != nil {
		return h.seq
	}
	return 0
}
