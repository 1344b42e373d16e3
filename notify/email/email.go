// Package email delivers Airlock's notices as plain-text mail through an
// SMTP submission server.
//
// It mails the people of a notice whom the channel maps (its users: mail
// address → Airlock identity).
//
// SMTP: STARTTLS on port 587 by default, implicit TLS ("tls", port 465),
// or no TLS ("none", port 25) to a relay on this host only; AUTH (PLAIN or
// LOGIN, only ever over TLS or to this host) when a username is set.
//
// Email never resolves a request: a mail links to the request's page in
// the inbox, where a person approves or rejects it, and says that replying
// does nothing. No link in a mail acts on a GET.
//
// Idempotency and threading: a delivery's mail has the Message-ID
// <KEY@DOMAIN>, KEY its idempotency key and DOMAIN the From address's
// domain, so every attempt of one delivery carries the same Message-ID and
// a client (or a receiving server) that dedupes by Message-ID shows one
// mail. Every mail about a request has References: <approval-ID@DOMAIN>,
// the same for all of them, and the later ones (reminder, end) also name
// the request's own mail in In-Reply-To and References: mail clients that
// thread by References (Thunderbird, Apple Mail, mutt) show a request and
// its end as one conversation, even to a person who got only the end.
package email

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	netmail "net/mail"
	"net/textproto"
	"regexp"
	"strconv"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"
	"github.com/wneessen/go-mail/smtp"

	"github.com/airlock-dev/airlock/notify"
)

// Config configures an email channel.
type Config struct {
	// Host is the SMTP submission server's host name or IP address.
	Host string
	// Port is its port; 0: 587 for starttls, 465 for tls, 25 for none.
	Port int
	// Username and Password authenticate to the server (SMTP AUTH PLAIN,
	// or LOGIN when the server offers no PLAIN, or else the strongest
	// mechanism go-mail finds offered); no username: no AUTH. Credentials
	// are sent only over TLS or to this host, and never appear in an
	// error.
	Username string
	Password string
	// From is the sender, an address with an optional name
	// ("Airlock <airlock@example.com>"; without one the name is Airlock).
	// Its domain is the right-hand side of the Message-IDs.
	From string
	// TLS is how the connection is secured:
	//   - "starttls" (the default): plain connection upgraded with STARTTLS,
	//     which the server must offer;
	//   - "tls": TLS from the first byte (often port 465);
	//   - "none": no TLS, only to a server on this host (localhost or a
	//     loopback address), such as a local relay.
	TLS string
	// TLSConfig verifies the server (a private CA's roots); nil: the
	// system's roots. Its ServerName defaults to Host.
	TLSConfig *tls.Config
	// MaxArgs is how many bytes of an action's arguments a mail shows
	// (the whole is behind the inbox link); 0: DefaultMaxArgs.
	MaxArgs int
	// Timeout bounds one SMTP session, from connecting to QUIT; 0:
	// DefaultTimeout. The context of Deliver bounds it too.
	Timeout time.Duration
	// Now is the clock of the Date header; nil: time.Now.
	Now func() time.Time
}

// Defaults of a Config.
const (
	DefaultMaxArgs = 4096
	DefaultTimeout = 30 * time.Second
)

// TLS modes.
const (
	StartTLS = "starttls"
	TLS      = "tls"
	NoTLS    = "none"
)

// Channel mails notices through one SMTP server. It is safe for
// concurrent use: each delivery has its own SMTP session.
type Channel struct {
	host     string
	port     int
	mode     string
	username string
	password string
	from     netmail.Address
	domain   string // of Message-IDs
	tls      *tls.Config
	maxArgs  int
	timeout  time.Duration
	now      func() time.Time
}

// CheckUserID checks a user ID a configuration maps to an Airlock
// identity: a bare mail address.
func CheckUserID(id string) error {
	if a, err := netmail.ParseAddress(id); err != nil || a.Address != id {
		return fmt.Errorf("%q is not a mail address (like bob@example.com)", id)
	}
	return nil
}

