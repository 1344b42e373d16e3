package postgres

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/airlock-dev/airlock"
)

var _ airlock.TrustStore = (*DB)(nil)

// TrustSummaries aggregates trust records and person-decided approval
// requests per agent × class.
func (db *DB) TrustSummaries(ctx context.Context, f airlock.TrustFilter) ([]airlock.TrustSummary, error) {
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
	where, args := trustWhere(f, "class", "time")
	rows, err := db.query(ctx, `SELECT agent, class, outcome, count(*) FROM trust`+where+`
		GROUP BY agent, class, outcome`, args...)
	if err != nil {
		return nil, db.unavailable("read trust", err)
	}
	for rows.Next() {
		var agent, class, outcome string
		var n int64
		if err := rows.Scan(&agent, &class, &outcome, &n); err != nil {
			rows.Close()
			return nil, db.unavailable("read trust", err)
		}
		s := get(agent, class)
		s.Counts[airlock.TrustOutcome(outcome)] += n
		s.Total += n
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, db.unavailable("read trust", err)
	}

	// Requests a person decided (or let expire). An approval by the system
	// is not consent and does not count.
	base := `replace(class, '` + airlock.NeedsHumanSuffix + `', '')`
	where, args = trustWhere(f, base, "created")
	cond := `(status IN ('rejected', 'expired') OR (status = 'approved' AND surface <> 'system'))`
	if where == "" {
		where = " WHERE " + cond
	} else {
		where += " AND " + cond
	}
	rows, err = db.query(ctx, `SELECT agent, `+base+`, status, resolved_at - created FROM approvals`+where, args...)
	if err != nil {
		return nil, db.unavailable("read approvals for trust", err)
	}
	waits := map[key][]time.Duration{}
	for rows.Next() {
		var agent, class, status string
		var waited int64
		if err := rows.Scan(&agent, &class, &status, &waited); err != nil {
			rows.Close()
			return nil, db.unavailable("read approvals for trust", err)
		}
		s := get(agent, class)
		switch airlock.ApprovalStatus(status) {
		case airlock.StatusApproved:
			s.Approved++
		case airlock.StatusRejected:
			s.Rejected++
		default:
			s.Expired++
			continue // nobody decided: no time to decision
		}
		k := key{agent, class}
		waits[k] = append(waits[k], time.Duration(waited))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, db.unavailable("read approvals for trust", err)
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

// trustWhere builds the filter's WHERE clause over the given columns.
func trustWhere(f airlock.TrustFilter, classCol, timeCol string) (string, []any) {
	var conds []string
	var args []any
	add := func(cond string, v any) {
		args = append(args, v)
		conds = append(conds, cond+" $"+strconv.Itoa(len(args)))
	}
	if f.Agent != "" {
		add("agent =", f.Agent)
	}
	if f.Class != "" {
		add(classCol+" =", string(f.Class))
	}
	if !f.Since.IsZero() {
		add(timeCol+" >=", f.Since.UnixNano())
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}
