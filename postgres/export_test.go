package postgres

import "context"

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

// Waiting returns how many of db's waiters wait for approval id.
func Waiting(db *DB, id string) int { return db.hub.Waiting(id) }

// WaitingEvents returns how many of db's waiters wait for events.
func WaitingEvents(db *DB) int { return db.hub.Waiting(eventsKey) }

// PoolSize returns how many connections db's pool may hold.
func PoolSize(db *DB) int { return int(db.pool.Config().MaxConns) }

// Channel returns the NOTIFY channel of db's schema.
func Channel(db *DB) string { return db.channel }
