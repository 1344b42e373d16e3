package email

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/notify"
)

var now = time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)

// newChannel returns a channel mailing through s, in the clear (s is on
// 127.0.0.1), as s's user when s wants one.
func newChannel(t *testing.T, s *fakeSMTP, tweak ...func(*Config)) *Channel {
	t.Helper()
	cfg := Config{Host: s.Host(), Port: s.Port(), TLS: NoTLS, Username: s.User, Password: s.Pass,
		From: "airlock@example.com", Now: func() time.Time { return now }}
	for _, f := range tweak {
		f(&cfg)
	}
	ch, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// request returns the delivery of an approval.requested notice of a
// pending deploy, for alice and bob.
func request() *notify.Delivery {
	ap := &airlock.Approval{
		ID: "01938a7e-0000-7000-8000-000000000001",
		Action: airlock.Action{Agent: "coder-1", Tool: "deploy", RequestedBy: "carol",
			// A right-to-left override hides "prod" reversed.
			Args: []byte("{\"target\":\"staging\u202edorp\"}")},
		Class: "deploy", Tier: airlock.TierDestructive, Outcome: airlock.Ask, Status: airlock.StatusPending,
		Summary: "deploy `staging`", Detail: airlock.ApprovalDetail{Rule: "deploys"},
		Created: now, Expires: now.Add(10 * time.Minute),
	}
	return &notify.Delivery{
		Notification: airlock.Notification{ID: 1, Key: "msg_0193aaaa", Channel: "mail", Kind: airlock.EventApprovalRequested,
			Recipients: []string{"bob", "alice"}, Agent: ap.Agent, ApprovalID: ap.ID, Subject: "approval requested: " + ap.Summary},
		Approval: ap,
		Users:    []string{"alice@example.com", "bob@example.com"},
		Link:     "https://airlock.example/inbox/approvals/" + ap.ID,
	}
}

// resolved returns the delivery of the request's end: approved by bob,
// for alice and carol.
func resolved(shown string) *notify.Delivery {
	d := request()
	ap := *d.Approval
	ap.Status, ap.ResolvedBy, ap.Reason, ap.Surface, ap.ResolvedAt = airlock.StatusApproved, "bob", "looks right", airlock.SurfaceCLI, now.Add(time.Minute)
	d.Approval, d.Key, d.Kind, d.Shown = &ap, "msg_0193bbbb", airlock.EventApprovalResolved, shown
	d.Recipients, d.Users = []string{"alice", "carol"}, []string{"alice@example.com", "carol@example.com"}
	return d
}

func mustDeliver(t *testing.T, ch *Channel, d *notify.Delivery) string {
	t.Helper()
	ref, err := ch.Deliver(t.Context(), d)
	if err != nil {
		t.Fatalf("Deliver: %v", err)
	}
	return ref
}

func only(t *testing.T, s *fakeSMTP) received {
	t.Helper()
	mails := s.Mails()
	if len(mails) != 1 {
		t.Fatalf("the server took %d mails, want 1", len(mails))
	}
	return mails[0]
}

func wantContains(t *testing.T, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("%s lacks %q:\n%s", what, sub, s)
		}
	}
}

