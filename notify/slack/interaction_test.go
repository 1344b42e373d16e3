package slack_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	slackgo "github.com/slack-go/slack"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
	"github.com/airlock-dev/airlock/notify"
	"github.com/airlock-dev/airlock/notify/notifytest"
	"github.com/airlock-dev/airlock/notify/slack"
)

// users maps the workspace's people to Airlock identities: bob reviews
// deploys, alice owns agent-1, carol asks for its actions, root is an
// admin, and one Slack user is mapped to the agent itself.
var users = map[string]string{"UBOB": "bob", "UALICE": "alice", "UCAROL": "carol", "UAGENT": "agent-1", "UROOT": "root"}

// rig is a Slack channel delivering through a fake Slack for a real store
// and notifier, with its interactivity endpoint.
type rig struct {
	f       *fakeSlack
	ch      *slack.Channel
	env     *notifytest.Env
	clicks  *notify.Clicks
	handler http.Handler
}

// newRig posts to room, or by direct message when room is "".
func newRig(t *testing.T, room string) *rig {
	t.Helper()
	f := newFakeSlack(t)
	ch, err := slack.New(slack.Config{Token: botToken, SigningSecret: secret, AppToken: appToken, Channel: room, APIURL: f.APIURL()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ch.Close() })
	spec := &notify.Spec{Name: "team-slack", Type: "slack", Room: room != "", Updates: true, Users: users, Channel: ch}
	env := notifytest.New(t, notifytest.Options{}, spec)
	clicks := &notify.Clicks{Store: env.Store, Channel: "team-slack", Surface: airlock.SurfaceSlack, Users: users, Path: "/callbacks/team-slack",
		Remember: env.Remember}
	return &rig{f: f, ch: ch, env: env, clicks: clicks, handler: ch.Handler(clicks)}
}

// ask starts a deploy to target and returns the pending request, the
// channel of its enforcement, and the Slack message that shows it.
func (r *rig) ask(t *testing.T, target string) (airlock.Approval, <-chan airlock.Enforcement, string) {
	t.Helper()
	return r.askAction(t, airlocktest.Action("deploy", target))
}

// askAction starts a, which asks, and returns its pending request, the
// channel of its enforcement, and the Slack message that shows it.
func (r *rig) askAction(t *testing.T, a airlock.Action) (airlock.Approval, <-chan airlock.Enforcement, string) {
	t.Helper()
	ap, done := r.env.AskAction(t, a)
	out, ended := make(chan airlock.Enforcement, 1), make(chan struct{})
	go func() {
		out <- <-done
		close(ended)
	}()
	t.Cleanup(func() {
		// Cancel the request if it still waits, and let its check end.
		r.env.Store.CancelApproval(context.Background(), ap.ID, "", "test over", airlock.SurfaceSystem)
		select {
		case <-ended:
		case <-time.After(10 * time.Second):
			t.Errorf("the check of %s never ended", ap.ID)
		}
	})
	n := r.env.Delivery(t, "team-slack", airlock.EventApprovalRequested, ap.ID)
	if n.Status != airlock.NotificationSent {
		t.Fatalf("request delivery %s", n.String())
	}
	return ap, out, n.Ref
}

// serve sends req to the interactivity endpoint.
func (r *rig) serve(req *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	r.handler.ServeHTTP(w, req)
	return w
}

// click is user clicking the button action of message ref, signed now.
func (r *rig) click(t *testing.T, ref, user, action string, edit func(*value)) *httptest.ResponseRecorder {
	t.Helper()
	return r.serve(signedRequest(clickBody(t, r.f.message(t, ref), user, action, edit), time.Now()))
}

// serveIdle serves req, wants status want, and that it changed nothing:
// no audit record, request id still pending, no call to Slack.
func (r *rig) serveIdle(t *testing.T, id string, req *http.Request, want int) {
	t.Helper()
	head, calls := r.env.Head(t), r.f.count()
	if w := r.serve(req); w.Code != want {
		t.Errorf("status %d (%s), want %d", w.Code, strings.TrimSpace(w.Body.String()), want)
	}
	if h := r.env.Head(t); h != head {
		t.Errorf("the audit log grew: head %d → %d", head, h)
	}
	if got := r.env.Approval(t, id); got.Status != airlock.StatusPending {
		t.Errorf("the request is %s", got.Status)
	}
	if r.f.count() != calls {
		t.Errorf("Slack was called: %s", r.f.describe())
	}
}

