package sqlite_test

import (
	"context"
	"database/sql/driver"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
	"github.com/airlock-dev/airlock/gate"
	"github.com/airlock-dev/airlock/sqlite"
)

// fault is where the injected driver fails.
type fault int32

const (
	faultNone      fault = iota
	faultBegin           // BEGIN fails
	faultCommit          // COMMIT fails and the transaction rolls back
	faultLostReply       // COMMIT succeeds, but the caller is told it failed
)

func (f fault) String() string {
	return [...]string{"none", "on begin", "on commit", "after a commit whose reply is lost"}[f]
}

var errInjected = errors.New("injected I/O error")

// faultDriver wraps the real driver and fails where mode says.
type faultDriver struct {
	driver.Driver
	mode *atomic.Int32
}

func (d faultDriver) Open(name string) (driver.Conn, error) {
	c, err := d.Driver.Open(name)
	if err != nil {
		return nil, err
	}
	return &faultConn{Conn: c, mode: d.mode}, nil
}

// faultConn exposes only the interfaces database/sql needs, so that every
// transaction goes through BeginTx below.
type faultConn struct {
	driver.Conn
	mode *atomic.Int32
}

func (c *faultConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if fault(c.mode.Load()) == faultBegin {
		return nil, errInjected
	}
	tx, err := c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &faultTx{Tx: tx, mode: c.mode}, nil
}

func (c *faultConn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	return c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, q)
}

type faultTx struct {
	driver.Tx
	mode *atomic.Int32
}

func (tx *faultTx) Commit() error {
	switch fault(tx.mode.Load()) {
	case faultCommit:
		tx.Tx.Rollback()
		return errInjected
	case faultLostReply:
		if err := tx.Tx.Commit(); err != nil {
			return err
		}
		return errInjected
	}
	return tx.Tx.Commit()
}

// openFaulty opens a store whose driver fails where the returned mode
// says (faultNone at first); it is closed when the test ends.
func openFaulty(t *testing.T) (*sqlite.DB, *atomic.Int32) {
	t.Helper()
	mode := new(atomic.Int32)
	db := sqlite.NewDB(filepath.Join(t.TempDir(), "airlock.db"))
	sqlite.WrapDriver(db, func(d driver.Driver) driver.Driver { return faultDriver{d, mode} })
	if err := db.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, mode
}

// TestFailClosed injects a store failure under every outcome: each becomes
// a refusal with AIRLOCK-UNAVAILABLE, nothing runs, and once the store is
// back the chain is intact and continues.
func TestFailClosed(t *testing.T) {
	tools := []string{"read_file", "write_file", "deploy", "propose", "shadow_tool", "delete_file", "wire_money"}
	for _, f := range []fault{faultBegin, faultCommit, faultLostReply} {
		t.Run(f.String(), func(t *testing.T) {
			db, mode := openFaulty(t)
			e := &gate.Enforcer{Gate: airlocktest.NewGate(t), Store: db}
			// Something in the log before the failure, to check the chain
			// continues from it.
			if enf := e.Enforce(t.Context(), airlocktest.Action("read_file", "before")); !enf.Allowed {
				t.Fatalf("healthy store: %+v", enf)
			}

			mode.Store(int32(f))
			for _, tool := range tools {
				ran := false
				ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
				enf, err := e.Run(ctx, airlocktest.Action(tool, "during"), func(context.Context, airlock.Action) error { ran = true; return nil })
				cancel()
				if ran || enf.Allowed || enf.Code != airlock.CodeUnavailable || airlock.ErrorCode(err) != airlock.CodeUnavailable {
					t.Errorf("%s with the store failing %s: ran %v, %+v, err %v", tool, f, ran, enf, err)
				}
				if enf.Err == nil {
					t.Errorf("%s: the refusal carries no cause", tool)
				}
			}

			mode.Store(int32(faultNone))
			after := e.Enforce(t.Context(), airlocktest.Action("read_file", "after"))
			if !after.Allowed {
				t.Fatalf("store back: %+v", after)
			}
			rep := airlocktest.MustVerify(t, db)
			if rep.HeadSeq != after.Seq {
				t.Fatalf("head seq %d, want the last decision's %d", rep.HeadSeq, after.Seq)
			}
			if f != faultLostReply && after.Seq != 2 {
				t.Fatalf("a failed commit left events: the next decision has seq %d, want 2", after.Seq)
			}
		})
	}
}

// TestReadyAfterFailedWrites: once a write fails (here a commit: a full
// disk fails there in WAL mode), the store says it is not ready, and why,
// until a commit succeeds again.
func TestReadyAfterFailedWrites(t *testing.T) {
	db, mode := openFaulty(t)
	if err := db.Ready(t.Context()); err != nil {
		t.Fatalf("a healthy store: %v", err)
	}
	for _, f := range []fault{faultBegin, faultCommit} {
		mode.Store(int32(f))
		if _, err := db.Append(t.Context(), airlock.Record{Events: []airlock.Event{airlocktest.Event("decision", "a")}}); err == nil {
			t.Fatalf("append with the store failing %s succeeded", f)
		}
		for range 2 { // still failing: still not ready
			err := db.Ready(t.Context())
			if airlock.ErrorCode(err) != airlock.EUNAVAILABLE || !strings.Contains(err.Error(), errInjected.Error()) ||
				!strings.Contains(err.Error(), "writes have failed since ") {
				t.Fatalf("Ready after a write failed %s: %v, want unavailable saying what fails", f, err)
			}
		}
		mode.Store(int32(faultNone))
		if err := db.Ready(t.Context()); err != nil {
			t.Fatalf("Ready once writes work again: %v", err)
		}
	}
	if rep := airlocktest.MustVerify(t, db); rep.HeadSeq != 0 {
		t.Fatalf("the readiness probes left %d events", rep.HeadSeq)
	}
}
