package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/airlock-dev/airlock"
	"github.com/google/uuid"
)

// Enforcer carries out the gate's decisions and makes each one durable
// before anything runs: if a decision cannot be recorded, the action does
// not run. It is safe for concurrent use.
type Enforcer struct {
	Gate  *Gate
	Store airlock.Store
	// GrantTTL is how long an approved suggest or needs-human request may be
	// used, once; 0 means airlock.DefaultGrantTTL.
	GrantTTL time.Duration
	// AskLimit, when set, bounds how many new ask requests one agent may
	// put to people in a window ({Uses: 30, Per: "10m"}): past it, an ask
	// is parked as a proposal (suggest) with CodeAskLimited, so that an
	// agent that floods asks does not bury its reviewers. Joining a
	// pending request, and collecting an approval, take nothing from it.
	AskLimit *airlock.Budget
	// DigestEvery, when set, has Sweep tell each agent's owner of the
	// grants proposed for the agent under ProposalRules, at most once per
	// DigestEvery (DigestProposals).
	DigestEvery   time.Duration
	ProposalRules ProposalRules
	// Logger receives failures to record; nil discards them.
	Logger *slog.Logger

	mu      sync.Mutex
	waiters map[string]int // callers of this process blocked per request
	pruned  time.Time      // when Sweep last pruned budgets' uses
}

var _ airlock.Guard = (*Enforcer)(nil)

// Enforce decides the action and carries the decision out:
//   - auto runs; notify runs and queues a notice to the agent's owner;
//   - ask queues an approval request (or joins the identical pending one)
//     and blocks until it is approved, rejected or expires, or ctx ends
//     (then the request is cancelled); an approval of the identical action
//     that no caller collected lets it run at once;
//   - suggest and needs-human skip the action and queue a non-blocking
//     request; once approved, the same action runs exactly once;
//   - shadow skips and records what would have happened; deny refuses.
//
// Every outcome is recorded before Enforce returns; when the store fails,
// the result is a refusal with CodeUnavailable, whatever the policy said.
func (e *Enforcer) Enforce(ctx context.Context, a airlock.Action) airlock.Enforcement {
	return e.carryOut(ctx, e.Gate.Decide(ctx, a), true)
}

// Check is Enforce for callers that cannot block, such as a server: an ask
// request is queued (or joined) and returned at once, Pending, for the
// caller to Await — now or after a reconnect. It is never cancelled because
// a caller went away; it waits for a person or its deadline. Once it is
// approved, the identical action checked again (with Check or Enforce)
// collects the approval, as Await does.
func (e *Enforcer) Check(ctx context.Context, a airlock.Action) airlock.Enforcement {
	return e.carryOut(ctx, e.Gate.Decide(ctx, a), false)
}

// CheckAtHost is Check for an adapter whose host asks its own user — Claude
// Code's permission prompt — when the deployment wants asks answered there:
// an ask is recorded as handed to the host (LabelAskedAtHost, no request
// queued, no trust record yet) and is not allowed; whether the host's user
// let it run is recorded after the call (Ran, Consent ConsentHost), never
// as Airlock's approval. Every other outcome, needs-human included, is
// Check's.
func (e *Enforcer) CheckAtHost(ctx context.Context, a airlock.Action) airlock.Enforcement {
	d := e.Gate.Decide(ctx, a)
	if d.Outcome != airlock.Ask || d.Code != "" || d.NeedsHuman {
		return e.carryOut(ctx, d, false)
	}
	enf := airlock.Enforcement{Decision: d, Label: airlock.LabelAskedAtHost}
	evs, err := e.Store.Append(ctx, airlock.Record{Events: []airlock.Event{decisionEvent(&d, airlock.LabelAskedAtHost, "")}})
	if err != nil {
		return e.unavailable(enf, err)
	}
	enf.Seq = evs[0].Seq
	enf.Message = fmt.Sprintf("%s needs a person's consent (%s): the host asks its user", actionName(&d), d.DecidedBy())
	return enf
}

