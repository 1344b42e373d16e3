package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/hook/relay"
	"github.com/airlock-dev/airlock/mcp"
)

// GatewayConfig is the configuration of `airlock mcp serve`: one endpoint
// in front of the MCP servers it lists, in the mcpServers block that MCP
// clients already use. Strings may hold ${ENV} references; relative paths
// are relative to the file.
type GatewayConfig struct {
	// Listen is the address the gateway serves MCP's streamable HTTP on
	// (default 127.0.0.1:8090), at Path (default /mcp).
	Listen string `yaml:"listen"`
	Path   string `yaml:"path"`
	// Server is the Airlock server that decides (default $AIRLOCK_SERVER,
	// else http://127.0.0.1:8080). Each client sends an agent token of that
	// server as its bearer token, and its calls are that agent's.
	Server string `yaml:"server"`
	// Data is instead the data directory of an embedded store (and Config
	// the server configuration to take its store and policy from): its
	// tokens authenticate the clients.
	Data   string `yaml:"data"`
	Config string `yaml:"config"`
	// MCPServers are the upstreams by name; each client sees their tools as
	// <name>__<tool>, and Airlock decides them as mcp__<name>__<tool>.
	MCPServers map[string]MCPServerConfig `yaml:"mcpServers"`

	src *configSource
}

// MCPServerConfig is one upstream, as MCP clients write it.
type MCPServerConfig struct {
	// Type is stdio (a command) or http / streamable-http (a URL); when
	// absent it follows from command or url. SSE servers are not supported.
	Type string `yaml:"type"`
	// Command, Args, Env and Cwd start a stdio server.
	Command string            `yaml:"command"`
	Args    []string          `yaml:"args"`
	Env     map[string]string `yaml:"env"`
	Cwd     string            `yaml:"cwd"`
	// URL is a streamable HTTP server's endpoint; Headers go with each
	// request to it (its credentials, never a client's token).
	URL     string            `yaml:"url"`
	Headers map[string]string `yaml:"headers"`
	// Catalog names the server of Airlock's MCP server catalogue this is
	// (filesystem, git, fetch, memory, time, everything, github,
	// playwright, postgres, slack): its tools are then classified like the
	// built-in tools (docs/MCP.md, Known servers). By default it follows from
	// the command and args, or the url; none: not a server the catalogue
	// knows, whatever its command (a fork, a wrapper).
	Catalog string `yaml:"catalog"`
	// Disabled leaves the server out.
	Disabled bool `yaml:"disabled"`
	// Timeout, AlwaysAllow and AutoApprove are clients' own settings: read
	// and ignored, so that a client's block can be copied as it is. Airlock
	// decides what is allowed.
	Timeout     any      `yaml:"timeout"`
	AlwaysAllow []string `yaml:"alwaysAllow"`
	AutoApprove []string `yaml:"autoApprove"`
}

// LoadGatewayConfig reads and checks the gateway's configuration.
func LoadGatewayConfig(path string) (GatewayConfig, error) {
	var c GatewayConfig
	s, err := decodeConfigFile(path, &c)
	if err != nil {
		return GatewayConfig{}, err
	}
	c.src = s
	dir := filepath.Dir(path)
	abs := func(p string) string {
		if p != "" && !filepath.IsAbs(p) {
			return filepath.Join(dir, p)
		}
		return p
	}
	c.Data, c.Config = abs(c.Data), abs(c.Config)
	for name, srv := range c.MCPServers {
		srv.Cwd = abs(srv.Cwd)
		c.MCPServers[name] = srv
	}
	c.Listen = cmp.Or(c.Listen, "127.0.0.1:8090")
	c.Path = cmp.Or(c.Path, "/mcp")
	return c, c.validate()
}

