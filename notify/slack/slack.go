// Package slack delivers Airlock's notices to Slack and lets reviewers
// approve or reject requests with a click, recorded with surface "slack".
//
// A request that waits is posted as a Block Kit message: the facts a
// reviewer judges by (agent, tool, class, risk tier, deadline, the
// arguments with hidden characters written as escapes, exactly as the web
// inbox shows them) and Approve and Reject buttons bound to the request's
// action hash. Once the request is resolved anywhere (a click, the inbox,
// the CLI, another channel) or expires, the message is updated in place:
// the buttons give way to the outcome, and the owner and the requester are
// told in its thread. Reminders are replies in the same thread.
//
// # Setting up the Slack app
//
//  1. Create an app at https://api.slack.com/apps. Under OAuth &
//     Permissions add the bot scopes chat:write (post and update messages,
//     ephemeral answers) and, for direct messages (no Channel
//     configured), im:write. Install it and copy the Bot User OAuth Token
//     (xoxb-…) into Config.Token.
//  2. With a Channel, invite the app to it (/invite @yourapp): it must be a
//     member to post, update and answer there.
//  3. Clicks reach Airlock one of two ways:
//     - Interactivity & Shortcuts → Request URL: the public URL at which
//     Handler is mounted (airlock serve mounts it at /callbacks/<channel name>, like https://airlock.example.com/callbacks/team-slack).
//     Copy Basic Information → Signing Secret into Config.SigningSecret:
//     every request is verified with it (v0 signatures, five-minute window).
//     - Socket Mode, for a server Slack cannot reach: enable it, create an
//     app-level token with the connections:write scope (xapp-…) into
//     Config.AppToken, and run RunSocketMode. The websocket is
//     authenticated by that token; no signing secret is needed.
//  4. Map the Slack user IDs of the people who may click to their Airlock
//     identities (notify.Spec.Users, notify.Clicks.Users): a click from a
//     user not mapped, from the agent, or from the person who requested
//     the action is refused and audited.
package slack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	slackgo "github.com/slack-go/slack"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/notify"
)

// Config configures a Slack channel.
type Config struct {
	// Token is the app's bot token (xoxb-…), with the chat:write scope
	// (and im:write for direct messages).
	Token string
	// SigningSecret verifies the requests Slack sends to Handler (Basic
	// Information → Signing Secret). Required unless clicks come only
	// through Socket Mode (AppToken).
	SigningSecret string
	// Channel is the room requests are posted to: a channel name
	// ("#agent-approvals") or ID ("C0123456789"). Empty: each notice is
	// sent as a direct message to each of its recipients that the channel
	// maps (notify.Delivery.Users).
	Channel string
	// AppToken is an app-level token (xapp-…, scope connections:write)
	// for Socket Mode (RunSocketMode); empty: no Socket Mode.
	AppToken string
	// APIURL is the base URL of the Web API; empty: https://slack.com/api/
	// (tests point it at a fake).
	APIURL string
	// MaxArgs is how many bytes of a request's arguments are shown in the
	// message (at most MaxArgsLimit; 0: DefaultMaxArgs); longer arguments
	// are clipped, with a link to the whole request in the inbox.
	MaxArgs int
	// Client sends the Web API requests; nil: an http.Client with a
	// 30-second timeout (each call is also bounded by its context).
	Client *http.Client
	// Logger records what happens after a click has been answered
	// (message updates, ephemeral answers) and Socket Mode's connection;
	// nil: discard.
	Logger *slog.Logger
}

// Limits of the arguments shown in a message.
const (
	DefaultMaxArgs = 2500
	// MaxArgsLimit keeps the arguments, once escaped for Slack, within
	// one section block's 3000 characters.
	MaxArgsLimit = 2900
)

// defaultTimeout bounds a Web API call of the default client.
const defaultTimeout = 30 * time.Second