// Await waits, until ctx ends, for the outcome of the ask request id that
// Check left pending, and returns the enforcement it ends in. When ctx ends
// first the request stays pending and so does the result (Pending set, no
// error). An approved request releases one caller, once, until its
// deadline (CollectApproval): a second Await of it, or one after the
// deadline, is a refusal (CodeUsed, CodeTimeout). When ctx was cancelled
// (the caller went away) an approved request is not collected: the result
// stays Pending. Errors: ENOTFOUND, EINVALID (the request is a proposal,
// used by retrying the action, not awaited), EUNAVAILABLE (also when an
// approval could not be collected: it stays usable).
func (e *Enforcer) Await(ctx context.Context, id string) (airlock.Enforcement, error) {
	// Read even when ctx has ended: "where does it stand now" is a fair
	// question with no time to wait.
	ap, err := e.Store.Approval(context.WithoutCancel(ctx), id)
	if err != nil {
		return airlock.Enforcement{}, err
	}
	if ap.Outcome != airlock.Ask {
		return airlock.Enforcement{}, airlock.Errorf(airlock.EINVALID, "approval %s is a %s request: once approved, retry the same action instead of waiting on it",
			id, ap.Detail.AutonomyClass)
	}
	d := ap.Decision()
	enf := airlock.Enforcement{Decision: d, Label: airlock.LabelApprovalGranted}
	got, waitErr := e.wait(ctx, ap, nil)
	if got.Status == airlock.StatusPending && ctx.Err() != nil {
		return e.pending(enf, got), nil
	}
	enf = e.settle(ctx, enf, got, waitErr, false)
	if !enf.Allowed {
		return enf, nil
	}
	if errors.Is(context.Cause(ctx), context.Canceled) {
		// The caller went away (or the server is draining): leave the
		// approval for the caller to collect when it comes back.
		enf.Allowed, enf.Pending = false, true
		enf.Message = fmt.Sprintf("%s was approved by %s (approval %s): wait on it again to collect it", actionName(&d), got.ResolvedBy, got.ID)
		return enf, nil
	}
	enf, err = e.collect(ctx, enf, airlock.Record{})
	if err != nil {
		// Still approved and uncollected: the caller may try again.
		return airlock.Enforcement{}, airlock.Errorf(airlock.EUNAVAILABLE, "approval %s could not be collected now: %s; wait on it again", id, airlock.ErrorMessage(err))
	}
	return enf, nil
}

// collect takes the approval of an allowed ask for this one caller, and
// appends rec with it: an approval releases one check, once
// (Store.CollectApproval). A caller that finds it used, or too late, is
// refused. An error means the store could not say: the approval stays as
// it was.
func (e *Enforcer) collect(ctx context.Context, enf airlock.Enforcement, rec airlock.Record) (airlock.Enforcement, error) {
	ap := enf.Approval
	used, err := e.Store.CollectApproval(context.WithoutCancel(ctx), ap.ID, rec)
	switch code := airlock.ErrorCode(err); code {
	case "":
		enf.Approval = &used
	case airlock.CodeUsed, airlock.CodeTimeout:
		enf.Allowed, enf.Code, enf.Label = false, code, airlock.LabelApprovalCancelled
		if code == airlock.CodeTimeout {
			enf.Label = airlock.LabelApprovalTimeout
		}
		enf.Message = fmt.Sprintf("%s was approved by %s, but %s; check the action again to ask anew",
			actionName(&enf.Decision), ap.ResolvedBy, strings.TrimPrefix(airlock.ErrorMessage(err), "approval "+ap.ID+" "))
	default:
		e.logger().Error("collect approval", "approval", ap.ID, "err", err)
		return enf, err
	}
	return enf, nil
}

// Run enforces the action and calls fn only if it is allowed, then records
// that it ran (an action.executed event) or failed (also a trust record
// with outcome failure). It returns a *Refusal when the action was not
// allowed, fn's error when it failed, and an EUNAVAILABLE error when fn ran
// but its result could not be recorded.
func (e *Enforcer) Run(ctx context.Context, a airlock.Action, fn func(context.Context, airlock.Action) error) (airlock.Enforcement, error) {
	enf := e.Enforce(ctx, a)
	if !enf.Allowed {
		return enf, &airlock.Refusal{Enforcement: enf}
	}
	start := time.Now()
	runErr := fn(ctx, enf.ToRun())
	if err := e.Ran(context.WithoutCancel(ctx), enf, time.Since(start), runErr); err != nil {
		return enf, errors.Join(runErr, err)
	}
	return enf, runErr
}

// Ran records that an allowed action ran (runErr nil) or failed: an
// action.executed event and, on failure, a trust record with outcome
// failure. Errors: EUNAVAILABLE.
func (e *Enforcer) Ran(ctx context.Context, enf airlock.Enforcement, took time.Duration, runErr error) error {
	return e.RanWith(ctx, enf, took, nil, runErr)
}

// MaxResultBytes bounds the result an execution record keeps.
const MaxResultBytes = 64 << 10

// RanWith is Ran with what the action returned, kept in the record for a
// person to read (an executor running an approved request: the MCP
// gateway's run now): a JSON value, or text when it is not JSON or longer
// than MaxResultBytes (then cut). Errors: EUNAVAILABLE.
func (e *Enforcer) RanWith(ctx context.Context, enf airlock.Enforcement, took time.Duration, result json.RawMessage, runErr error) error {
	d := &enf.Decision
	p := airlock.ActionExecuted{DecisionSeq: enf.Seq, ActionHash: d.ActionHash, Status: "ok", Duration: airlock.Duration(took), Consent: enf.Consent}
	if enf.Edit != nil {
		p.ActionHash = enf.Edit.ActionHash // what ran: a reviewer's edit
	}
	if len(result) > 0 {
		p.Result = keptResult(result)
	}
	rec := airlock.Record{}
	if runErr != nil {
		p.Status, p.Error = "failed", runErr.Error()
		rec.Trust = append(rec.Trust, trustRecord(d, airlock.TrustFailure, airlock.LabelExecutionFailed, "", approvalID(enf.Approval)))
	}
	rec.Events = append(rec.Events, airlock.NewEvent(airlock.EventActionExecuted, &d.Action, p.Status, approvalID(enf.Approval), p))
	if _, err := e.Store.Append(ctx, rec); err != nil {
		e.logger().Error("record executed action", "agent", d.Action.Agent, "tool", d.Action.Tool, "err", err)
		return airlock.Errorf(airlock.EUNAVAILABLE, "%s ran but its result could not be recorded: %v", d.Action.Tool, err)
	}
	return nil
}

