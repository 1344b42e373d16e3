package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/visible"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func newGrantsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "grants",
		Short: "List, show and revoke standing grants",
		Long: `A standing grant lets one agent (or a glob of agents) run what it covers
of one tool — a command by its leading words, the files under a directory,
or one exact action — without asking, up to the tier it was approved at,
until it expires or is revoked. A person makes every one, with 'airlock
approvals approve ID --remember 7d'. A grant never loosens a deny, a floor
or needs-human (docs/POLICY.md, "Grants").`,
		Args: argsNone(),
	}
	cmd.AddCommand(newGrantsListCmd(), newGrantsShowCmd(), newGrantsRevokeCmd(), newGrantsProposalsCmd(), newGrantsRatifyCmd(), newGrantsDismissCmd())
	return cmd
}

func newGrantsListCmd() *cobra.Command {
	var (
		agent       string
		all, asJSON bool
		limit       int
	)
	cmd := &cobra.Command{
		Use:   "list [--agent A] [--all]",
		Short: "List the grants in force, newest first",
		Example: `  airlock grants list
  airlock grants list --agent coder-1 --all --json`,
		Args: argsNone(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := newClient(cmd)
			if err != nil {
				return err
			}
			gs, err := c.Grants(cmd.Context(), agent, !all, limit)
			if err != nil {
				return serverInvalid(c, err)
			}
			return printList(cmd.OutOrStdout(), asJSON, gs, printGrantTable)
		},
	}
	f := cmd.Flags()
	f.StringVar(&agent, "agent", "", "only the grants covering this agent")
	f.BoolVar(&all, "all", false, "expired and revoked grants too")
	f.IntVar(&limit, "limit", 0, "at most this many (default 50, at most 1000)")
	f.BoolVar(&asJSON, "json", false, "print the grants as JSON")
	return cmd
}

func newGrantsShowCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "show ID",
		Short:   "Show one grant: what it covers, who granted it and why",
		Example: `  airlock grants show 01937b6c-3f9e-7c4a-9d2e-6a1b2c3d4e5f`,
		Args:    argsExactly(1, "one grant ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := newClient(cmd)
			if err != nil {
				return err
			}
			g, err := c.Grant(cmd.Context(), args[0])
			if err != nil {
				return serverInvalid(c, err)
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), g)
			}
			_, err = io.WriteString(cmd.OutOrStdout(), grantText(&g, time.Now()))
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the grant as JSON")
	return cmd
}

func newGrantsRevokeCmd() *cobra.Command {
	var (
		reason string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:     "revoke ID [--reason R]",
		Short:   "Revoke a grant: what it covered asks again, on every replica, at once",
		Example: `  airlock grants revoke 01937b6c-3f9e-7c4a-9d2e-6a1b2c3d4e5f --reason "the release is over"`,
		Args:    argsExactly(1, "one grant ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := newClient(cmd)
			if err != nil {
				return err
			}
			g, err := c.RevokeGrant(cmd.Context(), args[0], strings.TrimSpace(reason))
			if err != nil {
				return serverFailed(c, err)
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), g)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "revoked grant %s: %s asks again\n", g.ID, grantScope(&g))
			return err
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why, for the record")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the revoked grant as JSON")
	return cmd
}

func newGrantsProposalsCmd() *cobra.Command {
	var (
		agent  string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "proposals [--agent A]",
		Short: "Grants Airlock proposes from the record, with their evidence",
		Long: `Proposals reads the requests settled in the last 30 days and proposes a
standing grant for every shape of action (a command by its program and
subcommand, a directory, an exact action) that people approved at least 5
times, at least 2 of them, taking at least 10 seconds in the median, and
never rejected; none a live grant covers already, nor one a policy keeps
out. Each comes with its evidence — every approval, who gave it and how
long they took — and the command that ratifies it. Nothing is granted
until a person ratifies it.`,
		Example: `  airlock grants proposals
  airlock grants proposals --agent coder-1 --json`,
		Args: argsNone(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := newClient(cmd)
			if err != nil {
				return err
			}
			ps, err := c.Proposals(cmd.Context(), agent)
			if err != nil {
				return serverInvalid(c, err)
			}
			return printList(cmd.OutOrStdout(), asJSON, ps, printProposals)
		},
	}
	cmd.Flags().StringVar(&agent, "agent", "", "only this agent's proposals")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the proposals as JSON")
	return cmd
}

