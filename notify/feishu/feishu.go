// Package feishu delivers Airlock's notices to Feishu (飞书) or Lark, and
// lets the people who see a request approve or reject it from the card.
//
// Notices are interactive cards sent by a custom app's bot; the clicks on
// a card's buttons arrive at Channel.Handler.
//
// # Setup
//
//  1. Create a custom app (企业自建应用) in the developer console
//     (https://open.feishu.cn/app, or https://open.larksuite.com/app for
//     Lark) and enable its bot (应用能力 > 机器人). Its App ID and App Secret
//     are Config.AppID and Config.AppSecret.
//  2. Grant the app the permissions im:message and im:message:send_as_bot
//     (权限管理), then publish a version so they take effect.
//  3. To post to a group chat, add the bot to the chat and set Config.ChatID
//     to the chat's oc_… ID. Without a ChatID the bot writes to each mapped
//     person directly, by open_id; they must be within the app's
//     availability (可用范围).
//  4. Under 事件与回调 > 加密策略, copy the Verification Token
//     (Config.VerificationToken) and, recommended, set an Encrypt Key
//     (Config.EncryptKey): callbacks are then encrypted and signed with the
//     key, and the handler refuses any callback not signed with it; the
//     Verification Token then proves nothing but the console's URL
//     challenge.
//  5. Under 事件与回调 > 回调配置, choose "send callbacks to the developer
//     server", enter the URL Handler is mounted at (e.g.
//     https://airlock.example.com/callbacks/team-feishu: airlock serve mounts it at /callbacks/<channel name>) and add the callback
//     card.action.trigger (卡片回传交互). The console verifies the URL with a
//     challenge the handler answers. Callbacks through the older bot
//     setting (消息卡片请求网址) are signed with the Verification Token
//     only, so they are accepted only when no Encrypt Key is set (airlock
//     serve always sets one).
//  6. Map each reviewer's open_id to their Airlock name in the channel's
//     users: a click from anyone unmapped, from an agent, or from the
//     person who asked for the action is refused and audited.
//
// # What it sends
//
// A request that waits is a card with its facts (as the inbox shows them,
// hidden characters written as escapes), its arguments in a code block,
// Approve and Reject buttons that carry the request's ID and action hash,
// and a link to the inbox. When the request ends (a click here, the inbox,
// the CLI, its deadline), the card is updated in place: the buttons give
// way to the outcome, and the agent's owner and the requester are told
// directly. Reminders reply to the card. Every text an agent controls is
// sent as plain_text or inside a code block, never as lark_md, so it cannot
// carry links or mentions.
//
// Deliveries are at least once: each message carries a uuid derived from
// the delivery's idempotency key, with which Feishu sends at most one
// message an hour.
//
// # Documentation checked
//
// The Open Platform pages this package follows (open.feishu.cn; the same
// paths serve Lark on open.larksuite.com):
//
//   - tenant_access_token for a self-built app, its 2-hour life, a new one
//     when under 30 minutes are left:
//     https://open.feishu.cn/document/ukTMukTMukTM/ukDNz4SO0MjL5QzM/auth-v3/auth/tenant_access_token_internal
//   - sending a message (receive_id_type, msg_type, content as a JSON
//     string, uuid of at most 50 characters deduplicating sends for an
//     hour): https://open.feishu.cn/document/uAjLw4CM/ukTMukTMukTM/reference/im-v1/message/create
//   - updating a sent card (PATCH with content; update_multi declared on the
//     card before and after; 14 days; 5 QPS a message; permission
//     im:message or im:message:send_as_bot):
//     https://open.feishu.cn/document/uAjLw4CM/ukTMukTMukTM/reference/im-v1/message/patch
//   - error codes: https://open.feishu.cn/document/server-docs/api-call-guide/generic-error-code
//     and https://open.feishu.cn/document/uAjLw4CM/ugTN1YjL4UTN24CO1UjN/trouble-shooting/how-to-resolve-error-230001
//   - callbacks to a developer server, Encrypt Key and Verification Token:
//     https://open.feishu.cn/document/uAjLw4CM/ukTMukTMukTM/event-subscription-guide/callback-subscription/step-1-choose-a-subscription-mode/send-callbacks-to-developers-server
//   - receiving callbacks (answer within 3 s; signature: sha256 of
//     X-Lark-Request-Timestamp + X-Lark-Request-Nonce + Encrypt Key + raw
//     body, hex; AES-256-CBC with key SHA-256(Encrypt Key), the IV the first
//     16 bytes of the base64-decoded data, PKCS#7 padding; the URL
//     verification challenge, which is not signed):
//     https://open.feishu.cn/document/uAjLw4CM/ukTMukTMukTM/event-subscription-guide/callback-subscription/receive-and-handle-callbacks
//     and https://open.feishu.cn/document/ukTMukTMukTM/uYDNxYjL2QTM24iN0EjN/event-subscription-configure-/encrypt-key-encryption-configuration-case
//   - card.action.trigger (卡片回传交互) and its answer, a toast and a card
//     of type raw: https://open.feishu.cn/document/uAjLw4CM/ukzMukzMukzM/feishu-cards/card-callback-communication,
//     with its field names as the official Go SDK models them
//     (github.com/larksuite/oapi-sdk-go/v3, event/dispatcher/callback/model.go);
//     https://open.feishu.cn/document/uAjLw4CM/ukzMukzMukzM/feishu-cards/handle-card-callbacks
//   - the older card callback (open_id, action.value as an object or a
//     string, open_message_id) and its URL verification:
//     https://open.larksuite.com/document/ukTMukTMukTM/uYzM3QjL2MzN04iNzcDN/configuring-card-callbacks/card-callback-structure
//     and https://open.feishu.cn/document/ukTMukTMukTM/uYzMxEjL2MTMx4iNzETM;
//     its signature (sha1 of timestamp + nonce + Verification Token + body)
//     as the official Go SDK checks it (card/card.go).
//   - card JSON 1.0 (markdown with code blocks, lark_md and plain_text
//     text, header templates):
//     https://open.feishu.cn/document/uAjLw4CM/ukzMukzMukzM/feishu-cards/card-components/content-components/rich-text
//     and https://open.feishu.cn/document/ukTMukTMukTM/uADOwUjLwgDM14CM4ATN
package feishu

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/notify"
)

