package gate

import (
	"context"

	"github.com/airlock-dev/airlock"
)

var _ airlock.Checker = (*Enforcer)(nil)

// WaitApproval waits until the request is settled or ctx ends, and
// returns it as it stands.
func (e *Enforcer) WaitApproval(ctx context.Context, id string) (airlock.Approval, error) {
	return e.Store.WaitApproval(ctx, id)
}

// RunNow calls fn with each of agent's requests that a person approved to
// run now: those approved in the last airlock.RunNowWindow, then each as
// it is approved (the store's wake-ups), until ctx ends.
func (e *Enforcer) RunNow(ctx context.Context, agent string, fn func(airlock.Approval)) error {
	st := e.Store
	seen, err := st.Head(ctx)
	if err != nil {
		return err
	}
	earlier, err := airlock.ApprovedToRun(ctx, st.FindApprovals, agent)
	if err != nil {
		return err
	}
	for _, ap := range earlier {
		fn(ap)
	}
	for {
		if err := st.WaitEvents(ctx, seen); err != nil {
			return err
		}
		head, err := st.Head(ctx)
		if err != nil {
			return err
		}
		evs, err := st.Events(ctx, airlock.EventFilter{AfterSeq: seen, Kind: airlock.EventApprovalResolved, Agent: agent, Limit: 1000})
		if err != nil {
			return err
		}
		for _, ev := range evs {
			seen = max(seen, ev.Seq)
			if id, ok := airlock.RunNowRequest(ev); ok {
				if ap, err := st.Approval(ctx, id); err == nil {
					fn(ap)
				}
			}
		}
		seen = max(seen, head)
	}
}
