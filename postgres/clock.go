package postgres

import (
	"context"
	"sync/atomic"
	"time"
)

// The replicas' one clock. Each replica stamps its events and works out
// deadlines (a request's expiry, a grant's, a token's) on its own, with
// its machine's clock — but corrected by how far that clock is from the
// database server's, measured when the store opens and every clockEvery
// since. A deadline one replica wrote then means the same moment to every
// other, whatever their machines' clocks say: a replica whose clock runs
// ahead does not expire requests early, nor does one that runs behind
// accept a grant past its end.

// clockEvery is how often a DB measures its clock's offset again.
const clockEvery = time.Minute

// clockWarn is the offset beyond which a DB says that its machine's clock
// is off: the store does not need the machines' clocks to agree, but a
// person reading the machine's own logs beside the audit log should know.
const clockWarn = time.Second

// clock is a DB's offset from the database server's clock.
type clock struct {
	// offset is what to add to the machine's clock, in nanoseconds.
	offset atomic.Int64
	// local is the machine's clock; tests skew it.
	local func() time.Time
	stop  context.CancelFunc
	done  chan struct{}
}

// now is the database server's time as this machine reckons it.
func (c *clock) now() time.Time {
	local := time.Now
	if c.local != nil {
		local = c.local
	}
	return local().Add(time.Duration(c.offset.Load()))
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
		db.logger().Warn("postgres: this machine's clock is off the database server's; "+
			"the store keeps the database server's time", "offset", best.Round(time.Millisecond))
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