// keptResult is a result as an execution record keeps it: the JSON value
// when it is one and small enough, else its text as a JSON string, cut.
func keptResult(result json.RawMessage) json.RawMessage {
	if len(result) <= MaxResultBytes && json.Valid(result) {
		return result
	}
	b, _ := json.Marshal(airlock.ClipText(string(result), MaxResultBytes-64))
	return b
}

// Sweep expires every pending request whose deadline passed, auditing
// each, and returns how many it expired; it takes the escalation steps
// that are due (approval.escalated), and audits the standing grants that
// passed their expiry too (grant.expired, once each).
func (e *Enforcer) Sweep(ctx context.Context) (int, error) {
	n := 0
	for {
		got, err := e.Store.ExpireDue(ctx, airlock.MaxPageSize)
		n += len(got)
		if err != nil {
			return n, err
		}
		if len(got) < airlock.MaxPageSize {
			break
		}
	}
	// Requests nobody answered in time escalate: their reviewers widen,
	// and the new ones are told.
	for {
		got, err := e.Store.EscalateDue(ctx, airlock.MaxPageSize)
		if err != nil {
			return n, err
		}
		if len(got) < airlock.MaxPageSize {
			break
		}
	}
	// Standing grants past their expiry are audited too (the gate stopped
	// using them at their expiry already).
	for {
		got, err := e.Store.ExpireGrants(ctx, airlock.MaxPageSize)
		if err != nil {
			return n, err
		}
		if len(got) < airlock.MaxPageSize {
			break
		}
	}
	// Budgets' uses no window counts any more are forgotten, and the
	// proposals' digest is sent when due, every pruneEvery at most: each is
	// a write of its own, worth it that often.
	e.mu.Lock()
	due := time.Since(e.pruned) >= pruneEvery
	if due {
		e.pruned = time.Now()
	}
	e.mu.Unlock()
	if due {
		if _, err := e.Store.PruneBudgets(ctx); err != nil {
			return n, err
		}
		if e.DigestEvery > 0 {
			if _, err := e.DigestProposals(ctx, e.ProposalRules, e.DigestEvery); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// pruneEvery is how often Sweep prunes budgets' old uses.
const pruneEvery = 10 * time.Minute

// SweepEvery runs Sweep every interval until ctx ends, so that requests
// nobody waits on (suggest, needs-human) expire at their deadline and are
// audited. A failed sweep is logged and retried at the next tick.
func (e *Enforcer) SweepEvery(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if n, err := e.Sweep(ctx); err != nil && ctx.Err() == nil {
				e.logger().Error("sweep approval requests", "expired", n, "err", err)
			}
		}
	}
}

// carryOut enforces a decision; block says whether an ask waits for its
// outcome.
func (e *Enforcer) carryOut(ctx context.Context, d airlock.Decision, block bool) airlock.Enforcement {
	switch {
	case d.Code == airlock.CodeInvalid:
		return e.refuse(ctx, &d, airlock.LabelInvalid, nil)
	case d.Runs():
		enf, spent := e.run(ctx, &d)
		if spent == nil {
			return enf
		}
		// A budget it needed is spent: decide again without what it bounds
		// (usually, then, the action asks), naming the budget. Each round
		// adds a budget to the spent ones, so this ends.
		if slices.ContainsFunc(d.Spent, func(c airlock.BudgetCharge) bool { return c.Key == spent.Charge.Key }) {
			return e.unavailable(enf, airlock.Errorf(airlock.EINTERNAL, "budget %s refused twice", spent.Charge.Key))
		}
		c := spent.Charge
		c.Used, c.Read = spent.Used, time.Now()
		return e.carryOut(ctx, e.Gate.DecideSpent(ctx, d.Action, append(slices.Clone(d.Spent), c)), block)
	case d.Outcome == airlock.Ask && block:
		return e.ask(ctx, &d)
	case d.Outcome == airlock.Ask:
		return e.request(ctx, &d)
	case d.Outcome == airlock.Suggest:
		return e.propose(ctx, &d)
	case d.Outcome == airlock.Shadow:
		return e.refuse(ctx, &d, airlock.LabelShadow, []airlock.Event{proposalEvent(&d, "")})
	default:
		return e.refuse(ctx, &d, airlock.LabelDenied, nil)
	}
}

// run records an auto or notify decision, taking its budget charges; the
// action may then run. When the store refuses a charge (its budget is
// spent), nothing is recorded and run returns the refusal instead.
func (e *Enforcer) run(ctx context.Context, d *airlock.Decision) (airlock.Enforcement, *airlock.BudgetSpent) {
	label := airlock.LabelAuto
	if d.Outcome == airlock.Notify {
		label = airlock.LabelNotify
	}
	by := d.DecidedBy() // once, for the event and the message
	rec := airlock.Record{
		Events: []airlock.Event{decisionEventBy(d, label, "", by)},
		Trust:  []airlock.TrustRecord{trustRecord(d, airlock.TrustSuccess, label, "", "")},
	}
	if d.Outcome == airlock.Notify {
		rec.Notifications = []airlock.Notification{{
			Recipients: []string{d.Owner}, Route: d.Notify, Kind: airlock.EventDecision, Agent: d.Action.Agent,
			Subject: fmt.Sprintf("%s ran %s", d.Action.Agent, summarize(&d.Action)),
		}}
	}
	rec.Charges = d.Budgets
	enf := airlock.Enforcement{Decision: *d, Label: label}
	evs, err := e.Store.Append(ctx, rec)
	if s := airlock.AsBudgetSpent(err); s != nil {
		return enf, s
	}
	if err != nil {
		return e.unavailable(enf, err), nil
	}
	enf.Allowed, enf.Seq = true, evs[0].Seq
	enf.Message = actionName(d) + " allowed (" + d.Outcome.String() + ") by " + by
	return enf, nil
}

// Explain decides the action as Check would now, with its budgets read
// from the store: each charge says what its window has used, and a budget
// found spent is decided past, as Check would be refused it. Nothing is
// recorded. Errors: EUNAVAILABLE (the budgets could not be read).
func (e *Enforcer) Explain(ctx context.Context, a airlock.Action) (airlock.Decision, error) {
	d := e.Gate.Decide(ctx, a)
	for range 64 {
		if len(d.Budgets) == 0 {
			return d, nil
		}
		used, err := e.Store.BudgetUsed(ctx, d.Budgets)
		if err != nil {
			return d, err
		}
		now := time.Now()
		taken := map[string]int64{}
		var spent *airlock.BudgetCharge
		for i := range d.Budgets {
			c := &d.Budgets[i]
			c.Used, c.Read = used[i]+taken[c.Key], now
			if c.Cost > c.Budget.Limit()-c.Used && spent == nil {
				spent = c
			}
			taken[c.Key] += c.Cost
		}
		if spent == nil {
			return d, nil
		}
		d = e.Gate.DecideSpent(ctx, a, append(slices.Clone(d.Spent), *spent))
	}
	return d, airlock.Errorf(airlock.EINTERNAL, "explain: budgets did not settle")
}

// refuse records a refusal that queues nothing: deny, shadow, invalid.
func (e *Enforcer) refuse(ctx context.Context, d *airlock.Decision, label string, extra []airlock.Event) airlock.Enforcement {
	rec := airlock.Record{Events: append([]airlock.Event{decisionEvent(d, label, "")}, extra...)}
	rec.Trust = []airlock.TrustRecord{trustRecord(d, airlock.TrustDenied, label, d.Code, "")}
	enf := airlock.Enforcement{Decision: *d, Label: label, Code: d.Code}
	if enf.Code == "" {
		enf.Code = airlock.CodeDenied
	}
	evs, err := e.Store.Append(ctx, rec)
	if err != nil {
		return e.unavailable(enf, err)
	}
	enf.Seq = evs[0].Seq
	switch label {
	case airlock.LabelShadow:
		enf.Message = fmt.Sprintf("%s was not run: shadow mode (%s) records it as what would have happened", actionName(d), d.DecidedBy())
	case airlock.LabelInvalid:
		enf.Message = fmt.Sprintf("%s was refused: %s", actionName(d), d.Classification.Reason)
	default:
		enf.Message = fmt.Sprintf("%s is denied by %s", actionName(d), d.DecidedBy())
	}
	return enf
}

// propose handles suggest and needs-human: use an approved grant for this
// exact action, or queue a non-blocking request and refuse for now.
func (e *Enforcer) propose(ctx context.Context, d *airlock.Decision) airlock.Enforcement {
	grant := airlock.Record{
		Events: []airlock.Event{decisionEvent(d, airlock.LabelGrantUsed, "")},
		Trust:  []airlock.TrustRecord{trustRecord(d, airlock.TrustSuccess, airlock.LabelGrantUsed, "", "")},
	}
	ap, err := e.Store.UseGrant(ctx, d.Action.Agent, d.ActionHash, grant)
	switch {
	case err == nil:
		enf := airlock.Enforcement{Decision: *d, Label: airlock.LabelGrantUsed, Allowed: true, Approval: &ap}
		enf.Message = fmt.Sprintf("%s allowed once by approval %s (%s by %s)", actionName(d), ap.ID, ap.Status, ap.ResolvedBy)
		return enf
	case airlock.ErrorCode(err) != airlock.ENOTFOUND:
		return e.unavailable(airlock.Enforcement{Decision: *d, Label: airlock.LabelGrantUsed, Code: d.Code}, err)
	}

	label := airlock.LabelSuggest
	if d.NeedsHuman {
		label = airlock.LabelNeedsHuman
	}
	rec := airlock.Record{
		Events: []airlock.Event{decisionEvent(d, label, ""), proposalEvent(d, "")},
		Trust:  []airlock.TrustRecord{trustRecord(d, airlock.TrustDenied, label, d.Code, "")},
	}
	enf := airlock.Enforcement{Decision: *d, Label: label, Code: d.Code}
	if enf.Code == "" {
		enf.Code = airlock.CodeSuggested
	}
	got, joined, err := e.Store.RequestApproval(ctx, e.newApproval(d), rec)
	if err != nil {
		return e.unavailable(enf, err)
	}
	enf.Approval = &got
	verb := "queued"
	if joined {
		verb = "already pending as"
	}
	if d.NeedsHuman {
		enf.Message = fmt.Sprintf("%s needs a person (%s): %s approval request %s; retry the same action once it is approved",
			actionName(d), d.NeedsHumanBy, verb, got.ID)
	} else if d.Code == airlock.CodeAskLimited {
		enf.Message = fmt.Sprintf("%s was not run: %s has asked too often (%s), so this ask is parked: %s proposal %s; retry the same action once it is approved",
			actionName(d), d.Action.Agent, e.AskLimit, verb, got.ID)
	} else {
		enf.Message = fmt.Sprintf("%s was not run: %s suggests it, %s proposal %s; retry the same action once it is approved",
			actionName(d), d.DecidedBy(), verb, got.ID)
	}
	return enf
}

// request queues (or joins) a blocking request and returns it pending, or
// lets the action through on an approval of it no check has collected.
func (e *Enforcer) request(ctx context.Context, d *airlock.Decision) airlock.Enforcement {
	if enf, ok := e.collectApproved(ctx, d); ok {
		return enf
	}
	enf := airlock.Enforcement{Decision: *d, Label: airlock.LabelApprovalRequested}
	rec := airlock.Record{Events: []airlock.Event{decisionEvent(d, airlock.LabelApprovalRequested, "")}}
	if e.AskLimit != nil {
		rec.Charges = []airlock.BudgetCharge{{Key: "asks:" + d.Action.Agent, Budget: *e.AskLimit, Cost: 1}}
	}
	ap, _, err := e.Store.RequestApproval(ctx, e.newApproval(d), rec)
	if s := airlock.AsBudgetSpent(err); s != nil && e.AskLimit != nil {
		return e.park(ctx, d, s)
	}
	if err != nil {
		return e.unavailable(enf, err)
	}
	return e.pending(enf, ap)
}

// park is an ask past the agent's ask limit: refused now and queued as a
// proposal (suggest), which a reviewer may approve when they get to it, so
// that the same action retried then runs once.
func (e *Enforcer) park(ctx context.Context, d *airlock.Decision, s *airlock.BudgetSpent) airlock.Enforcement {
	p := *d
	p.Overrides = append(slices.Clone(d.Overrides), airlock.Override{From: airlock.Ask, To: airlock.Suggest, Kind: "ask-limit",
		Reason: fmt.Sprintf("%s asked %d times in the last %s, the server's ask limit: this ask is parked as a proposal rather than put to a person now",
			d.Action.Agent, s.Used, s.Charge.Budget.Per)})
	p.Outcome, p.Code, p.Overridden = airlock.Suggest, airlock.CodeAskLimited, true
	return e.propose(ctx, &p)
}

// collectApproved collects, for this check, an approval of the identical
// action (same hash, so same agent) that no check has collected yet: its
// caller stopped waiting (a check that did not wait, a CLI's --timeout)
// and checks the action again. Of checks racing for one approval, one
// collects it and the others are told it was used (CodeUsed), as callers
// joined on a request are. ok is false when there is none to collect, or
// its deadline passed meanwhile: the check then queues (or joins) a
// request. A rejected, expired or cancelled request is never collected.
func (e *Enforcer) collectApproved(ctx context.Context, d *airlock.Decision) (airlock.Enforcement, bool) {
	ap, err := e.Store.CollectableApproval(ctx, d.Action.Agent, d.ActionHash)
	switch {
	case airlock.ErrorCode(err) == airlock.ENOTFOUND:
		return airlock.Enforcement{}, false
	case err != nil:
		return e.unavailable(airlock.Enforcement{Decision: *d, Label: airlock.LabelApprovalRequested}, err), true
	}
	enf := e.settle(ctx, airlock.Enforcement{Decision: *d}, ap, nil, false)
	if enf.Code == airlock.CodeEdited {
		// Approved as edited, which this caller cannot take: its check is
		// recorded refused, and the approval stays for the edited action.
		evs, err := e.Store.Append(ctx, airlock.Record{Events: []airlock.Event{decisionEvent(d, enf.Label, ap.ID)}})
		if err != nil {
			return e.unavailable(enf, err), true
		}
		enf.Seq = evs[0].Seq
		return enf, true
	}
	got, err := e.collect(ctx, enf, airlock.Record{Events: []airlock.Event{decisionEvent(d, airlock.LabelApprovalGranted, "")}})
	switch {
	case err != nil:
		return e.unavailable(enf, err), true
	case got.Code == airlock.CodeTimeout:
		return airlock.Enforcement{}, false
	case got.Code != "":
		// Another check collected it first: record this one's refusal.
		evs, err := e.Store.Append(ctx, airlock.Record{Events: []airlock.Event{decisionEvent(d, got.Label, ap.ID)}})
		if err != nil {
			return e.unavailable(got, err), true
		}
		got.Seq = evs[0].Seq
	}
	return got, true
}

// pending is the enforcement of an ask request still waiting for a person:
// a request, not a grant.
func (e *Enforcer) pending(enf airlock.Enforcement, ap airlock.Approval) airlock.Enforcement {
	enf.Approval, enf.Pending, enf.Allowed, enf.Code, enf.Label = &ap, true, false, "", airlock.LabelApprovalRequested
	enf.Message = fmt.Sprintf("%s waits for approval %s (%s) until %s%s", actionName(&enf.Decision), ap.ID,
		reviewersOf(&ap), ap.Expires.UTC().Format(time.RFC3339), spentNote(&enf.Decision))
	return enf
}

// spentNote says which budgets were spent, so that a grant or rule that
// would have let the action run did not: "" when none were.
func spentNote(d *airlock.Decision) string {
	var b strings.Builder
	for _, c := range d.Spent {
		b.WriteString("; budget " + c.Key + " (" + c.Budget.String() + ") is spent")
	}
	return b.String()
}

// reviewersOf names who may resolve a request, for messages.
func reviewersOf(ap *airlock.Approval) string {
	who := append([]string(nil), ap.Reviewers...)
	if ap.Owner != "" {
		who = append(who, ap.Owner+" (owner)")
	}
	if len(who) == 0 {
		return "an admin"
	}
	return strings.Join(who, ", ") + " or an admin"
}

// ask queues (or joins) a blocking request and waits for its end.
func (e *Enforcer) ask(ctx context.Context, d *airlock.Decision) airlock.Enforcement {
	enf := e.request(ctx, d)
	if !enf.Pending {
		return enf
	}
	ap, waitErr := e.wait(ctx, *enf.Approval, e.waiting(enf.Approval.ID))
	enf = e.settle(ctx, enf, ap, waitErr, ctx.Err() != nil)
	if !enf.Allowed {
		return enf
	}
	got, err := e.collect(ctx, enf, airlock.Record{})
	if err != nil {
		return e.unavailable(enf, err)
	}
	return got
}

// settle turns the end of an ask request into the caller's enforcement.
// The trust record was written with the resolution (see Approval.changed);
// gone says the caller stopped waiting, so an approval that arrived then
// does not run.
// An approval of a reviewer's edit is the edit's to run, for a caller
// that takes it (edited).
func (e *Enforcer) settle(ctx context.Context, enf airlock.Enforcement, ap airlock.Approval, waitErr error, gone bool) airlock.Enforcement {
	d := &enf.Decision
	enf.Approval, enf.Pending = &ap, false
	_, enf.Label, enf.Code = airlock.AskResult(ap.Status)
	switch {
	case ap.Status == airlock.StatusPending: // the store failed while waiting
		return e.unavailable(enf, waitErr)
	case ap.Status == airlock.StatusApproved && gone:
		enf.Label, enf.Code = airlock.LabelApprovalCancelled, airlock.CodeCancelled
		enf.Message = fmt.Sprintf("%s was approved by %s after the caller stopped waiting (approval %s); retry to run it",
			actionName(d), ap.ResolvedBy, ap.ID)
	case ap.Status == airlock.StatusApproved:
		enf.Allowed = true
		enf.Message = fmt.Sprintf("%s approved by %s (approval %s)", actionName(d), ap.ResolvedBy, ap.ID)
		enf = e.edited(ctx, enf, &ap)
	case ap.Status == airlock.StatusRejected:
		enf.Message = fmt.Sprintf("%s was rejected by %s (approval %s)%s", actionName(d), ap.ResolvedBy, ap.ID, because(ap.Reason))
	case ap.Status == airlock.StatusExpired:
		enf.Message = fmt.Sprintf("%s was not approved before approval %s expired at %s; ask a reviewer and retry",
			actionName(d), ap.ID, ap.Expires.UTC().Format(time.RFC3339))
	default:
		enf.Message = fmt.Sprintf("%s was not run: approval %s was cancelled%s", actionName(d), ap.ID, because(ap.Reason))
	}
	return enf
}

// waiting counts this process's callers blocked on one request, so that a
// request is cancelled only when the last of them leaves, and returns the
// function a caller calls as it stops waiting: it reports whether that
// caller was the last.
func (e *Enforcer) waiting(id string) (leave func() bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.waiters == nil {
		e.waiters = map[string]int{}
	}
	e.waiters[id]++
	var once sync.Once
	last := false
	return func() bool {
		once.Do(func() {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.waiters[id]--
			if last = e.waiters[id] == 0; last {
				delete(e.waiters, id)
			}
		})
		return last
	}
}

// wait blocks until the request leaves pending: resolved, expired (the
// enforcer expires it at its deadline), or cancelled because ctx ended and
// this was the last caller waiting on it. With leave nil, a caller that
// stops waiting leaves the request pending and gets it back as it stands.
func (e *Enforcer) wait(ctx context.Context, ap airlock.Approval, leave func() bool) (airlock.Approval, error) {
	detached := leave == nil
	if detached {
		leave = func() bool { return false }
	}
	stop := func() (airlock.Approval, error) {
		if detached {
			return ap, context.Cause(ctx)
		}
		return e.abandon(ctx, ap, leave())
	}
	for {
		wctx, cancel := context.WithDeadline(ctx, ap.Expires)
		got, err := e.Store.WaitApproval(wctx, ap.ID)
		cancel()
		switch {
		case err == nil && got.Status != airlock.StatusPending:
			leave()
			return got, nil
		case ctx.Err() != nil:
			return stop()
		case err != nil && !errors.Is(err, context.DeadlineExceeded):
			leave()
			return ap, err
		}
		got, err = e.Store.ExpireApproval(ctx, ap.ID)
		if err != nil {
			leave()
			return ap, err
		}
		if got.Status != airlock.StatusPending {
			leave()
			return got, nil
		}
		// The store's clock is behind ours: wait out the difference it
		// reports, not a fixed poll.
		ap = got
		gap := 50 * time.Millisecond
		if now, err := e.Store.Now(ctx); err == nil && ap.Expires.Sub(now) > gap {
			gap = ap.Expires.Sub(now)
		}
		t := time.NewTimer(gap)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return stop()
		}
	}
}

