package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/gate"
	"github.com/airlock-dev/airlock/notify"
	"github.com/airlock-dev/airlock/notify/email"
	"github.com/airlock-dev/airlock/notify/feishu"
	"github.com/airlock-dev/airlock/notify/slack"
	"github.com/airlock-dev/airlock/notify/webhook"
)

// NotificationsConfig sets how notices reach people (see
// docs/NOTIFICATIONS.md). Without channels nothing is delivered: the
// inbox still shows every request.
type NotificationsConfig struct {
	// InboxURL is the base URL people reach the web inbox at (like
	// https://airlock.example.com), for the links in messages. Default
	// none: messages carry no link.
	InboxURL string `yaml:"inbox_url"`
	// RemindBefore is how long before a request's deadline its reviewers
	// are reminded, through the channels that told them it waits. "0s"
	// turns reminders off. Default 10m.
	RemindBefore *Duration `yaml:"remind_before"`
	// Attempts is how many attempts a delivery gets before it is a dead
	// letter (visible in the inbox, retried by a person). Default 8.
	Attempts int `yaml:"attempts"`
	// FirstRetry is the wait after the first failed attempt; it doubles
	// with each next one, up to MaxRetry, jittered. Defaults 5s and 30m.
	FirstRetry Duration `yaml:"first_retry"`
	MaxRetry   Duration `yaml:"max_retry"`
	// Timeout bounds one attempt. Default 20s.
	Timeout Duration `yaml:"timeout"`
	// Channels are where notices go.
	Channels []ChannelConfig `yaml:"channels"`
}

// ChannelConfig is one channel. Name and type are required; the other
// settings are those of its type. Every secret is given in a file
// (*_file, preferred) or in the config (meant for ${ENV}), not both.
type ChannelConfig struct {
	// Name identifies the channel in policies (`notify: [name]`), in the
	// CLI, and in its callback URL (/callbacks/<name>).
	Name string `yaml:"name"`
	// Type is webhook, slack, feishu or email.
	Type string `yaml:"type"`
	// Events are the kinds of notice it carries: decision,
	// approval.requested, approval.reminder, approval.resolved,
	// approval.expired, approval.cancelled, grant.proposal_digest. Default
	// all.
	Events []string `yaml:"events"`
	// Users maps the channel's users (Slack user IDs, Feishu open_ids,
	// mail addresses) to Airlock identities: only they are told, and only
	// they may resolve from it. Not for webhooks.
	Users map[string]string `yaml:"users"`

	// webhook: URL and secret (whsec_…); several secrets, separated by
	// spaces, sign each body during a rotation (the new one first).
	URL        string            `yaml:"url"`
	Secret     Secret            `yaml:"secret"`
	SecretFile string            `yaml:"secret_file"`
	Headers    map[string]string `yaml:"headers"`

	// slack: the bot token (xoxb-…), the signing secret of the
	// interactivity callbacks, the room (a channel name or ID; none: direct
	// messages), and for Socket Mode the app-level token (xapp-…).
	Token             Secret `yaml:"token"`
	TokenFile         string `yaml:"token_file"`
	SigningSecret     Secret `yaml:"signing_secret"`
	SigningSecretFile string `yaml:"signing_secret_file"`
	Channel           string `yaml:"channel"`
	SocketMode        bool   `yaml:"socket_mode"`
	AppToken          Secret `yaml:"app_token"`
	AppTokenFile      string `yaml:"app_token_file"`

	// feishu: the app's credentials, the callback's verification token
	// and encrypt key, the room (an oc_… chat ID; none: direct messages),
	// and the API's base URL (https://open.larksuite.com for Lark).
	AppID                 string `yaml:"app_id"`
	AppSecret             Secret `yaml:"app_secret"`
	AppSecretFile         string `yaml:"app_secret_file"`
	VerificationToken     Secret `yaml:"verification_token"`
	VerificationTokenFile string `yaml:"verification_token_file"`
	EncryptKey            Secret `yaml:"encrypt_key"`
	EncryptKeyFile        string `yaml:"encrypt_key_file"`
	ChatID                string `yaml:"chat_id"`

	// APIURL is the provider API's base URL (slack, feishu): for a proxy
	// or a test server. Default the provider's.
	APIURL string `yaml:"api_url"`

	// email: the SMTP server, the login, the sender, and the transport
	// security: starttls (default), tls, or none (localhost only).
	Host         string `yaml:"host"`
	Port         int    `yaml:"port"`
	Username     string `yaml:"username"`
	Password     Secret `yaml:"password"`
	PasswordFile string `yaml:"password_file"`
	From         string `yaml:"from"`
	TLS          string `yaml:"tls"`
}

