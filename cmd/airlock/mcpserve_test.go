package main

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-dev/airlock/mcp/mcptest"
)

// TestLoadGatewayConfig: a client's mcpServers block is accepted as it is,
// ${ENV} expanded; every mistake is reported at its file:line:col.
func TestLoadGatewayConfig(t *testing.T) {
	t.Setenv("SEARCH_KEY", "k-123")
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.yaml", `server: http://127.0.0.1:8080
mcpServers:
  fs:
    type: stdio
    command: npx
    args: ["-y", "@modelcontextprotocol/server-filesystem", "/work"]
    env: {DEBUG: "1"}
    cwd: work
    alwaysAllow: [read_file]
  search:
    url: https://mcp.example.com/mcp
    headers: {Authorization: "Bearer ${SEARCH_KEY}"}
  myfs:
    command: ./my-fs-fork
    catalog: none
  old:
    command: old-server
    disabled: true
`)
	c, err := LoadGatewayConfig(good)
	if err != nil {
		t.Fatal(err)
	}
	srvs := c.servers()
	if c.Listen != "127.0.0.1:8090" || c.Path != "/mcp" || len(srvs) != 3 || srvs[0].Name != "fs" || srvs[1].Name != "myfs" || srvs[2].Name != "search" {
		t.Fatalf("config: %+v, servers %+v", c, srvs)
	}
	// The gateway knows the filesystem server by its package; the fork is
	// declared not to be it; the search server is none the catalogue knows.
	if srvs[0].Known() != "filesystem" || srvs[1].Known() != "" || srvs[2].Known() != "" {
		t.Errorf("known as %q, %q, %q", srvs[0].Known(), srvs[1].Known(), srvs[2].Known())
	}
	srvs = append(srvs[:1], srvs[2:]...)
	if srvs[0].Dir != filepath.Join(dir, "work") || srvs[0].Env[0] != "DEBUG=1" || srvs[1].Headers["Authorization"] != "Bearer k-123" {
		t.Errorf("servers: %+v", srvs)
	}
	for _, c := range []struct{ name, text, want string }{
		{"no servers", "listen: 127.0.0.1:9000\n", "no-servers.yaml:1:1: mcpServers: list the MCP servers"},
		{"sse", "mcpServers:\n  a:\n    type: sse\n    url: http://x/sse\n", "sse.yaml:3:11: mcpServers.a.type: SSE servers are not supported"},
		{"both", "mcpServers:\n  a:\n    command: x\n    url: http://x/mcp\n", "both.yaml:3:5: mcpServers.a: server a: give a command or a url, not both"},
		{"bad name", "mcpServers:\n  a__b:\n    command: x\n", "bad-name.yaml:3:5: mcpServers.a__b: server name \"a__b\""},
		{"typo", "mcpServers:\n  a:\n    comand: x\n", "typo.yaml:3:5: unknown field \"comand\" (did you mean \"command\"?"},
		{"unset env", "mcpServers:\n  a:\n    url: ${NOT_SET_ANYWHERE}\n", "unset-env.yaml:3:10:"},
		{"bad catalog", "mcpServers:\n  a:\n    command: x\n    catalog: filesytem\n", `bad-catalog.yaml:4:14: mcpServers.a.catalog: catalog "filesytem" is not a server Airlock knows (everything, fetch, filesystem,`},
		{"server and data", "server: http://h:1\ndata: d\nmcpServers: {a: {command: x}}\n", "server-and-data.yaml:1:9: server: give server, or data and config, not both"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := LoadGatewayConfig(write(strings.ReplaceAll(c.name, " ", "-")+".yaml", c.text))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want %q", err, c.want)
			}
		})
	}
}

// TestMCPServeBinary: the built `airlock mcp serve` in front of two servers
// from npm, checking with a running Airlock server: a client with the
// agent's token sees both servers' tools by their <server>__<tool> names
// and calls them; one without is refused.
func TestMCPServeBinary(t *testing.T) {
	fs := mcptest.Bin(t, "mcp-server-filesystem")
	everything := mcptest.Bin(t, "mcp-server-everything")
	s := newPolicyServer(t, "mcp.yaml")
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "notes.txt"), []byte("served-marker\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(t.TempDir(), "gateway.yaml")
	if err := os.WriteFile(config, []byte(`listen: 127.0.0.1:0
server: `+s.url+`
mcpServers:
  fs: {command: `+fs+`, args: [`+root+`]}
  everything: {command: `+everything+`}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	cmd := exec.CommandContext(ctx, airlockBinary(t), "mcp", "serve", "--config", config)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	first := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		first <- line
	}()
	var url string
	select {
	case line := <-first:
		url = strings.TrimSpace(strings.TrimPrefix(line, "MCP gateway at "))
	case <-time.After(30 * time.Second):
		t.Fatal("airlock mcp serve did not say where it listens")
	}
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("airlock mcp serve said %q", url)
	}

	connect := func(token string) (*sdk.ClientSession, error) {
		c := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil)
		return c.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: url, MaxRetries: -1,
			HTTPClient: &http.Client{Transport: tokenTransport(token)}}, nil)
	}
	if _, err := connect(s.bob); err == nil {
		t.Error("a reviewer's token opened a session: a client's calls are an agent's")
	}
	cs, err := connect(s.host)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	all := strings.Join(names, " ")
	if !strings.Contains(all, "fs__read_text_file") || !strings.Contains(all, "everything__echo") {
		t.Fatalf("tools: %s", all)
	}
	r, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "fs__read_text_file", Arguments: map[string]any{"path": filepath.Join(root, "notes.txt")}})
	if err != nil || r.IsError || !strings.Contains(textOf(r), "served-marker") {
		t.Fatalf("fs__read_text_file: %+v %v", r, err)
	}
	r, err = cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "fs__move_file", Arguments: map[string]any{"source": filepath.Join(root, "notes.txt"), "destination": filepath.Join(root, "x")}})
	if err != nil || !r.IsError || !strings.Contains(textOf(r), "AIRLOCK-DENIED") {
		t.Fatalf("fs__move_file: %+v %v", r, err)
	}
}

// tokenTransport sends a bearer token with every request.
type tokenTransport string

func (tt tokenTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(tt))
	return http.DefaultTransport.RoundTrip(r)
}

func textOf(r *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}