// servers returns the enabled upstreams, sorted by name.
func (c GatewayConfig) servers() []mcp.Server {
	var out []mcp.Server
	for _, name := range slices.Sorted(maps.Keys(c.MCPServers)) {
		sc := c.MCPServers[name]
		if sc.Disabled {
			continue
		}
		s := mcp.Server{Name: name, Command: sc.Command, Args: sc.Args, Dir: sc.Cwd, URL: sc.URL, Headers: sc.Headers, Catalog: sc.Catalog}
		for _, k := range slices.Sorted(maps.Keys(sc.Env)) {
			s.Env = append(s.Env, k+"="+sc.Env[k])
		}
		out = append(out, s)
	}
	return out
}

func (c GatewayConfig) validate() error {
	var errs []error
	at := func(msg string, path ...any) {
		where := make([]string, len(path))
		for i, p := range path {
			where[i] = fmt.Sprint(p)
		}
		errs = append(errs, c.src.errorAt(strings.Join(where, "."), msg, path...))
	}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		at(fmt.Sprintf("%q is not host:port", c.Listen), "listen")
	}
	if !strings.HasPrefix(c.Path, "/") {
		at("the path begins with /", "path")
	}
	if c.Server != "" && (c.Data != "" || c.Config != "") {
		at("give server, or data and config, not both", "server")
	}
	if c.Server != "" {
		if _, _, err := relay.ServerURL(c.Server, "server"); err != nil {
			at(err.Error(), "server")
		}
	}
	if len(c.MCPServers) == 0 {
		at("list the MCP servers to put the gateway in front of", "mcpServers")
	}
	enabled := 0
	for _, name := range slices.Sorted(maps.Keys(c.MCPServers)) {
		sc := c.MCPServers[name]
		if !sc.Disabled {
			enabled++
		}
		switch sc.Type {
		case "", "stdio", "http", "streamable-http", "streamableHttp":
		case "sse":
			at("SSE servers are not supported: give the server's streamable HTTP url", "mcpServers", name, "type")
		default:
			at(fmt.Sprintf("type %q: want stdio or http", sc.Type), "mcpServers", name, "type")
		}
		s := mcp.Server{Name: name, Command: sc.Command, URL: sc.URL}
		if err := s.Validate(); err != nil {
			at(airlock.ErrorMessage(err), "mcpServers", name)
		}
		if sc.Catalog != "" {
			// Its name and command are checked above: this is the catalogue's.
			if err := (mcp.Server{Name: "x", Command: "x", Catalog: sc.Catalog}).Validate(); err != nil {
				at(strings.Replace(airlock.ErrorMessage(err), "server x: ", "", 1), "mcpServers", name, "catalog")
			}
		}
		if sc.URL != "" && len(sc.Args) > 0 {
			at("args go with a command, not a url", "mcpServers", name, "args")
		}
	}
	if len(c.MCPServers) > 0 && enabled == 0 {
		at("every server is disabled", "mcpServers")
	}
	return errors.Join(errs...)
}