func printProposals(w io.Writer, ps []airlock.Proposal) error {
	if len(ps) == 0 {
		_, err := fmt.Fprintln(w, "no proposals: no shape of action was approved often enough, by enough people, and never rejected")
		return err
	}
	for i := range ps {
		p := &ps[i]
		g := &p.Grant
		fmt.Fprintf(w, "%s, up to %s: approved %d times by %s, median %s; would have run %d asks of the last 30 days without a person\n",
			grantScope(g), g.MaxTier, len(p.Evidence), visible.Escaped(strings.Join(p.Reviewers, ", ")),
			time.Duration(p.MedianWait).Round(time.Second), p.Covered)
		for _, ev := range p.Evidence {
			fmt.Fprintf(w, "  approval %s by %s after %s at %s (sha256:%s)\n", ev.ApprovalID, visible.Escaped(ev.Reviewer),
				time.Duration(ev.Waited).Round(time.Second), ev.Resolved.UTC().Format(time.RFC3339), ev.ActionHash.String()[:12])
		}
		fmt.Fprintf(w, "  ratify:  airlock grants ratify --agent %s --tool %s %s --ttl 7d\n", shellQuote(g.Agent), shellQuote(g.Tool), shapeFlag(&g.Pattern))
		fmt.Fprintf(w, "  dismiss: airlock grants dismiss --agent %s --tool %s %s --reason …\n\n", shellQuote(g.Agent), shellQuote(g.Tool), shapeFlag(&g.Pattern))
	}
	return nil
}

// shapeFlag is the ratify flag that names a pattern.
func shapeFlag(p *airlock.GrantPattern) string {
	switch p.Kind {
	case airlock.PatternCommand:
		return "--command " + shellQuote(strings.Join(p.Command, " "))
	case airlock.PatternPath:
		return "--path " + shellQuote(p.Path)
	}
	return "--exact sha256:" + p.Hash.String()
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:@=") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func newGrantsRatifyCmd() *cobra.Command {
	var (
		ps     proposalFlags
		ttl    time.Duration
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "ratify --agent A --tool T {--command WORDS | --path DIR | --exact HASH} [--ttl 7d]",
		Short: "Make the grant a current proposal describes",
		Long: `Ratify makes the standing grant of one of the current proposals
('airlock grants proposals' prints the command for each), as the token's
person: an admin, or a reviewer of the requests it rests on. A proposal
that no longer holds (a rejection since, a policy change) is not found.`,
		Example: `  airlock grants ratify --agent coder-1 --tool Bash --command "npm test" --ttl 7d`,
		Args:    argsNone(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			shape, err := ps.shape("ratify")
			if err != nil {
				return err
			}
			c, err := newClient(cmd)
			if err != nil {
				return err
			}
			g, err := c.Ratify(cmd.Context(), ps.agent, ps.tool, shape, ttl, strings.TrimSpace(ps.reason))
			if err != nil {
				return serverFailed(c, err)
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), g)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "granted %s: %s without asking, up to %s, until %s (%s)\n",
				g.ID, grantScope(&g), g.MaxTier, g.Expires.UTC().Format(time.RFC3339), visible.Escaped(g.Reason))
			return err
		},
	}
	f := cmd.Flags()
	ps.register(f)
	f.Var(daysValue{&ttl}, "ttl", "how long the grant lasts (7d, 36h; default 7 days, at most 90)")
	f.BoolVar(&asJSON, "json", false, "print the grant as JSON")
	return cmd
}

