// Package webhook delivers Airlock's notices as HTTP POSTs signed by the
// Standard Webhooks specification (https://www.standardwebhooks.com).
//
// Headers: webhook-id (the delivery's idempotency key, the same on every
// attempt), webhook-timestamp (Unix seconds) and webhook-signature
// ("v1,<base64 HMAC-SHA256 of id.timestamp.body>", one per secret,
// space-separated, while secrets rotate).
//
// The body is {"type": kind, "timestamp": …, "data": {…}}, documented in
// docs/NOTIFICATIONS.md. A receiver resolves a request back through the
// API with a token of its own (surface "webhook").
package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/airlock-dev/airlock/notify"
)

// Config configures a webhook channel.
type Config struct {
	// URL receives the POSTs: https, or http to a loopback or private
	// address of the operator's choosing.
	URL string
	// Secrets sign each body, "whsec_" followed by base64 (at least 24
	// bytes); during a rotation, the new secret and the old one.
	Secrets []string
	// Headers are sent with every request (an API key the receiver
	// wants); never the signature headers.
	Headers map[string]string
	// Client sends the requests; nil: a client that does not follow
	// redirects.
	Client *http.Client
	// Now is the clock of webhook-timestamp; nil: time.Now.
	Now func() time.Time
}

// MinSecretBytes is the least key length accepted (the specification
// recommends 24 to 64 bytes).
const MinSecretBytes = 24

// Channel posts signed notices to one URL.
type Channel struct {
	url     string
	signers []*standardwebhooks.Webhook
	headers map[string]string
	client  *http.Client
	now     func() time.Time
}

// New checks cfg and returns its channel.
func New(cfg Config) (*Channel, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("url: %q is not an absolute http(s) URL", redact(cfg.URL))
	}
	if u.Scheme == "http" && !nearby(u.Hostname()) {
		return nil, fmt.Errorf("url: %s is plain http to %s: notices carry the actions' arguments; use https, or http only to "+
			"this machine or a private address", redact(cfg.URL), u.Hostname())
	}
	if len(cfg.Secrets) == 0 {
		return nil, errors.New("secret: a webhook channel needs a signing secret (whsec_…)")
	}
	c := &Channel{url: cfg.URL, headers: cfg.Headers, client: cfg.Client, now: cfg.Now}
	for i, s := range cfg.Secrets {
		if err := CheckSecret(s); err != nil {
			return nil, fmt.Errorf("secret %d: %w", i+1, err)
		}
		w, err := standardwebhooks.NewWebhook(s)
		if err != nil {
			return nil, fmt.Errorf("secret %d: %w", i+1, err)
		}
		c.signers = append(c.signers, w)
	}
	for k := range cfg.Headers {
		switch strings.ToLower(k) {
		case standardwebhooks.HeaderWebhookID, standardwebhooks.HeaderWebhookSignature, standardwebhooks.HeaderWebhookTimestamp,
			"content-type", "content-length", "host":
			return nil, fmt.Errorf("headers: %s is set by Airlock", k)
		}
	}
	if c.client == nil {
		c.client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if c.now == nil {
		c.now = time.Now
	}
	return c, nil
}

// CheckSecret checks a Standard Webhooks secret: "whsec_" and the base64
// of at least MinSecretBytes bytes. Its message never holds the secret.
func CheckSecret(s string) error {
	b64, ok := strings.CutPrefix(s, "whsec_")
	if !ok {
		return errors.New(`a signing secret starts with "whsec_" (then base64)`)
	}
	key, err := standardwebhooks.NewWebhook(s)
	if err != nil || key == nil {
		return errors.New("the part after whsec_ is not base64")
	}
	if n := len(b64) * 3 / 4; n < MinSecretBytes {
		return fmt.Errorf("the key is %d bytes; use at least %d (openssl rand -base64 32)", n, MinSecretBytes)
	}
	return nil
}

// Body is the JSON a receiver gets.
type Body struct {
	// Type is the notice's kind: decision, approval.requested,
	// approval.reminder, approval.resolved, approval.expired,
	// approval.cancelled, approval.escalated, grant.proposal_digest,
	// notification.test.
	Type string `json:"type"`
	// Timestamp is when the notice was queued (with its event).
	Timestamp time.Time `json:"timestamp"`
	Data      Data      `json:"data"`
}

// Data is a notice's content; Event is the payload of the audit event that
// caused it (the request itself for approval.requested, its end for the
// others, the decision for decision).
type Data struct {
	Key        string          `json:"key"` // also webhook-id
	Delivery   int64           `json:"delivery"`
	Channel    string          `json:"channel"`
	Subject    string          `json:"subject"`
	Agent      string          `json:"agent,omitempty"`
	Recipients []string        `json:"recipients,omitempty"`
	ApprovalID string          `json:"approval_id,omitempty"`
	EventSeq   int64           `json:"event_seq,omitempty"`
	Event      json.RawMessage `json:"event,omitempty"`
	Link       string          `json:"link,omitempty"`
}

// NewBody returns the body of delivery d: the same bytes on every attempt.
func NewBody(d *notify.Delivery) Body {
	return Body{Type: d.Kind, Timestamp: d.Created.UTC(), Data: Data{
		Key: d.Key, Delivery: d.ID, Channel: d.Channel, Subject: d.Subject, Agent: d.Agent,
		Recipients: d.Recipients, ApprovalID: d.ApprovalID, EventSeq: d.EventSeq, Event: d.Payload, Link: d.Link,
	}}
}

// Deliver posts d, signed. A 2xx answer delivers it; anything else (or no
// answer) fails the attempt. It keeps no ref.
func (c *Channel) Deliver(ctx context.Context, d *notify.Delivery) (string, error) {
	body, err := json.Marshal(NewBody(d))
	if err != nil {
		return "", notify.Permanent(fmt.Errorf("encode: %w", err))
	}
	ts := c.now()
	sigs := make([]string, len(c.signers))
	for i, s := range c.signers {
		if sigs[i], err = s.Sign(d.Key, ts, body); err != nil {
			return "", notify.Permanent(fmt.Errorf("sign: %w", err))
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return "", notify.Permanent(err)
	}
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Airlock-Webhooks/1")
	req.Header.Set(standardwebhooks.HeaderWebhookID, d.Key)
	req.Header.Set(standardwebhooks.HeaderWebhookTimestamp, fmt.Sprint(ts.Unix()))
	req.Header.Set(standardwebhooks.HeaderWebhookSignature, strings.Join(sigs, " "))
	resp, err := c.client.Do(req)
	if err != nil {
		// A *url.Error repeats the whole URL, query included, which may
		// hold a credential: keep only its cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return "", fmt.Errorf("POST %s: %w", redact(c.url), err)
	}
	defer resp.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		msg := strings.TrimSpace(string(snippet))
		if msg != "" {
			msg = ": " + msg
		}
		return "", fmt.Errorf("POST %s: %s%s", redact(c.url), resp.Status, msg)
	}
	return "", nil
}

// nearby reports whether host is this machine or a private address, where
// plain http may be the operator's choice.
func nearby(host string) bool {
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && (ip.IsLoopback() || ip.IsPrivate())
}

// redact drops a URL's query and user info: they may hold credentials.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "the webhook URL"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

var _ notify.Channel = (*Channel)(nil)
