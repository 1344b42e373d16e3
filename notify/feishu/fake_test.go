package feishu

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// fakeFeishu is an Open Platform that checks requests the way Feishu does:
// the app's credentials for a tenant_access_token, the bearer token on
// every message call, the receive_id_type and the receiver's ID shape,
// msg_type interactive, content a JSON string holding a card with the
// fields a card needs, a PATCH of a message that exists and is a shared
// card. It answers like Feishu, and can be told to fail.
type fakeFeishu struct {
	t   testing.TB
	URL string

	appID, appSecret string

	mu       sync.Mutex
	tokens   map[string]bool // issued tokens, true while valid
	issued   int
	messages map[string]*fakeMessage
	order    []string // message IDs in the order sent
	byUUID   map[string]string
	failures []fakeFailure
	calls    []string // "METHOD path", every call
}

// fakeMessage is a message the fake holds.
type fakeMessage struct {
	ID            string
	ReceiveIDType string // chat_id, open_id; "" for a reply
	ReceiveID     string
	ReplyTo       string
	Card          map[string]any // the current card
	Updates       int
}

// fakeFailure makes the next call matching method and path fail.
type fakeFailure struct {
	method, path string
	status, code int
	msg          string
}

func newFakeFeishu(t testing.TB) *fakeFeishu {
	f := &fakeFeishu{t: t, appID: "cli_test", appSecret: "app-s3cret-value",
		tokens: map[string]bool{}, messages: map[string]*fakeMessage{}, byUUID: map[string]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /open-apis/auth/v3/tenant_access_token/internal", f.token)
	mux.HandleFunc("POST /open-apis/im/v1/messages", f.create)
	mux.HandleFunc("PATCH /open-apis/im/v1/messages/{id}", f.patch)
	mux.HandleFunc("POST /open-apis/im/v1/messages/{id}/reply", f.reply)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

// fail makes the next call to method path answer status and code.
func (f *fakeFeishu) fail(method, path string, status, code int, msg string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failures = append(f.failures, fakeFailure{method, path, status, code, msg})
}

// revokeTokens invalidates every token issued (as when one expired).
func (f *fakeFeishu) revokeTokens() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for tok := range f.tokens {
		f.tokens[tok] = false
	}
}

func (f *fakeFeishu) tokensIssued() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.issued
}

// sent returns copies of the messages sent, in order.
func (f *fakeFeishu) sent() []fakeMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]fakeMessage, 0, len(f.order))
	for _, id := range f.order {
		out = append(out, *f.messages[id])
	}
	return out
}

// message returns a copy of message id.
func (f *fakeFeishu) message(id string) (fakeMessage, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, ok := f.messages[id]
	if !ok {
		return fakeMessage{}, false
	}
	return *m, true
}

func (f *fakeFeishu) answer(w http.ResponseWriter, status, code int, msg string, data any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	body := map[string]any{"code": code, "msg": msg}
	if data != nil {
		body["data"] = data
	}
	if code != 0 {
		body["error"] = map[string]any{"log_id": "20260101000000FAKE"}
	}
	json.NewEncoder(w).Encode(body)
}

// start records a call and applies a queued failure; false: answered.
func (f *fakeFeishu) start(w http.ResponseWriter, r *http.Request, path string) bool {
	f.mu.Lock()
	f.calls = append(f.calls, r.Method+" "+r.URL.Path)
	for i, fl := range f.failures {
		if fl.method == r.Method && fl.path == path {
			f.failures = append(f.failures[:i], f.failures[i+1:]...)
			f.mu.Unlock()
			f.answer(w, fl.status, fl.code, fl.msg, nil)
			return false
		}
	}
	f.mu.Unlock()
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		f.answer(w, http.StatusBadRequest, 230001, "Your request contains an invalid request parameter, ext=content-type.", nil)
		return false
	}
	return true
}

// authorised checks the bearer tenant_access_token like Feishu.
func (f *fakeFeishu) authorised(w http.ResponseWriter, r *http.Request) bool {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || tok == "" {
		f.answer(w, http.StatusBadRequest, 99991661, "Missing access token for authorization. Please make a request with token attached.", nil)
		return false
	}
	f.mu.Lock()
	valid := f.tokens[tok] && strings.HasPrefix(tok, "t-")
	f.mu.Unlock()
	if !valid {
		f.answer(w, http.StatusBadRequest, 99991663, "Invalid access token for authorization. Please make a request with token attached.", nil)
		return false
	}
	return true
}

