package gate

import (
	"context"
	"time"

	"github.com/airlock-dev/airlock"
)

// KeepGrants puts the store's live standing grants in force in the gate,
// and again whenever one is created or revoked — the store's wake-ups,
// across replicas on PostgreSQL — until ctx ends: a revocation takes effect
// on every process over the store at once. When the store cannot be read,
// the gate holds no grant until it can (fail closed: a grant that might be
// revoked is not used). Expiry needs no wake-up: the gate checks it on
// every decision.
func (e *Enforcer) KeepGrants(ctx context.Context) error {
	st := e.Store
	seen, err := st.Head(ctx)
	for err != nil {
		e.Gate.SetGrants(nil, nil)
		if !pause(ctx, time.Second) {
			return ctx.Err()
		}
		seen, err = st.Head(ctx)
	}
	e.loadGrants(ctx)
	for {
		if err := st.WaitEvents(ctx, seen); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			e.Gate.SetGrants(nil, nil)
			if !pause(ctx, time.Second) {
				return ctx.Err()
			}
			e.loadGrants(ctx)
			continue
		}
		head, herr := st.Head(ctx)
		changed, err := grantsChanged(ctx, st, seen, head)
		if err != nil || herr != nil {
			e.Gate.SetGrants(nil, nil)
			e.logger().Warn("grants: read the audit log", "err", err, "head_err", herr)
			if !pause(ctx, time.Second) {
				return ctx.Err()
			}
			e.loadGrants(ctx)
			continue
		}
		if changed {
			e.loadGrants(ctx)
		}
		seen = max(seen, head)
	}
}

// grantsChanged reports whether a grant was created or revoked in the log
// after seq after, up to head, reading every page of grant events.
func grantsChanged(ctx context.Context, st airlock.Store, after, head int64) (bool, error) {
	for after < head {
		evs, err := st.Events(ctx, airlock.EventFilter{AfterSeq: after, KindPrefix: "grant.", Limit: airlock.MaxPageSize})
		if err != nil {
			return false, err
		}
		for _, ev := range evs {
			if ev.Kind == airlock.EventGrantCreated || ev.Kind == airlock.EventGrantRevoked {
				return true, nil
			}
		}
		if len(evs) < airlock.MaxPageSize {
			return false, nil
		}
		after = evs[len(evs)-1].Seq
	}
	return false, nil
}

// loadGrants reads the live grants into the gate, or clears the gate's
// when the store cannot say which are live.
func (e *Enforcer) loadGrants(ctx context.Context) {
	now, err := e.Store.Now(ctx)
	var gs []airlock.Grant
	if err == nil {
		gs, err = e.Store.Grants(ctx, airlock.GrantFilter{LiveAt: now, Unlimited: true})
	}
	if err != nil {
		e.logger().Warn("grants: read the live grants; none is used until they can be read", "err", err)
		e.Gate.SetGrants(nil, nil)
		return
	}
	e.Gate.SetGrants(gs, nil)
}

// pause waits d or until ctx ends, reporting whether ctx is still live.
func pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
