package catalog

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/shell"
)

// classifyForTest classifies a call with the built-in catalog and the shell
// analyser alone.
func classifyForTest(t *testing.T, tool, cwd string, args map[string]any) airlock.Classification {
	t.Helper()
	a := airlock.Action{Agent: "a", Tool: tool, Cwd: cwd}
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
	return Classify(shell.Analyser{}, &a, nil, nil)
}

// The tools each agent host ships, with the arguments that host sends
// (Claude Code 2.1.197, Gemini CLI 0.61.0, Codex 0.169.0; see
// hook/testdata/hosts).
func TestCatalogHostTools(t *testing.T) {
	for _, tc := range []struct {
		host, tool string
		args       map[string]any
		class      airlock.Class
		tier       airlock.RiskTier
	}{
		// The builtins.
		{"builtin", "delete_file", map[string]any{"path": "build/out.o"}, airlock.ClassFSDelete, airlock.TierDestructive},
		{"builtin", "delete_file", map[string]any{"path": "/etc/sudoers"}, airlock.ClassFSDelete, airlock.TierPrivileged},
		// Claude Code.
		{"claude", "Bash", map[string]any{"command": "ls"}, airlock.ClassFSRead, airlock.TierRead},
		{"claude", "PowerShell", map[string]any{"command": "Get-ChildItem"}, airlock.ClassProcessExec, airlock.TierPrivileged},
		{"claude", "Monitor", map[string]any{"command": "tail -f log.txt", "description": "log", "timeout_ms": 1000, "persistent": false}, airlock.ClassFSRead, airlock.TierRead},
		{"claude", "Monitor", map[string]any{"command": "rm -rf build", "description": "x", "timeout_ms": 1000, "persistent": false}, airlock.ClassFSDelete, airlock.TierDestructive},
		{"claude", "Monitor", map[string]any{"ws": map[string]any{"url": "wss://example.com"}, "description": "x", "timeout_ms": 1000, "persistent": false}, airlock.ClassNetConnect, airlock.TierNetworkEgress},
		{"claude", "REPL", map[string]any{"code": "1+1"}, airlock.ClassProcessExec, airlock.TierWrite},
		{"claude", "Agent", map[string]any{"description": "d", "prompt": "p", "subagent_type": "general-purpose"}, airlock.ClassHostCall, airlock.TierWrite},
		{"claude", "Agent", map[string]any{"description": "d", "prompt": "p", "isolation": "remote"}, airlock.ClassHostCall, airlock.TierPrivileged},
		{"claude", "Agent", map[string]any{"description": "d", "prompt": "p", "isolation": "worktree"}, airlock.ClassHostCall, airlock.TierWrite},
		{"claude", "Task", map[string]any{"description": "d", "prompt": "p"}, airlock.ClassHostCall, airlock.TierWrite},
		{"claude", "Workflow", map[string]any{"name": "review"}, airlock.ClassHostCall, airlock.TierWrite},
		{"claude", "SendMessage", map[string]any{"to": "x", "message": "m"}, airlock.ClassHostCall, airlock.TierWrite},
		{"claude", "Skill", map[string]any{"skill": "pdf"}, airlock.ClassHostCall, airlock.TierWrite},
		{"claude", "TaskOutput", map[string]any{"task_id": "1", "block": true, "timeout": 1000}, airlock.ClassFSRead, airlock.TierRead},
		{"claude", "BashOutput", map[string]any{"bash_id": "1"}, airlock.ClassFSRead, airlock.TierRead},
		{"claude", "TaskStop", map[string]any{"task_id": "1"}, airlock.ClassProcessKill, airlock.TierWrite},
		{"claude", "KillShell", map[string]any{"shell_id": "1"}, airlock.ClassProcessKill, airlock.TierWrite},
		{"claude", "Read", map[string]any{"file_path": "/w/main.go"}, airlock.ClassFSRead, airlock.TierRead},
		{"claude", "Read", map[string]any{"file_path": "/home/u/.aws/credentials"}, airlock.ClassCredentialsRead, airlock.TierPrivileged},
		{"claude", "Grep", map[string]any{"pattern": "x", "path": "src"}, airlock.ClassFSRead, airlock.TierRead},
		{"claude", "Glob", map[string]any{"pattern": "*.go"}, airlock.ClassFSRead, airlock.TierRead},
		{"claude", "LSP", map[string]any{"file_path": "main.go"}, airlock.ClassFSRead, airlock.TierRead},
		{"claude", "Edit", map[string]any{"file_path": "/w/a.go", "old_string": "a", "new_string": "b"}, airlock.ClassFSWrite, airlock.TierWrite},
		{"claude", "Write", map[string]any{"file_path": "/etc/hosts", "content": "x"}, airlock.ClassFSWrite, airlock.TierPrivileged},
		{"claude", "MultiEdit", map[string]any{"file_path": "/w/a.go", "edits": []any{}}, airlock.ClassFSWrite, airlock.TierWrite},
		{"claude", "NotebookEdit", map[string]any{"notebook_path": "/w/n.ipynb", "new_source": "x"}, airlock.ClassFSWrite, airlock.TierWrite},
		{"claude", "WebFetch", map[string]any{"url": "https://example.com", "prompt": "p"}, airlock.ClassNetHTTP, airlock.TierNetworkEgress},
		{"claude", "WebSearch", map[string]any{"query": "q"}, airlock.ClassNetHTTP, airlock.TierNetworkEgress},
		{"claude", "Artifact", map[string]any{"file_path": "report.html", "favicon": "x"}, airlock.ClassNetHTTP, airlock.TierNetworkEgress},
		{"claude", "Artifact", map[string]any{"file_path": "/w/.env", "favicon": "x"}, airlock.ClassCredentialsRead, airlock.TierPrivileged},
		{"claude", "SendUserFile", map[string]any{"file_paths": []any{"shot.png"}}, airlock.ClassNetHTTP, airlock.TierNetworkEgress},
		{"claude", "Projects", map[string]any{"method": "project_read", "path": "doc.md"}, airlock.ClassNetHTTP, airlock.TierNetworkEgress},
		{"claude", "Projects", map[string]any{"method": "project_write", "local_path": "/home/u/.ssh/id_rsa"}, airlock.ClassCredentialsRead, airlock.TierPrivileged},
		{"claude", "Projects", map[string]any{"method": "project_delete", "path": "doc.md"}, airlock.ClassNetHTTP, airlock.TierDestructive},
		{"claude", "DesignSync", map[string]any{}, airlock.ClassNetHTTP, airlock.TierNetworkEgress},
		{"claude", "ShareOnboardingGuide", map[string]any{}, airlock.ClassNetHTTP, airlock.TierNetworkEgress},
		{"claude", "RemoteTrigger", map[string]any{"action": "list"}, airlock.ClassNetHTTP, airlock.TierNetworkEgress},
		{"claude", "RemoteTrigger", map[string]any{"action": "run", "trigger_id": "t"}, airlock.ClassNetHTTP, airlock.TierPrivileged},
		{"claude", "ListMcpResourcesTool", map[string]any{"server": "github"}, airlock.ClassMCPCall, airlock.TierRead},
		{"claude", "ReadMcpResourceDirTool", map[string]any{"server": "s", "uri": "file:///"}, airlock.ClassMCPCall, airlock.TierRead},
		{"claude", "ReadMcpResourceTool", map[string]any{"server": "s", "uri": "db://x"}, airlock.ClassMCPCall, airlock.TierWrite},
		{"claude", "CronCreate", map[string]any{"cron": "*/5 * * * *", "prompt": "p"}, airlock.ClassAgentStateWrite, airlock.TierWrite},
		{"claude", "CronDelete", map[string]any{"id": "1"}, airlock.ClassAgentStateWrite, airlock.TierWrite},
		{"claude", "CronList", map[string]any{}, airlock.ClassAgentStateWrite, airlock.TierRead},
		{"claude", "EnterWorktree", map[string]any{"name": "x"}, airlock.ClassGitWrite, airlock.TierWrite},
		{"claude", "ExitWorktree", map[string]any{"action": "keep"}, airlock.ClassGitWrite, airlock.TierWrite},
		{"claude", "ExitWorktree", map[string]any{"action": "remove", "discard_changes": true}, airlock.ClassGitWrite, airlock.TierDestructive},
		{"claude", "TodoWrite", map[string]any{"todos": []any{}}, airlock.ClassAgentStateWrite, airlock.TierRead},
		{"claude", "TaskCreate", map[string]any{"subject": "s", "description": "d"}, airlock.ClassAgentStateWrite, airlock.TierRead},
		{"claude", "TaskUpdate", map[string]any{"taskId": "1", "status": "completed"}, airlock.ClassAgentStateWrite, airlock.TierRead},
		{"claude", "TaskGet", map[string]any{"taskId": "1"}, airlock.ClassAgentStateWrite, airlock.TierRead},
		{"claude", "TaskList", map[string]any{}, airlock.ClassAgentStateWrite, airlock.TierRead},
		{"claude", "EnterPlanMode", map[string]any{}, airlock.ClassAgentStateWrite, airlock.TierRead},
		{"claude", "ExitPlanMode", map[string]any{"plan": "p"}, airlock.ClassAgentStateWrite, airlock.TierRead},
		{"claude", "AskUserQuestion", map[string]any{"questions": []any{}}, airlock.ClassAgentStateWrite, airlock.TierRead},
		{"claude", "SendUserMessage", map[string]any{"message": "m"}, airlock.ClassAgentStateWrite, airlock.TierRead},
		{"claude", "PushNotification", map[string]any{"message": "m", "status": "proactive"}, airlock.ClassAgentStateWrite, airlock.TierRead},
		{"claude", "ScheduleWakeup", map[string]any{"delaySeconds": 60, "reason": "r", "prompt": "p"}, airlock.ClassAgentStateWrite, airlock.TierRead},
		{"claude", "ReportFindings", map[string]any{"findings": []any{}}, airlock.ClassAgentStateWrite, airlock.TierRead},
		{"claude", "StructuredOutput", map[string]any{}, airlock.ClassAgentStateWrite, airlock.TierRead},
		{"claude", "ToolSearch", map[string]any{"query": "q"}, airlock.ClassAgentStateWrite, airlock.TierRead},
		{"claude", "ShowOnboardingRolePicker", map[string]any{}, airlock.ClassAgentStateWrite, airlock.TierRead},

		// Gemini CLI.
		{"gemini", "run_shell_command", map[string]any{"command": "git status", "dir_path": "sub"}, airlock.ClassGitRead, airlock.TierRead},
		{"gemini", "run_shell_command", map[string]any{"command": "cat shadow", "dir_path": "/etc"}, airlock.ClassCredentialsRead, airlock.TierPrivileged},
		{"gemini", "list_background_processes", map[string]any{}, airlock.ClassFSRead, airlock.TierRead},
		{"gemini", "read_background_output", map[string]any{"pid": 1}, airlock.ClassFSRead, airlock.TierRead},
		{"gemini", "write_file", map[string]any{"file_path": "a.txt", "content": "x"}, airlock.ClassFSWrite, airlock.TierWrite},
		{"gemini", "write_file", map[string]any{"file_path": "/home/u/.bashrc", "content": "x"}, airlock.ClassFSWrite, airlock.TierPrivileged},
		{"gemini", "replace", map[string]any{"file_path": "a.go", "old_string": "a", "new_string": "b", "instruction": "i"}, airlock.ClassFSWrite, airlock.TierWrite},
		{"gemini", "read_file", map[string]any{"file_path": "a.go", "start_line": 1}, airlock.ClassFSRead, airlock.TierRead},
		{"gemini", "read_file", map[string]any{"file_path": "/home/u/.ssh/id_ed25519"}, airlock.ClassCredentialsRead, airlock.TierPrivileged},
		{"gemini", "read_many_files", map[string]any{"include": []any{"src/**/*.go"}}, airlock.ClassFSRead, airlock.TierRead},
		{"gemini", "read_many_files", map[string]any{"include": []any{"~/.aws/credentials"}}, airlock.ClassCredentialsRead, airlock.TierPrivileged},
		{"gemini", "list_directory", map[string]any{"dir_path": "src"}, airlock.ClassFSRead, airlock.TierRead},
		{"gemini", "list_directory", map[string]any{"dir_path": "/home/u/.ssh"}, airlock.ClassCredentialsRead, airlock.TierPrivileged},
		{"gemini", "glob", map[string]any{"pattern": "*.go", "dir_path": "src"}, airlock.ClassFSRead, airlock.TierRead},
		{"gemini", "grep_search", map[string]any{"pattern": "x", "dir_path": "src"}, airlock.ClassFSRead, airlock.TierRead},
		{"gemini", "grep_search", map[string]any{"pattern": "key", "dir_path": "~/.gnupg"}, airlock.ClassCredentialsRead, airlock.TierPrivileged},
		{"gemini", "search_file_content", map[string]any{"pattern": "x"}, airlock.ClassFSRead, airlock.TierRead},
		{"gemini", "get_internal_docs", map[string]any{"path": "tools.md"}, airlock.ClassFSRead, airlock.TierRead},
		{"gemini", "web_fetch", map[string]any{"prompt": "summarise https://example.com"}, airlock.ClassNetHTTP, airlock.TierNetworkEgress},
		{"gemini", "google_web_search", map[string]any{"query": "q"}, airlock.ClassNetHTTP, airlock.TierNetworkEgress},
		{"gemini", "list_mcp_resources", map[string]any{}, airlock.ClassMCPCall, airlock.TierRead},
		{"gemini", "read_mcp_resource", map[string]any{"uri": "db://x"}, airlock.ClassMCPCall, airlock.TierWrite},
		{"gemini", "invoke_agent", map[string]any{"agent_name": "codebase_investigator", "prompt": "p"}, airlock.ClassHostCall, airlock.TierWrite},
		{"gemini", "invoke_agent", map[string]any{"agent_name": "browser_agent", "prompt": "p"}, airlock.ClassNetHTTP, airlock.TierNetworkEgress},
		{"gemini", "activate_skill", map[string]any{"name": "s"}, airlock.ClassHostCall, airlock.TierWrite},
		{"gemini", "save_memory", map[string]any{"fact": "f"}, airlock.ClassAgentStateWrite, airlock.TierWrite},
		{"gemini", "write_todos", map[string]any{"todos": []any{}}, airlock.ClassAgentStateWrite, airlock.TierRead},
		{"gemini", "tracker_create_task", map[string]any{"title": "t"}, airlock.ClassAgentStateWrite, airlock.TierRead},
		{"gemini", "tracker_update_task", map[string]any{"id": "1"}, airlock.ClassAgentStateWrite, airlock.TierRead},
		{"gemini", "tracker_add_dependency", map[string]any{}, airlock.ClassAgentStateWrite, airlock.TierRead},
		{"gemini", "tracker_get_task", map[string]any{"id": "1"}, airlock.ClassAgentStateWrite, airlock.TierRead},
		{"gemini", "tracker_list_tasks", map[string]any{}, airlock.ClassAgentStateWrite, airlock.TierRead},
		{"gemini", "tracker_visualize", map[string]any{}, airlock.ClassAgentStateWrite, airlock.TierRead},
		{"gemini", "enter_plan_mode", map[string]any{"reason": "r"}, airlock.ClassAgentStateWrite, airlock.TierRead},
		{"gemini", "exit_plan_mode", map[string]any{"plan_filename": "plan.md"}, airlock.ClassAgentStateWrite, airlock.TierRead},
		{"gemini", "ask_user", map[string]any{"questions": []any{}}, airlock.ClassAgentStateWrite, airlock.TierRead},
		{"gemini", "update_topic", map[string]any{"title": "t"}, airlock.ClassAgentStateWrite, airlock.TierRead},
		{"gemini", "complete_task", map[string]any{}, airlock.ClassAgentStateWrite, airlock.TierRead},

		// Codex.
		{"codex", "Bash", map[string]any{"command": "cargo test"}, airlock.ClassProcessExec, airlock.TierWrite},
		{"codex", "shell", map[string]any{"command": []any{"bash", "-lc", "ls"}, "workdir": "/w"}, airlock.ClassFSRead, airlock.TierRead},
		{"codex", "shell", map[string]any{"command": []any{"rm", "-rf", "/w/build"}}, airlock.ClassFSDelete, airlock.TierDestructive},
		{"codex", "shell_command", map[string]any{"command": "git log", "workdir": "/w"}, airlock.ClassGitRead, airlock.TierRead},
		{"codex", "exec_command", map[string]any{"cmd": "git status", "workdir": "/w"}, airlock.ClassGitRead, airlock.TierRead},
		{"codex", "exec_command", map[string]any{"cmd": "curl -s https://example.com"}, airlock.ClassNetHTTP, airlock.TierNetworkEgress},
		{"codex", "exec_command", map[string]any{"cmd": []any{"git", "status"}}, airlock.ClassGitRead, airlock.TierRead},
		{"codex", "exec_command", map[string]any{"cmd": "cat shadow", "workdir": "/etc"}, airlock.ClassCredentialsRead, airlock.TierPrivileged},
		{"codex", "local_shell", map[string]any{"command": []any{"ls"}, "working_directory": "/w"}, airlock.ClassFSRead, airlock.TierRead},
		{"codex", "write_stdin", map[string]any{"session_id": 1, "chars": ""}, airlock.ClassFSRead, airlock.TierRead},
		{"codex", "write_stdin", map[string]any{"session_id": 1, "chars": "rm -rf /\n"}, airlock.ClassUnknown, airlock.TierPrivileged},
		{"codex", "apply_patch", map[string]any{"command": "*** Begin Patch\n*** Add File: a.go\n+package a\n*** End Patch"}, airlock.ClassFSWrite, airlock.TierWrite},
		{"codex", "view_image", map[string]any{"path": "shot.png"}, airlock.ClassFSRead, airlock.TierRead},
		{"codex", "web_search", map[string]any{"query": "q"}, airlock.ClassNetHTTP, airlock.TierNetworkEgress},
		{"codex", "update_plan", map[string]any{"plan": []any{}}, airlock.ClassAgentStateWrite, airlock.TierRead},
		{"codex", "list_mcp_resources", map[string]any{}, airlock.ClassMCPCall, airlock.TierRead},
		{"codex", "list_mcp_resource_templates", map[string]any{}, airlock.ClassMCPCall, airlock.TierRead},
		{"codex", "read_mcp_resource", map[string]any{"server": "s", "uri": "x://y"}, airlock.ClassMCPCall, airlock.TierWrite},
		{"codex", "spawn_agent", map[string]any{"message": "m"}, airlock.ClassHostCall, airlock.TierWrite},
		{"codex", "resume_agent", map[string]any{"id": "1"}, airlock.ClassHostCall, airlock.TierWrite},
		{"codex", "send_input", map[string]any{"id": "1", "message": "m"}, airlock.ClassHostCall, airlock.TierWrite},
		{"codex", "send_message", map[string]any{"message": "m"}, airlock.ClassHostCall, airlock.TierWrite},
		{"codex", "followup_task", map[string]any{"message": "m"}, airlock.ClassHostCall, airlock.TierWrite},
		{"codex", "close_agent", map[string]any{"id": "1"}, airlock.ClassProcessKill, airlock.TierWrite},
		{"codex", "wait_agent", map[string]any{"ids": []any{"1"}}, airlock.ClassAgentStateWrite, airlock.TierRead},
		{"codex", "list_agents", map[string]any{}, airlock.ClassAgentStateWrite, airlock.TierRead},
		{"codex", "request_user_input", map[string]any{"questions": []any{}}, airlock.ClassAgentStateWrite, airlock.TierRead},
		{"codex", "request_permissions", map[string]any{}, airlock.ClassHostCall, airlock.TierWrite},
		{"codex", "request_plugin_install", map[string]any{}, airlock.ClassPackageInstall, airlock.TierNetworkEgress},
		{"codex", "list_available_plugins_to_install", map[string]any{}, airlock.ClassAgentStateWrite, airlock.TierRead},
		{"codex", "tool_search", map[string]any{"query": "q"}, airlock.ClassAgentStateWrite, airlock.TierRead},
		{"codex", "get_context_remaining", map[string]any{}, airlock.ClassAgentStateWrite, airlock.TierRead},
		{"codex", "new_context_window", map[string]any{}, airlock.ClassAgentStateWrite, airlock.TierRead},
		{"codex", "current_time", map[string]any{}, airlock.ClassAgentStateWrite, airlock.TierRead},
		{"codex", "sleep", map[string]any{"ms": 100}, airlock.ClassAgentStateWrite, airlock.TierRead},
		{"codex", "wait_for_environment", map[string]any{}, airlock.ClassAgentStateWrite, airlock.TierRead},
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
			if got, want := c.Class == airlock.ClassMCPCall, tc.mcp; got != want {
				t.Fatalf("MCP call = %v, want %v (%s: %s)", got, want, c, c.Reason)
			}
			if !tc.mcp {
				return
			}
			if got, want := c.Tier, airlock.TierWrite; got != want {
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
		if c.Class == airlock.ClassMCPCall && e.Class != airlock.ClassMCPCall {
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
		class   airlock.Class
		tier    airlock.RiskTier
		generic bool
	}{
		{"file:///work/app/README.md", airlock.ClassMCPResourceRead, airlock.TierRead, false},
		{"file://localhost/work/app/README.md", airlock.ClassMCPResourceRead, airlock.TierRead, false},
		{"FILE:///work/app/README.md", airlock.ClassMCPResourceRead, airlock.TierRead, false},
		{"file:///work/app/docs/", airlock.ClassMCPResourceRead, airlock.TierRead, false},
		{"file:///home/dev/.ssh/id_ed25519", airlock.ClassCredentialsRead, airlock.TierPrivileged, false},
		{"file:///home/dev/.s%73h/id_ed25519", airlock.ClassCredentialsRead, airlock.TierPrivileged, false},
		{"file:///work/app/../../home/dev/.aws/credentials", airlock.ClassCredentialsRead, airlock.TierPrivileged, false},
		{"file:///work/app/.env", airlock.ClassCredentialsRead, airlock.TierPrivileged, false},
		{"file:///etc/shadow", airlock.ClassCredentialsRead, airlock.TierPrivileged, false},
		{"file:///home/dev", airlock.ClassCredentialsRead, airlock.TierPrivileged, false}, // a folder of secrets
		{"file:///", airlock.ClassCredentialsRead, airlock.TierPrivileged, false},
		{"file:///C:/Users/dev/.aws/credentials", airlock.ClassCredentialsRead, airlock.TierPrivileged, false},
		{"file:///c:/Users/dev/project/README.md", airlock.ClassMCPResourceRead, airlock.TierRead, false},
		{"file://fileserver/share/a.txt", airlock.ClassMCPResourceRead, airlock.TierWrite, true},
		{"file:relative/a.txt", airlock.ClassMCPResourceRead, airlock.TierWrite, true},
		{"file:///work/a.txt?rev=1", airlock.ClassMCPResourceRead, airlock.TierWrite, true},
		{"file:///work/a.txt#x", airlock.ClassMCPResourceRead, airlock.TierWrite, true},
		{`file:///work/app/..\..\home\dev\.ssh\id_rsa`, airlock.ClassMCPResourceRead, airlock.TierWrite, true},
		{"file:///work/a%00.txt", airlock.ClassMCPResourceRead, airlock.TierWrite, true},
		{"file://user@localhost/work/a.txt", airlock.ClassMCPResourceRead, airlock.TierWrite, true},
		{"https://example.com/notes", airlock.ClassMCPResourceRead, airlock.TierNetworkEgress, true},
		{"HTTP://example.com/notes", airlock.ClassMCPResourceRead, airlock.TierNetworkEgress, true},
		{"postgres://db/users/1", airlock.ClassMCPResourceRead, airlock.TierWrite, true},
		{"ui://widget/1", airlock.ClassMCPResourceRead, airlock.TierWrite, true},
		{"", airlock.ClassMCPResourceRead, airlock.TierWrite, true},
	} {
		t.Run(tc.uri, func(t *testing.T) {
			c := classifyForTest(t, MCPTool("fs", MCPResourceRead), "", map[string]any{"uri": tc.uri})
			if c.Class != tc.class || c.Tier != tc.tier || c.Generic != tc.generic {
				t.Errorf("%s (%s), generic %t; want %s (%s), generic %t: %s", c.Class, c.Tier, c.Generic, tc.class, tc.tier, tc.generic, c.Reason)
			}
		})
	}
	// The names are the gateway's alone: Gemini's form is a tool call.
	if c := classifyForTest(t, "mcp_fs_resources/read", "", map[string]any{"uri": "file:///a"}); c.Class != airlock.ClassMCPCall {
		t.Errorf("mcp_fs_resources/read: %s", c.Class)
	}
}

// TestCatalogMCPPromptGet: a prompt runs the server's code with the
// client's arguments: tier write, generic, like a tool without
// annotations.
func TestCatalogMCPPromptGet(t *testing.T) {
	c := classifyForTest(t, MCPTool("github", MCPPromptGet), "", map[string]any{"name": "summarise", "arguments": map[string]any{"repo": "a/b"}})
	if c.Class != airlock.ClassMCPPromptGet || c.Tier != airlock.TierWrite || !c.Generic || !strings.Contains(c.Reason, "github") {
		t.Errorf("%s (%s), generic %t: %s", c.Class, c.Tier, c.Generic, c.Reason)
	}
}

// TestGateConfigureClass: a write to an agent host's or an editor's
// settings, at the user's level or a project's, or to Airlock's own files,
// is class gate.configure, tier privileged, through every file tool, a
// patch and a shell redirection; reading Airlock's tokens is a secret read.
func TestGateConfigureClass(t *testing.T) {
	patch := func(verb, p string) string {
		body := "+{}\n"
		if verb == "Delete" {
			body = ""
		}
		return "*** Begin Patch\n*** " + verb + " File: " + p + "\n" + body + "*** End Patch"
	}
	for _, tc := range []struct {
		tool  string
		cwd   string
		args  map[string]any
		class airlock.Class
		tier  airlock.RiskTier
	}{
		// Claude Code's tools, a project's settings and the user's.
		{"Write", "/w", map[string]any{"file_path": ".claude/settings.local.json", "content": `{"disableAllHooks":true}`}, airlock.ClassGateConfigure, airlock.TierPrivileged},
		{"Write", "/w", map[string]any{"file_path": "/home/u/.claude/settings.json", "content": "{}"}, airlock.ClassGateConfigure, airlock.TierPrivileged},
		{"Edit", "/w", map[string]any{"file_path": "/w/.mcp.json", "old_string": "a", "new_string": "b"}, airlock.ClassGateConfigure, airlock.TierPrivileged},
		{"MultiEdit", "/w", map[string]any{"file_path": "/w/.codex/hooks.json", "edits": []any{}}, airlock.ClassGateConfigure, airlock.TierPrivileged},
		{"NotebookEdit", "/w", map[string]any{"notebook_path": "/w/.vscode/x.ipynb", "new_source": "x"}, airlock.ClassGateConfigure, airlock.TierPrivileged},
		// Other hosts' and the builtins.
		{"write_file", "/w", map[string]any{"file_path": ".gemini/settings.json", "content": "{}"}, airlock.ClassGateConfigure, airlock.TierPrivileged},
		{"replace", "/w", map[string]any{"file_path": "/w/.vscode/tasks.json", "old_string": "a", "new_string": "b"}, airlock.ClassGateConfigure, airlock.TierPrivileged},
		{"write_file", "/w", map[string]any{"path": ".cursor/hooks.json", "content": "{}"}, airlock.ClassGateConfigure, airlock.TierPrivileged},
		{"delete_file", "/w", map[string]any{"path": ".claude/settings.json"}, airlock.ClassGateConfigure, airlock.TierPrivileged},
		{"move_file", "/w", map[string]any{"source": "x.json", "destination": ".mcp.json"}, airlock.ClassGateConfigure, airlock.TierPrivileged},
		{"move_file", "/w", map[string]any{"source": ".claude/settings.json", "destination": "old.json"}, airlock.ClassGateConfigure, airlock.TierPrivileged},
		{"copy_file", "/w", map[string]any{"source": "x.json", "destination": "/w/.codex/config.toml"}, airlock.ClassGateConfigure, airlock.TierPrivileged},
		// Case-insensitive file systems.
		{"Write", "/w", map[string]any{"file_path": ".Claude/Settings.Local.JSON", "content": "{}"}, airlock.ClassGateConfigure, airlock.TierPrivileged},
		{"Write", "/w", map[string]any{"file_path": ".GIT/hooks/pre-commit", "content": "x"}, airlock.ClassFSWrite, airlock.TierPrivileged},
		// Airlock's own files.
		{"Write", "/w", map[string]any{"file_path": "~/.config/airlock/claude.token", "content": "x"}, airlock.ClassGateConfigure, airlock.TierPrivileged},
		{"Write", "/srv", map[string]any{"file_path": "airlock-data/checkpoint.key", "content": "x"}, airlock.ClassGateConfigure, airlock.TierPrivileged},
		{"Edit", "/srv", map[string]any{"file_path": "airlock.yaml", "old_string": "a", "new_string": "b"}, airlock.ClassGateConfigure, airlock.TierPrivileged},
		{"Read", "/w", map[string]any{"file_path": "~/.config/airlock/claude.token"}, airlock.ClassCredentialsRead, airlock.TierPrivileged},
		{"Read", "/srv", map[string]any{"file_path": "airlock-data/checkpoint.key"}, airlock.ClassCredentialsRead, airlock.TierPrivileged},
		// Hosts' logins.
		{"Read", "/w", map[string]any{"file_path": "~/.codex/auth.json"}, airlock.ClassCredentialsRead, airlock.TierPrivileged},
		{"Read", "/w", map[string]any{"file_path": "/Users/u/.claude/.credentials.json"}, airlock.ClassCredentialsRead, airlock.TierPrivileged},
		{"read_file", "/w", map[string]any{"file_path": "/var/run/secrets/kubernetes.io/serviceaccount/token"}, airlock.ClassCredentialsRead, airlock.TierPrivileged},
		{"Read", "/w", map[string]any{"file_path": "/proc/self/environ"}, airlock.ClassCredentialsRead, airlock.TierPrivileged},
		// Patches.
		{"apply_patch", "/w", map[string]any{"command": patch("Add", ".claude/settings.local.json")}, airlock.ClassGateConfigure, airlock.TierPrivileged},
		{"apply_patch", "/w", map[string]any{"command": patch("Delete", ".codex/hooks.json")}, airlock.ClassGateConfigure, airlock.TierPrivileged},
		{"apply_patch", "/w", map[string]any{"command": patch("Add", ".GIT/hooks/pre-commit")}, airlock.ClassFSWrite, airlock.TierPrivileged},
		// A shell redirection.
		{"Bash", "/w", map[string]any{"command": `echo '{"disableAllHooks":true}' > .claude/settings.local.json`}, airlock.ClassGateConfigure, airlock.TierPrivileged},
		{"Bash", "/w", map[string]any{"command": `cp /tmp/x.json .vscode/tasks.json`}, airlock.ClassGateConfigure, airlock.TierPrivileged},
		// Ordinary project files.
		{"Write", "/w", map[string]any{"file_path": "CLAUDE.md", "content": "x"}, airlock.ClassFSWrite, airlock.TierWrite},
		{"Write", "/w", map[string]any{"file_path": ".claude/CLAUDE.md", "content": "x"}, airlock.ClassFSWrite, airlock.TierWrite},
		{"Write", "/w", map[string]any{"file_path": "src/settings.json", "content": "x"}, airlock.ClassFSWrite, airlock.TierWrite},
		{"Write", "/w", map[string]any{"file_path": "config.toml", "content": "x"}, airlock.ClassFSWrite, airlock.TierWrite},
		{"Write", "/w", map[string]any{"file_path": "docs/.claude.md", "content": "x"}, airlock.ClassFSWrite, airlock.TierWrite},
		{"Read", "/w", map[string]any{"file_path": ".claude/settings.json"}, airlock.ClassFSRead, airlock.TierRead},
		{"apply_patch", "/w", map[string]any{"command": patch("Add", "README.md")}, airlock.ClassFSWrite, airlock.TierWrite},
	} {
		c := classifyForTest(t, tc.tool, tc.cwd, tc.args)
		if c.Class != tc.class || c.Tier != tc.tier {
			t.Errorf("%s %v: got %s (%s), want %s (%s)", tc.tool, tc.args, c.Class, c.Tier, tc.class, tc.tier)
		}
		if c.Class == airlock.ClassGateConfigure && c.Capability != airlock.CapGateConfigure {
			t.Errorf("%s %v: capability %s", tc.tool, tc.args, c.Capability)
		}
	}
}
