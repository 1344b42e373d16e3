package slack_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"
	slackgo "github.com/slack-go/slack"
)

const (
	botToken = "xoxb-1111-2222-test"
	appToken = "xapp-1-A0APP-3333-test"
	secret   = "8f742231b10e8888abcd99yyyzzz85a5"
	roomName = "#agent-approvals"
	roomID   = "C0ROOM00001"
)

// fakeSlack is Slack's Web API as far as the channel uses it, checking
// each request the way Slack does (the token, the fields each method
// requires, Block Kit's shapes and limits) and answering as Slack does.
// It also checks what Slack does not: that no text from an agent went
// into mrkdwn unescaped.
type fakeSlack struct {
	t   *testing.T
	srv *httptest.Server

	mu       sync.Mutex
	seq      int
	calls    []call
	messages map[string]*fakeMessage // by "channel/ts"
	fails    map[string][]failure
	changed  chan struct{} // closed at each call

	sockets chan *websocket.Conn
	acks    chan string
}

// call is one request to a method, as Slack read it.
type call struct {
	Method string
	Form   url.Values
	Ref    string // the message posted or updated, "channel/ts"
}

// fakeMessage is a message as it stands in Slack.
type fakeMessage struct {
	Channel, TS, Thread, Text string
	Blocks                    json.RawMessage
	Updates                   int
}

// failure is an answer Slack gives instead of doing the call.
type failure struct {
	Status     int    // HTTP status; 0: 200 with ok:false
	RetryAfter string // with 429
	Code       string // Slack's error code, with ok:false
}

func newFakeSlack(t *testing.T) *fakeSlack {
	f := &fakeSlack{t: t, messages: map[string]*fakeMessage{}, fails: map[string][]failure{}, changed: make(chan struct{}),
		sockets: make(chan *websocket.Conn, 1), acks: make(chan string, 16)}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/{method}", f.serveAPI)
	mux.HandleFunc("GET /ws", f.serveSocket)
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

// APIURL is the base URL of the fake's Web API.
func (f *fakeSlack) APIURL() string { return f.srv.URL + "/api/" }

// failNext makes the next call to method fail as fl says.
func (f *fakeSlack) failNext(method string, fl failure) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fails[method] = append(f.fails[method], fl)
}

