package main

import (
	"context"
	"errors"
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
				seq, readErr := pagedEvents(cmd.Context(), events, f)
				rep, err := g.Backtest(cmd.Context(), seq)
				return rep, errors.Join(err, *readErr)
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

// pagedEvents yields the events f selects up to the log's head when it
// starts — a consistent prefix of an append-only log, however much is
// appended meanwhile — a page at a time, the next page read while the
// current one is replayed. A read error ends the sequence and is left in
// *err for the caller. Reading never blocks the store's writer.
func pagedEvents(ctx context.Context, events eventsFunc, f airlock.EventFilter) (func(yield func(airlock.Event) bool), *error) {
	var readErr error
	return func(yield func(airlock.Event) bool) {
		head := int64(-1)
		if last, err := events(ctx, airlock.EventFilter{Newest: true, Limit: 1}); err != nil {
			readErr = err
			return
		} else if len(last) > 0 {
			head = last[0].Seq
		}
		type result struct {
			page []airlock.Event
			err  error
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		pages := make(chan result, 1)
		go func() {
			defer close(pages)
			f.Limit = airlock.MaxPageSize
			for {
				page, err := events(ctx, f)
				select {
				case pages <- result{page, err}:
				case <-ctx.Done():
					return
				}
				if err != nil || len(page) < f.Limit || page[len(page)-1].Seq >= head {
					return
				}
				f.AfterSeq = page[len(page)-1].Seq
			}
		}()
		for r := range pages {
			if r.err != nil {
				readErr = r.err
				return
			}
			for _, e := range r.page {
				if e.Seq > head || !yield(e) {
					return
				}
			}
		}
	}, &readErr
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