// Config configures a Feishu or Lark channel.
type Config struct {
	// AppID and AppSecret are the custom app's credentials (凭证与基础信息):
	// cli_… and its secret. They get the tenant_access_token.
	AppID     string
	AppSecret string
	// VerificationToken is the app's Verification Token (事件与回调 >
	// 加密策略). It answers the console's URL verification; without an
	// EncryptKey it also proves callbacks (in a schema 2.0 header, or as
	// the older callbacks' sha1 signature). With an EncryptKey it proves
	// no callback.
	VerificationToken string
	// EncryptKey is the app's Encrypt Key, "" when none is set. With one,
	// Feishu encrypts callbacks and signs them (X-Lark-Signature), and the
	// handler refuses any callback without a fresh signature made with it,
	// however it carries or is signed with the VerificationToken.
	EncryptKey string
	// ChatID is the group chat (oc_…) the bot posts to. "": each mapped
	// recipient of a notice gets a direct message, by open_id.
	ChatID string
	// BaseURL is the Open Platform's address: https://open.feishu.cn
	// (default) for Feishu, https://open.larksuite.com for Lark.
	BaseURL string
	// InboxURL is the web inbox's base URL (like https://airlock.example.com)
	// for the inbox link on a card a click updates; "" for none. Deliveries
	// carry their own link.
	InboxURL string
	// MaxArgs cuts the arguments shown on a card, in bytes (default
	// DefaultMaxArgs, at most MaxMaxArgs: a card may not exceed 30 KB); the
	// whole is behind the inbox link.
	MaxArgs int
	// Client sends the API calls; nil: a client with a 15 s timeout that
	// does not follow redirects.
	Client *http.Client
	// Logger records clicks that could not be resolved; nil: discard.
	Logger *slog.Logger
}

// Limits of Config.MaxArgs.
const (
	DefaultMaxArgs = 2000
	MaxMaxArgs     = 16000
)

// DefaultBaseURL is Feishu's Open Platform; Lark's is https://open.larksuite.com.
const DefaultBaseURL = "https://open.feishu.cn"

