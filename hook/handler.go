package hook

import (
	"bytes"
	"context"
	"encoding/json"
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
		return Verdict{Allow: true, Reason: "Airlock allowed it: " + enf.Message}
	}
	code := enf.Code
	if code == "" {
		code = airlock.CodeDenied
	}
	return Verdict{Code: code, Reason: code + ": " + enf.Message + nextStep(enf)}
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

// decisionRef is a decision event of one call, as the audit log has it.
type decisionRef struct {
	seq        int64
	approvalID string
	action     airlock.Action
	hash       airlock.Hash
	label      string
}

// maxScan bounds how far back a hook looks for its call's decision: the
// decisions of one session, newest first.
const maxScan = 200

// firstScan is the first page of that look-back. A call's other hook
// (PermissionRequest after PreToolUse, a retried request) finds its
// decision among the newest few; only a call that has none reads the rest.
const firstScan = 16

// findDecision finds the newest decision on the call a's, in its session:
// by call ID when the host sends one, otherwise by the action's hash.
func (h *Handler) findDecision(ctx context.Context, a airlock.Action) (decisionRef, bool, error) {
	hash, err := a.Hash()
	if err != nil {
		return decisionRef{}, false, err
	}
	// A payload that does not hold the call ID as a JSON string cannot be
	// the call's decision: skip decoding it. Only for IDs that every JSON
	// encoder writes as they are, so that the test has no false negatives.
	var needle []byte
	if a.CallID != "" && literalJSON(a.CallID) {
		needle = []byte(`"` + a.CallID + `"`)
	}
	f := airlock.EventFilter{Kind: airlock.EventDecision, Agent: a.Agent, TraceID: a.TraceID, Newest: true, Limit: firstScan}
	for scanned := 0; scanned < maxScan; {
		evs, err := h.Enforcer.Store.Events(ctx, f)
		if err != nil {
			return decisionRef{}, false, err
		}
		for _, e := range evs {
			if d, ok := decisionOf(e, a, hash, needle); ok {
				return d, true, nil
			}
		}
		scanned += len(evs)
		if len(evs) < f.Limit {
			break // the session has no more
		}
		f.BeforeSeq = evs[len(evs)-1].Seq
		f.Limit = maxScan - scanned
	}
	return decisionRef{}, false, nil
}

// decisionOf reads e as the decision of the call a's, if it is.
func decisionOf(e airlock.Event, a airlock.Action, hash airlock.Hash, needle []byte) (decisionRef, bool) {
	if e.Agent != a.Agent || (needle != nil && !bytes.Contains(e.Payload, needle)) {
		return decisionRef{}, false
	}
	var p struct {
		Action     airlock.Action `json:"action"`
		ActionHash airlock.Hash   `json:"action_hash"`
		Label      string         `json:"label"`
	}
	if json.Unmarshal(e.Payload, &p) != nil || p.Action.Tool != a.Tool {
		return decisionRef{}, false
	}
	if (a.CallID != "" && p.Action.CallID == a.CallID) || (a.CallID == "" && p.ActionHash == hash) {
		return decisionRef{seq: e.Seq, approvalID: e.ApprovalID, action: p.Action, hash: p.ActionHash, label: p.Label}, true
	}
	return decisionRef{}, false
}

// literalJSON reports whether s is written the same by every JSON encoder:
// printable ASCII that none escapes (no quote, backslash, <, > or &).
func literalJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c >= 0x7f, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// allowed reports whether the decision let its action run, and on which
// approval.
func (h *Handler) allowed(ctx context.Context, d decisionRef) (approvalID string, ok bool) {
	switch d.label {
	case airlock.LabelAuto, airlock.LabelNotify, airlock.LabelGrantUsed:
		return "", true
	case airlock.LabelApprovalRequested, airlock.LabelApprovalGranted:
		if d.approvalID == "" {
			return "", false
		}
		ap, err := h.Enforcer.Store.Approval(ctx, d.approvalID)
		if err != nil || ap.Status != airlock.StatusApproved || ap.ActionHash != d.hash {
			return "", false
		}
		return ap.ID, true
	}
	return "", false
}

// alreadyAllowed answers a call that a decision of Airlock already let run:
// the same call (same call ID) with exactly the same action.
func (h *Handler) alreadyAllowed(ctx context.Context, a airlock.Action) (Verdict, bool) {
	if a.CallID == "" || a.TraceID == "" {
		return Verdict{}, false
	}
	d, found, err := h.findDecision(ctx, a)
	if err != nil || !found {
		return Verdict{}, false
	}
	if hash, err := a.Hash(); err != nil || hash != d.hash {
		return Verdict{}, false
	}
	if _, ok := h.allowed(ctx, d); !ok {
		return Verdict{}, false
	}
	return Verdict{Allow: true, Reason: fmt.Sprintf("Airlock allowed this call already (decision %d)", d.seq)}, true
}

// record writes a Post event's execution: an action.executed event linked
// to the decision that let the call run, and a trust record when it failed.
func (h *Handler) record(ctx context.Context, a airlock.Action, ev Event) Verdict {
	d, found, err := h.findDecision(ctx, a)
	if err != nil {
		return Verdict{Code: airlock.CodeUnavailable, Reason: reasonOf(fmt.Errorf("find the decision of %s: %w", a.Tool, err))}
	}
	enf := airlock.Enforcement{}
	if found {
		a = d.action // the action as decided: its hash is the one the record names
		enf.Seq = d.seq
		approvalID, ok := h.allowed(ctx, d)
		switch {
		case ok && approvalID != "":
			enf.Approval = &airlock.Approval{ID: approvalID}
		case d.label == airlock.LabelAskedAtHost:
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