// Defaults of the notifications.
const (
	defaultRemindBefore = Duration(10 * time.Minute)
	defaultAttempts     = notify.DefaultAttempts
	defaultFirstRetry   = Duration(notify.DefaultFirstRetry)
	defaultMaxRetry     = Duration(notify.DefaultMaxRetry)
	defaultNotifyTime   = Duration(notify.DefaultTimeout)
)

func (n *NotificationsConfig) setDefaults() {
	if n.RemindBefore == nil {
		d := defaultRemindBefore
		n.RemindBefore = &d
	}
	n.Attempts = cmp.Or(n.Attempts, defaultAttempts)
	n.FirstRetry = cmp.Or(n.FirstRetry, defaultFirstRetry)
	n.MaxRetry = cmp.Or(n.MaxRetry, defaultMaxRetry)
	n.Timeout = cmp.Or(n.Timeout, defaultNotifyTime)
}

// secretField is one secret of a channel: given inline or in a file.
type secretField struct {
	key   string // the YAML key of the inline value
	value *Secret
	file  *string
}

func (ch *ChannelConfig) secrets() []secretField {
	return []secretField{
		{"secret", &ch.Secret, &ch.SecretFile},
		{"token", &ch.Token, &ch.TokenFile},
		{"signing_secret", &ch.SigningSecret, &ch.SigningSecretFile},
		{"app_token", &ch.AppToken, &ch.AppTokenFile},
		{"app_secret", &ch.AppSecret, &ch.AppSecretFile},
		{"verification_token", &ch.VerificationToken, &ch.VerificationTokenFile},
		{"encrypt_key", &ch.EncryptKey, &ch.EncryptKeyFile},
		{"password", &ch.Password, &ch.PasswordFile},
	}
}

// readChannelSecrets sets each channel secret from its *_file.
func (c *Config) readChannelSecrets() error {
	var errs []error
	for i := range c.Notifications.Channels {
		for _, s := range c.Notifications.Channels[i].secrets() {
			if *s.file == "" {
				continue
			}
			key := s.key + "_file"
			where := fmt.Sprintf("notifications.channels[%d].%s", i, key)
			if *s.value != "" {
				errs = append(errs, c.src.errorAt(where, fmt.Sprintf("give %s or %s, not both", key, s.key), "notifications", "channels", i, key))
				continue
			}
			b, err := os.ReadFile(*s.file)
			if err != nil {
				errs = append(errs, c.src.errorAt(where, fmt.Sprintf("cannot read the secret: %v", err), "notifications", "channels", i, key))
				continue
			}
			*s.value = Secret(strings.TrimSpace(string(b)))
			if *s.value == "" {
				errs = append(errs, c.src.errorAt(where, "the file is empty", "notifications", "channels", i, key))
			}
		}
	}
	return errors.Join(errs...)
}

// channelFields are the settings each type accepts, besides name, type,
// events and users.
var channelFields = map[string][]string{
	"webhook": {"url", "secret", "headers"},
	"slack":   {"token", "signing_secret", "channel", "socket_mode", "app_token", "api_url"},
	"feishu":  {"app_id", "app_secret", "verification_token", "encrypt_key", "chat_id", "api_url"},
	"email":   {"host", "port", "username", "password", "from", "tls"},
}

