package gate

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/airlock-dev/airlock"
)

// DigestProposals tells each agent's owner, at most once every every,
// which standing grants the record proposes for the agent (Propose under
// rules): one notice per owner, queued with an audit event
// (grant.proposal_digest) that says whom it told of what. It does nothing
// when the last digest in the log is more recent than every, and sends one
// per period however many replicas try at once. It returns how many
// owners it told.
func (e *Enforcer) DigestProposals(ctx context.Context, rules ProposalRules, every time.Duration) (int, error) {
	now, err := e.Store.Now(ctx)
	if err != nil {
		return 0, err
	}
	last, err := e.Store.Events(ctx, airlock.EventFilter{Kind: airlock.EventProposalDigest, Newest: true, Limit: 1})
	if err != nil {
		return 0, err
	}
	if len(last) > 0 && now.Sub(last[0].Time) < every {
		return 0, nil
	}
	ps, err := e.Propose(ctx, rules, "")
	if err != nil {
		return 0, err
	}
	var digest airlock.ProposalDigest
	index := map[string]int{}
	for _, p := range ps {
		i, ok := index[p.Grant.Agent]
		if !ok {
			i = len(digest.Agents)
			index[p.Grant.Agent] = i
			digest.Agents = append(digest.Agents, airlock.DigestEntry{Agent: p.Grant.Agent, Owner: e.Gate.EffectivePolicy(p.Grant.Agent).Owner})
		}
		digest.Agents[i].Proposals = append(digest.Agents[i].Proposals, fmt.Sprintf("%s (%s) up to %s: approved %d times, would have run %d asks in 30 days",
			p.Grant.Pattern.String(), p.Grant.Tool, p.Grant.MaxTier, len(p.Evidence), p.Covered))
	}
	rec := airlock.Record{Events: []airlock.Event{airlock.NewEvent(airlock.EventProposalDigest, nil, fmt.Sprint(len(ps), " proposed"), "", &digest)},
		// One digest per period, whichever replica sends it: the period's
		// account takes one use, so a second digest racing for it is
		// refused and nothing of it written.
		Charges: []airlock.BudgetCharge{{Key: fmt.Sprintf("digest:%d", now.UnixNano()/int64(every)),
			Budget: airlock.Budget{Uses: 1, Per: airlock.BudgetPerGrant}, Cost: 1}}}
	told := 0
	for _, a := range digest.Agents {
		if a.Owner == "" {
			continue // no owner to tell: the inbox and the CLI still list them
		}
		told++
		rec.Notifications = append(rec.Notifications, airlock.Notification{
			Kind: airlock.EventProposalDigest, Recipients: []string{a.Owner}, Agent: a.Agent,
			Subject: fmt.Sprintf("%d standing grant%s proposed for %s, earned from the record: %s. Ratify or dismiss them in the inbox's Proposals page or with airlock grants proposals",
				len(a.Proposals), plural(len(a.Proposals)), a.Agent, strings.Join(a.Proposals, "; ")),
		})
	}
	if _, err := e.Store.Append(ctx, rec); airlock.AsBudgetSpent(err) != nil {
		return 0, nil // another replica sent this period's digest
	} else if err != nil {
		return 0, err
	}
	return told, nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
