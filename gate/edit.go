package gate

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/airlock-dev/airlock"
)

// Resolve applies a person's resolution of a request, exactly once
// (Store.ResolveApproval). With args, the reviewer approves their edit of
// the action's arguments instead of the action as it is: the gate decides
// the edited action first, and the store refuses the edit when the policy
// refuses that action (deny, shadow), when the request is a proposal, or
// when the edited action's decision needs reviewers this one is not
// (EUNAUTHORIZED, EINVALID). Errors: those of ResolveApproval; EINVALID
// for args that are not one strict JSON object, or the request's own.
func (e *Enforcer) Resolve(ctx context.Context, r airlock.Resolution, args json.RawMessage) (airlock.Approval, error) {
	if len(args) == 0 {
		return e.Store.ResolveApproval(ctx, r)
	}
	if r.Status != airlock.StatusApproved {
		return airlock.Approval{}, airlock.Errorf(airlock.EINVALID, "an edit goes with an approval: reject the request instead of editing it")
	}
	ap, err := e.Store.Approval(ctx, r.ApprovalID)
	if err != nil {
		return ap, err
	}
	edit, _, err := e.DecideEdit(ctx, &ap, args)
	if err != nil {
		return ap, err
	}
	r.Edit = edit
	return e.Store.ResolveApproval(ctx, r)
}

// DecideEdit prepares a reviewer's edit of ap's arguments to args and
// decides the edited action as the policy in force would: the edit with
// its decision (Edit.Decision), and the gate's whole decision, for a
// person to review before approving it. It records nothing. Errors:
// EINVALID (args are not one strict JSON object, are the request's own,
// or make a malformed action).
func (e *Enforcer) DecideEdit(ctx context.Context, ap *airlock.Approval, args json.RawMessage) (*airlock.Edit, airlock.Decision, error) {
	edit, err := airlock.NewEdit(ap, args)
	if err != nil {
		return nil, airlock.Decision{}, err
	}
	d := e.Gate.Decide(ctx, ap.Edited(edit))
	if d.Code == airlock.CodeInvalid {
		return nil, d, airlock.Errorf(airlock.EINVALID, "the edited action is malformed: %s", d.Explain())
	}
	if d.ActionHash != edit.ActionHash {
		return nil, d, airlock.Errorf(airlock.EINTERNAL, "the edited action hashes to sha256:%s for the gate and sha256:%s for the request", d.ActionHash, edit.ActionHash)
	}
	edit.Decision = airlock.EditDecision{
		Outcome: d.Outcome, NeedsHuman: d.NeedsHuman, Tier: d.Classification.Tier, Class: string(d.Classification.Class),
		Rule: d.DecidedBy(), Reviewers: d.Reviewers, Review: d.Review,
	}
	return edit, d, nil
}

// An EditTaker says whether a caller can run a reviewer's edit of the
// action it checked in place of that action: nil when it can, else why
// not, for the agent.
type EditTaker func(checked, edited *airlock.Action) error

type editTakerKey struct{}

// WithEditTaker returns ctx for a caller whose host takes a reviewer's
// edit only as take allows: Codex's hooks take none; Gemini CLI's merge
// the edit into the model's arguments, so they cannot remove one. An
// approval of an edit such a caller cannot take is refused to it
// (CodeEdited), uncollected, naming the edited action: the agent runs
// that instead, and it collects the approval. Without one, a caller takes
// every edit (the library's Guard, the API, the MCP gateway, Claude
// Code's updatedInput).
func WithEditTaker(ctx context.Context, take EditTaker) context.Context {
	return context.WithValue(ctx, editTakerKey{}, take)
}

// cannotTake says why the caller of ctx cannot run ap's edit in place of
// the action it checked; nil when it can, or there is no edit to take
// (the caller checked the edited action itself).
func cannotTake(ctx context.Context, d *airlock.Decision, ap *airlock.Approval) error {
	if ap.Edit == nil || d.ActionHash == ap.Edit.ActionHash {
		return nil
	}
	take, _ := ctx.Value(editTakerKey{}).(EditTaker)
	if take == nil {
		return nil
	}
	edited := ap.Edited(ap.Edit)
	return take(&d.Action, &edited)
}

// edited is the enforcement of an approved ask whose approval holds a
// reviewer's edit: allowed with the edit for a caller that takes it,
// else refused with CodeEdited and the approval left for the edited
// action to collect.
func (e *Enforcer) edited(ctx context.Context, enf airlock.Enforcement, ap *airlock.Approval) airlock.Enforcement {
	if ap.Edit == nil || enf.Decision.ActionHash == ap.Edit.ActionHash {
		return enf
	}
	why := cannotTake(ctx, &enf.Decision, ap)
	if why == nil {
		enf.Edit = ap.Edit
		enf.Message = fmt.Sprintf("%s approved by %s as %s edited it (approval %s): run the edited action, sha256:%s, with args %s",
			actionName(&enf.Decision), ap.ResolvedBy, ap.Edit.By, ap.ID, ap.Edit.ActionHash, ap.Edit.Args)
		return enf
	}
	enf.Allowed, enf.Code, enf.Label = false, airlock.CodeEdited, airlock.LabelApprovalEdited
	enf.Message = fmt.Sprintf("%s was not run: %s approved it as %s edited it (approval %s), and %s; run the edited action instead — %s with args %s — and it runs once on this approval",
		actionName(&enf.Decision), ap.ResolvedBy, ap.Edit.By, ap.ID, airlock.ErrorMessage(why), ap.Action.Tool, ap.Edit.Args)
	return enf
}