// New checks cfg and returns its channel.
func New(cfg Config) (*Channel, error) {
	c := &Channel{
		host: cfg.Host, port: cfg.Port, mode: cfg.TLS, username: cfg.Username, password: cfg.Password,
		maxArgs: cfg.MaxArgs, timeout: cfg.Timeout, now: cfg.Now,
	}
	if err := checkHost(cfg.Host); err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	if c.mode == "" {
		c.mode = StartTLS
	}
	defaultPort := 0
	switch c.mode {
	case StartTLS:
		defaultPort = 587
	case TLS:
		defaultPort = 465
	case NoTLS:
		if !loopback(cfg.Host) {
			return nil, fmt.Errorf(`tls: "none" sends mail (and any password) in the clear: only to a server on this host (localhost, 127.0.0.1, ::1), not %q`, cfg.Host)
		}
		defaultPort = 25
	default:
		return nil, fmt.Errorf("tls: %q is not starttls, tls or none", cfg.TLS)
	}
	switch {
	case c.port == 0:
		c.port = defaultPort
	case c.port < 0 || c.port > 65535:
		return nil, fmt.Errorf("port: %d is not a port", cfg.Port)
	}
	if cfg.Password != "" && cfg.Username == "" {
		return nil, errors.New("username: a password needs a username")
	}
	if strings.ContainsAny(cfg.Username+cfg.Password, "\r\n\x00") {
		return nil, errors.New("username, password: a line break or NUL is not allowed")
	}
	if cfg.From == "" {
		return nil, errors.New("from: an email channel needs a sender address (like Airlock <airlock@example.com>)")
	}
	from, err := netmail.ParseAddress(cfg.From)
	if err != nil {
		return nil, fmt.Errorf("from: %q is not a mail address (like Airlock <airlock@example.com>)", cfg.From)
	}
	if from.Name == "" {
		from.Name = "Airlock"
	}
	c.from = *from
	c.domain = "airlock"
	if _, domain, ok := strings.Cut(from.Address, "@"); ok && msgIDAtom.MatchString(domain) {
		c.domain = strings.ToLower(domain)
	}
	switch {
	case c.maxArgs == 0:
		c.maxArgs = DefaultMaxArgs
	case c.maxArgs < 0:
		return nil, fmt.Errorf("max args: %d is negative", cfg.MaxArgs)
	}
	switch {
	case c.timeout == 0:
		c.timeout = DefaultTimeout
	case c.timeout < 0:
		return nil, fmt.Errorf("timeout: %s is negative", cfg.Timeout)
	}
	if cfg.TLSConfig != nil {
		c.tls = cfg.TLSConfig.Clone()
	} else {
		c.tls = &tls.Config{}
	}
	if c.tls.ServerName == "" {
		c.tls.ServerName = cfg.Host
	}
	c.tls.MinVersion = max(c.tls.MinVersion, tls.VersionTLS12)
	if c.now == nil {
		c.now = time.Now
	}
	return c, nil
}

