package gate

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/airlock-dev/airlock"
)

// ProposalRules are what the record must show before Airlock proposes a
// grant. The zero value is the defaults.
type ProposalRules struct {
	// MinApprovals of the same shape (default 5).
	MinApprovals int
	// MinReviewers, distinct people who approved them (default 2).
	MinReviewers int
	// MinMedianWait is the least median time from request to approval
	// that shows the requests were read (default 10s).
	MinMedianWait time.Duration
	// Window is how far back the record is read (default 30 days).
	Window time.Duration
}

func (r ProposalRules) withDefaults() ProposalRules {
	r.MinApprovals = cmp.Or(r.MinApprovals, 5)
	r.MinReviewers = cmp.Or(r.MinReviewers, 2)
	r.MinMedianWait = cmp.Or(r.MinMedianWait, 10*time.Second)
	r.Window = cmp.Or(r.Window, 30*24*time.Hour)
	return r
}

// maxProposalRequests bounds the settled requests one proposal run reads.
const maxProposalRequests = 50_000

// Propose reads the asks settled in the rules' window (of agent, when
// set) and proposes a grant for every shape of action — the shape "approve
// and remember" would make — approved at least MinApprovals times by at
// least MinReviewers people, with a median wait of at least MinMedianWait,
// and never rejected in the window; none that a live grant covers
// already, nor one the policy keeps out, nor one a person dismissed
// unless an approval has come to count for it since. An approval given
// faster than its request could be read (Approval.RubberStamped) is no
// evidence. The strongest come first.
func (e *Enforcer) Propose(ctx context.Context, rules ProposalRules, agent string) ([]airlock.Proposal, error) {
	return e.proposals(ctx, rules, agent, true)
}

