package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	airlockhttp "github.com/airlock-dev/airlock/http"

	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/checkpoint"
	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/passkey"
	"github.com/airlock-dev/airlock/sqlite"
	"github.com/airlock-dev/airlock/visible"
)

func newAuditCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Read, verify and export the audit log",
		Long: `The audit log records every decision, approval and executed action, each
event hash-chained to the one before it: an edit, a deletion, an insertion
or a reordering breaks the chain at a sequence number that verify names.
These commands ask the Airlock server (--server, $AIRLOCK_TOKEN; see
'airlock --help'); verify and export with --db FILE read a database file
directly instead, read-only.`,
		Example: `  airlock audit tail -n 50 --kind decision
  airlock audit tail -f --agent coder-1
  airlock audit verify
  airlock audit checkpoint > checkpoint.note
  airlock audit verify --checkpoint checkpoint.note --key-file airlock.vkey
  airlock audit export --since 24h -o last-day.jsonl
  airlock audit verify --db airlock.db`,
	}
	cmd.AddCommand(newAuditTailCmd(), newAuditVerifyCmd(), newAuditCheckpointCmd(), newAuditExportCmd())
	return cmd
}

func newAuditVerifyCmd() *cobra.Command {
	var (
		dbPath string
		asJSON bool
		cf     checkpointFlags
	)
	cmd := &cobra.Command{
		Use:   "verify [--db FILE] [--checkpoint FILE]...",
		Short: "Check the audit log's hash chain",
		Long: `Verify walks the whole audit log in sequence order, in one consistent
snapshot, and checks that every event links to the one before it and that
its hash covers its contents. It prints the number of events and the head
(the last sequence number and its hash), or the first sequence number where
the chain breaks and why; then it exits 1.

The chain alone cannot tell a log truncated at its tail, or rewritten and
re-chained by someone holding the database: that is what signed checkpoints
are for ('airlock audit checkpoint'). Each --checkpoint FILE is checked
with the verifier key (--key, --key-file; without them, the server's, which
the server itself could lie about), then the log must still hold its
event: a log that ends before it is "truncated", one whose event there has
another hash is "rewritten". Any failure exits 1.

Without --db the server verifies its own log (a reviewer or admin token).
Verifying the file itself with --db trusts nothing but the file and the
verifier keys given.`,
		Example: `  airlock audit verify
  airlock audit verify --json
  airlock audit verify --db airlock.db
  airlock audit verify --checkpoint checkpoint.note
  airlock audit verify --db airlock.db --checkpoint a.note --checkpoint b.note --key-file airlock.vkey`,
		Args: argsNone(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			files, vkeys, err := cf.read()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			// verify checks the checkpoints against the log and prints
			// everything; failed reports an error reading the log.
			verify := func(rep airlock.ChainReport, events eventsFunc, failed func(error) error) error {
				// Every approval a passkey signed, against the key the log
				// registered to its reviewer.
				keys, err := passkey.VerifyLog(ctx, events)
				if err != nil {
					return failed(err)
				}
				var results []checkpointResult
				if len(files) > 0 {
					keys, err := checkpoint.ParseVerifierKeys(vkeys)
					if err != nil {
						return usageError("%v", err)
					}
					if results, err = checkCheckpoints(ctx, files, keys, rep, events); err != nil {
						return failed(err)
					}
				}
				return printVerify(cmd.OutOrStdout(), asJSON, rep, keys, results)
			}
			if dbPath == "" {
				c, err := newClient(cmd)
				if err != nil {
					return err
				}
				rep, err := c.Verify(ctx)
				if err != nil {
					return serverFailed(c, err)
				}
				if len(files) > 0 && len(vkeys) == 0 {
					ci, err := airlockhttp.Checkpoint(ctx, c)
					if err != nil {
						return serverFailed(c, err)
					}
					vkeys = []string{ci.Key}
					fmt.Fprintf(cmd.ErrOrStderr(), "airlock: checking the checkpoints with the server's verifier key %s; "+
						"--key or --key-file checks them with one you kept\n", ci.Key)
				}
				return verify(rep, clientEvents(c), func(err error) error { return serverFailed(c, err) })
			}
			if len(files) > 0 && len(vkeys) == 0 {
				return usageError("--checkpoint with --db needs the verifier key: --key KEY or --key-file FILE " +
					"('airlock serve' prints it at start; 'airlock audit checkpoint --json' shows it)")
			}
			return withDB(cmd, dbPath, func(db *sqlite.DB) error {
				rep, err := db.Verify(ctx)
				if err != nil {
					return storeFailed(err)
				}
				return verify(rep, db.Events, storeFailed)
			})
		},
	}
	f := cmd.Flags()
	dbFlag(f.StringVar, &dbPath)
	f.BoolVar(&asJSON, "json", false, "print the report as JSON")
	cf.add(cmd)
	return cmd
}

