package catalog

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/mcpcatalog"
	"github.com/airlock-dev/airlock/shell"
)

// TestMCPCatalogue: every tool of the MCP server catalogue resolves to a
// class Airlock has, with its capability and a tier not below the class's;
// every server cites where its tools were read.
func TestMCPCatalogue(t *testing.T) {
	toolName := regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`) // MCP's rule for tool names
	servers := mcpcatalog.Servers()
	for _, want := range []string{"filesystem", "git", "fetch", "memory", "time", "everything", "github", "playwright", "postgres", "slack"} {
		if !mcpcatalog.Known(want) {
			t.Errorf("the catalogue has no %s server", want)
		}
	}
	n := 0
	for _, s := range servers {
		if s.Source == "" || len(s.Match) == 0 || len(s.Tools) == 0 {
			t.Errorf("server %s: source %q, %d matches, %d tools", s.Name, s.Source, len(s.Match), len(s.Tools))
		}
		for _, tool := range s.Tools {
			n++
			if !toolName.MatchString(tool.Name) {
				t.Errorf("%s: %q is no MCP tool name", s.Name, tool.Name)
			}
			if _, err := resolveMCPTool(tool); err != nil {
				t.Error(err)
			}
			if knownMCPTools()[s.Name+"\x00"+tool.Name] == nil {
				t.Errorf("%s of %s is not resolved", tool.Name, s.Name)
			}
			if tool.What == "" {
				t.Errorf("%s of %s has no reason", tool.Name, s.Name)
			}
		}
	}
	t.Logf("%d servers, %d tools", len(servers), n)
}

// TestMCPCatalogueBadEntries: an entry with a class Airlock does not have,
// or a tier below its class's, does not resolve (its calls stay mcp.call).
func TestMCPCatalogueBadEntries(t *testing.T) {
	for _, tool := range []mcpcatalog.Tool{
		{Server: "x", Name: "a", Class: "fs.reed", Tier: "read"},
		{Server: "x", Name: "b", Class: "fs.write", Tier: "read"},
		{Server: "x", Name: "c", Class: "credentials.read", Tier: "write"},
		{Server: "x", Name: "d", Class: "fs.read", Tier: "harmless"},
		{Server: "x", Name: "e", Class: "unknown", Tier: "privileged"},
	} {
		if _, err := resolveMCPTool(tool); err == nil {
			t.Errorf("%+v resolved", tool)
		}
	}
}

// classifyKnown classifies a call of tool on an MCP server named fs that
// the action says is the catalogue's known.
func classifyKnown(t *testing.T, known, tool, cwd string, args map[string]any) airlock.Classification {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	a := airlock.Action{Agent: "a", Tool: MCPTool("fs", tool), Cwd: cwd, Args: raw, MCPServer: known}
	if err := a.Validate(); err != nil {
		t.Fatal(err)
	}
	return Classify(shell.Analyser{}, &a, nil, nil)
}

// TestCatalogKnownMCPServers: a known server's tools are classified like
// the built-in tools: their paths as Read's and Write's, their URLs as
// WebFetch's; a tool the catalogue does not list, a server it does not
// know, or a call that does not say which server it is, stays mcp.call.
func TestCatalogKnownMCPServers(t *testing.T) {
	for _, tc := range []struct {
		name        string
		known, tool string
		args        map[string]any
		class       airlock.Class
		tier        airlock.RiskTier
	}{
		{"a read", "filesystem", "read_text_file", map[string]any{"path": "/work/app/README.md"}, airlock.ClassFSRead, airlock.TierRead},
		{"a relative read", "filesystem", "read_text_file", map[string]any{"path": "README.md"}, airlock.ClassFSRead, airlock.TierRead},
		{"a private key", "filesystem", "read_text_file", map[string]any{"path": "~/.ssh/id_rsa"}, airlock.ClassCredentialsRead, airlock.TierPrivileged},
		{"a private key by its full path", "filesystem", "read_file", map[string]any{"path": "/home/dev/.ssh/id_ed25519"}, airlock.ClassCredentialsRead, airlock.TierPrivileged},
		{"a key through ..", "filesystem", "read_text_file", map[string]any{"path": "/work/app/../../home/dev/.aws/credentials"}, airlock.ClassCredentialsRead, airlock.TierPrivileged},
		{"a secret among files", "filesystem", "read_multiple_files", map[string]any{"paths": []string{"/work/a.txt", "/work/.env"}}, airlock.ClassCredentialsRead, airlock.TierPrivileged},
		{"a media file", "filesystem", "read_media_file", map[string]any{"path": "/work/logo.png"}, airlock.ClassFSRead, airlock.TierRead},
		{"a listing", "filesystem", "list_directory", map[string]any{"path": "/work"}, airlock.ClassFSRead, airlock.TierRead},
		{"the allowed directories", "filesystem", "list_allowed_directories", nil, airlock.ClassFSRead, airlock.TierRead},
		{"a write", "filesystem", "write_file", map[string]any{"path": "/work/notes.txt", "content": "x"}, airlock.ClassFSWrite, airlock.TierWrite},
		{"an edit", "filesystem", "edit_file", map[string]any{"path": "/work/main.go", "edits": []any{}}, airlock.ClassFSWrite, airlock.TierWrite},
		{"the gate's settings", "filesystem", "write_file", map[string]any{"path": "/work/.claude/settings.json", "content": "{}"}, airlock.ClassGateConfigure, airlock.TierPrivileged},
		{"the gate's settings, edited", "filesystem", "edit_file", map[string]any{"path": "/work/.mcp.json"}, airlock.ClassGateConfigure, airlock.TierPrivileged},
		{"a system file", "filesystem", "write_file", map[string]any{"path": "/etc/hosts", "content": "x"}, airlock.ClassFSWrite, airlock.TierPrivileged},
		{"a directory", "filesystem", "create_directory", map[string]any{"path": "/work/new"}, airlock.ClassFSMkdir, airlock.TierWrite},
		{"a move", "filesystem", "move_file", map[string]any{"source": "/work/a", "destination": "/work/b"}, airlock.ClassFSMove, airlock.TierWrite},
		{"a key moved out", "filesystem", "move_file", map[string]any{"source": "/home/dev/.ssh/id_rsa", "destination": "/work/k"}, airlock.ClassCredentialsRead, airlock.TierPrivileged},
		{"a move onto the gate's settings", "filesystem", "move_file", map[string]any{"source": "/work/a", "destination": "/work/.claude/settings.local.json"}, airlock.ClassGateConfigure, airlock.TierPrivileged},
		{"a fetch", "fetch", "fetch", map[string]any{"url": "https://example.com"}, airlock.ClassNetHTTP, airlock.TierNetworkEgress},
		{"a fetch of a file: URL of a key", "fetch", "fetch", map[string]any{"url": "file:///home/dev/.ssh/id_rsa"}, airlock.ClassCredentialsRead, airlock.TierPrivileged},
		{"a browser at a key", "playwright", "browser_navigate", map[string]any{"url": "FILE:///home/dev/.s%73h/id_rsa"}, airlock.ClassCredentialsRead, airlock.TierPrivileged},
		{"a file: URL of another host", "playwright", "browser_navigate", map[string]any{"url": "file://server/share/x"}, airlock.ClassCredentialsRead, airlock.TierPrivileged},
		{"a browser at a page", "playwright", "browser_navigate", map[string]any{"url": "https://example.com"}, airlock.ClassNetHTTP, airlock.TierNetworkEgress},
		{"an upload of a key", "playwright", "browser_file_upload", map[string]any{"paths": []string{"/home/dev/.aws/credentials"}}, airlock.ClassCredentialsRead, airlock.TierPrivileged},
		{"a screenshot over the gate's settings", "playwright", "browser_take_screenshot", map[string]any{"filename": ".claude/settings.json"}, airlock.ClassGateConfigure, airlock.TierPrivileged},
		{"git status", "git", "git_status", map[string]any{"repo_path": "/work/app"}, airlock.ClassGitRead, airlock.TierRead},
		{"git add of a key", "git", "git_add", map[string]any{"repo_path": "/work/app", "files": []string{".env"}}, airlock.ClassCredentialsRead, airlock.TierPrivileged},
		{"git commit", "git", "git_commit", map[string]any{"repo_path": "/work/app", "message": "x"}, airlock.ClassGitWrite, airlock.TierWrite},
		{"memory read", "memory", "read_graph", nil, airlock.ClassFSRead, airlock.TierRead},
		{"memory delete", "memory", "delete_entities", map[string]any{"entityNames": []string{"a"}}, airlock.ClassStoreWrite, airlock.TierDestructive},
		{"the time", "time", "get_current_time", map[string]any{"timezone": "UTC"}, airlock.ClassAgentStateWrite, airlock.TierRead},
		{"the environment", "everything", "get-env", nil, airlock.ClassCredentialsRead, airlock.TierPrivileged},
		{"an echo", "everything", "echo", map[string]any{"message": "hi"}, airlock.ClassAgentStateWrite, airlock.TierRead},
		{"a GitHub issue", "github", "issue_write", map[string]any{"method": "create", "title": "x"}, airlock.ClassNetHTTP, airlock.TierNetworkEgress},
		{"a GitHub label deleted", "github", "label_write", map[string]any{"method": "delete", "name": "x"}, airlock.ClassNetHTTP, airlock.TierDestructive},
		{"a GitHub label created", "github", "label_write", map[string]any{"method": "create", "name": "x"}, airlock.ClassNetHTTP, airlock.TierNetworkEgress},
		{"a GitHub repository deleted", "github", "delete_repository", map[string]any{"owner": "o", "repo": "r"}, airlock.ClassNetHTTP, airlock.TierDestructive},
		{"a GitHub path is not a local one", "github", "get_file_contents", map[string]any{"path": ".ssh/id_rsa"}, airlock.ClassNetHTTP, airlock.TierNetworkEgress},
		{"a leaked secret", "github", "get_secret_scanning_alert", map[string]any{"alertNumber": 1}, airlock.ClassCredentialsRead, airlock.TierPrivileged},
		{"Copilot's agent", "github", "assign_copilot_to_issue", map[string]any{"issue_number": 1}, airlock.ClassHostCall, airlock.TierPrivileged},
		{"SQL", "postgres", "query", map[string]any{"sql": "SELECT 1"}, airlock.ClassStoreWrite, airlock.TierDestructive},
		{"Slack", "slack", "slack_post_message", map[string]any{"channel_id": "C1", "text": "hi"}, airlock.ClassNetHTTP, airlock.TierNetworkEgress},
		// What stays as an unknown server's call.
		{"a tool the catalogue does not list", "filesystem", "format_disk", nil, airlock.ClassMCPCall, airlock.TierWrite},
		{"a server the catalogue does not know", "notes", "read_text_file", map[string]any{"path": "a"}, airlock.ClassMCPCall, airlock.TierWrite},
		{"no server named", "", "read_text_file", map[string]any{"path": "a"}, airlock.ClassMCPCall, airlock.TierWrite},
		{"another server's tool", "fetch", "read_text_file", map[string]any{"path": "a"}, airlock.ClassMCPCall, airlock.TierWrite},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := classifyKnown(t, tc.known, tc.tool, "/work", tc.args)
			if c.Class != tc.class || c.Tier != tc.tier {
				t.Errorf("%s of %q: %s (%s), want %s (%s): %s", tc.tool, tc.known, c.Class, c.Tier, tc.class, tc.tier, c.Reason)
			}
			if known := tc.class != airlock.ClassMCPCall; c.Generic == known {
				t.Errorf("generic %t", c.Generic)
			}
		})
	}
	// Without a working directory, a relative path may be in a home
	// directory: the filesystem server resolves it against the directories
	// it may reach.
	for _, tc := range []struct {
		tool, path string
		class      airlock.Class
		tier       airlock.RiskTier
	}{
		{"read_text_file", ".aws/credentials", airlock.ClassCredentialsRead, airlock.TierPrivileged},
		{"read_text_file", "README.md", airlock.ClassFSRead, airlock.TierRead},
		{"write_file", ".bashrc", airlock.ClassFSWrite, airlock.TierPrivileged},
		{"write_file", ".claude/settings.json", airlock.ClassGateConfigure, airlock.TierPrivileged},
		{"write_file", "notes.txt", airlock.ClassFSWrite, airlock.TierWrite},
	} {
		c := classifyKnown(t, "filesystem", tc.tool, "", map[string]any{"path": tc.path})
		if c.Class != tc.class || c.Tier != tc.tier {
			t.Errorf("%s %s without a cwd: %s (%s), want %s (%s)", tc.tool, tc.path, c.Class, c.Tier, tc.class, tc.tier)
		}
	}
	// The server's name for the tool is not the catalogue's: a built-in
	// tool named with mcp_server, or Gemini's form, stays as it was.
	for _, tool := range []string{"Read", "mcp_fs_read_text_file"} {
		a := airlock.Action{Agent: "a", Tool: tool, Args: airlock.MustArgs(map[string]any{"path": "a", "file_path": "a"}), MCPServer: "filesystem"}
		if c := Classify(shell.Analyser{}, &a, nil, nil); c.Source == "mcp catalog" {
			t.Errorf("%s: %s from the MCP catalogue", tool, c)
		}
	}
}

// TestActionHashMCPServer: the server an MCP call runs on is part of what
// an approval binds; an action without one hashes as before it existed.
func TestActionHashMCPServer(t *testing.T) {
	a := airlock.Action{Agent: "a", Tool: "mcp__fs__write_file", Args: airlock.MustArgs(map[string]any{"path": "/w/a"})}
	before, err := a.Hash()
	if err != nil {
		t.Fatal(err)
	}
	canon, _ := a.CanonicalJSON()
	if got, want := string(canon), `{"agent":"a","args":{"path":"/w/a"},"cwd":"","hints":null,"requested_by":"","session_id":"","tool":"mcp__fs__write_file"}`; got != want {
		t.Errorf("canonical JSON %s, want %s", got, want)
	}
	a.MCPServer = "filesystem"
	after, err := a.Hash()
	if err != nil {
		t.Fatal(err)
	}
	if before == after {
		t.Error("mcp_server does not change the hash")
	}
	canon, _ = a.CanonicalJSON()
	var v map[string]any
	if err := json.Unmarshal(canon, &v); err != nil || v["mcp_server"] != "filesystem" {
		t.Errorf("canonical JSON %s: %v", canon, err)
	}
	a.MCPServer = "file\x00system"
	if err := a.Validate(); err == nil {
		t.Error("a control character in mcp_server is valid")
	}
}
