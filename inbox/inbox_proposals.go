package inbox

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/gate"
)

// Proposals: the standing grants the record has earned (docs/POLICY.md,
// "Proposals from the record"), each with its evidence and what it would
// have covered, for a person who may approve such requests to ratify or
// dismiss. Nothing is granted without one.

// ProposalsPage lists the current proposals.
type ProposalsPage struct {
	Base
	Proposals []ProposalRow
	// Done says what the last ratification or dismissal did.
	Done  string
	Error string
}

// ProposalRow is one proposal and the form fields that name it.
type ProposalRow struct {
	airlock.Proposal
	Kind, Command, Path, Hash string
}

// Scope says what the proposal would let run.
func (r *ProposalRow) Scope() string {
	return r.Grant.Agent + " may run " + r.Grant.Pattern.String() + " (" + r.Grant.Tool + ")"
}

// enforcer is the server's engine as the proposals use it: its gate and
// its store.
func (in *inbox) enforcer() *gate.Enforcer {
	return &gate.Enforcer{Gate: in.host.Gate(), Store: in.host.Store()}
}

func (in *inbox) proposals(w http.ResponseWriter, r *http.Request) {
	p := &ProposalsPage{Base: baseFor(r, "Proposals"), Done: r.URL.Query().Get("done")}
	ps, err := in.enforcer().Propose(r.Context(), in.host.ProposalRules(), "")
	if err != nil {
		in.storeFail(w, r, err)
		return
	}
	for _, pr := range ps {
		row := ProposalRow{Proposal: pr, Kind: pr.Grant.Pattern.Kind, Path: pr.Grant.Pattern.Path}
		row.Command = strings.Join(pr.Grant.Pattern.Command, " ")
		if !pr.Grant.Pattern.Hash.IsZero() {
			row.Hash = pr.Grant.Pattern.Hash.String()
		}
		p.Proposals = append(p.Proposals, row)
	}
	in.render(w, http.StatusOK, "proposals", p)
}

// settleProposal ratifies (a grant for 7 days) or dismisses the proposal
// the form names, as the signed-in person, who must be one who may resolve
// the latest request it rests on.
func (in *inbox) settleProposal(ratify bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
		if err := r.ParseForm(); err != nil {
			in.fail(w, r, http.StatusBadRequest, "The form could not be read", err.Error())
			return
		}
		f := r.PostForm
		shape := airlock.GrantPattern{Kind: f.Get("kind"), Command: strings.Fields(f.Get("command")), Path: f.Get("path")}
		if h := f.Get("hash"); h != "" {
			var err error
			if shape.Hash, err = airlock.ParseHash(h); err != nil {
				in.fail(w, r, http.StatusBadRequest, "Not sent", airlock.ErrorMessage(err))
				return
			}
		}
		reason, msg := formReason(r, airlock.StatusApproved)
		if msg != "" {
			in.fail(w, r, http.StatusBadRequest, "Not sent", msg)
			return
		}
		e := in.enforcer()
		prop, last, err := e.FindProposal(ctx, in.host.ProposalRules(), f.Get("agent"), f.Get("tool"), shape)
		switch airlock.ErrorCode(err) {
		case "":
		case airlock.ENOTFOUND:
			in.fail(w, r, http.StatusNotFound, "No such proposal now", airlock.ErrorMessage(err)+" (someone may have ratified or dismissed it, or the record changed)")
			return
		default:
			in.storeFail(w, r, err)
			return
		}
		t := principalFrom(ctx)
		if err := last.Authorize(t.Reviewer()); err != nil {
			in.host.RefuseApproval(ctx, t, &last, airlock.EUNAUTHORIZED, airlock.ErrorMessage(err))
			in.fail(w, r, http.StatusForbidden, "Not allowed", airlock.ErrorMessage(err))
			return
		}
		var done string
		if ratify {
			g, err := e.RatifyProposal(ctx, prop, t.Reviewer().Name, reason, 0)
			if err != nil {
				in.storeFail(w, r, err)
				return
			}
			done = "Granted " + g.ID + ": " + g.Agent + " may run " + g.Pattern.String() + " without asking, up to " + g.MaxTier.String() +
				", until " + g.Expires.UTC().Format("2006-01-02 15:04 UTC") + "."
		} else {
			if _, err := e.DismissProposal(ctx, prop, t.Reviewer().Name, reason); err != nil {
				in.storeFail(w, r, err)
				return
			}
			done = "Dismissed: " + prop.Grant.Agent + " " + prop.Grant.Pattern.String() + " is not proposed again until another approval counts for it."
		}
		http.Redirect(w, r, "/inbox/proposals?"+url.Values{"done": {done}}.Encode(), http.StatusSeeOther)
	}
}

// GrantsPage lists the standing grants in force, newest first, each with
// what its budget has left, and a Revoke button.
type GrantsPage struct {
	Base
	Grants []GrantRow
	Done   string
}

// GrantRow is one live grant and its budget as read now.
type GrantRow struct {
	airlock.Grant
	// Budget is its budget's charge with what the window has used; nil
	// without a budget.
	Budget *airlock.BudgetCharge
}

func (in *inbox) grants(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	p := &GrantsPage{Base: baseFor(r, "Standing grants"), Done: r.URL.Query().Get("done")}
	now, err := in.host.Store().Now(ctx)
	if err != nil {
		in.storeFail(w, r, err)
		return
	}
	gs, err := in.host.Store().Grants(ctx, airlock.GrantFilter{LiveAt: now, Limit: airlock.MaxPageSize})
	if err != nil {
		in.storeFail(w, r, err)
		return
	}
	var charges []airlock.BudgetCharge
	for _, g := range gs {
		row := GrantRow{Grant: g}
		if g.Budget != nil {
			row.Budget = &airlock.BudgetCharge{Key: g.BudgetKey(), Budget: *g.Budget, Read: now}
			charges = append(charges, *row.Budget)
		}
		p.Grants = append(p.Grants, row)
	}
	if len(charges) > 0 {
		used, err := in.host.Store().BudgetUsed(ctx, charges)
		if err != nil {
			in.storeFail(w, r, err)
			return
		}
		j := 0
		for i := range p.Grants {
			if b := p.Grants[i].Budget; b != nil {
				b.Used = used[j]
				j++
			}
		}
	}
	in.render(w, http.StatusOK, "grants", p)
}

// revokeGrant ends a standing grant at once, on every replica: any
// reviewer may, as a revocation only tightens.
func (in *inbox) revokeGrant(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
	if err := r.ParseForm(); err != nil {
		in.fail(w, r, http.StatusBadRequest, "The form could not be read", err.Error())
		return
	}
	reason, msg := formReason(r, airlock.StatusApproved)
	if msg != "" {
		in.fail(w, r, http.StatusBadRequest, "Not sent", msg)
		return
	}
	t := principalFrom(ctx)
	g, err := in.host.Store().RevokeGrant(ctx, r.PathValue("id"), t.Reviewer().Name, reason)
	switch airlock.ErrorCode(err) {
	case "":
	case airlock.ENOTFOUND:
		in.fail(w, r, http.StatusNotFound, "No such grant", airlock.ErrorMessage(err))
		return
	case airlock.ECONFLICT:
		in.fail(w, r, http.StatusConflict, "Not revoked", airlock.ErrorMessage(err))
		return
	default:
		in.storeFail(w, r, err)
		return
	}
	done := "Revoked grant " + g.ID + ": " + g.Agent + " asks again for " + g.Pattern.String() + "."
	http.Redirect(w, r, "/inbox/grants?"+url.Values{"done": {done}}.Encode(), http.StatusSeeOther)
}
