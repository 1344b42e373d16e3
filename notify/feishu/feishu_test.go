package feishu

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/notify"
)

func TestNew(t *testing.T) {
	ok := Config{AppID: "cli_a", AppSecret: "s3cret-never-shown", VerificationToken: "vt"}
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string // in the error; "" for none
	}{
		{"minimal", func(*Config) {}, ""},
		{"lark", func(c *Config) { c.BaseURL = "https://open.larksuite.com/"; c.ChatID = "oc_a1"; c.MaxArgs = 500 }, ""},
		{"no app id", func(c *Config) { c.AppID = "" }, "app_id"},
		{"no secret", func(c *Config) { c.AppSecret = "" }, "app_secret"},
		{"no token", func(c *Config) { c.VerificationToken = "" }, "verification_token"},
		{"user chat id", func(c *Config) { c.ChatID = "ou_123" }, "chat_id"},
		{"bad base", func(c *Config) { c.BaseURL = "open.feishu.cn" }, "base_url"},
		{"base with query", func(c *Config) { c.BaseURL = "https://open.feishu.cn/?x=1" }, "base_url"},
		{"bad inbox", func(c *Config) { c.InboxURL = "ftp://x" }, "inbox_url"},
		{"huge args", func(c *Config) { c.MaxArgs = MaxMaxArgs + 1 }, "max_args"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := ok
			tc.edit(&cfg)
			ch, err := New(cfg)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("New: %v", err)
			case tc.want == "" && ch == nil:
				t.Fatal("New returned no channel")
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("New: %v, want an error about %s", err, tc.want)
			case err != nil && cfg.AppSecret != "" && strings.Contains(err.Error(), cfg.AppSecret):
				t.Fatalf("the error holds the secret: %v", err)
			}
		})
	}
}