// set lists the type-specific settings a channel gives.
func (ch *ChannelConfig) set() []string {
	var out []string
	for _, f := range []struct {
		key string
		on  bool
	}{
		{"url", ch.URL != ""}, {"secret", ch.Secret != ""}, {"headers", len(ch.Headers) > 0},
		{"token", ch.Token != ""}, {"signing_secret", ch.SigningSecret != ""}, {"channel", ch.Channel != ""},
		{"socket_mode", ch.SocketMode}, {"app_token", ch.AppToken != ""}, {"api_url", ch.APIURL != ""},
		{"app_id", ch.AppID != ""}, {"app_secret", ch.AppSecret != ""}, {"verification_token", ch.VerificationToken != ""},
		{"encrypt_key", ch.EncryptKey != ""}, {"chat_id", ch.ChatID != ""},
		{"host", ch.Host != ""}, {"port", ch.Port != 0}, {"username", ch.Username != ""}, {"password", ch.Password != ""},
		{"from", ch.From != ""}, {"tls", ch.TLS != ""},
	} {
		if f.on {
			out = append(out, f.key)
		}
	}
	return out
}

// channels is what the configured channels make: the specs the router and
// the notifier use, the chat channels' callbacks by channel name, the
// Socket Mode connections to run, and what to close at shutdown.
type channels struct {
	specs     []*notify.Spec
	callbacks map[string]callback
	sockets   []socket
	closers   []func() error
}

// socket runs a chat connection that receives clicks (Slack's Socket
// Mode) until ctx ends.
type socket func(ctx context.Context, side clickSide) error

// built is one channel made from its configuration.
type built struct {
	spec     *notify.Spec
	callback callback
	socket   socket
	close    func() error
}

// validate reports every problem of the notifications settings, located.
func (n *NotificationsConfig) validate(src *configSource) []error {
	var errs []error
	bad := func(msg string, path ...any) {
		where := "notifications"
		for _, p := range path {
			switch p := p.(type) {
			case int:
				where += fmt.Sprintf("[%d]", p)
			default:
				where += fmt.Sprint(".", p)
			}
		}
		errs = append(errs, src.errorAt(where, msg, append([]any{"notifications"}, path...)...))
	}
	if n.InboxURL != "" {
		if err := notify.ValidateBaseURL(n.InboxURL); err != nil {
			bad(err.Error(), "inbox_url")
		}
	}
	if n.Attempts < 1 {
		bad(fmt.Sprintf("must be at least 1, not %d", n.Attempts), "attempts")
	}
	for _, d := range []struct {
		key string
		v   Duration
	}{{"first_retry", n.FirstRetry}, {"max_retry", n.MaxRetry}, {"timeout", n.Timeout}} {
		if d.v <= 0 {
			bad(fmt.Sprintf("must be positive, not %s", d.v), d.key)
		}
	}
	if n.RemindBefore != nil && *n.RemindBefore < 0 {
		bad("must not be negative", "remind_before")
	}
	names := map[string]int{}
	for i := range n.Channels {
		ch := &n.Channels[i]
		switch j, dup := names[ch.Name]; {
		case ch.Name == "":
			bad("a channel needs a name", "channels", i)
		case !validChannelName(ch.Name):
			bad(fmt.Sprintf("name %q: use letters, digits, '-', '_' and '.'", ch.Name), "channels", i, "name")
		case dup:
			bad(fmt.Sprintf("name %q is already channels[%d]", ch.Name, j), "channels", i, "name")
		default:
			names[ch.Name] = i
		}
		accepted, known := channelFields[ch.Type]
		if !known {
			bad(fmt.Sprintf("unknown type %q (valid: %s)", ch.Type, strings.Join(notify.Types, ", ")), "channels", i, "type")
			continue
		}
		for _, f := range ch.set() {
			if !slices.Contains(accepted, f) {
				bad(fmt.Sprintf("%s is not a setting of a %s channel (its settings: %s)", f, ch.Type, strings.Join(accepted, ", ")), "channels", i, f)
			}
		}
		for j, e := range ch.Events {
			if !slices.Contains(notify.Kinds, e) || e == "notification.test" {
				bad(fmt.Sprintf("unknown event %q (valid: %s)", e, strings.Join(notify.Kinds[:len(notify.Kinds)-1], ", ")), "channels", i, "events", j)
			}
		}
		if ch.Type == "webhook" && len(ch.Users) > 0 {
			bad("a webhook receives every notice of its events: it maps no users", "channels", i, "users")
		}
		for _, id := range slices.Sorted(maps.Keys(ch.Users)) {
			if msg := userIDProblem(ch.Type, id); msg != "" {
				bad(msg, "channels", i, "users", id)
			}
			if ch.Users[id] == "" {
				bad(fmt.Sprintf("%s maps to no Airlock identity", id), "channels", i, "users", id)
			}
		}
		if (ch.Type == "slack" && ch.Channel == "" || ch.Type == "feishu" && ch.ChatID == "" || ch.Type == "email") && len(ch.Users) == 0 {
			bad(fmt.Sprintf("a %s channel without a room writes to the people it maps, and users maps nobody: it would carry nothing", ch.Type), "channels", i)
		}
		if ch.Type == "feishu" {
			if err := ch.feishuConfig(n).CheckCallbacks(); err != nil {
				bad(err.Error(), "channels", i)
			}
		}
		if _, err := ch.build(n, slog.New(slog.DiscardHandler)); err != nil {
			bad(err.Error(), "channels", i)
		}
	}
	return errs
}

