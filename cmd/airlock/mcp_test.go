package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/hook/hosttest"
	"github.com/airlock-dev/airlock/mcp/mcptest"
)

// The gateway's end-to-end tests: the built airlock as `airlock mcp proxy`
// in front of real MCP servers from npm (mcp/testdata/servers), checking
// with a running Airlock server, driven by the MCP Inspector's CLI — an
// MCP client nobody here wrote.

// inspector runs the MCP Inspector's CLI against the servers of config
// (an mcpServers file) and returns its JSON answer.
type inspector struct {
	bin, config string
	env         []string
}

func (in inspector) run(t *testing.T, server string, args ...string) (map[string]any, string) {
	t.Helper()
	stdout, stderr := in.exec(t, server, args...)
	var out map[string]any
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("inspector %v: not JSON: %s\nstderr: %s", args, stdout, stderr)
	}
	return out, stdout
}

// exec runs the Inspector and returns what it printed.
func (in inspector) exec(t *testing.T, server string, args ...string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, in.bin, append([]string{"--cli", "--config", in.config, "--server", server}, args...)...)
	cmd.Env = append(os.Environ(), in.env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	_ = cmd.Run()
	return o.String(), e.String()
}

func callTool(tool string, args ...string) []string {
	out := []string{"--method", "tools/call", "--tool-name", tool}
	for _, a := range args {
		out = append(out, "--tool-arg", a)
	}
	return out
}

// TestMCPProxyInspector: `airlock mcp proxy` in front of the filesystem
// server, checking with the Airlock server, driven by the Inspector: tools
// are listed; a read runs; a write waits while a reviewer approves it
// through the API, then runs once; a rejected write never reaches the
// server; a denied move is refused with the code; with the Airlock server
// stopped every call is refused with AIRLOCK-UNAVAILABLE and none runs.
func TestMCPProxyInspector(t *testing.T) {
	ins := mcptest.Bin(t, "mcp-inspector")
	fs := mcptest.Bin(t, "mcp-server-filesystem")
	s := newPolicyServer(t, "mcp.yaml")
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "notes.txt"), []byte("airlock-marker\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// As docs/MCP.md says to write it: the client starts the proxy with a
	// minimal environment, so the proxy's arguments name the server and the
	// token's file.
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "agent.token")
	if err := os.WriteFile(tokenFile, []byte(s.host+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "mcp.json")
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"fs": map[string]any{
		"command": airlockBinary(t), "args": []string{"mcp", "proxy", "--name", "fs", "--server", s.url, "--token-file", tokenFile, "--", fs, root}}}})
	if err := os.WriteFile(config, b, 0o644); err != nil {
		t.Fatal(err)
	}
	in := inspector{bin: ins, config: config, env: []string{"MCP_INSPECTOR_SECRET_STORE=memory"}}

	out, raw := in.run(t, "fs", "--method", "tools/list")
	if tools, _ := out["tools"].([]any); len(tools) < 10 || !strings.Contains(raw, `"write_file"`) {
		t.Fatalf("tools/list: %s", raw)
	}
	out, raw = in.run(t, "fs", callTool("read_text_file", "path="+filepath.Join(root, "notes.txt"))...)
	if out["isError"] == true || !strings.Contains(raw, "airlock-marker") {
		t.Fatalf("read_text_file: %s", raw)
	}

	write := func(name string, status airlock.ApprovalStatus) (map[string]any, string) {
		done := make(chan [2]any, 1)
		go func() {
			out, raw := in.run(t, "fs", callTool("write_file", "path="+filepath.Join(root, name), "content=yes")...)
			done <- [2]any{out, raw}
		}()
		ap, err := pendingFor(t.Context(), s, name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(root, name)); err == nil {
			t.Fatalf("%s was written before anyone decided", name)
		}
		if _, err := client.New(s.url, s.bob).Resolve(t.Context(), ap.ID, status, ap.ActionHash, "", airlock.SurfaceAPI); err != nil {
			t.Fatal(err)
		}
		r := <-done
		return r[0].(map[string]any), r[1].(string)
	}
	out, raw = write("approved.txt", airlock.StatusApproved)
	if out["isError"] == true {
		t.Fatalf("the approved write: %s", raw)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "approved.txt")); string(b) != "yes" {
		t.Errorf("approved.txt holds %q", b)
	}
	out, raw = write("rejected.txt", airlock.StatusRejected)
	if out["isError"] != true || !strings.Contains(raw, airlock.CodeRejected) {
		t.Fatalf("the rejected write: %s", raw)
	}
	if _, err := os.Stat(filepath.Join(root, "rejected.txt")); err == nil {
		t.Error("the rejected write ran")
	}
	out, raw = in.run(t, "fs", callTool("move_file", "source="+filepath.Join(root, "notes.txt"), "destination="+filepath.Join(root, "moved.txt"))...)
	if out["isError"] != true || !strings.Contains(raw, airlock.CodeDenied) || !strings.Contains(raw, "no-moves") {
		t.Fatalf("move_file: %s", raw)
	}
	page, err := client.New(s.url, s.admin).Events(t.Context(), airlock.EventFilter{Kind: airlock.EventActionExecuted, Agent: "host-1", Limit: 10})
	if err != nil || len(page.Events) != 2 || !strings.Contains(string(page.Events[0].Payload), `"decision_seq"`) ||
		page.Events[1].Outcome != "ok" || page.Events[1].ApprovalID == "" {
		t.Errorf("executions: %v %v, want the read's, linked to its decision, and the approved write's, linked to its approval", page.Events, err)
	}

	// The Airlock server stops: nothing is offered, nothing runs.
	s.main.Close()
	stdout, stderr := in.exec(t, "fs", callTool("read_text_file", "path="+filepath.Join(root, "notes.txt"))...)
	if !strings.Contains(stdout+stderr, airlock.CodeUnavailable) || strings.Contains(stdout, "airlock-marker") {
		t.Fatalf("with the Airlock server stopped, a read answered:\n%s\n%s", stdout, stderr)
	}
}