func TestNew(t *testing.T) {
	ok := Config{Host: "smtp.example.com", From: "airlock@example.com"}
	ch, err := New(ok)
	if err != nil {
		t.Fatal(err)
	}
	if ch.port != 587 || ch.mode != StartTLS || ch.timeout != DefaultTimeout || ch.maxArgs != DefaultMaxArgs ||
		ch.from.String() != `"Airlock" <airlock@example.com>` || ch.domain != "example.com" {
		t.Errorf("defaults: port %d, mode %s, timeout %s, max args %d, from %s, domain %s",
			ch.port, ch.mode, ch.timeout, ch.maxArgs, ch.from.String(), ch.domain)
	}
	for _, tc := range []struct {
		name string
		cfg  func(*Config)
		port int
		err  string // "" for valid
	}{
		{"implicit TLS", func(c *Config) { c.TLS = TLS }, 465, ""},
		{"own port", func(c *Config) { c.Port = 2525 }, 2525, ""},
		{"none to localhost", func(c *Config) { c.TLS, c.Host = NoTLS, "localhost" }, 25, ""},
		{"none to 127.0.0.2", func(c *Config) { c.TLS, c.Host = NoTLS, "127.0.0.2" }, 25, ""},
		{"none to ::1", func(c *Config) { c.TLS, c.Host = NoTLS, "::1" }, 25, ""},
		{"named sender", func(c *Config) { c.From = "Change Bot <bot@example.com>" }, 587, ""},
		{"credentials", func(c *Config) { c.Username, c.Password = "airlock", "hunter2" }, 587, ""},
		{"no host", func(c *Config) { c.Host = "" }, 0, "host:"},
		{"host with port", func(c *Config) { c.Host = "smtp.example.com:587" }, 0, "host:"},
		{"unix socket", func(c *Config) { c.Host = "unix:///var/run/smtp" }, 0, "host:"},
		{"host with space", func(c *Config) { c.Host = "smtp example.com" }, 0, "host:"},
		{"unknown TLS", func(c *Config) { c.TLS = "ssl" }, 0, "tls:"},
		{"none to a remote host", func(c *Config) { c.TLS = NoTLS }, 0, `tls: "none"`},
		{"none to a private address", func(c *Config) { c.TLS, c.Host = NoTLS, "10.0.0.5" }, 0, `tls: "none"`},
		{"port too big", func(c *Config) { c.Port = 70000 }, 0, "port:"},
		{"negative port", func(c *Config) { c.Port = -1 }, 0, "port:"},
		{"password alone", func(c *Config) { c.Password = "hunter2" }, 0, "username:"},
		{"line break in the password", func(c *Config) { c.Username, c.Password = "a", "hunter2\r\nQUIT" }, 0, "username, password:"},
		{"no sender", func(c *Config) { c.From = "" }, 0, "from:"},
		{"bad sender", func(c *Config) { c.From, c.Password, c.Username = "airlock", "hunter2", "a" }, 0, "from:"},
		{"header in the sender", func(c *Config) { c.From = "a@example.com\r\nBcc: eve@example.com" }, 0, "from:"},
		{"negative max args", func(c *Config) { c.MaxArgs = -1 }, 0, "max args:"},
		{"negative timeout", func(c *Config) { c.Timeout = -time.Second }, 0, "timeout:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := ok
			tc.cfg(&cfg)
			ch, err := New(cfg)
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("New: %v", err)
			case tc.err == "" && ch.port != tc.port:
				t.Errorf("port %d, want %d", ch.port, tc.port)
			case tc.err != "" && err == nil:
				t.Fatalf("New accepted %+v", cfg)
			case tc.err != "" && !strings.HasPrefix(err.Error(), tc.err):
				t.Errorf("error %q, want it to start with %q", err, tc.err)
			case err != nil && strings.Contains(err.Error(), "hunter2"):
				t.Errorf("error %q holds the password", err)
			}
		})
	}
}