// testChannel is a channel on fake; chat "" writes direct messages.
func testChannel(t *testing.T, fake *fakeFeishu, chat string) *Channel {
	t.Helper()
	ch, err := New(Config{AppID: fake.appID, AppSecret: fake.appSecret, VerificationToken: testToken, ChatID: chat, BaseURL: fake.URL})
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// pending is a request as the store would hold it, with agent-controlled
// text chosen to break out of a card.
func pending() *airlock.Approval {
	h, _ := airlock.ParseHash(strings.Repeat("0f", 32))
	return &airlock.Approval{
		ID: "0190f0a0-0000-7000-8000-000000000001",
		Action: airlock.Action{Agent: "agent-1", Tool: "deploy [click](https://evil.example) <at id=all></at>",
			Args:        json.RawMessage(`{"cmd":"echo ` + "```" + ` <at id=all></at> [x](https://evil.example)","note":"a` + "\u202e" + `b"}`),
			RequestedBy: "carol"},
		ActionHash: h, Class: "deploy", Tier: airlock.TierDestructive, Outcome: airlock.Ask,
		Detail:  airlock.ApprovalDetail{Rule: "policy.yaml:3:5", Reason: "**urgent** <at id=ou_bob></at>"},
		Owner:   "alice",
		Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Expires: time.Date(2026, 1, 2, 3, 14, 5, 0, time.UTC),
		Status: airlock.StatusPending,
	}
}

func delivery(kind string, ap *airlock.Approval, users ...string) *notify.Delivery {
	d := &notify.Delivery{
		Notification: airlock.Notification{Key: "key-" + kind, Channel: channel, Kind: kind, Agent: "agent-1", Subject: "approval requested: deploy"},
		Approval:     ap, Users: users,
	}
	if ap != nil {
		d.ApprovalID, d.Link = ap.ID, notify.InboxLink("https://airlock.example", ap.ID)
	}
	return d
}

func TestCardKeepsAgentTextInert(t *testing.T) {
	fake := newFakeFeishu(t)
	ch := testChannel(t, fake, "oc_room")
	ref, err := ch.Deliver(context.Background(), delivery(airlock.EventApprovalRequested, pending(), "ou_alice", "ou_bob"))
	if err != nil {
		t.Fatal(err)
	}
	m, _ := fake.message(ref)
	var markup []string // every lark_md and markdown content
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if (v["tag"] == "lark_md" || v["tag"] == "markdown") && v["content"] != nil {
				markup = append(markup, v["content"].(string))
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(m.Card)
	var code string // the arguments' code block
	var prose []string
	for _, s := range markup {
		if strings.HasPrefix(s, "```\n") {
			code = s
			continue
		}
		prose = append(prose, s)
	}
	all := strings.Join(prose, "\n")
	for _, bad := range []string{"evil.example)", "<at id=all>", "<at id=ou_bob>**", "**urgent**"} {
		if strings.Contains(all, bad) {
			t.Errorf("agent text %q reached markup:\n%s", bad, all)
		}
	}
	// The chat's reviewers are mentioned by the channel itself.
	if !strings.Contains(all, "<at id=ou_alice></at> <at id=ou_bob></at>") {
		t.Errorf("the reviewers are not mentioned:\n%s", all)
	}
	// The arguments are in one code block the agent cannot close.
	if inner := strings.TrimSuffix(strings.TrimPrefix(code, "```\n"), "\n```"); code == "" || strings.Contains(inner, "`") || strings.Contains(inner, "<") {
		t.Errorf("arguments block %q", code)
	}
	if !strings.Contains(code, `\u202e`) {
		t.Errorf("the hidden character is not shown as an escape: %q", code)
	}
	text := string(mustJSON(m.Card))
	for _, want := range []string{"⚠ 1 hidden character shown as escapes", "View in inbox", "https://airlock.example/inbox/approvals/", "Agent's reason (its claim)"} {
		if !strings.Contains(text, want) {
			t.Errorf("the card lacks %q: %s", want, text)
		}
	}
	if got := m.Card["header"].(map[string]any)["template"]; got != "red" {
		t.Errorf("a destructive request's template is %v, want red", got)
	}
}

func TestDeliverRefreshesToken(t *testing.T) {
	fake := newFakeFeishu(t)
	ch := testChannel(t, fake, "oc_room")
	ctx := context.Background()
	if _, err := ch.Deliver(ctx, delivery(airlock.NoticeTest, nil)); err != nil {
		t.Fatal(err)
	}
	fake.revokeTokens() // the cached token is now refused with 99991663
	d := delivery(airlock.EventDecision, nil)
	if _, err := ch.Deliver(ctx, d); err != nil {
		t.Fatalf("Deliver with an expired token: %v", err)
	}
	if n := fake.tokensIssued(); n != 2 {
		t.Errorf("%d tokens issued, want 2 (one refresh)", n)
	}
	if n := len(fake.sent()); n != 2 {
		t.Errorf("%d messages, want 2", n)
	}
	if _, err := ch.Deliver(ctx, delivery(airlock.NoticeTest, nil)); err != nil || fake.tokensIssued() != 2 {
		t.Errorf("a third delivery: %v, %d tokens issued; want the cached token", err, fake.tokensIssued())
	}
}

func TestDeliverErrors(t *testing.T) {
	for _, tc := range []struct {
		name         string
		status, code int
		msg          string
		permanent    bool
	}{
		{"rate limited", http.StatusBadRequest, 99991400, "request trigger frequency limit", false},
		{"429", http.StatusTooManyRequests, 99991400, "too many requests", false},
		{"server error", http.StatusInternalServerError, 1500, "internal error", false},
		{"bot not in chat", http.StatusBadRequest, 230002, "Bot/User can NOT be out of the chat.", true},
		{"no permission", http.StatusBadRequest, 99991672, "Access denied. One of the following scopes is required: [im:message]", true},
		{"bad receive_id", http.StatusBadRequest, 230001, "Your request contains an invalid request parameter, ext=invalid receive_id.", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFakeFeishu(t)
			ch := testChannel(t, fake, "oc_room")
			fake.fail(http.MethodPost, "/open-apis/im/v1/messages", tc.status, tc.code, tc.msg)
			_, err := ch.Deliver(context.Background(), delivery(airlock.NoticeTest, nil))
			if err == nil {
				t.Fatal("Deliver succeeded")
			}
			if notify.IsPermanent(err) != tc.permanent {
				t.Errorf("permanent = %v, want %v: %v", notify.IsPermanent(err), tc.permanent, err)
			}
			var ae *apiError
			if !errors.As(err, &ae) || ae.code != tc.code || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %v, want code %d and Feishu's message", err, tc.code)
			}
			if strings.Contains(err.Error(), fake.appSecret) || strings.Contains(err.Error(), "t-g1044") {
				t.Errorf("the error holds a secret: %v", err)
			}
			// The next attempt goes through.
			if _, err := ch.Deliver(context.Background(), delivery(airlock.NoticeTest, nil)); err != nil {
				t.Errorf("retry: %v", err)
			}
		})
	}
}

