package feishu

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/airlock-dev/airlock/notify"
)

// Open Platform error codes the channel acts on (server error codes:
// https://open.feishu.cn/document/server-docs/api-call-guide/generic-error-code).
const (
	codeRateLimited = 99991400 // request trigger frequency limit
	codeNoToken     = 99991661 // missing or malformed access token
	codeBadToken    = 99991663 // invalid (expired) tenant access token
	codeBadToken2   = 99991671 // invalid access token
)

// permanentCodes are answers no retry can help: the app lacks a permission,
// a parameter is invalid, the bot is not in the chat or cannot reach the
// person, its bot ability is off, the card is rejected.
var permanentCodes = map[int]bool{
	99991672: true, // the app has not been granted a scope this API needs
	99991679: true, // the scope is not authorised
	230001:   true, // invalid request parameter (receive_id, message_id, …)
	230002:   true, // the bot is not in the chat
	230006:   true, // the app's bot ability is not enabled
	230013:   true, // the person is outside the app's availability
	230099:   true, // the card content was rejected
}

// apiError is a failed Open Platform call: an HTTP failure, or a JSON answer
// whose code is not 0. It holds what Feishu answered, never a credential.
type apiError struct {
	op     string // "POST /open-apis/im/v1/messages"
	status int
	code   int
	msg    string
}

func (e *apiError) Error() string {
	if e.code != 0 {
		return fmt.Sprintf("feishu: %s: code %d: %s", e.op, e.code, e.msg)
	}
	s := fmt.Sprintf("feishu: %s: HTTP %d %s", e.op, e.status, http.StatusText(e.status))
	if e.msg != "" {
		s += ": " + e.msg
	}
	return s
}

// classify marks the errors no retry can help Permanent.
func classify(err error) error {
	var ae *apiError
	if !errors.As(err, &ae) {
		return err // the network, a timeout: try again
	}
	switch {
	case ae.code == codeRateLimited, ae.status == http.StatusTooManyRequests:
		return err
	case permanentCodes[ae.code]:
		return notify.Permanent(err)
	case ae.code == 0 && ae.status >= 400 && ae.status < 500 && ae.status != http.StatusRequestTimeout:
		return notify.Permanent(err) // no JSON answer: a wrong base URL, a proxy refusing
	}
	return err
}

// envelope is every Open Platform answer: code 0 and data, or an error.
type envelope struct {
	Code *int            `json:"code"`
	Msg  string          `json:"msg"`
	Data json.RawMessage `json:"data"`
}

// call makes an authenticated API call and decodes its data into out (nil:
// ignore it). An answer that the token is invalid or expired fetches a new
// token and tries once more.
func (c *Channel) call(ctx context.Context, method, path string, query url.Values, body, out any) error {
	payload, err := json.Marshal(body)
	if err != nil {
		return notify.Permanent(fmt.Errorf("feishu: encode %s %s: %w", method, path, err))
	}
	for retried := false; ; retried = true {
		tok, err := c.tenantToken(ctx)
		if err != nil {
			return err
		}
		err = c.do(ctx, method, path, query, tok, payload, out)
		var ae *apiError
		if !retried && errors.As(err, &ae) && (ae.code == codeBadToken || ae.code == codeNoToken || ae.code == codeBadToken2) {
			c.forget(tok)
			continue
		}
		return classify(err)
	}
}

// do sends one request and reads its answer.
func (c *Channel) do(ctx context.Context, method, path string, query url.Values, tok string, payload []byte, out any) error {
	op := method + " " + path
	u := c.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(payload))
	if err != nil {
		return notify.Permanent(fmt.Errorf("feishu: %s: %w", op, err))
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		// url.Error names the URL: the base and path, no credential.
		return fmt.Errorf("feishu: %s: %w", op, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("feishu: %s: read the answer: %w", op, err)
	}
	var env envelope
	if json.Unmarshal(raw, &env) != nil || env.Code == nil {
		if resp.StatusCode/100 == 2 {
			return fmt.Errorf("feishu: %s: the answer is not an Open Platform JSON answer", op)
		}
		return &apiError{op: op, status: resp.StatusCode, msg: snippet(raw)}
	}
	if *env.Code != 0 {
		return &apiError{op: op, status: resp.StatusCode, code: *env.Code, msg: env.Msg}
	}
	if resp.StatusCode/100 != 2 {
		return &apiError{op: op, status: resp.StatusCode, msg: env.Msg}
	}
	if out != nil && len(env.Data) > 0 {
		if err := json.Unmarshal(env.Data, out); err != nil {
			return fmt.Errorf("feishu: %s: decode the answer: %w", op, err)
		}
	}
	return nil
}

