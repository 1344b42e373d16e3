package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/visible"
)

func newTrustCmd() *cobra.Command {
	var (
		since  string
		asJSON bool
		f      airlock.TrustFilter
	)
	cmd := &cobra.Command{
		Use:   "trust [--agent A] [--class C] [--since 720h]",
		Short: "Show how far each agent can be trusted, per action class",
		Long: `Trust prints the server's trust records aggregated per agent and action
class: how many enforced decisions there were and how they ended (success:
the action ran; denied: refused, skipped or rejected; timeout: nobody
decided in time; failure: allowed, but running it failed), how the
requests a person had to decide went (approved, rejected, expired), the
approval rate (approved out of those three) and the median time from
request to decision.

A class an agent's requests are always approved for, quickly, is a
candidate for a narrower policy rule. An agent token sees only its own
agent.

For reviewers and admins, the review signals follow, by reviewer and by
agent: approvals given faster than the request could be read (2 s, and
25 ms for every byte of its summary and arguments, at most 30 s), and
runs of 30 approvals or more without a rejection. They block nothing;
they say where approving became a habit. A fast approval does not count
toward a proposed grant (airlock grants proposals). Since defaults to 30
days ago for them.

--since takes an RFC 3339 time, or a duration meaning that long ago (720h).`,
		Example: `  airlock trust
  airlock trust --agent coder-1 --since 720h
  airlock trust --class fs.delete --json`,
		Args: argsNone(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if f.Since, err = parseSince(since, time.Now()); err != nil {
				return err
			}
			c, err := newClient(cmd)
			if err != nil {
				return err
			}
			sums, err := c.Trust(cmd.Context(), f)
			if err != nil {
				return serverInvalid(c, err)
			}
			if err := printList(cmd.OutOrStdout(), asJSON, sums, printTrustTable); err != nil || asJSON {
				return err
			}
			// The rubber-stamp signals name reviewers: an agent's token
			// does not read them, and sees the table alone.
			sig, err := c.ReviewSignals(cmd.Context(), f.Agent, f.Since)
			if airlock.ErrorCode(err) == airlock.EUNAUTHORIZED {
				return nil
			}
			if err != nil {
				return serverInvalid(c, err)
			}
			return printReviewSignals(cmd.OutOrStdout(), &sig)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.Agent, "agent", "", "only this agent")
	fl.Func("class", "only this action class (fs.write, process.exec, ...)", func(s string) error {
		f.Class = airlock.Class(s)
		return nil
	})
	fl.StringVar(&since, "since", "", "only records at or after this time: RFC 3339, or a duration ago (720h)")
	fl.BoolVar(&asJSON, "json", false, "print the aggregates as JSON")
	return cmd
}

// printTrustTable prints one row per agent and class.
func printTrustTable(out io.Writer, sums []airlock.TrustSummary) error {
	if len(sums) == 0 {
		_, err := fmt.Fprintln(out, "no trust records match")
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "AGENT\tCLASS\tTOTAL\tSUCCESS\tDENIED\tTIMEOUT\tFAILURE\tAPPROVED\tREJECTED\tEXPIRED\tRATE\tMEDIAN")
	for _, s := range sums {
		decided := s.Approved + s.Rejected + s.Expired
		rate, median := "-", "-"
		if decided > 0 {
			rate = fmt.Sprintf("%.0f%%", 100*s.ApprovalRate)
			median = decisionTime(s.MedianDecision)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\n",
			visible.Escaped(s.Agent), visible.Escaped(string(s.Class)), s.Total,
			s.Counts[airlock.TrustSuccess], s.Counts[airlock.TrustDenied], s.Counts[airlock.TrustTimeout], s.Counts[airlock.TrustFailure],
			s.Approved, s.Rejected, s.Expired, rate, median)
	}
	return tw.Flush()
}

// decisionTime prints a median time to decision to a useful precision:
// 850ms, 42s, 3m05s, 2h10m.
func decisionTime(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return remaining(d)
}

// printReviewSignals prints the review signals by reviewer and by agent,
// each flag on its own line.
func printReviewSignals(out io.Writer, sig *airlock.ReviewSignals) error {
	fmt.Fprintf(out, "\nreview signals since %s (fast: approved faster than it could be read)\n", sig.Since.UTC().Format(time.RFC3339))
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	for _, group := range []struct {
		title string
		stats []airlock.ReviewStats
	}{{"REVIEWER", sig.Reviewers}, {"AGENT", sig.Agents}} {
		if len(group.stats) == 0 {
			continue
		}
		fmt.Fprintf(tw, "%s\tAPPROVED\tREJECTED\tFAST\tSTREAK\tLONGEST\tFLAGS\n", group.title)
		for _, s := range group.stats {
			flags := strings.Join(s.Flags, "; ")
			if flags == "" {
				flags = "-"
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s\n", visible.Escaped(s.Name), s.Approved, s.Rejected, s.Fast, s.Streak, s.Longest, flags)
		}
	}
	if len(sig.Reviewers)+len(sig.Agents) == 0 {
		fmt.Fprintln(tw, "no request settled by a person")
	}
	return tw.Flush()
}
