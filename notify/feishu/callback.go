package feishu

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/notify"
)

// Limits of the card callback endpoint.
const (
	// MaxCallbackBytes bounds a callback's body: a click is a few KB.
	MaxCallbackBytes = 64 << 10
	// MaxSkew is how far a signed callback's timestamp may be from now:
	// an older one is a replay.
	MaxSkew = 5 * time.Minute
	// resolveTimeout bounds a click's resolution: Feishu waits 3 s for the
	// answer.
	resolveTimeout = 2 * time.Second
	// answerWithin bounds how long a callback's answer waits for its
	// click to be resolved.
	answerWithin = 2500 * time.Millisecond
)

// Callback request headers (signature verification).
const (
	headerTimestamp = "X-Lark-Request-Timestamp"
	headerNonce     = "X-Lark-Request-Nonce"
	headerSignature = "X-Lark-Signature"
)

// eventCardAction is the card callback's event type (schema 2.0).
const eventCardAction = "card.action.trigger"

// callback is a card callback's body once decrypted: the URL verification,
// a schema 2.0 card.action.trigger, or the older card callback.
type callback struct {
	Encrypt string `json:"encrypt"`

	// URL verification.
	Type      string `json:"type"`
	Challenge string `json:"challenge"`
	// Token is the Verification Token in a URL verification; in an older
	// card callback it is the card's update token instead.
	Token string `json:"token"`

	// Schema 2.0.
	Schema string `json:"schema"`
	Header *struct {
		EventType string `json:"event_type"`
		Token     string `json:"token"`
	} `json:"header"`
	Event *struct {
		Operator struct {
			OpenID string `json:"open_id"`
		} `json:"operator"`
		Action  *cardAction `json:"action"`
		Context struct {
			OpenMessageID string `json:"open_message_id"`
		} `json:"context"`
	} `json:"event"`

	// The older card callback.
	OpenID        string      `json:"open_id"`
	OpenMessageID string      `json:"open_message_id"`
	Action        *cardAction `json:"action"`
}

type cardAction struct {
	// Value is the clicked button's value: an object, or (older callbacks
	// allow it) a string holding one.
	Value json.RawMessage `json:"value"`
	Tag   string          `json:"tag"`
}

// click is a person's click on a card's Approve or Reject button.
type click struct {
	openID   string
	id       string
	hash     airlock.Hash
	status   airlock.ApprovalStatus
	remember bool // approve and remember
}

// answer is the card callback's answer: a toast, and the card to show in
// place of the clicked one.
type answer struct {
	Toast *toast   `json:"toast,omitempty"`
	Card  *newCard `json:"card,omitempty"`
}

type toast struct {
	Type    string `json:"type"` // success, error, warning, info
	Content string `json:"content"`
}

type newCard struct {
	Type string          `json:"type"` // raw: Data is the card JSON
	Data json.RawMessage `json:"data"`
}

// Handler is the card callback endpoint (mount it at the callback URL set
// in the developer console, airlock serve: POST /callbacks/<channel name>). It answers the
// console's URL verification, authenticates callbacks (with an Encrypt Key
// set, only a signature made with the key; otherwise the Verification
// Token, in the body or as the older callbacks' signature), decrypts them,
// and resolves a click on Approve or Reject through clicks — which maps the
// person, checks they may resolve the request and audits refusals. The
// answer, within Feishu's 3 s, is a toast and, once resolved, the card
// with the outcome in place of the buttons.
//
// A callback that cannot be authenticated is refused with 401, one that is
// malformed with 400 (or 405, 413); neither is recorded. A refused click is
// answered 200 with an error toast and the card unchanged.
func (c *Channel) Handler(clicks *notify.Clicks) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "feishu: the card callback takes POST", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxCallbackBytes))
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				http.Error(w, "feishu: callback too large", http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, "feishu: cannot read the callback", http.StatusBadRequest)
			return
		}
		signed, forged := c.signature(r.Header, body)
		if forged {
			http.Error(w, "feishu: bad or stale signature", http.StatusUnauthorized)
			return
		}
		cb, err := c.open(body)
		if err != nil {
			http.Error(w, "feishu: "+err.Error(), http.StatusBadRequest)
			return
		}
		if cb.Type == "url_verification" {
			// The console's check of the URL is not signed: the token (and
			// the encryption, with an Encrypt Key) prove it.
			if !equal(cb.Token, c.verificationToken) {
				http.Error(w, "feishu: wrong verification token", http.StatusUnauthorized)
				return
			}
			writeJSON(w, map[string]string{"challenge": cb.Challenge})
			return
		}
		if !signed && !c.tokenProves(cb) {
			http.Error(w, "feishu: the callback is not signed by the app", http.StatusUnauthorized)
			return
		}
		k, err := parseClick(cb)
		if err != nil {
			http.Error(w, "feishu: "+err.Error(), http.StatusBadRequest)
			return
		}
		// Feishu wants its answer within 3 s. A store that stalls must not
		// hold it past that: the person is told the answer is being
		// recorded, and the card is updated when the request's end is
		// delivered.
		res := make(chan answer, 1)
		go func() { res <- c.resolve(context.WithoutCancel(r.Context()), clicks, k) }()
		t := time.NewTimer(answerWithin)
		defer t.Stop()
		select {
		case a := <-res:
			writeJSON(w, a)
		case <-t.C:
			writeJSON(w, answer{Toast: &toast{Type: "info", Content: "Recording your answer: the card shows it once it is recorded."}})
		}
	})
}

