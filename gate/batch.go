package gate

import (
	"cmp"
	"context"
	"slices"

	"github.com/airlock-dev/airlock"
)

// GroupPending reads the pending requests (of agent, when set; at most
// limit) and groups the batchable ones by agent, tool and shape
// (Gate.Shape); every other request is a group of its own. The largest
// groups come first, each oldest request first.
func (g *Gate) GroupPending(ctx context.Context, store airlock.ApprovalStore, agent string, limit int) (airlock.ApprovalGroups, error) {
	out := airlock.ApprovalGroups{Groups: []airlock.ApprovalGroup{}}
	f := airlock.ApprovalFilter{Status: []airlock.ApprovalStatus{airlock.StatusPending}, Agent: agent, Oldest: true, Limit: airlock.MaxPageSize}
	index := map[string]int{}
	for read := 0; read < limit; {
		page, err := store.FindApprovals(ctx, f)
		if err != nil {
			return out, err
		}
		for _, ap := range page.Approvals {
			if read++; read > limit {
				break
			}
			grp := airlock.ApprovalGroup{Agent: ap.Agent, Tool: ap.Tool, Batchable: ap.Batchable(),
				Shape: airlock.GrantPattern{Kind: airlock.PatternExact, Hash: ap.ActionHash}}
			if grp.Batchable {
				if shape, err := g.Shape(ctx, &ap); err == nil {
					grp.Shape = shape
				}
				key := shapeKey(&airlock.Grant{Agent: ap.Agent, Tool: ap.Tool, Pattern: grp.Shape})
				if i, ok := index[key]; ok {
					out.Groups[i].Approvals = append(out.Groups[i].Approvals, ap)
					continue
				}
				index[key] = len(out.Groups)
			}
			grp.Approvals = []airlock.Approval{ap}
			out.Groups = append(out.Groups, grp)
		}
		if page.NextCursor == "" {
			break
		}
		f.Cursor = page.NextCursor
	}
	slices.SortStableFunc(out.Groups, func(a, b airlock.ApprovalGroup) int { return cmp.Compare(len(b.Approvals), len(a.Approvals)) })
	return out, nil
}