// abandon handles a caller that stopped waiting: the last caller waiting
// cancels the request; earlier ones leave it to the others.
func (e *Enforcer) abandon(ctx context.Context, ap airlock.Approval, last bool) (airlock.Approval, error) {
	bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if last {
		got, err := e.Store.CancelApproval(bg, ap.ID, "", "the waiting caller went away: "+context.Cause(ctx).Error(), airlock.SurfaceSystem)
		if err == nil {
			return got, nil
		}
		if airlock.ErrorCode(err) != airlock.ECONFLICT {
			return ap, err
		}
	}
	got, err := e.Store.Approval(bg, ap.ID)
	if err != nil {
		return ap, err
	}
	if got.Status == airlock.StatusPending {
		// Others still wait on it: this caller's attempt ends as cancelled.
		got.Status, got.Reason = airlock.StatusCancelled, "the waiting caller went away"
	}
	return got, nil
}

// unavailable turns any enforcement into a refusal because the store
// failed: fail closed.
func (e *Enforcer) unavailable(enf airlock.Enforcement, err error) airlock.Enforcement {
	e.logger().Error("record decision", "agent", enf.Decision.Action.Agent, "tool", enf.Decision.Action.Tool,
		"outcome", enf.Decision.Outcome.String(), "err", err)
	enf.Allowed, enf.Code, enf.Err = false, airlock.CodeUnavailable, err
	enf.Message = fmt.Sprintf("%s was not run: Airlock could not record the decision (%s); retry when the store is back",
		actionName(&enf.Decision), airlock.ErrorMessage(err))
	return enf
}

