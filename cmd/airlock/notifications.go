package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/visible"
)

func newNotificationsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "notifications",
		Aliases: []string{"notification"},
		Short:   "Follow the notices the server delivers: list, show, retry, test",
		Long: `The server tells people of what its agents do through the channels of its
configuration (notifications.channels: webhooks, Slack, Feishu, email): the
agent's owner when a notify action ran, the reviewers when a request waits
(and again before its deadline), the owner and the requester when it ends.
Each notice is one delivery per channel, attempted until it is delivered,
retried with backoff; one that fails every attempt is a dead letter until a
person retries it. Every attempt is in the audit log.

list and show need a reviewer or admin token; retry and test an admin one.`,
		Example: `  airlock notifications list --status dead
  airlock notifications show 42
  airlock notifications retry 42
  airlock notifications test team-slack`,
	}
	cmd.AddCommand(newNotificationsListCmd(), newNotificationsShowCmd(), newNotificationsRetryCmd(), newNotificationsTestCmd(),
		newNotificationsReceiveCmd())
	return cmd
}

func newNotificationsListCmd() *cobra.Command {
	var f airlock.NotificationFilter
	var status string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List deliveries, newest first: state, attempts, last error",
		Example: `  airlock notifications list
  airlock notifications list --status dead
  airlock notifications list --channel ops --kind approval.requested --json`,
		Args: argsNone(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if status != "" {
				st, err := airlock.ParseNotificationStatus(status)
				if err != nil {
					return usageError("--status: %s", airlock.ErrorMessage(err))
				}
				f.Status = st
			}
			c, err := newClient(cmd)
			if err != nil {
				return err
			}
			ns, _, err := c.Notifications(cmd.Context(), f)
			if err != nil {
				return serverFailed(c, err)
			}
			return printList(cmd.OutOrStdout(), asJSON, ns, printNotificationTable)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&status, "status", "", "only deliveries in this state: pending, sent, failed, dead, dropped")
	fl.StringVar(&f.Channel, "channel", "", "only deliveries through this channel")
	fl.StringVar(&f.Kind, "kind", "", "only notices of this kind (approval.requested, decision, …)")
	fl.StringVar(&f.ApprovalID, "approval", "", "only the notices of this approval request")
	fl.IntVar(&f.Limit, "limit", 50, "at most this many")
	fl.BoolVar(&asJSON, "json", false, "print the deliveries as JSON")
	return cmd
}

// printNotificationTable prints one row per delivery.
func printNotificationTable(out io.Writer, ns []airlock.Notification) error {
	if len(ns) == 0 {
		_, err := fmt.Fprintln(out, "no notifications")
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tCHANNEL\tKIND\tATTEMPTS\tCREATED\tAPPROVAL\tLAST ERROR")
	for _, n := range ns {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", n.ID, n.Status, visible.Escaped(n.Channel), n.Kind, n.Attempts,
			n.Created.Local().Format(time.DateTime), dashIfEmpty(n.ApprovalID), dashIfEmpty(visible.Escaped(clipLine(n.LastError, 60))))
	}
	return tw.Flush()
}

func newNotificationsShowCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "show ID",
		Short:   "Show one delivery",
		Example: `  airlock notifications show 42`,
		Args:    argsExactly(1, "the delivery's ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, id, err := notificationClient(cmd, args[0])
			if err != nil {
				return err
			}
			n, err := c.Notification(cmd.Context(), id)
			if err != nil {
				return serverFailed(c, err)
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), n)
			}
			return printNotification(cmd.OutOrStdout(), &n)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the delivery as JSON")
	return cmd
}

