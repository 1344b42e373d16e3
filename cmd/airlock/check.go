package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/mcpcatalog"
	"github.com/airlock-dev/airlock/visible"
)

// exitPending is check --no-wait's exit code when a person must decide.
const exitPending = 3

func newCheckCmd() *cobra.Command {
	var (
		af             actionFlags
		noWait, asJSON bool
		timeout        time.Duration
		resume         string
	)
	cmd := &cobra.Command{
		Use:   "check {--agent AGENT --tool TOOL [--args JSON] | --resume ID}",
		Short: "Ask the server whether an agent may run an action",
		Long: `Check asks the server whether the agent may run the action, exactly as an
agent's gate does: the server decides, records the decision and, when the
policy asks a person, queues an approval request. Check prints the
decision on one line (outcome, class, risk tier, the rule that decided)
and, for an ask, waits until the request is approved, rejected or expires,
showing on standard error who may decide and how long is left.

Stopping the wait (Ctrl-C, --timeout, --no-wait) leaves the request
pending: wait on it again with 'airlock check --resume ID', which ends as
the check would have (allowed, rejected, expired), or withdraw it with
'airlock approvals cancel ID'. The same check run again also joins the
pending request, and once it is approved runs on that approval — once: an
approval lets one check through. After a rejection or an expiry the same
check asks anew (a new request); --resume ID tells what became of the old
one.

The token must be an agent token of --agent, or an admin token.

Exit codes:
  0  the action may run (auto, notify, or approved)
  1  it may not: denied, rejected, expired, suggested, needs-human, ... (the
     refusal code and message are printed), or the server could not be asked
  2  the command line was wrong
  3  --no-wait: a person must decide; the approval request's ID is printed`,
		Example: `  airlock check --agent coder-1 --tool Bash --args '{"command":"git push"}'
  airlock check --agent coder-1 --tool write_file --args '{"path":"/etc/hosts"}' --json
  airlock check --agent coder-1 --tool deploy --no-wait   # exit 3 and the approval ID when a person must decide
  airlock check --agent coder-1 --tool deploy --timeout 5m --trace 4bf92f3577b34da6
  airlock check --resume 0193a5c2-7d4e-7b1a-9c3f-2e8d1f6a4b70   # wait again on a request left pending`,
		Args: argsNone(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if timeout < 0 {
				return usageError("--timeout takes a positive duration (5m), or 0 to wait until the request is settled")
			}
			var a airlock.Action
			if resume == "" {
				var err error
				if a, err = af.action("check"); err != nil {
					return err
				}
			} else if err := resumeAlone(cmd); err != nil {
				return err
			}
			c, err := newClient(cmd)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			var enf airlock.Enforcement
			if resume != "" {
				enf, err = c.Resume(ctx, resume, 0)
			} else {
				enf, err = c.CheckWait(ctx, a, 0)
			}
			if err != nil {
				return serverInvalid(c, err)
			}
			if enf.Pending && enf.Approval == nil {
				return checkFailed(errors.New("airlock: the server answered pending without naming the approval request"))
			}
			out := cmd.OutOrStdout()
			if !asJSON {
				fmt.Fprintln(out, visible.Escaped(enf.Decision.String()))
			}
			if enf.Pending && !noWait {
				if timeout > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeoutCause(ctx, timeout, fmt.Errorf("--timeout %s passed", timeout))
					defer cancel()
				}
				// The client's one waiting loop, told to show each poll:
				// the check asked without waiting, so that the decision
				// was printed at once.
				p := newProgress(cmd.ErrOrStderr())
				c.Pending = p.update
				enf, err = c.AwaitPending(ctx, enf)
				p.stop()
				if err == nil && enf.Pending && ctx.Err() != nil {
					return stoppedWaiting(enf, context.Cause(ctx))
				}
				if err != nil {
					return serverFailed(c, err)
				}
			}
			if asJSON {
				if err := writeJSON(out, enf); err != nil {
					return checkFailed(err)
				}
			} else {
				fmt.Fprintln(out, enforcementText(enf))
			}
			switch {
			case enf.Allowed:
				return nil
			case enf.Pending:
				return &exitError{code: exitPending}
			}
			return checkFailed(nil)
		},
	}
	f := cmd.Flags()
	af.register(f, "the agent's session ID")
	f.StringVar(&af.a.TraceID, "trace", "", "the trace ID tying the action to the agent's run")
	f.StringVar(&af.a.CallID, "call", "", "the tool call's ID")
	f.BoolVar(&noWait, "no-wait", false, "do not wait for a person: print the approval ID and exit 3")
	f.DurationVar(&timeout, "timeout", 0, "stop waiting after this long (exit 1; the request stays pending); 0 waits until it is settled")
	f.BoolVar(&asJSON, "json", false, "print the final result as JSON (the Enforcement)")
	f.StringVar(&resume, "resume", "", "wait on the approval request a check left pending, by its ID, instead of checking an action")
	_ = cmd.RegisterFlagCompletionFunc("resume", completeApprovalID(true))
	return cmd
}

