package inbox

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/airlock-dev/airlock"
)

// Batch approval: a reviewer clearing a queue may approve, in one go,
// pending requests that would all have the same effect (one agent's same
// action asked in several sessions), as long as that effect is low-risk
// and every request is theirs to resolve. Each request is still resolved
// on its own, bound to the action hash the page showed for it.

// maxBatch bounds one batch: the page that offers it lists at most this
// many requests.
const maxBatch = 100

// effect identifies what a request would do, whichever session of its
// agent asked (Approval.EffectHash), with its class and kind (ask or
// suggest).
type effect struct {
	hash    airlock.Hash
	class   string
	outcome airlock.Outcome
}

func effectOf(ap *airlock.Approval) effect {
	return effect{hash: ap.EffectHash, class: ap.Class, outcome: ap.Outcome}
}

// mayBatch reports why the reviewer may not approve ap in a batch now,
// "" when they may; code is the refusal's error code when the reviewer may
// not resolve ap at all (a refusal that is audited).
func mayBatch(ap *airlock.Approval, rev airlock.Reviewer, now time.Time) (problem, code string) {
	if err := ap.Authorize(rev); err != nil {
		return fmt.Sprintf("Request %s: %s", ap.ID, airlock.ErrorMessage(err)), airlock.ErrorCode(err)
	}
	return batchableNow(ap, now), ""
}

// batchableNow reports why ap cannot go in a batch now, whoever asks, ""
// when it can.
func batchableNow(ap *airlock.Approval, now time.Time) string {
	switch {
	case ap.Status != airlock.StatusPending:
		return fmt.Sprintf("Request %s was %s meanwhile, by %s. Review the others again.", ap.ID, ap.Status, settler(ap))
	case !now.Before(ap.Expires):
		return fmt.Sprintf("Request %s reached its deadline. Review the others again.", ap.ID)
	case !ap.Batchable():
		return fmt.Sprintf("Request %s (%s, %s) must be approved on its own: only read and write actions without needs-human go in a batch.",
			ap.ID, ap.Class, ap.Tier)
	}
	return ""
}

// identical returns the other pending requests with ap's effect that the
// reviewer may approve with it, oldest first, at most maxBatch-1; none
// unless ap is batchable.
func (in *inbox) identical(ctx context.Context, ap *airlock.Approval, rev airlock.Reviewer) ([]airlock.Approval, error) {
	if !ap.Batchable() {
		return nil, nil
	}
	page, err := in.host.Store().FindApprovals(ctx, airlock.ApprovalFilter{
		Status: []airlock.ApprovalStatus{airlock.StatusPending}, EffectHash: ap.EffectHash, Class: ap.Class,
		Oldest: true, Limit: maxBatch,
	})
	if err != nil {
		return nil, err
	}
	now, key := time.Now(), effectOf(ap)
	var out []airlock.Approval
	for i := range page.Approvals {
		o := &page.Approvals[i]
		if problem, _ := mayBatch(o, rev, now); o.ID != ap.ID && effectOf(o) == key && problem == "" && len(out) < maxBatch-1 {
			out = append(out, *o)
		}
	}
	return out, nil
}

// sameShape returns the other pending requests of ap's shape (Gate.Shape:
// its agent, tool, a command's program and subcommand, a directory) that
// the reviewer may approve with it and that are not among identical,
// oldest first, at most maxBatch-1, and the shape in words; none unless
// ap is batchable.
func (in *inbox) sameShape(ctx context.Context, ap *airlock.Approval, rev airlock.Reviewer, identical []airlock.Approval) ([]airlock.Approval, string, error) {
	if !ap.Batchable() {
		return nil, "", nil
	}
	shape, err := in.host.Gate().Shape(ctx, ap)
	if err != nil {
		return nil, "", nil
	}
	page, err := in.host.Store().FindApprovals(ctx, airlock.ApprovalFilter{
		Status: []airlock.ApprovalStatus{airlock.StatusPending}, Agent: ap.Agent, Tool: ap.Tool, Oldest: true, Limit: airlock.MaxPageSize,
	})
	if err != nil {
		return nil, "", err
	}
	key := shapeKey(ap.Agent, ap.Tool, shape)
	now := time.Now()
	var out []airlock.Approval
	for i := range page.Approvals {
		o := &page.Approvals[i]
		if o.ID == ap.ID || len(out) == maxBatch-1 || slices.ContainsFunc(identical, func(x airlock.Approval) bool { return x.ID == o.ID }) {
			continue
		}
		if problem, _ := mayBatch(o, rev, now); problem != "" {
			continue
		}
		if s, err := in.host.Gate().Shape(ctx, o); err == nil && shapeKey(o.Agent, o.Tool, s) == key {
			out = append(out, *o)
		}
	}
	return out, shape.String(), nil
}