func newGrantsDismissCmd() *cobra.Command {
	var ps proposalFlags
	cmd := &cobra.Command{
		Use:   "dismiss --agent A --tool T {--command WORDS | --path DIR | --exact HASH} [--reason R]",
		Short: "Dismiss a current proposal until its evidence changes",
		Long: `Dismiss says no to one of the current proposals, as the token's person
(an admin, or a reviewer of the requests it rests on), in the audit log
(grant.proposal_dismissed). It is not proposed again until an approval it
did not rest on comes to count for it.`,
		Example: `  airlock grants dismiss --agent coder-1 --tool Bash --command "npm test" --reason "tests touch the network"`,
		Args:    argsNone(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			shape, err := ps.shape("dismiss")
			if err != nil {
				return err
			}
			c, err := newClient(cmd)
			if err != nil {
				return err
			}
			d, err := c.Dismiss(cmd.Context(), ps.agent, ps.tool, shape, strings.TrimSpace(ps.reason))
			if err != nil {
				return serverFailed(c, err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "dismissed: %s, resting on %d approvals; proposed again once another approval counts for it\n",
				grantScope(&d.Grant), len(d.Evidence))
			return err
		},
	}
	ps.register(cmd.Flags())
	return cmd
}

// proposalFlags name a current proposal, as 'airlock grants proposals'
// prints it.
type proposalFlags struct {
	agent, tool, command, dir, exact, reason string
}

func (p *proposalFlags) register(f *pflag.FlagSet) {
	f.StringVar(&p.agent, "agent", "", "the proposal's agent")
	f.StringVar(&p.tool, "tool", "", "the proposal's tool")
	f.StringVar(&p.command, "command", "", "the proposal's command words")
	f.StringVar(&p.dir, "path", "", "the proposal's directory")
	f.StringVar(&p.exact, "exact", "", "the proposal's exact action hash")
	f.StringVar(&p.reason, "reason", "", "why, for the record")
}

// shape is the proposal's shape, or a usage error of verb.
func (p *proposalFlags) shape(verb string) (airlock.GrantPattern, error) {
	named := 0
	for _, v := range []string{p.command, p.dir, p.exact} {
		if v != "" {
			named++
		}
	}
	switch {
	case p.agent == "" || p.tool == "":
		return airlock.GrantPattern{}, usageError("%s needs --agent and --tool, as 'airlock grants proposals' prints them", verb)
	case named != 1:
		return airlock.GrantPattern{}, usageError("name the proposal's shape with one of --command, --path or --exact")
	case p.command != "":
		return airlock.GrantPattern{Kind: airlock.PatternCommand, Command: strings.Fields(p.command)}, nil
	case p.dir != "":
		return airlock.GrantPattern{Kind: airlock.PatternPath, Path: p.dir}, nil
	}
	h, err := airlock.ParseHash(p.exact)
	if err != nil {
		return airlock.GrantPattern{}, usageError("--exact: %s", airlock.ErrorMessage(err))
	}
	return airlock.GrantPattern{Kind: airlock.PatternExact, Hash: h}, nil
}

// grantScope says what a grant covers: "coder-1 may run `npm test …` (Bash)".
func grantScope(g *airlock.Grant) string {
	return fmt.Sprintf("%s may run %s (%s)", visible.Escaped(g.Agent), visible.Escaped(g.Pattern.String()), visible.Escaped(g.Tool))
}

// grantState is live, expired or revoked, as of now.
func grantState(g *airlock.Grant, now time.Time) string {
	switch {
	case !g.Revoked.IsZero():
		return "revoked"
	case !now.Before(g.Expires):
		return "expired"
	}
	return "live"
}

func grantText(g *airlock.Grant, now time.Time) string {
	var b strings.Builder
	line := func(label, format string, args ...any) {
		fmt.Fprintf(&b, "%-11s %s\n", label+":", fmt.Sprintf(format, args...))
	}
	line("grant", "%s (%s)", g.ID, grantState(g, now))
	line("covers", "%s, up to %s, %s", grantScope(g), g.MaxTier, g.Outcome)
	by := visible.Escaped(g.GrantedBy)
	if g.Approval != "" {
		by += " from approval " + visible.Escaped(g.Approval)
	}
	line("granted", "by %s at %s", by, g.Created.UTC().Format(time.RFC3339))
	if g.Reason != "" {
		line("reason", "%s", visible.Escaped(g.Reason))
	}
	line("expires", "%s", g.Expires.UTC().Format(time.RFC3339))
	if g.Budget != nil {
		c := airlock.BudgetCharge{Key: g.BudgetKey(), Budget: *g.Budget, Used: g.BudgetUsed, Read: now}
		line("budget", "%s", c.String())
	}
	if !g.Revoked.IsZero() {
		line("revoked", "by %s at %s: %s", visible.Escaped(g.RevokedBy), g.Revoked.UTC().Format(time.RFC3339), visible.Escaped(g.RevokeReason))
	}
	return b.String()
}

func printGrantTable(w io.Writer, gs []airlock.Grant) error {
	if len(gs) == 0 {
		_, err := fmt.Fprintln(w, "no grants")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tCOVERS\tUP TO\tBY\tEXPIRES")
	now := time.Now()
	for i := range gs {
		g := &gs[i]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", g.ID, grantState(g, now), grantScope(g), g.MaxTier,
			visible.Escaped(g.GrantedBy), g.Expires.UTC().Format(time.RFC3339))
	}
	return tw.Flush()
}

// daysValue is a duration flag that also takes whole days ("7d").
type daysValue struct{ d *time.Duration }

func (v daysValue) String() string {
	if v.d == nil || *v.d == 0 {
		return ""
	}
	if *v.d%(24*time.Hour) == 0 {
		return strconv.FormatInt(int64(*v.d/(24*time.Hour)), 10) + "d"
	}
	return v.d.String()
}

func (v daysValue) Set(s string) error {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil || days <= 0 {
			return fmt.Errorf("%q: want whole days (7d) or a duration (36h)", s)
		}
		*v.d = time.Duration(days) * 24 * time.Hour
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return fmt.Errorf("%q: want whole days (7d) or a duration (36h)", s)
	}
	*v.d = d
	return nil
}

func (daysValue) Type() string { return "duration" }