func newMCPServeCmd() *cobra.Command {
	var configPath, listen string
	cmd := &cobra.Command{
		Use:   "serve --config gateway.yaml",
		Short: "Serve one streamable HTTP MCP endpoint in front of many MCP servers",
		Long: `Serve is one MCP endpoint (streamable HTTP) in front of the MCP servers its
configuration lists, in the mcpServers block MCP clients use:

  listen: 127.0.0.1:8090
  server: http://127.0.0.1:8080       # the Airlock server that decides
  mcpServers:
    fs:
      command: npx
      args: [-y, "@modelcontextprotocol/server-filesystem", /work]
    search:
      url: https://mcp.example.com/mcp
      headers: {Authorization: "Bearer ${SEARCH_KEY}"}

Each client authenticates with an Airlock agent token as its bearer token
(Authorization: Bearer ...), and its calls are that agent's: Airlock decides
each tools/call as mcp__<server>__<tool>. The client sees each server's
tools as <server>__<tool>, and its prompts as <server>__<prompt>. The
client's token never goes to an upstream server; the headers in the
configuration do. Each client session has its own session with each
upstream (its own process for a command). See docs/MCP.md.`,
		Example: `  airlock mcp serve --config gateway.yaml
  airlock mcp serve --config gateway.yaml --listen 0.0.0.0:8090`,
		Args: argsNone(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if configPath == "" {
				return usageError("%s needs --config FILE: the MCP servers to serve", cmd.CommandPath())
			}
			cfg, err := LoadGatewayConfig(configPath)
			if err != nil {
				return checkFailed(err)
			}
			if listen != "" {
				cfg.Listen = listen
			}
			logger := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil)).With("component", "mcp")
			auth, release, err := gatewayAuth(cmd, cfg, logger)
			if err != nil {
				return err
			}
			defer release()
			g := &mcp.Gateway{Servers: cfg.servers(), Namespace: true, Stderr: cmd.ErrOrStderr(), Logger: logger}
			h, err := g.Handler(auth)
			if err != nil {
				return checkFailed(fmt.Errorf("airlock: %v", err))
			}
			defer h.Close()
			mux := http.NewServeMux()
			mux.Handle(cfg.Path, h)
			l, err := net.Listen("tcp", cfg.Listen)
			if err != nil {
				return checkFailed(fmt.Errorf("airlock: %v", err))
			}
			srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
			logger.Info("MCP gateway serving", "url", "http://"+l.Addr().String()+cfg.Path, "servers", len(g.Servers))
			fmt.Fprintf(cmd.OutOrStdout(), "MCP gateway at http://%s%s\n", l.Addr(), cfg.Path)
			errc := make(chan error, 1)
			go func() { errc <- srv.Serve(l) }()
			select {
			case err := <-errc:
				return checkFailed(fmt.Errorf("airlock: %v", err))
			case <-cmd.Context().Done():
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = srv.Shutdown(ctx)
			return nil
		},
	}
	cmd.Flags().StringVarP(&configPath, "config", "c", "", "the gateway's configuration (YAML; the mcpServers block MCP clients use)")
	cmd.Flags().StringVar(&listen, "listen", "", "address to listen on, overriding the configuration (default 127.0.0.1:8090)")
	return cmd
}

// gatewayAuth authenticates the gateway's clients by their agent tokens:
// with the Airlock server, or with the embedded store's tokens.
func gatewayAuth(cmd *cobra.Command, cfg GatewayConfig, logger *slog.Logger) (mcp.Authenticator, func(), error) {
	if cfg.Data != "" || cfg.Config != "" {
		e, release, err := openEmbedded(cmd, cfg.Config, cfg.Data, logger)
		if err != nil {
			return nil, nil, err
		}
		return func(ctx context.Context, token string) (string, airlock.Checker, error) {
			t, err := e.Store.TokenBySecret(ctx, airlock.HashTokenSecret(token))
			switch {
			case airlock.ErrorCode(err) == airlock.ENOTFOUND:
				return "", nil, airlock.Errorf(airlock.EUNAUTHORIZED, "unknown token")
			case err != nil:
				return "", nil, err
			case !t.Live(time.Now()):
				return "", nil, airlock.Errorf(airlock.EUNAUTHORIZED, "the token was revoked or has expired")
			case t.Role != airlock.RoleAgent:
				return "", nil, airlock.Errorf(airlock.EUNAUTHORIZED, "%s is not an agent token", t.Subject())
			}
			return t.Agent, e, nil
		}, release, nil
	}
	server := cmp.Or(cfg.Server, envOr(relay.EnvServer, relay.DefaultServer))
	return func(ctx context.Context, token string) (string, airlock.Checker, error) {
		c := client.New(server, token)
		wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		t, err := c.Whoami(wctx)
		if err != nil {
			return "", nil, err
		}
		if t.Role != airlock.RoleAgent {
			return "", nil, airlock.Errorf(airlock.EUNAUTHORIZED, "%s is not an agent token: a client's calls are one agent's", t.Subject())
		}
		return t.Agent, c, nil
	}, func() {}, nil
}

// envOr is the environment variable's value, or def.
func envOr(name, def string) string { return cmp.Or(os.Getenv(name), def) }