// ephemeral waits for the next answer only user sees, after the n so far.
func (r *rig) ephemeral(t *testing.T, n int) call {
	t.Helper()
	return r.f.waitCalls(t, "chat.postEphemeral", n+1)[n]
}

// value is what Airlock's buttons carry.
type value struct {
	ID   string `json:"id"`
	Hash string `json:"hash"`
}

// clickBody is the form Slack posts when user clicks the button action of
// m (edit changes the button's value first, as a forger would).
func clickBody(t *testing.T, m fakeMessage, user, action string, edit func(*value)) string {
	t.Helper()
	_, buttons := render(t, m.Blocks)
	btn := buttons[action]
	if btn == nil {
		t.Fatalf("message %s/%s has no %s button", m.Channel, m.TS, action)
	}
	val := btn.Value
	if edit != nil {
		var v value
		if err := json.Unmarshal([]byte(val), &v); err != nil {
			t.Fatal(err)
		}
		edit(&v)
		b, _ := json.Marshal(v)
		val = string(b)
	}
	payload := map[string]any{
		"type":       "block_actions",
		"user":       map[string]any{"id": user, "username": strings.ToLower(user), "name": strings.ToLower(user), "team_id": "T0TEAM"},
		"api_app_id": "A0APP", "token": "verification-token-unused", "trigger_id": "1.2.abc",
		"team":      map[string]any{"id": "T0TEAM", "domain": "example"},
		"container": map[string]any{"type": "message", "message_ts": m.TS, "channel_id": m.Channel, "is_ephemeral": false},
		"channel":   map[string]any{"id": m.Channel, "name": "agent-approvals"},
		"message": map[string]any{"type": "message", "subtype": "bot_message", "bot_id": "B0BOT", "ts": m.TS, "text": m.Text,
			"blocks": m.Blocks},
		"response_url": "https://hooks.slack.com/actions/T0TEAM/1/abc",
		"actions": []map[string]any{{"type": "button", "action_id": action, "block_id": "b1", "value": val,
			"text": map[string]any{"type": "plain_text", "text": btn.Text.Text}, "action_ts": "1700000001.000200"}},
		"state": map[string]any{"values": map[string]any{}},
	}
	b, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	return "payload=" + url.QueryEscape(string(b))
}

// render returns the text of a message's blocks, one text per line, and
// its buttons by action ID.
func render(t *testing.T, raw json.RawMessage) (string, map[string]*slackgo.ButtonBlockElement) {
	t.Helper()
	var bs slackgo.Blocks
	if err := json.Unmarshal(raw, &bs); err != nil {
		t.Fatal(err)
	}
	var lines []string
	buttons := map[string]*slackgo.ButtonBlockElement{}
	for _, b := range bs.BlockSet {
		switch b := b.(type) {
		case *slackgo.HeaderBlock:
			lines = append(lines, b.Text.Text)
		case *slackgo.SectionBlock:
			if b.Text != nil {
				lines = append(lines, b.Text.Text)
			}
			for _, f := range b.Fields {
				lines = append(lines, f.Text)
			}
		case *slackgo.ContextBlock:
			for _, e := range b.ContextElements.Elements {
				lines = append(lines, e.(*slackgo.TextBlockObject).Text)
			}
		case *slackgo.ActionBlock:
			for _, e := range b.Elements.ElementSet {
				btn := e.(*slackgo.ButtonBlockElement)
				buttons[btn.ActionID] = btn
			}
		}
	}
	return strings.Join(lines, "\n"), buttons
}

func wantContains(t *testing.T, what, s string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, s)
		}
	}
}