// Action IDs of the message's buttons.
const (
	ActionApprove = "airlock.approve"
	ActionReject  = "airlock.reject"
	// ActionApproveRemember approves and remembers: a standing grant of
	// the action's shape for 7 days (docs/POLICY.md, "Grants").
	ActionApproveRemember = "airlock.approve_remember"
	// ActionInbox is the "View in inbox" link button: Slack reports its
	// clicks too; they are acknowledged and ignored.
	ActionInbox = "airlock.inbox"
	// ActionEdit ("Edit in inbox") and ActionPasskey ("Approve with your
	// passkey") are link buttons to the request's page too: an edit takes
	// the inbox's editor, a passkey the reviewer's own device.
	ActionEdit    = "airlock.edit"
	ActionPasskey = "airlock.passkey"
)

// Channel posts notices to Slack and answers its clicks.
type Channel struct {
	api           *slackgo.Client
	token         string
	appToken      string
	signingSecret string
	room          string
	apiURL        string
	maxArgs       int
	client        *http.Client
	logger        *slog.Logger
	// followUps are the message updates and ephemeral answers still in
	// flight after clicks were answered.
	followUps sync.WaitGroup
}

var (
	roomName = regexp.MustCompile(`^#[^\s#,/<>&|@]{1,80}$`)
	roomID   = regexp.MustCompile(`^[CGD][A-Z0-9]{6,}$`)
	// userID is a Slack user ID, the only text put inside a mention.
	userID = regexp.MustCompile(`^[UW][A-Z0-9]{2,}$`)
)

// CheckUserID checks a user ID a configuration maps to an Airlock
// identity: the member ID in a profile's menu.
func CheckUserID(id string) error {
	if !userID.MatchString(id) {
		return fmt.Errorf("%q is not a Slack user ID (like U024BE7LH: the member ID in a profile's menu)", id)
	}
	return nil
}

// New checks cfg and returns its channel. Its errors never hold a token
// or the signing secret.
func New(cfg Config) (*Channel, error) {
	if !strings.HasPrefix(cfg.Token, "xoxb-") || len(cfg.Token) <= len("xoxb-") {
		return nil, errors.New("token: a Slack bot token (xoxb-…) is required: OAuth & Permissions → Bot User OAuth Token")
	}
	if cfg.AppToken != "" && (!strings.HasPrefix(cfg.AppToken, "xapp-") || len(cfg.AppToken) <= len("xapp-")) {
		return nil, errors.New("app_token: a Socket Mode token is an app-level token starting with xapp-")
	}
	if cfg.SigningSecret == "" && cfg.AppToken == "" {
		return nil, errors.New("signing_secret: clicks reach Airlock through the interactivity request URL, verified with the app's signing secret, " +
			"or through Socket Mode with an app-level token (app_token, xapp-…): configure one of them")
	}
	if cfg.Channel != "" && !roomName.MatchString(cfg.Channel) && !roomID.MatchString(cfg.Channel) {
		return nil, fmt.Errorf("channel: %q is neither a channel name (#agent-approvals) nor a channel ID (C0123456789)", cfg.Channel)
	}
	apiURL := cfg.APIURL
	if apiURL == "" {
		apiURL = slackgo.APIURL
	}
	if u, err := url.Parse(apiURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" {
		return nil, fmt.Errorf("api_url: %q is not an absolute http(s) URL without query", apiURL)
	}
	if !strings.HasSuffix(apiURL, "/") {
		apiURL += "/"
	}
	switch {
	case cfg.MaxArgs < 0 || cfg.MaxArgs > MaxArgsLimit:
		return nil, fmt.Errorf("max_args: %d is not between 0 (the default, %d) and %d bytes", cfg.MaxArgs, DefaultMaxArgs, MaxArgsLimit)
	case cfg.MaxArgs == 0:
		cfg.MaxArgs = DefaultMaxArgs
	}
	c := &Channel{
		token: cfg.Token, appToken: cfg.AppToken, signingSecret: cfg.SigningSecret, room: cfg.Channel,
		apiURL: apiURL, maxArgs: cfg.MaxArgs, client: cfg.Client, logger: cfg.Logger,
	}
	if c.client == nil {
		c.client = &http.Client{Timeout: defaultTimeout}
	}
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}
	c.api = c.newAPI()
	return c, nil
}

