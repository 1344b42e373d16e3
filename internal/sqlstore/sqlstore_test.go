package sqlstore

import (
	"context"
	"strconv"
	"testing"

	"github.com/airlock-dev/airlock"
)

// numbered is a Dialect with $n parameters; its other terms are only
// marks to find in the SQL.
type numbered struct{}

func (numbered) Placeholder(n int) string    { return "$" + strconv.Itoa(n) }
func (numbered) NotEqual() string            { return "<>" }
func (numbered) Unindexed(col string) string { return col }
func (numbered) In(a *Args, col string, vs []string) string {
	return col + " IN " + a.Add(vs)
}
func (numbered) Like(a *Args, cols []string, pat string) string { return "like " + a.Add(pat) }
func (numbered) After(a *Args, col, cmp string, t int64, id string) string {
	return "after " + a.Add(t) + " " + a.Add(id)
}
func (numbered) HasPrefix(a *Args, col, prefix string) string { return "prefix " + a.Add(prefix) }

func TestArgs(t *testing.T) {
	a := NewArgs(numbered{})
	got := a.Add("x") + " " + a.Add(2)
	if want := "$1 $2"; got != want {
		t.Errorf("placeholders = %q, want %q", got, want)
	}
	if got := a.List(); len(got) != 2 || got[0] != "x" || got[1] != 2 {
		t.Errorf("List() = %v, want [x 2]", got)
	}
}

func TestFindApprovalsQuery(t *testing.T) {
	const id = "0190a3c1-0000-7000-8000-000000000001"
	tests := []struct {
		name string
		f    airlock.ApprovalFilter
		want string // the query, "" for a refusal before it
	}{
		{"newest", airlock.ApprovalFilter{Limit: 2},
			`SELECT ` + ApprovalColumns + ` FROM approvals ORDER BY id DESC LIMIT $1`},
		{"pending oldest after id", airlock.ApprovalFilter{Status: []airlock.ApprovalStatus{airlock.StatusPending}, Oldest: true, Cursor: id},
			`SELECT ` + ApprovalColumns + ` FROM approvals WHERE status = 'pending' AND id > $1 ORDER BY id ASC LIMIT $2`},
		{"settled after cursor", airlock.ApprovalFilter{BySettled: true, Agent: "a", Cursor: "17." + id},
			`SELECT ` + ApprovalColumns + ` FROM approvals WHERE agent = $1 AND status <> 'pending' AND after $2 $3 ORDER BY resolved_at DESC, id DESC LIMIT $4`},
		{"by deadline, class either way", airlock.ApprovalFilter{ByDeadline: true, Class: "shell.write"},
			`SELECT ` + ApprovalColumns + ` FROM approvals WHERE class IN ($1, $2) ORDER BY expires ASC, id ASC LIMIT $3`},
		{"time cursor on id order", airlock.ApprovalFilter{Cursor: "17." + id}, ""},
		{"id cursor on time order", airlock.ApprovalFilter{BySettled: true, Cursor: id}, ""},
		{"unknown status", airlock.ApprovalFilter{Status: []airlock.ApprovalStatus{"maybe"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got string
			r := Reader{Dialect: numbered{}, Query: func(_ context.Context, _, q string, _ []any, _ func(Row) error) error {
				got = q
				return nil
			}}
			_, err := r.FindApprovals(context.Background(), tt.f, nil)
			if tt.want == "" {
				if code := airlock.ErrorCode(err); code != airlock.EINVALID {
					t.Errorf("error code = %q (%v), want %q", code, err, airlock.EINVALID)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("query = %q, %v\nwant    %q", got, err, tt.want)
			}
		})
	}
}
