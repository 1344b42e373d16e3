// Package relay carries one hook call of an agent host to the Airlock
// server, and the server's answer back as the hook's output and exit code.
//
// The server parses the payload, decides and renders the host's
// answer; relay only carries it, and blocks the call (exit code 2 with a
// one-line reason) whenever it cannot get that answer.
//
// It imports the standard library and the root's codes only (the root links
// no engine), so that cmd/airlock-hook, the program a host starts for every
// tool call, starts in a few milliseconds.
package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/airlock-dev/airlock"
)

// ReplyType is the media type of the server's answer to a hook process: a
// Reply as JSON. A host that POSTs its hooks itself does not ask for it and
// gets its own JSON answer.
const ReplyType = "application/vnd.airlock.hook-reply+json"

// MaxPayload bounds a hook payload: a tool's arguments (up to 8 MiB of
// JSON, airlock.MaxArgsBytes) four times over, and a result the host echoes
// after the call.
const MaxPayload = 4*(8<<20) + 1<<20

// HoldMargin is the time an ask's hold leaves the hook to answer before the
// host's own timeout kills it.
const HoldMargin = 10 * time.Second

// Reconnect is how long a hook keeps trying a server it cannot reach before
// it blocks the call: long enough for a restart, short enough that a server
// that is down does not stall the agent.
const Reconnect = 5 * time.Second

// Host is an agent host as its hook process knows it.
type Host struct {
	// Name is the host's name on the command line and in /v1/hooks/{host}.
	Name string
	// Timeout is the host's limit for one hook call where its settings
	// give none.
	Timeout time.Duration
}

// hosts are the hosts Airlock answers.
var hosts = []Host{
	{"claude-code", 10 * time.Minute},
	{"codex", 10 * time.Minute},
	{"gemini", time.Minute},
}

// Lookup returns the host called name; "claude" is Claude Code.
func Lookup(name string) (Host, bool) {
	if name == "claude" {
		name = "claude-code"
	}
	for _, h := range hosts {
		if h.Name == name {
			return h, true
		}
	}
	return Host{}, false
}

// Names lists the hosts' names, sorted.
func Names() []string {
	names := make([]string, len(hosts))
	for i, h := range hosts {
		names[i] = h.Name
	}
	return names
}

// Reply is what the hook process prints and how it exits.
type Reply struct {
	// Exit is 0, or 2 for a block the host reads from Stderr.
	Exit   int    `json:"exit"`
	Stdout string `json:"stdout,omitempty"`
	Stderr string `json:"stderr,omitempty"`
}

// Error is a hook call the server did not answer: Code is the code of the
// server's problem (invalid, unauthenticated, unauthorized, unavailable, …,
// or a refusal code such as AIRLOCK-INVALID), or unavailable when the server
// could not be reached or its answer read.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Refusal is the refusal code a hook blocks with when a call failed with
// code: a refusal code (AIRLOCK-…) is itself, input Airlock cannot read is
// AIRLOCK-INVALID, a token refused or not allowed AIRLOCK-DENIED, and
// anything else AIRLOCK-UNAVAILABLE: Airlock could not decide.
func Refusal(code string) string {
	switch {
	case strings.HasPrefix(code, "AIRLOCK-"):
		return code
	case code == airlock.EINVALID:
		return airlock.CodeInvalid
	case code == airlock.EUNAUTHORIZED, code == airlock.EUNAUTHENTICATED:
		return airlock.CodeDenied
	}
	return airlock.CodeUnavailable
}

// Blocked is the reply to a hook call Airlock could not answer: a block
// with a one-line reason, in every host's terms (exit 2, the reason on
// standard error).
func Blocked(code, message string) Reply {
	return Reply{Exit: 2, Stderr: OneLine("Airlock blocked this call: " + Refusal(code) + ": " + message)}
}

// Fail is Blocked for an error: an *Error's code and message, and any other
// error as Airlock being unavailable.
func Fail(err error) Reply {
	var e *Error
	if errors.As(err, &e) {
		return Blocked(e.Code, e.Message)
	}
	return Blocked(airlock.EUNAVAILABLE, err.Error())
}

// OneLine flattens a reason for a terminal line and a model's context.
func OneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	const max = 2000
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
}

// Hold splits a host's timeout for one hook call: how long the server may
// hold an ask (hold), and how long the process waits for its answer (wait),
// both short of the timeout, since the host kills a hook at its timeout and
// then, for most hosts, runs the call.
func Hold(timeout time.Duration) (hold, wait time.Duration) {
	margin := min(HoldMargin, timeout/4)
	return timeout - margin, timeout - margin/3
}

// Client sends hook calls to one Airlock server.
type Client struct {
	// URL is the server's base URL.
	URL string
	// Token is the agent's bearer secret.
	Token string
	// HTTPClient sends the requests; nil: http.DefaultClient, which has no
	// overall timeout, since an ask is held.
	HTTPClient *http.Client
}