func (e *Enforcer) logger() *slog.Logger {
	if e.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return e.Logger
}

// newApproval builds the request for a decision that asks or proposes.
func (e *Enforcer) newApproval(d *airlock.Decision) airlock.Approval {
	id, err := uuid.NewV7()
	if err != nil { // only when the system's randomness fails
		id = uuid.New()
	}
	ttl := e.GrantTTL
	if ttl <= 0 {
		ttl = airlock.DefaultGrantTTL
	}
	class := string(d.Classification.Class)
	autonomy := d.Outcome.String()
	if d.NeedsHuman {
		class += airlock.NeedsHumanSuffix
		autonomy = "needs-human"
	}
	timeout := d.Timeout
	if timeout <= 0 {
		timeout = DefaultQueueTimeout
	}
	ap := airlock.Approval{
		ID: id.String(), Action: d.Action, ActionHash: d.ActionHash,
		Class: class, Tier: d.Classification.Tier, Capability: d.Classification.Capability,
		Outcome: d.Outcome, NeedsHuman: d.NeedsHuman, Summary: summarize(&d.Action),
		Reviewers: d.Reviewers, Owner: d.Owner, Timeout: timeout, Status: airlock.StatusPending, Review: d.Review,
		Detail: airlock.ApprovalDetail{
			AutonomyClass: autonomy, RequiresHuman: d.NeedsHuman, Code: d.Code,
			Rule: d.DecidedBy(), Decision: airlock.ClipText(d.Explain(), maxExplainText), Notify: d.Notify,
		},
	}
	if ap.Outcome == airlock.Suggest {
		ap.GrantTTL = ttl
	}
	if d.Action.Hints != nil {
		ap.Detail.Reason = d.Action.Hints.Reason
	}
	return ap
}

