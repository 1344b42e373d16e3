package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/gate"
	"github.com/airlock-dev/airlock/mcp"
)

func newMCPCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp {proxy|serve}",
		Short: "Gate MCP servers: every tools/call decided by Airlock, every tool definition pinned",
		Long: `Mcp puts Airlock between an MCP client (Claude Desktop, Claude Code, Cursor,
Codex, Gemini CLI, VS Code...) and MCP servers. Every tools/call is decided
by Airlock before it reaches the server; a call that must wait for a person
is held until they decide in the inbox or with 'airlock approvals'. Every
other message passes through unchanged. See docs/MCP.md.`,
		Args: argsNone(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageError("%s needs a subcommand: proxy or serve", cmd.CommandPath())
		},
	}
	cmd.AddCommand(newMCPProxyCmd(), newMCPServeCmd())
	return cmd
}

// gateFlags choose what decides the gateway's calls: the Airlock server
// (the default, with the agent's token), or an embedded store.
type gateFlags struct {
	configPath, dataDir, agent string
}

func (f *gateFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.dataDir, "data", "", "decide with an embedded store in this data directory instead of an Airlock server (its policy from --config, else the starter)")
	cmd.Flags().StringVar(&f.configPath, "config", "", "with an embedded store: the server configuration to take the store and the policy from")
	cmd.Flags().StringVar(&f.agent, "agent", "", "with an embedded store: the agent whose calls these are (a server takes it from the token)")
}

func (f *gateFlags) embedded() bool { return f.dataDir != "" || f.configPath != "" }

// open returns the checker and the agent, and a function that releases
// what it opened.
func (f *gateFlags) open(cmd *cobra.Command, logger *slog.Logger) (airlock.Checker, string, func(), error) {
	ctx := cmd.Context()
	if !f.embedded() {
		if f.agent != "" {
			return nil, "", nil, usageError("--agent goes with --data or --config: an Airlock server takes the agent from the token")
		}
		c, err := newClient(cmd)
		if err != nil {
			return nil, "", nil, err
		}
		wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		tok, err := c.Whoami(wctx)
		switch code := airlock.ErrorCode(err); {
		case err == nil && tok.Role != airlock.RoleAgent:
			return nil, "", nil, usageError("%s is not an agent token: the gateway's calls are one agent's (airlock token create --role agent --agent NAME)", tok.Subject())
		case err == nil:
			return c, tok.Agent, func() {}, nil
		case code == airlock.EUNAVAILABLE || code == airlock.EINTERNAL:
			// Serve anyway, refusing every call until the server answers:
			// a client that starts before Airlock still gets its tools back
			// once it runs.
			logger.Warn("the Airlock server does not answer: every tools/call is refused until it does", "server", c.URL, "err", airlock.ErrorMessage(err))
			return c, "", func() {}, nil
		default:
			return nil, "", nil, serverFailed(c, err)
		}
	}
	if f.agent == "" {
		return nil, "", nil, usageError("--agent: name the agent whose calls these are")
	}
	e, release, err := openEmbedded(cmd, f.configPath, f.dataDir, logger)
	if err != nil {
		return nil, "", nil, err
	}
	return e, f.agent, release, nil
}

// openEmbedded runs the server's engine without its API (Main.RunEmbedded)
// on the configuration at configPath (the defaults without one), its data
// in dataDir when given: the policy and its reload, the store, the
// requests' expiry and the notifications, until release.
func openEmbedded(cmd *cobra.Command, configPath, dataDir string, logger *slog.Logger) (*gate.Enforcer, func(), error) {
	cfg, err := LoadConfig(configPath)
	if err != nil {
		return nil, nil, checkFailed(err)
	}
	cfg.overrideDataDir(dataDir)
	m := &Main{Config: cfg, Logger: logger}
	if err := m.RunEmbedded(cmd.Context()); err != nil {
		m.Close()
		return nil, nil, checkFailed(err)
	}
	return m.Enforcer, func() { m.Close() }, nil
}

