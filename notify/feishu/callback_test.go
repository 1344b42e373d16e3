package feishu

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/notify"
	"github.com/airlock-dev/airlock/notify/notifytest"
)

// The app's callback secrets in these tests.
const (
	testToken = "vt-FAKEverificationTOKEN"
	testKey   = "ek-FAKEencryptKEY"
	cardPath  = "/callbacks/team-feishu"
)

// larkCallbacks writes card callbacks exactly the way the Open Platform
// sends them: schema 2.0 card.action.trigger (or the older card callback)
// bodies, encrypted with the Encrypt Key (base64 of a random IV and the
// AES-256-CBC ciphertext of the PKCS#7-padded body, keyed with its
// SHA-256) and signed in X-Lark-Signature: hex SHA-256 of timestamp,
// nonce, Encrypt Key and body (SHA-1 with the Verification Token for the
// older callback).
type larkCallbacks struct {
	key, token string
}

// action is a schema 2.0 card.action.trigger body: openID clicked the
// button of value on message messageID.
func (l larkCallbacks) action(openID string, value any, messageID string) []byte {
	return mustJSON(map[string]any{
		"schema": "2.0",
		"header": map[string]any{
			"event_id": "f7984f25108f8137722bb63cee927e66", "token": l.token, "create_time": "1726737373000",
			"event_type": "card.action.trigger", "tenant_key": "736588c9260f175e", "app_id": "cli_test",
		},
		"event": map[string]any{
			"operator": map[string]any{"tenant_key": "736588c9260f175e", "user_id": "e33ggbyz", "open_id": openID, "union_id": "on_a0f2"},
			"token":    "c-295ee57216a5dc9de90fefd0aadb4b1d7d337b1b",
			"action":   map[string]any{"value": value, "tag": "button"},
			"host":     "im_message",
			"context":  map[string]any{"open_message_id": messageID, "open_chat_id": "oc_room"},
		},
	})
}

// legacy is the older card callback's body.
func (l larkCallbacks) legacy(openID string, value any, messageID string) []byte {
	return mustJSON(map[string]any{
		"open_id": openID, "user_id": "e33ggbyz", "open_message_id": messageID, "open_chat_id": "oc_room",
		"tenant_key": "736588c9260f175e", "token": "c-295ee57216a5dc9de90fefd0aadb4b1d7d337b1b",
		"action": map[string]any{"value": value, "tag": "button"},
	})
}

// encrypt wraps body as an encrypted callback.
func (l larkCallbacks) encrypt(t testing.TB, body []byte) []byte {
	t.Helper()
	key := sha256.Sum256([]byte(l.key))
	block, err := aes.NewCipher(key[:])
	if err != nil {
		t.Fatal(err)
	}
	pad := aes.BlockSize - len(body)%aes.BlockSize
	plain := append(bytes.Clone(body), bytes.Repeat([]byte{byte(pad)}, pad)...)
	out := make([]byte, aes.BlockSize+len(plain))
	if _, err := rand.Read(out[:aes.BlockSize]); err != nil {
		t.Fatal(err)
	}
	cipher.NewCBCEncrypter(block, out[:aes.BlockSize]).CryptBlocks(out[aes.BlockSize:], plain)
	return mustJSON(map[string]string{"encrypt": base64.StdEncoding.EncodeToString(out)})
}

// request is the POST Feishu makes, signed with the Encrypt Key at time at.
func (l larkCallbacks) request(body []byte, at time.Time) *http.Request {
	r := unsigned(body)
	ts, nonce := strconv.FormatInt(at.Unix(), 10), "1337803357"
	sum := sha256.Sum256([]byte(ts + nonce + l.key + string(body)))
	r.Header.Set("X-Lark-Request-Timestamp", ts)
	r.Header.Set("X-Lark-Request-Nonce", nonce)
	r.Header.Set("X-Lark-Signature", hex.EncodeToString(sum[:]))
	return r
}