func TestDeliverRequest(t *testing.T) {
	s := (&fakeSMTP{User: "airlock", Pass: "hunter2"}).start(t, "")
	ch := newChannel(t, s)
	d := request()
	ref := mustDeliver(t, ch, d)
	m := only(t, s)

	if got, want := m.From, "airlock@example.com"; got != want {
		t.Errorf("MAIL FROM %s, want %s", got, want)
	}
	if got, want := m.To, d.Users; !slices.Equal(got, want) {
		t.Errorf("RCPT TO %v, want %v", got, want)
	}
	if m.User != "airlock" {
		t.Errorf("authenticated as %q, want airlock", m.User)
	}
	h := m.Header
	for _, tc := range []struct{ header, want string }{
		{"From", `"Airlock" <airlock@example.com>`},
		{"To", "<alice@example.com>, <bob@example.com>"},
		{"Message-Id", "<msg_0193aaaa@example.com>"},
		{"References", "<approval-01938a7e-0000-7000-8000-000000000001@example.com>"},
		{"In-Reply-To", ""},
		{"Auto-Submitted", "auto-generated"},
		{"X-Auto-Response-Suppress", "All"},
		{"Date", now.Format(time.RFC1123Z)},
		{"Content-Transfer-Encoding", "quoted-printable"},
	} {
		if got := h.Get(tc.header); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.header, got, tc.want)
		}
	}
	if got := strings.ToLower(h.Get("Content-Type")); got != "text/plain; charset=utf-8" {
		t.Errorf("Content-Type %q, want text/plain; charset=utf-8", got)
	}
	if got, want := subjectOf(t, h), "[Airlock] coder-1 asks to run deploy (ask, destructive)"; got != want {
		t.Errorf("Subject %q, want %q", got, want)
	}
	if ref != h.Get("Message-Id") {
		t.Errorf("ref %q, want the Message-ID %q", ref, h.Get("Message-Id"))
	}
	wantContains(t, "body", m.Body,
		"coder-1 asks to run deploy\n",
		"This request waits for a review until 2026-11-22T09:10:00Z",
		"Approve or reject it in the inbox:\nhttps://airlock.example/inbox/approvals/01938a7e-0000-7000-8000-000000000001\n",
		"Agent:         coder-1\n",
		"Risk tier:     destructive\n",
		"Requested by:  carol\n",
		"Rule:          deploys\n",
		"Deadline:      2026-11-22T09:10:00Z\n",
		"Arguments:\n  {\n    \"target\": \"staging\\u202edorp\"\n  }\n",
		"Note: 1 hidden character in the arguments is shown as an escape",
		"Replying to this email does nothing: approve or reject in the inbox.",
	)
	if strings.ContainsRune(string(m.Data), '\u202e') || strings.ContainsRune(m.Body, '\u202e') {
		t.Error("the mail holds a raw right-to-left override")
	}
}

func TestMessageIDStableAcrossAttempts(t *testing.T) {
	s := (&fakeSMTP{}).start(t, "")
	ch := newChannel(t, s)
	first := mustDeliver(t, ch, request())
	second := mustDeliver(t, ch, request()) // the same delivery, attempted again
	other := request()
	other.Key = "msg_0193cccc"
	third := mustDeliver(t, ch, other)

	mails := s.Mails()
	if len(mails) != 3 {
		t.Fatalf("%d mails, want 3", len(mails))
	}
	ids := []string{mails[0].Header.Get("Message-Id"), mails[1].Header.Get("Message-Id"), mails[2].Header.Get("Message-Id")}
	if ids[0] != ids[1] || ids[0] != first || second != first {
		t.Errorf("two attempts of one delivery have Message-IDs %q and %q (refs %q, %q)", ids[0], ids[1], first, second)
	}
	if ids[2] == ids[0] || third == first {
		t.Errorf("another delivery has the same Message-ID %q", ids[2])
	}
}

func TestThreading(t *testing.T) {
	s := (&fakeSMTP{}).start(t, "")
	ch := newChannel(t, s)
	requested := mustDeliver(t, ch, request())
	root := "<approval-01938a7e-0000-7000-8000-000000000001@example.com>"

	for _, tc := range []struct {
		name, shown, inReplyTo, references string
	}{
		{"after the request's mail", requested, requested, root + " " + requested},
		{"without it", "", root, root},
		{"with a ref that is no Message-ID", "x>\r\nBcc: eve@example.com", root, root},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(s.Mails())
			mustDeliver(t, ch, resolved(tc.shown))
			m := s.Mails()[before]
			if got := m.Header.Get("In-Reply-To"); got != tc.inReplyTo {
				t.Errorf("In-Reply-To %q, want %q", got, tc.inReplyTo)
			}
			if got := strings.Join(strings.Fields(m.Header.Get("References")), " "); got != tc.references {
				t.Errorf("References %q, want %q", got, tc.references)
			}
			if got := m.Header.Get("Message-Id"); got != "<msg_0193bbbb@example.com>" {
				t.Errorf("Message-ID %q, want the end's own", got)
			}
			if m.Header.Get("Bcc") != "" || slices.Contains(m.To, "eve@example.com") {
				t.Error("a ref injected a header")
			}
			if got, want := subjectOf(t, m.Header), "[Airlock] approved by bob: coder-1 asks to run deploy (ask, destructive)"; got != want {
				t.Errorf("Subject %q, want %q", got, want)
			}
			if got, want := m.To, []string{"alice@example.com", "carol@example.com"}; !slices.Equal(got, want) {
				t.Errorf("RCPT TO %v, want %v", got, want)
			}
			wantContains(t, "body", m.Body,
				"This request has ended: approved by bob (cli): looks right.\n",
				"See it in the inbox:\nhttps://airlock.example/inbox/approvals/",
				"Replying to this email does nothing: Airlock reads no mail.",
			)
			if strings.Contains(m.Body, "Approve or reject") {
				t.Error("the end of a request asks for a review")
			}
		})
	}
}

