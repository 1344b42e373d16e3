package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/sqlite"
	"github.com/airlock-dev/airlock/visible"
)

func newApprovalsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "approvals",
		Short: "List, inspect, approve and reject approval requests",
		Long: `Approval requests are actions waiting for a person: ask requests block their
agent, suggest and needs-human requests are proposals that, once approved,
may run exactly once.

These commands ask the Airlock server (--server, $AIRLOCK_TOKEN; see
'airlock --help'); list and show with --db FILE read a database file
directly instead, read-only. Approving and rejecting need a reviewer or
admin token: the server records the token's person as the reviewer.

An ID may be given by its first characters, as git names a commit
(01937b6c), when no other request's ID starts with them; an ambiguous
start lists the requests it names.`,
		Example: `  airlock approvals list --status pending
  airlock approvals show 01937b6c-3f9e-7c4a-9d2e-6a1b2c3d4e5f
  airlock approvals show 01937b6c
  airlock approvals approve 01937b6c-3f9e-7c4a-9d2e-6a1b2c3d4e5f --reason "release window"
  airlock approvals reject 01937b6c-3f9e-7c4a-9d2e-6a1b2c3d4e5f --reason "not during the freeze"
  airlock approvals watch --agent coder-1
  airlock approvals list --db airlock.db --status pending`,
	}
	cmd.AddCommand(newApprovalsListCmd(), newApprovalsGroupsCmd(), newApprovalsShowCmd(),
		newApprovalsResolveCmd(airlock.StatusApproved), newApprovalsResolveCmd(airlock.StatusRejected),
		newApprovalsCancelCmd(), newApprovalsWatchCmd())
	return cmd
}

// summaryWidth is how much of a summary the table shows.
const summaryWidth = 60

func newApprovalsListCmd() *cobra.Command {
	var (
		dbPath, risk, cursor string
		statuses             []string
		olderThan, newerThan time.Duration
		limit                int
		asJSON               bool
		f                    airlock.ApprovalFilter
	)
	cmd := &cobra.Command{
		Use:   "list [--db FILE]",
		Short: "List approval requests, newest first",
		Long: `List prints a page of approval requests, newest first (--oldest for the
queue's order), as a table; summaries are shortened to fit, 'approvals show'
prints a request in full. When more requests match, the last line gives the
--cursor that continues the listing. It asks the server, or reads the
database file --db names. An agent token lists only its agent's requests.`,
		Example: `  airlock approvals list --status pending
  airlock approvals list --status approved,rejected --agent coder-1 --newer-than 24h --json
  airlock approvals list --db airlock.db --status pending
  airlock approvals list --db airlock.db --status approved,rejected --agent coder-1 --newer-than 24h
  airlock approvals list --db airlock.db --risk destructive --older-than 1h --oldest
  airlock approvals list --db airlock.db --limit 20 --cursor 01937b6c-3f9e-7c4a-9d2e-6a1b2c3d4e5f --json`,
		Args: argsNone(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			for _, s := range statuses {
				st, err := airlock.ParseApprovalStatus(strings.TrimSpace(s))
				if err != nil {
					return usageError("--status: %s", airlock.ErrorMessage(err))
				}
				f.Status = append(f.Status, st)
			}
			if risk != "" {
				t, err := airlock.ParseRiskTier(risk)
				if err != nil {
					return usageError("--risk: %s", airlock.ErrorMessage(err))
				}
				f.MinTier = t
			}
			if olderThan < 0 || newerThan < 0 {
				return usageError("--older-than and --newer-than take a positive duration (90m, 24h)")
			}
			if limit < 1 || limit > airlock.MaxPageSize {
				return usageError("--limit %d: want 1 to %d", limit, airlock.MaxPageSize)
			}
			now := time.Now()
			if olderThan > 0 {
				f.CreatedBefore = now.Add(-olderThan)
			}
			if newerThan > 0 {
				f.CreatedAfter = now.Add(-newerThan)
			}
			f.Cursor, f.Limit = cursor, limit
			print := func(page airlock.ApprovalPage) error {
				out := cmd.OutOrStdout()
				var err error
				if asJSON {
					err = writeJSON(out, page)
				} else {
					err = printApprovalTable(out, page, now)
				}
				if err != nil {
					return checkFailed(err)
				}
				return nil
			}
			if dbPath == "" {
				c, err := newClient(cmd)
				if err != nil {
					return err
				}
				page, err := c.Approvals(cmd.Context(), f)
				if err != nil {
					return serverInvalid(c, err)
				}
				return print(page)
			}
			return withDB(cmd, dbPath, func(db *sqlite.DB) error {
				page, err := db.FindApprovals(cmd.Context(), f)
				switch {
				case airlock.ErrorCode(err) == airlock.EINVALID:
					return usageError("%s", airlock.ErrorMessage(err))
				case err != nil:
					return storeFailed(err)
				}
				return print(page)
			})
		},
	}
	fl := cmd.Flags()
	dbFlag(fl.StringVar, &dbPath)
	fl.StringSliceVar(&statuses, "status", nil,
		"only requests in these states: pending, approved, rejected, expired, cancelled (repeat or comma-separate)")
	fl.StringVar(&f.Agent, "agent", "", "only this agent's requests")
	fl.StringVar(&f.Class, "class", "", "only this action class (with or without #needs-human)")
	fl.StringVar(&f.Tool, "tool", "", "only requests for this tool")
	fl.StringVar(&risk, "risk", "", "only requests of this risk tier or higher: read, write, network-egress, spend, destructive, privileged")
	fl.DurationVar(&olderThan, "older-than", 0, "only requests created longer ago than this (1h)")
	fl.DurationVar(&newerThan, "newer-than", 0, "only requests created within this long (24h)")
	fl.IntVar(&limit, "limit", airlock.DefaultPageSize, fmt.Sprintf("at most this many requests (up to %d)", airlock.MaxPageSize))
	fl.StringVar(&cursor, "cursor", "", "continue a listing: the cursor the previous page printed")
	fl.BoolVar(&f.Oldest, "oldest", false, "list the oldest first")
	fl.BoolVar(&f.ByDeadline, "by-deadline", false, "list the most urgent (the first deadline) first")
	fl.BoolVar(&f.BySettled, "by-settled", false, "list settled requests only, the most recently settled first (--oldest: the first settled first)")
	fl.StringVar(&f.Search, "search", "", "only requests whose ID, agent, tool, class, trace or summary contains this")
	fl.BoolVar(&asJSON, "json", false, "print the page as JSON")
	return cmd
}