func (f *fakeSlack) serveAPI(w http.ResponseWriter, r *http.Request) {
	method := r.PathValue("method")
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	form := url.Values{}
	switch mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt {
	case "application/x-www-form-urlencoded":
		if form, err = url.ParseQuery(string(body)); err != nil {
			f.answer(w, method, nil, "invalid_form_data")
			return
		}
	case "application/json":
		if len(body) > 0 {
			var m map[string]any
			if json.Unmarshal(body, &m) != nil {
				f.answer(w, method, nil, "invalid_json")
				return
			}
			for k, v := range m {
				form.Set(k, fmt.Sprint(v))
			}
		}
	default:
		f.answer(w, method, nil, "invalid_form_data")
		return
	}
	// Slack takes the token from the Authorization header or, for form
	// posts, from the body; never both different, never from the URL.
	want := botToken
	if method == "apps.connections.open" {
		want = appToken
	}
	bearer, hasBearer := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	inForm := form.Get("token")
	form.Del("token")
	switch {
	case r.URL.Query().Has("token"):
		f.t.Errorf("%s: token in the URL", method)
		f.answer(w, method, nil, "invalid_auth")
		return
	case !hasBearer && inForm == "":
		f.answer(w, method, nil, "not_authed")
		return
	case hasBearer && bearer != want, inForm != "" && inForm != want:
		f.answer(w, method, nil, "invalid_auth")
		return
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	if q := f.fails[method]; len(q) > 0 {
		fl := q[0]
		f.fails[method] = q[1:]
		f.record(call{Method: method, Form: form})
		switch {
		case fl.Status == http.StatusTooManyRequests:
			w.Header().Set("Retry-After", fl.RetryAfter)
			w.WriteHeader(fl.Status)
		case fl.Status != 0:
			http.Error(w, "<html>upstream error</html>", fl.Status)
		default:
			f.answer(w, method, nil, fl.Code)
		}
		return
	}
	switch method {
	case "chat.postMessage":
		f.postMessage(w, form)
	case "chat.update":
		f.update(w, form)
	case "chat.postEphemeral":
		f.postEphemeral(w, form)
	case "apps.connections.open":
		f.record(call{Method: method})
		f.answer(w, method, map[string]any{"url": "ws" + strings.TrimPrefix(f.srv.URL, "http") + "/ws?ticket=t1"}, "")
	default:
		f.answer(w, method, nil, "unknown_method")
	}
}

// answer writes Slack's JSON answer: ok with fields, or ok:false with code.
func (f *fakeSlack) answer(w http.ResponseWriter, method string, fields map[string]any, code string) {
	out := map[string]any{"ok": code == ""}
	if code != "" {
		out["error"] = code
	}
	for k, v := range fields {
		out[k] = v
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	json.NewEncoder(w).Encode(out)
}

// record keeps c and wakes those who wait; f.mu is held.
func (f *fakeSlack) record(c call) {
	f.calls = append(f.calls, c)
	close(f.changed)
	f.changed = make(chan struct{})
}

// channel returns the ID of a conversation as chat.postMessage names it:
// the room's name or ID, or a user's ID for the app's direct messages.
func channelID(name string) (string, bool) {
	switch {
	case name == roomName || name == roomID:
		return roomID, true
	case regexp.MustCompile(`^[UW][A-Z0-9]+$`).MatchString(name):
		return "D" + name[1:], true
	case regexp.MustCompile(`^D[A-Z0-9]+$`).MatchString(name):
		return name, true
	}
	return "", false
}

func (f *fakeSlack) postMessage(w http.ResponseWriter, form url.Values) {
	ch, ok := channelID(form.Get("channel"))
	if !ok {
		f.record(call{Method: "chat.postMessage", Form: form})
		f.answer(w, "chat.postMessage", nil, "channel_not_found")
		return
	}
	blocks, code := f.content("chat.postMessage", form)
	if code != "" {
		f.record(call{Method: "chat.postMessage", Form: form})
		f.answer(w, "chat.postMessage", nil, code)
		return
	}
	if th := form.Get("thread_ts"); th != "" && f.messages[ch+"/"+th] == nil {
		f.t.Errorf("chat.postMessage: thread_ts %s is no message in %s", th, ch)
	}
	f.seq++
	ts := fmt.Sprintf("1700000000.%06d", f.seq*100)
	m := &fakeMessage{Channel: ch, TS: ts, Thread: form.Get("thread_ts"), Text: form.Get("text"), Blocks: blocks}
	f.messages[ch+"/"+ts] = m
	f.record(call{Method: "chat.postMessage", Form: form, Ref: ch + "/" + ts})
	f.answer(w, "chat.postMessage", map[string]any{"channel": ch, "ts": ts,
		"message": map[string]any{"type": "message", "text": m.Text, "ts": ts, "bot_id": "B0BOT"}}, "")
}

func (f *fakeSlack) update(w http.ResponseWriter, form url.Values) {
	ch, ts := form.Get("channel"), form.Get("ts")
	c := call{Method: "chat.update", Form: form, Ref: ch + "/" + ts}
	m := f.messages[ch+"/"+ts]
	switch {
	case ch == "" || ts == "":
		f.record(c)
		f.answer(w, "chat.update", nil, "invalid_arguments")
		return
	case ch == roomName:
		f.record(c)
		f.answer(w, "chat.update", nil, "channel_not_found") // chat.update takes an ID only
		return
	case m == nil:
		f.record(c)
		f.answer(w, "chat.update", nil, "message_not_found")
		return
	}
	blocks, code := f.content("chat.update", form)
	if code != "" {
		f.record(c)
		f.answer(w, "chat.update", nil, code)
		return
	}
	m.Text, m.Updates = form.Get("text"), m.Updates+1
	if blocks != nil {
		m.Blocks = blocks
	}
	f.record(c)
	f.answer(w, "chat.update", map[string]any{"channel": ch, "ts": ts, "text": m.Text}, "")
}

func (f *fakeSlack) postEphemeral(w http.ResponseWriter, form url.Values) {
	c := call{Method: "chat.postEphemeral", Form: form}
	_, ok := channelID(form.Get("channel"))
	switch {
	case !ok:
		f.record(c)
		f.answer(w, "chat.postEphemeral", nil, "channel_not_found")
		return
	case form.Get("user") == "":
		f.record(c)
		f.answer(w, "chat.postEphemeral", nil, "user_not_found")
		return
	}
	if _, code := f.content("chat.postEphemeral", form); code != "" {
		f.record(c)
		f.answer(w, "chat.postEphemeral", nil, code)
		return
	}
	f.seq++
	f.record(c)
	f.answer(w, "chat.postEphemeral", map[string]any{"message_ts": fmt.Sprintf("1700000000.%06d", f.seq*100)}, "")
}

// content checks a message's text and blocks as Slack does; it returns
// the blocks and "" or Slack's error code.
func (f *fakeSlack) content(method string, form url.Values) (json.RawMessage, string) {
	text, raw := form.Get("text"), form.Get("blocks")
	if text == "" && raw == "" {
		return nil, "no_text"
	}
	if err := checkMrkdwn(text); err != nil {
		f.t.Errorf("%s: text: %v", method, err)
	}
	if raw == "" {
		return nil, ""
	}
	if err := checkBlocks([]byte(raw)); err != nil {
		f.t.Errorf("%s: %v\nblocks: %s", method, err, raw)
		return nil, "invalid_blocks"
	}
	return json.RawMessage(raw), ""
}

// checkBlocks checks Block Kit JSON against Slack's shapes and limits.
func checkBlocks(raw []byte) error {
	var bs slackgo.Blocks
	if err := json.Unmarshal(raw, &bs); err != nil {
		return fmt.Errorf("blocks do not parse: %v", err)
	}
	if n := len(bs.BlockSet); n == 0 || n > 50 {
		return fmt.Errorf("%d blocks (1 to 50)", n)
	}
	text := func(where string, o *slackgo.TextBlockObject, max int) error {
		switch {
		case o == nil || o.Text == "":
			return fmt.Errorf("%s: no text", where)
		case utf8.RuneCountInString(o.Text) > max:
			return fmt.Errorf("%s: %d characters (max %d)", where, utf8.RuneCountInString(o.Text), max)
		case o.Type == slackgo.MarkdownType:
			if o.Emoji != nil {
				return fmt.Errorf("%s: emoji is for plain_text only", where)
			}
			return checkMrkdwn(o.Text)
		case o.Type != slackgo.PlainTextType:
			return fmt.Errorf("%s: text type %q", where, o.Type)
		}
		return nil
	}
	for i, b := range bs.BlockSet {
		where := fmt.Sprintf("block %d (%s)", i, b.BlockType())
		switch b := b.(type) {
		case *slackgo.HeaderBlock:
			if b.Text == nil || b.Text.Type != slackgo.PlainTextType {
				return fmt.Errorf("%s: a header is plain_text", where)
			}
			if err := text(where, b.Text, 150); err != nil {
				return err
			}
		case *slackgo.SectionBlock:
			if b.Text == nil && len(b.Fields) == 0 {
				return fmt.Errorf("%s: neither text nor fields", where)
			}
			if b.Text != nil {
				if err := text(where, b.Text, 3000); err != nil {
					return err
				}
			}
			if len(b.Fields) > 10 {
				return fmt.Errorf("%s: %d fields (max 10)", where, len(b.Fields))
			}
			for _, fl := range b.Fields {
				if err := text(where+" field", fl, 2000); err != nil {
					return err
				}
			}
		case *slackgo.ContextBlock:
			els := b.ContextElements.Elements
			if len(els) == 0 || len(els) > 10 {
				return fmt.Errorf("%s: %d elements (1 to 10)", where, len(els))
			}
			for _, e := range els {
				o, ok := e.(*slackgo.TextBlockObject)
				if !ok {
					return fmt.Errorf("%s: element %T", where, e)
				}
				if err := text(where, o, 3000); err != nil {
					return err
				}
			}
		case *slackgo.ActionBlock:
			if b.Elements == nil || len(b.Elements.ElementSet) == 0 || len(b.Elements.ElementSet) > 25 {
				return fmt.Errorf("%s: 1 to 25 elements", where)
			}
			ids := map[string]bool{}
			for _, e := range b.Elements.ElementSet {
				btn, ok := e.(*slackgo.ButtonBlockElement)
				if !ok {
					return fmt.Errorf("%s: element %T", where, e)
				}
				switch {
				case btn.Text == nil || btn.Text.Type != slackgo.PlainTextType:
					return fmt.Errorf("%s: a button's text is plain_text", where)
				case btn.ActionID == "" || len(btn.ActionID) > 255 || ids[btn.ActionID]:
					return fmt.Errorf("%s: action_id %q missing, too long or repeated", where, btn.ActionID)
				case len(btn.Value) > 2000, len(btn.URL) > 3000:
					return fmt.Errorf("%s: value or url too long", where)
				case btn.Style != "" && btn.Style != slackgo.StylePrimary && btn.Style != slackgo.StyleDanger:
					return fmt.Errorf("%s: style %q", where, btn.Style)
				}
				if err := text(where+" button", btn.Text, 75); err != nil {
					return err
				}
				ids[btn.ActionID] = true
			}
		default:
			return fmt.Errorf("%s: a block the channel does not send", where)
		}
	}
	return nil
}

// controls are the mrkdwn control sequences the channel writes on purpose:
// mentions, dates, links.
var controls = regexp.MustCompile(`<(@[UW][A-Z0-9]+|!date\^\d+\^[^|<>]+\|[^|<>]+|https?://[^|<>\s]+\|[^<>|]+)>`)

// checkMrkdwn reports a <, > or & of mrkdwn text that is not part of a
// control sequence or an entity: text from an agent that went in raw.
func checkMrkdwn(s string) error {
	rest := controls.ReplaceAllString(s, "")
	if i := strings.IndexAny(rest, "<>"); i >= 0 {
		return fmt.Errorf("unescaped %q in mrkdwn %q", rest[i], s)
	}
	for i := strings.IndexByte(rest, '&'); i >= 0; i = strings.IndexByte(rest, '&') {
		rest = rest[i:]
		if !strings.HasPrefix(rest, "&amp;") && !strings.HasPrefix(rest, "&lt;") && !strings.HasPrefix(rest, "&gt;") {
			return fmt.Errorf("unescaped & in mrkdwn %q", s)
		}
		rest = rest[1:]
	}
	return nil
}

// serveSocket is the Socket Mode websocket apps.connections.open names.
func (f *fakeSlack) serveSocket(w http.ResponseWriter, r *http.Request) {
	up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
	conn, err := up.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer conn.Close()
	f.sockets <- conn
	for {
		var ack struct {
			EnvelopeID string `json:"envelope_id"`
		}
		if err := conn.ReadJSON(&ack); err != nil {
			return
		}
		f.acks <- ack.EnvelopeID
	}
}

// wait waits until ok holds of the calls so far, or fails the test.
func (f *fakeSlack) wait(t *testing.T, what string, ok func(calls []call) bool) {
	t.Helper()
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	for {
		f.mu.Lock()
		calls, changed := slices.Clone(f.calls), f.changed
		f.mu.Unlock()
		if ok(calls) {
			return
		}
		select {
		case <-changed:
		case <-timeout.C:
			t.Fatalf("Slack never saw %s; calls: %s", what, f.describe())
		}
	}
}

// waitCalls waits until there are n calls to method and returns them.
func (f *fakeSlack) waitCalls(t *testing.T, method string, n int) []call {
	t.Helper()
	f.wait(t, fmt.Sprintf("%d calls to %s", n, method), func(calls []call) bool { return len(only(calls, method)) >= n })
	return f.callsTo(method)
}

func (f *fakeSlack) callsTo(method string) []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return only(f.calls, method)
}

func only(calls []call, method string) []call {
	var out []call
	for _, c := range calls {
		if c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// message returns the message ref names as it stands.
func (f *fakeSlack) message(t *testing.T, ref string) fakeMessage {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	m := f.messages[ref]
	if m == nil {
		t.Fatalf("no message %s in Slack", ref)
	}
	return *m
}

// replies returns the replies in the thread of ref.
func (f *fakeSlack) replies(ref string) []fakeMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []fakeMessage
	for _, m := range f.messages {
		if m.Thread != "" && m.Channel+"/"+m.Thread == ref {
			out = append(out, *m)
		}
	}
	return out
}

// count is how many calls Slack has seen.
func (f *fakeSlack) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

func (f *fakeSlack) describe() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var b strings.Builder
	for _, c := range f.calls {
		fmt.Fprintf(&b, "\n  %s %s %v", c.Method, c.Ref, c.Form)
	}
	return b.String()
}

// sign signs body as Slack signs its requests at time ts.
func sign(key string, ts int64, body string) string {
	mac := hmac.New(sha256.New, []byte(key))
	fmt.Fprintf(mac, "v0:%d:%s", ts, body)
	return "v0=" + hex.EncodeToString(mac.Sum(nil))
}

// signedRequest is a POST of body as Slack sends it, signed at ts.
func signedRequest(body string, ts time.Time) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/callbacks/team-slack", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(ts.Unix(), 10))
	r.Header.Set("X-Slack-Signature", sign(secret, ts.Unix(), body))
	return r
}