func TestDeliverBadCredentials(t *testing.T) {
	fake := newFakeFeishu(t)
	ch, err := New(Config{AppID: fake.appID, AppSecret: "the-wrong-secret", VerificationToken: testToken, ChatID: "oc_room", BaseURL: fake.URL})
	if err != nil {
		t.Fatal(err)
	}
	_, err = ch.Deliver(context.Background(), delivery(airlock.NoticeTest, nil))
	if !notify.IsPermanent(err) || !strings.Contains(err.Error(), "10014") {
		t.Errorf("Deliver: %v, want a permanent error with code 10014", err)
	}
	if strings.Contains(err.Error(), "the-wrong-secret") {
		t.Errorf("the error holds the secret: %v", err)
	}

	// Feishu down: retried.
	fake.fail(http.MethodPost, tokenPath, http.StatusServiceUnavailable, 0, "")
	good := testChannel(t, fake, "oc_room")
	if _, err := good.Deliver(context.Background(), delivery(airlock.NoticeTest, nil)); err == nil || notify.IsPermanent(err) {
		t.Errorf("Deliver with the token endpoint down: %v, want a retryable error", err)
	}
}

func TestDirectMessages(t *testing.T) {
	fake := newFakeFeishu(t)
	ch := testChannel(t, fake, "") // no chat: each person directly
	ctx := context.Background()
	d := delivery(airlock.EventApprovalRequested, pending(), "ou_alice", "ou_bob")
	ref, err := ch.Deliver(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	sent := fake.sent()
	if len(sent) != 2 || ref != sent[0].ID+","+sent[1].ID {
		t.Fatalf("ref %q, sent %+v", ref, sent)
	}
	for i, want := range []string{"ou_alice", "ou_bob"} {
		if sent[i].ReceiveIDType != "open_id" || sent[i].ReceiveID != want {
			t.Errorf("message %d to %s %s, want open_id %s", i, sent[i].ReceiveIDType, sent[i].ReceiveID, want)
		}
		if strings.Contains(string(mustJSON(sent[i].Card)), "<at ") {
			t.Errorf("a direct message mentions someone: %v", sent[i].Card)
		}
	}

	// A retried delivery (same key) sends nothing new.
	again, err := ch.Deliver(ctx, d)
	if err != nil || again != ref || len(fake.sent()) != 2 {
		t.Errorf("retry: ref %q (%v), %d messages; want %q and 2", again, err, len(fake.sent()), ref)
	}

	// Its end updates both messages and tells the requester (the owner
	// reads it in her updated message and directly).
	ap := pending()
	ap.Status, ap.ResolvedBy, ap.Surface, ap.Reason = airlock.StatusRejected, "bob", airlock.SurfaceWeb, "not today"
	end := delivery(airlock.EventApprovalResolved, ap, "ou_alice", "ou_carol")
	end.Shown = ref
	if got, err := ch.Deliver(ctx, end); err != nil || got != ref {
		t.Fatalf("resolution: %q, %v", got, err)
	}
	for _, id := range strings.Split(ref, ",") {
		m, _ := fake.message(id)
		if m.Updates != 1 || buttonValueOf(m.Card, "reject") != nil {
			t.Errorf("message %s: %d updates, buttons %v", id, m.Updates, buttons(m.Card))
		}
		if !strings.Contains(string(mustJSON(m.Card)), "rejected by bob (web): not today") {
			t.Errorf("message %s does not show the outcome: %v", id, m.Card)
		}
	}
	told := fake.sent()[2:]
	if len(told) != 2 || told[0].ReceiveID != "ou_alice" || told[1].ReceiveID != "ou_carol" {
		t.Errorf("told %+v", told)
	}

	// Nobody to tell.
	if _, err := ch.Deliver(ctx, delivery(airlock.EventDecision, nil)); !notify.IsPermanent(err) {
		t.Errorf("a notice with no mapped recipient and no chat: %v, want a permanent error", err)
	}
}

func TestSettleWithoutCard(t *testing.T) {
	fake := newFakeFeishu(t)
	ch := testChannel(t, fake, "oc_room")
	ctx := context.Background()
	ap := pending()
	ap.Status, ap.Surface, ap.Reason = airlock.StatusExpired, airlock.SurfaceSystem, "deadline passed"

	// Never shown: a new card in the chat, and the owner told directly.
	if _, err := ch.Deliver(ctx, delivery(airlock.EventApprovalExpired, ap, "ou_alice")); err != nil {
		t.Fatal(err)
	}
	sent := fake.sent()
	if len(sent) != 2 || sent[0].ReceiveID != "oc_room" || sent[1].ReceiveID != "ou_alice" {
		t.Fatalf("sent %+v", sent)
	}
	if len(buttons(sent[0].Card)) != 1 {
		t.Errorf("an ended request's card has buttons %v", buttons(sent[0].Card))
	}

	// Shown, but the message is gone: said anew.
	d := delivery(airlock.EventApprovalExpired, ap)
	d.Key, d.Shown = "other", "om_recalled"
	ref, err := ch.Deliver(ctx, d)
	if err != nil || ref == "om_recalled" {
		t.Fatalf("ref %q, %v; want a new message", ref, err)
	}
	if m, ok := fake.message(ref); !ok || m.ReceiveID != "oc_room" {
		t.Errorf("new card %+v", m)
	}
}

func TestReminderRepliesToCard(t *testing.T) {
	fake := newFakeFeishu(t)
	ch := testChannel(t, fake, "oc_room")
	ctx := context.Background()
	ref, err := ch.Deliver(ctx, delivery(airlock.EventApprovalRequested, pending(), "ou_alice", "ou_bob"))
	if err != nil {
		t.Fatal(err)
	}
	d := delivery(airlock.NoticeReminder, pending(), "ou_alice", "ou_bob")
	d.Shown = ref
	got, err := ch.Deliver(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	m, ok := fake.message(got)
	if !ok || m.ReplyTo != ref {
		t.Fatalf("reminder %+v, want a reply to %s", m, ref)
	}
	text := string(mustJSON(m.Card))
	if !strings.Contains(text, `\u003cat id=ou_alice\u003e`) && !strings.Contains(text, "<at id=ou_alice>") {
		t.Errorf("the reminder does not mention the reviewers: %s", text)
	}
	if !strings.Contains(text, "2026-01-02 03:14 UTC") {
		t.Errorf("the reminder does not give the deadline: %s", text)
	}
}

func TestTestNotice(t *testing.T) {
	fake := newFakeFeishu(t)
	ch := testChannel(t, fake, "oc_room")
	ref, err := ch.Deliver(context.Background(), delivery(airlock.NoticeTest, nil))
	if err != nil {
		t.Fatal(err)
	}
	m, _ := fake.message(ref)
	if !strings.Contains(string(mustJSON(m.Card)), channel) {
		t.Errorf("the test message does not name the channel: %v", m.Card)
	}
	// A notify action that ran: the owner is named in the chat.
	ref, err = ch.Deliver(context.Background(), delivery(airlock.EventDecision, nil, "ou_alice"))
	if err != nil {
		t.Fatal(err)
	}
	m, _ = fake.message(ref)
	if text := string(mustJSON(m.Card)); !strings.Contains(text, `\u003cat id=ou_alice\u003e`) || !strings.Contains(text, "approval requested: deploy") {
		t.Errorf("the decision card: %s", text)
	}
	if _, err := ch.Deliver(context.Background(), delivery("made.up", nil)); !notify.IsPermanent(err) {
		t.Errorf("an unknown kind: %v, want a permanent error", err)
	}
}

func TestCardFitsAMessage(t *testing.T) {
	fake := newFakeFeishu(t)
	ch, err := New(Config{AppID: fake.appID, AppSecret: fake.appSecret, VerificationToken: testToken, ChatID: "oc_room",
		BaseURL: fake.URL, MaxArgs: MaxMaxArgs})
	if err != nil {
		t.Fatal(err)
	}
	ap := pending()
	ap.Args = json.RawMessage(`{"quotes":"` + strings.Repeat(`\"<`, 20000) + `"}`)
	d := delivery(airlock.EventApprovalRequested, ap)
	card := ch.card(d, nil)
	if n := len(encodeString(card)); n > cardBudget {
		t.Errorf("the card takes %d bytes in a request, more than %d", n, cardBudget)
	}
	if !strings.Contains(string(card), "The arguments are cut here") {
		t.Error("the card does not say the arguments are cut")
	}
	if _, err := ch.Deliver(context.Background(), d); err != nil {
		t.Fatal(err)
	}
}