func TestSubjectCannotInjectHeaders(t *testing.T) {
	s := (&fakeSMTP{}).start(t, "")
	ch := newChannel(t, s)
	d := request()
	d.Approval.Agent = "coder-1\r\nBcc: eve@example.com\r\n\r\nforged body"
	d.Approval.Tool = "déployer\u202e"
	mustDeliver(t, ch, d)
	m := only(t, s)
	if m.Header.Get("Bcc") != "" || slices.Contains(m.To, "eve@example.com") || strings.Contains(string(m.Data), "\r\nBcc:") {
		t.Errorf("the agent's name injected a header:\n%s", m.Data)
	}
	got := subjectOf(t, m.Header)
	want := `[Airlock] coder-1\r\nBcc: eve@example.com\r\n\r\nforged body asks to run déployer\u202e (ask, destructive)`
	if got != want {
		t.Errorf("Subject %q, want %q", got, want)
	}
	if strings.ContainsRune(got, '\u202e') {
		t.Error("the subject holds a raw right-to-left override")
	}
}

func TestSubjectIsClipped(t *testing.T) {
	d := request()
	d.Approval.Tool = strings.Repeat("é", 300)
	f := notify.Describe(d, 100)
	got := subject(d, &f)
	if len(got) > len("[Airlock] ")+maxSubject || !strings.HasSuffix(got, "…") {
		t.Errorf("subject of %d bytes: %q", len(got), got)
	}
}

func TestArgsAreClipped(t *testing.T) {
	s := (&fakeSMTP{}).start(t, "")
	ch := newChannel(t, s, func(c *Config) { c.MaxArgs = 40 })
	d := request()
	d.Approval.Args = []byte(`{"script":"` + strings.Repeat("x", 500) + `"}`)
	mustDeliver(t, ch, d)
	m := only(t, s)
	wantContains(t, "body", m.Body, "[…cut at 40 bytes: the whole arguments are in the inbox]")
	if strings.Contains(m.Body, strings.Repeat("x", 100)) {
		t.Error("the arguments were not cut")
	}
}