func decisionEvent(d *airlock.Decision, label, approvalID string) airlock.Event {
	return decisionEventBy(d, label, approvalID, d.DecidedBy())
}

// decisionEventBy is decisionEvent for a caller that has d.DecidedBy() at
// hand already.
func decisionEventBy(d *airlock.Decision, label, approvalID, decidedBy string) airlock.Event {
	p := airlock.DecisionPayload{
		Action: d.Action, ActionHash: d.ActionHash, Outcome: d.Outcome, Label: label, Code: d.Code,
		NeedsHuman: d.NeedsHumanBy, Class: d.Classification.Class, Capability: d.Classification.Capability,
		Tier: d.Classification.Tier, DecidedBy: decidedBy, Overrides: d.Overrides, ConditionError: d.ConditionErrors,
		Budgets: d.Budgets, Spent: d.Spent,
	}
	for i, c := range d.Commands {
		// Nested commands repeat their parents' text: each is clipped, so
		// that a deep script cannot make a decision event huge (the whole
		// script is in the action's arguments, once).
		n := airlock.CommandNote{Text: airlock.ClipText(c.Text, maxNoteText), Class: c.Class, Tier: c.Tier, Outcome: c.Outcome,
			Inert: c.Inert, Reason: airlock.ClipText(c.Reason, maxNoteText), Via: c.Via, Deciding: i+1 == d.Command}
		if !c.Inert {
			n.By = c.Source
			if c.Rule != nil {
				n.By = c.Rule.String()
			}
		}
		p.Commands = append(p.Commands, n)
	}
	return airlock.NewEvent(airlock.EventDecision, &d.Action, d.Outcome.String(), approvalID, p)
}