// printApprovalTable prints a page as a table and the cursor of the next.
func printApprovalTable(out io.Writer, page airlock.ApprovalPage, now time.Time) error {
	if len(page.Approvals) == 0 {
		_, err := fmt.Fprintln(out, "no approval requests match")
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tAGE\tAGENT\tTOOL\tCLASS\tRISK\tSUMMARY")
	for _, ap := range page.Approvals {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			visible.Escaped(ap.ID), ap.Status, shortDuration(now.Sub(ap.Created)),
			visible.Escaped(ap.Agent), visible.Escaped(ap.Tool), visible.Escaped(ap.Class), ap.Tier,
			truncate(visible.Escaped(ap.Summary), summaryWidth))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if page.NextCursor != "" {
		_, err := fmt.Fprintf(out, "next page: --cursor %s\n", page.NextCursor)
		return err
	}
	return nil
}

// truncate shortens s to at most n runes, marking the cut with "…".
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// shortDuration prints an age as kubectl does: 45s, 12m, 5h, 3d.
func shortDuration(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", d/time.Second)
	case d < time.Hour:
		return fmt.Sprintf("%dm", d/time.Minute)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", d/time.Hour)
	}
	return fmt.Sprintf("%dd", d/(24*time.Hour))
}

func newApprovalsShowCmd() *cobra.Command {
	var (
		dbPath string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "show ID [--db FILE]",
		Short: "Print one approval request in full",
		Long: `Show prints every field of an approval request, nothing shortened: the exact
action with its arguments, the action hash a resolution must echo, why the
gate asked (the full decision), who may resolve it, its times, and how it
was resolved. It asks the server, or reads the database file --db names.`,
		Example: `  airlock approvals show 01937b6c-3f9e-7c4a-9d2e-6a1b2c3d4e5f
  airlock approvals show 01937b6c-3f9e-7c4a-9d2e-6a1b2c3d4e5f --json
  airlock approvals show 01937b6c-3f9e-7c4a-9d2e-6a1b2c3d4e5f --db airlock.db`,
		Args:              argsExactly(1, "one approval ID"),
		ValidArgsFunction: completeApprovalID(false),
		RunE: func(cmd *cobra.Command, args []string) error {
			print := func(d airlock.ApprovalWithRuns) error {
				out := cmd.OutOrStdout()
				var err error
				if asJSON {
					err = writeJSON(out, d)
				} else {
					_, err = io.WriteString(out, approvalText(&d.Approval, time.Now())+runsText(d.Runs, time.Now()))
				}
				if err != nil {
					return checkFailed(err)
				}
				return nil
			}
			if dbPath == "" {
				c, err := newClient(cmd)
				if err != nil {
					return err
				}
				failed := func(err error) error { return serverFailed(c, err) }
				id, err := resolveApprovalID(cmd.Context(), args[0], c.Approvals, failed)
				if err != nil {
					return err
				}
				d, err := c.ApprovalRuns(cmd.Context(), id)
				if err != nil {
					return failed(err)
				}
				return print(d)
			}
			return withDB(cmd, dbPath, func(db *sqlite.DB) error {
				id, err := resolveApprovalID(cmd.Context(), args[0], db.FindApprovals, storeFailed)
				if err != nil {
					return err
				}
				ap, err := db.Approval(cmd.Context(), id)
				if err != nil {
					return storeFailed(err)
				}
				evs, err := db.Events(cmd.Context(), airlock.EventFilter{ApprovalID: id, Kind: airlock.EventActionExecuted, Limit: 20})
				if err != nil {
					return storeFailed(err)
				}
				return print(airlock.ApprovalWithRuns{Approval: ap, Runs: keptRuns(airlock.Executions(evs))})
			})
		},
	}
	f := cmd.Flags()
	dbFlag(f.StringVar, &dbPath)
	f.BoolVar(&asJSON, "json", false, "print the request as JSON")
	return cmd
}

