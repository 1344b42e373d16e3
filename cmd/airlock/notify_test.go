package main

import (
	"bufio"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/client"
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
	p, err := launchServe(t, config)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// launchServe is startServe for any goroutine: it reports a server that
// did not start as an error. The process is killed when the test ends.
func launchServe(t *testing.T, config string) (*serveProcess, error) {
	cmd := exec.Command(airlockBinary(t), "serve", "--config", config)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
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
		return p, nil
	case <-time.After(30 * time.Second):
		return nil, fmt.Errorf("airlock serve --config %s did not start", config)
	}
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
	enf, err := client.New(srv.url, agent).CheckWait(t.Context(), action("deploy", "prod"), 0)
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

// fakeSlack is the least of Slack's Web API a channel uses: it records the
// messages posted and updated, with their blocks.
type fakeSlack struct {
	srv *httptest.Server
	mu  sync.Mutex
	// posted and updated hold each call's form.
	posted, updated []url.Values
}

func newFakeSlack(t *testing.T) *fakeSlack {
	f := &fakeSlack{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil || r.PostForm.Get("token") != "xoxb-test-token" && r.Header.Get("Authorization") != "Bearer xoxb-test-token" {
			fmt.Fprint(w, `{"ok":false,"error":"invalid_auth"}`)
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		switch path.Base(r.URL.Path) {
		case "chat.postMessage":
			f.posted = append(f.posted, r.PostForm)
			fmt.Fprintf(w, `{"ok":true,"channel":"C0APPROVE","ts":"1700000000.%06d"}`, len(f.posted))
		case "chat.update":
			f.updated = append(f.updated, r.PostForm)
			fmt.Fprintf(w, `{"ok":true,"channel":%q,"ts":%q}`, r.PostForm.Get("channel"), r.PostForm.Get("ts"))
		default:
			fmt.Fprint(w, `{"ok":true}`)
		}
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeSlack) calls() (posted, updated []url.Values) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.posted), slices.Clone(f.updated)
}

// TestNotifySlackThroughTheServer: a request posted to Slack by the
// server, approved by a signed click at /callbacks/<channel>, releases the
// waiting check and updates the message; a forged click is refused.
func TestNotifySlackThroughTheServer(t *testing.T) {
	slk := newFakeSlack(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "slack.token"), "xoxb-test-token\n")
	writeFile(t, filepath.Join(dir, "slack.signing"), "slack-signing-secret\n")
	m, admin := startMainWith(t, dir, func(c *Config) {
		c.Notifications.Channels = []ChannelConfig{{Name: "team-slack", Type: "slack", TokenFile: filepath.Join(dir, "slack.token"),
			SigningSecretFile: filepath.Join(dir, "slack.signing"), Channel: "#agent-approvals", APIURL: slk.srv.URL + "/api/",
			Users: map[string]string{"UBOB": "bob"}}}
	})
	e := &e2e{main: m, url: m.URL(), admin: admin}
	agent := e.token(t, "--role", "agent", "--agent", "coder-1")
	done := make(chan airlock.Enforcement, 1)
	go func() { done <- e.client(agent).Enforce(t.Context(), action("deploy", "prod")) }()

	var value string
	deadline := time.Now().Add(30 * time.Second)
	for value == "" && time.Now().Before(deadline) {
		posted, _ := slk.calls()
		if len(posted) > 0 {
			value = regexp.MustCompile(`"value":"(\{[^"]*(?:\\"[^"]*)*\})"`).FindStringSubmatch(posted[0].Get("blocks"))[1]
		}
		time.Sleep(10 * time.Millisecond)
	}
	if value == "" {
		t.Fatal("no request was posted to Slack")
	}
	value, err := strconv.Unquote(`"` + value + `"`)
	if err != nil {
		t.Fatal(err)
	}
	click := func(secret string) int {
		payload, _ := json.Marshal(map[string]any{"type": "block_actions", "user": map[string]string{"id": "UBOB"},
			"container": map[string]string{"channel_id": "C0APPROVE", "message_ts": "1700000000.000001"},
			"actions":   []map[string]string{{"type": "button", "block_id": "decide", "action_id": "airlock.approve", "value": value}}})
		body := url.Values{"payload": {string(payload)}}.Encode()
		ts := fmt.Sprint(time.Now().Unix())
		mac := hmac.New(sha256.New, []byte(secret))
		fmt.Fprintf(mac, "v0:%s:%s", ts, body)
		req, _ := http.NewRequest("POST", m.URL()+"/callbacks/team-slack", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Slack-Request-Timestamp", ts)
		req.Header.Set("X-Slack-Signature", "v0="+hex.EncodeToString(mac.Sum(nil)))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := click("not-the-secret"); got != http.StatusUnauthorized {
		t.Fatalf("forged click: %d, want 401", got)
	}
	if got := click("slack-signing-secret"); got != http.StatusOK {
		t.Fatalf("click: %d (button value %s)", got, value)
	}
	select {
	case enf := <-done:
		if !enf.Allowed || enf.Approval == nil || enf.Approval.ResolvedBy != "bob" || enf.Approval.Surface != airlock.SurfaceSlack {
			t.Fatalf("after the click: %+v", enf)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the click did not release the waiting check")
	}
	for time.Now().Before(deadline) {
		if _, updated := slk.calls(); len(updated) > 0 && strings.Contains(updated[len(updated)-1].Get("blocks"), "approved by bob") {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the Slack message was not updated with the approval")
}

// TestNotifyPolicyNamesUnknownChannel: a policy that sends notices to a
// channel the server does not have is refused where it names it, at start
// and on reload: those notices would reach nobody.
func TestNotifyPolicyNamesUnknownChannel(t *testing.T) {
	dir := t.TempDir()
	policy := filepath.Join(dir, "policy.yaml")
	writeFile(t, policy, `version: 1
name: notify
layer: project
agents:
  coder-1: {owner: alice, notify: [ops]}
rules:
  - id: deploys
    tool: deploy
    outcome: ask
    notify: [ops, team-slak]
`)
	set := func(c *Config) {
		c.Policies = []string{policy}
		c.Notifications.Channels = []ChannelConfig{{Name: "ops", Type: "webhook", URL: "https://hooks.example/a", Secret: Secret(testWebhookSecret)}}
	}
	_, _, err := runMainWith(t, dir, "127.0.0.1:0", set)
	if err == nil || !strings.Contains(err.Error(), policy+`:10:13: notify: no notification channel "team-slak"; configured: ops`) {
		t.Fatalf("start: %v", err)
	}
	src, err := os.ReadFile(policy)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, policy, strings.Replace(string(src), "notify: [ops, team-slak]", "notify: [ops]", 1))
	m, _, err := runMainWith(t, dir, "127.0.0.1:0", set)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
}

// TestNotifyFromEmbeddedStore: a process that decides on the embedded
// store itself (airlock mcp proxy --data) routes and delivers the notices
// of the requests it queues, as the server does.
func TestNotifyFromEmbeddedStore(t *testing.T) {
	rcv := newHookReceiver(t)
	dir := t.TempDir()
	policy, err := filepath.Abs(filepath.Join("testdata", "e2e.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "airlock.yaml")
	writeFile(t, config, fmt.Sprintf(`data_dir: %s
policies: [%s]
notifications:
  channels:
    - {name: ops, type: webhook, url: %s, secret: %s}
`, filepath.Join(dir, "data"), policy, rcv.srv.URL, testWebhookSecret))
	cmd := &cobra.Command{}
	cmd.SetContext(t.Context())
	e, release, err := openEmbedded(cmd, config, "", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	enf := e.Check(t.Context(), action("deploy", "embedded"))
	if !enf.Pending {
		t.Fatalf("check: %+v", enf)
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(rcv.bodies()) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := rcv.bodies(); len(got) != 1 || got[0].Type != airlock.EventApprovalRequested || got[0].Data.ApprovalID != enf.Approval.ID {
		t.Fatalf("received %+v, want the request's notice", got)
	}
}

// TestEscalationReachesWebhook: nobody answers a request whose rule
// escalates after a second; the server's sweeper widens its reviewers,
// audits it, and a webhook receives the escalation, naming who it adds.
func TestEscalationReachesWebhook(t *testing.T) {
	rcv := newHookReceiver(t)
	dir := t.TempDir()
	policy := filepath.Join(dir, "policy.yaml")
	writeFile(t, policy, `version: 1
name: escalation
agents:
  coder-1: {owner: alice}
rules:
  - id: deploys
    tool: deploy
    outcome: ask
    reviewers: [bob]
    timeout: 1m
    escalate: [{after: 1s, to: [oncall]}]
`)
	m, admin := startMainWith(t, dir, func(c *Config) {
		c.Policies = []string{policy}
		c.Notifications.Channels = []ChannelConfig{{Name: "ops", Type: "webhook", URL: rcv.srv.URL, Secret: Secret(testWebhookSecret)}}
	})
	e := &e2e{main: m, url: m.URL(), admin: admin}
	e.agent = e.token(t, "--role", "agent", "--agent", "coder-1")
	e.bob = e.token(t, "--role", "reviewer", "--name", "bob")
	enf, err := e.client(e.agent).CheckWait(t.Context(), action("deploy", "prod"), 0)
	if err != nil || !enf.Pending {
		t.Fatalf("check: %+v, %v", enf, err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		var got *webhook.Body
		for _, b := range rcv.bodies() {
			if b.Type == airlock.EventApprovalEscalated {
				got = &b
			}
		}
		if got != nil {
			if got.Data.ApprovalID != enf.Approval.ID || !slices.Equal(got.Data.Recipients, []string{"oncall"}) ||
				!strings.Contains(string(got.Data.Event), `"added":["oncall"]`) {
				t.Fatalf("the escalation the webhook got: %+v (event %s)", got.Data, got.Data.Event)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no escalation reached the webhook; it got %+v", rcv.bodies())
		}
		time.Sleep(50 * time.Millisecond)
	}
	ap, err := e.client(e.bob).Approval(t.Context(), enf.Approval.ID)
	if err != nil || ap.Status != airlock.StatusPending || ap.Escalated != 1 || !slices.Contains(ap.Reviewers, "oncall") {
		t.Fatalf("the request after its escalation: %+v, %v", ap, err)
	}
}