func (f *fakeFeishu) token(w http.ResponseWriter, r *http.Request) {
	if !f.start(w, r, "/open-apis/auth/v3/tenant_access_token/internal") {
		return
	}
	var req struct {
		AppID     string `json:"app_id"`
		AppSecret string `json:"app_secret"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		f.answer(w, http.StatusBadRequest, 10003, "invalid param", nil)
		return
	}
	if req.AppID != f.appID {
		f.answer(w, http.StatusBadRequest, 10003, "invalid param: app_id", nil)
		return
	}
	if req.AppSecret != f.appSecret {
		f.answer(w, http.StatusBadRequest, 10014, "app secret invalid", nil)
		return
	}
	f.mu.Lock()
	f.issued++
	tok := fmt.Sprintf("t-g1044fake%04d", f.issued)
	f.tokens[tok] = true
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	json.NewEncoder(w).Encode(map[string]any{"code": 0, "msg": "ok", "tenant_access_token": tok, "expire": 7200})
}

// checkCard checks content is a JSON string holding a card JSON 1.0 as the
// channel must write it, and returns the card.
func (f *fakeFeishu) checkCard(content string) (map[string]any, error) {
	var card map[string]any
	if err := json.Unmarshal([]byte(content), &card); err != nil {
		return nil, fmt.Errorf("content is not a JSON card: %v", err)
	}
	cfg, _ := card["config"].(map[string]any)
	if cfg["update_multi"] != true {
		return nil, fmt.Errorf("config.update_multi is not true: %v", cfg)
	}
	hdr, _ := card["header"].(map[string]any)
	title, _ := hdr["title"].(map[string]any)
	if hdr["template"] == "" || title["tag"] != "plain_text" || title["content"] == "" {
		return nil, fmt.Errorf("bad header %v", hdr)
	}
	els, _ := card["elements"].([]any)
	if len(els) == 0 {
		return nil, fmt.Errorf("no elements")
	}
	for _, e := range els {
		el, _ := e.(map[string]any)
		switch el["tag"] {
		case "div", "markdown", "note", "hr":
		case "action":
			acts, _ := el["actions"].([]any)
			if len(acts) == 0 {
				return nil, fmt.Errorf("an action without buttons")
			}
			for _, a := range acts {
				b, _ := a.(map[string]any)
				txt, _ := b["text"].(map[string]any)
				if b["tag"] != "button" || txt["content"] == "" {
					return nil, fmt.Errorf("bad button %v", b)
				}
				if b["url"] == nil && b["value"] == nil {
					return nil, fmt.Errorf("a button with neither url nor value: %v", b)
				}
				if v, ok := b["value"].(map[string]any); ok && (v["action"] == "" || v["id"] == "" || v["hash"] == "") {
					return nil, fmt.Errorf("a button value without action, id and hash: %v", v)
				}
			}
		default:
			return nil, fmt.Errorf("unknown element %v", el["tag"])
		}
	}
	return card, nil
}

func (f *fakeFeishu) create(w http.ResponseWriter, r *http.Request) {
	if !f.start(w, r, "/open-apis/im/v1/messages") || !f.authorised(w, r) {
		return
	}
	idType := r.URL.Query().Get("receive_id_type")
	var req struct {
		ReceiveID string  `json:"receive_id"`
		MsgType   string  `json:"msg_type"`
		Content   *string `json:"content"` // a string, never an object
		UUID      string  `json:"uuid"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Content == nil {
		f.answer(w, http.StatusBadRequest, 230001, "Your request contains an invalid request parameter, ext=content must be a string.", nil)
		return
	}
	prefix := map[string]string{"chat_id": "oc_", "open_id": "ou_"}[idType]
	switch {
	case prefix == "":
		f.answer(w, http.StatusBadRequest, 230001, "Your request contains an invalid request parameter, ext=invalid receive_id_type.", nil)
		return
	case !strings.HasPrefix(req.ReceiveID, prefix):
		f.answer(w, http.StatusBadRequest, 230001, "Your request contains an invalid request parameter, ext=invalid receive_id.", nil)
		return
	case req.MsgType != "interactive":
		f.answer(w, http.StatusBadRequest, 230001, "msg_type must be interactive here", nil)
		return
	case len(req.UUID) > 50:
		f.answer(w, http.StatusBadRequest, 230001, "uuid longer than 50 characters", nil)
		return
	}
	card, err := f.checkCard(*req.Content)
	if err != nil {
		f.t.Errorf("fake feishu: POST messages: %v", err)
		f.answer(w, http.StatusBadRequest, 230099, "Failed to create card content: "+err.Error(), nil)
		return
	}
	f.mu.Lock()
	id, dup := f.byUUID[req.UUID]
	if !dup || req.UUID == "" {
		id = fmt.Sprintf("om_fake%04d", len(f.messages)+1)
		f.messages[id] = &fakeMessage{ID: id, ReceiveIDType: idType, ReceiveID: req.ReceiveID, Card: card}
		f.order = append(f.order, id)
		if req.UUID != "" {
			f.byUUID[req.UUID] = id
		}
	}
	f.mu.Unlock()
	f.answer(w, http.StatusOK, 0, "success", map[string]any{"message_id": id, "msg_type": "interactive", "chat_id": "oc_fakechat"})
}

func (f *fakeFeishu) patch(w http.ResponseWriter, r *http.Request) {
	if !f.start(w, r, "/open-apis/im/v1/messages/{id}") || !f.authorised(w, r) {
		return
	}
	var req struct {
		Content *string `json:"content"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Content == nil {
		f.answer(w, http.StatusBadRequest, 230001, "Your request contains an invalid request parameter, ext=content.", nil)
		return
	}
	card, err := f.checkCard(*req.Content)
	if err != nil {
		f.t.Errorf("fake feishu: PATCH: %v", err)
		f.answer(w, http.StatusBadRequest, 230099, "Failed to create card content: "+err.Error(), nil)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	m, ok := f.messages[r.PathValue("id")]
	if !ok {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(map[string]any{"code": 230001, "msg": "Your request contains an invalid request parameter, ext=invalid message_id."})
		return
	}
	m.Card, m.Updates = card, m.Updates+1
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"code": 0, "msg": "success", "data": map[string]any{}})
}

func (f *fakeFeishu) reply(w http.ResponseWriter, r *http.Request) {
	if !f.start(w, r, "/open-apis/im/v1/messages/{id}/reply") || !f.authorised(w, r) {
		return
	}
	var req struct {
		MsgType string  `json:"msg_type"`
		Content *string `json:"content"`
		UUID    string  `json:"uuid"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Content == nil || req.MsgType != "interactive" {
		f.answer(w, http.StatusBadRequest, 230001, "Your request contains an invalid request parameter.", nil)
		return
	}
	card, err := f.checkCard(*req.Content)
	if err != nil {
		f.t.Errorf("fake feishu: reply: %v", err)
		f.answer(w, http.StatusBadRequest, 230099, "Failed to create card content", nil)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	to := r.PathValue("id")
	if _, ok := f.messages[to]; !ok {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(map[string]any{"code": 230001, "msg": "Your request contains an invalid request parameter, ext=invalid message_id."})
		return
	}
	id, dup := f.byUUID[req.UUID]
	if !dup || req.UUID == "" {
		id = fmt.Sprintf("om_fake%04d", len(f.messages)+1)
		f.messages[id] = &fakeMessage{ID: id, ReplyTo: to, Card: card}
		f.order = append(f.order, id)
		if req.UUID != "" {
			f.byUUID[req.UUID] = id
		}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"code": 0, "msg": "success", "data": map[string]any{"message_id": id}})
}

// buttons returns a card's buttons.
func buttons(card map[string]any) []map[string]any {
	var out []map[string]any
	els, _ := card["elements"].([]any)
	for _, e := range els {
		el, _ := e.(map[string]any)
		if el["tag"] != "action" {
			continue
		}
		acts, _ := el["actions"].([]any)
		for _, a := range acts {
			b, _ := a.(map[string]any)
			out = append(out, b)
		}
	}
	return out
}

// buttonValueOf returns the value of a card's button sending action, nil
// when the card has none.
func buttonValueOf(card map[string]any, action string) map[string]any {
	for _, b := range buttons(card) {
		if v, ok := b["value"].(map[string]any); ok && v["action"] == action {
			return v
		}
	}
	return nil
}