// proposalEvent records a skipped action: what would have run.
func proposalEvent(d *airlock.Decision, approvalID string) airlock.Event {
	return airlock.NewEvent(airlock.EventProposal, &d.Action, d.Outcome.String(), approvalID, airlock.ProposalPayload{
		Action: d.Action, ActionHash: d.ActionHash, Class: d.Classification.Class, Tier: d.Classification.Tier,
		Summary: summarize(&d.Action)})
}

func trustRecord(d *airlock.Decision, out airlock.TrustOutcome, label, code, approvalID string) airlock.TrustRecord {
	autonomy := d.Outcome.String()
	if d.NeedsHuman {
		autonomy = "needs-human"
	}
	return airlock.TrustRecord{
		Agent: d.Action.Agent, Class: d.Classification.Class, Outcome: out, Tier: d.Classification.Tier,
		TraceID: d.Action.TraceID, Label: label, Tool: d.Action.Tool, AutonomyClass: autonomy,
		RequiresHuman: d.NeedsHuman, Code: code, Args: d.Action.Args, ApprovalID: approvalID,
	}
}

func approvalID(ap *airlock.Approval) string {
	if ap == nil {
		return ""
	}
	return ap.ID
}

// actionName names the action in messages: "Bash `rm -rf /` (fs.delete, destructive)".
func actionName(d *airlock.Decision) string {
	return summarize(&d.Action) + " (" + string(d.Classification.Class) + ", " + d.Classification.Tier.String() + ")"
}

