package postgres

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// Listener tunables.
const (
	// listenCheck is how long the listener waits for a notification before
	// it pings its connection: a connection cut without a word (a network
	// partition, a failover) is noticed within it.
	listenCheck = 15 * time.Second
	// listenBackoff bounds the wait between attempts to reconnect.
	listenBackoff = 5 * time.Second
)

// listener holds the connection on which a DB LISTENs to its schema's
// channel, and wakes the hub's waiters for the changes other replicas
// commit. Notifications are hints; the tables are the truth: when the
// connection is lost, it reconnects and then wakes every waiter, which
// rereads what it waits for — so a change committed while it was away is
// not missed.
type listener struct {
	db     *DB
	cancel context.CancelFunc
	done   chan struct{}

	mu  sync.Mutex
	pid uint32 // the backend of the current connection, 0 while there is none
	// lost counts the connections lost (each followed by a reconnection,
	// unless the store closed).
	lost atomic.Int64

	// beforeConnect, when set (by tests), runs before each reconnection.
	beforeConnect atomic.Pointer[func()]
}

// startListener connects and listens, then follows the channel in the
// background until stop.
func (db *DB) startListener(ctx context.Context) (*listener, error) {
	l := &listener{db: db, done: make(chan struct{})}
	conn, err := l.connect(ctx)
	if err != nil {
		return nil, err
	}
	bg, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	go l.run(bg, conn)
	return l, nil
}

// stop ends the listener and waits for it.
func (l *listener) stop() {
	l.cancel()
	<-l.done
}

// backend returns the process ID of the listener's server backend, 0 while
// it is disconnected.
func (l *listener) backend() uint32 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.pid
}

// connect opens the listener's own connection (not one of the pool's: it
// stays in LISTEN for the DB's life) and listens.
func (l *listener) connect(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, l.db.connCfg)
	if err != nil {
		return nil, l.db.unavailable("listen", err)
	}
	if _, err := conn.Exec(ctx, `LISTEN `+pgx.Identifier{l.db.channel}.Sanitize()); err != nil {
		conn.Close(context.Background())
		return nil, l.db.unavailable("listen", err)
	}
	l.mu.Lock()
	l.pid = conn.PgConn().PID()
	l.mu.Unlock()
	return conn, nil
}

// run follows the channel, reconnecting whenever the connection fails.
func (l *listener) run(ctx context.Context, conn *pgx.Conn) {
	defer close(l.done)
	for {
		err := l.follow(ctx, conn)
		c, cancel := context.WithTimeout(context.Background(), time.Second)
		conn.Close(c)
		cancel()
		l.mu.Lock()
		l.pid = 0
		l.mu.Unlock()
		if ctx.Err() != nil {
			return
		}
		l.lost.Add(1)
		l.db.logger().Warn("postgres: listener lost its connection; reconnecting", "err", l.db.redact(err.Error()))
		if conn = l.reconnect(ctx); conn == nil {
			return
		}
		// Whatever changed while no one listened: every waiter rereads.
		l.db.hub.PublishAll()
	}
}

// reconnect connects again, backing off while it fails; nil once ctx ends.
func (l *listener) reconnect(ctx context.Context) *pgx.Conn {
	wait := 50 * time.Millisecond
	for {
		if f := l.beforeConnect.Load(); f != nil {
			(*f)()
		}
		c, cancel := context.WithTimeout(ctx, listenBackoff+l.db.connCfg.ConnectTimeout)
		conn, err := l.connect(c)
		cancel()
		if err == nil {
			return conn
		}
		if ctx.Err() != nil {
			return nil
		}
		l.db.logger().Warn("postgres: listener cannot reconnect", "err", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		wait = min(2*wait, listenBackoff)
	}
}

// follow waits for notifications and wakes their waiters, until the
// connection fails or ctx ends.
func (l *listener) follow(ctx context.Context, conn *pgx.Conn) error {
	for {
		c, cancel := context.WithTimeout(ctx, listenCheck)
		n, err := conn.WaitForNotification(c)
		cancel()
		switch {
		case err == nil:
			l.wake(n.Payload)
			continue
		case ctx.Err() != nil:
			return ctx.Err()
		case !errors.Is(err, context.DeadlineExceeded) || conn.IsClosed():
			return err
		}
		// Quiet for a while: make sure the connection still answers.
		c, cancel = context.WithTimeout(ctx, listenBackoff)
		_, err = conn.Exec(c, `SELECT 1`)
		cancel()
		if err != nil {
			return err
		}
	}
}

// wake publishes the changes a notification names, unless this DB sent it
// (its own commit woke its waiters already).
func (l *listener) wake(payload string) {
	origin, rest, _ := strings.Cut(payload, " ")
	if origin == l.db.origin {
		return
	}
	var keys []string
	for _, k := range strings.Fields(rest) {
		for key, word := range noticeWords {
			if k == word {
				keys = append(keys, key)
			}
		}
		if id, ok := strings.CutPrefix(k, "a:"); ok {
			keys = append(keys, id)
		}
	}
	l.db.hub.Publish(keys)
}