// proposals is Propose; cover says whether to replay what each proposal
// would have covered (a back-test per proposal: FindProposal needs none).
func (e *Enforcer) proposals(ctx context.Context, rules ProposalRules, agent string, cover bool) ([]airlock.Proposal, error) {
	rules = rules.withDefaults()
	now, err := e.Store.Now(ctx)
	if err != nil {
		return nil, err
	}
	type group struct {
		grant     airlock.Grant
		evidence  []airlock.Evidence
		rejected  bool
		reviewers map[string]bool
	}
	groups := map[string]*group{}
	var order []string
	f := airlock.ApprovalFilter{Agent: agent, Status: []airlock.ApprovalStatus{airlock.StatusApproved, airlock.StatusRejected},
		BySettled: true, Oldest: true, CreatedAfter: now.Add(-rules.Window), Limit: airlock.MaxPageSize}
	for read := 0; read < maxProposalRequests; {
		page, err := e.Store.FindApprovals(ctx, f)
		if err != nil {
			return nil, err
		}
		for _, ap := range page.Approvals {
			if ap.Outcome != airlock.Ask || ap.NeedsHuman {
				continue
			}
			asApproved := ap
			asApproved.Status = airlock.StatusApproved
			gr, err := e.Gate.Remember(ctx, asApproved, nil, "-", "", time.Hour, now)
			if err != nil {
				continue // the policy keeps grants out, or the action is no longer valid
			}
			// Commands group by their program and subcommand; the proposal
			// is then the words every approved one starts with.
			words := gr.Pattern.Command
			if gr.Pattern.Kind == airlock.PatternCommand {
				gr.Pattern.Command = words[:min(2, len(words))]
			}
			key := shapeKey(&gr)
			gp := groups[key]
			if gp == nil {
				gp = &group{grant: gr, reviewers: map[string]bool{}}
				if gr.Pattern.Kind == airlock.PatternCommand {
					gp.grant.Pattern.Command = words
				}
				groups[key] = gp
				order = append(order, key)
			}
			if gr.Pattern.Kind == airlock.PatternCommand && ap.Status == airlock.StatusApproved {
				gp.grant.Pattern.Command = commonPrefix(gp.grant.Pattern.Command, words)
			}
			if ap.Status == airlock.StatusRejected {
				gp.rejected = true
				continue
			}
			if ap.RubberStamped() {
				continue // approved faster than it could be read: no evidence
			}
			gp.grant.MaxTier = max(gp.grant.MaxTier, ap.Tier)
			gp.reviewers[ap.ResolvedBy] = true
			gp.evidence = append(gp.evidence, airlock.Evidence{ApprovalID: ap.ID, ActionHash: ap.ActionHash, Reviewer: ap.ResolvedBy,
				Waited: airlock.Duration(ap.ResolvedAt.Sub(ap.Created)), Resolved: ap.ResolvedAt})
		}
		read += len(page.Approvals)
		if page.NextCursor == "" {
			break
		}
		f.Cursor = page.NextCursor
	}
	live, err := e.Store.Grants(ctx, airlock.GrantFilter{Agent: agent, LiveAt: now, Limit: airlock.MaxPageSize})
	if err != nil {
		return nil, err
	}
	dismissed, err := e.dismissals(ctx, now.Add(-rules.Window), agent)
	if err != nil {
		return nil, err
	}
	covered := func(p *airlock.Grant) bool {
		for i := range live {
			l := &live[i]
			if l.Tool == p.Tool && l.CoversAgent(p.Agent) && l.MaxTier >= p.MaxTier &&
				(shapeKey(l) == shapeKey(p) || (p.Pattern.Kind == airlock.PatternCommand && l.Pattern.CoversCommand(p.Pattern.Command))) {
				return true
			}
		}
		return false
	}
	out := []airlock.Proposal{}
	for _, key := range order {
		gp := groups[key]
		if gp.rejected || covered(&gp.grant) || len(gp.evidence) < rules.MinApprovals || len(gp.reviewers) < rules.MinReviewers {
			continue
		}
		waits := make([]time.Duration, len(gp.evidence))
		for i, ev := range gp.evidence {
			waits[i] = time.Duration(ev.Waited)
		}
		slices.Sort(waits)
		median := airlock.Median(waits)
		if median < rules.MinMedianWait {
			continue
		}
		if seen, ok := dismissed[shapeKey(&gp.grant)]; ok && !slices.ContainsFunc(gp.evidence, func(ev airlock.Evidence) bool {
			return !seen[ev.ApprovalID]
		}) {
			continue // dismissed, and no approval has come to count for it since
		}
		g := gp.grant
		g.ID, g.GrantedBy, g.Approval, g.Reason, g.Expires = "", "", "", "", time.Time{}
		p := airlock.Proposal{Grant: g, Evidence: gp.evidence, MedianWait: airlock.Duration(median)}
		for r := range gp.reviewers {
			p.Reviewers = append(p.Reviewers, r)
		}
		slices.Sort(p.Reviewers)
		out = append(out, p)
	}
	slices.SortStableFunc(out, func(a, b airlock.Proposal) int {
		return cmp.Or(cmp.Compare(len(b.Evidence), len(a.Evidence)), cmp.Compare(len(b.Reviewers), len(a.Reviewers)))
	})
	for i := range out {
		if !cover {
			break // the proposal is looked up, not shown
		}
		if out[i].Covered, out[i].CoveredSeqs, err = e.wouldCover(ctx, out[i].Grant, now); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// coverWindow is how far back a proposal's coverage is replayed.
const coverWindow = 30 * 24 * time.Hour

// wouldCover replays the agent's decisions of the last 30 days through the
// policy in force with the grant g alone in force, and counts the asks it
// would have let run, with the audit sequence numbers of a few.
func (e *Enforcer) wouldCover(ctx context.Context, g airlock.Grant, now time.Time) (int, []int64, error) {
	with, err := New(e.Gate.Shell(), e.Gate.Layers()...)
	if err != nil {
		return 0, nil, err
	}
	g.ID, g.GrantedBy, g.Expires = "proposed", "-", now.Add(time.Hour)
	with.SetGrants([]airlock.Grant{g}, func() time.Time { return now })
	rep, err := with.BacktestLog(ctx, e.Store.Events, airlock.EventFilter{Agent: g.Agent, Since: now.Add(-coverWindow)})
	var seqs []int64
	for _, c := range rep.Changes {
		if c.From == airlock.Ask && c.To.Runs() {
			for _, ex := range c.Examples {
				seqs = append(seqs, ex.Seq)
			}
		}
	}
	return rep.AsksAvoided, seqs, err
}

// FindProposal returns the current proposal of agent, tool and shape (as
// Propose lists it under rules), and the latest request it rests on: a
// person who may resolve that request may ratify or dismiss it. Errors:
// ENOTFOUND (no such proposal now), EUNAVAILABLE.
func (e *Enforcer) FindProposal(ctx context.Context, rules ProposalRules, agent, tool string, shape airlock.GrantPattern) (airlock.Proposal, airlock.Approval, error) {
	ps, err := e.proposals(ctx, rules, agent, false)
	if err != nil {
		return airlock.Proposal{}, airlock.Approval{}, err
	}
	i := slices.IndexFunc(ps, func(p airlock.Proposal) bool {
		q := &p.Grant.Pattern
		return p.Grant.Agent == agent && p.Grant.Tool == tool && q.Kind == shape.Kind &&
			slices.Equal(q.Command, shape.Command) && q.Path == shape.Path && q.Hash == shape.Hash
	})
	if i < 0 {
		return airlock.Proposal{}, airlock.Approval{}, airlock.Errorf(airlock.ENOTFOUND,
			"no current proposal for agent %s, tool %s, %s: list them with airlock grants proposals", agent, tool, shape)
	}
	last, err := e.Store.Approval(ctx, ps[i].Evidence[len(ps[i].Evidence)-1].ApprovalID)
	return ps[i], last, err
}

// RatifyProposal makes p's grant, granted by by, lasting ttl from the
// store's now (0: airlock.DefaultRememberTTL).
func (e *Enforcer) RatifyProposal(ctx context.Context, p airlock.Proposal, by, reason string, ttl time.Duration) (airlock.Grant, error) {
	now, err := e.Store.Now(ctx)
	if err != nil {
		return airlock.Grant{}, err
	}
	g := p.Grant
	g.ID, g.GrantedBy, g.Expires = uuid.Must(uuid.NewV7()).String(), by, now.Add(cmp.Or(ttl, airlock.DefaultRememberTTL))
	g.Reason = fmt.Sprintf("ratified from %d approvals by %s", len(p.Evidence), strings.Join(p.Reviewers, ", "))
	if reason != "" {
		g.Reason += ": " + reason
	}
	return e.Store.CreateGrant(ctx, g)
}

// DismissProposal records by's dismissal of p: it is not proposed again
// until an approval it does not rest on now comes to count for it.
func (e *Enforcer) DismissProposal(ctx context.Context, p airlock.Proposal, by, reason string) (airlock.ProposalDismissal, error) {
	d := airlock.ProposalDismissal{Grant: p.Grant, By: by, Reason: reason}
	for _, ev := range p.Evidence {
		d.Evidence = append(d.Evidence, ev.ApprovalID)
	}
	_, err := e.Store.Append(ctx, d.Record())
	return d, err
}

// dismissals reads the proposals dismissed since then (of agent, when
// set): for each shape, the approvals its proposals rested on when they
// were dismissed.
func (e *Enforcer) dismissals(ctx context.Context, since time.Time, agent string) (map[string]map[string]bool, error) {
	out := map[string]map[string]bool{}
	f := airlock.EventFilter{Kind: airlock.EventProposalDismissed, Since: since, Agent: agent, Limit: airlock.MaxPageSize}
	for {
		evs, err := e.Store.Events(ctx, f)
		if err != nil {
			return nil, err
		}
		for _, ev := range evs {
			var d airlock.ProposalDismissal
			if json.Unmarshal(ev.Payload, &d) != nil {
				continue
			}
			key := shapeKey(&d.Grant)
			if out[key] == nil {
				out[key] = map[string]bool{}
			}
			for _, id := range d.Evidence {
				out[key][id] = true
			}
		}
		if len(evs) < airlock.MaxPageSize {
			return out, nil
		}
		f.AfterSeq = evs[len(evs)-1].Seq
	}
}

// commonPrefix is the words a and b both start with.
func commonPrefix(a, b []string) []string {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return a[:n:n]
}

// shapeKey names a grant's scope: agent, tool and pattern.
func shapeKey(g *airlock.Grant) string {
	b, _ := json.Marshal(struct {
		Agent, Tool string
		Pattern     airlock.GrantPattern
	}{g.Agent, g.Tool, g.Pattern})
	return string(b)
}