// A request waits → Slack shows it with buttons → bob approves with a
// click → the check is released, the message shows the outcome, the owner
// and the requester are told in its thread; the same click again is
// refused and changes nothing.
func TestApproveInSlack(t *testing.T) {
	r := newRig(t, roomName)
	ap, done, ref := r.ask(t, "prod")
	if !strings.HasPrefix(ref, roomID+"/") {
		t.Fatalf("ref = %q, want %s/<ts>", ref, roomID)
	}

	m := r.f.message(t, ref)
	text, buttons := render(t, m.Blocks)
	wantContains(t, "the request's message", text,
		"agent-1 asks to run deploy", "*Agent*\nagent-1", "*Tool*\ndeploy", "*Class*\n", "*Risk tier*\n", "*Requested by*\ncarol",
		"<!date^"+itoa(ap.Expires.Unix())+"^{date_short_pretty} {time}|"+ap.Expires.UTC().Format(time.RFC3339)+">",
		ap.ID, ap.ActionHash.String(), `"path": "/work/prod"`, "For <@UALICE> <@UBOB>")
	approve, reject, inbox := buttons[slack.ActionApprove], buttons[slack.ActionReject], buttons[slack.ActionInbox]
	if approve == nil || reject == nil || inbox == nil {
		t.Fatalf("buttons = %v, want approve, reject and the inbox link", buttons)
	}
	if approve.Style != slackgo.StylePrimary || reject.Style != slackgo.StyleDanger {
		t.Errorf("styles: approve %q, reject %q", approve.Style, reject.Style)
	}
	if got, want := inbox.URL, "https://airlock.example/inbox/approvals/"+ap.ID; got != want {
		t.Errorf("inbox link = %q, want %q", got, want)
	}
	for _, b := range []*slackgo.ButtonBlockElement{approve, reject} {
		var v value
		if err := json.Unmarshal([]byte(b.Value), &v); err != nil || v.ID != ap.ID || v.Hash != ap.ActionHash.String() {
			t.Errorf("%s carries %s (%v), want the request's ID and action hash", b.ActionID, b.Value, err)
		}
	}
	if !strings.Contains(m.Text, "<@UBOB>") {
		t.Errorf("fallback text %q does not mention the reviewer", m.Text)
	}

	body := clickBody(t, m, "UBOB", slack.ActionApprove, nil)
	if w := r.serve(signedRequest(body, time.Now())); w.Code != http.StatusOK {
		t.Fatalf("click: %d %s", w.Code, w.Body)
	}
	got := r.env.Approval(t, ap.ID)
	if got.Status != airlock.StatusApproved || got.ResolvedBy != "bob" || got.Surface != airlock.SurfaceSlack {
		t.Fatalf("after the click: %s by %q via %q, want approved by bob via slack", got.Status, got.ResolvedBy, got.Surface)
	}
	if enf := notifytest.Released(t, done); !enf.Allowed {
		t.Fatalf("the check was not allowed: %s %s", enf.Code, enf.Message)
	}

	// Updated in place: the buttons give way to the outcome.
	r.f.wait(t, "the message updated", func(calls []call) bool {
		return slices.ContainsFunc(calls, func(c call) bool { return c.Method == "chat.update" && c.Ref == ref })
	})
	text, buttons = render(t, r.f.message(t, ref).Blocks)
	wantContains(t, "the updated message", text, "✅ approved by bob (slack)", `"path": "/work/prod"`, ap.ActionHash.String())
	if buttons[slack.ActionApprove] != nil || buttons[slack.ActionReject] != nil {
		t.Errorf("the updated message still offers Approve or Reject")
	}
	if buttons[slack.ActionInbox] == nil {
		t.Errorf("the updated message lost its inbox link")
	}

	// The owner and the requester are told in the thread.
	if n := r.env.Delivery(t, "team-slack", airlock.EventApprovalResolved, ap.ID); n.Status != airlock.NotificationSent {
		t.Fatalf("resolution delivery %s", n.String())
	}
	replies := r.f.replies(ref)
	if len(replies) != 1 {
		t.Fatalf("%d replies in the thread, want 1", len(replies))
	}
	wantContains(t, "the thread reply", replies[0].Text, "<@UALICE>", "<@UCAROL>", "approved by bob (slack)")

	// The same click again: refused, in a message only bob sees; nothing
	// is written.
	head, eph := r.env.Head(t), len(r.f.callsTo("chat.postEphemeral"))
	if w := r.serve(signedRequest(body, time.Now())); w.Code != http.StatusOK {
		t.Fatalf("replayed click: %d %s", w.Code, w.Body)
	}
	c := r.ephemeral(t, eph)
	if c.Form.Get("user") != "UBOB" || c.Form.Get("channel") != roomID {
		t.Errorf("ephemeral to %s in %s, want UBOB in %s", c.Form.Get("user"), c.Form.Get("channel"), roomID)
	}
	wantContains(t, "the answer to the replay", c.Form.Get("text"), "already approved by bob")
	if h := r.env.Head(t); h != head {
		t.Errorf("the replay wrote to the audit log: head %d → %d", head, h)
	}
	if again := r.env.Approval(t, ap.ID); !again.ResolvedAt.Equal(got.ResolvedAt) || again.ResolvedBy != "bob" {
		t.Errorf("the replay changed the request: %+v", again)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// Approve and remember from Slack: a write that asks offers the button (a
// privileged deploy does not); alice's click approves the request, makes
// a 7-day grant of its shape, granted by alice, and tells her so.
func TestApproveAndRememberInSlack(t *testing.T) {
	r := newRig(t, roomName)
	_, _, deployRef := r.ask(t, "prod")
	if _, buttons := render(t, r.f.message(t, deployRef).Blocks); buttons[slack.ActionApproveRemember] != nil {
		t.Errorf("a privileged deploy offers approve and remember")
	}
	build := airlock.Action{Agent: "agent-1", Tool: "Bash", Cwd: "/w", Args: airlock.MustArgs(map[string]any{"command": "make build"})}
	ap, done, ref := r.askAction(t, build)
	if _, buttons := render(t, r.f.message(t, ref).Blocks); buttons[slack.ActionApproveRemember] == nil {
		t.Fatalf("a write that asks does not offer approve and remember: %v", buttons)
	}
	eph := len(r.f.callsTo("chat.postEphemeral"))
	if w := r.click(t, ref, "UALICE", slack.ActionApproveRemember, nil); w.Code != http.StatusOK {
		t.Fatalf("click: %d %s", w.Code, w.Body)
	}
	if got := r.env.Approval(t, ap.ID); got.Status != airlock.StatusApproved || got.ResolvedBy != "alice" {
		t.Fatalf("after the click: %s by %q", got.Status, got.ResolvedBy)
	}
	if enf := notifytest.Released(t, done); !enf.Allowed {
		t.Fatalf("the check was not allowed: %s", enf.Message)
	}
	c := r.ephemeral(t, eph)
	wantContains(t, "the answer to alice", c.Form.Get("text"), "Approved and remembered: agent-1 may run `make build …` (Bash) without asking, up to write")
	gs, err := r.env.Store.Grants(context.Background(), airlock.GrantFilter{})
	if err != nil || len(gs) != 1 || gs[0].GrantedBy != "alice" || gs[0].Approval != ap.ID {
		t.Fatalf("grants %+v, %v; want one by alice from the request", gs, err)
	}
}

// Clicks from people who may not resolve the request are refused, told
// why, and audited; the request keeps waiting. An admin may resolve it.
func TestClickRefused(t *testing.T) {
	r := newRig(t, roomName)
	ap, done, ref := r.ask(t, "staging")
	tests := []struct {
		name, user, action string
		edit               func(*value)
		code, says         string
	}{
		{"user not mapped", "UNOBODY", slack.ActionApprove, nil, airlock.EUNAUTHORIZED, "slack user UNOBODY is not mapped"},
		{"the requester", "UCAROL", slack.ActionApprove, nil, airlock.EUNAUTHORIZED, "carol requested this action"},
		{"the agent", "UAGENT", slack.ActionApprove, nil, airlock.EUNAUTHORIZED, "agent-1 is an agent"},
		{"another action's hash", "UBOB", slack.ActionApprove, func(v *value) { v.Hash = strings.Repeat("ab", 32) },
			airlock.CodeHashMismatch, "is for action sha256:" + ap.ActionHash.String()},
		{"no such request", "UBOB", slack.ActionReject, func(v *value) { v.ID = "0190a4c4-0000-7000-8000-000000000000" },
			airlock.ENOTFOUND, "no approval request 0190a4c4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			refusals, eph := len(r.env.Refusals(t)), len(r.f.callsTo("chat.postEphemeral"))
			if w := r.click(t, ref, tt.user, tt.action, tt.edit); w.Code != http.StatusOK {
				t.Fatalf("click: %d %s", w.Code, w.Body)
			}
			c := r.ephemeral(t, eph)
			if c.Form.Get("user") != tt.user {
				t.Errorf("ephemeral to %s, want %s", c.Form.Get("user"), tt.user)
			}
			wantContains(t, "the answer", c.Form.Get("text"), "refused", tt.says)

			evs := r.env.Refusals(t)
			if len(evs) != refusals+1 {
				t.Fatalf("%d refusals audited, want %d", len(evs), refusals+1)
			}
			var p struct{ Code, Subject string }
			last := evs[len(evs)-1]
			if err := json.Unmarshal(last.Payload, &p); err != nil {
				t.Fatal(err)
			}
			if p.Code != tt.code || !strings.Contains(p.Subject, "slack:team-slack/"+tt.user) {
				t.Errorf("audited refusal %s, want code %s for %s", last.Payload, tt.code, tt.user)
			}
			if got := r.env.Approval(t, ap.ID); got.Status != airlock.StatusPending {
				t.Fatalf("the request is %s after a refused click", got.Status)
			}
		})
	}

	t.Run("an admin", func(t *testing.T) {
		if w := r.click(t, ref, "UROOT", slack.ActionReject, nil); w.Code != http.StatusOK {
			t.Fatalf("click: %d %s", w.Code, w.Body)
		}
		got := r.env.Approval(t, ap.ID)
		if got.Status != airlock.StatusRejected || got.ResolvedBy != "root" || got.Surface != airlock.SurfaceSlack {
			t.Fatalf("after root's click: %s by %q via %q", got.Status, got.ResolvedBy, got.Surface)
		}
		if enf := notifytest.Released(t, done); enf.Allowed || enf.Code != airlock.CodeRejected {
			t.Errorf("enforcement: allowed %v code %s, want %s", enf.Allowed, enf.Code, airlock.CodeRejected)
		}
		r.f.wait(t, "the message showing the rejection", func([]call) bool {
			text, _ := renderQuiet(r.f, ref)
			return strings.Contains(text, "❌ rejected by root (slack)")
		})
	})
}

// renderQuiet returns the text of message ref, "" when there is none.
func renderQuiet(f *fakeSlack, ref string) (string, error) {
	f.mu.Lock()
	m, ok := f.messages[ref]
	var raw json.RawMessage
	if ok {
		raw = m.Blocks
	}
	f.mu.Unlock()
	if !ok {
		return "", errors.New("no message")
	}
	var bs slackgo.Blocks
	if err := json.Unmarshal(raw, &bs); err != nil {
		return "", err
	}
	b, _ := json.Marshal(bs)
	return string(b), nil
}

// A request not signed by Slack with the signing secret, or signed too
// long ago, is refused before anything is read from it or written.
func TestClickNotFromSlack(t *testing.T) {
	r := newRig(t, roomName)
	ap, _, ref := r.ask(t, "forged")
	body := clickBody(t, r.f.message(t, ref), "UBOB", slack.ActionApprove, nil)
	now := time.Now()
	tests := []struct {
		name string
		req  func() *http.Request
	}{
		{"another secret", func() *http.Request {
			req := signedRequest(body, now)
			req.Header.Set("X-Slack-Signature", sign("not-the-secret", now.Unix(), body))
			return req
		}},
		{"stale", func() *http.Request { return signedRequest(body, now.Add(-6*time.Minute)) }},
		{"from the future", func() *http.Request { return signedRequest(body, now.Add(6*time.Minute)) }},
		{"another timestamp", func() *http.Request {
			req := signedRequest(body, now)
			req.Header.Set("X-Slack-Request-Timestamp", itoa(now.Unix()-1))
			return req
		}},
		{"body changed", func() *http.Request {
			req := signedRequest(body, now)
			changed := strings.Replace(body, "UBOB", "UROOT", 1)
			req.Body = httptest.NewRequest(http.MethodPost, "/", strings.NewReader(changed)).Body
			return req
		}},
		{"no signature", func() *http.Request {
			req := signedRequest(body, now)
			req.Header.Del("X-Slack-Signature")
			return req
		}},
		{"no timestamp", func() *http.Request {
			req := signedRequest(body, now)
			req.Header.Del("X-Slack-Request-Timestamp")
			return req
		}},
		{"not v0", func() *http.Request {
			req := signedRequest(body, now)
			req.Header.Set("X-Slack-Signature", "v1="+strings.TrimPrefix(req.Header.Get("X-Slack-Signature"), "v0="))
			return req
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r.serveIdle(t, ap.ID, tt.req(), http.StatusUnauthorized)
		})
	}
}

// A request that is not a well-formed click on Airlock's buttons is
// answered 4xx and changes nothing.
func TestBadCallback(t *testing.T) {
	r := newRig(t, roomName)
	ap, _, ref := r.ask(t, "bad-input")
	m := r.f.message(t, ref)
	// payload returns the form body of a click whose payload is changed.
	payload := func(change func(map[string]any)) string {
		form, _ := url.ParseQuery(clickBody(t, m, "UBOB", slack.ActionApprove, nil))
		var p map[string]any
		if err := json.Unmarshal([]byte(form.Get("payload")), &p); err != nil {
			t.Fatal(err)
		}
		change(p)
		b, _ := json.Marshal(p)
		return "payload=" + url.QueryEscape(string(b))
	}
	action := func(p map[string]any) map[string]any { return p["actions"].([]any)[0].(map[string]any) }
	tests := []struct {
		name string
		req  *http.Request
		want int
	}{
		{"GET", httptest.NewRequest(http.MethodGet, "/callbacks/team-slack", nil), http.StatusMethodNotAllowed},
		{"oversize body", signedRequest("payload="+strings.Repeat("a", slack.MaxBody), time.Now()), http.StatusRequestEntityTooLarge},
		{"JSON body", func() *http.Request {
			req := signedRequest(`{"type":"block_actions"}`, time.Now())
			req.Header.Set("Content-Type", "application/json")
			return req
		}(), http.StatusUnsupportedMediaType},
		{"no payload", signedRequest("token=x&other=y", time.Now()), http.StatusBadRequest},
		{"malformed form", signedRequest("payload=%zz", time.Now()), http.StatusBadRequest},
		{"payload not JSON", signedRequest("payload="+url.QueryEscape("{not json"), time.Now()), http.StatusBadRequest},
		{"not a button click", signedRequest(payload(func(p map[string]any) { p["type"] = "view_submission" }), time.Now()), http.StatusBadRequest},
		{"unknown action", signedRequest(payload(func(p map[string]any) { action(p)["action_id"] = "someone.else" }), time.Now()), http.StatusBadRequest},
		{"value not ours", signedRequest(payload(func(p map[string]any) { action(p)["value"] = "approve" }), time.Now()), http.StatusBadRequest},
		{"value without hash", signedRequest(payload(func(p map[string]any) { action(p)["value"] = `{"id":"` + ap.ID + `"}` }), time.Now()), http.StatusBadRequest},
		{"no user", signedRequest(payload(func(p map[string]any) { delete(p, "user") }), time.Now()), http.StatusBadRequest},
		{"inbox link", signedRequest(payload(func(p map[string]any) {
			action(p)["action_id"], action(p)["value"] = slack.ActionInbox, ""
		}), time.Now()), http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r.serveIdle(t, ap.ID, tt.req, tt.want)
		})
	}
}