// printNotification prints a delivery, one field a line.
func printNotification(out io.Writer, n *airlock.Notification) error {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	line := func(k, v string) {
		if v != "" {
			fmt.Fprintf(tw, "%s:\t%s\n", k, v)
		}
	}
	line("id", strconv.FormatInt(n.ID, 10))
	line("state", string(n.Status))
	line("channel", visible.Escaped(n.Channel))
	line("kind", n.Kind)
	line("subject", visible.Escaped(n.Subject))
	line("to", visible.Escaped(strings.Join(n.Recipients, ", ")))
	line("agent", visible.Escaped(n.Agent))
	line("approval", n.ApprovalID)
	line("idempotency key", n.Key)
	line("created", n.Created.Local().Format(time.RFC3339))
	line("attempts", strconv.Itoa(n.Attempts))
	if !n.Status.Settled() {
		line("next attempt", n.Due.Local().Format(time.RFC3339))
	}
	if !n.SentAt.IsZero() {
		line("sent", n.SentAt.Local().Format(time.RFC3339))
	}
	line("last error", visible.Escaped(n.LastError))
	line("event", strconv.FormatInt(n.EventSeq, 10))
	return tw.Flush()
}

func newNotificationsRetryCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "retry ID",
		Short: "Send a failed or dead delivery again, now",
		Long: `Retry makes a failed or dead delivery due now, with a fresh count of
attempts: fix what made it fail (the receiver, the channel's settings), then
retry it. The retry is audited (notification.retried) as yours.`,
		Example: `  airlock notifications list --status dead
  airlock notifications retry 42`,
		Args: argsExactly(1, "the delivery's ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, id, err := notificationClient(cmd, args[0])
			if err != nil {
				return err
			}
			n, err := c.RetryNotification(cmd.Context(), id)
			if err != nil {
				return serverFailed(c, err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "notification %d is due again through %s\n", n.ID, visible.Escaped(n.Channel))
			return err
		},
	}
	return cmd
}

func newNotificationsTestCmd() *cobra.Command {
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "test CHANNEL",
		Short: "Send a test message through a channel and wait for its delivery",
		Long: `Test queues a test message through one configured channel, like any other
notice, and waits until it is delivered, fails for good, or --wait passes.
It exits non-zero unless the message was delivered.`,
		Example: `  airlock notifications test team-slack
  airlock notifications test ops --wait 2m`,
		Args: argsExactly(1, "the channel's name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := newClient(cmd)
			if err != nil {
				return err
			}
			n, err := c.TestNotification(cmd.Context(), args[0])
			if err != nil {
				return serverFailed(c, err)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "test message queued through %s (notification %d)\n", visible.Escaped(n.Channel), n.ID)
			deadline := time.Now().Add(wait)
			reported := 0
			for !n.Status.Settled() && time.Now().Before(deadline) {
				select {
				case <-cmd.Context().Done():
					return cmd.Context().Err()
				case <-time.After(200 * time.Millisecond):
				}
				if n, err = c.Notification(cmd.Context(), n.ID); err != nil {
					return serverFailed(c, err)
				}
				if n.Attempts > reported && n.LastError != "" {
					fmt.Fprintf(out, "attempt %d failed: %s\n", n.Attempts, visible.Escaped(n.LastError))
					reported = n.Attempts
				}
			}
			switch n.Status {
			case airlock.NotificationSent:
				_, err := fmt.Fprintf(out, "delivered after %d attempt(s)\n", n.Attempts)
				return err
			case airlock.NotificationDead:
				return checkFailed(fmt.Errorf("the test message is dead after %d attempt(s): %s", n.Attempts, n.LastError))
			default:
				return checkFailed(fmt.Errorf("the test message is still %s after %s (attempts %d; see airlock notifications show %d)",
					n.Status, wait, n.Attempts, n.ID))
			}
		},
	}
	cmd.Flags().DurationVar(&wait, "wait", 30*time.Second, "how long to wait for the delivery")
	return cmd
}

// notificationClient returns the server's client and the delivery ID arg
// names.
func notificationClient(cmd *cobra.Command, arg string) (*client.Client, int64, error) {
	id, err := strconv.ParseInt(arg, 10, 64)
	if err != nil || id <= 0 {
		return nil, 0, usageError("%q is not a notification ID (a positive number; airlock notifications list shows them)", arg)
	}
	c, err := newClient(cmd)
	return c, id, err
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// clipLine cuts s to n runes, marking the cut.
func clipLine(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