// approvalText renders every field of a request for a person.
func approvalText(ap *airlock.Approval, now time.Time) string {
	var b strings.Builder
	line := func(label, format string, args ...any) {
		fmt.Fprintf(&b, "%-13s %s\n", label+":", fmt.Sprintf(format, args...))
	}
	text := func(s string) string {
		if s == "" {
			return "-"
		}
		return visible.Escaped(s)
	}
	if h := hiddenText(ap); h != "" {
		line("hidden", "%s", h)
	}
	line("id", "%s", text(ap.ID))
	line("status", "%s", ap.Status)
	kind := "ask: the agent waits for the answer"
	if ap.IsGrant() {
		kind = "suggest: a proposal; once approved it may run once"
	}
	line("outcome", "%s", kind)
	line("summary", "%s", text(ap.Summary))
	line("agent", "%s", text(ap.Agent))
	line("tool", "%s", text(ap.Tool))
	line("hash", "sha256:%s", ap.ActionHash)
	line("class", "%s (capability %s)", text(ap.Class), text(string(ap.Capability)))
	line("risk tier", "%s", ap.Tier)
	if ap.NeedsHuman {
		line("needs-human", "yes")
	}
	line("requested by", "%s", text(ap.RequestedBy))
	line("trace", "%s", text(ap.TraceID))
	if ap.SessionID != "" {
		line("session", "%s", text(ap.SessionID))
	}
	if ap.CallID != "" {
		line("call", "%s", text(ap.CallID))
	}
	if ap.Cwd != "" {
		line("cwd", "%s", text(ap.Cwd))
	}
	if h := ap.Hints; h != nil {
		var hints []string
		if h.Tier != 0 {
			hints = append(hints, "tier "+h.Tier.String())
		}
		if h.NeedsHuman {
			hints = append(hints, "needs-human")
		}
		if h.Reason != "" {
			hints = append(hints, "reason (the agent's claim): "+visible.Escaped(h.Reason))
		}
		line("hints", "%s", strings.Join(hints, "; "))
	}
	reviewers := make([]string, 0, len(ap.Reviewers))
	for _, r := range ap.Reviewers {
		reviewers = append(reviewers, visible.Escaped(r))
	}
	if len(reviewers) == 0 {
		reviewers = append(reviewers, "-")
	}
	line("reviewers", "%s", strings.Join(reviewers, ", "))
	line("owner", "%s", text(ap.Owner))
	line("created", "%s", timeText(ap.Created, now))
	line("expires", "%s (timeout %s)", timeText(ap.Expires, now), ap.Timeout)
	if !ap.ResolvedAt.IsZero() || ap.ResolvedBy != "" {
		by := ap.ResolvedBy
		if by == "" {
			by = "the system"
		}
		line("resolved", "%s by %s via %s", timeText(ap.ResolvedAt, now), visible.Escaped(by), text(string(ap.Surface)))
		line("reason", "%s", text(ap.Reason))
	}
	if ap.IsGrant() {
		line("grant ttl", "%s", ap.GrantTTL)
		if !ap.GrantExpires.IsZero() {
			line("grant until", "%s", timeText(ap.GrantExpires, now))
		}
		used := "not yet"
		if !ap.GrantUsed.IsZero() {
			used = timeText(ap.GrantUsed, now)
		}
		line("grant used", "%s", used)
	}
	d := ap.Detail
	line("autonomy", "%s", text(d.AutonomyClass))
	if d.RequiresHuman {
		line("requires", "a human")
	}
	if d.Code != "" {
		line("code", "%s", text(d.Code))
	}
	line("rule", "%s", text(d.Rule))
	if d.Reason != "" {
		line("agent reason", "%s (the agent's claim)", text(d.Reason))
	}
	b.WriteString("args:\n")
	b.WriteString(indent(argsText(ap.Args)))
	if d.Decision != "" {
		b.WriteString("decision:\n")
		b.WriteString(indent(visible.EscapedLines(strings.TrimRight(d.Decision, "\n"))))
	}
	return b.String()
}

// hiddenText warns, as the inbox does above a request, of the characters
// shown as escapes in what the agent sent, field by field; "" when there
// are none.
func hiddenText(ap *airlock.Approval) string {
	counts, total := ap.Hidden()
	if total == 0 {
		return ""
	}
	fields := make([]string, len(counts))
	for i, c := range counts {
		fields[i] = fmt.Sprintf("%s: %d", c.Field, c.N)
	}
	return fmt.Sprintf("%s in what the agent sent (%s): control, format, bidirectional or invisible characters, each shown as an escape such as \\u202e",
		plural(int64(total), "hidden character"), strings.Join(fields, ", "))
}

// argsText pretty-prints the arguments as the same JSON value, their
// strings readable: \u escapes become the characters they stand for (a
// reviewer reads "a && b", not "a \u0026\u0026 b"), except where JSON or a
// terminal needs them.
func argsText(args json.RawMessage) string {
	if len(args) == 0 {
		return "(none)"
	}
	text, ok := airlock.ReadableArgs(args)
	if !ok {
		return visible.Escaped(text) // not JSON: its line breaks are the agent's, not the layout's
	}
	return visible.EscapedLines(text)
}

// indent indents every line of s by two spaces.
func indent(s string) string {
	var b strings.Builder
	for l := range strings.Lines(strings.TrimRight(s, "\n") + "\n") {
		b.WriteString("  " + l)
	}
	return b.String()
}

// timeText prints a time and how far it is from now.
func timeText(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	s := t.UTC().Format(time.RFC3339)
	if d := now.Sub(t); d >= 0 {
		return s + " (" + shortDuration(d) + " ago)"
	}
	return s + " (in " + shortDuration(t.Sub(now)) + ")"
}

// argsExactly is cobra.ExactArgs with a usage exit code.
func argsExactly(n int, what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != n {
			return usageError("%s needs %s, got %d argument(s)", c.CommandPath(), what, len(args))
		}
		return nil
	}
}

