package airlock

import (
	"context"
	"encoding/json"
	"time"
)

// DefaultGrantTTL is how long an approved proposal may be used, unless the
// enforcer says otherwise.
const DefaultGrantTTL = time.Hour

// RunNowWindow is how far back a watch for requests approved to run now
// (Checker.RunNow) looks before it started: longer than any grant lasts by
// default.
const RunNowWindow = 2 * DefaultGrantTTL

// RunNowRequest reads an approval.resolved event: its request, if a person
// approved it to run now.
func RunNowRequest(e Event) (id string, ok bool) {
	var p ApprovalChange
	if e.Kind != EventApprovalResolved || json.Unmarshal(e.Payload, &p) != nil || !p.RunNow || p.Status != StatusApproved {
		return "", false
	}
	return p.ID, true
}

// ApprovedToRun lists agent's requests approved to run now in the last
// RunNowWindow whose grant is unused, with find (a store's FindApprovals
// or the API's listing).
func ApprovedToRun(ctx context.Context, find func(context.Context, ApprovalFilter) (ApprovalPage, error), agent string) ([]Approval, error) {
	page, err := find(ctx, ApprovalFilter{Agent: agent, Status: []ApprovalStatus{StatusApproved},
		BySettled: true, CreatedAfter: time.Now().Add(-RunNowWindow), Limit: 200})
	if err != nil {
		return nil, err
	}
	var out []Approval
	for _, ap := range page.Approvals {
		if ap.RunNow && ap.GrantUsed.IsZero() {
			out = append(out, ap)
		}
	}
	return out, nil
}
