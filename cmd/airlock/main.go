// Command airlock is the gate in front of AI agents' side effects: the
// server (airlock serve), the people's CLI, the hook and MCP adapters.
//
// Exit codes: 0 success, 1 a check failed (lint errors, failing policy
// tests, a policy that does not load), 2 the command was used wrongly.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock/visible"
)

// Exit codes.
const (
	exitOK    = 0
	exitCheck = 1 // a check failed: lint errors, failing tests, a broken policy
	exitUsage = 2 // the command line was wrong
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes the command line and returns the process exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRootCmd()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var ee *exitError
	switch {
	case errors.As(err, &ee):
		if ee.err != nil {
			// An error may quote what an agent sent (a server's refusal
			// names the tool, the request): its hidden characters show.
			fmt.Fprintln(stderr, visible.EscapedLines(ee.err.Error()))
		}
		return ee.code
	default:
		// Everything cobra reports itself (unknown command, bad flag) is a
		// usage error.
		fmt.Fprintf(stderr, "airlock: %v\nRun 'airlock --help' for usage.\n", err)
		return exitUsage
	}
}

// exitError carries an exit code out of a command.
type exitError struct {
	code int
	err  error // printed when not nil
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

// checkFailed reports a failed check: exit code 1, err printed if not nil.
func checkFailed(err error) error { return &exitError{code: exitCheck, err: err} }

// usageError reports a wrong command line: exit code 2.
func usageError(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf("airlock: "+format+"\nRun 'airlock --help' for usage.", args...)}
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "airlock",
		Short: "The gate in front of AI agents' side effects",
		Long: `Airlock classifies every action an AI agent attempts, decides by a layered
policy whether it runs, waits for a person, is only proposed, or is refused,
and records every decision.`,
		Version:       readBuildInfo().String(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		// The command's path names the program ("airlock policy lint: …"):
		// usageError's "airlock: " before it would say it twice.
		return &exitError{code: exitUsage, err: fmt.Errorf("%s: %v\nRun '%s --help' for usage.", c.CommandPath(), err, c.CommandPath())}
	})
	root.AddCommand(newServeCmd())
	root.AddCommand(newPolicyCmd())
	root.AddCommand(newAuditCmd())
	root.AddCommand(newApprovalsCmd())
	root.AddCommand(newCheckCmd(), newTrustCmd(), newTokenCmd(), newReviewersCmd(), newGrantsCmd(), newHookCmd(), newMCPCmd(), newNotificationsCmd())
	root.AddCommand(newStoreCmd(), newVersionCmd())
	addServerFlags(root) // and cobra's own 'completion' command stays enabled
	return root
}

// argsAtLeast is cobra.MinimumNArgs with a usage exit code.
func argsAtLeast(n int, what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) < n {
			return usageError("%s needs %s", c.CommandPath(), what)
		}
		return nil
	}
}
