package gate

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/airlock-dev/airlock"
)

// maxSignalRequests bounds the settled requests one reading of the
// signals reads.
const maxSignalRequests = 50_000

// ReviewSignals reads the requests people settled in store since then (of
// agent, when set), in the order they were settled, and returns the
// rubber-stamp signals by reviewer and by agent: approvals given faster
// than the request could be read, and long runs of approvals without a
// rejection.
func ReviewSignals(ctx context.Context, store airlock.ApprovalStore, since time.Time, agent string) (airlock.ReviewSignals, error) {
	out := airlock.ReviewSignals{Since: since, Reviewers: []airlock.ReviewStats{}, Agents: []airlock.ReviewStats{}}
	reviewers, agents := map[string]*airlock.ReviewStats{}, map[string]*airlock.ReviewStats{}
	stat := func(m map[string]*airlock.ReviewStats, name string) *airlock.ReviewStats {
		s := m[name]
		if s == nil {
			s = &airlock.ReviewStats{Name: name}
			m[name] = s
		}
		return s
	}
	f := airlock.ApprovalFilter{Agent: agent, Status: []airlock.ApprovalStatus{airlock.StatusApproved, airlock.StatusRejected},
		BySettled: true, Oldest: true, CreatedAfter: since, Limit: airlock.MaxPageSize}
	for read := 0; read < maxSignalRequests; {
		page, err := store.FindApprovals(ctx, f)
		if err != nil {
			return out, err
		}
		for i := range page.Approvals {
			ap := &page.Approvals[i]
			if ap.ResolvedBy == "" {
				continue // the system settled it
			}
			stat(reviewers, ap.ResolvedBy).Add(ap)
			stat(agents, ap.Agent).Add(ap)
		}
		read += len(page.Approvals)
		if page.NextCursor == "" {
			break
		}
		f.Cursor = page.NextCursor
	}
	for _, m := range []struct {
		from map[string]*airlock.ReviewStats
		to   *[]airlock.ReviewStats
	}{{reviewers, &out.Reviewers}, {agents, &out.Agents}} {
		for _, s := range m.from {
			s.Flag()
			*m.to = append(*m.to, *s)
		}
		slices.SortFunc(*m.to, func(a, b airlock.ReviewStats) int {
			return cmp.Or(cmp.Compare(len(b.Flags), len(a.Flags)), cmp.Compare(b.Fast, a.Fast), cmp.Compare(b.Longest, a.Longest),
				cmp.Compare(a.Name, b.Name))
		})
	}
	return out, nil
}
