package slack_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/notify"
	"github.com/airlock-dev/airlock/notify/slack"
)

// pending is a request as the notifier hands it to a channel.
func pending() *airlock.Approval {
	a := airlock.Action{Agent: "agent-1", Tool: "deploy", Args: json.RawMessage(`{"path":"/work/prod"}`), RequestedBy: "carol"}
	h, err := a.Hash()
	if err != nil {
		panic(err)
	}
	return &airlock.Approval{ID: "0190a4c4-1111-7000-8000-000000000001", Action: a, ActionHash: h, Class: "deploy",
		Tier: airlock.TierWrite, Outcome: airlock.Ask, Summary: "deploy /work/prod", Reviewers: []string{"bob"}, Owner: "alice",
		Created: time.Unix(1700000000, 0), Expires: time.Unix(1700000600, 0), Status: airlock.StatusPending,
		Detail: airlock.ApprovalDetail{Rule: "rule deploys"}}
}

func settled(status airlock.ApprovalStatus, by string, s airlock.Surface, reason string) *airlock.Approval {
	ap := pending()
	ap.Status, ap.ResolvedBy, ap.Surface, ap.Reason, ap.ResolvedAt = status, by, s, reason, time.Unix(1700000100, 0)
	return ap
}

func delivery(kind string, ap *airlock.Approval, users ...string) *notify.Delivery {
	d := &notify.Delivery{Approval: ap, Users: users}
	d.Kind, d.Channel, d.Agent, d.Subject = kind, "team-slack", "agent-1", kind+": deploy /work/prod"
	if ap != nil {
		d.ApprovalID, d.Link = ap.ID, "https://airlock.example/inbox/approvals/"+ap.ID
	}
	return d
}

