package gate

import (
	"cmp"
	"context"
	"errors"
	"slices"

	"github.com/airlock-dev/airlock"
	jsonv2 "github.com/go-json-experiment/json"
)

// A BacktestReport says what a policy stack would have decided differently
// over recorded decisions (airlock policy backtest).
type BacktestReport struct {
	// Replayed counts the decisions replayed; Skipped those whose action
	// could not be read back.
	Replayed int `json:"replayed"`
	Skipped  int `json:"skipped,omitempty"`
	// Changes counts the decisions whose outcome changes, by old → new
	// outcome, the largest first; each with up to MaxBacktestExamples
	// examples.
	Changes []BacktestChange `json:"changes"`
	// AsksAvoided counts decisions that asked a person and would now run
	// without one (auto, notify).
	AsksAvoided int `json:"asks_avoided"`
	// NewlyRun counts decisions that did not run without a person and
	// would now; NewlyRunAboveWrite those of them above the write tier,
	// which deserve a look first.
	NewlyRun           int `json:"newly_run"`
	NewlyRunAboveWrite int `json:"newly_run_above_write"`
	// NewlyDenied counts decisions that were not denied and would now be.
	NewlyDenied int `json:"newly_denied"`
}

// A BacktestChange is one kind of change: old outcome → new outcome.
type BacktestChange struct {
	From     airlock.Outcome   `json:"from"`
	To       airlock.Outcome   `json:"to"`
	Count    int               `json:"count"`
	Examples []BacktestExample `json:"examples"`
}

// A BacktestExample is one recorded decision that changes.
type BacktestExample struct {
	Seq       int64            `json:"seq"` // the decision's audit event
	Agent     string           `json:"agent"`
	Tool      string           `json:"tool"`
	Tier      airlock.RiskTier `json:"tier"`
	DecidedBy string           `json:"decided_by"` // what decides it now
}

// MaxBacktestExamples bounds the examples of one change.
const MaxBacktestExamples = 5

// Backtest replays recorded decision events through g: each event's action,
// with its stored arguments, decided again (without grants' state, sessions
// or the store), its new outcome compared with the recorded one. events
// yields the log's events in order; events of other kinds are passed over.
// It reads nothing else and writes nothing.
func (g *Gate) Backtest(ctx context.Context, events func(yield func(airlock.Event) bool)) (BacktestReport, error) {
	var r BacktestReport
	changes := map[[2]airlock.Outcome]*BacktestChange{}
	// Only what a replay needs of each decision's payload is decoded: the
	// action, the outcome and the needs-human tag (most of a payload is
	// its commands' notes).
	var p struct {
		Action     airlock.Action  `json:"action"`
		Outcome    airlock.Outcome `json:"outcome"`
		NeedsHuman string          `json:"needs_human"`
	}
	var err error
	events(func(e airlock.Event) bool {
		if e.Kind != airlock.EventDecision {
			return true
		}
		if err = ctx.Err(); err != nil {
			return false
		}
		p.Action, p.Outcome, p.NeedsHuman = airlock.Action{}, 0, ""
		if jsonv2.Unmarshal(e.Payload, &p, jsonv2.RejectUnknownMembers(false)) != nil || p.Action.Tool == "" || !p.Outcome.Valid() {
			r.Skipped++
			return true
		}
		r.Replayed++
		a := p.Action
		a.SessionID = "" // a session's pushed policies are not the stack being tested
		d := g.Resolve(ctx, a)
		if d.Outcome == p.Outcome {
			return true
		}
		key := [2]airlock.Outcome{p.Outcome, d.Outcome}
		c := changes[key]
		if c == nil {
			c = &BacktestChange{From: p.Outcome, To: d.Outcome}
			changes[key] = c
		}
		c.Count++
		if len(c.Examples) < MaxBacktestExamples {
			c.Examples = append(c.Examples, BacktestExample{Seq: e.Seq, Agent: a.Agent, Tool: a.Tool, Tier: d.Classification.Tier,
				DecidedBy: d.DecidedBy()})
		}
		ranBefore := p.Outcome.Runs() && p.NeedsHuman == ""
		runsNow := d.Runs()
		switch {
		case runsNow && !ranBefore:
			r.NewlyRun++
			if p.Outcome == airlock.Ask {
				r.AsksAvoided++
			}
			if d.Classification.Tier > airlock.TierWrite {
				r.NewlyRunAboveWrite++
			}
		case d.Outcome == airlock.Deny && p.Outcome != airlock.Deny:
			r.NewlyDenied++
		}
		return true
	})
	if err != nil {
		return r, err
	}
	for _, c := range changes {
		r.Changes = append(r.Changes, *c)
	}
	slices.SortFunc(r.Changes, func(a, b BacktestChange) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To))
	})
	return r, nil
}

// BacktestLog is Backtest over the decisions of an audit log that f
// selects (its kind is set to decision), read with events — a store's
// Events, or the API's — up to the log's head when it starts.
func (g *Gate) BacktestLog(ctx context.Context, events func(context.Context, airlock.EventFilter) ([]airlock.Event, error), f airlock.EventFilter) (BacktestReport, error) {
	f.Kind = airlock.EventDecision
	seq, readErr := pagedEvents(ctx, events, f)
	rep, err := g.Backtest(ctx, seq)
	return rep, errors.Join(err, *readErr)
}

// pagedEvents yields the events f selects up to the log's head when it
// starts — a consistent prefix of an append-only log, however much is
// appended meanwhile — a page at a time, the next page read while the
// current one is replayed. A read error ends the sequence and is left in
// *err for the caller. Reading never blocks the store's writer.
func pagedEvents(ctx context.Context, events func(context.Context, airlock.EventFilter) ([]airlock.Event, error), f airlock.EventFilter) (func(yield func(airlock.Event) bool), *error) {
	var readErr error
	return func(yield func(airlock.Event) bool) {
		head := int64(-1)
		if last, err := events(ctx, airlock.EventFilter{Newest: true, Limit: 1}); err != nil {
			readErr = err
			return
		} else if len(last) > 0 {
			head = last[0].Seq
		}
		type result struct {
			page []airlock.Event
			err  error
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		pages := make(chan result, 1)
		go func() {
			defer close(pages)
			f.Limit = airlock.MaxPageSize
			for {
				page, err := events(ctx, f)
				select {
				case pages <- result{page, err}:
				case <-ctx.Done():
					return
				}
				if err != nil || len(page) < f.Limit || page[len(page)-1].Seq >= head {
					return
				}
				f.AfterSeq = page[len(page)-1].Seq
			}
		}()
		for r := range pages {
			if r.err != nil {
				readErr = r.err
				return
			}
			for _, e := range r.page {
				if e.Seq > head || !yield(e) {
					return
				}
			}
		}
	}, &readErr
}