// Hidden characters in the arguments show as escapes, marked; arguments
// too long to show are clipped, with a link to the whole in the inbox.
func TestArgumentsShown(t *testing.T) {
	r := newRig(t, roomName)
	t.Run("hidden characters", func(t *testing.T) {
		_, _, ref := r.ask(t, "invoice\u202efdp.exe")
		text, _ := render(t, r.f.message(t, ref).Blocks)
		wantContains(t, "the message", text, `/work/invoice\u202efdp.exe`, "⚠ 1 hidden character shown as escapes")
		if strings.ContainsRune(text, '\u202e') {
			t.Errorf("the message holds a raw U+202E")
		}
	})
	t.Run("clipped", func(t *testing.T) {
		ap, _, ref := r.ask(t, strings.Repeat("a", 6000))
		text, _ := render(t, r.f.message(t, ref).Blocks)
		wantContains(t, "the message", text, "…\n```",
			"<https://airlock.example/inbox/approvals/"+ap.ID+"|open the request in the inbox>")
		if strings.Contains(text, strings.Repeat("a", slack.DefaultMaxArgs)) {
			t.Errorf("the arguments are not clipped to %d bytes", slack.DefaultMaxArgs)
		}
	})
}

// A request settled anywhere else (the inbox, the CLI, another channel)
// is shown settled in place.
func TestSettledElsewhere(t *testing.T) {
	r := newRig(t, roomName)
	tests := []struct {
		name   string
		settle func(ctx context.Context, ap airlock.Approval) error
		kind   string
		want   string
	}{
		{"cancelled with the CLI", func(ctx context.Context, ap airlock.Approval) error {
			_, err := r.env.Store.CancelApproval(ctx, ap.ID, "alice", "not today", airlock.SurfaceCLI)
			return err
		}, airlock.EventApprovalCancelled, "🚫 cancelled by alice (cli): not today"},
		{"approved in the inbox", func(ctx context.Context, ap airlock.Approval) error {
			_, err := r.env.Store.ResolveApproval(ctx, airlock.Resolution{ApprovalID: ap.ID, Status: airlock.StatusApproved,
				ActionHash: ap.ActionHash, Reviewer: airlock.Reviewer{Name: "bob"}, Reason: "fine <b>", Surface: airlock.SurfaceWeb})
			return err
		}, airlock.EventApprovalResolved, "✅ approved by bob (web): fine &lt;b&gt;"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ap, _, ref := r.ask(t, "elsewhere-"+tt.kind)
			if err := tt.settle(t.Context(), ap); err != nil {
				t.Fatal(err)
			}
			if n := r.env.Delivery(t, "team-slack", tt.kind, ap.ID); n.Status != airlock.NotificationSent {
				t.Fatalf("delivery %s", n.String())
			}
			m := r.f.message(t, ref)
			text, buttons := render(t, m.Blocks)
			wantContains(t, "the updated message", text, tt.want, ap.ID)
			if m.Updates == 0 || buttons[slack.ActionApprove] != nil || buttons[slack.ActionReject] != nil {
				t.Errorf("the message was not updated in place (%d updates, buttons %v)", m.Updates, buttons)
			}
		})
	}
}