// snippet is the start of a non-JSON answer, for an error message.
func snippet(raw []byte) string {
	s := strings.TrimSpace(string(raw))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}

// tokenPath is the self-built app's tenant_access_token endpoint.
const tokenPath = "/open-apis/auth/v3/tenant_access_token/internal"

// tenantToken returns the cached tenant_access_token, fetching a new one
// when there is none or it is about to expire. Fetches are serialised: a
// burst of deliveries asks once.
func (c *Channel) tenantToken(ctx context.Context) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if c.token != "" && now.Before(c.expires) {
		return c.token, nil
	}
	payload, err := json.Marshal(map[string]string{"app_id": c.appID, "app_secret": c.appSecret})
	if err != nil {
		return "", notify.Permanent(err)
	}
	var answer struct {
		Code   *int   `json:"code"`
		Msg    string `json:"msg"`
		Token  string `json:"tenant_access_token"`
		Expire int64  `json:"expire"`
	}
	op := "POST " + tokenPath
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+tokenPath, bytes.NewReader(payload))
	if err != nil {
		return "", notify.Permanent(fmt.Errorf("feishu: %s: %w", op, err))
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	resp, err := c.client.Do(req)
	if err != nil {
		return "", fmt.Errorf("feishu: get a tenant_access_token: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", fmt.Errorf("feishu: get a tenant_access_token: %w", err)
	}
	if json.Unmarshal(raw, &answer) != nil || answer.Code == nil {
		return "", classify(&apiError{op: op, status: resp.StatusCode, msg: snippet(raw)})
	}
	switch {
	case *answer.Code == codeRateLimited || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return "", &apiError{op: op, status: resp.StatusCode, code: *answer.Code, msg: answer.Msg}
	case *answer.Code != 0:
		// The only inputs are the app's ID and secret: check them.
		return "", notify.Permanent(fmt.Errorf("feishu: the app's credentials were refused (check app_id and app_secret): %w",
			&apiError{op: op, status: resp.StatusCode, code: *answer.Code, msg: answer.Msg}))
	case answer.Token == "":
		return "", fmt.Errorf("feishu: %s: the answer holds no tenant_access_token", op)
	}
	// Renew a little before the end: a token with less than 30 minutes left
	// is replaced by a new one when asked for.
	life := time.Duration(answer.Expire) * time.Second
	c.token, c.expires = answer.Token, now.Add(life-min(5*time.Minute, life/2))
	return c.token, nil
}

// forget drops tok from the cache (Feishu said it is invalid), unless
// another delivery replaced it already.
func (c *Channel) forget(tok string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.token == tok {
		c.token = ""
	}
}

// create sends card to t and returns the new message's ID.
func (c *Channel) create(ctx context.Context, t target, uuid string, card []byte) (string, error) {
	var out struct {
		MessageID string `json:"message_id"`
	}
	body := map[string]string{"receive_id": t.id, "msg_type": "interactive", "content": string(card), "uuid": uuid}
	err := c.call(ctx, http.MethodPost, "/open-apis/im/v1/messages", url.Values{"receive_id_type": {t.idType}}, body, &out)
	if err != nil {
		return "", err
	}
	if out.MessageID == "" {
		return "", errors.New("feishu: POST /open-apis/im/v1/messages: the answer holds no message_id")
	}
	return out.MessageID, nil
}

// patch replaces the card of message id.
func (c *Channel) patch(ctx context.Context, id string, card []byte) error {
	return c.call(ctx, http.MethodPatch, "/open-apis/im/v1/messages/"+url.PathEscape(id), nil,
		map[string]string{"content": string(card)}, nil)
}

// reply sends card as a reply to message id and returns the reply's ID.
func (c *Channel) reply(ctx context.Context, id, uuid string, card []byte) (string, error) {
	var out struct {
		MessageID string `json:"message_id"`
	}
	path := "/open-apis/im/v1/messages/" + url.PathEscape(id) + "/reply"
	err := c.call(ctx, http.MethodPost, path, nil,
		map[string]string{"msg_type": "interactive", "content": string(card), "uuid": uuid}, &out)
	if err != nil {
		return "", err
	}
	if out.MessageID == "" {
		return "", fmt.Errorf("feishu: POST %s: the answer holds no message_id", path)
	}
	return out.MessageID, nil
}
