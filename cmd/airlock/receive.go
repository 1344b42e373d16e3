package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/airlock-dev/airlock/notify/webhook"
	"github.com/airlock-dev/airlock/visible"
)

// maxNoticeBytes bounds a notice's body; Airlock's are a few KiB.
const maxNoticeBytes = 1 << 20

func newNotificationsReceiveCmd() *cobra.Command {
	var listen, secretFile string
	cmd := &cobra.Command{
		Use:   "receive",
		Short: "Receive a webhook channel's notices here: check each signature, print it",
		Long: `Receive listens for a webhook channel's POSTs, as a receiver of yours would:
it checks each one's Standard Webhooks signature and timestamp against the
channel's secret (refusing, with 401, one that does not verify or is more
than 5 minutes off), and prints each notice on a line — its type, the agent,
the subject and the approval it is about. It is for trying a channel, and
for seeing what a receiver gets; it runs until interrupted.

The secret is the channel's: --secret-file names a file holding it, or the
environment variable AIRLOCK_WEBHOOK_SECRET holds it (whsec_ and base64).`,
		Example: `  head -c 32 /dev/urandom | base64 | sed 's/^/whsec_/' > webhook.secret
  airlock notifications receive --listen 127.0.0.1:9000 --secret-file webhook.secret`,
		Args: argsNone(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			secret := os.Getenv("AIRLOCK_WEBHOOK_SECRET")
			if secretFile != "" {
				data, err := os.ReadFile(secretFile)
				if err != nil {
					return usageError("--secret-file: %v", err)
				}
				secret = strings.TrimSpace(string(data))
			}
			if secret == "" {
				return usageError("no secret: name the channel's secret with --secret-file FILE or AIRLOCK_WEBHOOK_SECRET")
			}
			if err := webhook.CheckSecret(secret); err != nil {
				return usageError("the secret: %v", err)
			}
			wh, err := standardwebhooks.NewWebhook(secret)
			if err != nil {
				return usageError("the secret: %v", err)
			}
			l, err := net.Listen("tcp", listen)
			if err != nil {
				return usageError("--listen: %v", err)
			}
			out := &lockedWriter{w: cmd.OutOrStdout()}
			fmt.Fprintf(out, "receiving signed notices at http://%s/ (interrupt to stop)\n", l.Addr())
			srv := &http.Server{Handler: noticeReceiver(wh, out), ReadHeaderTimeout: 10 * time.Second}
			go func() {
				<-cmd.Context().Done()
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				_ = srv.Shutdown(ctx)
			}()
			if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:9000", "the address to listen on")
	cmd.Flags().StringVar(&secretFile, "secret-file", "", "a file holding the channel's secret (default: env AIRLOCK_WEBHOOK_SECRET)")
	return cmd
}

// noticeReceiver verifies and prints each notice posted to it.
func noticeReceiver(wh *standardwebhooks.Webhook, out io.Writer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST a signed notice", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxNoticeBytes))
		if err != nil {
			http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
			return
		}
		if err := wh.Verify(body, r.Header); err != nil {
			fmt.Fprintf(out, "refused a POST from %s: %v\n", r.RemoteAddr, err)
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var n webhook.Body
		if err := json.Unmarshal(body, &n); err != nil {
			fmt.Fprintf(out, "refused a signed POST whose body is not a notice: %v\n", err)
			http.Error(w, "not a notice", http.StatusBadRequest)
			return
		}
		line := n.Type + "  " + visible.Escaped(cmp.Or(n.Data.Agent, "-")) + "  " + visible.Escaped(n.Data.Subject)
		if n.Data.ApprovalID != "" {
			line += "  (approval " + n.Data.ApprovalID + ")"
		}
		fmt.Fprintf(out, "%s  %s  delivery %d through %s\n", n.Timestamp.Format(time.RFC3339), line, n.Data.Delivery,
			visible.Escaped(n.Data.Channel))
		w.WriteHeader(http.StatusNoContent)
	})
}

// lockedWriter serialises the handlers' lines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
