package hook

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/gate"
	"github.com/airlock-dev/airlock/hook/relay"
)

// Handler answers hook events with an Enforcer: what a server does at
// /v1/hooks/{host}, for command hooks (through `airlock hook <host>`) and
// for hosts that POST their hooks to a URL alike.
type Handler struct {
	Enforcer *gate.Enforcer
	// WaitContext bounds how long an ask is held (nil: context.WithTimeout).
	// A server passes one that also ends when it drains.
	WaitContext func(context.Context, time.Duration) (context.Context, context.CancelFunc)
	// Logger receives what the hook's host never shows; nil discards it.
	Logger *slog.Logger
	// AskAtHost sends an ask to the host's own permission prompt instead of
	// holding the call for Airlock's reviewers (Claude Code only: the one
	// host whose PreToolUse can answer "ask"). The execution record then
	// says the host's user consented, never that Airlock approved.
	AskAtHost bool
	// Edits says whether the host runs a reviewer's edit of a call in
	// place of the call (Host.TakeEdit); nil, it takes none: a call whose
	// approval holds an edit is refused, never run as the model made it.
	Edits gate.EditTaker
}

// DefaultHold is how long an ask is held when the caller says nothing: the
// default tool-hook timeout of Claude Code and Codex (10 minutes), less a
// margin to answer in.
const DefaultHold = 10*time.Minute - HoldMargin

// HoldMargin is the time an ask's hold leaves the hook to answer before the
// host's own timeout kills it.
const HoldMargin = relay.HoldMargin

func (h *Handler) logger() *slog.Logger {
	if h.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return h.Logger
}

// Handle answers one event of agent's host. Before a call (Pre,
// Permission) it decides the action and, when a person must decide, holds
// the call for up to hold (0: not at all); after it (Post) it records the execution,
// linked to the decision that let it run. The verdict never allows what
// Airlock could not decide or record.
func (h *Handler) Handle(ctx context.Context, agent string, ev Event, hold time.Duration) Verdict {
	take := h.Edits
	if take == nil {
		take = takesNoEdit
	}
	ctx = gate.WithEditTaker(ctx, take)
	a := ev.Action
	a.Agent = agent
	if ev.Kind == KindPost {
		return h.record(ctx, a, ev)
	}
	if ev.Kind == KindPermission {
		// The host's prompt for a call its PreToolUse already put to
		// Airlock: one decision answers both. A PreToolUse itself is
		// always the call's first question (a retried one, with the same
		// action, joins or collects its request as any check does), so it
		// pays no look-back.
		if v, ok := h.alreadyAllowed(ctx, a); ok {
			return v
		}
	}
	var enf airlock.Enforcement
	if h.AskAtHost {
		enf = h.Enforcer.CheckAtHost(ctx, a)
		if enf.Label == airlock.LabelAskedAtHost {
			return Verdict{Ask: true, Reason: "Airlock: " + enf.Message}
		}
	} else {
		enf = h.Enforcer.Check(ctx, a)
	}
	if enf.Pending && enf.Approval != nil {
		if hold <= 0 {
			return stillPending(enf, 0)
		}
		waitCtx := h.WaitContext
		if waitCtx == nil {
			waitCtx = context.WithTimeout
		}
		wctx, cancel := waitCtx(ctx, hold)
		next, err := h.Enforcer.Await(wctx, enf.Approval.ID)
		cancel()
		switch {
		case err != nil:
			return Verdict{Code: airlock.CodeUnavailable, Reason: reasonOf(err)}
		case next.Pending:
			return stillPending(next, hold)
		}
		enf = next
	}
	return verdictOf(enf)
}

// verdictOf is an enforcement's answer to the host.
func verdictOf(enf airlock.Enforcement) Verdict {
	if enf.Allowed {
		v := Verdict{Allow: true, Reason: "Airlock allowed it: " + enf.Message}
		if enf.Edit != nil {
			v.Input = enf.Edit.Args
		}
		return v
	}
	code := enf.Code
	if code == "" {
		code = airlock.CodeDenied
	}
	return Verdict{Code: code, Reason: code + ": " + enf.Message + nextStep(enf)}
}

// editRan returns the reviewer's edit of the approval that let a call
// run, when what the host ran is that edit; nil when it ran the action as
// decided.
func (h *Handler) editRan(ctx context.Context, approvalID string, ran airlock.Action) (*airlock.Edit, error) {
	ap, err := h.Enforcer.Store.Approval(ctx, approvalID)
	if err != nil || ap.Edit == nil {
		return nil, err
	}
	if hash, err := ran.Hash(); err == nil && hash == ap.Edit.ActionHash {
		return ap.Edit, nil
	}
	return nil, nil
}