// resumeAlone refuses the action's flags beside --resume: the request
// holds its action.
func resumeAlone(cmd *cobra.Command) error {
	var set []string
	cmd.Flags().Visit(func(f *pflag.Flag) {
		switch f.Name {
		case "resume", "no-wait", "timeout", "json":
		default:
			if cmd.LocalFlags().Lookup(f.Name) != nil {
				set = append(set, "--"+f.Name)
			}
		}
	})
	if len(set) > 0 {
		return usageError("--resume waits on a request, which holds its action: drop %s", strings.Join(set, ", "))
	}
	return nil
}

// enforcementText is the verdict line: allowed, refused with its code, or
// pending with the approval ID.
func enforcementText(enf airlock.Enforcement) string {
	msg := visible.Escaped(enf.Message)
	switch {
	case enf.Allowed && enf.Edit != nil:
		// Run the edited action, not the one checked: say so on a line of
		// its own, for a script to read.
		return fmt.Sprintf("allowed: %s\nedited args: %s", msg, visible.Escaped(string(enf.Edit.Args)))
	case enf.Allowed:
		return "allowed: " + msg
	case enf.Pending:
		return fmt.Sprintf("pending: %s\napproval %s", msg, visible.Escaped(enf.Approval.ID))
	}
	return fmt.Sprintf("refused: %s: %s", enf.Code, msg)
}

// stoppedWaiting is the error of a wait cut short: the request stays
// pending, and the message says how to come back to it.
func stoppedWaiting(enf airlock.Enforcement, cause error) error {
	if errors.Is(cause, context.Canceled) {
		cause = errors.New("interrupted")
	}
	ap := enf.Approval
	id := visible.Escaped(ap.ID)
	return checkFailed(fmt.Errorf(`airlock: stopped waiting for approval %s: %v
The request stays pending until %s. Wait on it again with
  airlock check --resume %s
or withdraw it with 'airlock approvals cancel %s'. Once it is approved,
the same check run again also runs on it, once.`, id, cause, ap.Expires.UTC().Format(time.RFC3339), id, id))
}

// progress shows the wait on standard error: on a terminal one line,
// redrawn every second so that the time left counts down; elsewhere a line
// per poll.
type progress struct {
	w    io.Writer
	tty  bool
	mu   sync.Mutex
	ap   *airlock.Approval
	last string
	done chan struct{}
	wg   sync.WaitGroup
}

func newProgress(w io.Writer) *progress {
	p := &progress{w: w, tty: isTerminal(w), done: make(chan struct{})}
	if p.tty {
		p.wg.Go(func() {
			t := time.NewTicker(time.Second)
			defer t.Stop()
			for {
				select {
				case <-p.done:
					return
				case <-t.C:
					p.draw()
				}
			}
		})
	}
	return p
}

// update is called with the request as it stands before every poll.
func (p *progress) update(enf airlock.Enforcement) {
	p.mu.Lock()
	p.ap = enf.Approval
	p.mu.Unlock()
	p.draw()
}

func (p *progress) draw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ap == nil {
		return
	}
	line := waitingLine(p.ap, time.Now())
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K"+line)
	} else if line != p.last {
		fmt.Fprintln(p.w, line)
	}
	p.last = line
}

// stop ends the display, leaving its last line.
func (p *progress) stop() {
	close(p.done)
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.last != "" {
		fmt.Fprintln(p.w)
	}
}

