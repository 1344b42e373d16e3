package airlock

import (
	"bytes"
	"context"
	"encoding/json"
)

// What allowed an execution: the decision that let an action run, or the
// approval a person gave it. Every surface that records an execution (the
// API's POST /v1/executions, the hooks' Post events) asks it here.

// A DecisionRef is a decision event as the audit log has it.
type DecisionRef struct {
	Seq        int64
	ApprovalID string
	// Action is the action as decided: its hash is the one a record names.
	Action Action
	Hash   Hash
	// Label is the enforcement label the decision was recorded with
	// (LabelAuto, LabelApprovalRequested, ...).
	Label string
}

// decisionRef reads e as a decision event.
func decisionRef(e Event) (DecisionRef, bool) {
	var p DecisionPayload
	if e.Kind != EventDecision || json.Unmarshal(e.Payload, &p) != nil {
		return DecisionRef{}, false
	}
	return DecisionRef{Seq: e.Seq, ApprovalID: e.ApprovalID, Action: p.Action, Hash: p.ActionHash, Label: p.Label}, true
}

// maxDecisionScan bounds how far back FindDecision looks: the decisions
// of one session, newest first. firstDecisionScan is its first page: a
// call's other hook (PermissionRequest after PreToolUse, a retried
// request) finds its decision among the newest few; only a call that has
// none reads the rest.
const (
	maxDecisionScan   = 200
	firstDecisionScan = 16
)

// FindDecision finds the newest decision on the call a's among the last
// 200 of its session (a.TraceID): by call ID when the host sends one,
// otherwise by the action's hash.
func FindDecision(ctx context.Context, log AuditLog, a Action) (DecisionRef, bool, error) {
	hash, err := a.Hash()
	if err != nil {
		return DecisionRef{}, false, err
	}
	// A payload that does not hold the call ID as a JSON string cannot be
	// the call's decision: skip decoding it. Only for IDs that every JSON
	// encoder writes as they are, so that the test has no false negatives.
	var needle []byte
	if a.CallID != "" && literalJSON(a.CallID) {
		needle = []byte(`"` + a.CallID + `"`)
	}
	f := EventFilter{Kind: EventDecision, Agent: a.Agent, TraceID: a.TraceID, Newest: true, Limit: firstDecisionScan}
	for scanned := 0; scanned < maxDecisionScan; {
		evs, err := log.Events(ctx, f)
		if err != nil {
			return DecisionRef{}, false, err
		}
		for _, e := range evs {
			if e.Agent != a.Agent || (needle != nil && !bytes.Contains(e.Payload, needle)) {
				continue
			}
			d, ok := decisionRef(e)
			if !ok || d.Action.Tool != a.Tool {
				continue
			}
			if (a.CallID != "" && d.Action.CallID == a.CallID) || (a.CallID == "" && d.Hash == hash) {
				return d, true, nil
			}
		}
		scanned += len(evs)
		if len(evs) < f.Limit {
			break // the session has no more
		}
		f.BeforeSeq = evs[len(evs)-1].Seq
		f.Limit = maxDecisionScan - scanned
	}
	return DecisionRef{}, false, nil
}

// FindEditedDecision finds the decision whose approval a reviewer edited
// into exactly a, among the last 200 of its session: a host that ran the
// edit reports the edited call, with no call ID to find it by
// (FindDecision then finds nothing). It returns the decision and the edit.
func FindEditedDecision(ctx context.Context, st interface {
	AuditLog
	Approval(ctx context.Context, id string) (Approval, error)
}, a Action) (DecisionRef, *Edit, bool, error) {
	hash, err := a.Hash()
	if err != nil {
		return DecisionRef{}, nil, false, err
	}
	evs, err := st.Events(ctx, EventFilter{Kind: EventDecision, Agent: a.Agent, TraceID: a.TraceID, Newest: true, Limit: maxDecisionScan})
	if err != nil {
		return DecisionRef{}, nil, false, err
	}
	for _, e := range evs {
		if e.Agent != a.Agent || e.ApprovalID == "" {
			continue
		}
		d, ok := decisionRef(e)
		if !ok || d.Action.Tool != a.Tool || (d.Label != LabelApprovalRequested && d.Label != LabelApprovalGranted) {
			continue
		}
		ap, err := st.Approval(ctx, d.ApprovalID)
		if err != nil && ErrorCode(err) != ENOTFOUND {
			return DecisionRef{}, nil, false, err
		}
		if err == nil && ap.Edit != nil && ap.Edit.ActionHash == hash {
			return d, ap.Edit, true, nil
		}
	}
	return DecisionRef{}, nil, false, nil
}

