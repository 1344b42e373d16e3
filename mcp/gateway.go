// Package mcp puts Airlock between MCP clients and MCP servers: every
// tools/call is decided before it reaches the server, every tool is pinned.
//
// A tool's definition is pinned so that a server cannot change what the
// tool does behind the approvals given for it.
//
// The gateway works on JSON-RPC messages, not on the SDK's typed API: every
// method it does not gate — initialize, resources, prompts, completion,
// logging, ping, progress, cancellation, and the server's own sampling,
// elicitation and roots requests — passes through unchanged in both
// directions, whatever the protocol version, and a malformed message is
// answered with a JSON-RPC error instead of ending the session. It uses the
// official SDK (github.com/modelcontextprotocol/go-sdk) for its types, its
// JSON-RPC messages and its streamable HTTP transports.
//
// Two shapes share one core: `airlock mcp proxy` serves one client over
// stdio in front of one upstream (Gateway.ServeStdio), and `airlock mcp
// serve` one streamable HTTP endpoint in front of many, their tools named
// <server>__<tool> (Gateway.Handler). Each client session has its own
// upstream sessions, so that an upstream's requests (sampling,
// elicitation, roots) reach the client they belong to.
package mcp

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/mcpcatalog"
)

// Server is one upstream MCP server, as a client's mcpServers block
// describes it: a command to run (stdio) or a URL (streamable HTTP).
type Server struct {
	// Name is the server's name in Airlock's tool names:
	// mcp__<Name>__<tool>.
	Name string
	// Command and Args start a stdio server; Env adds to its environment
	// (KEY=VALUE) and Dir is its working directory.
	Command string
	Args    []string
	Env     []string
	Dir     string
	// URL is a streamable HTTP server's endpoint, and Headers go with every
	// request to it (its credentials: never the client's token).
	URL     string
	Headers map[string]string
	// Catalog names the server of the MCP server catalogue this is
	// ("filesystem", "github"; package mcpcatalog), whose tools Airlock
	// then classifies like the built-in tools: the gateway's actions carry
	// it as Action.MCPServer. Empty, it follows from Command and Args, or
	// from URL (mcpcatalog.Identify) — from what the operator configured,
	// never from what the server says about itself; "none" says the server
	// is not one the catalogue knows, whatever its command.
	Catalog string
}

// CatalogNone is the Catalog of a server whose command looks like a known
// server's but is not (a fork, a wrapper): its calls are mcp.call.
const CatalogNone = "none"

// Known returns the catalogue's name for the server: Catalog, or what its
// command or URL runs; "" when the catalogue does not know it.
func (s Server) Known() string {
	switch s.Catalog {
	case CatalogNone:
		return ""
	case "":
		return mcpcatalog.Identify(s.Command, s.Args, s.URL)
	}
	return s.Catalog
}

// serverName is what a server's name may be: it becomes part of tool
// names (mcp__<name>__<tool>, <name>__<tool>), so no double underscore.
var serverName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]*(_[A-Za-z0-9-]+)*$`)

// Validate reports what is wrong with the server's configuration.
func (s Server) Validate() error {
	switch {
	case !serverName.MatchString(s.Name) || len(s.Name) > 64:
		return airlock.Errorf(airlock.EINVALID, "server name %q: want letters, digits, '-' and single '_' (it becomes part of tool names: mcp__%s__<tool>)", s.Name, s.Name)
	case s.Command == "" && s.URL == "":
		return airlock.Errorf(airlock.EINVALID, "server %s: give a command or a url", s.Name)
	case s.Command != "" && s.URL != "":
		return airlock.Errorf(airlock.EINVALID, "server %s: give a command or a url, not both", s.Name)
	case s.Catalog != "" && s.Catalog != CatalogNone && !mcpcatalog.Known(s.Catalog):
		var names []string
		for _, k := range mcpcatalog.Servers() {
			names = append(names, k.Name)
		}
		return airlock.Errorf(airlock.EINVALID, "server %s: catalog %q is not a server Airlock knows (%s, or %s)", s.Name, s.Catalog, strings.Join(names, ", "), CatalogNone)
	}
	return nil
}

// Gateway is the MCP gateway: the configuration one or many client
// sessions share.
type Gateway struct {
	// Servers are the upstreams. With one and Namespace unset, tools keep
	// their names (a proxy); otherwise each is named <server>__<tool>.
	Servers   []Server
	Namespace bool
	// Agent is whose calls a stdio session's are, and Checker decides them
	// (ServeStdio); through an Airlock server, Agent may be "" for the
	// token's. Over HTTP each client's token says (Handler).
	Agent   string
	Checker airlock.Checker
	// Stderr receives the upstream processes' standard error (nil: discarded).
	Stderr io.Writer
	// Logger receives what the clients are not told; nil discards it.
	Logger *slog.Logger
	// HoldProgress is how often a client waiting on a person's decision is
	// sent a progress notification (0: every 10 s), when it gave a token.
	HoldProgress time.Duration
	// Restart bounds the backoff of restarting an upstream that exited
	// (0: 30 s).
	Restart time.Duration
	// SessionIdle closes an HTTP client's session, and its upstreams, once
	// it has had no request in progress for this long (0: 30 minutes).
	SessionIdle time.Duration
}

func (g *Gateway) logger() *slog.Logger {
	if g.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return g.Logger
}

// Validate checks the configuration before any session starts.
func (g *Gateway) Validate() error {
	if len(g.Servers) == 0 {
		return airlock.Errorf(airlock.EINVALID, "the gateway has no servers")
	}
	if len(g.Servers) > 1 && !g.Namespace {
		return airlock.Errorf(airlock.EINVALID, "%d servers share one endpoint: their tools must be named per server", len(g.Servers))
	}
	seen := map[string]bool{}
	for _, s := range g.Servers {
		if err := s.Validate(); err != nil {
			return err
		}
		if seen[s.Name] {
			return airlock.Errorf(airlock.EINVALID, "two servers are named %s", s.Name)
		}
		seen[s.Name] = true
	}
	return nil
}

// ServeStdio serves one client on r and w (a proxy's standard input and
// output) until the client goes away or ctx ends.
func (g *Gateway) ServeStdio(ctx context.Context, r io.Reader, w io.Writer) error {
	if err := g.Validate(); err != nil {
		return err
	}
	if g.Checker == nil {
		return airlock.Errorf(airlock.EINVALID, "a stdio session needs a checker")
	}
	down := newStream(r, w, nil, true)
	defer down.Close()
	s := newSession(g, down, "", g.Agent, g.Checker)
	if err := s.serve(ctx); err != nil {
		return fmt.Errorf("mcp session: %w", err)
	}
	return nil
}