func newApprovalsResolveCmd(status airlock.ApprovalStatus) *cobra.Command {
	var (
		reason, hash    string
		asJSON, runNow  bool
		wait, remember  time.Duration
		rememberCommand string
		rememberPath    string
		rememberExact   bool
		rememberBudget  string
		group           bool
		editArgs        string
	)
	verb := "approve"
	cmd := &cobra.Command{
		Use:   "approve ID [--reason R] [--hash H] [--args JSON] [--run-now] [--remember 7d]",
		Short: "Approve a pending request, as the token's person",
		Long: `Approve fetches the request, prints its summary and the action hash, and
approves exactly that action: the resolution echoes the hash, so a request
that changed since it was fetched is not approved. --hash pins the hash you
reviewed (from 'approvals show' or the web inbox); when the request holds a
different action the server refuses with AIRLOCK-HASH-MISMATCH.

An ask request releases its waiting agent; an approved suggest or
needs-human request is a one-shot grant: the same action may run once.
With --run-now, an executor that holds the tool (the MCP gateway, for an
mcp__<server>__<tool> call) runs it now instead of when the agent retries,
and its result is recorded with the request: approve waits for it (--wait)
and prints what it returned; 'approvals show' prints it later.

With --remember, the approval also grants the action's shape for that long
(7d, 36h; at most 90 days): a standing grant that lets the same agent run
what it covers of the same tool without asking, up to the tier approved —
a shell command by its words (approving 'npm test' covers 'npm test
--watch', not 'npm publish', nor a script with another command), the files
under one directory, or else the exact action. --remember-command,
--remember-path and --remember-exact name another shape, narrower or
wider, which must still cover the approved action; a policy's grants:
section may keep it out. --remember-budget bounds what it lets run:
"10/day" (uses per hour, day or grant: "10" is for the grant's life) or
"amount<=500 USD/day" (the sum of an argument); once spent, what it covers
asks again until the window frees some. 'airlock grants revoke' ends it.

With --args, you approve your edit of the action instead of the action as
it is: the arguments as a JSON object ('{"path":"safe.txt"}'). The edited
action gets its own hash and is decided again: an edit into what the
policy denies is refused, and one the policy asks other reviewers for
needs them. The waiting agent runs the edited action, never the original;
a host that cannot take an edit (Codex) is told to run the edited action
instead. The audit log keeps both hashes and the diff.

A rule may need more than one person ('approvals: 2'): each approval is
recorded, and the request stays pending, saying how many more it needs,
until the last one.

Only a reviewer the rule names, the agent's owner or an admin may approve,
never the agent, nor the person the action was requested for. A request
someone else already settled is reported with who and how; then approve
exits 1.`,
		Example: `  airlock approvals approve 01937b6c-3f9e-7c4a-9d2e-6a1b2c3d4e5f
  airlock approvals approve 01937b6c-3f9e-7c4a-9d2e-6a1b2c3d4e5f --reason "release window" \
      --hash sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08`,
	}
	if status == airlock.StatusRejected {
		verb = "reject"
		cmd.Use = "reject ID --reason R [--hash H]"
		cmd.Short = "Reject a pending request, saying why"
		cmd.Long = `Reject fetches the request, prints its summary and the action hash, and
rejects it with a reason, which the agent and its owner read. The waiting
agent gets AIRLOCK-REJECTED. --hash pins the hash you reviewed; when the
request holds a different action the server refuses with
AIRLOCK-HASH-MISMATCH.

Only a reviewer the rule names, the agent's owner or an admin may reject.
A request someone else already settled is reported with who and how; then
reject exits 1.`
		cmd.Example = `  airlock approvals reject 01937b6c-3f9e-7c4a-9d2e-6a1b2c3d4e5f --reason "not during the freeze"
  airlock approvals reject 01937b6c-3f9e-7c4a-9d2e-6a1b2c3d4e5f --reason "wrong bucket" --json`
	}
	cmd.Args = argsExactly(1, "one approval ID")
	cmd.ValidArgsFunction = completeApprovalID(true)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		reason = strings.TrimSpace(reason)
		shapes := 0
		for _, set := range []bool{rememberCommand != "", rememberPath != "", rememberExact} {
			if set {
				shapes++
			}
		}
		switch {
		case shapes > 1:
			return usageError("--remember-command, --remember-path and --remember-exact are one shape each: name one")
		case group && (runNow || hash != ""):
			return usageError("--group settles each request of the group with the hash listed for it: it takes neither --hash nor --run-now")
		case (shapes == 1 || rememberBudget != "") && remember == 0:
			return usageError("a shape or a budget to remember needs --remember DURATION (7d)")
		case editArgs != "" && (group || runNow || remember > 0):
			return usageError("--args approves your edit of one request: it takes neither --group, --run-now nor --remember")
		}
		var edited json.RawMessage
		if editArgs != "" {
			if err := airlock.CheckJSON([]byte(editArgs)); err != nil {
				return usageError("--args: %s", airlock.ErrorMessage(err))
			}
			edited = json.RawMessage(editArgs)
		}
		var budget *airlock.Budget
		if rememberBudget != "" {
			var err error
			if budget, err = airlock.ParseBudget(rememberBudget); err != nil {
				return usageError("--remember-budget: %s", airlock.ErrorMessage(err))
			}
		}
		if status == airlock.StatusRejected && reason == "" {
			return usageError("reject needs --reason: say why; the agent and its owner read it")
		}
		var pinned airlock.Hash
		if hash != "" {
			h, err := airlock.ParseHash(hash)
			if err != nil {
				return usageError("--hash: %s", airlock.ErrorMessage(err))
			}
			pinned = h
		}
		c, err := newClient(cmd)
		if err != nil {
			return err
		}
		ctx, out := cmd.Context(), cmd.OutOrStdout()
		id, err := resolveApprovalID(ctx, args[0], c.Approvals, func(err error) error { return serverFailed(c, err) })
		if err != nil {
			return err
		}
		ap, err := c.Approval(ctx, id)
		if err != nil {
			return serverFailed(c, err)
		}
		if !asJSON {
			io.WriteString(out, approvalBrief(&ap, time.Now()))
		}
		if ap.Status != airlock.StatusPending {
			return checkFailed(errors.New("airlock: " + settledText(&ap)))
		}
		_, h := ap.Runs() // a reviewer's edit, once one approved it
		if hash != "" {
			h = pinned
		}
		var others []airlock.Approval
		if group {
			if others, err = groupOf(ctx, c, &ap); err != nil {
				return err
			}
		}
		r := airlock.Resolution{ApprovalID: id, Status: status, ActionHash: h, Reason: reason, Surface: airlock.SurfaceCLI, RunNow: runNow}
		if edited != nil {
			r.Edit = &airlock.Edit{Args: edited}
		}
		got, err := c.ResolveWith(ctx, r)
		if err := reportChange(ctx, c, id, got, err, asJSON, out); err != nil {
			return err
		}
		if err := resolveGroup(ctx, c, others, status, reason, asJSON, out); err != nil {
			return err
		}
		if remember > 0 {
			var shape *airlock.GrantPattern
			switch {
			case rememberCommand != "":
				shape = &airlock.GrantPattern{Kind: airlock.PatternCommand, Command: strings.Fields(rememberCommand)}
			case rememberPath != "":
				shape = &airlock.GrantPattern{Kind: airlock.PatternPath, Path: rememberPath}
			case rememberExact:
				shape = &airlock.GrantPattern{Kind: airlock.PatternExact, Hash: got.ActionHash}
			}
			g, err := c.Remember(ctx, id, shape, budget, remember, reason)
			if err != nil {
				return serverFailed(c, fmt.Errorf("approved, but the grant was not made: %w", err))
			}
			if asJSON {
				err = writeJSON(out, g)
			} else {
				_, err = fmt.Fprintf(out, "granted %s: %s without asking, up to %s, until %s (airlock grants revoke %s)\n",
					g.ID, grantScope(&g), g.MaxTier, g.Expires.UTC().Format(time.RFC3339), g.ID)
			}
			if err != nil {
				return checkFailed(err)
			}
		}
		if !got.RunNow {
			return nil
		}
		return awaitRun(ctx, c, &got, wait, asJSON, out)
	}
	f := cmd.Flags()
	if status == airlock.StatusRejected {
		f.StringVar(&reason, "reason", "", "why (required): the agent and its owner read it")
	} else {
		f.StringVar(&reason, "reason", "", "why, for the record")
		f.BoolVar(&runNow, "run-now", false, "a proposal: have the MCP gateway that holds the tool run it now")
		f.DurationVar(&wait, "wait", 30*time.Second, "with --run-now: how long to wait for the run and print what it returned")
		f.Var(daysValue{&remember}, "remember", "also grant the action's shape for this long (7d, 36h): a standing grant")
		f.StringVar(&rememberCommand, "remember-command", "", `with --remember: the command words to grant instead of the approved command's ("npm test"); they must start it`)
		f.StringVar(&rememberPath, "remember-path", "", "with --remember: the directory to grant instead of the narrowest; the approved paths must lie under it")
		f.BoolVar(&rememberExact, "remember-exact", false, "with --remember: grant only this exact action")
		f.StringVar(&editArgs, "args", "", `approve your edit of the action: its arguments as a JSON object ('{"path":"safe.txt"}'), decided again before it counts`)
		f.StringVar(&rememberBudget, "remember-budget", "", `with --remember: bound what the grant lets run: "10/day" (uses per hour, day or grant), "amount<=500 USD/day" (an argument's sum)`)
	}
	f.BoolVar(&group, "group", false, verb+" every pending request of the same shape too ('approvals groups'), each bound to its own action hash")
	f.StringVar(&hash, "hash", "", "the action hash you reviewed; "+verb+" only if the request still holds exactly that action")
	f.BoolVar(&asJSON, "json", false, "print the resolved request as JSON")
	return cmd
}