// resolve resolves a click and says so.
func (c *Channel) resolve(ctx context.Context, clicks *notify.Clicks, k click) answer {
	ctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	ap, err := clicks.Resolve(ctx, k.openID, k.id, k.hash, k.status, "")
	var refused *notify.Refusal
	switch {
	case errors.As(err, &refused):
		return answer{Toast: &toast{Type: "error", Content: refused.Message}}
	case err != nil:
		c.log.Error("feishu: cannot resolve a click", "approval", k.id, "open_id", k.openID, "err", err)
		return answer{Toast: &toast{Type: "error", Content: "could not record; try again"}}
	}
	d := &notify.Delivery{
		Notification: airlock.Notification{Kind: airlock.EventApprovalResolved, Agent: ap.Agent, ApprovalID: ap.ID},
		Approval:     &ap, Link: notify.InboxLink(c.inbox, ap.ID),
	}
	said := fmt.Sprintf("%s by %s", ap.Status, ap.ResolvedBy)
	if k.remember {
		g, err := clicks.RememberApproved(ctx, k.openID, ap)
		said = clip(notify.RememberedText(g, err), maxValue)
	}
	return answer{
		Toast: &toast{Type: "success", Content: said},
		Card:  &newCard{Type: "raw", Data: c.card(d, nil)},
	}
}