// printVerify prints the chain report and the checkpoints' results, and
// fails when any of them did.
func printVerify(out io.Writer, asJSON bool, rep airlock.ChainReport, keys passkey.LogReport, results []checkpointResult) error {
	var err error
	switch {
	case asJSON:
		err = writeJSON(out, struct {
			airlock.ChainReport
			Passkeys    passkey.LogReport  `json:"passkeys"`
			Checkpoints []checkpointResult `json:"checkpoints,omitempty"`
		}{rep, keys, results})
	default:
		fmt.Fprintln(out, chainReportText(rep))
		switch {
		case !keys.OK():
			fmt.Fprintf(out, "passkey approval at seq %d does not verify: %s\n", keys.FirstBad, keys.Problem)
		case keys.Approvals > 0:
			fmt.Fprintf(out, "ok: %s signed by the reviewers' registered passkeys\n", plural(keys.Approvals, "approval"))
		}
		for _, r := range results {
			fmt.Fprintln(out, r)
		}
	}
	if err != nil {
		return checkFailed(err)
	}
	ok := rep.OK() && keys.OK()
	for _, r := range results {
		ok = ok && r.OK
	}
	if !ok {
		return checkFailed(nil)
	}
	return nil
}

// chainReportText is the one-line verdict of verify.
func chainReportText(rep airlock.ChainReport) string {
	switch {
	case !rep.OK():
		return fmt.Sprintf("audit log broken at seq %d: %s (%s before it verify)",
			rep.FirstBad, rep.Problem, plural(rep.Events, "event"))
	case rep.Events == 0:
		return "ok: 0 events (the audit log is empty)"
	}
	return fmt.Sprintf("ok: %s, head seq %d sha256:%s", plural(rep.Events, "event"), rep.HeadSeq, rep.Head)
}