func newApprovalsCancelCmd() *cobra.Command {
	var (
		reason string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "cancel ID [--reason R]",
		Short: "Withdraw a pending request",
		Long: `Cancel withdraws a pending request before anyone decides it: a waiting agent
gets AIRLOCK-CANCELLED. The request's agent, anyone who may resolve it, or
an admin may cancel it. A request already settled is reported with who and
how; then cancel exits 1.`,
		Example: `  airlock approvals cancel 01937b6c-3f9e-7c4a-9d2e-6a1b2c3d4e5f
  airlock approvals cancel 01937b6c-3f9e-7c4a-9d2e-6a1b2c3d4e5f --reason "superseded by a new plan"`,
		Args:              argsExactly(1, "one approval ID"),
		ValidArgsFunction: completeApprovalID(true),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := newClient(cmd)
			if err != nil {
				return err
			}
			ctx, out := cmd.Context(), cmd.OutOrStdout()
			id, err := resolveApprovalID(ctx, args[0], c.Approvals, func(err error) error { return serverFailed(c, err) })
			if err != nil {
				return err
			}
			got, err := c.Cancel(ctx, id, strings.TrimSpace(reason), airlock.SurfaceCLI)
			return reportChange(ctx, c, id, got, err, asJSON, out)
		},
	}
	f := cmd.Flags()
	f.StringVar(&reason, "reason", "", "why, for the record and the waiting agent")
	f.BoolVar(&asJSON, "json", false, "print the cancelled request as JSON")
	return cmd
}