func because(reason string) string {
	if reason == "" {
		return ""
	}
	return ": " + reason
}

// summaryArgs are the arguments that say most about an action, in order.
var summaryArgs = []string{"command", "cmd", "file_path", "path", "url", "notebook_path", "pattern", "query", "ref", "branch"}

// Bounds on the text an audit record repeats besides the action itself
// (which it keeps whole).
const (
	maxNoteText    = 1 << 10  // one shell command's text in a decision event
	maxExplainText = 64 << 10 // the explanation in an approval request's detail
)

// releaseSummary names the tool a release would let in, rather than its
// whole definition.
func releaseSummary(args json.RawMessage) (string, bool) {
	var r struct{ Server, Tool, Change string }
	if json.Unmarshal(args, &r) != nil || r.Server == "" || r.Tool == "" {
		return "", false
	}
	what := "a new tool"
	if r.Change == "changed" {
		what = "a changed definition of"
	}
	return airlock.ClipText(fmt.Sprintf("%s: release %s %s of MCP server %s", airlock.ToolReleaseTool, what, r.Tool, r.Server), maxSummary), true
}

// maxSummary bounds a summary line; reviewers see the full arguments apart.
const maxSummary = 160

// summarize renders an action in one line: the tool and its most telling
// argument.
func summarize(a *airlock.Action) string {
	if a.Tool == airlock.ToolReleaseTool {
		if s, ok := releaseSummary(a.Args); ok {
			return s
		}
	}
	var s string
	if v, ok := airlock.FirstArg(a.Args, summaryRank); ok {
		if str, ok := v.(string); ok {
			s = str
		} else if b, err := json.Marshal(v); err == nil {
			s = string(b)
		}
	}
	if s == "" && len(a.Args) > 0 && string(a.Args) != "{}" {
		var compact bytes.Buffer
		if err := json.Compact(&compact, a.Args); err == nil {
			s = compact.String()
		}
	}
	s = collapseSpace(s)
	if len(s) > maxSummary {
		cut := maxSummary
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	if s == "" {
		return a.Tool
	}
	return a.Tool + " `" + s + "`"
}

// summaryRank ranks summaryArgs: the lower, the more telling.
var summaryRank = func() map[string]int {
	m := map[string]int{}
	for i, k := range summaryArgs {
		m[k] = i
	}
	return m
}()

// collapseSpace is strings.Join(strings.Fields(s), " "), without the copy
// when s is already so: printable ASCII, single spaces between words.
func collapseSpace(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == ' ' && (i == 0 || i == len(s)-1 || s[i-1] == ' ') {
			return strings.Join(strings.Fields(s), " ")
		}
	}
	return s
}