func newAuditExportCmd() *cobra.Command {
	var (
		dbPath, since, output string
		f                     airlock.EventFilter
	)
	cmd := &cobra.Command{
		Use:   "export [--db FILE] [-o FILE]",
		Short: "Write audit events as JSON Lines",
		Long: `Export writes the events of the audit log as JSON Lines, one event per line
in sequence order, with every field the chain covers (seq, time, headers,
the payload's exact JSON, prev and hash). It pages through the log, so a
log of any size exports in constant memory.

--since takes an RFC 3339 time, or a duration meaning that long ago (24h).
With -o the file is replaced only once the export is complete; it is
created with mode 0600, as events carry the agents' arguments.

Without --db it pages through the server's log (an agent token exports
only its agent's events).`,
		Example: `  airlock audit export > audit.jsonl
  airlock audit export --since 24h --kind approval.resolved -o approvals.jsonl
  airlock audit export --db airlock.db > audit.jsonl
  airlock audit export --db airlock.db --since 24h --agent coder-1 -o coder-1.jsonl
  airlock audit export --db airlock.db --since 2026-11-22T09:00:00Z --kind approval.resolved
  airlock audit export --db airlock.db --after 1234 --trace 4bf92f3577b34da6`,
		Args: argsNone(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if f.Since, err = parseSince(since, time.Now()); err != nil {
				return err
			}
			if f.AfterSeq < 0 {
				return usageError("--after %d: want a sequence number, 0 or more", f.AfterSeq)
			}
			toStdout := output == "" || output == "-"
			if !toStdout && dbPath != "" && sameFile(output, dbPath) {
				return usageError("-o %s is the database itself", output)
			}
			export := func(events eventsFunc, failed func(error) error) error {
				ctx := cmd.Context()
				if toStdout {
					if _, err := exportEvents(ctx, events, f, cmd.OutOrStdout()); err != nil {
						return failed(err)
					}
					return nil
				}
				var n int64
				err := writeFileAtomic(output, func(w io.Writer) (err error) {
					n, err = exportEvents(ctx, events, f, w)
					return err
				})
				if err != nil {
					return failed(err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "wrote %s to %s\n", plural(n, "event"), output)
				return nil
			}
			if dbPath == "" {
				c, err := newClient(cmd)
				if err != nil {
					return err
				}
				return export(clientEvents(c), func(err error) error {
					if errors.As(err, new(*airlock.Error)) {
						return serverInvalid(c, err)
					}
					return checkFailed(err) // writing the output failed
				})
			}
			return withDB(cmd, dbPath, func(db *sqlite.DB) error {
				return export(db.Events, func(err error) error { return checkFailed(errors.New(errorText(err))) })
			})
		},
	}
	fl := cmd.Flags()
	dbFlag(fl.StringVar, &dbPath)
	fl.StringVar(&since, "since", "", "only events at or after this time: RFC 3339, or a duration ago (24h)")
	fl.Int64Var(&f.AfterSeq, "after", 0, "only events after this sequence number")
	fl.StringVar(&f.Agent, "agent", "", "only this agent's events")
	fl.StringVar(&f.Kind, "kind", "", "only events of this kind (decision, approval.resolved, ...)")
	fl.StringVar(&f.TraceID, "trace", "", "only events of this trace")
	fl.StringVarP(&output, "output", "o", "", "write to this file instead of standard output")
	return cmd
}

// parseSince reads --since: an RFC 3339 time, or a duration before now.
func parseSince(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, usageError("--since %q: want an RFC 3339 time (2026-11-22T09:00:00Z) "+
		"or a duration meaning that long ago (24h, 90m)", s)
}

// eventsFunc returns a page of the audit log: a store's Events, or the
// server's (clientEvents).
type eventsFunc func(context.Context, airlock.EventFilter) ([]airlock.Event, error)

// clientEvents pages through the server's audit log.
func clientEvents(c *client.Client) eventsFunc {
	return func(ctx context.Context, f airlock.EventFilter) ([]airlock.Event, error) {
		page, err := c.Events(ctx, f)
		return page.Events, err
	}
}

// exportEvents writes the events f selects as JSON Lines, a page at a time,
// and returns how many it wrote.
func exportEvents(ctx context.Context, events eventsFunc, f airlock.EventFilter, w io.Writer) (int64, error) {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	// The chain covers the payload's exact bytes: keep <, > and & as they are.
	enc.SetEscapeHTML(false)
	f.Limit = airlock.MaxPageSize
	var n int64
	for {
		evs, err := events(ctx, f)
		if err != nil {
			return n, err
		}
		for i := range evs {
			if err := enc.Encode(&evs[i]); err != nil {
				return n, err
			}
		}
		n += int64(len(evs))
		if len(evs) < f.Limit {
			break
		}
		f.AfterSeq = evs[len(evs)-1].Seq
	}
	return n, bw.Flush()
}

// writeFileAtomic writes path through a temporary file in the same
// directory, renamed over path only once write and a sync succeeded.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	return writeFileVia(path, write, os.Rename)
}

// writeFileVia writes a temporary file (mode 0600) in path's directory and,
// once write and a sync succeeded, gives it path's name with place:
// os.Rename replaces a file there, os.Link never does.
func writeFileVia(path string, write func(io.Writer) error, place func(tmp, path string) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	err = write(tmp)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = place(tmp.Name(), path)
	}
	os.Remove(tmp.Name()) // gone after a rename; after a link, the spare name
	return err
}

