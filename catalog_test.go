package airlock

import (
	"encoding/json"
	"strings"
	"testing"
)

// classifyForTest classifies a call with the built-in catalog and the shell
// analyser alone.
func classifyForTest(t *testing.T, tool, cwd string, args map[string]any) Classification {
	t.Helper()
	a := Action{Agent: "a", Tool: tool, Cwd: cwd}
	if args != nil {
		raw, err := json.Marshal(args)
		if err != nil {
			t.Fatal(err)
		}
		a.Args = raw
	}
	if err := a.Validate(); err != nil {
		t.Fatal(err)
	}
	return classifyBuiltin(ShellForTests, &activation{a: &a}, nil)
}

// The tools each agent host ships, with the arguments that host sends
// (Claude Code 2.1.197, Gemini CLI 0.61.0, Codex 0.169.0; see
// hook/testdata/hosts).
func TestCatalogHostTools(t *testing.T) {
	for _, tc := range []struct {
		host, tool string
		args       map[string]any
		class      Class
		tier       RiskTier
	}{
		// The builtins.
		{"builtin", "delete_file", map[string]any{"path": "build/out.o"}, ClassFSDelete, TierDestructive},
		{"builtin", "delete_file", map[string]any{"path": "/etc/sudoers"}, ClassFSDelete, TierPrivileged},
		// Claude Code.
		{"claude", "Bash", map[string]any{"command": "ls"}, ClassFSRead, TierRead},
		{"claude", "PowerShell", map[string]any{"command": "Get-ChildItem"}, ClassProcessExec, TierPrivileged},
		{"claude", "Monitor", map[string]any{"command": "tail -f log.txt", "description": "log", "timeout_ms": 1000, "persistent": false}, ClassFSRead, TierRead},
		{"claude", "Monitor", map[string]any{"command": "rm -rf build", "description": "x", "timeout_ms": 1000, "persistent": false}, ClassFSDelete, TierDestructive},
		{"claude", "Monitor", map[string]any{"ws": map[string]any{"url": "wss://example.com"}, "description": "x", "timeout_ms": 1000, "persistent": false}, ClassNetConnect, TierNetworkEgress},
		{"claude", "REPL", map[string]any{"code": "1+1"}, ClassProcessExec, TierWrite},
		{"claude", "Agent", map[string]any{"description": "d", "prompt": "p", "subagent_type": "general-purpose"}, ClassHostCall, TierWrite},
		{"claude", "Agent", map[string]any{"description": "d", "prompt": "p", "isolation": "remote"}, ClassHostCall, TierPrivileged},
		{"claude", "Agent", map[string]any{"description": "d", "prompt": "p", "isolation": "worktree"}, ClassHostCall, TierWrite},
		{"claude", "Task", map[string]any{"description": "d", "prompt": "p"}, ClassHostCall, TierWrite},
		{"claude", "Workflow", map[string]any{"name": "review"}, ClassHostCall, TierWrite},
		{"claude", "SendMessage", map[string]any{"to": "x", "message": "m"}, ClassHostCall, TierWrite},
		{"claude", "Skill", map[string]any{"skill": "pdf"}, ClassHostCall, TierWrite},
		{"claude", "TaskOutput", map[string]any{"task_id": "1", "block": true, "timeout": 1000}, ClassFSRead, TierRead},
		{"claude", "BashOutput", map[string]any{"bash_id": "1"}, ClassFSRead, TierRead},
		{"claude", "TaskStop", map[string]any{"task_id": "1"}, ClassProcessKill, TierWrite},
		{"claude", "KillShell", map[string]any{"shell_id": "1"}, ClassProcessKill, TierWrite},
		{"claude", "Read", map[string]any{"file_path": "/w/main.go"}, ClassFSRead, TierRead},
		{"claude", "Read", map[string]any{"file_path": "/home/u/.aws/credentials"}, ClassCredentialsRead, TierPrivileged},
		{"claude", "Grep", map[string]any{"pattern": "x", "path": "src"}, ClassFSRead, TierRead},
		{"claude", "Glob", map[string]any{"pattern": "*.go"}, ClassFSRead, TierRead},
		{"claude", "LSP", map[string]any{"file_path": "main.go"}, ClassFSRead, TierRead},
		{"claude", "Edit", map[string]any{"file_path": "/w/a.go", "old_string": "a", "new_string": "b"}, ClassFSWrite, TierWrite},
		{"claude", "Write", map[string]any{"file_path": "/etc/hosts", "content": "x"}, ClassFSWrite, TierPrivileged},
		{"claude", "MultiEdit", map[string]any{"file_path": "/w/a.go", "edits": []any{}}, ClassFSWrite, TierWrite},
		{"claude", "NotebookEdit", map[string]any{"notebook_path": "/w/n.ipynb", "new_source": "x"}, ClassFSWrite, TierWrite},
		{"claude", "WebFetch", map[string]any{"url": "https://example.com", "prompt": "p"}, ClassNetHTTP, TierNetworkEgress},
		{"claude", "WebSearch", map[string]any{"query": "q"}, ClassNetHTTP, TierNetworkEgress},
		{"claude", "Artifact", map[string]any{"file_path": "report.html", "favicon": "x"}, ClassNetHTTP, TierNetworkEgress},
		{"claude", "Artifact", map[string]any{"file_path": "/w/.env", "favicon": "x"}, ClassCredentialsRead, TierPrivileged},
		{"claude", "SendUserFile", map[string]any{"file_paths": []any{"shot.png"}}, ClassNetHTTP, TierNetworkEgress},
		{"claude", "Projects", map[string]any{"method": "project_read", "path": "doc.md"}, ClassNetHTTP, TierNetworkEgress},
		{"claude", "Projects", map[string]any{"method": "project_write", "local_path": "/home/u/.ssh/id_rsa"}, ClassCredentialsRead, TierPrivileged},
		{"claude", "Projects", map[string]any{"method": "project_delete", "path": "doc.md"}, ClassNetHTTP, TierDestructive},
		{"claude", "DesignSync", map[string]any{}, ClassNetHTTP, TierNetworkEgress},
		{"claude", "ShareOnboardingGuide", map[string]any{}, ClassNetHTTP, TierNetworkEgress},
		{"claude", "RemoteTrigger", map[string]any{"action": "list"}, ClassNetHTTP, TierNetworkEgress},
		{"claude", "RemoteTrigger", map[string]any{"action": "run", "trigger_id": "t"}, ClassNetHTTP, TierPrivileged},
		{"claude", "ListMcpResourcesTool", map[string]any{"server": "github"}, ClassMCPCall, TierRead},
		{"claude", "ReadMcpResourceDirTool", map[string]any{"server": "s", "uri": "file:///"}, ClassMCPCall, TierRead},
		{"claude", "ReadMcpResourceTool", map[string]any{"server": "s", "uri": "db://x"}, ClassMCPCall, TierWrite},
		{"claude", "CronCreate", map[string]any{"cron": "*/5 * * * *", "prompt": "p"}, ClassAgentStateWrite, TierWrite},
		{"claude", "CronDelete", map[string]any{"id": "1"}, ClassAgentStateWrite, TierWrite},
		{"claude", "CronList", map[string]any{}, ClassAgentStateWrite, TierRead},
		{"claude", "EnterWorktree", map[string]any{"name": "x"}, ClassGitWrite, TierWrite},
		{"claude", "ExitWorktree", map[string]any{"action": "keep"}, ClassGitWrite, TierWrite},
		{"claude", "ExitWorktree", map[string]any{"action": "remove", "discard_changes": true}, ClassGitWrite, TierDestructive},
		{"claude", "TodoWrite", map[string]any{"todos": []any{}}, ClassAgentStateWrite, TierRead},
		{"claude", "TaskCreate", map[string]any{"subject": "s", "description": "d"}, ClassAgentStateWrite, TierRead},
		{"claude", "TaskUpdate", map[string]any{"taskId": "1", "status": "completed"}, ClassAgentStateWrite, TierRead},
		{"claude", "TaskGet", map[string]any{"taskId": "1"}, ClassAgentStateWrite, TierRead},
		{"claude", "TaskList", map[string]any{}, ClassAgentStateWrite, TierRead},
		{"claude", "EnterPlanMode", map[string]any{}, ClassAgentStateWrite, TierRead},
		{"claude", "ExitPlanMode", map[string]any{"plan": "p"}, ClassAgentStateWrite, TierRead},
		{"claude", "AskUserQuestion", map[string]any{"questions": []any{}}, ClassAgentStateWrite, TierRead},
		{"claude", "SendUserMessage", map[string]any{"message": "m"}, ClassAgentStateWrite, TierRead},
		{"claude", "PushNotification", map[string]any{"message": "m", "status": "proactive"}, ClassAgentStateWrite, TierRead},
		{"claude", "ScheduleWakeup", map[string]any{"delaySeconds": 60, "reason": "r", "prompt": "p"}, ClassAgentStateWrite, TierRead},
		{"claude", "ReportFindings", map[string]any{"findings": []any{}}, ClassAgentStateWrite, TierRead},
		{"claude", "StructuredOutput", map[string]any{}, ClassAgentStateWrite, TierRead},
		{"claude", "ToolSearch", map[string]any{"query": "q"}, ClassAgentStateWrite, TierRead},
		{"claude", "ShowOnboardingRolePicker", map[string]any{}, ClassAgentStateWrite, TierRead},

		// Gemini CLI.
		{"gemini", "run_shell_command", map[string]any{"command": "git status", "dir_path": "sub"}, ClassGitRead, TierRead},
		{"gemini", "run_shell_command", map[string]any{"command": "cat shadow", "dir_path": "/etc"}, ClassCredentialsRead, TierPrivileged},
		{"gemini", "list_background_processes", map[string]any{}, ClassFSRead, TierRead},
		{"gemini", "read_background_output", map[string]any{"pid": 1}, ClassFSRead, TierRead},
		{"gemini", "write_file", map[string]any{"file_path": "a.txt", "content": "x"}, ClassFSWrite, TierWrite},
		{"gemini", "write_file", map[string]any{"file_path": "/home/u/.bashrc", "content": "x"}, ClassFSWrite, TierPrivileged},
		{"gemini", "replace", map[string]any{"file_path": "a.go", "old_string": "a", "new_string": "b", "instruction": "i"}, ClassFSWrite, TierWrite},
		{"gemini", "read_file", map[string]any{"file_path": "a.go", "start_line": 1}, ClassFSRead, TierRead},
		{"gemini", "read_file", map[string]any{"file_path": "/home/u/.ssh/id_ed25519"}, ClassCredentialsRead, TierPrivileged},
		{"gemini", "read_many_files", map[string]any{"include": []any{"src/**/*.go"}}, ClassFSRead, TierRead},
		{"gemini", "read_many_files", map[string]any{"include": []any{"~/.aws/credentials"}}, ClassCredentialsRead, TierPrivileged},
		{"gemini", "list_directory", map[string]any{"dir_path": "src"}, ClassFSRead, TierRead},
		{"gemini", "list_directory", map[string]any{"dir_path": "/home/u/.ssh"}, ClassCredentialsRead, TierPrivileged},
		{"gemini", "glob", map[string]any{"pattern": "*.go", "dir_path": "src"}, ClassFSRead, TierRead},
		{"gemini", "grep_search", map[string]any{"pattern": "x", "dir_path": "src"}, ClassFSRead, TierRead},
		{"gemini", "grep_search", map[string]any{"pattern": "key", "dir_path": "~/.gnupg"}, ClassCredentialsRead, TierPrivileged},
		{"gemini", "search_file_content", map[string]any{"pattern": "x"}, ClassFSRead, TierRead},
		{"gemini", "get_internal_docs", map[string]any{"path": "tools.md"}, ClassFSRead, TierRead},
		{"gemini", "web_fetch", map[string]any{"prompt": "summarise https://example.com"}, ClassNetHTTP, TierNetworkEgress},
		{"gemini", "google_web_search", map[string]any{"query": "q"}, ClassNetHTTP, TierNetworkEgress},
		{"gemini", "list_mcp_resources", map[string]any{}, ClassMCPCall, TierRead},
		{"gemini", "read_mcp_resource", map[string]any{"uri": "db://x"}, ClassMCPCall, TierWrite},
		{"gemini", "invoke_agent", map[string]any{"agent_name": "codebase_investigator", "prompt": "p"}, ClassHostCall, TierWrite},
		{"gemini", "invoke_agent", map[string]any{"agent_name": "browser_agent", "prompt": "p"}, ClassNetHTTP, TierNetworkEgress},
		{"gemini", "activate_skill", map[string]any{"name": "s"}, ClassHostCall, TierWrite},
		{"gemini", "save_memory", map[string]any{"fact": "f"}, ClassAgentStateWrite, TierWrite},
		{"gemini", "write_todos", map[string]any{"todos": []any{}}, ClassAgentStateWrite, TierRead},
		{"gemini", "tracker_create_task", map[string]any{"title": "t"}, ClassAgentStateWrite, TierRead},
		{"gemini", "tracker_update_task", map[string]any{"id": "1"}, ClassAgentStateWrite, TierRead},
		{"gemini", "tracker_add_dependency", map[string]any{}, ClassAgentStateWrite, TierRead},
		{"gemini", "tracker_get_task", map[string]any{"id": "1"}, ClassAgentStateWrite, TierRead},
		{"gemini", "tracker_list_tasks", map[string]any{}, ClassAgentStateWrite, TierRead},
		{"gemini", "tracker_visualize", map[string]any{}, ClassAgentStateWrite, TierRead},
		{"gemini", "enter_plan_mode", map[string]any{"reason": "r"}, ClassAgentStateWrite, TierRead},
		{"gemini", "exit_plan_mode", map[string]any{"plan_filename": "plan.md"}, ClassAgentStateWrite, TierRead},
		{"gemini", "ask_user", map[string]any{"questions": []any{}}, ClassAgentStateWrite, TierRead},
		{"gemini", "update_topic", map[string]any{"title": "t"}, ClassAgentStateWrite, TierRead},
		{"gemini", "complete_task", map[string]any{}, ClassAgentStateWrite, TierRead},

		// Codex.
		{"codex", "Bash", map[string]any{"command": "cargo test"}, ClassProcessExec, TierWrite},
		{"codex", "shell", map[string]any{"command": []any{"bash", "-lc", "ls"}, "workdir": "/w"}, ClassFSRead, TierRead},
		{"codex", "shell", map[string]any{"command": []any{"rm", "-rf", "/w/build"}}, ClassFSDelete, TierDestructive},
		{"codex", "shell_command", map[string]any{"command": "git log", "workdir": "/w"}, ClassGitRead, TierRead},
		{"codex", "exec_command", map[string]any{"cmd": "git status", "workdir": "/w"}, ClassGitRead, TierRead},
		{"codex", "exec_command", map[string]any{"cmd": "curl -s https://example.com"}, ClassNetHTTP, TierNetworkEgress},
		{"codex", "exec_command", map[string]any{"cmd": []any{"git", "status"}}, ClassGitRead, TierRead},
		{"codex", "exec_command", map[string]any{"cmd": "cat shadow", "workdir": "/etc"}, ClassCredentialsRead, TierPrivileged},
		{"codex", "local_shell", map[string]any{"command": []any{"ls"}, "working_directory": "/w"}, ClassFSRead, TierRead},
		{"codex", "write_stdin", map[string]any{"session_id": 1, "chars": ""}, ClassFSRead, TierRead},
		{"codex", "write_stdin", map[string]any{"session_id": 1, "chars": "rm -rf /\n"}, ClassUnknown, TierPrivileged},
		{"codex", "apply_patch", map[string]any{"command": "*** Begin Patch\n*** Add File: a.go\n+package a\n*** End Patch"}, ClassFSWrite, TierWrite},
		{"codex", "view_image", map[string]any{"path": "shot.png"}, ClassFSRead, TierRead},
		{"codex", "web_search", map[string]any{"query": "q"}, ClassNetHTTP, TierNetworkEgress},
		{"codex", "update_plan", map[string]any{"plan": []any{}}, ClassAgentStateWrite, TierRead},
		{"codex", "list_mcp_resources", map[string]any{}, ClassMCPCall, TierRead},
		{"codex", "list_mcp_resource_templates", map[string]any{}, ClassMCPCall, TierRead},
		{"codex", "read_mcp_resource", map[string]any{"server": "s", "uri": "x://y"}, ClassMCPCall, TierWrite},
		{"codex", "spawn_agent", map[string]any{"message": "m"}, ClassHostCall, TierWrite},
		{"codex", "resume_agent", map[string]any{"id": "1"}, ClassHostCall, TierWrite},
		{"codex", "send_input", map[string]any{"id": "1", "message": "m"}, ClassHostCall, TierWrite},
		{"codex", "send_message", map[string]any{"message": "m"}, ClassHostCall, TierWrite},
		{"codex", "followup_task", map[string]any{"message": "m"}, ClassHostCall, TierWrite},
		{"codex", "close_agent", map[string]any{"id": "1"}, ClassProcessKill, TierWrite},
		{"codex", "wait_agent", map[string]any{"ids": []any{"1"}}, ClassAgentStateWrite, TierRead},
		{"codex", "list_agents", map[string]any{}, ClassAgentStateWrite, TierRead},
		{"codex", "request_user_input", map[string]any{"questions": []any{}}, ClassAgentStateWrite, TierRead},
		{"codex", "request_permissions", map[string]any{}, ClassHostCall, TierWrite},
		{"codex", "request_plugin_install", map[string]any{}, ClassPackageInstall, TierNetworkEgress},
		{"codex", "list_available_plugins_to_install", map[string]any{}, ClassAgentStateWrite, TierRead},
		{"codex", "tool_search", map[string]any{"query": "q"}, ClassAgentStateWrite, TierRead},
		{"codex", "get_context_remaining", map[string]any{}, ClassAgentStateWrite, TierRead},
		{"codex", "new_context_window", map[string]any{}, ClassAgentStateWrite, TierRead},
		{"codex", "current_time", map[string]any{}, ClassAgentStateWrite, TierRead},
		{"codex", "sleep", map[string]any{"ms": 100}, ClassAgentStateWrite, TierRead},
		{"codex", "wait_for_environment", map[string]any{}, ClassAgentStateWrite, TierRead},
	} {
		t.Run(tc.host+"/"+tc.tool, func(t *testing.T) {
			c := classifyForTest(t, tc.tool, "/w", tc.args)
			if got, want := c.Class, tc.class; got != want {
				t.Errorf("class = %s, want %s (%s: %s)", got, want, c, c.Reason)
			}
			if got, want := c.Tier, tc.tier; got != want {
				t.Errorf("tier = %s, want %s (%s: %s)", got, want, c, c.Reason)
			}
			if c.Opaque != "" {
				t.Errorf("opaque: %s", c.Opaque)
			}
		})
	}
}

