package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/sqlite"
)

func newApprovalsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "approvals",
		Short: "List and inspect approval requests",
		Long: `Approval requests are actions waiting for a person: ask requests block their
agent, suggest and needs-human requests are proposals that, once approved,
may run exactly once. These commands read the database file directly.`,
		Example: `  airlock approvals list --db airlock.db --status pending
  airlock approvals show 01937b6c-3f9e-7c4a-9d2e-6a1b2c3d4e5f --db airlock.db`,
	}
	cmd.AddCommand(newApprovalsListCmd(), newApprovalsShowCmd())
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
		Use:   "list --db FILE",
		Short: "List approval requests, newest first",
		Long: `List prints a page of approval requests, newest first (--oldest for the
queue's order), as a table; summaries are shortened to fit, 'approvals show'
prints a request in full. When more requests match, the last line gives the
--cursor that continues the listing.`,
		Example: `  airlock approvals list --db airlock.db --status pending
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
			return withDB(cmd, dbPath, func(db *sqlite.DB) error {
				page, err := db.FindApprovals(cmd.Context(), f)
				switch {
				case airlock.ErrorCode(err) == airlock.EINVALID:
					return usageError("%s", airlock.ErrorMessage(err))
				case err != nil:
					return storeFailed(err)
				}
				out := cmd.OutOrStdout()
				if asJSON {
					err = writeJSON(out, page)
				} else {
					err = printApprovalTable(out, page, now)
				}
				if err != nil {
					return checkFailed(err)
				}
				return nil
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
			printable(ap.ID, false), ap.Status, shortDuration(now.Sub(ap.Created)),
			printable(ap.Agent, false), printable(ap.Tool, false), printable(ap.Class, false), ap.Tier,
			truncate(printable(ap.Summary, false), summaryWidth))
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
		Use:   "show ID --db FILE",
		Short: "Print one approval request in full",
		Long: `Show prints every field of an approval request, nothing shortened: the exact
action with its arguments, the action hash a resolution must echo, why the
gate asked (the full decision), who may resolve it, its times, and how it
was resolved.`,
		Example: `  airlock approvals show 01937b6c-3f9e-7c4a-9d2e-6a1b2c3d4e5f --db airlock.db
  airlock approvals show 01937b6c-3f9e-7c4a-9d2e-6a1b2c3d4e5f --db airlock.db --json`,
		Args: argsExactly(1, "one approval ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withDB(cmd, dbPath, func(db *sqlite.DB) error {
				ap, err := db.Approval(cmd.Context(), args[0])
				if err != nil {
					return storeFailed(err)
				}
				out := cmd.OutOrStdout()
				if asJSON {
					err = writeJSON(out, ap)
				} else {
					_, err = io.WriteString(out, approvalText(&ap, time.Now()))
				}
				if err != nil {
					return checkFailed(err)
				}
				return nil
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
		return printable(s, false)
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
			hints = append(hints, "reason (the agent's claim): "+printable(h.Reason, false))
		}
		line("hints", "%s", strings.Join(hints, "; "))
	}
	reviewers := make([]string, 0, len(ap.Reviewers))
	for _, r := range ap.Reviewers {
		reviewers = append(reviewers, printable(r, false))
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
		line("resolved", "%s by %s via %s", timeText(ap.ResolvedAt, now), printable(by, false), text(string(ap.Surface)))
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
		b.WriteString(indent(printable(strings.TrimRight(d.Decision, "\n"), true)))
	}
	return b.String()
}

// argsText pretty-prints the arguments as the same JSON value, their
// strings readable: \u escapes become the characters they stand for (a
// reviewer reads "a && b", not "a \u0026\u0026 b"), except where JSON or a
// terminal needs them.
func argsText(args json.RawMessage) string {
	if len(args) == 0 {
		return "(none)"
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, args, "", "  "); err != nil {
		return printable(string(args), false)
	}
	return printable(string(readableJSON(buf.Bytes())), true)
}

// readableJSON rewrites the \u escapes in the strings of valid JSON as the
// characters they stand for, where JSON allows them literally. The result
// is the same JSON value.
func readableJSON(b []byte) []byte {
	out := make([]byte, 0, len(b))
	inString := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '"':
			inString = !inString
		case c == '\\' && inString:
			if r, n := jsonEscape(b[i:]); n > 0 && r >= 0x20 && r != '"' && r != '\\' {
				out = utf8.AppendRune(out, r)
				i += n - 1
				continue
			}
			// Any other escape, \" and \\ among them, stays as it is.
			out = append(out, c)
			if i+1 < len(b) {
				i++
				out = append(out, b[i])
			}
			continue
		}
		out = append(out, c)
	}
	return out
}

// jsonEscape decodes the \uXXXX escape (or surrogate pair) at the start of
// b, returning its rune and length, or 0 when there is none.
func jsonEscape(b []byte) (rune, int) {
	hex4 := func(b []byte) (rune, bool) {
		if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
			return 0, false
		}
		v, err := strconv.ParseUint(string(b[2:6]), 16, 16)
		return rune(v), err == nil
	}
	r, ok := hex4(b)
	switch {
	case !ok:
		return 0, 0
	case !utf16.IsSurrogate(r):
		return r, 6
	}
	if lo, ok := hex4(b[6:]); ok {
		if pair := utf16.DecodeRune(r, lo); pair != utf8.RuneError {
			return pair, 12
		}
	}
	return 0, 0 // a lone surrogate: keep it escaped
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
