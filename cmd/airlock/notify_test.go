package main

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/airlock-dev/airlock"
	airlockhttp "github.com/airlock-dev/airlock/http"
	"github.com/airlock-dev/airlock/notify/webhook"
)

var testWebhookSecret = "whsec_" + base64.StdEncoding.EncodeToString([]byte("a-webhook-signing-key-32-bytes!!"))

// hookReceiver is a webhook receiver that verifies every request and can
// be told to hang (a delivery in flight when the server dies).
type hookReceiver struct {
	srv    *httptest.Server
	verify *standardwebhooks.Webhook

	mu       sync.Mutex
	hang     chan struct{} // non-nil: requests wait until it is closed
	arrived  chan string   // keys of requests that arrived
	accepted []webhook.Body
}

func newHookReceiver(t *testing.T) *hookReceiver {
	v, err := standardwebhooks.NewWebhook(testWebhookSecret)
	if err != nil {
		t.Fatal(err)
	}
	r := &hookReceiver{verify: v, arrived: make(chan string, 100)}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		if err := r.verify.Verify(body, req.Header); err != nil {
			t.Errorf("webhook signature: %v", err)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var b webhook.Body
		if err := json.Unmarshal(body, &b); err != nil {
			t.Errorf("webhook body %s: %v", body, err)
		}
		r.arrived <- b.Data.Key
		r.mu.Lock()
		hang := r.hang
		r.mu.Unlock()
		if hang != nil {
			select {
			case <-hang:
			case <-req.Context().Done():
			}
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		r.mu.Lock()
		r.accepted = append(r.accepted, b)
		r.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *hookReceiver) bodies() []webhook.Body {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]webhook.Body(nil), r.accepted...)
}

// serveProcess is `airlock serve` run as its own process.
type serveProcess struct {
	cmd *exec.Cmd
	url string
}

// startServe runs the built airlock serve with config and waits until it
// serves.
func startServe(t *testing.T, config string) *serveProcess {
	t.Helper()
	cmd := exec.Command(airlockBinary(t), "serve", "--config", config)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &serveProcess{cmd: cmd}
	t.Cleanup(func() { p.cmd.Process.Kill(); p.cmd.Wait() })
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`url=(http://\S+)`)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case urls <- m[1]:
				default:
				}
			}
		}
	}()
	select {
	case p.url = <-urls:
	case <-time.After(30 * time.Second):
		t.Fatal("airlock serve did not start")
	}
	return p
}

// TestNotifyKill9MidDelivery: the server is killed (SIGKILL) while it
// delivers a request's notice; restarted, it delivers it again — with the
// same idempotency key — once its lease has run out, then the request's
// end; the CLI lists, shows and tests the channel.
func TestNotifyKill9MidDelivery(t *testing.T) {
	rcv := newHookReceiver(t)
	rcv.hang = make(chan struct{})
	dir := t.TempDir()
	admin, agent, bob := "airlock_"+strings.Repeat("a", 43), "airlock_"+strings.Repeat("b", 43), "airlock_"+strings.Repeat("c", 43)
	policy, err := filepath.Abs(filepath.Join("testdata", "e2e.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "airlock.yaml")
	writeFile(t, config, fmt.Sprintf(`listen: 127.0.0.1:0
data_dir: %s
policies: [%s]
tokens:
  - {role: admin, name: root, secret: %s}
  - {role: agent, agent: coder-1, secret: %s}
  - {role: reviewer, name: bob, secret: %s}
notifications:
  inbox_url: https://airlock.example.com
  timeout: 1s
  first_retry: 100ms
  channels:
    - name: ops
      type: webhook
      url: %s
      secret: ${AIRLOCK_TEST_WHSEC}
`, filepath.Join(dir, "data"), policy, admin, agent, bob, rcv.srv.URL))
	t.Setenv("AIRLOCK_TEST_WHSEC", testWebhookSecret)

	srv := startServe(t, config)
	enf, err := airlockhttp.NewClient(srv.url, agent).Check(t.Context(), action("deploy", "prod"), 0)
	if err != nil || !enf.Pending {
		t.Fatalf("check: %+v %v", enf, err)
	}
	var hungKey string
	select {
	case hungKey = <-rcv.arrived:
	case <-time.After(30 * time.Second):
		t.Fatal("the request's notice never reached the receiver")
	}
	if err := srv.cmd.Process.Kill(); err != nil { // kill -9, mid-delivery
		t.Fatal(err)
	}
	srv.cmd.Wait()
	rcv.mu.Lock()
	close(rcv.hang)
	rcv.hang = nil
	rcv.mu.Unlock()

	srv = startServe(t, config)
	deadline := time.Now().Add(30 * time.Second)
	for len(rcv.bodies()) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	got := rcv.bodies()
	if len(got) != 1 || got[0].Type != airlock.EventApprovalRequested || got[0].Data.Key != hungKey || got[0].Data.ApprovalID != enf.Approval.ID ||
		got[0].Data.Link != "https://airlock.example.com/inbox/approvals/"+enf.Approval.ID {
		t.Fatalf("after the restart the receiver accepted %+v; want the request's notice under key %s", got, hungKey)
	}

	e := &e2e{url: srv.url, admin: admin}
	e.cli(t, bob, 0, "approvals", "approve", enf.Approval.ID, "--hash", enf.Decision.ActionHash.String())
	for len(rcv.bodies()) < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := rcv.bodies(); len(got) != 2 || got[1].Type != airlock.EventApprovalResolved {
		t.Fatalf("received %+v, want the request's end", got)
	}

	out := e.cli(t, bob, 0, "notifications", "list", "--channel", "ops")
	if !regexp.MustCompile(`(?m)^\d+\s+sent\s+ops\s+approval\.requested\s+2\s`).MatchString(out) { // the killed attempt counts
		t.Errorf("list does not show the request's notice sent on its second attempt:\n%s", out)
	}
	out = e.cli(t, admin, 0, "notifications", "test", "ops")
	if !strings.Contains(out, "delivered after 1 attempt(s)") {
		t.Errorf("test:\n%s", out)
	}
	out = e.cli(t, admin, 1, "notifications", "test", "nowhere")
	if !strings.Contains(out, `no notification channel "nowhere"`) {
		t.Errorf("test of an unknown channel:\n%s", out)
	}
	e.cli(t, agent, 1, "notifications", "list")
	if _, err := os.Stat(filepath.Join(dir, "data", "airlock.db")); err != nil {
		t.Fatal(err)
	}
}
