package webhook_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
	"github.com/airlock-dev/airlock/notify"
	"github.com/airlock-dev/airlock/notify/notifytest"
	"github.com/airlock-dev/airlock/notify/webhook"
)

var (
	oldSecret = "whsec_" + base64.StdEncoding.EncodeToString([]byte("the-old-signing-key-of-32-bytes!"))
	newSecret = "whsec_" + base64.StdEncoding.EncodeToString([]byte("the-new-signing-key-of-32-bytes!"))
)

// receiver is a webhook receiver that checks each request the way a
// Standard Webhooks consumer does, with the secret it knows, and can be
// told to fail.
type receiver struct {
	t      *testing.T
	srv    *httptest.Server
	verify *standardwebhooks.Webhook

	mu       sync.Mutex
	failNext int  // answer 503 to this many more requests
	down     bool // answer 503 to every request
	attempts map[string]int
	got      []webhook.Body // accepted bodies, in order
}

func newReceiver(t *testing.T, secret string) *receiver {
	v, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	r := &receiver{t: t, verify: v, attempts: map[string]int{}}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil || req.Method != http.MethodPost || req.Header.Get("Content-Type") != "application/json" {
		r.t.Errorf("webhook request: %s %q %v", req.Method, req.Header.Get("Content-Type"), err)
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	if err := r.verify.Verify(body, req.Header); err != nil {
		r.t.Errorf("signature does not verify: %v (headers %v)", err, req.Header)
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	var b webhook.Body
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil || b.Type == "" || b.Timestamp.IsZero() || b.Data.Key == "" {
		r.t.Errorf("body %s: %v", body, err)
	}
	if id := req.Header.Get("webhook-id"); id != b.Data.Key {
		r.t.Errorf("webhook-id %q, body key %q: the idempotency key is both", id, b.Data.Key)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.attempts[b.Data.Key]++
	if r.down || r.failNext > 0 {
		r.failNext--
		http.Error(w, "try later", http.StatusServiceUnavailable)
		return
	}
	r.got = append(r.got, b)
	w.WriteHeader(http.StatusNoContent)
}

func (r *receiver) bodies() []webhook.Body {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

func channel(t *testing.T, url string, events ...string) *notify.Spec {
	t.Helper()
	// Rotation: signed with the new secret and the old; the receiver
	// still knows only the old.
	ch, err := webhook.New(webhook.Config{URL: url, Secrets: []string{newSecret, oldSecret}})
	if err != nil {
		t.Fatal(err)
	}
	return &notify.Spec{Name: "ops", Type: "webhook", Everyone: true, Events: events, Channel: ch}
}

// TestEndToEnd: a notify action, a request and its resolution reach the
// receiver, each signed, each carrying its event.
func TestEndToEnd(t *testing.T) {
	rcv := newReceiver(t, oldSecret)
	env := notifytest.New(t, notifytest.Options{}, channel(t, rcv.srv.URL))
	if enf := env.Enforcer.Enforce(t.Context(), airlocktest.Action("write_file", "notes.txt")); !enf.Allowed {
		t.Fatalf("notify action refused: %+v", enf)
	}
	ap, done := env.Ask(t, "prod")
	env.Delivery(t, "ops", airlock.EventApprovalRequested, ap.ID)
	if _, err := env.Store.ResolveApproval(t.Context(), airlock.Resolution{ApprovalID: ap.ID, Status: airlock.StatusApproved,
		ActionHash: ap.ActionHash, Reviewer: airlock.Reviewer{Name: "bob"}, Surface: airlock.SurfaceCLI}); err != nil {
		t.Fatal(err)
	}
	if enf := <-done; !enf.Allowed {
		t.Fatalf("approved check refused: %+v", enf)
	}
	env.Delivery(t, "ops", airlock.EventApprovalResolved, ap.ID)

	// Deliveries claimed together arrive in any order: read them in the
	// order they were queued.
	got := rcv.bodies()
	slices.SortFunc(got, func(a, b webhook.Body) int { return int(a.Data.Delivery - b.Data.Delivery) })
	var types []string
	for _, b := range got {
		types = append(types, b.Type)
	}
	if want := []string{airlock.EventDecision, airlock.EventApprovalRequested, airlock.EventApprovalResolved}; !slices.Equal(types, want) {
		t.Fatalf("received %v, want %v", types, want)
	}
	var requested airlock.Approval
	if err := json.Unmarshal(got[1].Data.Event, &requested); err != nil || requested.ID != ap.ID || requested.ActionHash != ap.ActionHash {
		t.Fatalf("approval.requested event %s: %v", got[1].Data.Event, err)
	}
	if got[1].Data.Link != "https://airlock.example/inbox/approvals/"+ap.ID || !slices.Equal(got[1].Data.Recipients, []string{"bob", "alice"}) {
		t.Errorf("request notice %+v", got[1].Data)
	}
	var resolved struct {
		Status airlock.ApprovalStatus `json:"status"`
		By     string                 `json:"by"`
	}
	if err := json.Unmarshal(got[2].Data.Event, &resolved); err != nil || resolved.Status != airlock.StatusApproved || resolved.By != "bob" {
		t.Fatalf("approval.resolved event %s: %v", got[2].Data.Event, err)
	}
	// bob resolved it: the owner and the requester are told.
	if !slices.Equal(got[2].Data.Recipients, []string{"alice", "carol"}) {
		t.Errorf("resolution told %v, want alice and carol", got[2].Data.Recipients)
	}
}

// TestRetriedUntilDelivered: a receiver down for two attempts gets the
// notice on the third, once, with the same idempotency key every time;
// each attempt is audited.
func TestRetriedUntilDelivered(t *testing.T) {
	rcv := newReceiver(t, oldSecret)
	rcv.failNext = 2
	env := notifytest.New(t, notifytest.Options{Attempts: 5}, channel(t, rcv.srv.URL))
	before := env.Head(t)
	ap, _ := env.Ask(t, "staging")
	d := env.Delivery(t, "ops", airlock.EventApprovalRequested, ap.ID)
	if d.Status != airlock.NotificationSent || d.Attempts != 3 {
		t.Fatalf("delivery %+v, want sent on the third attempt", d)
	}
	rcv.mu.Lock()
	attempts := rcv.attempts[d.Key]
	rcv.mu.Unlock()
	if got := rcv.bodies(); len(got) != 1 || got[0].Data.Key != d.Key || attempts != 3 {
		t.Fatalf("received %+v, %d attempts; want one delivery of %s after 3 attempts", got, attempts, d.Key)
	}
	evs, err := env.Store.Events(t.Context(), airlock.EventFilter{AfterSeq: before, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var outcomes []string
	for _, e := range evs {
		if strings.HasPrefix(e.Kind, "notification.") {
			outcomes = append(outcomes, e.Kind+":"+e.Outcome)
		}
	}
	if want := []string{"notification.failed:failed", "notification.failed:failed", "notification.sent:sent"}; !slices.Equal(outcomes, want) {
		t.Fatalf("audited %v, want %v", outcomes, want)
	}
}

// TestDeadLetter: a receiver down for good leaves the delivery dead after
// the configured attempts, audited; a person's retry delivers it once the
// receiver is back.
func TestDeadLetter(t *testing.T) {
	rcv := newReceiver(t, oldSecret)
	rcv.down = true
	env := notifytest.New(t, notifytest.Options{Attempts: 3}, channel(t, rcv.srv.URL))
	ap, _ := env.Ask(t, "dead")
	d := env.Delivery(t, "ops", airlock.EventApprovalRequested, ap.ID)
	if d.Status != airlock.NotificationDead || d.Attempts != 3 || !strings.Contains(d.LastError, "503") {
		t.Fatalf("delivery %+v, want dead after 3 attempts with the receiver's answer", d)
	}
	evs, err := env.Store.Events(t.Context(), airlock.EventFilter{Kind: airlock.EventNotificationFail, Limit: 10})
	if err != nil || len(evs) != 3 || evs[2].Outcome != string(airlock.NotificationDead) {
		t.Fatalf("failure events %+v, %v; want 3, the last one dead", evs, err)
	}
	rcv.mu.Lock()
	rcv.down = false
	rcv.mu.Unlock()
	if _, err := env.Store.RetryNotification(t.Context(), d.ID, "root"); err != nil {
		t.Fatal(err)
	}
	d = env.Delivery(t, "ops", airlock.EventApprovalRequested, ap.ID)
	if d.Status != airlock.NotificationSent || len(rcv.bodies()) != 1 || rcv.bodies()[0].Data.Key != d.Key {
		t.Fatalf("after retry: %+v, received %+v", d, rcv.bodies())
	}
}

// TestEventsFilter: a channel that lists kinds gets only those.
func TestEventsFilter(t *testing.T) {
	rcv := newReceiver(t, oldSecret)
	env := notifytest.New(t, notifytest.Options{}, channel(t, rcv.srv.URL, airlock.EventApprovalCancelled))
	ap, _ := env.Ask(t, "filtered")
	if _, err := env.Store.CancelApproval(t.Context(), ap.ID, "bob", "not now", airlock.SurfaceCLI); err != nil {
		t.Fatal(err)
	}
	env.Delivery(t, "ops", airlock.EventApprovalCancelled, ap.ID)
	if got := rcv.bodies(); len(got) != 1 || got[0].Type != airlock.EventApprovalCancelled {
		t.Fatalf("received %+v, want only the cancellation", got)
	}
}

// TestSignatureHeaders checks the signature against the specification's
// own construction, for both secrets, and that a tampered body fails.
func TestSignatureHeaders(t *testing.T) {
	var hdr http.Header
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hdr, body = r.Header.Clone(), must(io.ReadAll(r.Body))
	}))
	defer srv.Close()
	at := time.Unix(1_800_000_000, 0)
	ch, err := webhook.New(webhook.Config{URL: srv.URL, Secrets: []string{newSecret, oldSecret}, Now: func() time.Time { return at },
		Headers: map[string]string{"X-Api-Key": "k"}})
	if err != nil {
		t.Fatal(err)
	}
	d := &notify.Delivery{Notification: airlock.Notification{ID: 7, Key: "msg_abc", Kind: airlock.NoticeTest, Channel: "ops",
		Created: at, Subject: "test"}}
	if _, err := ch.Deliver(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	sigs := strings.Fields(hdr.Get("webhook-signature"))
	if hdr.Get("webhook-id") != "msg_abc" || hdr.Get("webhook-timestamp") != "1800000000" || len(sigs) != 2 || hdr.Get("X-Api-Key") != "k" {
		t.Fatalf("headers %v", hdr)
	}
	for i, secret := range []string{newSecret, oldSecret} {
		w, _ := standardwebhooks.NewWebhook(secret)
		if want, _ := w.Sign("msg_abc", at, body); sigs[i] != want {
			t.Errorf("signature %d = %s, want %s", i, sigs[i], want)
		}
		if err := w.VerifyIgnoringTimestamp(append(body, ' '), hdr); err == nil {
			t.Errorf("a tampered body verifies with secret %d", i)
		}
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  webhook.Config
		want string
	}{
		{"no url", webhook.Config{Secrets: []string{oldSecret}}, "url"},
		{"relative url", webhook.Config{URL: "/hook", Secrets: []string{oldSecret}}, "url"},
		{"ftp", webhook.Config{URL: "ftp://x/y", Secrets: []string{oldSecret}}, "url"},
		{"plain http afar", webhook.Config{URL: "http://hooks.example/a?token=c2VjcmV0", Secrets: []string{oldSecret}}, "use https"},
		{"no secret", webhook.Config{URL: "https://x"}, "needs a signing secret"},
		{"no prefix", webhook.Config{URL: "https://x", Secrets: []string{"c2VjcmV0"}}, `starts with "whsec_"`},
		{"not base64", webhook.Config{URL: "https://x", Secrets: []string{"whsec_!!!"}}, "not base64"},
		{"short", webhook.Config{URL: "https://x", Secrets: []string{"whsec_c2VjcmV0"}}, "at least 24"},
		{"reserved header", webhook.Config{URL: "https://x", Secrets: []string{oldSecret}, Headers: map[string]string{"Webhook-Signature": "x"}}, "set by Airlock"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := webhook.New(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one saying %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "c2VjcmV0") {
				t.Errorf("the error repeats the secret: %v", err)
			}
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestErrorsHideTheURLsCredentials: a receiver that cannot be reached is
// reported without the URL's query or user info, which may hold a
// credential: the error is kept in the audit log.
func TestErrorsHideTheURLsCredentials(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := srv.Listener.Addr().String()
	srv.Close() // nobody listens any more
	ch, err := webhook.New(webhook.Config{URL: "http://user:hunter2@" + addr + "/hook?api_key=SUPERSECRET", Secrets: []string{oldSecret}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = ch.Deliver(context.Background(), &notify.Delivery{Notification: airlock.Notification{Key: "msg_1", Kind: airlock.NoticeTest}})
	if err == nil {
		t.Fatal("delivered to a closed port")
	}
	if msg := err.Error(); strings.Contains(msg, "SUPERSECRET") || strings.Contains(msg, "hunter2") || !strings.Contains(msg, addr+"/hook") {
		t.Fatalf("error %q", msg)
	}
}