func newApprovalsWatchCmd() *cobra.Command {
	var (
		agent, class string
		after        int64
		asJSON       bool
	)
	cmd := &cobra.Command{
		Use:   "watch [--agent A] [--class C]",
		Short: "Print approval requests as they are queued and settled",
		Long: `Watch follows the server's event stream and prints one line per change to an
approval request: requested, approved or rejected (by whom, via which
surface, why), expired, cancelled. It reconnects by itself when the stream
breaks, missing nothing, and runs until interrupted (Ctrl-C).

--after SEQ first replays the changes recorded after that sequence number
of the audit log; by default only new changes are printed.`,
		Example: `  airlock approvals watch
  airlock approvals watch --agent coder-1 --class fs.delete
  airlock approvals watch --json | jq -r 'select(.kind == "approval.requested") | .approval_id'`,
		Args: argsNone(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if after < 0 {
				return usageError("--after %d: want a sequence number, 0 or more", after)
			}
			c, err := newClient(cmd)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(cmd.ErrOrStderr(), "watching approval requests at %s (Ctrl-C to stop)\n", c.URL)
			err = c.StreamEvents(cmd.Context(), after, "approval.", agent, func(e airlock.Event) error {
				itsClass, line := watchLine(e)
				if class != "" && strings.TrimSuffix(itsClass, airlock.NeedsHumanSuffix) != strings.TrimSuffix(class, airlock.NeedsHumanSuffix) {
					return nil
				}
				if asJSON {
					return jsonLine(out, e)
				}
				_, err := fmt.Fprintln(out, line)
				return err
			})
			if cmd.Context().Err() != nil {
				return nil // interrupted: the normal end
			}
			return serverFailed(c, err)
		},
	}
	f := cmd.Flags()
	f.StringVar(&agent, "agent", "", "only this agent's requests")
	f.StringVar(&class, "class", "", "only this action class (with or without #needs-human)")
	f.Int64Var(&after, "after", 0, "replay the changes after this audit sequence number first")
	f.BoolVar(&asJSON, "json", false, "print each change as its audit event, one JSON object per line")
	return cmd
}

// watchLine is watch's line for an approval event, and the request's
// class: time, kind, request, agent, tool, class, then what happened. It reads the payload of its kind
// (the request itself for approval.requested, an airlock.ApprovalChange for
// the others); an unexpected payload prints the headers only.
func watchLine(e airlock.Event) (class, line string) {
	dash := func(s string) string {
		if s == "" {
			return "-"
		}
		return visible.Escaped(s)
	}
	id, tool, what := e.ApprovalID, "", e.Outcome
	switch e.Kind {
	case airlock.EventApprovalRequested:
		var ap airlock.Approval
		_ = json.Unmarshal(e.Payload, &ap)
		id, tool, class = cmp.Or(ap.ID, id), ap.Tool, ap.Class
		what = fmt.Sprintf("%s: %s (%s, %s)", visible.Escaped(e.Outcome), visible.Escaped(ap.Summary),
			whoDecides(&ap), timeLeft(&ap, time.Now()))
	default:
		var ch airlock.ApprovalChange
		_ = json.Unmarshal(e.Payload, &ch)
		id, tool, class = cmp.Or(ch.ID, id), ch.Tool, ch.Class
		what = cmp.Or(string(ch.Status), what)
		if ch.By != "" {
			what += " by " + visible.Escaped(ch.By)
		}
		if ch.Surface != "" {
			what += " via " + visible.Escaped(string(ch.Surface))
		}
		if ch.Reason != "" {
			what += ": " + visible.Escaped(ch.Reason)
		}
	}
	return class, fmt.Sprintf("%s  %-18s  %s  %s  %s  %s  %s", e.Time.UTC().Format(time.RFC3339), e.Kind,
		dash(id), dash(e.Agent), dash(tool), dash(class), what)
}