// userIDProblem says what is wrong with a channel's user ID, "" if nothing:
// each provider knows its own IDs.
func userIDProblem(typ, id string) string {
	check := map[string]func(string) error{"slack": slack.CheckUserID, "feishu": feishu.CheckUserID, "email": email.CheckUserID}[typ]
	if check == nil {
		return ""
	}
	if err := check(id); err != nil {
		return err.Error()
	}
	return ""
}

func validChannelName(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return len(s) <= 64
}

// callback makes a chat channel's callback handler, which resolves
// requests in the store for the people the channel maps.
type callback func(clickSide) http.Handler

// clickSide is what a chat channel's clicks act on: the store, and the
// engine's "approve and remember" (nil: none).
type clickSide struct {
	store    airlock.Store
	remember func(ctx context.Context, ap airlock.Approval, by string) (airlock.Grant, error)
}

// build makes the channel. Its errors name the setting at fault, never a
// secret.
func (ch *ChannelConfig) build(n *NotificationsConfig, logger *slog.Logger) (built, error) {
	spec := &notify.Spec{Name: ch.Name, Type: ch.Type, Events: ch.Events, Users: ch.Users}
	clicks := func(side clickSide, surface airlock.Surface) *notify.Clicks {
		return &notify.Clicks{Store: side.store, Channel: ch.Name, Surface: surface, Users: ch.Users, Path: "/callbacks/" + ch.Name,
			Remember: side.remember}
	}
	b := built{spec: spec}
	switch ch.Type {
	case "webhook":
		c, err := webhook.New(webhook.Config{URL: ch.URL, Secrets: strings.Fields(ch.Secret.Reveal()), Headers: ch.Headers})
		if err != nil {
			return b, err
		}
		spec.Everyone, spec.Channel = true, c
	case "email":
		c, err := email.New(email.Config{Host: ch.Host, Port: ch.Port, Username: ch.Username, Password: ch.Password.Reveal(),
			From: ch.From, TLS: ch.TLS, Timeout: time.Duration(n.Timeout)})
		if err != nil {
			return b, err
		}
		spec.Channel = c
	case "feishu":
		c, err := feishu.New(ch.feishuConfig(n))
		if err != nil {
			return b, err
		}
		spec.Channel, spec.Room, spec.Updates = c, ch.ChatID != "", true
		b.callback = func(side clickSide) http.Handler { return c.Handler(clicks(side, airlock.SurfaceFeishu)) }
	case "slack":
		if ch.SocketMode && ch.AppToken == "" {
			return b, errors.New("socket_mode: Socket Mode needs the app-level token (app_token or app_token_file, xapp-…)")
		}
		if !ch.SocketMode && ch.AppToken != "" {
			return b, errors.New("app_token: set socket_mode: true to receive clicks over Socket Mode, or remove the token")
		}
		c, err := slack.New(slack.Config{Token: ch.Token.Reveal(), SigningSecret: ch.SigningSecret.Reveal(), Channel: ch.Channel,
			AppToken: ch.AppToken.Reveal(), APIURL: ch.APIURL, Logger: logger.With("channel", ch.Name)})
		if err != nil {
			return b, err
		}
		spec.Channel, spec.Room, spec.Updates, b.close = c, ch.Channel != "", true, c.Close
		if ch.SigningSecret != "" {
			b.callback = func(side clickSide) http.Handler { return c.Handler(clicks(side, airlock.SurfaceSlack)) }
		}
		if ch.SocketMode {
			b.socket = func(ctx context.Context, side clickSide) error {
				return c.RunSocketMode(ctx, clicks(side, airlock.SurfaceSlack))
			}
		}
	default:
		return b, fmt.Errorf("%s channels are not available in this build", ch.Type)
	}
	return b, nil
}