// newAPI returns a Web API client (no retries of its own: the notifier
// retries deliveries, with backoff).
func (c *Channel) newAPI(opts ...slackgo.Option) *slackgo.Client {
	return slackgo.New(c.token, append([]slackgo.Option{
		slackgo.OptionAPIURL(c.apiURL), slackgo.OptionHTTPClient(c.client),
		slackgo.OptionLog(log.New(io.Discard, "", 0)),
	}, opts...)...)
}

// Close waits for the message updates and ephemeral answers still in
// flight after answered clicks (each bounded by a timeout). Call it once
// the server has stopped serving Handler and RunSocketMode has returned.
func (c *Channel) Close() error {
	c.followUps.Wait()
	return nil
}

// Deliver posts or updates the Slack messages of notice d, and returns the
// messages it posted as "channel/ts" (several joined by ","): for a
// request, the messages that later notices update in place.
//
//   - approval.requested: the request with Approve and Reject buttons (or,
//     if it was settled before it could be shown, its outcome);
//   - approval.reminder: a reply in the request's thread mentioning its
//     reviewers (a new message when the request was never shown);
//   - approval.escalated: the request, with its buttons, for the reviewers
//     the escalation adds;
//   - approval.resolved, .expired, .cancelled: each message of the request
//     is updated in place with the outcome, and the people told (the owner,
//     the requester) are mentioned in its thread;
//   - decision and notification.test: a message.
//
// Slack's refusals that no retry can help (a revoked token, a channel not
// found, the app not in the channel, …) are notify.Permanent; a rate
// limit is an ordinary error, retried later.
func (c *Channel) Deliver(ctx context.Context, d *notify.Delivery) (string, error) {
	switch {
	case d.Approval == nil:
		return c.tell(ctx, d)
	case d.Kind == airlock.EventApprovalRequested, d.Kind == airlock.EventApprovalEscalated:
		// An escalation shows the request to the reviewers it adds.
		return c.request(ctx, d)
	case d.Kind == airlock.NoticeReminder:
		return c.remind(ctx, d)
	case d.Kind == airlock.EventApprovalResolved, d.Kind == airlock.EventApprovalExpired, d.Kind == airlock.EventApprovalCancelled:
		return c.settle(ctx, d)
	}
	return c.tell(ctx, d)
}

// request posts the request where it is shown: the room, or each
// reviewer's direct messages.
func (c *Channel) request(ctx context.Context, d *notify.Delivery) (string, error) {
	to, err := c.targets(d)
	if err != nil {
		return "", err
	}
	refs, err := c.postAll(ctx, to, c.approvalMessage(d, true, c.mentions(d.Users)), "")
	return joinRefs(refs), err
}

// remind replies in the request's threads, or shows the request anew when
// it never was.
func (c *Channel) remind(ctx context.Context, d *notify.Delivery) (string, error) {
	shown := parseRefs(d.Shown)
	if len(shown) == 0 {
		to, err := c.targets(d)
		if err != nil {
			return "", err
		}
		refs, err := c.postAll(ctx, to, c.approvalMessage(d, true, c.mentions(d.Users)), "")
		return joinRefs(refs), err
	}
	text := "⏰ Reminder: this request still waits for a decision; its deadline is " + slackDate(d.Approval.Expires) + "."
	if c.room != "" {
		// One thread in the room: mention the reviewers there.
		shown = shown[:1]
		if m := c.mentions(d.Users); m != "" {
			text = m + " " + text
		}
	}
	var refs []ref
	for _, s := range shown {
		r, err := c.post(ctx, s.channel, message{text: text}, s.ts)
		if err != nil {
			return joinRefs(refs), err
		}
		refs = append(refs, r)
	}
	return joinRefs(refs), nil
}

