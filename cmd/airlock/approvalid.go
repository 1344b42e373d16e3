package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/visible"
)

// maxCandidates is how many requests an ambiguous prefix lists.
const maxCandidates = 10

// resolveApprovalID turns what a person typed into a request's whole ID: a
// whole ID as it is, else the one request whose ID starts with it, as git
// names a commit ("01a2" for 01a2…). An unknown or ambiguous prefix is a
// usage error; an ambiguous one lists the requests it names. find lists
// requests (the server's, or a database file's); failed reports its errors.
func resolveApprovalID(ctx context.Context, typed string, find func(context.Context, airlock.ApprovalFilter) (airlock.ApprovalPage, error),
	failed func(error) error) (string, error) {
	id := strings.TrimSuffix(strings.TrimSpace(typed), "…")
	if uuid.Validate(id) == nil && len(id) == 36 {
		return id, nil
	}
	if id == "" || strings.Trim(strings.ToLower(id), "0123456789abcdef-") != "" {
		return "", &exitError{code: exitUsage, err: fmt.Errorf("airlock: %q is not an approval ID, nor the start of one ('airlock approvals list' shows them)", typed)}
	}
	page, err := find(ctx, airlock.ApprovalFilter{IDPrefix: id, Limit: maxCandidates})
	if err != nil {
		return "", failed(err)
	}
	switch len(page.Approvals) {
	case 0:
		return "", checkFailed(fmt.Errorf("airlock: %s: no approval request's ID starts with %s ('airlock approvals list' shows them)",
			airlock.ENOTFOUND, visible.Escaped(id)))
	case 1:
		return page.Approvals[0].ID, nil
	}
	var b strings.Builder
	more := ""
	if page.NextCursor != "" {
		more = fmt.Sprintf(" (the newest %d shown)", len(page.Approvals))
	}
	fmt.Fprintf(&b, "approval ID %s is ambiguous: it starts the IDs of these requests%s; give more of the ID:\n", visible.Escaped(id), more)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	now := time.Now()
	for _, ap := range page.Approvals {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s ago\n", ap.ID, ap.Status, visible.Escaped(ap.Action.Agent), visible.Escaped(ap.Action.Tool),
			shortDuration(now.Sub(ap.Created)))
	}
	tw.Flush()
	return "", &exitError{code: exitUsage, err: fmt.Errorf("airlock: %s", strings.TrimSuffix(b.String(), "\n"))}
}