func TestCatalogMCPNames(t *testing.T) {
	for _, tc := range []struct {
		tool         string
		mcp          bool
		server, name string // of the tool, when mcp
	}{
		{"mcp__github__create_issue", true, "github", "create_issue"},
		{"mcp__my_server__do_it", true, "my_server", "do_it"},
		{"mcp_github_create_issue", true, "github", "create_issue"},
		{"mcp_github_list", true, "github", "list"},
		{"mcp_my_server_do_it", true, "my", "server_do_it"}, // Gemini's own split
		{"mcp_srv.v2_a-b", true, "srv.v2", "a-b"},
		{"mcp_s___x", true, "s", "__x"},
		{"mcp_", false, "", ""},
		{"mcp_github", false, "", ""},
		{"mcp_github_", false, "", ""},
		{"mcp_github___", false, "", ""},
		{"mcp__x", false, "", ""},
		{"mcp__x__", false, "", ""},
		{"mcp___x_y", false, "", ""},
		{"mcp_release", false, "", ""}, // a built-in, never an MCP tool
		{"mcpx_a_b", false, "", ""},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			c := classifyForTest(t, tc.tool, "", map[string]any{})
			if got, want := c.Class == ClassMCPCall, tc.mcp; got != want {
				t.Fatalf("MCP call = %v, want %v (%s: %s)", got, want, c, c.Reason)
			}
			if !tc.mcp {
				return
			}
			if got, want := c.Tier, TierWrite; got != want {
				t.Errorf("tier = %s, want %s", got, want)
			}
			if want := "calls tool " + tc.name + " of MCP server " + tc.server; !strings.HasPrefix(c.Reason, want) {
				t.Errorf("reason = %q, want it to start %q", c.Reason, want)
			}
			if gemini := !strings.HasPrefix(tc.tool, "mcp__"); gemini && !strings.Contains(c.Reason, tc.tool) {
				t.Errorf("reason = %q, want it to name %s", c.Reason, tc.tool)
			}
		})
	}
}