// A request whose deadline passes is shown expired in place.
func TestExpired(t *testing.T) {
	r := newRig(t, roomName)
	ap := airlocktest.NewApproval("agent-1", "make release", airlock.Ask, 300*time.Millisecond)
	ap.Reviewers, ap.Owner = []string{"bob"}, "alice"
	ap, _, err := r.env.Store.RequestApproval(t.Context(), ap, airlock.Record{})
	if err != nil {
		t.Fatal(err)
	}
	n := r.env.Delivery(t, "team-slack", airlock.EventApprovalRequested, ap.ID)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if got, err := r.env.Store.ExpireApproval(t.Context(), ap.ID); err != nil {
			t.Fatal(err)
		} else if got.Status == airlock.StatusExpired {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the request never expired")
		}
	}
	if d := r.env.Delivery(t, "team-slack", airlock.EventApprovalExpired, ap.ID); d.Status != airlock.NotificationSent {
		t.Fatalf("expiry delivery %s", d.String())
	}
	text, buttons := render(t, r.f.message(t, n.Ref).Blocks)
	wantContains(t, "the message", text, "⌛ expired: deadline passed")
	if buttons[slack.ActionApprove] != nil {
		t.Errorf("an expired request still offers Approve")
	}
}

// Without a room, each reviewer gets the request by direct message; the
// click in one updates it, and the resolution updates them all and tells
// the owner and the requester by direct message.
func TestDirectMessages(t *testing.T) {
	r := newRig(t, "")
	ap, done, ref := r.ask(t, "dm")
	if got, want := ref, "DALICE/1700000000.000100,DBOB/1700000000.000200"; got != want {
		t.Fatalf("ref = %q, want %q", got, want)
	}
	if w := r.click(t, "DBOB/1700000000.000200", "UBOB", slack.ActionApprove, nil); w.Code != http.StatusOK {
		t.Fatalf("click: %d", w.Code)
	}
	if enf := notifytest.Released(t, done); !enf.Allowed {
		t.Fatalf("not allowed: %s", enf.Message)
	}
	if n := r.env.Delivery(t, "team-slack", airlock.EventApprovalResolved, ap.ID); n.Status != airlock.NotificationSent {
		t.Fatalf("resolution delivery %s", n.String())
	}
	for _, shown := range strings.Split(ref, ",") {
		text, buttons := render(t, r.f.message(t, shown).Blocks)
		wantContains(t, shown, text, "✅ approved by bob (slack)")
		if buttons[slack.ActionApprove] != nil {
			t.Errorf("%s still offers Approve", shown)
		}
	}
	var told []string
	for _, c := range r.f.callsTo("chat.postMessage") {
		if c.Form.Get("thread_ts") == "" && strings.Contains(c.Form.Get("text"), "approved by bob") {
			told = append(told, c.Form.Get("channel"))
		}
	}
	if want := []string{"UALICE", "UCAROL"}; !slices.Equal(told, want) {
		t.Errorf("told %v by direct message, want %v", told, want)
	}
}