// shapeKey is a batch key: an agent, a tool and a shape.
func shapeKey(agent, tool string, shape airlock.GrantPattern) string {
	b, _ := json.Marshal(shape)
	return agent + "\x00" + tool + "\x00" + string(b)
}

// shapeKeys returns the batch key of each request: its agent, tool and
// shape (Gate.Shape), "" for one whose shape cannot be read.
func (in *inbox) shapeKeys(ctx context.Context, aps []airlock.Approval) []string {
	keys := make([]string, len(aps))
	for i := range aps {
		if shape, err := in.host.Gate().Shape(ctx, &aps[i]); err == nil {
			keys[i] = shapeKey(aps[i].Agent, aps[i].Tool, shape)
		}
	}
	return keys
}

// BatchPage reports a batch approval, request by request.
type BatchPage struct {
	Base
	Results []BatchResult
	// Applied counts the requests this batch approved.
	Applied int
}

// BatchResult is what became of one request of a batch.
type BatchResult struct {
	ID string
	// Approval is the request as it stands after the batch.
	Approval airlock.Approval
	Applied  bool
	// Problem says why it was not applied.
	Problem string
}

// batchApprove approves several identical low-risk requests. The form
// pairs each request's ID with the action hash shown for it. Nothing is
// applied unless every request is pending, batchable and has the same
// effect as the first; then each is resolved on its own, and the page
// says what became of each (someone may have settled one meanwhile).
func (in *inbox) batchApprove(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
	if err := r.ParseForm(); err != nil {
		in.fail(w, r, http.StatusBadRequest, "The form could not be read", err.Error())
		return
	}
	ids, hashes := r.PostForm["id"], r.PostForm["action_hash"]
	reason, msg := formReason(r, airlock.StatusApproved)
	switch {
	case msg != "":
	case len(ids) == 0 || len(ids) != len(hashes):
		msg = "The form must pair every request's ID with the action hash it showed."
	case len(ids) > maxBatch:
		msg = fmt.Sprintf("A batch holds at most %d requests.", maxBatch)
	}
	if msg != "" {
		in.fail(w, r, http.StatusBadRequest, "Not sent", msg)
		return
	}
	aps := make([]airlock.Approval, len(ids))
	shown := make([]airlock.Hash, len(ids))
	for i, id := range ids {
		h, err := airlock.ParseHash(hashes[i])
		if err != nil {
			in.fail(w, r, http.StatusBadRequest, "Not sent", fmt.Sprintf("Request %s: %s", id, airlock.ErrorMessage(err)))
			return
		}
		ap, err := in.host.Store().Approval(ctx, id)
		if err != nil {
			in.storeFail(w, r, err)
			return
		}
		aps[i], shown[i] = ap, h
	}
	t := principalFrom(ctx)
	same := func(i int) bool { return effectOf(&aps[i]) == effectOf(&aps[0]) }
	what := "only identical requests go in a batch"
	if r.PostForm.Get("group") == "shape" {
		keys := in.shapeKeys(ctx, aps)
		same = func(i int) bool { return keys[i] != "" && keys[i] == keys[0] }
		what = "only requests of the same shape go in this batch"
	}
	if problem, code, refused := batchProblem(aps, shown, same, what, t.Reviewer(), time.Now()); problem != "" {
		if refused != nil {
			in.host.RefuseApproval(ctx, t, refused, code, problem)
		}
		in.render(w, http.StatusConflict, "error", &ErrorPage{Base: baseFor(r, "Nothing was approved"), Status: http.StatusConflict,
			Heading: "Nothing was approved", Message: problem, ApprovalID: aps[0].ID})
		return
	}
	// Every request was checked: the batch is applied whole even if the
	// reviewer closes the tab meanwhile.
	ctx = context.WithoutCancel(ctx)
	p := &BatchPage{Base: baseFor(r, "Batch approval")}
	for i := range aps {
		res := BatchResult{ID: aps[i].ID}
		ap, err := in.host.Store().ResolveApproval(ctx, airlock.Resolution{
			ApprovalID: aps[i].ID, Status: airlock.StatusApproved, ActionHash: shown[i], Reviewer: t.Reviewer(),
			Reason: reason, Surface: airlock.SurfaceWeb,
		})
		switch code := airlock.ErrorCode(err); code {
		case "":
			in.host.Metrics().Resolved(&ap)
			res.Applied, res.Approval = true, ap
			p.Applied++
		case airlock.EUNAUTHORIZED, airlock.CodeHashMismatch:
			in.host.RefuseApproval(ctx, t, &aps[i], code, airlock.ErrorMessage(err))
			res.Problem, res.Approval = airlock.ErrorMessage(err), aps[i]
		case airlock.ECONFLICT:
			res.Problem = airlock.ErrorMessage(err)
			if res.Approval, err = in.host.Store().Approval(ctx, aps[i].ID); err != nil {
				res.Approval = aps[i]
			}
		default:
			in.host.Logger().Error("inbox: batch approval", "approval", aps[i].ID, "err", err)
			res.Problem, res.Approval = "The store did not answer; this request was not approved.", aps[i]
		}
		p.Results = append(p.Results, res)
	}
	status := http.StatusOK
	if p.Applied < len(aps) {
		status = http.StatusConflict
	}
	in.render(w, status, "batch", p)
}