// jsonLine writes v as one line of JSON, leaving <, > and & as they are.
func jsonLine(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// approvalBrief is what approve and reject print of the request first.
func approvalBrief(ap *airlock.Approval, now time.Time) string {
	var b strings.Builder
	line := func(label, format string, args ...any) {
		fmt.Fprintf(&b, "%-9s %s\n", label+":", fmt.Sprintf(format, args...))
	}
	line("approval", "%s (%s, %s)", visible.Escaped(ap.ID), ap.Status, ap.Outcome)
	if h := hiddenText(ap); h != "" {
		line("hidden", "%s", h)
	}
	line("summary", "%s", visible.Escaped(ap.Summary))
	owner := ""
	if ap.Owner != "" {
		owner = " (owner " + visible.Escaped(ap.Owner) + ")"
	}
	line("agent", "%s%s", visible.Escaped(ap.Agent), owner)
	line("action", "%s, class %s, risk %s", visible.Escaped(ap.Tool), visible.Escaped(ap.Class), ap.Tier)
	line("hash", "sha256:%s", ap.ActionHash)
	if e := ap.Edit; e != nil {
		line("edited", "by %s: runs sha256:%s, args %s", visible.Escaped(e.By), e.ActionHash, visible.Escaped(string(e.Args)))
	}
	if !ap.Review.IsZero() {
		line("review", "%s", ap.Review.String())
	}
	if ap.Status == airlock.StatusPending {
		if ap.Needed() > 1 {
			line("approvals", "%s", standingText(ap))
		}
		line("expires", "%s", timeText(ap.Expires, now))
	}
	return b.String()
}

// settledText says who settled a request, how and when.
func settledText(ap *airlock.Approval) string {
	id, at := visible.Escaped(ap.ID), ap.ResolvedAt.UTC().Format(time.RFC3339)
	switch {
	case ap.Status == airlock.StatusExpired:
		return fmt.Sprintf("approval %s already expired at %s: nobody decided in time", id, ap.Expires.UTC().Format(time.RFC3339))
	case ap.ResolvedBy == "":
		return fmt.Sprintf("approval %s was already %s by the system at %s%s", id, ap.Status, at, becauseText(ap.Reason))
	}
	return fmt.Sprintf("approval %s was already %s by %s at %s via %s%s", id, ap.Status,
		visible.Escaped(ap.ResolvedBy), at, visible.Escaped(string(ap.Surface)), becauseText(ap.Reason))
}

// keptRuns are the runs that kept what the action returned.
func keptRuns(xs []airlock.Execution) []airlock.Execution {
	var out []airlock.Execution
	for _, x := range xs {
		if len(x.Result) > 0 {
			out = append(out, x)
		}
	}
	return out
}

// runsText renders the runs of a request's action with what each returned.
func runsText(runs []airlock.Execution, now time.Time) string {
	var b strings.Builder
	for _, x := range runs {
		fmt.Fprintf(&b, "run:          %s, %s (took %s, audit event %d)\n", x.Status, timeText(x.Time, now),
			time.Duration(x.Duration).Round(time.Millisecond), x.Seq)
		if x.Error != "" {
			fmt.Fprintf(&b, "  error: %s\n", visible.Escaped(x.Error))
		}
		b.WriteString("  returned:\n")
		b.WriteString(indent(indent(visible.EscapedLines(strings.TrimRight(x.ResultText(), "\n")))))
	}
	return b.String()
}

// awaitRun waits, up to wait, for the executor to run a request approved
// to run now, and prints what it returned.
func awaitRun(ctx context.Context, c *client.Client, ap *airlock.Approval, wait time.Duration, asJSON bool, out io.Writer) error {
	deadline := time.Now().Add(wait)
	for {
		d, err := c.ApprovalRuns(ctx, ap.ID)
		if err != nil {
			return serverFailed(c, err)
		}
		if len(d.Runs) > 0 {
			if asJSON {
				return nil // the JSON printed is the resolved request; approvals show --json has its runs
			}
			_, err := io.WriteString(out, runsText(d.Runs, time.Now()))
			return err
		}
		if !time.Now().Before(deadline) {
			if !asJSON {
				fmt.Fprintf(out, "not run yet: the MCP gateway runs it when a session of agent %s with its server is open, "+
					"until %s; airlock approvals show %s prints what it returned\n", visible.Escaped(ap.Agent),
					ap.GrantExpires.UTC().Format(time.RFC3339), ap.ID)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// resolvedText reports a resolution just made.
func resolvedText(ap *airlock.Approval) string {
	s := fmt.Sprintf("%s approval %s: %s by %s at %s via %s%s", ap.Status, visible.Escaped(ap.ID),
		visible.Escaped(ap.Summary), visible.Escaped(ap.ResolvedBy), ap.ResolvedAt.UTC().Format(time.RFC3339),
		visible.Escaped(string(ap.Surface)), becauseText(ap.Reason))
	if ap.Status == airlock.StatusPending {
		// A vote that did not settle it: a request that needs more people.
		v := ap.Votes[len(ap.Votes)-1]
		s = fmt.Sprintf("%s approval %s: %s by %s at %s via %s%s; %s", v.Status, visible.Escaped(ap.ID), visible.Escaped(ap.Summary),
			visible.Escaped(v.By), v.At.UTC().Format(time.RFC3339), visible.Escaped(string(v.Surface)), becauseText(v.Reason),
			visible.Escaped(standingText(ap)))
	}
	if e := ap.Edit; e != nil {
		s += fmt.Sprintf("\nedited by %s: runs sha256:%s instead of sha256:%s (decided %s, %s); diff %s",
			visible.Escaped(e.By), e.ActionHash, ap.ActionHash, e.Decision.Outcome, e.Decision.Tier, visible.Escaped(string(e.Diff)))
	}
	switch {
	case ap.Status == airlock.StatusApproved && ap.RunNow:
		s += "\nthe MCP gateway that holds the tool runs it now, once"
	case ap.Status == airlock.StatusApproved && ap.IsGrant() && !ap.GrantExpires.IsZero():
		s += fmt.Sprintf("\nthe same action may now run once, until %s", ap.GrantExpires.UTC().Format(time.RFC3339))
	}
	return s
}

// standingText says where a pending request's review stands.
func standingText(ap *airlock.Approval) string {
	who := ap.Approvers()
	if len(who) == 0 {
		return fmt.Sprintf("pending: %d approval(s) needed", ap.Needed())
	}
	return fmt.Sprintf("pending: approved by %s, %d more needed", strings.Join(who, ", "), ap.Remaining())
}

func becauseText(reason string) string {
	if reason == "" {
		return ""
	}
	return " (reason: " + visible.Escaped(reason) + ")"
}

// completeApprovalID completes an approval ID from the server's requests,
// pending ones only when pending is set, each with its summary.
func completeApprovalID(pending bool) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		if db, _ := cmd.Flags().GetString("db"); db != "" {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		c, err := newClient(cmd)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		f := airlock.ApprovalFilter{Limit: airlock.DefaultPageSize}
		if pending {
			f.Status = []airlock.ApprovalStatus{airlock.StatusPending}
		}
		page, err := c.Approvals(cmd.Context(), f)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var ids []cobra.Completion
		for _, ap := range page.Approvals {
			if strings.HasPrefix(ap.ID, toComplete) {
				ids = append(ids, cobra.CompletionWithDesc(ap.ID, truncate(visible.Escaped(ap.Summary), summaryWidth)))
			}
		}
		return ids, cobra.ShellCompDirectiveNoFileComp
	}
}

// reportChange prints the request a resolution or cancellation left, or,
// when someone settled it first, who and how (exit 1).
func reportChange(ctx context.Context, c *client.Client, id string, got airlock.Approval, err error, asJSON bool, out io.Writer) error {
	if airlock.ErrorCode(err) == airlock.ECONFLICT {
		if cur, gerr := c.Approval(ctx, id); gerr == nil && cur.Status != airlock.StatusPending {
			return checkFailed(errors.New("airlock: " + settledText(&cur)))
		}
	}
	if err != nil {
		return serverFailed(c, err)
	}
	if asJSON {
		if err := writeJSON(out, got); err != nil {
			return checkFailed(err)
		}
		return nil
	}
	fmt.Fprintln(out, resolvedText(&got))
	return nil
}

// groupOf returns the other pending requests of ap's group (its agent,
// tool and shape), as the server groups them now: each will be resolved
// bound to the action hash listed here. A request that is decided on its
// own (above write, or needs-human) has no group.
func groupOf(ctx context.Context, c *client.Client, ap *airlock.Approval) ([]airlock.Approval, error) {
	gs, err := c.ApprovalGroups(ctx, ap.Agent)
	if err != nil {
		return nil, serverFailed(c, err)
	}
	for _, g := range gs.Groups {
		i := slices.IndexFunc(g.Approvals, func(o airlock.Approval) bool { return o.ID == ap.ID })
		switch {
		case i < 0:
			continue
		case !g.Batchable:
			return nil, checkFailed(fmt.Errorf("airlock: request %s (%s, %s) is decided on its own: only read and write actions without needs-human are settled as a group", ap.ID, ap.Class, ap.Tier))
		}
		return slices.Delete(slices.Clone(g.Approvals), i, i+1), nil
	}
	return nil, checkFailed(fmt.Errorf("airlock: request %s is not pending", ap.ID))
}

// resolveGroup resolves each request of others with status, each bound to
// its own action hash and audited as its own resolution, and reports each.
// One that someone settled meanwhile is reported and skipped.
func resolveGroup(ctx context.Context, c *client.Client, others []airlock.Approval, status airlock.ApprovalStatus, reason string, asJSON bool, out io.Writer) error {
	failed := 0
	for _, o := range others {
		got, err := c.ResolveWith(ctx, airlock.Resolution{ApprovalID: o.ID, Status: status, ActionHash: o.ActionHash, Reason: reason,
			Surface: airlock.SurfaceCLI})
		if err := reportChange(ctx, c, o.ID, got, err, asJSON, out); err != nil {
			failed++
			fmt.Fprintf(out, "request %s: %s\n", o.ID, airlock.ErrorMessage(err))
		}
	}
	if failed > 0 {
		return checkFailed(fmt.Errorf("airlock: %d of the group's %d other requests were not %s", failed, len(others), status))
	}
	return nil
}

func newApprovalsGroupsCmd() *cobra.Command {
	var (
		agent  string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "groups [--agent A]",
		Short: "Show the pending requests grouped by agent, tool and shape",
		Long: `Groups prints the pending requests grouped for batch review: one agent,
one tool, the same shape of action (a command by its program and
subcommand, the files under one directory, or the exact action). A
reviewer settles a group with 'approvals approve ID --group' (or reject),
each request bound to its own action hash and audited as its own
resolution. Requests above write, and those tagged needs-human, are each
alone: they are decided one by one.`,
		Example: `  airlock approvals groups
  airlock approvals approve 01937b6c-3f9e-7c4a-9d2e-6a1b2c3d4e5f --group`,
		Args: argsNone(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := newClient(cmd)
			if err != nil {
				return err
			}
			gs, err := c.ApprovalGroups(cmd.Context(), agent)
			if err != nil {
				return serverFailed(c, err)
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return writeJSON(out, gs)
			}
			if len(gs.Groups) == 0 {
				_, err := fmt.Fprintln(out, "no pending requests")
				return err
			}
			for _, g := range gs.Groups {
				alone := ""
				if !g.Batchable {
					alone = " — decided on its own"
				}
				fmt.Fprintf(out, "%s may run %s (%s): %d pending%s\n", visible.Escaped(g.Agent), visible.Escaped(g.Shape.String()),
					visible.Escaped(g.Tool), len(g.Approvals), alone)
				for _, ap := range g.Approvals {
					fmt.Fprintf(out, "  %s  %s  %s\n", ap.ID, ap.Tier, visible.Escaped(airlock.ClipText(ap.Summary, 100)))
				}
				if g.Batchable && len(g.Approvals) > 1 {
					fmt.Fprintf(out, "  settle all: airlock approvals approve %s --group\n", g.Approvals[0].ID)
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&agent, "agent", "", "only this agent's requests")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the groups as JSON")
	return cmd
}
