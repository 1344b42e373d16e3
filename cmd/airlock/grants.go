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
	cmd.AddCommand(newGrantsListCmd(), newGrantsShowCmd(), newGrantsRevokeCmd())
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