// Over Socket Mode a click is handled as over HTTP, and acknowledged.
func TestSocketMode(t *testing.T) {
	r := newRig(t, roomName)
	ctx, cancel := context.WithCancel(t.Context())
	ran := make(chan error, 1)
	go func() { ran <- r.ch.RunSocketMode(ctx, r.clicks) }()
	defer func() {
		cancel()
		if err := <-ran; !errors.Is(err, context.Canceled) {
			t.Errorf("RunSocketMode: %v, want context.Canceled", err)
		}
	}()
	var conn interface{ WriteJSON(any) error }
	select {
	case c := <-r.f.sockets:
		conn = c
	case <-time.After(10 * time.Second):
		t.Fatal("no socket mode connection")
	}
	if err := conn.WriteJSON(map[string]any{"type": "hello", "num_connections": 1, "connection_info": map[string]any{"app_id": "A0APP"}}); err != nil {
		t.Fatal(err)
	}

	ap, done, ref := r.ask(t, "socket")
	form, _ := url.ParseQuery(clickBody(t, r.f.message(t, ref), "UBOB", slack.ActionApprove, nil))
	if err := conn.WriteJSON(map[string]any{"envelope_id": "env-1", "type": "interactive", "accepts_response_payload": false,
		"payload": json.RawMessage(form.Get("payload"))}); err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-r.f.acks:
		if id != "env-1" {
			t.Fatalf("acknowledged %q, want env-1", id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the envelope was never acknowledged")
	}
	// Acknowledged at once; the click is handled after.
	if enf := notifytest.Released(t, done); !enf.Allowed {
		t.Fatalf("not allowed: %s", enf.Message)
	}
	got := r.env.Approval(t, ap.ID)
	if got.Status != airlock.StatusApproved || got.ResolvedBy != "bob" || got.Surface != airlock.SurfaceSlack {
		t.Fatalf("after the click: %s by %q via %q", got.Status, got.ResolvedBy, got.Surface)
	}
	r.f.wait(t, "the message showing the approval", func([]call) bool {
		text, _ := renderQuiet(r.f, ref)
		return strings.Contains(text, "✅ approved by bob (slack)")
	})

	// A click refused over the socket is answered as over HTTP.
	eph := len(r.f.callsTo("chat.postEphemeral"))
	if err := conn.WriteJSON(map[string]any{"envelope_id": "env-2", "type": "interactive", "payload": json.RawMessage(form.Get("payload"))}); err != nil {
		t.Fatal(err)
	}
	wantContains(t, "the answer to the replay", r.ephemeral(t, eph).Form.Get("text"), "already approved by bob")
	if id := <-r.f.acks; id != "env-2" {
		t.Errorf("acknowledged %q, want env-2", id)
	}
}

// RunSocketMode needs an app-level token.
func TestSocketModeNeedsAppToken(t *testing.T) {
	ch, err := slack.New(slack.Config{Token: botToken, SigningSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.RunSocketMode(t.Context(), &notify.Clicks{}); err == nil || !strings.Contains(err.Error(), "app-level token") {
		t.Errorf("RunSocketMode without app token: %v", err)
	}
}