// sameFile reports whether a and b name the same existing file.
func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// dbFlag declares --db.
func dbFlag(stringVar func(p *string, name, value, usage string), p *string) {
	stringVar(p, "db", "", "read this airlock SQLite database file directly instead of asking the server (never created)")
}

// withDB opens the existing database at path, runs fn and closes it. The
// commands never create a database.
func withDB(cmd *cobra.Command, path string, fn func(*sqlite.DB) error) (err error) {
	if err := checkDBFile(cmd, path); err != nil {
		return err
	}
	db := sqlite.NewDB(path)
	db.ReadOnly = true // these commands only read: never migrate or write
	if err := db.Open(cmd.Context()); err != nil {
		return storeFailed(err)
	}
	defer func() {
		if cerr := db.Close(); cerr != nil && err == nil {
			err = storeFailed(cerr)
		}
	}()
	return fn(db)
}

// sqliteMagic starts every SQLite database file.
const sqliteMagic = "SQLite format 3\x00"

// checkDBFile makes sure path is an existing SQLite file, before Open would
// create one (SQLite makes a database of a missing or empty file).
func checkDBFile(cmd *cobra.Command, path string) error {
	if path == "" {
		return usageError("%s needs --db FILE, the airlock database", cmd.CommandPath())
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return usageError("--db %s: no such file (airlock does not create a database here: name an existing one)", path)
	case err != nil:
		return checkFailed(err)
	case fi.IsDir():
		return usageError("--db %s is a directory, not a database file", path)
	case fi.Size() == 0:
		return checkFailed(fmt.Errorf("%s is empty, not an airlock database", path))
	}
	file, err := os.Open(path)
	if err != nil {
		return checkFailed(err)
	}
	defer file.Close()
	head := make([]byte, len(sqliteMagic))
	if _, err := io.ReadFull(file, head); err != nil || string(head) != sqliteMagic {
		return checkFailed(fmt.Errorf("%s is not a SQLite database", path))
	}
	return nil
}

// storeFailed reports a store error as a failed check.
func storeFailed(err error) error { return checkFailed(errors.New(errorText(err))) }

// errorText is what a person reads of an error: the message of an
// application error, the whole text of any other (a file, a pipe).
func errorText(err error) string {
	var ae *airlock.Error
	if errors.As(err, &ae) {
		return ae.Message
	}
	return err.Error()
}

// argsNone is cobra.NoArgs with a usage exit code.
func argsNone() cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usageError("%s takes no arguments, got %q", c.CommandPath(), args)
		}
		return nil
	}
}

// writeJSON prints v as indented JSON, leaving <, > and & readable.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// printList prints items as a JSON array (never null) with asJSON, else
// as table prints them; a failed write is a failed command.
func printList[T any](w io.Writer, asJSON bool, items []T, table func(io.Writer, []T) error) error {
	var err error
	if asJSON {
		if items == nil {
			items = []T{}
		}
		err = writeJSON(w, items)
	} else {
		err = table(w, items)
	}
	if err != nil {
		return checkFailed(err)
	}
	return nil
}