// takesNoEdit is the edit taker of a handler that names none.
func takesNoEdit(_, _ *airlock.Action) error {
	return airlock.Errorf(airlock.ENOTIMPL, "this hook cannot change a tool call's input")
}

// nextStep tells the model (and the person at the terminal) how a queued
// request is approved.
func nextStep(enf airlock.Enforcement) string {
	if enf.Approval == nil || enf.Approval.ID == "" {
		return ""
	}
	switch enf.Code {
	case airlock.CodeSuggested, airlock.CodeNeedsHuman:
		return fmt.Sprintf(" (a person approves it with airlock approvals approve %s, or in the inbox)", enf.Approval.ID)
	case airlock.CodeCancelled:
		if enf.Approval.Status == airlock.StatusApproved {
			return ". Retry exactly the same call: the approval lets it run once"
		}
	}
	return ""
}

// stillPending is the answer when the hook can hold the call no longer.
func stillPending(enf airlock.Enforcement, hold time.Duration) Verdict {
	id := enf.Approval.ID
	return Verdict{Code: airlock.CodePending, Reason: fmt.Sprintf(
		"%s: nobody decided within %s: %s. The request stays pending: once a person approves it "+
			"(airlock approvals approve %s, or the inbox), retry exactly the same call and it runs once",
		airlock.CodePending, hold.Round(time.Second), enf.Message, id)}
}

// alreadyAllowed answers a call that a decision of Airlock already let run:
// the same call (same call ID) with exactly the same action.
func (h *Handler) alreadyAllowed(ctx context.Context, a airlock.Action) (Verdict, bool) {
	if a.CallID == "" || a.TraceID == "" {
		return Verdict{}, false
	}
	d, found, err := airlock.FindDecision(ctx, h.Enforcer.Store, a)
	if err != nil || !found {
		return Verdict{}, false
	}
	if hash, err := a.Hash(); err != nil || hash != d.Hash {
		return Verdict{}, false
	}
	if _, ok := d.AllowedBy(ctx, h.Enforcer.Store); !ok {
		return Verdict{}, false
	}
	return Verdict{Allow: true, Reason: fmt.Sprintf("Airlock allowed this call already (decision %d)", d.Seq)}, true
}

// record writes a Post event's execution: an action.executed event linked
// to the decision that let the call run, and a trust record when it failed.
func (h *Handler) record(ctx context.Context, a airlock.Action, ev Event) Verdict {
	ran := a
	d, found, err := airlock.FindDecision(ctx, h.Enforcer.Store, a)
	var edit *airlock.Edit
	if err == nil && !found {
		// A reviewer's edit that the host ran: the call it reports is the
		// edited one.
		d, edit, found, err = airlock.FindEditedDecision(ctx, h.Enforcer.Store, a)
	}
	if err != nil {
		return Verdict{Code: airlock.CodeUnavailable, Reason: reasonOf(fmt.Errorf("find the decision of %s: %w", a.Tool, err))}
	}
	enf := airlock.Enforcement{}
	if found {
		a = d.Action // the action as decided: its hash is the one the record names
		enf.Seq = d.Seq
		approvalID, ok := d.AllowedBy(ctx, h.Enforcer.Store)
		if ok && approvalID != "" && edit == nil {
			if edit, err = h.editRan(ctx, approvalID, ran); err != nil {
				return Verdict{Code: airlock.CodeUnavailable, Reason: reasonOf(err)}
			}
		}
		enf.Edit = edit
		switch {
		case ok && approvalID != "":
			enf.Approval = &airlock.Approval{ID: approvalID}
		case d.Label == airlock.LabelAskedAtHost:
			enf.Consent = airlock.ConsentHost
		case !ok:
			enf.Consent = airlock.ConsentNone
		}
	} else {
		enf.Consent = airlock.ConsentNone
	}
	if enf.Consent == airlock.ConsentNone {
		h.logger().Warn("a host ran a call no decision of Airlock allowed", "agent", a.Agent, "tool", a.Tool,
			"call", a.CallID, "session", a.SessionID)
	}
	enf.Decision = h.Enforcer.Gate.Resolve(ctx, a)
	if enf.Decision.ActionHash, err = a.Hash(); err != nil {
		return Verdict{Code: airlock.CodeInvalid, Reason: reasonOf(err)}
	}
	var runErr error
	if ev.Failed {
		runErr = errors.New(ev.Error)
	}
	if err := h.Enforcer.Ran(context.WithoutCancel(ctx), enf, ev.Duration, runErr); err != nil {
		return Verdict{Code: airlock.CodeUnavailable, Reason: reasonOf(err)}
	}
	return Verdict{Allow: true, Reason: "recorded"}
}
