package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock/visible"
)

func newReviewersCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "reviewers",
		Short: "Let reviewers register passkeys",
		Long: `A rule or policy may require a passkey for some approvals (passkey: on a rule,
or passkey: TIER on a policy): the reviewer's device then signs the
request's ID and the action hash, in the web inbox. A session cookie alone
never registers a passkey — it would then approve as its person — so each
registration takes a one-time enrolment code an admin makes here and hands
to the person.`,
		Example: `  airlock reviewers enrol bob
  airlock reviewers enrol bob --expires 30m`,
	}
	cmd.AddCommand(newReviewersEnrolCmd())
	return cmd
}

func newReviewersEnrolCmd() *cobra.Command {
	var (
		expires time.Duration
		asJSON  bool
	)
	cmd := &cobra.Command{
		Use:   "enrol NAME [--expires 1h]",
		Short: "Make a one-time code with which NAME registers a passkey",
		Long: `Enrol makes a one-time code with which the person NAME registers one passkey
on the inbox's Passkeys page, signed in as themselves, before it expires
(1h by default, at most 168h). The code is printed once; the server keeps
only its hash, and audits the enrolment (reviewer.passkey_enrolment) and
the registration (reviewer.passkey_registered, with the passkey's public
key, which 'airlock audit verify' checks approvals against). Hand it over
through a private channel. Needs an admin token.`,
		Example: `  airlock reviewers enrol bob
  airlock reviewers enrol carol --expires 30m --json`,
		Args: argsExactly(1, "the person's name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if expires < 0 {
				return usageError("--expires takes a positive duration (1h)")
			}
			c, err := newClient(cmd)
			if err != nil {
				return err
			}
			e, err := c.EnrolPasskey(cmd.Context(), args[0], expires)
			if err != nil {
				return serverFailed(c, err)
			}
			out := cmd.OutOrStdout()
			if asJSON {
				if err := writeJSON(out, e); err != nil {
					return checkFailed(err)
				}
				return nil
			}
			_, err = fmt.Fprintf(out, "enrolment code for %s (once, until %s):\n%s\nThey enter it on the inbox's Passkeys page to register a passkey.\n",
				visible.Escaped(e.Reviewer), e.Expires.UTC().Format(time.RFC3339), e.Code)
			if err != nil {
				return checkFailed(err)
			}
			return nil
		},
	}
	cmd.Flags().DurationVar(&expires, "expires", 0, "how long the code may be used (default the server's 1h, at most 168h)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the enrolment as JSON")
	return cmd
}
