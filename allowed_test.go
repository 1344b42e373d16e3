package airlock_test

import (
	"context"
	"testing"

	"github.com/airlock-dev/airlock"
)

type approvalsByID map[string]airlock.Approval

func (m approvalsByID) Approval(_ context.Context, id string) (airlock.Approval, error) {
	ap, ok := m[id]
	if !ok {
		return ap, airlock.Errorf(airlock.ENOTFOUND, "no approval %s", id)
	}
	return ap, nil
}

// TestAllowedBy: a decision lets its action run by itself (auto, notify, a
// proposal's grant), or through the approval it asked for — only once a
// person approved that exact action; nothing else allowed it.
func TestAllowedBy(t *testing.T) {
	h := airlock.Hash{1}
	aps := approvalsByID{
		"ok":      {ID: "ok", Status: airlock.StatusApproved, ActionHash: h},
		"pending": {ID: "pending", Status: airlock.StatusPending, ActionHash: h},
		"other":   {ID: "other", Status: airlock.StatusApproved, ActionHash: airlock.Hash{2}},
	}
	for _, c := range []struct {
		label, approval string
		wantID          string
		wantOK          bool
	}{
		{airlock.LabelAuto, "", "", true},
		{airlock.LabelNotify, "", "", true},
		{airlock.LabelGrantUsed, "ok", "", true},
		{airlock.LabelApprovalRequested, "ok", "ok", true},
		{airlock.LabelApprovalGranted, "ok", "ok", true},
		{airlock.LabelApprovalRequested, "pending", "", false},
		{airlock.LabelApprovalRequested, "other", "", false},
		{airlock.LabelApprovalRequested, "missing", "", false},
		{airlock.LabelApprovalRequested, "", "", false},
		{airlock.LabelDenied, "ok", "", false},
		{airlock.LabelShadow, "", "", false},
		{airlock.LabelAskedAtHost, "", "", false},
	} {
		d := airlock.DecisionRef{Label: c.label, ApprovalID: c.approval, Hash: h}
		id, ok := d.AllowedBy(t.Context(), aps)
		if id != c.wantID || ok != c.wantOK {
			t.Errorf("%s on %q: AllowedBy = %q, %v; want %q, %v", c.label, c.approval, id, ok, c.wantID, c.wantOK)
		}
	}
}