// legacyRequest is the POST of an older card callback, signed with the
// Verification Token.
func (l larkCallbacks) legacyRequest(body []byte, at time.Time) *http.Request {
	r := unsigned(body)
	ts, nonce := strconv.FormatInt(at.Unix(), 10), "8452"
	sum := sha1.Sum([]byte(ts + nonce + l.token + string(body)))
	r.Header.Set("X-Lark-Request-Timestamp", ts)
	r.Header.Set("X-Lark-Request-Nonce", nonce)
	r.Header.Set("X-Lark-Signature", hex.EncodeToString(sum[:]))
	return r
}

func unsigned(body []byte) *http.Request {
	r := httptest.NewRequest(http.MethodPost, cardPath, bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json; charset=utf-8")
	r.Header.Set("User-Agent", "Go-http-client/1.1")
	return r
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// rig is a Feishu channel on a fake Open Platform, routed to by a real
// store, with its callback handler.
type rig struct {
	fake    *fakeFeishu
	ch      *Channel
	env     *notifytest.Env
	handler http.Handler
	lark    larkCallbacks
}

const channel = "team-feishu"

var users = map[string]string{"ou_bob": "bob", "ou_alice": "alice", "ou_carol": "carol", "ou_agent": "agent-1", "ou_root": "root"}

// newRig starts a room channel; encrypted sets an Encrypt Key.
func newRig(t *testing.T, encrypted bool) *rig {
	t.Helper()
	fake := newFakeFeishu(t) // first: its server outlives the notifier
	cfg := Config{AppID: fake.appID, AppSecret: fake.appSecret, VerificationToken: testToken, ChatID: "oc_room",
		BaseURL: fake.URL, InboxURL: "https://airlock.example"}
	if encrypted {
		cfg.EncryptKey = testKey
	}
	ch, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	env := notifytest.New(t, notifytest.Options{}, &notify.Spec{Name: channel, Type: "feishu", Room: true, Updates: true, Users: users, Channel: ch})
	clicks := &notify.Clicks{Store: env.Store, Channel: channel, Surface: airlock.SurfaceFeishu, Users: users, Path: cardPath,
		Remember: env.Remember}
	return &rig{fake: fake, ch: ch, env: env, handler: ch.Handler(clicks), lark: larkCallbacks{key: cfg.EncryptKey, token: testToken}}
}

// serve runs the handler and returns the response.
func (r *rig) serve(req *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	r.handler.ServeHTTP(w, req)
	return w
}

// answered decodes a 200 card callback answer.
func answered(t *testing.T, w *httptest.ResponseRecorder) (toastType, toastText string, card map[string]any) {
	t.Helper()
	if w.Code != http.StatusOK {
		t.Fatalf("status %d, want 200: %s", w.Code, w.Body)
	}
	var a struct {
		Toast struct{ Type, Content string } `json:"toast"`
		Card  *struct {
			Type string         `json:"type"`
			Data map[string]any `json:"data"`
		} `json:"card"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &a); err != nil {
		t.Fatalf("answer %s: %v", w.Body, err)
	}
	if a.Card != nil {
		if a.Card.Type != "raw" {
			t.Errorf("card type %q, want raw", a.Card.Type)
		}
		card = a.Card.Data
	}
	return a.Toast.Type, a.Toast.Content, card
}

// shown waits for the request's card and returns its message.
func (r *rig) shown(t *testing.T, ap airlock.Approval) fakeMessage {
	t.Helper()
	n := r.env.Delivery(t, channel, airlock.EventApprovalRequested, ap.ID)
	if n.Status != airlock.NotificationSent || n.Ref == "" {
		t.Fatalf("request delivery %+v, want sent with a ref", n)
	}
	m, ok := r.fake.message(n.Ref)
	if !ok {
		t.Fatalf("ref %q is not a message Feishu holds", n.Ref)
	}
	return m
}

func TestApproveFromCard(t *testing.T) {
	r := newRig(t, true)
	ap, done := r.env.Ask(t, "prod")
	m := r.shown(t, ap)
	if m.ReceiveIDType != "chat_id" || m.ReceiveID != "oc_room" {
		t.Errorf("card sent to %s %s, want chat_id oc_room", m.ReceiveIDType, m.ReceiveID)
	}
	value := buttonValueOf(m.Card, "approve")
	if value == nil || value["id"] != ap.ID || value["hash"] != ap.ActionHash.String() {
		t.Fatalf("approve button value %v, want id %s and hash %s", value, ap.ID, ap.ActionHash)
	}
	if v := buttonValueOf(m.Card, "reject"); v == nil || v["id"] != ap.ID {
		t.Fatalf("reject button value %v", v)
	}

	click := r.lark.action("ou_bob", value, m.ID)
	kind, msg, card := answered(t, r.serve(r.lark.request(click, time.Now())))
	if kind != "success" || card == nil {
		t.Fatalf("toast %s %q, card %v: want success with the updated card", kind, msg, card)
	}
	if bs := buttons(card); len(bs) != 1 || bs[0]["url"] == nil {
		t.Errorf("updated card buttons %v, want only the inbox link", bs)
	}
	if got := card["header"].(map[string]any)["template"]; got != "green" {
		t.Errorf("updated card template %v, want green", got)
	}
	if enf := notifytest.Released(t, done); !enf.Allowed {
		t.Errorf("the check was not allowed: %+v", enf)
	}
	got := r.env.Approval(t, ap.ID)
	if got.Status != airlock.StatusApproved || got.Surface != airlock.SurfaceFeishu || got.ResolvedBy != "bob" {
		t.Errorf("approval %s by %q on %q, want approved by bob on feishu", got.Status, got.ResolvedBy, got.Surface)
	}

	// The resolution's delivery updates the card in place and tells the
	// owner and the requester.
	n := r.env.Delivery(t, channel, airlock.EventApprovalResolved, ap.ID)
	if n.Status != airlock.NotificationSent {
		t.Fatalf("resolved delivery %+v", n)
	}
	after, _ := r.fake.message(m.ID)
	if after.Updates == 0 || buttonValueOf(after.Card, "approve") != nil {
		t.Errorf("card after resolution: %d updates, buttons %v; want updated without approve/reject", after.Updates, buttons(after.Card))
	}
	told := map[string]bool{}
	for _, s := range r.fake.sent() {
		if s.ReceiveIDType == "open_id" {
			told[s.ReceiveID] = true
		}
	}
	if !told["ou_alice"] || !told["ou_carol"] || told["ou_bob"] {
		t.Errorf("told directly %v, want the owner ou_alice and the requester ou_carol", told)
	}

	// The same callback again: refused, nothing changes.
	head := r.env.Head(t)
	kind, msg, card = answered(t, r.serve(r.lark.request(click, time.Now())))
	if kind != "error" || card != nil || !strings.Contains(msg, "already approved by bob") {
		t.Errorf("replay: toast %s %q, card %v; want an error toast and no card", kind, msg, card)
	}
	if h := r.env.Head(t); h != head {
		t.Errorf("replay wrote to the audit log: head %d → %d", head, h)
	}
}

// Approve and remember from a card: offered on a write that asks, not on
// a privileged deploy; the click approves, makes alice's 7-day grant of
// the action's shape, and the toast says what it covers.
func TestApproveAndRememberFromCard(t *testing.T) {
	r := newRig(t, true)
	deploy, deployDone := r.env.Ask(t, "prod")
	t.Cleanup(func() {
		r.env.Store.CancelApproval(context.Background(), deploy.ID, "", "test over", airlock.SurfaceSystem)
		<-deployDone
	})
	if v := buttonValueOf(r.shown(t, deploy).Card, "approve_remember"); v != nil {
		t.Errorf("a privileged deploy offers approve and remember")
	}
	ap, done := r.env.AskAction(t, airlock.Action{Agent: "agent-1", Tool: "Bash", Cwd: "/w",
		Args: airlock.MustArgs(map[string]any{"command": "make build"})})
	m := r.shown(t, ap)
	value := buttonValueOf(m.Card, "approve_remember")
	if value == nil || value["id"] != ap.ID {
		t.Fatalf("approve_remember button value %v", value)
	}
	kind, msg, _ := answered(t, r.serve(r.lark.request(r.lark.action("ou_alice", value, m.ID), time.Now())))
	if kind != "success" || !strings.Contains(msg, "Approved and remembered: agent-1 may run `make build …` (Bash) without asking, up to write") {
		t.Fatalf("toast %s %q", kind, msg)
	}
	if enf := notifytest.Released(t, done); !enf.Allowed {
		t.Errorf("the check was not allowed: %+v", enf)
	}
	gs, err := r.env.Store.Grants(t.Context(), airlock.GrantFilter{})
	if err != nil || len(gs) != 1 || gs[0].GrantedBy != "alice" || gs[0].Approval != ap.ID {
		t.Fatalf("grants %+v, %v; want one by alice from the request", gs, err)
	}
}

func TestRejectEncrypted(t *testing.T) {
	r := newRig(t, true)
	ap, done := r.env.Ask(t, "prod")
	m := r.shown(t, ap)
	body := r.lark.encrypt(t, r.lark.action("ou_bob", buttonValueOf(m.Card, "reject"), m.ID))
	if bytes.Contains(body, []byte("ou_bob")) {
		t.Fatal("the callback is not encrypted")
	}
	kind, msg, card := answered(t, r.serve(r.lark.request(body, time.Now())))
	if kind != "success" || card == nil {
		t.Fatalf("toast %s %q, card %v", kind, msg, card)
	}
	if got := card["header"].(map[string]any)["template"]; got != "red" {
		t.Errorf("template %v, want red", got)
	}
	if enf := notifytest.Released(t, done); enf.Allowed || enf.Code != airlock.CodeRejected {
		t.Errorf("enforcement %+v, want refused with %s", enf, airlock.CodeRejected)
	}
	if got := r.env.Approval(t, ap.ID); got.Status != airlock.StatusRejected || got.ResolvedBy != "bob" || got.Surface != airlock.SurfaceFeishu {
		t.Errorf("approval %+v", got)
	}
}

func TestRefusedClicks(t *testing.T) {
	r := newRig(t, true)
	ap, _ := r.env.Ask(t, "prod")
	m := r.shown(t, ap)
	value := buttonValueOf(m.Card, "approve")
	wrong := map[string]any{"action": "approve", "id": ap.ID, "hash": strings.Repeat("ab", 32)}
	for _, tc := range []struct {
		name, openID string
		value        map[string]any
		want         string // in the refusal's message
	}{
		{"unmapped", "ou_stranger", value, "not mapped"},
		{"requester", "ou_carol", value, "requested this action"},
		{"agent", "ou_agent", value, "agent"},
		{"wrong hash", "ou_bob", wrong, "is for action"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(r.env.Refusals(t))
			kind, msg, card := answered(t, r.serve(r.lark.request(r.lark.action(tc.openID, tc.value, m.ID), time.Now())))
			if kind != "error" || card != nil || !strings.Contains(msg, tc.want) {
				t.Errorf("toast %s %q, card %v; want an error toast containing %q and no card", kind, msg, card, tc.want)
			}
			t.Logf("refused: %s", msg)
			refusals := r.env.Refusals(t)
			if len(refusals) != before+1 {
				t.Fatalf("%d refusals audited, want %d", len(refusals), before+1)
			}
			last := refusals[len(refusals)-1]
			if last.ApprovalID != ap.ID || !strings.Contains(string(last.Payload), "feishu:"+channel+"/"+tc.openID) {
				t.Errorf("refusal %s: %s", last.ApprovalID, last.Payload)
			}
			if got := r.env.Approval(t, ap.ID); got.Status != airlock.StatusPending {
				t.Errorf("approval %s after a refused click", got.Status)
			}
		})
	}

	// Cancelled elsewhere: the card is updated in place.
	if _, err := r.env.Store.CancelApproval(context.Background(), ap.ID, "root", "not needed", airlock.SurfaceCLI); err != nil {
		t.Fatal(err)
	}
	if n := r.env.Delivery(t, channel, airlock.EventApprovalCancelled, ap.ID); n.Status != airlock.NotificationSent || n.Ref != m.ID {
		t.Fatalf("cancelled delivery %+v, want sent, ref %s", n, m.ID)
	}
	after, _ := r.fake.message(m.ID)
	if after.Updates != 1 || buttonValueOf(after.Card, "approve") != nil || after.Card["header"].(map[string]any)["template"] != "grey" {
		t.Errorf("card after cancellation: %d updates, buttons %v, header %v", after.Updates, buttons(after.Card), after.Card["header"])
	}
	if !strings.Contains(string(mustJSON(after.Card)), "cancelled by root") {
		t.Errorf("the card does not say it was cancelled by root: %v", after.Card)
	}
}

func TestUnauthenticatedCallbacks(t *testing.T) {
	r := newRig(t, true)
	ap, _ := r.env.Ask(t, "prod")
	m := r.shown(t, ap)
	click := r.lark.action("ou_bob", buttonValueOf(m.Card, "approve"), m.ID)
	forged := r.lark.request(click, time.Now())
	forged.Header.Set("X-Lark-Signature", strings.Repeat("0", 64))
	other := larkCallbacks{key: "someone-elses-key", token: testToken}
	tampered := r.lark.request(click, time.Now())
	tampered.Body, tampered.ContentLength = http.NoBody, 0 // the signature no longer covers the body
	for name, req := range map[string]*http.Request{
		"forged":               forged,
		"other key":            other.request(click, time.Now()),
		"stale":                r.lark.request(click, time.Now().Add(-MaxSkew-time.Minute)),
		"future":               r.lark.request(click, time.Now().Add(MaxSkew+time.Minute)),
		"unsigned":             unsigned(click),
		"unsigned encrypted":   unsigned(r.lark.encrypt(t, click)),
		"body changed":         tampered,
		"legacy with a token":  r.lark.legacyRequest(r.lark.legacy("ou_bob", buttonValueOf(m.Card, "approve"), m.ID), time.Now().Add(-time.Hour)),
		"bad timestamp format": withHeader(r.lark.request(click, time.Now()), "X-Lark-Request-Timestamp", "yesterday"),
	} {
		t.Run(name, func(t *testing.T) {
			head := r.env.Head(t)
			if w := r.serve(req); w.Code != http.StatusUnauthorized {
				t.Errorf("status %d, want 401: %s", w.Code, w.Body)
			}
			if h := r.env.Head(t); h != head {
				t.Errorf("audit head %d → %d, want nothing written", head, h)
			}
		})
	}
	if got := r.env.Approval(t, ap.ID); got.Status != airlock.StatusPending {
		t.Errorf("approval %s, want pending", got.Status)
	}
}

// TestKeyRefusesTokenProof: once an Encrypt Key is set, only a signature
// made with it proves a callback. The Verification Token is no proof: a
// click that carries it in its header, or is signed with it the way older
// card callbacks are (SHA-1), fresh and otherwise well formed, plain or
// encrypted, is refused and resolves nothing.
func TestKeyRefusesTokenProof(t *testing.T) {
	r := newRig(t, true)
	ap, done := r.env.Ask(t, "prod")
	m := r.shown(t, ap)
	value := buttonValueOf(m.Card, "approve")
	click := r.lark.action("ou_bob", value, m.ID) // carries the Verification Token in its header
	legacy := r.lark.legacy("ou_bob", value, m.ID)
	for name, req := range map[string]*http.Request{
		"token in the header":                  unsigned(click),
		"token in the header, encrypted":       unsigned(r.lark.encrypt(t, click)),
		"signed with the token":                r.lark.legacyRequest(click, time.Now()),
		"signed with the token, encrypted":     r.lark.legacyRequest(r.lark.encrypt(t, click), time.Now()),
		"older callback signed with the token": r.lark.legacyRequest(legacy, time.Now()),
		"older callback, value as a string":    r.lark.legacyRequest(r.lark.legacy("ou_bob", string(mustJSON(value)), m.ID), time.Now()),
	} {
		t.Run(name, func(t *testing.T) {
			head := r.env.Head(t)
			if w := r.serve(req); w.Code != http.StatusUnauthorized {
				t.Errorf("status %d, want 401: %s", w.Code, w.Body)
			}
			if h := r.env.Head(t); h != head {
				t.Errorf("audit head %d → %d, want nothing written", head, h)
			}
		})
	}
	if got := r.env.Approval(t, ap.ID); got.Status != airlock.StatusPending {
		t.Fatalf("approval %s by %q, want pending", got.Status, got.ResolvedBy)
	}

	// The same click signed with the key still resolves the request.
	if kind, msg, _ := answered(t, r.serve(r.lark.request(r.lark.encrypt(t, click), time.Now()))); kind != "success" {
		t.Fatalf("signed with the key: %s %q", kind, msg)
	}
	if enf := notifytest.Released(t, done); !enf.Allowed {
		t.Errorf("enforcement %+v", enf)
	}
	if got := r.env.Approval(t, ap.ID); got.Status != airlock.StatusApproved || got.ResolvedBy != "bob" {
		t.Errorf("approval %s by %q, want approved by bob", got.Status, got.ResolvedBy)
	}
}

func withHeader(r *http.Request, k, v string) *http.Request {
	r.Header.Set(k, v)
	return r
}

func TestURLVerification(t *testing.T) {
	for _, encrypted := range []bool{false, true} {
		r := newRig(t, encrypted)
		challenge := func(token string) []byte {
			b := mustJSON(map[string]string{"challenge": "ajls384kdjx98XX", "token": token, "type": "url_verification"})
			if encrypted {
				return r.lark.encrypt(t, b)
			}
			return b
		}
		w := r.serve(unsigned(challenge(testToken)))
		if w.Code != http.StatusOK || strings.TrimSpace(w.Body.String()) != `{"challenge":"ajls384kdjx98XX"}` {
			t.Errorf("encrypted %v: %d %s, want the challenge echoed", encrypted, w.Code, w.Body)
		}
		if w := r.serve(unsigned(challenge("not-the-token"))); w.Code != http.StatusUnauthorized {
			t.Errorf("encrypted %v, wrong token: %d, want 401", encrypted, w.Code)
		}
	}
}

func TestTokenAndLegacyCallbacks(t *testing.T) {
	r := newRig(t, false) // no Encrypt Key: the Verification Token proves callbacks
	ap, done := r.env.Ask(t, "prod")
	m := r.shown(t, ap)
	value := buttonValueOf(m.Card, "approve")

	wrong := larkCallbacks{token: "not-the-token"}
	head := r.env.Head(t)
	if w := r.serve(unsigned(wrong.action("ou_bob", value, m.ID))); w.Code != http.StatusUnauthorized {
		t.Errorf("wrong verification token: %d, want 401", w.Code)
	}
	if w := r.serve(unsigned(r.lark.legacy("ou_bob", value, m.ID))); w.Code != http.StatusUnauthorized {
		t.Errorf("unsigned older callback: %d, want 401", w.Code)
	}
	if h := r.env.Head(t); h != head {
		t.Errorf("audit head %d → %d", head, h)
	}
	if kind, msg, _ := answered(t, r.serve(unsigned(r.lark.action("ou_bob", value, m.ID)))); kind != "success" {
		t.Fatalf("token-proved callback: %s %q", kind, msg)
	}
	notifytest.Released(t, done)

	// The older card callback, signed with the Verification Token, with its
	// value as a string.
	ap2, done2 := r.env.Ask(t, "staging")
	m2 := r.shown(t, ap2)
	v2 := string(mustJSON(buttonValueOf(m2.Card, "approve")))
	if kind, msg, _ := answered(t, r.serve(r.lark.legacyRequest(r.lark.legacy("ou_alice", v2, m2.ID), time.Now()))); kind != "success" {
		t.Fatalf("older callback: %s %q", kind, msg)
	}
	if enf := notifytest.Released(t, done2); !enf.Allowed {
		t.Errorf("enforcement %+v", enf)
	}
	if got := r.env.Approval(t, ap2.ID); got.Status != airlock.StatusApproved || got.ResolvedBy != "alice" {
		t.Errorf("approval %s by %s", got.Status, got.ResolvedBy)
	}
}

func TestBadCallbacks(t *testing.T) {
	r := newRig(t, true)
	ap, _ := r.env.Ask(t, "prod")
	m := r.shown(t, ap)
	value := buttonValueOf(m.Card, "approve")
	now := time.Now()
	get := httptest.NewRequest(http.MethodGet, cardPath, nil)
	otherEvent := mustJSON(map[string]any{"schema": "2.0",
		"header": map[string]any{"event_type": "im.message.receive_v1", "token": testToken}, "event": map[string]any{}})
	badKey := larkCallbacks{key: "wrong-key", token: testToken}.encrypt(t, r.lark.action("ou_bob", value, m.ID))
	for _, tc := range []struct {
		name string
		req  *http.Request
		want int
	}{
		{"GET", get, http.StatusMethodNotAllowed},
		{"oversize", r.lark.request(bytes.Repeat([]byte(" "), MaxCallbackBytes+1), now), http.StatusRequestEntityTooLarge},
		{"not JSON", r.lark.request([]byte(`{"schema":`), now), http.StatusBadRequest},
		{"not base64", r.lark.request(mustJSON(map[string]string{"encrypt": "!!!not base64!!!"}), now), http.StatusBadRequest},
		{"short ciphertext", r.lark.request(mustJSON(map[string]string{"encrypt": base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123"))}), now), http.StatusBadRequest},
		{"wrong key", r.lark.request(badKey, now), http.StatusBadRequest},
		{"ciphertext of no JSON", r.lark.request(r.lark.encrypt(t, []byte("hello")), now), http.StatusBadRequest},
		{"unknown event type", r.lark.request(otherEvent, now), http.StatusBadRequest},
		{"no value", r.lark.request(r.lark.action("ou_bob", nil, m.ID), now), http.StatusBadRequest},
		{"foreign value", r.lark.request(r.lark.action("ou_bob", map[string]any{"key": "value"}, m.ID), now), http.StatusBadRequest},
		{"unknown action", r.lark.request(r.lark.action("ou_bob", map[string]any{"action": "delete", "id": ap.ID, "hash": ap.ActionHash.String()}, m.ID), now), http.StatusBadRequest},
		{"malformed hash", r.lark.request(r.lark.action("ou_bob", map[string]any{"action": "approve", "id": ap.ID, "hash": "xyz"}, m.ID), now), http.StatusBadRequest},
		{"no operator", r.lark.request(r.lark.action("", value, m.ID), now), http.StatusBadRequest},
		{"not a callback", r.lark.request([]byte(`{"hello":"world"}`), now), http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			head := r.env.Head(t)
			if w := r.serve(tc.req); w.Code != tc.want {
				t.Errorf("status %d, want %d: %s", w.Code, tc.want, w.Body)
			}
			if h := r.env.Head(t); h != head {
				t.Errorf("audit head %d → %d, want nothing written", head, h)
			}
		})
	}
	if got := r.env.Approval(t, ap.ID); got.Status != airlock.StatusPending {
		t.Errorf("approval %s, want pending", got.Status)
	}
}

// failingStore fails every read: a click is answered "try again".
type failingStore struct{ airlock.Store }

func (failingStore) Approval(context.Context, string) (airlock.Approval, error) {
	return airlock.Approval{}, airlock.Errorf(airlock.EINTERNAL, "disk on fire")
}

func TestStoreFailureToast(t *testing.T) {
	r := newRig(t, true)
	ap, _ := r.env.Ask(t, "prod")
	m := r.shown(t, ap)
	h := r.ch.Handler(&notify.Clicks{Store: failingStore{r.env.Store}, Channel: channel, Surface: airlock.SurfaceFeishu, Users: users, Path: cardPath})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r.lark.request(r.lark.action("ou_bob", buttonValueOf(m.Card, "approve"), m.ID), time.Now()))
	kind, msg, card := answered(t, w)
	if kind != "error" || msg != "could not record; try again" || card != nil {
		t.Errorf("toast %s %q, card %v", kind, msg, card)
	}
	if got := r.env.Approval(t, ap.ID); got.Status != airlock.StatusPending {
		t.Errorf("approval %s, want pending", got.Status)
	}
}