func TestOtherKinds(t *testing.T) {
	s := (&fakeSMTP{}).start(t, "")
	ch := newChannel(t, s)

	reminder := request()
	reminder.Kind, reminder.Key, reminder.Shown = airlock.NoticeReminder, "msg_rem", "<msg_0193aaaa@example.com>"
	decision := &notify.Delivery{
		Notification: airlock.Notification{Key: "msg_dec", Channel: "mail", Kind: airlock.EventDecision,
			Recipients: []string{"alice"}, Agent: "agent-1", Subject: "agent-1 ran write_file `/work/x`"},
		Users: []string{"alice@example.com"},
	}
	test := &notify.Delivery{
		Notification: airlock.Notification{Key: "msg_test", Channel: "mail", Kind: airlock.NoticeTest, Subject: "test notice"},
		Users:        []string{"root@example.com"},
	}
	expired := request()
	expired.Kind, expired.Key, expired.Approval.Status = airlock.EventApprovalExpired, "msg_exp", airlock.StatusExpired
	expired.Link = ""

	for _, tc := range []struct {
		name    string
		d       *notify.Delivery
		subject string
		body    []string
		thread  bool
	}{
		{"reminder", reminder, "[Airlock] Reminder: coder-1 asks to run deploy (ask, destructive)",
			[]string{"Reminder: this request still waits for a review, and its deadline is near: 2026-11-22T09:10:00Z.",
				"Approve or reject it in the inbox:"}, true},
		{"decision", decision, "[Airlock] agent-1 ran write_file `/work/x`",
			[]string{"It ran under a rule that tells the agent's owner; nothing waits for you.", "Agent:  agent-1",
				"Replying to this email does nothing"}, false},
		{"test", test, "[Airlock] Test: test notice",
			[]string{`This is a test of Airlock's email channel "mail": its mail reaches you.`}, false},
		{"expired without an inbox URL", expired, "[Airlock] expired: coder-1 asks to run deploy (ask, destructive)",
			[]string{"This request has ended: expired.", "Find request 01938a7e-0000-7000-8000-000000000001 in the Airlock inbox."}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(s.Mails())
			mustDeliver(t, ch, tc.d)
			m := s.Mails()[before]
			if got := subjectOf(t, m.Header); got != tc.subject {
				t.Errorf("Subject %q, want %q", got, tc.subject)
			}
			wantContains(t, "body", m.Body, tc.body...)
			if got := m.Header.Get("References") != ""; got != tc.thread {
				t.Errorf("References %q; want one: %v", m.Header.Get("References"), tc.thread)
			}
			if got := m.Header.Get("Auto-Submitted"); got != "auto-generated" {
				t.Errorf("Auto-Submitted %q", got)
			}
		})
	}
}

func TestRefusals(t *testing.T) {
	for _, tc := range []struct {
		name      string
		refuse    map[string]string
		pass      string // the channel's password (the server's is hunter2)
		permanent bool
		mailedTo  []string // nil: no mail
		err       []string
	}{
		{name: "every recipient refused for good", refuse: map[string]string{
			"alice@example.com": "550 5.1.1 no such user", "bob@example.com": "553 5.1.3 bad address"},
			permanent: true, err: []string{"every recipient refused", "alice@example.com (550 5.1.1 no such user)", "bob@example.com (553"}},
		{name: "one recipient refused for good", refuse: map[string]string{"bob@example.com": "550 5.1.1 no such user"},
			permanent: true, mailedTo: []string{"alice@example.com"},
			err: []string{"mailed to 1 of 2 recipients", "refused: bob@example.com (550 5.1.1 no such user)"}},
		{name: "one recipient refused for now", refuse: map[string]string{"bob@example.com": "451 4.7.1 greylisted, try later"},
			err: []string{"bob@example.com", "451"}},
		{name: "one for good, one for now", refuse: map[string]string{
			"alice@example.com": "550 5.1.1 no such user", "bob@example.com": "452 4.2.2 mailbox full"},
			err: []string{"452"}},
		{name: "wrong password", pass: "hunter3", permanent: true, err: []string{"535"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := (&fakeSMTP{User: "airlock", Pass: "hunter2"}).start(t, "")
			s.Refuse(func(addr string) string { return tc.refuse[addr] })
			ch := newChannel(t, s, func(c *Config) {
				if tc.pass != "" {
					c.Password = tc.pass
				}
			})
			_, err := ch.Deliver(t.Context(), request())
			if err == nil {
				t.Fatal("Deliver succeeded")
			}
			if got := notify.IsPermanent(err); got != tc.permanent {
				t.Errorf("permanent: %v, want %v (%v)", got, tc.permanent, err)
			}
			wantContains(t, "error", err.Error(), tc.err...)
			if strings.Contains(err.Error(), "hunter") {
				t.Errorf("error %q holds a password", err)
			}
			mails := s.Mails()
			switch {
			case tc.mailedTo == nil && len(mails) > 0:
				t.Errorf("mailed %v, want nothing sent", mails[0].To)
			case tc.mailedTo != nil && (len(mails) != 1 || !slices.Equal(mails[0].To, tc.mailedTo)):
				t.Errorf("mails %+v, want one to %v", mails, tc.mailedTo)
			}
		})
	}
}