// waitingLine says what the wait is for, who may end it and when it ends.
func waitingLine(ap *airlock.Approval, now time.Time) string {
	return fmt.Sprintf("waiting for approval %s (%s, %s)…", visible.Escaped(ap.ID), whoDecides(ap), timeLeft(ap, now))
}

// whoDecides names who may resolve the request.
func whoDecides(ap *airlock.Approval) string {
	who := make([]string, 0, len(ap.Reviewers)+1)
	for _, r := range ap.Reviewers {
		who = append(who, visible.Escaped(r))
	}
	if ap.Owner != "" {
		who = append(who, visible.Escaped(ap.Owner)+" (owner)")
	}
	if len(who) == 0 {
		return "an admin"
	}
	return "reviewers " + strings.Join(who, ", ") + " or an admin"
}

// timeLeft says when the request expires.
func timeLeft(ap *airlock.Approval, now time.Time) string {
	if d := ap.Expires.Sub(now); d > 0 {
		return "expires in " + remaining(d)
	}
	return "expired"
}

// remaining prints a time left to the second: 45s, 9m12s, 1h05m.
func remaining(d time.Duration) string {
	d = d.Round(time.Second)
	h, m, s := d/time.Hour, d%time.Hour/time.Minute, d%time.Minute/time.Second
	switch {
	case h > 0:
		return fmt.Sprintf("%dh%02dm", h, m)
	case m > 0:
		return fmt.Sprintf("%dm%02ds", m, s)
	}
	return fmt.Sprintf("%ds", s)
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// actionFlags are the flags that describe an action: check and policy
// explain share them.
type actionFlags struct {
	a              airlock.Action
	args, hintTier string
	hints          []string // NAME or NAME=VALUE, one --hint each
}

func (af *actionFlags) register(f *pflag.FlagSet, session string) {
	f.StringVar(&af.a.Agent, "agent", "", "the agent attempting the action (required)")
	f.StringVar(&af.a.Tool, "tool", "", "the tool it calls (required)")
	f.StringVar(&af.args, "args", "{}", "the tool's arguments, a JSON object")
	f.StringVar(&af.a.Cwd, "cwd", "", "the working directory of the tool")
	f.StringVar(&af.a.SessionID, "session", "", session)
	f.StringVar(&af.a.RequestedBy, "requested-by", "", "the person the agent acts for (who then cannot approve it)")
	f.StringVar(&af.a.MCPServer, "mcp-server", "", "for an MCP tool (mcp__<server>__<tool>): the known server the gateway fronts (filesystem, git, github, …: docs/MCP.md, Known servers)")
	f.StringVar(&af.hintTier, "hint-tier", "", "a risk tier the agent claims (it can only raise)")
	f.StringArrayVar(&af.hints, "hint", nil, "a hint that comes with the action, NAME or NAME=VALUE, repeatable: read_only, needs_human, tier=TIER, reason=TEXT")
}

// action builds and validates the action; a problem is a usage error.
func (af *actionFlags) action(command string) (airlock.Action, error) {
	a := af.a
	if a.Agent == "" || a.Tool == "" {
		return a, usageError("%s needs --agent and --tool", command)
	}
	if a.MCPServer != "" && !mcpcatalog.Known(a.MCPServer) {
		var names []string
		for _, srv := range mcpcatalog.Servers() {
			names = append(names, srv.Name)
		}
		return a, usageError("--mcp-server: %q is not a server of Airlock's MCP catalogue%s", a.MCPServer,
			airlock.DidYouMean(a.MCPServer, names))
	}
	a.Args = json.RawMessage(af.args)
	var h airlock.Hints
	if af.hintTier != "" {
		t, err := airlock.ParseRiskTier(af.hintTier)
		if err != nil {
			return a, usageError("--hint-tier: %s", airlock.ErrorMessage(err))
		}
		h.Tier = t
	}
	for _, s := range af.hints {
		name, value, _ := strings.Cut(s, "=")
		if err := h.Set(name, value); err != nil {
			return a, usageError("--hint %s: %s", s, airlock.ErrorMessage(err))
		}
	}
	if h != (airlock.Hints{}) {
		a.Hints = &h
	}
	if err := a.Validate(); err != nil {
		return a, usageError("the action is not valid: %s", airlock.ErrorMessage(err))
	}
	return a, nil
}