// Channel sends cards through one Feishu app, and answers its card
// callbacks (Handler).
type Channel struct {
	appID, appSecret  string
	verificationToken string
	encryptKey        string
	chatID            string
	base              string
	inbox             string
	maxArgs           int
	client            *http.Client
	log               *slog.Logger
	// now is the clock of token expiry and callback freshness.
	now func() time.Time

	mu      sync.Mutex // guards the cached token; held while one is fetched
	token   string
	expires time.Time
}

// ids are the shapes of the Feishu IDs the channel is configured with and
// writes into cards (open_id ou_…, chat_id oc_…).
var ids = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

// openID is a Feishu user's open_id.
var openID = regexp.MustCompile(`^ou_[0-9a-zA-Z]{8,}$`)

// CheckUserID checks a user ID a configuration maps to an Airlock
// identity: an open_id (ou_…).
func CheckUserID(id string) error {
	if !openID.MatchString(id) {
		return fmt.Errorf("%q is not a Feishu open_id (ou_…)", id)
	}
	return nil
}

// CheckCallbacks says what keeps cfg from taking people's clicks safely:
// without the app's Encrypt Key a callback carries only the verification
// token, which anyone who saw one callback could replay to resolve
// requests. A deployment's configuration asks it of every channel; New
// does not, so that a test may speak the older, token-only protocol.
func (cfg Config) CheckCallbacks() error {
	if cfg.EncryptKey == "" {
		return errors.New("a Feishu channel needs encrypt_key (or encrypt_key_file): without it a callback carries only the verification token, " +
			"which anyone who saw one callback could replay to resolve requests")
	}
	return nil
}

