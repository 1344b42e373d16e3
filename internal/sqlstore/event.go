package sqlstore

import (
	"context"
	"strings"

	"github.com/airlock-dev/airlock"
)

// EventColumns are the columns of an audit event, in the order the stores
// scan them.
const EventColumns = `seq, time, kind, trace_id, agent, outcome, approval_id, payload, prev, hash`

// Events returns a page of events in sequence order. scan reads one row of
// EventColumns into an event the caller may keep.
func (r Reader) Events(ctx context.Context, f airlock.EventFilter, scan func(Row, *airlock.Event) error) ([]airlock.Event, error) {
	d := r.Dialect
	a := NewArgs(d)
	where := []string{"seq > " + a.Add(f.AfterSeq)}
	if !f.Since.IsZero() {
		where = append(where, "time >= "+a.Add(f.Since.UnixNano()))
	}
	if f.Kind != "" {
		where = append(where, "kind = "+a.Add(f.Kind))
	}
	if f.Agent != "" {
		where = append(where, "agent = "+a.Add(f.Agent))
	}
	// The terms against '' let the planner use the partial indexes on
	// these columns.
	if f.TraceID != "" {
		where = append(where, "trace_id = "+a.Add(f.TraceID)+" AND trace_id "+d.NotEqual()+" ''")
	}
	if f.ApprovalID != "" {
		where = append(where, "approval_id = "+a.Add(f.ApprovalID)+" AND approval_id "+d.NotEqual()+" ''")
	}
	if f.KindPrefix != "" {
		where = append(where, d.HasPrefix(a, "kind", f.KindPrefix))
	}
	if f.BeforeSeq > 0 {
		where = append(where, "seq < "+a.Add(f.BeforeSeq))
	}
	order := "ASC"
	if f.Newest {
		order = "DESC"
	}
	q := `SELECT ` + EventColumns + ` FROM events WHERE ` + strings.Join(where, " AND ") +
		` ORDER BY seq ` + order + ` LIMIT ` + a.Add(airlock.PageSize(f.Limit))
	var out []airlock.Event
	err := r.Query(ctx, "read events", q, a.List(), func(row Row) error {
		var e airlock.Event
		if err := scan(row, &e); err != nil {
			return err
		}
		out = append(out, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