// TestMCPProxyInspectorResourcesAndPrompts: `airlock mcp proxy` in front
// of the reference server, driven by the Inspector: a resources/read and a
// prompts/get are held while a reviewer decides through the API — the
// approved read returns the server's text and is recorded, the rejected
// prompt is refused with the code and never reaches the server.
func TestMCPProxyInspectorResourcesAndPrompts(t *testing.T) {
	ins := mcptest.Bin(t, "mcp-inspector")
	everything := mcptest.Bin(t, "mcp-server-everything")
	s := newPolicyServer(t, "mcp-resources.yaml")
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "agent.token")
	if err := os.WriteFile(tokenFile, []byte(s.host+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "mcp.json")
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"everything": map[string]any{
		"command": airlockBinary(t), "args": []string{"mcp", "proxy", "--name", "everything", "--server", s.url, "--token-file", tokenFile, "--", everything}}}})
	if err := os.WriteFile(config, b, 0o644); err != nil {
		t.Fatal(err)
	}
	in := inspector{bin: ins, config: config, env: []string{"MCP_INSPECTOR_SECRET_STORE=memory"}}
	held := func(what string, status airlock.ApprovalStatus, args ...string) (string, airlock.Approval) {
		t.Helper()
		done := make(chan string, 1)
		go func() {
			stdout, stderr := in.exec(t, "everything", args...)
			done <- stdout + stderr
		}()
		ap, err := pendingFor(t.Context(), s, what)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := client.New(s.url, s.bob).Resolve(t.Context(), ap.ID, status, ap.ActionHash, "", airlock.SurfaceAPI); err != nil {
			t.Fatal(err)
		}
		return <-done, ap
	}
	const uri = "demo://resource/static/document/architecture.md"
	out, read := held(uri, airlock.StatusApproved, "--method", "resources/read", "--uri", uri)
	if !strings.Contains(out, "Architecture") || read.Tool != "mcp__everything__resources/read" || read.Class != "mcp.resource.read" {
		t.Fatalf("the approved resources/read (%s, %s): %s", read.Tool, read.Class, out)
	}
	out, prompt := held("Lyon", airlock.StatusRejected, "--method", "prompts/get", "--prompt-name", "args-prompt", "--prompt-args", "city=Lyon")
	if !strings.Contains(out, airlock.CodeRejected) || strings.Contains(out, "weather in Lyon") || prompt.Tool != "mcp__everything__prompts/get" {
		t.Fatalf("the rejected prompts/get (%s): %s", prompt.Tool, out)
	}
	page, err := client.New(s.url, s.admin).Events(t.Context(), airlock.EventFilter{Kind: airlock.EventActionExecuted, Agent: "host-1", Limit: 10})
	if err != nil || len(page.Events) != 1 || page.Events[0].ApprovalID != read.ID {
		t.Errorf("executions: %v %v, want the approved read's alone", page.Events, err)
	}
}