// batchProblem says why the reviewer may not approve the requests
// together, "" when they may: each must still hold the action shown, be
// the reviewer's to resolve, pending before its deadline, batchable, and
// the same as the first (same(i): identical, or of the same shape). The refusals that are audited, as the single
// form's are (another action than shown, not the reviewer's), come with
// their code and the request.
func batchProblem(aps []airlock.Approval, shown []airlock.Hash, same func(i int) bool, what string, rev airlock.Reviewer, now time.Time) (problem, code string, refused *airlock.Approval) {
	seen := map[string]bool{}
	for i := range aps {
		ap := &aps[i]
		if seen[ap.ID] {
			return fmt.Sprintf("Request %s appears twice.", ap.ID), "", nil
		}
		if ap.ActionHash != shown[i] {
			return fmt.Sprintf("Request %s holds another action than the page showed (sha256:%s). Review it again.", ap.ID, ap.ActionHash),
				airlock.CodeHashMismatch, ap
		}
		problem, code := mayBatch(ap, rev, now)
		if code != "" {
			return problem, code, ap
		}
		if problem != "" {
			return problem, "", nil
		}
		if !same(i) {
			return fmt.Sprintf("Request %s would do something else than request %s: %s.", ap.ID, aps[0].ID, what), "", nil
		}
		seen[ap.ID] = true
	}
	return "", "", nil
}

// formReason reads a resolution's reason from a posted form, with what is
// wrong with it ("" when nothing is).
func formReason(r *http.Request, status airlock.ApprovalStatus) (reason, problem string) {
	reason = strings.TrimSpace(r.PostForm.Get("reason"))
	switch {
	case status == airlock.StatusRejected && reason == "":
		return "", "A rejection needs a reason: the agent and its owner read it."
	case len(reason) > maxReasonLen || !utf8.ValidString(reason):
		return "", fmt.Sprintf("The reason must be valid text of at most %d bytes.", maxReasonLen)
	}
	return reason, ""
}
