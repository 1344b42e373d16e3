// Command airlock-hook is the hook program an agent host runs before and
// after every tool call: airlock-hook claude-code, codex or gemini. It does
// what 'airlock hook <host>' does — the host's payload from standard input
// to the Airlock server, the host's answer to standard output, exit code 2
// and a one-line reason on standard error whenever the call must not run —
// in a program that links the standard library and the light root only
// (the refusal codes), so that it starts in
// a few milliseconds instead of the airlock binary's fifteen: a host waits
// for it on every tool call.
//
// 'airlock hook install' writes it into a host's settings when it sits
// beside the airlock executable (go install ./cmd/... builds both).
//
// Usage:
//
//	airlock-hook {claude-code|codex|gemini} [--server URL] [--token-file FILE] [--timeout D] [--ask-at airlock|host]
//
// The server is --server, else $AIRLOCK_SERVER, else http://127.0.0.1:8080;
// the agent's token is in the file --token-file names, else in
// $AIRLOCK_TOKEN.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/hook/relay"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	r := run(ctx, os.Args[1:], os.Stdin, os.Stderr)
	stop()
	os.Stdout.WriteString(r.Stdout)
	if r.Stderr != "" {
		os.Stderr.WriteString(r.Stderr + "\n")
	}
	os.Exit(r.Exit)
}

// errUsage is asking for help: the usage on standard output, exit 0.
var errUsage = errors.New("usage")

// run answers one hook call. Whatever goes wrong — the command line, the
// token, the payload, the server — the reply blocks the call.
func run(ctx context.Context, args []string, stdin io.Reader, warn io.Writer) relay.Reply {
	c, host, timeout, ask, err := parse(args, warn)
	switch {
	case errors.Is(err, errUsage):
		return relay.Reply{Stdout: usage()}
	case err != nil:
		return relay.Fail(err)
	}
	payload, err := io.ReadAll(io.LimitReader(stdin, relay.MaxPayload+1))
	switch {
	case err != nil:
		return relay.Blocked("invalid", "read the hook payload: "+err.Error())
	case len(payload) > relay.MaxPayload:
		return relay.Blocked("invalid", fmt.Sprintf("the hook payload is more than %d bytes", relay.MaxPayload))
	case !json.Valid(payload):
		// Said now, not after Reconnect's tries of a server that is down.
		return relay.Blocked("invalid", "the hook payload is not JSON")
	}
	return c.Run(ctx, host.Name, payload, timeout, ask)
}

func usage() string {
	return `usage: airlock-hook {` + strings.Join(relay.Names(), "|") + `} [flags]

Answers one hook call of an agent host: its JSON on standard input, the
host's answer on standard output. Every failure blocks the call (exit
code 2, the reason on standard error). See 'airlock hook --help'.

  --server URL       the Airlock server (default $` + relay.EnvServer + `, else ` + relay.DefaultServer + `)
  --token-file FILE  the agent's token (default $` + relay.EnvToken + `)
  --timeout D        the host's timeout for this hook: an ask is held until
                     shortly before it (default: the host's)
  --ask-at WHERE     airlock (held for Airlock's reviewers, the default) or
                     host (Claude Code's own permission prompt)
`
}

// parse reads the command line and the environment.
func parse(args []string, warn io.Writer) (c *relay.Client, host relay.Host, timeout time.Duration, ask string, err error) {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
			return nil, host, 0, "", errUsage
		}
		return nil, host, 0, "", invalid("name the host first: airlock-hook {%s} [flags]", strings.Join(relay.Names(), "|"))
	}
	host, ok := relay.Lookup(args[0])
	if !ok {
		return nil, host, 0, "", invalid("unknown host %q: Airlock speaks to %s", args[0], strings.Join(relay.Names(), ", "))
	}
	fs := flag.NewFlagSet("airlock-hook", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	server := fs.String("server", "", "")
	tokenFile := fs.String("token-file", "", "")
	fs.DurationVar(&timeout, "timeout", host.Timeout, "")
	fs.StringVar(&ask, "ask-at", "airlock", "")
	switch err := fs.Parse(args[1:]); {
	case errors.Is(err, flag.ErrHelp):
		return nil, host, 0, "", errUsage
	case err != nil:
		return nil, host, 0, "", invalid("%v", err)
	case fs.NArg() > 0:
		return nil, host, 0, "", invalid("unexpected argument %q", fs.Arg(0))
	case ask != "airlock" && ask != "host":
		return nil, host, 0, "", invalid("--ask-at %q: want airlock or host", ask)
	}
	u, err := serverURL(*server, warn)
	if err != nil {
		return nil, host, 0, "", err
	}
	token, err := readToken(*tokenFile, u, warn)
	if err != nil {
		return nil, host, 0, "", err
	}
	return &relay.Client{URL: u, Token: token}, host, timeout, ask, nil
}

func invalid(format string, args ...any) error {
	return &relay.Error{Code: "invalid", Message: fmt.Sprintf(format, args...)}
}

// serverURL is --server, else $AIRLOCK_SERVER, else the default, checked.
func serverURL(s string, warn io.Writer) (string, error) {
	from := "--server"
	if s == "" {
		s, from = os.Getenv(relay.EnvServer), relay.EnvServer
	}
	if s == "" {
		return relay.DefaultServer, nil
	}
	u, warning, err := relay.ServerURL(s, from)
	if err != nil {
		return "", invalid("%v", err)
	}
	if warning != "" {
		fmt.Fprintf(warn, "airlock-hook: warning: %s\n", warning)
	}
	return u, nil
}

// readToken reads the agent's token from file, else from $AIRLOCK_TOKEN.
func readToken(file, server string, warn io.Writer) (string, error) {
	if file == "" {
		if t := strings.TrimSpace(os.Getenv(relay.EnvToken)); t != "" {
			return t, nil
		}
		return "", &relay.Error{Code: airlock.EUNAUTHENTICATED, Message: fmt.Sprintf(
			"airlock-hook needs the agent's token for the Airlock server at %s: set %s or give --token-file FILE", server, relay.EnvToken)}
	}
	t, warning, err := relay.ReadTokenFile(file)
	if warning != "" {
		fmt.Fprintf(warn, "airlock-hook: warning: %s\n", warning)
	}
	if err != nil {
		return "", &relay.Error{Code: airlock.EUNAUTHENTICATED, Message: err.Error()}
	}
	return t, nil
}
