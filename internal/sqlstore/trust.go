package sqlstore

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/airlock-dev/airlock"
)

// TrustSummaries aggregates trust records and person-decided approval
// requests per agent × class.
func (r Reader) TrustSummaries(ctx context.Context, f airlock.TrustFilter) ([]airlock.TrustSummary, error) {
	type key struct{ agent, class string }
	sums := map[key]*airlock.TrustSummary{}
	get := func(agent, class string) *airlock.TrustSummary {
		k := key{agent, class}
		s := sums[k]
		if s == nil {
			s = &airlock.TrustSummary{Agent: agent, Class: airlock.Class(class), Counts: map[airlock.TrustOutcome]int64{}}
			sums[k] = s
		}
		return s
	}
	a := NewArgs(r.Dialect)
	where := trustWhere(a, f, "class", "time")
	err := r.Query(ctx, "read trust", `SELECT agent, class, outcome, count(*) FROM trust`+where+`
		GROUP BY agent, class, outcome`, a.List(), func(row Row) error {
		var agent, class, outcome string
		var n int64
		if err := row.Scan(&agent, &class, &outcome, &n); err != nil {
			return err
		}
		s := get(agent, class)
		s.Counts[airlock.TrustOutcome(outcome)] += n
		s.Total += n
		return nil
	})
	if err != nil {
		return nil, err
	}

	// Requests a person decided (or let expire). An approval by the system
	// is not consent and does not count.
	base := `replace(class, '` + airlock.NeedsHumanSuffix + `', '')`
	a = NewArgs(r.Dialect)
	where = trustWhere(a, f, base, "created")
	cond := `(status IN ('rejected', 'expired') OR (status = 'approved' AND surface ` + r.Dialect.NotEqual() + ` 'system'))`
	if where == "" {
		where = " WHERE " + cond
	} else {
		where += " AND " + cond
	}
	waits := map[key][]time.Duration{}
	err = r.Query(ctx, "read approvals for trust", `SELECT agent, `+base+`, status, resolved_at - created FROM approvals`+where,
		a.List(), func(row Row) error {
			var agent, class, status string
			var waited int64
			if err := row.Scan(&agent, &class, &status, &waited); err != nil {
				return err
			}
			s := get(agent, class)
			switch airlock.ApprovalStatus(status) {
			case airlock.StatusApproved:
				s.Approved++
			case airlock.StatusRejected:
				s.Rejected++
			default:
				s.Expired++
				return nil // nobody decided: no time to decision
			}
			k := key{agent, class}
			waits[k] = append(waits[k], time.Duration(waited))
			return nil
		})
	if err != nil {
		return nil, err
	}

	out := make([]airlock.TrustSummary, 0, len(sums))
	for k, s := range sums {
		w := waits[k]
		slices.Sort(w)
		s.MedianDecision = airlock.Median(w)
		s.ApprovalRate = s.Rate()
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b airlock.TrustSummary) int {
		if c := strings.Compare(a.Agent, b.Agent); c != 0 {
			return c
		}
		return strings.Compare(string(a.Class), string(b.Class))
	})
	return out, nil
}

// trustWhere builds the filter's WHERE clause over the given columns, its
// parameters added to a.
func trustWhere(a *Args, f airlock.TrustFilter, classCol, timeCol string) string {
	var conds []string
	if f.Agent != "" {
		conds = append(conds, "agent = "+a.Add(f.Agent))
	}
	if f.Class != "" {
		conds = append(conds, classCol+" = "+a.Add(string(f.Class)))
	}
	if !f.Since.IsZero() {
		conds = append(conds, timeCol+" >= "+a.Add(f.Since.UnixNano()))
	}
	if len(conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(conds, " AND ")
}