func TestNoRecipient(t *testing.T) {
	s := (&fakeSMTP{}).start(t, "")
	ch := newChannel(t, s)
	for _, users := range [][]string{nil, {"not an address"}, {"bob@example.com\r\nBcc: eve@example.com"}} {
		d := request()
		d.Users = users
		_, err := ch.Deliver(t.Context(), d)
		if !notify.IsPermanent(err) || !strings.Contains(err.Error(), "no recipient") {
			t.Errorf("users %q: error %v, want a permanent one saying there is no recipient", users, err)
		}
	}
	if n := len(s.Mails()); n > 0 {
		t.Errorf("%d mails sent", n)
	}
}

func TestServerDownIsRetried(t *testing.T) {
	host, port := closedPort(t)
	ch, err := New(Config{Host: host, Port: port, TLS: NoTLS, From: "airlock@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = ch.Deliver(t.Context(), request())
	if err == nil || notify.IsPermanent(err) {
		t.Fatalf("error %v, want a retryable one", err)
	}
	wantContains(t, "error", err.Error(), fmt.Sprintf("smtp %s:%d: connect", host, port))
}

func TestContextBoundsTheSession(t *testing.T) {
	s := (&fakeSMTP{Mute: true}).start(t, "")
	ch := newChannel(t, s, func(c *Config) { c.Timeout = time.Hour })
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err := ch.Deliver(ctx, request())
	if !errors.Is(err, context.DeadlineExceeded) || notify.IsPermanent(err) {
		t.Errorf("error %v, want a retryable deadline", err)
	}

	// Cancelled while the server says nothing, with no deadline to go by.
	ctx, cancel = context.WithCancel(t.Context())
	go func() {
		// Cancel once the session is under way: the server has a connection.
		for {
			s.mu.Lock()
			n := len(s.conns)
			s.mu.Unlock()
			if n > 0 {
				cancel()
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	_, err = ch.Deliver(ctx, request())
	if !errors.Is(err, context.Canceled) || notify.IsPermanent(err) {
		t.Errorf("error %v, want a retryable cancellation", err)
	}
}

func TestTLS(t *testing.T) {
	serverTLS, roots := testCert(t)
	for _, tc := range []struct {
		name      string
		server    *fakeSMTP
		mode      string
		roots     bool
		permanent bool   // when it fails
		err       string // "": it succeeds
	}{
		{"starttls", &fakeSMTP{User: "airlock", Pass: "hunter2", TLS: serverTLS}, StartTLS, true, false, ""},
		{"implicit", &fakeSMTP{User: "airlock", Pass: "hunter2", TLS: serverTLS, Implicit: true}, TLS, true, false, ""},
		{"starttls not offered", &fakeSMTP{User: "airlock", Pass: "hunter2"}, StartTLS, true, true, "STARTTLS"},
		{"untrusted certificate", &fakeSMTP{TLS: serverTLS}, StartTLS, false, true, "certificate"},
		{"untrusted certificate, implicit", &fakeSMTP{TLS: serverTLS, Implicit: true}, TLS, false, true, "certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.server.start(t, "")
			ch := newChannel(t, s, func(c *Config) {
				c.TLS = tc.mode
				if tc.roots {
					c.TLSConfig = &tls.Config{RootCAs: roots}
				}
			})
			_, err := ch.Deliver(t.Context(), request())
			if tc.err == "" {
				if err != nil {
					t.Fatalf("Deliver: %v", err)
				}
				m := only(t, s)
				if !m.TLS || m.User != tc.server.User {
					t.Errorf("mail over TLS %v as %q, want TLS as %q", m.TLS, m.User, tc.server.User)
				}
				return
			}
			if err == nil {
				t.Fatal("Deliver succeeded")
			}
			if notify.IsPermanent(err) != tc.permanent {
				t.Errorf("permanent: %v, want %v (%v)", notify.IsPermanent(err), tc.permanent, err)
			}
			wantContains(t, "error", err.Error(), tc.err)
			if len(s.Mails()) > 0 {
				t.Error("mail was sent")
			}
		})
	}
}
