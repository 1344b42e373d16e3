package postgres

import (
	"context"
	"sync/atomic"
	"time"
)

// The replicas' clocks. Each replica stamps its events and works out
// deadlines (a request's expiry, a grant's, a token's) with its own
// machine's clock, as every other part of Airlock on that machine does
// (an enforcer's wait, a notifier's backoff, a token's check): the
// machines' clocks must agree, which a time service (NTP) keeps them
// doing. A deadline one replica wrote is read by another on its clock, so
// a replica whose clock runs ahead expires requests early, and one whose
// clock runs behind accepts a grant after its end. So that this does not
// go unseen, each replica measures how far its clock is from the database
// server's — a clock every replica shares — when the store opens and
// every clockEvery since, reports it (airlock_store_clock_offset_seconds)
// and warns in its log when it is beyond clockWarn.

// clockEvery is how often a DB measures its clock's offset again.
const clockEvery = time.Minute

// clockWarn is the offset beyond which a DB warns that its machine's
// clock is off the database server's, and so, likely, off the other
// replicas'.
const clockWarn = time.Second

// clock is a DB's offset from the database server's clock.
type clock struct {
	// offset is how far the database server's clock is ahead of the
	// machine's, in nanoseconds.
	offset atomic.Int64
	// local is the machine's clock, as measured; tests skew it.
	local func() time.Time
	stop  context.CancelFunc
	done  chan struct{}
}

// measureClock sets db's offset from the database server's clock: of a few
// readings of clock_timestamp(), the one with the shortest round trip,
// taken to be read halfway through it.
func (db *DB) measureClock(ctx context.Context) error {
	local := time.Now
	if db.clock.local != nil {
		local = db.clock.local
	}
	var best, rtt time.Duration
	for i := range 3 {
		var server time.Time
		t0 := local()
		err := db.pool.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&server)
		t1 := local()
		if err != nil {
			return err
		}
		if d := t1.Sub(t0); i == 0 || d < rtt {
			best, rtt = server.Sub(t0.Add(d/2)), d
		}
	}
	before := time.Duration(db.clock.offset.Swap(int64(best)))
	if best.Abs() > clockWarn && (best-before).Abs() > clockWarn {
		db.logger().Warn("postgres: this machine's clock is off the database server's: deadlines another replica "+
			"wrote are read here on this machine's clock; synchronise the clocks", "offset", best.Round(time.Millisecond))
	}
	return nil
}

// startClock measures the offset again every clockEvery until Close. A
// measurement that fails keeps the last offset: the database is out of
// reach, and the writes that would use the clock fail anyway.
func (db *DB) startClock() {
	ctx, cancel := context.WithCancel(context.Background())
	db.clock.stop, db.clock.done = cancel, make(chan struct{})
	go func() {
		defer close(db.clock.done)
		t := time.NewTicker(clockEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				mctx, cancel := context.WithTimeout(ctx, db.statementTimeout())
				if err := db.measureClock(mctx); err != nil && ctx.Err() == nil {
					db.logger().Debug("postgres: cannot measure the clock's offset", "err", db.redact(err.Error()))
				}
				cancel()
			}
		}
	}()
}

// stopClock ends startClock's measurements.
func (db *DB) stopClock() {
	if db.clock.stop != nil {
		db.clock.stop()
		<-db.clock.done
	}
}