// Every catalog entry whose name looks like a Gemini MCP tool is a
// built-in, never an MCP call.
func TestCatalogBuiltinsAreNotMCP(t *testing.T) {
	for _, e := range Catalog() {
		c := classifyForTest(t, e.Tool, "", map[string]any{})
		if c.Class == ClassMCPCall && e.Class != ClassMCPCall {
			t.Errorf("%s classified as an MCP call", e.Tool)
		}
	}
}

// TestCatalogMCPResourceRead: the MCP gateway's resources/read is judged
// by its URI. A local file: URI is read like a path — a read, unless it
// names a secret or a folder of them, however the URI spells it; anything
// else is not proved a read: a URL fetched is network egress, another
// scheme, another host's file or a URI Airlock cannot read as one path is
// tier write, generic (a policy may trust a server's resources).
func TestCatalogMCPResourceRead(t *testing.T) {
	for _, tc := range []struct {
		uri     string
		class   Class
		tier    RiskTier
		generic bool
	}{
		{"file:///work/app/README.md", ClassMCPResourceRead, TierRead, false},
		{"file://localhost/work/app/README.md", ClassMCPResourceRead, TierRead, false},
		{"FILE:///work/app/README.md", ClassMCPResourceRead, TierRead, false},
		{"file:///work/app/docs/", ClassMCPResourceRead, TierRead, false},
		{"file:///home/dev/.ssh/id_ed25519", ClassCredentialsRead, TierPrivileged, false},
		{"file:///home/dev/.s%73h/id_ed25519", ClassCredentialsRead, TierPrivileged, false},
		{"file:///work/app/../../home/dev/.aws/credentials", ClassCredentialsRead, TierPrivileged, false},
		{"file:///work/app/.env", ClassCredentialsRead, TierPrivileged, false},
		{"file:///etc/shadow", ClassCredentialsRead, TierPrivileged, false},
		{"file:///home/dev", ClassCredentialsRead, TierPrivileged, false}, // a folder of secrets
		{"file:///", ClassCredentialsRead, TierPrivileged, false},
		{"file:///C:/Users/dev/.aws/credentials", ClassCredentialsRead, TierPrivileged, false},
		{"file:///c:/Users/dev/project/README.md", ClassMCPResourceRead, TierRead, false},
		{"file://fileserver/share/a.txt", ClassMCPResourceRead, TierWrite, true},
		{"file:relative/a.txt", ClassMCPResourceRead, TierWrite, true},
		{"file:///work/a.txt?rev=1", ClassMCPResourceRead, TierWrite, true},
		{"file:///work/a.txt#x", ClassMCPResourceRead, TierWrite, true},
		{`file:///work/app/..\..\home\dev\.ssh\id_rsa`, ClassMCPResourceRead, TierWrite, true},
		{"file:///work/a%00.txt", ClassMCPResourceRead, TierWrite, true},
		{"file://user@localhost/work/a.txt", ClassMCPResourceRead, TierWrite, true},
		{"https://example.com/notes", ClassMCPResourceRead, TierNetworkEgress, true},
		{"HTTP://example.com/notes", ClassMCPResourceRead, TierNetworkEgress, true},
		{"postgres://db/users/1", ClassMCPResourceRead, TierWrite, true},
		{"ui://widget/1", ClassMCPResourceRead, TierWrite, true},
		{"", ClassMCPResourceRead, TierWrite, true},
	} {
		t.Run(tc.uri, func(t *testing.T) {
			c := classifyForTest(t, MCPTool("fs", MCPResourceRead), "", map[string]any{"uri": tc.uri})
			if c.Class != tc.class || c.Tier != tc.tier || c.Generic != tc.generic {
				t.Errorf("%s (%s), generic %t; want %s (%s), generic %t: %s", c.Class, c.Tier, c.Generic, tc.class, tc.tier, tc.generic, c.Reason)
			}
		})
	}
	// The names are the gateway's alone: Gemini's form is a tool call.
	if c := classifyForTest(t, "mcp_fs_resources/read", "", map[string]any{"uri": "file:///a"}); c.Class != ClassMCPCall {
		t.Errorf("mcp_fs_resources/read: %s", c.Class)
	}
}

// TestCatalogMCPPromptGet: a prompt runs the server's code with the
// client's arguments: tier write, generic, like a tool without
// annotations.
func TestCatalogMCPPromptGet(t *testing.T) {
	c := classifyForTest(t, MCPTool("github", MCPPromptGet), "", map[string]any{"name": "summarise", "arguments": map[string]any{"repo": "a/b"}})
	if c.Class != ClassMCPPromptGet || c.Tier != TierWrite || !c.Generic || !strings.Contains(c.Reason, "github") {
		t.Errorf("%s (%s), generic %t: %s", c.Class, c.Tier, c.Generic, c.Reason)
	}
}