// literalJSON reports whether s is written the same by every JSON encoder:
// no control, non-ASCII, quote, backslash or HTML-escaped character.
func literalJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c >= 0x7f, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// LetRun reports whether the decision let its action run itself: auto,
// notify, or an approved proposal used once.
func (d DecisionRef) LetRun() bool {
	switch d.Label {
	case LabelAuto, LabelNotify, LabelGrantUsed:
		return true
	}
	return false
}

// AllowedBy reports what let the decision's action run: the decision
// itself ("", true), the approval it asked for once a person approved that
// exact action (its ID, true), or nothing ("", false).
func (d DecisionRef) AllowedBy(ctx context.Context, approvals interface {
	Approval(ctx context.Context, id string) (Approval, error)
}) (approvalID string, ok bool) {
	switch {
	case d.LetRun():
		return "", true
	case d.Label != LabelApprovalRequested && d.Label != LabelApprovalGranted, d.ApprovalID == "":
		return "", false
	}
	ap, err := approvals.Approval(ctx, d.ApprovalID)
	if err != nil || ap.Status != StatusApproved || ap.ActionHash != d.Hash {
		return "", false
	}
	return ap.ID, true
}

// CheckExecution verifies what an execution record of agent's action
// (hash h) says let it run: the decision event at seq must be agent's, on
// this exact action, and one that let it run (or, with approvalID, one
// that asked); the approval must be agent's, for this action, and
// approved. Either may be absent (0, ""). Errors: EINVALID (it links to
// something else), ECONFLICT (what it links to allowed nothing),
// CodeHashMismatch, EUNAVAILABLE.
func CheckExecution(ctx context.Context, st interface {
	Approval(ctx context.Context, id string) (Approval, error)
	Events(ctx context.Context, f EventFilter) ([]Event, error)
}, agent string, h Hash, seq int64, approvalID string) error {
	decided := h // the action the decision at seq was on
	if approvalID != "" {
		ap, err := st.Approval(ctx, approvalID)
		edited := err == nil && ap.Edit != nil && ap.Edit.ActionHash == h
		switch {
		case ErrorCode(err) == ENOTFOUND || (err == nil && ap.Agent != agent):
			return Errorf(EINVALID, "approval_id %s is not a request of agent %s", approvalID, agent)
		case err != nil:
			return err
		case edited:
			// A reviewer's edit ran: the check that collected it was on
			// the original, or on the edited action itself.
			decided = ap.ActionHash
		case ap.ActionHash != h:
			return Errorf(CodeHashMismatch, "approval %s is for another action (sha256:%s)", approvalID, ap.ActionHash)
		case ap.Status != StatusApproved:
			return Errorf(ECONFLICT, "approval %s is %s: it allowed nothing to run", approvalID, ap.Status)
		}
	}
	if seq > 0 {
		evs, err := st.Events(ctx, EventFilter{AfterSeq: seq - 1, Limit: 1})
		if err != nil {
			return err
		}
		var d DecisionRef
		ok := len(evs) > 0 && evs[0].Seq == seq && evs[0].Agent == agent
		if ok {
			d, ok = decisionRef(evs[0])
		}
		if !ok || d.Hash != h && d.Hash != decided {
			return Errorf(EINVALID, "decision_seq %d is not a decision on this action of agent %s", seq, agent)
		}
		if !d.LetRun() && approvalID == "" {
			return Errorf(ECONFLICT, "decision %d did not let the action run (%s)", seq, d.Label)
		}
	}
	return nil
}