// settle updates each message of the request with its outcome, then tells
// the notice's people: in the room's thread, or by direct message.
func (c *Channel) settle(ctx context.Context, d *notify.Delivery) (string, error) {
	shown := parseRefs(d.Shown)
	msg := c.approvalMessage(d, false, "")
	// Updates first: they are idempotent, so a retry after a failed reply
	// repeats nothing visible.
	for _, s := range shown {
		if err := c.update(ctx, s, msg); err != nil {
			return "", err
		}
	}
	switch {
	case len(shown) == 0 && c.room == "" && len(c.users(d.Users)) == 0:
		return "", nil // nobody to tell, nothing shown
	case len(shown) == 0:
		to, err := c.targets(d)
		if err != nil {
			return "", err
		}
		refs, err := c.postAll(ctx, to, c.approvalMessage(d, false, c.mentions(d.Users)), "")
		return joinRefs(refs), err
	case len(c.users(d.Users)) == 0:
		return "", nil
	case c.room != "":
		text := c.mentions(d.Users) + " " + outcomeLine(d.Approval, notify.Describe(d, 0).Outcome)
		r, err := c.post(ctx, shown[0].channel, message{text: text}, shown[0].ts)
		if err != nil {
			return "", err
		}
		return joinRefs([]ref{r}), nil
	}
	refs, err := c.postAll(ctx, c.users(d.Users), msg, "")
	return joinRefs(refs), err
}

// tell posts a notice of no request to show: a decision, a test.
func (c *Channel) tell(ctx context.Context, d *notify.Delivery) (string, error) {
	to, err := c.targets(d)
	if err != nil {
		return "", err
	}
	refs, err := c.postAll(ctx, to, c.noticeMessage(d, c.mentions(d.Users)), "")
	return joinRefs(refs), err
}

// targets returns where a new message of d goes: the room, or the direct
// messages of each recipient the channel maps.
func (c *Channel) targets(d *notify.Delivery) ([]string, error) {
	if c.room != "" {
		return []string{c.room}, nil
	}
	users := c.users(d.Users)
	if len(users) == 0 {
		return nil, notify.Permanent(fmt.Errorf("no Slack channel is configured and no recipient of this %s notice is mapped to a Slack user", d.Kind))
	}
	return users, nil
}

// users returns the well-formed Slack user IDs of ids.
func (c *Channel) users(ids []string) []string {
	var out []string
	for _, id := range ids {
		if userID.MatchString(id) {
			out = append(out, id)
		}
	}
	return out
}

// mentions returns "<@U1> <@U2>" for the users in a room; "" in direct
// messages, which reach their one person anyway.
func (c *Channel) mentions(ids []string) string {
	if c.room == "" {
		return ""
	}
	var m []string
	for _, id := range c.users(ids) {
		m = append(m, "<@"+id+">")
	}
	return strings.Join(m, " ")
}

// message is what a Slack message says: a fallback text (notifications,
// screen readers) and, optionally, its blocks.
type message struct {
	text   string
	blocks []slackgo.Block
}

func (m message) options() []slackgo.MsgOption {
	// The text is escaped where it is built: its mentions must stay live.
	opts := []slackgo.MsgOption{slackgo.MsgOptionText(m.text, false)}
	if len(m.blocks) > 0 {
		opts = append(opts, slackgo.MsgOptionBlocks(m.blocks...))
	}
	return opts
}

// ref is a posted message: its channel's ID and its timestamp.
type ref struct{ channel, ts string }

// parseRefs reads "C1/ts1,D2/ts2"; malformed parts are skipped (their
// messages cannot be updated; the outcome is posted anew instead).
func parseRefs(s string) []ref {
	var out []ref
	for part := range strings.SplitSeq(s, ",") {
		ch, ts, ok := strings.Cut(strings.TrimSpace(part), "/")
		if ok && ch != "" && ts != "" {
			out = append(out, ref{ch, ts})
		}
	}
	return out
}

