package email

import (
	"context"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/notify"
	"github.com/airlock-dev/airlock/notify/notifytest"
)

// mailSpec is the channel "mail" over ch, mapping bob, alice and carol.
func mailSpec(ch *Channel) *notify.Spec {
	return &notify.Spec{Name: "mail", Type: "email", Channel: ch, Users: map[string]string{
		"bob@example.com": "bob", "alice@example.com": "alice", "carol@example.com": "carol"}}
}

// settle resolves request ap (approved by bob) and waits for the agent's
// enforcement to end.
func settle(t *testing.T, env *notifytest.Env, ap airlock.Approval, done <-chan airlock.Enforcement) {
	t.Helper()
	if _, err := env.Store.ResolveApproval(t.Context(), airlock.Resolution{ApprovalID: ap.ID, Status: airlock.StatusApproved,
		ActionHash: ap.ActionHash, Reviewer: airlock.Reviewer{Name: "bob"}, Surface: airlock.SurfaceCLI}); err != nil {
		t.Fatal(err)
	}
	if enf := <-done; !enf.Allowed {
		t.Errorf("the approved action was not allowed: %+v", enf)
	}
}

func TestEndToEnd(t *testing.T) {
	s := (&fakeSMTP{User: "airlock", Pass: "hunter2"}).start(t, "")
	env := notifytest.New(t, notifytest.Options{}, mailSpec(newChannel(t, s)))

	ap, done := env.Ask(t, "prod")
	req := env.Delivery(t, "mail", airlock.EventApprovalRequested, ap.ID)
	if req.Status != airlock.NotificationSent {
		t.Fatalf("request delivery %s", &req)
	}
	mails := s.Mails()
	if len(mails) != 1 {
		t.Fatalf("%d mails after the request, want 1", len(mails))
	}
	m := mails[0]
	// The reviewers: bob, and alice, the agent's owner.
	if got, want := m.To, []string{"alice@example.com", "bob@example.com"}; !slices.Equal(got, want) {
		t.Errorf("request mailed to %v, want %v", got, want)
	}
	if got, want := m.Header.Get("Message-Id"), "<"+req.Key+"@example.com>"; got != want || req.Ref != want {
		t.Errorf("Message-ID %q, ref %q; want %q", got, req.Ref, want)
	}
	if got, want := subjectOf(t, m.Header), "[Airlock] agent-1 asks to run deploy (ask, "+ap.Tier.String()+")"; got != want {
		t.Errorf("Subject %q, want %q", got, want)
	}
	wantContains(t, "request body", m.Body, "https://airlock.example/inbox/approvals/"+ap.ID, "Requested by:",
		"/work/prod", "Replying to this email does nothing: approve or reject in the inbox.")

	settle(t, env, ap, done)
	end := env.Delivery(t, "mail", airlock.EventApprovalResolved, ap.ID)
	if end.Status != airlock.NotificationSent {
		t.Fatalf("end delivery %s", &end)
	}
	mails = s.Mails()
	if len(mails) != 2 {
		t.Fatalf("%d mails after the end, want 2", len(mails))
	}
	m = mails[1]
	// The owner and the requester; bob resolved it.
	if got, want := m.To, []string{"alice@example.com", "carol@example.com"}; !slices.Equal(got, want) {
		t.Errorf("end mailed to %v, want %v", got, want)
	}
	if got := m.Header.Get("In-Reply-To"); got != req.Ref {
		t.Errorf("In-Reply-To %q, want the request's mail %q", got, req.Ref)
	}
	root := "<approval-" + ap.ID + "@example.com>"
	if got, want := strings.Fields(m.Header.Get("References")), []string{root, req.Ref}; !slices.Equal(got, want) {
		t.Errorf("References %q, want %q", got, want)
	}
	if got := mails[0].Header.Get("References"); got != root {
		t.Errorf("the request's References %q, want %q", got, root)
	}
	wantContains(t, "end subject", subjectOf(t, m.Header), "[Airlock] approved by bob: agent-1 asks to run deploy")
	wantContains(t, "end body", m.Body, "This request has ended: approved by bob (cli).")
}

func TestEndToEndServerDown(t *testing.T) {
	host, port := closedPort(t)
	ch, err := New(Config{Host: host, Port: port, TLS: NoTLS, From: "airlock@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	env := notifytest.New(t, notifytest.Options{Attempts: 1000}, mailSpec(ch))
	ap, done := env.Ask(t, "prod")

	failed := waitNotification(t, env, ap.ID, func(n airlock.Notification) bool { return n.LastError != "" })
	if failed.Status != airlock.NotificationFailed || !strings.Contains(failed.LastError, "connection refused") {
		t.Fatalf("with the server down: %s", &failed)
	}
	s := (&fakeSMTP{}).start(t, net.JoinHostPort(host, strconv.Itoa(port)))
	sent := env.Delivery(t, "mail", airlock.EventApprovalRequested, ap.ID)
	if sent.Status != airlock.NotificationSent || sent.Attempts < 2 {
		t.Fatalf("once the server is up: %s after %d attempts", &sent, sent.Attempts)
	}
	if mails := s.Mails(); len(mails) != 1 || mails[0].Header.Get("Message-Id") != sent.Ref {
		t.Errorf("mails %d, want 1 with Message-ID %s", len(mails), sent.Ref)
	}
	settle(t, env, ap, done)
}

func TestEndToEndRefusedIsDead(t *testing.T) {
	s := (&fakeSMTP{}).start(t, "")
	s.Refuse(func(string) string { return "550 5.1.1 no such user" })
	env := notifytest.New(t, notifytest.Options{Attempts: 1000}, mailSpec(newChannel(t, s)))
	ap, done := env.Ask(t, "prod")
	n := env.Delivery(t, "mail", airlock.EventApprovalRequested, ap.ID)
	if n.Status != airlock.NotificationDead || n.Attempts != 1 || !strings.Contains(n.LastError, "550") {
		t.Errorf("refused for good: %s after %d attempts, want dead after 1", &n, n.Attempts)
	}
	if len(s.Mails()) > 0 {
		t.Error("mail was sent")
	}
	settle(t, env, ap, done)
}

// waitNotification waits until the mail channel's delivery of request id's
// approval.requested notice satisfies ok, and returns it.
func waitNotification(t *testing.T, env *notifytest.Env, id string, ok func(airlock.Notification) bool) airlock.Notification {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		ns, err := env.Store.Notifications(ctx, airlock.NotificationFilter{Channel: "mail", Kind: airlock.EventApprovalRequested, ApprovalID: id})
		if err != nil {
			t.Fatal(err)
		}
		if len(ns) > 0 && ok(ns[0]) {
			return ns[0]
		}
		time.Sleep(5 * time.Millisecond) // polling, as notifytest does
	}
	t.Fatal("the delivery never got there")
	return airlock.Notification{}
}