func newChannel(t *testing.T, f *fakeSlack, room string) *slack.Channel {
	t.Helper()
	ch, err := slack.New(slack.Config{Token: botToken, SigningSecret: secret, Channel: room, APIURL: f.APIURL()})
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// Each kind of notice, in a room and by direct message: what is posted,
// where, what is updated, and the ref kept.
func TestDeliver(t *testing.T) {
	tests := []struct {
		name  string
		room  string
		shown bool // the request was posted first: d.Shown is its ref
		d     *notify.Delivery
		check func(t *testing.T, f *fakeSlack, shown, ref string)
	}{
		{"request in a room", roomName, false, delivery(airlock.EventApprovalRequested, pending(), "UBOB"),
			func(t *testing.T, f *fakeSlack, _, ref string) {
				text, buttons := render(t, f.message(t, ref).Blocks)
				wantContains(t, "the message", text, "agent-1 asks to run deploy", "For <@UBOB>", "*Deadline*\n<!date^1700000600^")
				if buttons[slack.ActionApprove] == nil || buttons[slack.ActionReject] == nil {
					t.Errorf("no Approve and Reject buttons")
				}
				if c := f.callsTo("chat.postMessage")[0]; c.Form.Get("channel") != roomName || c.Form.Get("unfurl_links") != "false" {
					t.Errorf("posted to %q (unfurl_links %q)", c.Form.Get("channel"), c.Form.Get("unfurl_links"))
				}
			}},
		{"request settled before it was shown", roomName, false,
			delivery(airlock.EventApprovalRequested, settled(airlock.StatusRejected, "bob", airlock.SurfaceCLI, "no")),
			func(t *testing.T, f *fakeSlack, _, ref string) {
				text, buttons := render(t, f.message(t, ref).Blocks)
				wantContains(t, "the message", text, "❌ rejected by bob (cli): no")
				if buttons[slack.ActionApprove] != nil || buttons[slack.ActionReject] != nil {
					t.Errorf("a settled request offers buttons")
				}
			}},
		{"request by direct message", "", false, delivery(airlock.EventApprovalRequested, pending(), "UALICE", "UBOB"),
			func(t *testing.T, f *fakeSlack, _, ref string) {
				if want := "DALICE/1700000000.000100,DBOB/1700000000.000200"; ref != want {
					t.Errorf("ref = %q, want %q", ref, want)
				}
				text, _ := render(t, f.message(t, "DBOB/1700000000.000200").Blocks)
				if strings.Contains(text, "<@") {
					t.Errorf("a direct message mentions people:\n%s", text)
				}
			}},
		{"reminder in the thread", roomName, true, delivery(airlock.NoticeReminder, pending(), "UBOB"),
			func(t *testing.T, f *fakeSlack, shown, ref string) {
				replies := f.replies(shown)
				if len(replies) != 1 || replies[0].Channel+"/"+replies[0].TS != ref {
					t.Fatalf("replies %+v, ref %q", replies, ref)
				}
				wantContains(t, "the reminder", replies[0].Text, "<@UBOB>", "Reminder", "<!date^1700000600^")
			}},
		{"reminder of a request never shown", roomName, false, delivery(airlock.NoticeReminder, pending(), "UBOB"),
			func(t *testing.T, f *fakeSlack, _, ref string) {
				if _, buttons := render(t, f.message(t, ref).Blocks); buttons[slack.ActionApprove] == nil {
					t.Errorf("the request shown late offers no Approve")
				}
			}},
		{"resolved", roomName, true, delivery(airlock.EventApprovalResolved,
			settled(airlock.StatusApproved, "bob", airlock.SurfaceWeb, "ok"), "UALICE", "UCAROL"),
			func(t *testing.T, f *fakeSlack, shown, ref string) {
				m := f.message(t, shown)
				text, buttons := render(t, m.Blocks)
				wantContains(t, "the updated message", text, "✅ approved by bob (web): ok", `"path": "/work/prod"`)
				if m.Updates != 1 || buttons[slack.ActionApprove] != nil || buttons[slack.ActionInbox] == nil {
					t.Errorf("updates %d, buttons %v", m.Updates, buttons)
				}
				replies := f.replies(shown)
				if len(replies) != 1 {
					t.Fatalf("%d replies", len(replies))
				}
				wantContains(t, "the reply", replies[0].Text, "<@UALICE> <@UCAROL> ✅ approved by bob (web): ok")
				if ref != replies[0].Channel+"/"+replies[0].TS {
					t.Errorf("ref %q is not the reply", ref)
				}
			}},
		{"resolved, nobody to tell", roomName, true, delivery(airlock.EventApprovalResolved,
			settled(airlock.StatusApproved, "bob", airlock.SurfaceWeb, "")),
			func(t *testing.T, f *fakeSlack, shown, ref string) {
				if len(f.replies(shown)) != 0 || ref != "" {
					t.Errorf("replied (ref %q)", ref)
				}
			}},
		{"resolved, never shown", roomName, false, delivery(airlock.EventApprovalResolved,
			settled(airlock.StatusApproved, "bob", airlock.SurfaceSlack, ""), "UALICE"),
			func(t *testing.T, f *fakeSlack, _, ref string) {
				m := f.message(t, ref)
				text, _ := render(t, m.Blocks)
				wantContains(t, "the message", text, "✅ approved by bob (slack)", "For <@UALICE>")
				wantContains(t, "the fallback", m.Text, "<@UALICE>")
			}},
		{"expired", roomName, true, delivery(airlock.EventApprovalExpired,
			settled(airlock.StatusExpired, "", airlock.SurfaceSystem, "deadline passed")),
			func(t *testing.T, f *fakeSlack, shown, _ string) {
				text, _ := render(t, f.message(t, shown).Blocks)
				wantContains(t, "the updated message", text, "⌛ expired: deadline passed")
			}},
		{"cancelled, by direct message", "", true, delivery(airlock.EventApprovalCancelled,
			settled(airlock.StatusCancelled, "alice", airlock.SurfaceCLI, "not today"), "UCAROL"),
			func(t *testing.T, f *fakeSlack, shown, ref string) {
				for _, s := range strings.Split(shown, ",") {
					text, _ := render(t, f.message(t, s).Blocks)
					wantContains(t, s, text, "🚫 cancelled by alice (cli): not today")
				}
				if !strings.HasPrefix(ref, "DCAROL/") {
					t.Errorf("ref = %q, want a direct message to carol", ref)
				}
			}},
		{"decision", roomName, false, delivery(airlock.EventDecision, nil, "UALICE"),
			func(t *testing.T, f *fakeSlack, _, ref string) {
				text, _ := render(t, f.message(t, ref).Blocks)
				wantContains(t, "the message", text, "decision: deploy /work/prod", "*Agent*\nagent-1", "For <@UALICE>")
			}},
		{"test", roomName, false, delivery(airlock.NoticeTest, nil),
			func(t *testing.T, f *fakeSlack, _, ref string) {
				wantContains(t, "the message", f.message(t, ref).Text, "test notification through channel *team-slack*")
			}},
		{"test by direct message", "", false, delivery(airlock.NoticeTest, nil, "UROOT"),
			func(t *testing.T, f *fakeSlack, _, ref string) {
				if !strings.HasPrefix(ref, "DROOT/") {
					t.Errorf("ref = %q", ref)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeSlack(t)
			ch := newChannel(t, f, tt.room)
			var shown string
			if tt.shown {
				req := delivery(airlock.EventApprovalRequested, pending(), "UALICE", "UBOB")
				var err error
				if shown, err = ch.Deliver(t.Context(), req); err != nil {
					t.Fatal(err)
				}
				tt.d.Shown = shown
			}
			ref, err := ch.Deliver(t.Context(), tt.d)
			if err != nil {
				t.Fatalf("Deliver: %v", err)
			}
			tt.check(t, f, shown, ref)
		})
	}
}

// What Slack refuses is an error naming Slack's code; what no retry can
// help is Permanent; a rate limit is retried.
func TestDeliverErrors(t *testing.T) {
	tests := []struct {
		name      string
		kind      string
		fail      failure
		method    string
		permanent bool
		says      string
	}{
		{"invalid_auth", airlock.EventApprovalRequested, failure{Code: "invalid_auth"}, "chat.postMessage", true, "invalid_auth"},
		{"channel_not_found", airlock.EventApprovalRequested, failure{Code: "channel_not_found"}, "chat.postMessage", true, "channel_not_found"},
		{"not_in_channel", airlock.EventApprovalRequested, failure{Code: "not_in_channel"}, "chat.postMessage", true, "not_in_channel"},
		{"account_inactive", airlock.NoticeTest, failure{Code: "account_inactive"}, "chat.postMessage", true, "account_inactive"},
		{"token_revoked", airlock.EventApprovalResolved, failure{Code: "token_revoked"}, "chat.update", true, "token_revoked"},
		{"ratelimited", airlock.EventApprovalRequested, failure{Code: "ratelimited"}, "chat.postMessage", false, "ratelimited"},
		{"HTTP 429", airlock.EventApprovalResolved, failure{Status: http.StatusTooManyRequests, RetryAfter: "30"}, "chat.update", false, "rate limited (retry after 30s)"},
		{"HTTP 503", airlock.EventApprovalRequested, failure{Status: http.StatusServiceUnavailable}, "chat.postMessage", false, "503"},
		{"internal_error", airlock.NoticeReminder, failure{Code: "internal_error"}, "chat.postMessage", false, "internal_error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeSlack(t)
			ch := newChannel(t, f, roomName)
			d := delivery(tt.kind, pending(), "UBOB")
			if tt.kind == airlock.NoticeTest {
				d.Approval = nil
			}
			if tt.kind != airlock.EventApprovalRequested {
				shown, err := ch.Deliver(t.Context(), delivery(airlock.EventApprovalRequested, pending()))
				if err != nil {
					t.Fatal(err)
				}
				d.Shown = shown
			}
			f.failNext(tt.method, tt.fail)
			_, err := ch.Deliver(t.Context(), d)
			if err == nil {
				t.Fatal("Deliver succeeded")
			}
			if notify.IsPermanent(err) != tt.permanent {
				t.Errorf("permanent = %v, want %v: %v", notify.IsPermanent(err), tt.permanent, err)
			}
			wantContains(t, "the error", err.Error(), "slack "+tt.method, tt.says)
			if strings.Contains(err.Error(), botToken) {
				t.Errorf("the error holds the token: %v", err)
			}
			// Once Slack is back, the retry goes through.
			if _, err := ch.Deliver(t.Context(), d); err != nil {
				t.Errorf("retry: %v", err)
			}
		})
	}

	t.Run("wrong token", func(t *testing.T) {
		f := newFakeSlack(t)
		ch, err := slack.New(slack.Config{Token: "xoxb-other", SigningSecret: secret, Channel: roomName, APIURL: f.APIURL()})
		if err != nil {
			t.Fatal(err)
		}
		_, err = ch.Deliver(t.Context(), delivery(airlock.EventApprovalRequested, pending()))
		if !notify.IsPermanent(err) || !strings.Contains(err.Error(), "invalid_auth") || strings.Contains(err.Error(), "xoxb-other") {
			t.Errorf("err = %v, want a permanent invalid_auth without the token", err)
		}
	})
	t.Run("direct messages to nobody", func(t *testing.T) {
		ch := newChannel(t, newFakeSlack(t), "")
		_, err := ch.Deliver(t.Context(), delivery(airlock.EventApprovalRequested, pending()))
		if !notify.IsPermanent(err) {
			t.Errorf("err = %v, want permanent", err)
		}
	})
	t.Run("Slack unreachable", func(t *testing.T) {
		f := newFakeSlack(t)
		ch := newChannel(t, f, roomName)
		f.srv.Close()
		_, err := ch.Deliver(t.Context(), delivery(airlock.EventApprovalRequested, pending()))
		if err == nil || notify.IsPermanent(err) {
			t.Errorf("err = %v, want a retryable error", err)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		ch := newChannel(t, newFakeSlack(t), roomName)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := ch.Deliver(ctx, delivery(airlock.EventApprovalRequested, pending())); err == nil || notify.IsPermanent(err) {
			t.Errorf("err = %v, want a retryable error", err)
		}
	})
}

// Text an agent controls cannot form mentions, links or dates, end the
// arguments' code block, or hide characters. (The fake fails the test on
// any < > & left raw in mrkdwn.)
func TestDeliverEscapes(t *testing.T) {
	f := newFakeSlack(t)
	ch := newChannel(t, f, roomName)
	ap := pending()
	ap.Agent, ap.Tool, ap.Class = "a&b", "<!channel>", "x>y"
	ap.Args = json.RawMessage(`{"cmd":"echo <@U0BOSS> & ` + "```" + ` done <https://evil.example|click>","z":"` + "\u200b" + `"}`)
	ap.Detail.Reason = "trust me *bold* <!here> ```"
	ref, err := ch.Deliver(t.Context(), delivery(airlock.EventApprovalRequested, ap))
	if err != nil {
		t.Fatal(err)
	}
	m := f.message(t, ref)
	text, _ := render(t, m.Blocks)
	wantContains(t, "the message", text,
		"a&b asks to run <!channel>", // the header is plain text, shown as written
		"*Agent*\na&amp;b", "*Tool*\n&lt;!channel&gt;", "*Class*\nx&gt;y",
		"echo &lt;@U0BOSS&gt; &amp; `\\u0060` done &lt;https://evil.example|click&gt;",
		`\u200b`, "⚠ 1 hidden character shown as escapes",
		"*Agent's reason (its claim)*\n```\ntrust me *bold* &lt;!here&gt; `\\u0060`\n```")
	if strings.Count(text, "```") != 4 {
		t.Errorf("the message has %d ``` (two code blocks: 4):\n%s", strings.Count(text, "```"), text)
	}
	wantContains(t, "the fallback", m.Text, "a&amp;b asks to run &lt;!channel&gt;")
}

// Limits: a small MaxArgs clips the arguments; the long facts stay within
// Slack's limits (the fake checks them).
func TestDeliverLimits(t *testing.T) {
	f := newFakeSlack(t)
	ch, err := slack.New(slack.Config{Token: botToken, SigningSecret: secret, Channel: roomName, APIURL: f.APIURL(), MaxArgs: 64})
	if err != nil {
		t.Fatal(err)
	}
	ap := pending()
	ap.Tool = strings.Repeat("t", 400)
	ap.Args = json.RawMessage(`{"cmd":"` + strings.Repeat("<", 1000) + `"}`)
	ap.Detail.Reason = strings.Repeat("&", 5000)
	d := delivery(airlock.EventApprovalRequested, ap)
	d.Link = ""
	ref, err := ch.Deliver(t.Context(), d)
	if err != nil {
		t.Fatal(err)
	}
	text, _ := render(t, f.message(t, ref).Blocks)
	wantContains(t, "the message", text, "&lt;&lt;…\n```", "see them whole with `airlock approvals show "+ap.ID+"`")
	if strings.Count(text, "&lt;") > 64 {
		t.Errorf("more than MaxArgs of the arguments shown")
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name string
		cfg  slack.Config
		says string // "": valid
	}{
		{"room", slack.Config{Token: botToken, SigningSecret: secret, Channel: "#agent-approvals"}, ""},
		{"room ID", slack.Config{Token: botToken, SigningSecret: secret, Channel: "C0123456789"}, ""},
		{"direct messages over socket mode", slack.Config{Token: botToken, AppToken: appToken}, ""},
		{"no token", slack.Config{SigningSecret: secret}, "token: a Slack bot token (xoxb-…) is required"},
		{"user token", slack.Config{Token: "xoxp-1234", SigningSecret: secret}, "token:"},
		{"app token as bot token", slack.Config{Token: appToken, SigningSecret: secret}, "token:"},
		{"bad app token", slack.Config{Token: botToken, AppToken: "xoxb-9999"}, "app_token:"},
		{"no way for clicks", slack.Config{Token: botToken}, "signing_secret:"},
		{"bad room", slack.Config{Token: botToken, SigningSecret: secret, Channel: "agent approvals"}, "channel:"},
		{"user as room", slack.Config{Token: botToken, SigningSecret: secret, Channel: "U0123456789"}, "channel:"},
		{"bad api url", slack.Config{Token: botToken, SigningSecret: secret, APIURL: "slack.com/api"}, "api_url:"},
		{"max args too large", slack.Config{Token: botToken, SigningSecret: secret, MaxArgs: slack.MaxArgsLimit + 1}, "max_args:"},
		{"max args negative", slack.Config{Token: botToken, SigningSecret: secret, MaxArgs: -1}, "max_args:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := slack.New(tt.cfg)
			switch {
			case tt.says == "" && err != nil:
				t.Fatalf("New: %v", err)
			case tt.says != "" && (err == nil || !strings.Contains(err.Error(), tt.says)):
				t.Fatalf("New: %v, want an error saying %q", err, tt.says)
			}
			if err != nil {
				for _, s := range []string{secret, botToken, appToken, "xoxb-9999", "xoxp-1234"} {
					if strings.Contains(err.Error(), s) {
						t.Errorf("the error holds a secret: %v", err)
					}
				}
			}
		})
	}
}