// hostName is a DNS name (letters, digits, hyphens, dots).
var hostName = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*\.?$`)

// checkHost accepts a host name or an IP address, and nothing else (no
// port, no scheme, no unix:// socket).
func checkHost(host string) error {
	switch {
	case host == "":
		return errors.New("an email channel needs the SMTP server's host name")
	case net.ParseIP(host) != nil, hostName.MatchString(host):
		return nil
	}
	return fmt.Errorf("%q is not a host name or IP address (the port goes in port)", host)
}

// loopback reports whether host is this host.
func loopback(host string) bool {
	if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Deliver mails d, one message to every address of d.Users, and returns
// its Message-ID: a later notice of the same request replies to it.
//
// Nothing to send is an error: the router gives an email channel only
// notices for people it maps, but a test notice goes to the channel it
// names whoever it is for; with no address of a recipient in the channel's
// users, it is dead at once, saying so.
//
// Errors: a server that refuses every recipient, the sender, the message
// or the credentials for good (5xx), a certificate that does not verify,
// or a server without STARTTLS in starttls mode are permanent. A server
// that refuses some recipients for good gets the mail for the others, and
// the delivery is dead saying whom it missed (a person retries it after
// fixing the address; the others' copies have the same Message-ID). A
// connection that fails, a timeout, or a temporary refusal (4xx) of anyone
// sends nothing and is retried.
func (c *Channel) Deliver(ctx context.Context, d *notify.Delivery) (string, error) {
	if d.Key == "" {
		return "", notify.Permanent(errors.New("the delivery has no idempotency key"))
	}
	if len(d.Users) == 0 {
		return "", notify.Permanent(errors.New("no recipient: none of the notice's recipients has a mail address in this channel's users"))
	}
	var to []string
	var bad []refusal
	for _, u := range d.Users {
		a, err := netmail.ParseAddress(u)
		if err != nil {
			bad = append(bad, refusal{u, "not a mail address"})
			continue
		}
		to = append(to, a.Address)
	}
	if len(to) == 0 {
		return "", notify.Permanent(fmt.Errorf("no recipient: %s", refusals(bad)))
	}
	msg, id, err := c.message(d, to)
	if err != nil {
		return "", notify.Permanent(fmt.Errorf("compose: %w", err))
	}
	refused, err := c.send(ctx, msg, to)
	if err != nil {
		return "", err
	}
	if bad = append(bad, refused...); len(bad) > 0 {
		return "", notify.Permanent(fmt.Errorf("mailed to %d of %d recipients; refused: %s", len(to)-len(refused), len(d.Users), refusals(bad)))
	}
	return id, nil
}

// refusal is a recipient the server (or the channel) refused for good.
type refusal struct{ addr, why string }

func refusals(rs []refusal) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = r.addr + " (" + r.why + ")"
	}
	return strings.Join(s, ", ")
}

// send runs one SMTP session that mails msg to the addresses to, and
// returns those refused for good when others got it.
//
// It drives the transaction itself rather than with Client.Send, which
// gives up on the whole message when any recipient is refused: a person
// whose address is fine still gets the mail when another's is wrong.
func (c *Channel) send(ctx context.Context, msg *gomail.Msg, to []string) ([]refusal, error) {
	addr := net.JoinHostPort(c.host, strconv.Itoa(c.port))
	fail := func(step string, err error) error {
		if ctx.Err() != nil {
			// The connection was closed under it: say why.
			err = ctx.Err()
		}
		return classify(fmt.Errorf("smtp %s: %s: %w", addr, step, err))
	}
	if ctx.Err() != nil {
		return nil, fail("connect", ctx.Err())
	}

	// The session owns its connection: closed when ctx ends (go-mail
	// bounds only the dial by it), and when the session ends, however.
	var conn net.Conn
	stop := func() bool { return false }
	defer func() {
		stop()
		if conn != nil {
			conn.Close()
		}
	}()
	dial := func(dctx context.Context, _, _ string) (net.Conn, error) {
		var err error
		if c.mode == TLS {
			conn, err = (&tls.Dialer{Config: c.tls}).DialContext(dctx, "tcp", addr)
		} else {
			conn, err = (&net.Dialer{}).DialContext(dctx, "tcp", addr)
		}
		if err != nil {
			return nil, err
		}
		cc := conn
		stop = context.AfterFunc(ctx, func() { cc.Close() })
		return conn, nil
	}
	opts := []gomail.Option{
		gomail.WithPort(c.port), gomail.WithTimeout(c.timeout), gomail.WithDialContextFunc(dial),
		gomail.WithTLSConfig(c.tls),
	}
	switch c.mode {
	case StartTLS:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	case TLS:
		opts = append(opts, gomail.WithSSL())
	case NoTLS:
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
	}
	if c.username != "" {
		mechs := []gomail.SMTPAuthType{gomail.SMTPAuthPlain, gomail.SMTPAuthLogin}
		if c.mode == NoTLS { // this host only (New checked)
			mechs = []gomail.SMTPAuthType{gomail.SMTPAuthPlainNoEnc, gomail.SMTPAuthLoginNoEnc}
		}
		opts = append(opts, gomail.WithOpportunisticSMTPAuth(mechs...),
			gomail.WithUsername(c.username), gomail.WithPassword(c.password))
	}
	client, err := gomail.NewClient(c.host, opts...)
	if err != nil {
		return nil, notify.Permanent(fmt.Errorf("smtp %s: %w", addr, err))
	}
	sc, err := client.DialToSMTPClientWithContext(ctx)
	if err != nil {
		return nil, fail("connect", err)
	}
	if err := sc.Mail(angle(c.from.Address)); err != nil {
		return nil, fail("MAIL FROM", err)
	}
	var refused []refusal
	var later error
	for _, rcpt := range to {
		err := sc.Rcpt(angle(rcpt))
		var tp *textproto.Error
		switch {
		case err == nil:
		case errors.As(err, &tp) && tp.Code >= 500:
			refused = append(refused, refusal{rcpt, strings.TrimSpace(fmt.Sprintf("%d %s", tp.Code, tp.Msg))})
		case errors.As(err, &tp):
			later = cmp(later, fmt.Errorf("RCPT TO %s: %w", rcpt, err))
		default:
			return nil, fail("RCPT TO "+rcpt, err)
		}
	}
	switch {
	case later != nil:
		// Send to nobody rather than twice to some: the retry mails all.
		_ = sc.Reset()
		return nil, fail("recipients", later)
	case len(refused) == len(to):
		_ = sc.Reset()
		return nil, notify.Permanent(fmt.Errorf("smtp %s: every recipient refused: %s", addr, refusals(refused)))
	}
	w, err := sc.Data()
	if err != nil {
		return nil, fail("DATA", err)
	}
	if _, err := msg.WriteTo(w); err != nil {
		return nil, fail("DATA", err)
	}
	if err := w.Close(); err != nil {
		return nil, fail("end of DATA", err)
	}
	_ = sc.Quit() // the server has taken the mail; a failed goodbye changes nothing
	return refused, nil
}

// cmp keeps the first error.
func cmp(first, next error) error {
	if first != nil {
		return first
	}
	return next
}

// angle writes an address as SMTP's MAIL FROM and RCPT TO take it.
func angle(addr string) string { return "<" + addr + ">" }

// classify marks the errors no retry can help: a permanent refusal (5xx),
// a certificate that does not verify, a server that cannot secure or
// authenticate the session as configured.
func classify(err error) error {
	var tp *textproto.Error
	var cert *tls.CertificateVerificationError
	switch {
	case errors.As(err, &tp) && tp.Code >= 500,
		errors.As(err, &cert),
		errors.Is(err, smtp.ErrUnencrypted), errors.Is(err, smtp.ErrWrongHostname),
		errors.Is(err, gomail.ErrNoSupportedAuthDiscovered),
		// go-mail has no sentinel for these.
		strings.Contains(err.Error(), "does not support STARTTLS"),
		strings.Contains(err.Error(), "does not support SMTP AUTH"):
		return notify.Permanent(err)
	}
	return err
}

var _ notify.Channel = (*Channel)(nil)