func joinRefs(refs []ref) string {
	parts := make([]string, len(refs))
	for i, r := range refs {
		parts[i] = r.channel + "/" + r.ts
	}
	return strings.Join(parts, ",")
}

// postAll posts msg to each target. A retry after a partial failure posts
// again to the targets that succeeded: delivery is at least once.
func (c *Channel) postAll(ctx context.Context, to []string, msg message, thread string) ([]ref, error) {
	var refs []ref
	var errs []error
	permanent := true
	for _, t := range to {
		r, err := c.post(ctx, t, msg, thread)
		if err != nil {
			errs = append(errs, err)
			permanent = permanent && notify.IsPermanent(err)
			continue
		}
		refs = append(refs, r)
	}
	switch err := errors.Join(errs...); {
	case err == nil:
		return refs, nil
	case permanent:
		return refs, notify.Permanent(err)
	default:
		return refs, err
	}
}

// post calls chat.postMessage; thread is the parent's ts for a reply.
func (c *Channel) post(ctx context.Context, channel string, msg message, thread string) (ref, error) {
	opts := append(msg.options(), slackgo.MsgOptionDisableLinkUnfurl(), slackgo.MsgOptionDisableMediaUnfurl())
	if thread != "" {
		opts = append(opts, slackgo.MsgOptionTS(thread))
	}
	ch, ts, err := c.api.PostMessageContext(ctx, channel, opts...)
	if err != nil {
		return ref{}, apiError("chat.postMessage", err)
	}
	if ch == "" || ts == "" {
		return ref{}, errors.New("slack chat.postMessage: the answer names no channel or ts")
	}
	return ref{ch, ts}, nil
}

// update calls chat.update.
func (c *Channel) update(ctx context.Context, r ref, msg message) error {
	if _, _, _, err := c.api.UpdateMessageContext(ctx, r.channel, r.ts, msg.options()...); err != nil {
		return apiError("chat.update", err)
	}
	return nil
}

// ephemeral calls chat.postEphemeral: text only user sees.
func (c *Channel) ephemeral(ctx context.Context, channel, user, text string) error {
	if _, err := c.api.PostEphemeralContext(ctx, channel, user, slackgo.MsgOptionText(text, false)); err != nil {
		return apiError("chat.postEphemeral", err)
	}
	return nil
}

// permanentCodes are Slack's error codes that no retry can help: the
// token, the channel or the message must be fixed first.
var permanentCodes = map[string]bool{
	"invalid_auth": true, "not_authed": true, "account_inactive": true, "token_revoked": true, "token_expired": true,
	"no_permission": true, "missing_scope": true, "not_allowed_token_type": true, "ekm_access_denied": true,
	"channel_not_found": true, "not_in_channel": true, "is_archived": true, "user_not_found": true,
	"restricted_action": true, "invalid_blocks": true, "invalid_blocks_format": true, "msg_too_long": true,
	"no_text": true, "message_not_found": true, "cant_update_message": true, "edit_window_closed": true,
}

// apiError names the method and Slack's error code; it marks codes no
// retry can help Permanent. Tokens are sent in request bodies, never in
// URLs, so no error text holds one.
func apiError(method string, err error) error {
	var se slackgo.SlackErrorResponse
	var rl *slackgo.RateLimitedError
	var sc slackgo.StatusCodeError
	switch {
	case errors.As(err, &se):
		e := fmt.Errorf("slack %s: %s", method, se.Err)
		if permanentCodes[se.Err] {
			return notify.Permanent(e)
		}
		return e
	case errors.As(err, &rl):
		return fmt.Errorf("slack %s: rate limited (retry after %s)", method, rl.RetryAfter)
	case errors.As(err, &sc):
		return fmt.Errorf("slack %s: HTTP %s", method, sc.Status)
	}
	return fmt.Errorf("slack %s: %w", method, err)
}

var _ notify.Channel = (*Channel)(nil)