// New checks cfg and returns its channel. Its errors never hold a secret.
func New(cfg Config) (*Channel, error) {
	switch {
	case cfg.AppID == "":
		return nil, errors.New("app_id: a Feishu channel needs its app's App ID (cli_…)")
	case cfg.AppSecret == "":
		return nil, errors.New("app_secret: a Feishu channel needs its app's App Secret")
	case cfg.VerificationToken == "":
		return nil, errors.New("verification_token: a Feishu channel needs its app's Verification Token (事件与回调 > 加密策略)")
	case cfg.ChatID != "" && (!strings.HasPrefix(cfg.ChatID, "oc_") || !ids.MatchString(cfg.ChatID)):
		return nil, fmt.Errorf("chat_id: %q is not a chat ID (oc_…)", cfg.ChatID)
	case cfg.MaxArgs < 0 || cfg.MaxArgs > MaxMaxArgs:
		return nil, fmt.Errorf("max_args: %d is not between 0 (default %d) and %d bytes", cfg.MaxArgs, DefaultMaxArgs, MaxMaxArgs)
	}
	base := cfg.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("base_url: %q is not an absolute http(s) URL without query (like %s)", base, DefaultBaseURL)
	}
	if cfg.InboxURL != "" {
		if err := notify.ValidateBaseURL(cfg.InboxURL); err != nil {
			return nil, fmt.Errorf("inbox_url: %w", err)
		}
	}
	c := &Channel{
		appID: cfg.AppID, appSecret: cfg.AppSecret, verificationToken: cfg.VerificationToken, encryptKey: cfg.EncryptKey,
		chatID: cfg.ChatID, base: strings.TrimRight(base, "/"), inbox: cfg.InboxURL, maxArgs: cfg.MaxArgs,
		client: cfg.Client, log: cfg.Logger, now: time.Now,
	}
	if c.maxArgs == 0 {
		c.maxArgs = DefaultMaxArgs
	}
	if c.client == nil {
		c.client = &http.Client{Timeout: 15 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	return c, nil
}

// Deliver sends d as a card and returns the message IDs it sent, joined by
// "," (one for a chat, one a person for direct messages). The end of a
// request updates its card (d.Shown) in place and tells d.Users; a
// reminder replies to the card. Rejected credentials, missing permissions
// and a bot outside the chat are permanent errors; rate limits and server
// errors are retried.
func (c *Channel) Deliver(ctx context.Context, d *notify.Delivery) (string, error) {
	switch d.Kind {
	case airlock.EventApprovalRequested, airlock.EventApprovalEscalated, airlock.EventDecision, airlock.NoticeTest:
		return c.post(ctx, d.Key, c.targets(d), c.card(d, c.mentions(d)))
	case airlock.EventApprovalResolved, airlock.EventApprovalExpired, airlock.EventApprovalCancelled:
		return c.settle(ctx, d)
	case airlock.NoticeReminder:
		return c.remind(ctx, d)
	}
	return "", notify.Permanent(fmt.Errorf("feishu: no card for notices of kind %q", d.Kind))
}

// target is who a message goes to: a chat, or a person.
type target struct{ idType, id string }

// targets are where a new message of d goes: the chat, or else each mapped
// recipient.
func (c *Channel) targets(d *notify.Delivery) []target {
	if c.chatID != "" {
		return []target{{"chat_id", c.chatID}}
	}
	return people(d.Users)
}

// people are direct-message targets for open_ids.
func people(openIDs []string) []target {
	var ts []target
	for _, id := range openIDs {
		if ids.MatchString(id) {
			ts = append(ts, target{"open_id", id})
		}
	}
	return ts
}

// mentions are the open_ids a card in the chat mentions: the people it is
// for. Direct messages mention nobody.
func (c *Channel) mentions(d *notify.Delivery) []string {
	if c.chatID == "" {
		return nil
	}
	var out []string
	for _, id := range d.Users {
		if ids.MatchString(id) {
			out = append(out, id)
		}
	}
	return out
}

// post sends card to each target and returns the message IDs joined by ",".
// A retried delivery sends the same uuids: Feishu sends each message once.
func (c *Channel) post(ctx context.Context, key string, to []target, card []byte) (string, error) {
	if len(to) == 0 {
		return "", notify.Permanent(errors.New("feishu: nobody to send to: no chat_id is configured and no recipient of the notice is mapped to an open_id"))
	}
	refs := make([]string, 0, len(to))
	for _, t := range to {
		id, err := c.create(ctx, t, dedup(key, t.id), card)
		if err != nil {
			return "", err
		}
		refs = append(refs, id)
	}
	return strings.Join(refs, ","), nil
}

// settle shows how a request ended: its card (d.Shown) is updated in place,
// or a new card is sent when there is none (or it can no longer be
// updated), and the people the notice is for are told directly.
func (c *Channel) settle(ctx context.Context, d *notify.Delivery) (string, error) {
	card := c.card(d, nil)
	shown := split(d.Shown)
	fresh := len(shown) == 0
	for _, id := range shown {
		if err := c.patch(ctx, id, card); err != nil {
			if !notify.IsPermanent(err) {
				return "", err
			}
			// Recalled, older than 14 days, or not ours: say it anew.
			fresh = true
			break
		}
	}
	ref := d.Shown
	if fresh {
		var err error
		if ref, err = c.post(ctx, d.Key, c.targets(d), card); err != nil {
			return "", err
		}
	}
	if fresh && c.chatID == "" {
		return ref, nil // the new messages went to d.Users already
	}
	if told := people(d.Users); len(told) > 0 {
		if _, err := c.post(ctx, d.Key+"/told", told, card); err != nil {
			return "", err
		}
	}
	return ref, nil
}

// remind replies to the request's card (mentioning its reviewers in a
// chat), or sends the reminder anew when there is no card to reply to.
func (c *Channel) remind(ctx context.Context, d *notify.Delivery) (string, error) {
	card := c.reminder(d, c.mentions(d))
	var refs []string
	for _, id := range split(d.Shown) {
		ref, err := c.reply(ctx, id, dedup(d.Key, id), card)
		if notify.IsPermanent(err) {
			refs = nil
			break
		}
		if err != nil {
			return "", err
		}
		refs = append(refs, ref)
	}
	if len(refs) == 0 {
		return c.post(ctx, d.Key, c.targets(d), card)
	}
	return strings.Join(refs, ","), nil
}

// dedup is the uuid Feishu deduplicates a send by (at most 50 characters):
// the same for every attempt of a delivery to one target.
func dedup(key, to string) string {
	sum := sha256.Sum256([]byte(key + "\x00" + to))
	return "airlock-" + hex.EncodeToString(sum[:])[:40]
}

// split returns the message IDs of a ref.
func split(ref string) []string {
	var out []string
	for _, id := range strings.Split(ref, ",") {
		if id = strings.TrimSpace(id); id != "" {
			out = append(out, id)
		}
	}
	return out
}

var _ notify.Channel = (*Channel)(nil)
