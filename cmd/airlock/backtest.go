package main

import (
	"fmt"
	"io"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/gate"
	"github.com/airlock-dev/airlock/sqlite"
	"github.com/airlock-dev/airlock/visible"
	"github.com/spf13/cobra"
)

func newPolicyBacktestCmd() *cobra.Command {
	var (
		dbPath, since string
		asJSON        bool
		f             airlock.EventFilter
	)
	cmd := &cobra.Command{
		Use:   "backtest FILE... [--since 7d] [--agent A] [--db FILE]",
		Short: "Replay recorded decisions through a changed policy and show what changes",
		Long: `Backtest replays the decisions of the audit log — each action with its
stored arguments — through the policy stack of FILE... (from the top layer
down, as serve stacks them) and prints what would change: counts by old
outcome → new outcome with examples (their audit sequence numbers), how
many asks a person would no longer be asked, which actions would newly run
without a person (those above the write tier first of all), and which
would newly be denied. It reads the server's log (a reviewer or admin
token), or a database file with --db; it writes nothing. Grants and
sessions' pushed policies are left out: what is tested is the files.

--since takes an RFC 3339 time, or a duration meaning that long ago (168h,
or 7d).`,
		Example: `  airlock policy backtest org.yaml project.yaml --since 7d
  airlock policy backtest new.yaml --db airlock-data/airlock.db --agent coder-1 --json`,
		Args: argsAtLeast(1, "at least one policy file"),
		RunE: func(cmd *cobra.Command, files []string) error {
			var err error
			if f.Since, err = parseSinceDays(since, time.Now()); err != nil {
				return err
			}
			g, _, err := loadLayers(files)
			if err != nil {
				return checkFailed(err)
			}
			f.Kind = airlock.EventDecision
			run := func(events eventsFunc) (gate.BacktestReport, error) {
				return g.BacktestLog(cmd.Context(), events, f)
			}
			var rep gate.BacktestReport
			if dbPath == "" {
				c, err := newClient(cmd)
				if err != nil {
					return err
				}
				if rep, err = run(clientEvents(c)); err != nil {
					return serverInvalid(c, err)
				}
			} else if err := withDB(cmd, dbPath, func(db *sqlite.DB) error {
				var err error
				rep, err = run(db.Events)
				return err
			}); err != nil {
				return storeFailed(err)
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), rep)
			}
			return printBacktest(cmd.OutOrStdout(), &rep)
		},
	}
	fl := cmd.Flags()
	dbFlag(fl.StringVar, &dbPath)
	fl.StringVar(&since, "since", "", "only decisions at or after this time: RFC 3339, or a duration ago (7d, 24h)")
	fl.StringVar(&f.Agent, "agent", "", "only this agent's decisions")
	fl.BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

// parseSinceDays is parseSince that also takes whole days (7d).
func parseSinceDays(s string, now time.Time) (time.Time, error) {
	var d time.Duration
	if (daysValue{&d}).Set(s) == nil && len(s) > 1 && s[len(s)-1] == 'd' {
		return now.Add(-d), nil
	}
	return parseSince(s, now)
}

func printBacktest(w io.Writer, r *gate.BacktestReport) error {
	fmt.Fprintf(w, "replayed %d decisions", r.Replayed)
	if r.Skipped > 0 {
		fmt.Fprintf(w, " (%d skipped: their action could not be read back)", r.Skipped)
	}
	fmt.Fprintln(w)
	if len(r.Changes) == 0 {
		_, err := fmt.Fprintln(w, "no decision changes")
		return err
	}
	fmt.Fprintf(w, "asks avoided: %d; newly run without a person: %d (above write: %d); newly denied: %d\n",
		r.AsksAvoided, r.NewlyRun, r.NewlyRunAboveWrite, r.NewlyDenied)
	for _, c := range r.Changes {
		fmt.Fprintf(w, "\n%s → %s: %d\n", c.From, c.To, c.Count)
		for _, ex := range c.Examples {
			fmt.Fprintf(w, "  seq %d  %s  %s (%s)  now by %s\n", ex.Seq, visible.Escaped(ex.Agent), visible.Escaped(ex.Tool), ex.Tier,
				visible.Escaped(ex.DecidedBy))
		}
	}
	return nil
}