func newMCPProxyCmd() *cobra.Command {
	var (
		name, url, catalog string
		headers            []string
		gf                 gateFlags
	)
	cmd := &cobra.Command{
		Use:   "proxy [--name NAME] {--url URL | -- COMMAND ARGS...}",
		Short: "Serve one MCP client over stdio in front of one MCP server",
		Long: `Proxy is a stdio MCP server in front of one upstream MCP server: the command
after --, or a streamable HTTP server at --url. Put it where the client's
configuration starts the server, and change nothing else:

  "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/work"]}

becomes

  "fs": {"command": "airlock", "args": ["mcp", "proxy", "--name", "fs", "--",
         "npx", "-y", "@modelcontextprotocol/server-filesystem", "/work"]}

Each tools/call is decided by Airlock as the action mcp__NAME__TOOL with the
call's arguments, by the Airlock server at --server or $AIRLOCK_SERVER with
the agent token in $AIRLOCK_TOKEN or --token-file (or, with --data, by an
embedded store). A server of Airlock's MCP server catalogue, known by the
package, image or program the command runs (or by --catalog), has its
tools classified like the built-in tools: the filesystem server's
read_text_file as Read, its write_file as Write. Allowed calls go through; a call that asks is held until a
person decides, with progress notifications when the client asked for
them; every refusal is a tool result with isError set and the stable code,
for the model to read. Tool definitions are pinned at the first listing.
Standard output is the MCP channel: logs go to standard error.`,
		Example: `  airlock mcp proxy --name fs -- npx -y @modelcontextprotocol/server-filesystem /work
  airlock mcp proxy --name search --url https://mcp.example.com/mcp --header "Authorization=Bearer $SEARCH_KEY"
  airlock mcp proxy --data ~/.airlock --agent laptop --name fs -- mcp-server-filesystem /work`,
		RunE: func(cmd *cobra.Command, args []string) error {
			srv := mcp.Server{Name: name, URL: url, Catalog: catalog}
			switch {
			case url != "" && len(args) > 0:
				return usageError("give --url or a command after --, not both")
			case url == "" && len(args) == 0:
				return usageError("%s needs the upstream server: a command after --, or --url", cmd.CommandPath())
			case len(args) > 0:
				srv.Command, srv.Args = args[0], args[1:]
			}
			if srv.Name == "" {
				srv.Name = serverNameOf(srv)
			}
			for _, h := range headers {
				k, v, ok := strings.Cut(h, "=")
				if !ok || strings.TrimSpace(k) == "" {
					return usageError("--header %q: want NAME=VALUE", h)
				}
				if srv.Headers == nil {
					srv.Headers = map[string]string{}
				}
				srv.Headers[strings.TrimSpace(k)] = v
			}
			bare := srv
			bare.Catalog = ""
			if err := bare.Validate(); err != nil {
				return usageError("%s (give --name)", airlock.ErrorMessage(err))
			}
			if err := srv.Validate(); err != nil {
				return usageError("--catalog: %s", airlock.ErrorMessage(err))
			}
			logger := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil)).With("component", "mcp")
			checker, agent, release, err := gf.open(cmd, logger)
			if err != nil {
				return err
			}
			defer release()
			g := &mcp.Gateway{Servers: []mcp.Server{srv}, Agent: agent, Checker: checker, Stderr: cmd.ErrOrStderr(), Logger: logger}
			if err := g.ServeStdio(cmd.Context(), cmd.InOrStdin(), cmd.OutOrStdout()); err != nil {
				return checkFailed(fmt.Errorf("airlock: %v", err))
			}
			return nil
		},
	}
	cmd.Flags().SetInterspersed(false) // the upstream's command line is its own
	cmd.Flags().StringVar(&name, "name", "", "the server's name in Airlock's tool names, mcp__NAME__TOOL (default: from the command or URL)")
	cmd.Flags().StringVar(&url, "url", "", "a streamable HTTP MCP server's endpoint, instead of a command")
	cmd.Flags().StringVar(&catalog, "catalog", "", "the server of Airlock's MCP server catalogue this is (filesystem, github, ...: its tools are classified like the built-in tools), or none (default: from the command or URL)")
	cmd.Flags().StringArrayVar(&headers, "header", nil, "NAME=VALUE: a header sent to the --url server with every request (repeatable)")
	gf.add(cmd)
	return cmd
}

// runners are commands that run a server named by their arguments.
var runners = map[string]bool{"npx": true, "bunx": true, "uvx": true, "uv": true, "pipx": true, "node": true, "bun": true, "deno": true,
	"python": true, "python3": true, "docker": true, "podman": true, "go": true, "java": true, "dotnet": true, "run": true}

var notNameChars = regexp.MustCompile(`[^a-z0-9-]+`)

// serverNameOf makes a name for a server from its command or URL:
// npx -y @modelcontextprotocol/server-filesystem /w is "filesystem".
func serverNameOf(s mcp.Server) string {
	word := s.URL
	if s.Command != "" {
		word = s.Command
		for _, w := range append([]string{s.Command}, s.Args...) {
			if strings.HasPrefix(w, "-") || runners[filepath.Base(w)] {
				continue
			}
			word = w
			break
		}
	}
	word = strings.ToLower(filepath.Base(strings.TrimRight(word, "/")))
	word, _, _ = strings.Cut(word, "@")
	for _, affix := range []string{"mcp-server-", "server-", "mcp-"} {
		word = strings.TrimPrefix(word, affix)
	}
	for _, affix := range []string{"-mcp-server", "-server", "-mcp", ".py", ".js"} {
		word = strings.TrimSuffix(word, affix)
	}
	word = strings.Trim(notNameChars.ReplaceAllString(word, "-"), "-")
	if word == "" {
		return "mcp"
	}
	return word
}