// TestRealClaudeMCP: Claude Code itself as the MCP client, its MCP
// configuration naming `airlock mcp proxy` in front of the filesystem
// server, one real turn against a scripted model: the model reads a file
// and is shown its text, writes one that waits while a reviewer approves it
// through the API and then exists, and is told the code of a denied move.
func TestRealClaudeMCP(t *testing.T) {
	hosttest.Require(t, hosttest.Claude)
	fs := mcptest.Bin(t, "mcp-server-filesystem")
	bin := airlockBinary(t)
	s := newPolicyServer(t, "mcp.yaml")
	dir, home := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("claude-mcp-marker\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tokenFile := filepath.Join(home, "agent.token")
	if err := os.WriteFile(tokenFile, []byte(s.host), 0o600); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(home, "mcp.json")
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"fs": map[string]any{
		"command": bin, "args": []string{"mcp", "proxy", "--name", "fs", "--server", s.url, "--token-file", tokenFile, "--", fs, dir}}}})
	if err := os.WriteFile(config, b, 0o644); err != nil {
		t.Fatal(err)
	}
	approved := make(chan error, 1)
	go func() {
		ap, err := pendingFor(t.Context(), s, "approved.txt")
		if err == nil {
			_, err = client.New(s.url, s.bob).Resolve(t.Context(), ap.ID, airlock.StatusApproved, ap.ActionHash, "ok", airlock.SurfaceAPI)
		}
		approved <- err
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	calls := []hosttest.Call{
		{Tool: "mcp__fs__read_text_file", Input: map[string]any{"path": filepath.Join(dir, "notes.txt")}},
		{Tool: "mcp__fs__write_file", Input: map[string]any{"path": filepath.Join(dir, "approved.txt"), "content": "yes"}},
		{Tool: "mcp__fs__move_file", Input: map[string]any{"source": filepath.Join(dir, "notes.txt"), "destination": filepath.Join(dir, "moved.txt")}},
	}
	turn, err := hosttest.RunClaude(ctx, hosttest.Options{Dir: dir, Home: home, Calls: calls,
		ExtraArgs: []string{"--mcp-config", config, "--strict-mcp-config", "--allowedTools", "mcp__fs"}})
	if err != nil || len(turn.Results) != len(calls) {
		t.Fatalf("turn: %v\n%s", err, turn)
	}
	if err := <-approved; err != nil {
		t.Fatalf("approve: %v (no write was held; the model was told %s)", err, turn)
	}
	if r := turn.Results[0]; r.IsError || !strings.Contains(r.Output, "claude-mcp-marker") {
		t.Errorf("read_text_file: the model was told %q", r.Output)
	}
	if r := turn.Results[1]; r.IsError {
		t.Errorf("the approved write: the model was told %q", r.Output)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "approved.txt")); string(b) != "yes" {
		t.Errorf("approved.txt holds %q", b)
	}
	if r := turn.Results[2]; !strings.Contains(r.Output, airlock.CodeDenied) || !strings.Contains(r.Output, "no-moves") {
		t.Errorf("move_file: the model was told %q, want %s and the rule", r.Output, airlock.CodeDenied)
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); err != nil {
		t.Error("the denied move ran")
	}
}

// TestMCPProxyRunNow: the built proxy, deciding with the Airlock server,
// runs a proposal the moment a reviewer approves it to run now through
// the API — the proxy learns of it from the server's event stream — and
// the server keeps what the tool returned with the request.
func TestMCPProxyRunNow(t *testing.T) {
	fs := mcptest.Bin(t, "mcp-server-filesystem")
	s := newPolicyServer(t, "mcp.yaml")
	root := t.TempDir()
	tokenFile := filepath.Join(t.TempDir(), "agent.token")
	if err := os.WriteFile(tokenFile, []byte(s.host), 0o600); err != nil {
		t.Fatal(err)
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil)
	cmd := exec.Command(airlockBinary(t), "mcp", "proxy", "--name", "fs", "--server", s.url, "--token-file", tokenFile, "--", fs, root)
	cs, err := c.Connect(t.Context(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	dir := filepath.Join(root, "later")
	r, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "create_directory", Arguments: map[string]any{"path": dir}})
	if err != nil || !r.IsError || !strings.Contains(textOf(r), airlock.CodeSuggested) {
		t.Fatalf("create_directory: %+v %v, want a proposal", r, err)
	}
	ap, err := pendingFor(t.Context(), s, "later")
	if err != nil {
		t.Fatal(err)
	}
	// Bob approves it to run now from the CLI, which waits for the run and
	// prints what the tool returned.
	t.Setenv("AIRLOCK_TOKEN", s.bob)
	code, stdout, stderr := runCLI(t, "approvals", "approve", ap.ID, "--run-now", "--server", s.url)
	if code != exitOK || !strings.Contains(stdout, "the MCP gateway that holds the tool runs it now, once") ||
		!strings.Contains(stdout, "run:          ok, ") || !strings.Contains(stdout, "Successfully created directory") {
		t.Fatalf("approve --run-now: exit %d\n%s%s", code, stdout, stderr)
	}
	// The request carries the run with what it returned: in the API, and
	// in approvals show.
	d, err := client.New(s.url, s.bob).ApprovalRuns(t.Context(), ap.ID)
	if err != nil || len(d.Runs) != 1 || d.Runs[0].Status != "ok" || !strings.Contains(d.Runs[0].ResultText(), "Successfully created directory") {
		t.Fatalf("GET /v1/approvals/%s: %+v %v", ap.ID, d.Runs, err)
	}
	wantRun(t, []string{"approvals", "show", ap.ID, "--server", s.url}, exitOK, "run:          ok, ", "  returned:\n    Successfully created directory")
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("the directory: %v", err)
	}
}