// Run answers one hook call of host within timeout, the host's limit for
// it: the server's reply, or a block that says why there is none. ask is
// where an ask goes: "" or "airlock" (held for Airlock's reviewers) or
// "host" (Claude Code's own prompt).
func (c *Client) Run(ctx context.Context, host string, payload []byte, timeout time.Duration, ask string) Reply {
	if timeout <= 0 {
		return Blocked(airlock.EINVALID, fmt.Sprintf("--timeout %s: want the host's hook timeout, such as 600s", timeout))
	}
	hold, wait := Hold(timeout)
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	r, err := c.Ask(ctx, host, payload, hold, ask)
	if err != nil {
		return Fail(err)
	}
	return r
}

// Ask passes one hook payload of host (claude-code, codex, gemini) to the
// server and returns the reply for the hook process to give its host; an
// ask is held for up to hold. A server that is restarting — it drained, or
// the connection broke while it held the call — is asked again until ctx
// ends; one that cannot be reached at all is given Reconnect, then the
// error's code is unavailable and the caller blocks the call (Fail).
func (c *Client) Ask(ctx context.Context, host string, payload []byte, hold time.Duration, ask string) (Reply, error) {
	backoff := 50 * time.Millisecond
	start := time.Now()
	contact := start // the last time the server answered or held the call
	for {
		r, reached, err := c.once(ctx, host, payload, hold-time.Since(start), ask)
		if reached {
			contact = time.Now()
		}
		var e *Error
		if err == nil || !errors.As(err, &e) || e.Code != airlock.EUNAVAILABLE || time.Since(contact) > Reconnect {
			return r, err
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return Reply{}, err
		case <-t.C:
		}
		backoff = min(2*backoff, time.Second)
	}
}

// once makes one request, and reports whether the server was reached.
func (c *Client) once(ctx context.Context, host string, payload []byte, hold time.Duration, ask string) (r Reply, reached bool, err error) {
	q := url.Values{"hold": {max(hold, 0).Round(time.Millisecond).String()}}
	if ask != "" {
		q.Set("ask", ask)
	}
	u := strings.TrimRight(c.URL, "/") + "/v1/hooks/" + url.PathEscape(host) + "?" + q.Encode()
	req, err := http.NewRequestWithContext(ctx, "POST", u, bytes.NewReader(payload))
	if err != nil {
		return r, false, &Error{airlock.EINVALID, fmt.Sprintf("bad server URL %q: %v", c.URL, err)}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", ReplyType)
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	hc := c.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		var op *net.OpError
		reached = !(errors.As(err, &op) && op.Op == "dial")
		if ctx.Err() != nil {
			return r, reached, &Error{airlock.EUNAVAILABLE, fmt.Sprintf("no answer from %s in time: %v", c.URL, context.Cause(ctx))}
		}
		return r, reached, &Error{airlock.EUNAVAILABLE, fmt.Sprintf("POST /v1/hooks/%s: %v", host, err)}
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return r, true, readProblem(resp)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, MaxPayload)).Decode(&r); err != nil {
		return r, true, &Error{airlock.EUNAVAILABLE, fmt.Sprintf("POST /v1/hooks/%s: read answer: %v", host, err)}
	}
	if r.Exit != 0 && r.Exit != 2 {
		return Reply{}, true, &Error{"internal", fmt.Sprintf("the server answered exit code %d", r.Exit)}
	}
	return r, true, nil
}

// readProblem reads the server's problem.
func readProblem(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	code, msg, ok := ParseProblem(b)
	if !ok {
		return &Error{statusCode(resp.StatusCode), fmt.Sprintf("server answered %s: %s", resp.Status, strings.TrimSpace(string(b)))}
	}
	return &Error{code, msg}
}

// ParseProblem reads an Airlock server's problem body (RFC 9457, with
// Airlock's stable code): its code, and its detail followed by each error
// it lists and where. ok is false for a body that is not such a problem.
func ParseProblem(b []byte) (code, msg string, ok bool) {
	var p struct {
		Code   string `json:"code"`
		Detail string `json:"detail"`
		Errors []*struct {
			Message  string `json:"message"`
			Location string `json:"location"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(b, &p); err != nil || p.Code == "" {
		return "", "", false
	}
	msg = p.Detail
	for _, d := range p.Errors {
		if d == nil {
			continue
		}
		msg += "; " + d.Message
		if d.Location != "" {
			msg += " (at " + d.Location + ")"
		}
	}
	return p.Code, msg, true
}

// statusCode is the error code of an HTTP status without a problem body
// (a proxy's page, say): a server error or one that is restarting is
// unavailable, and asked again while Reconnect allows.
func statusCode(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return airlock.EUNAUTHENTICATED
	case status == http.StatusForbidden:
		return airlock.EUNAUTHORIZED
	case status == http.StatusNotFound:
		return airlock.ENOTFOUND
	case status >= 500:
		return airlock.EUNAVAILABLE
	}
	return airlock.EINVALID
}