// plural returns "1 event", "2 events".
func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func newAuditTailCmd() *cobra.Command {
	var (
		n      int
		follow bool
		asJSON bool
		f      airlock.EventFilter
	)
	cmd := &cobra.Command{
		Use:   "tail [-n 20] [-f] [--kind KIND] [--agent AGENT]",
		Short: "Print the last events of the server's audit log",
		Long: `Tail prints the last n events of the server's audit log as a table, oldest
first: sequence number, time, kind, agent, outcome, approval request and
trace. A refusal (access.refused) shows who was refused (role:name) where
the agent goes, and at the end what on: the request's agent and action, or
the route. With -f it then follows the log, printing each new event as it is
recorded, until interrupted (Ctrl-C); it reconnects by itself when the
stream breaks, missing nothing.

--kind takes an exact kind (decision, approval.resolved, ...), or a prefix
ending in a dot for a family (approval.). An agent token sees only its own
agent's events.`,
		Example: `  airlock audit tail
  airlock audit tail -n 100 --kind decision --agent coder-1
  airlock audit tail -f --kind approval.
  airlock audit tail -n 0 -f --json`,
		Args: argsNone(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if n < 0 || n > 10*airlock.MaxPageSize {
				return usageError("-n %d: want 0 to %d", n, 10*airlock.MaxPageSize)
			}
			c, err := newClient(cmd)
			if err != nil {
				return err
			}
			ctx, out := cmd.Context(), cmd.OutOrStdout()
			prefix := strings.HasSuffix(f.Kind, ".")
			match := func(e airlock.Event) bool {
				switch {
				case f.TraceID != "" && e.TraceID != f.TraceID, f.Agent != "" && e.Agent != f.Agent:
					return false
				case prefix:
					return strings.HasPrefix(e.Kind, f.Kind)
				}
				return f.Kind == "" || e.Kind == f.Kind
			}
			filter := f
			if prefix {
				filter.Kind = "" // the page API matches kinds exactly: filter here
			}
			evs, last, err := c.LastEvents(ctx, filter, match, n)
			if err != nil {
				return serverInvalid(c, err)
			}
			print := func(e airlock.Event) error {
				if asJSON {
					return jsonLine(out, e)
				}
				_, err := fmt.Fprintln(out, eventRow(e))
				return err
			}
			if !asJSON && (len(evs) > 0 || follow) {
				fmt.Fprintln(out, eventHeader)
			}
			for _, e := range evs {
				if err := print(e); err != nil {
					return checkFailed(err)
				}
			}
			if !follow {
				if len(evs) == 0 && !asJSON {
					fmt.Fprintln(out, "no events match")
				}
				return nil
			}
			err = c.StreamEvents(ctx, last, f.Kind, f.Agent, func(e airlock.Event) error {
				if !match(e) {
					return nil
				}
				return print(e)
			})
			if ctx.Err() != nil {
				return nil // interrupted: the normal end of -f
			}
			return serverFailed(c, err)
		},
	}
	fl := cmd.Flags()
	fl.IntVarP(&n, "lines", "n", 20, "print the last n events")
	fl.BoolVarP(&follow, "follow", "f", false, "then print new events as they are recorded, until interrupted")
	fl.StringVar(&f.Kind, "kind", "", "only events of this kind, or of this family with a trailing dot (approval.)")
	fl.StringVar(&f.Agent, "agent", "", "only this agent's events")
	fl.StringVar(&f.TraceID, "trace", "", "only events of this trace")
	fl.BoolVar(&asJSON, "json", false, "print each event as one JSON object per line")
	return cmd
}

// eventHeader and eventRow lay out tail's table in fixed columns, so that
// followed events line up under the header.
const eventHeader = "SEQ     TIME                  KIND                 AGENT           OUTCOME       APPROVAL                              TRACE"

func eventRow(e airlock.Event) string {
	dash := func(s string) string {
		if s == "" {
			return "-"
		}
		return visible.Escaped(s)
	}
	who, what := e.Agent, ""
	if e.Kind == airlock.EventAccessRefused {
		who, what = refusedRow(e)
	}
	return fmt.Sprintf("%-7d %-21s %-20s %-15s %-13s %-37s %s%s", e.Seq, e.Time.UTC().Format(time.RFC3339),
		dash(e.Kind), dash(who), dash(e.Outcome), dash(e.ApprovalID), dash(e.TraceID), what)
}

// refusedRow says who a refusal refused (the token's role and name, "-"
// without one) instead of the agent it is filed under, and what on: the
// request's agent and action, or the route.
func refusedRow(e airlock.Event) (who, what string) {
	var r airlock.AccessRefused
	if err := json.Unmarshal(e.Payload, &r); err != nil {
		return e.Agent, ""
	}
	what = r.Method + " " + r.Path
	if r.Action != "" {
		what = e.Agent + ": " + r.Action
	}
	return r.Subject, "  " + visible.Escaped(what)
}