// signature checks the callback's signature headers. signed: a fresh
// signature by the app. With an Encrypt Key that is only sha256 over
// timestamp, nonce, key and body: the Verification Token is sent in every
// callback's clear header and is a weaker secret than the key, so once a
// key is set a signature made with the token (the older card callbacks'
// sha1) proves nothing. Without a key, only that sha1 signature counts.
// forged: with an Encrypt Key, a signature that is present but is not a
// fresh one made with the key. Without a key a signature that does not
// verify is ignored, and the Verification Token must prove the callback.
func (c *Channel) signature(h http.Header, body []byte) (signed, forged bool) {
	sig, ts, nonce := h.Get(headerSignature), h.Get(headerTimestamp), h.Get(headerNonce)
	if sig == "" {
		return false, false
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	fresh := err == nil && absDuration(c.now().Sub(time.Unix(sec, 0))) <= MaxSkew
	var ok bool
	if c.encryptKey != "" {
		ok = equal(sig, sign256(ts, nonce, c.encryptKey, body))
	} else {
		ok = equal(sig, sign1(ts, nonce, c.verificationToken, body))
	}
	signed = fresh && ok
	return signed, !signed && c.encryptKey != ""
}

// tokenProves reports whether an unsigned callback is proved by the
// Verification Token: only a schema 2.0 callback carries it (an older card
// callback's token field is its card update token), and only when no
// Encrypt Key is set (then every callback is signed).
func (c *Channel) tokenProves(cb *callback) bool {
	return c.encryptKey == "" && cb.Schema == "2.0" && cb.Header != nil && equal(cb.Header.Token, c.verificationToken)
}

// open decodes a callback's body, decrypting it when it is encrypted.
func (c *Channel) open(body []byte) (*callback, error) {
	var cb callback
	if err := json.Unmarshal(body, &cb); err != nil {
		return nil, errors.New("the callback is not JSON")
	}
	if cb.Encrypt == "" {
		return &cb, nil
	}
	if c.encryptKey == "" {
		return nil, errors.New("the callback is encrypted but no encrypt_key is configured")
	}
	// One answer for every way an encrypted body fails to open (bad
	// padding, not JSON): no padding oracle before the body is verified.
	plain, err := decrypt(c.encryptKey, cb.Encrypt)
	if err == nil {
		cb = callback{}
		if json.Unmarshal(plain, &cb) != nil || cb.Encrypt != "" {
			err = errUndecryptable
		}
	}
	if err != nil {
		return nil, errUndecryptable
	}
	return &cb, nil
}

// parseClick reads the click of a card.action.trigger callback (schema
// 2.0), or of an older card callback.
func parseClick(cb *callback) (click, error) {
	var k click
	var act *cardAction
	switch {
	case cb.Schema == "2.0":
		if cb.Header == nil || cb.Header.EventType != eventCardAction {
			et := ""
			if cb.Header != nil {
				et = cb.Header.EventType
			}
			return k, fmt.Errorf("unexpected event type %q (want %s)", et, eventCardAction)
		}
		if cb.Event == nil {
			return k, errors.New("the callback has no event")
		}
		k.openID, act = cb.Event.Operator.OpenID, cb.Event.Action
	case cb.Schema == "" && cb.Type == "" && cb.Action != nil:
		k.openID, act = cb.OpenID, cb.Action
	default:
		return k, errors.New("not a card callback")
	}
	if k.openID == "" {
		return k, errors.New("the callback names no operator open_id")
	}
	if act == nil || len(act.Value) == 0 {
		return k, errors.New("the callback has no action value")
	}
	raw := []byte(act.Value)
	var s string
	if json.Unmarshal(raw, &s) == nil {
		raw = []byte(s) // a value sent as a string holding JSON
	}
	var v buttonValue
	if err := json.Unmarshal(raw, &v); err != nil {
		return k, errors.New("the action value is not Airlock's")
	}
	switch v.Action {
	case actionApprove:
		k.status = airlock.StatusApproved
	case actionRemember:
		k.status, k.remember = airlock.StatusApproved, true
	case actionReject:
		k.status = airlock.StatusRejected
	default:
		return k, fmt.Errorf("unknown action %q (want approve, approve_remember or reject)", v.Action)
	}
	if v.ID == "" {
		return k, errors.New("the action value names no request")
	}
	h, err := airlock.ParseHash(v.Hash)
	if err != nil {
		return k, errors.New("the action value's hash is not an action hash")
	}
	k.id, k.hash = v.ID, h
	return k, nil
}

var errUndecryptable = errors.New("the encrypted callback does not decrypt to a callback (wrong encrypt_key?)")

// decrypt opens an encrypted callback: base64 of a 16-byte IV and the
// AES-256-CBC ciphertext, PKCS#7-padded, keyed with SHA-256(Encrypt Key).
func decrypt(key, b64 string) ([]byte, error) {
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, errors.New("the encrypted callback is not base64")
	}
	if len(data) < 2*aes.BlockSize || len(data)%aes.BlockSize != 0 {
		return nil, errors.New("the encrypted callback is not AES-CBC ciphertext")
	}
	k := sha256.Sum256([]byte(key))
	block, err := aes.NewCipher(k[:])
	if err != nil {
		return nil, err
	}
	iv, ct := data[:aes.BlockSize], data[aes.BlockSize:]
	plain := make([]byte, len(ct))
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(plain, ct)
	n := int(plain[len(plain)-1])
	if n == 0 || n > aes.BlockSize {
		return nil, errors.New("the encrypted callback does not decrypt (wrong encrypt_key?)")
	}
	for _, b := range plain[len(plain)-n:] {
		if int(b) != n {
			return nil, errors.New("the encrypted callback does not decrypt (wrong encrypt_key?)")
		}
	}
	return plain[:len(plain)-n], nil
}

// sign256 is a callback's signature when an Encrypt Key is set.
func sign256(ts, nonce, key string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(ts + nonce + key))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// sign1 is an older card callback's signature, keyed with the Verification
// Token.
func sign1(ts, nonce, token string, body []byte) string {
	h := sha1.New()
	h.Write([]byte(ts + nonce + token))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// equal compares secrets in constant time; "" never matches.
func equal(got, want string) bool {
	return got != "" && want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

func absDuration(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "feishu: cannot encode the answer", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Write(b)
}