// build makes every channel; the config is valid.
func (n *NotificationsConfig) build(logger *slog.Logger) (channels, error) {
	out := channels{callbacks: map[string]callback{}}
	for i := range n.Channels {
		b, err := n.Channels[i].build(n, logger)
		if err != nil {
			return out, fmt.Errorf("notifications.channels[%d]: %w", i, err)
		}
		out.specs = append(out.specs, b.spec)
		if b.callback != nil {
			out.callbacks[b.spec.Name] = b.callback
		}
		if b.socket != nil {
			out.sockets = append(out.sockets, b.socket)
		}
		if b.close != nil {
			out.closers = append(out.closers, b.close)
		}
	}
	return out, nil
}

// checkPolicies refuses a policy stack whose agents or rules name a
// notification channel that is not configured: their notices would reach
// nobody.
func (n *NotificationsConfig) checkPolicies(layers []*gate.Policy) error {
	var names []string
	for _, ch := range n.Channels {
		names = append(names, ch.Name)
	}
	var errs []error
	for _, p := range layers {
		for _, ref := range p.Channels() {
			if slices.Contains(names, ref.Name) {
				continue
			}
			known := "none is configured (notifications.channels)"
			if len(names) > 0 {
				known = "configured: " + strings.Join(names, ", ")
			}
			errs = append(errs, fmt.Errorf("%s: notify: no notification channel %q; %s", ref.At, ref.Name, known))
		}
	}
	return errors.Join(errs...)
}

// notifications are the running parts of the configured channels.
type notifications struct {
	channels
	notifier *notify.Notifier
}

// startNotifications routes store's notices to the configured channels and
// starts, in wg under ctx, the notifier that delivers them and the chat
// connections that receive clicks (Socket Mode). Every process that writes
// to the store — the server, an embedded MCP gateway — routes its notices
// and delivers them: several notifiers share a store safely.
func (n *NotificationsConfig) start(ctx context.Context, wg *sync.WaitGroup, side clickSide, logger *slog.Logger) (*notifications, error) {
	store := side.store
	chans, err := n.build(logger)
	if err != nil {
		return nil, err
	}
	store.SetRouter(notify.NewRouter(chans.specs, time.Duration(*n.RemindBefore)))
	out := &notifications{channels: chans, notifier: &notify.Notifier{
		Store: store, Channels: map[string]*notify.Spec{}, InboxURL: n.InboxURL, Attempts: n.Attempts,
		FirstRetry: time.Duration(n.FirstRetry), MaxRetry: time.Duration(n.MaxRetry), Timeout: time.Duration(n.Timeout),
		Logger: logger,
	}}
	for _, spec := range chans.specs {
		out.notifier.Channels[spec.Name] = spec
	}
	if len(chans.specs) > 0 {
		wg.Go(func() { out.notifier.Run(ctx) })
	}
	for _, run := range chans.sockets {
		wg.Go(func() {
			if err := run(ctx, side); err != nil && ctx.Err() == nil {
				logger.Error("notify: Socket Mode stopped; clicks in Slack are not received", "err", err)
			}
		})
	}
	return out, nil
}

// feishuConfig is the Feishu channel ch configures.
func (ch *ChannelConfig) feishuConfig(n *NotificationsConfig) feishu.Config {
	return feishu.Config{AppID: ch.AppID, AppSecret: ch.AppSecret.Reveal(), VerificationToken: ch.VerificationToken.Reveal(),
		EncryptKey: ch.EncryptKey.Reveal(), ChatID: ch.ChatID, BaseURL: ch.APIURL, InboxURL: n.InboxURL}
}
