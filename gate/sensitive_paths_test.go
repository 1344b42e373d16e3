package gate

import (
	"context"
	"github.com/airlock-dev/airlock"
	"strings"
	"testing"
)

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

const sensitivePolicy = `version: 1
name: vault
layer: project
sensitive_paths:
  secrets: ["~/work/vault/**", "**/*.secret.json"]
  gate_config: ops/airlock/**
  runs_later: [/opt/hooks/**]
`

// TestSensitivePathsPolicy: a policy's sensitive_paths count for the file
// tools, patches and shell commands, add to those of the layers above,
// and are located when wrong.
func TestSensitivePathsPolicy(t *testing.T) {
	p, err := LoadPolicy("vault.yaml", []byte(sensitivePolicy))
	if err != nil {
		t.Fatal(err)
	}
	if got := len(p.SensitivePaths()); got != 4 {
		t.Fatalf("SensitivePaths: %d entries, want 4", got)
	}
	if got := p.SensitivePaths()[2].Source; got != "vault.yaml:6:16" {
		t.Errorf("source %q, want vault.yaml:6:16", got)
	}
	g, err := New(ShellForTests, StarterPolicy(), p)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		tool  string
		args  map[string]any
		class airlock.Class
		tier  airlock.RiskTier
	}{
		{"Read", map[string]any{"file_path": "/home/u/work/vault/db.json"}, airlock.ClassCredentialsRead, airlock.TierPrivileged},
		{"Read", map[string]any{"file_path": "/w/config/prod.SECRET.json"}, airlock.ClassCredentialsRead, airlock.TierPrivileged},
		{"Write", map[string]any{"file_path": "/w/ops/airlock/org.yaml", "content": "x"}, airlock.ClassGateConfigure, airlock.TierPrivileged},
		{"apply_patch", map[string]any{"command": "*** Begin Patch\n*** Add File: ops/airlock/x.yaml\n+x\n*** End Patch"}, airlock.ClassGateConfigure, airlock.TierPrivileged},
		{"Write", map[string]any{"file_path": "/opt/hooks/x.sh", "content": "x"}, airlock.ClassFSWrite, airlock.TierPrivileged},
		{"Read", map[string]any{"file_path": "/home/u/.aws/credentials"}, airlock.ClassCredentialsRead, airlock.TierPrivileged},
		{"Read", map[string]any{"file_path": "/w/ops/readme.md"}, airlock.ClassFSRead, airlock.TierRead},
		// Shell commands judge by the same paths.
		{"Bash", map[string]any{"command": "cat ~/work/vault/db.json"}, airlock.ClassCredentialsRead, airlock.TierPrivileged},
		{"Bash", map[string]any{"command": "f=config/prod.secret.json; head \"$f\""}, airlock.ClassCredentialsRead, airlock.TierPrivileged},
		{"Bash", map[string]any{"command": "echo x > ops/airlock/org.yaml"}, airlock.ClassGateConfigure, airlock.TierPrivileged},
		{"Bash", map[string]any{"command": "cp build.sh /opt/hooks/"}, airlock.ClassFSCopy, airlock.TierPrivileged},
		{"Bash", map[string]any{"command": "cat ops/readme.md"}, airlock.ClassFSRead, airlock.TierRead},
	} {
		d := g.Decide(ctx, airlock.Action{Agent: "a", Tool: tc.tool, Cwd: "/w", Args: airlock.MustArgs(tc.args)})
		if d.Classification.Class != tc.class || d.Classification.Tier != tc.tier {
			t.Errorf("%s %v: got %s (%s), want %s (%s)", tc.tool, tc.args, d.Classification.Class,
				d.Classification.Tier, tc.class, tc.tier)
		}
	}
	// Without the policy, the same paths are ordinary.
	g0, err := New(ShellForTests, StarterPolicy())
	if err != nil {
		t.Fatal(err)
	}
	if d := g0.Decide(ctx, airlock.Action{Agent: "a", Tool: "Read", Args: airlock.MustArgs(map[string]any{"file_path": "/home/u/work/vault/db.json"})}); d.Classification.Class != airlock.ClassFSRead {
		t.Errorf("without the policy: %s", d.Classification.Class)
	}

	// A lower layer adds to what an upper one said.
	agent, err := LoadPolicy("agent.yaml", []byte("layer: agent\nsensitive_paths: {secrets: /data/keys/**}\n"))
	if err != nil {
		t.Fatal(err)
	}
	g2, err := New(ShellForTests, StarterPolicy(), p, agent)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"/data/keys/k", "/home/u/work/vault/db.json"} {
		if d := g2.Decide(ctx, airlock.Action{Agent: "a", Tool: "Read", Args: airlock.MustArgs(map[string]any{"file_path": f})}); d.Classification.Class != airlock.ClassCredentialsRead {
			t.Errorf("two layers, %s: %s", f, d.Classification.Class)
		}
	}
}

func TestSensitivePathsErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"sensitive_paths:\n  secret: [x]\n", `p.yaml:2:3: unknown field "secret" in sensitive_paths (did you mean "secrets"?`},
		{"sensitive_paths:\n  secrets: [\"!~/.ssh/id_rsa\"]\n", "p.yaml:2:13: sensitive_paths.secrets[0]: "},
		{"sensitive_paths:\n  gate_config:\n    - ok/**\n    - /a/[b\n", "p.yaml:4:7: sensitive_paths.gate_config[1]: "},
		{"sensitive_paths:\n  runs_later: {a: b}\n", "p.yaml:2:15: sensitive_paths.runs_later: expected a single value, got a mapping"},
		{"sensitive_paths: [x]\n", "p.yaml:1:18: sensitive_paths: expected a mapping"},
	} {
		_, err := LoadPolicy("p.yaml", []byte(tc.src))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.src, err, tc.want)
		}
	}
}

// TestStarterGateConfigure: under the starter policy, an agent never
// reconfigures the gate without a person.
func TestStarterGateConfigure(t *testing.T) {
	g, err := New(ShellForTests, StarterPolicy())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, a := range []airlock.Action{
		{Agent: "a", Tool: "Write", Cwd: "/w", Args: airlock.MustArgs(map[string]any{"file_path": ".claude/settings.local.json", "content": `{"disableAllHooks":true}`})},
		{Agent: "a", Tool: "Edit", Cwd: "/w", Args: airlock.MustArgs(map[string]any{"file_path": ".gemini/settings.json", "old_string": "a", "new_string": "b"})},
		{Agent: "a", Tool: "apply_patch", Cwd: "/w", Args: airlock.MustArgs(map[string]any{"command": "*** Begin Patch\n*** Add File: .codex/hooks.json\n+{}\n*** End Patch"})},
		{Agent: "a", Tool: "Bash", Cwd: "/w", Args: airlock.MustArgs(map[string]any{"command": "echo '{}' > .mcp.json"})},
		{Agent: "a", Tool: "write_file", Cwd: "/w", Args: airlock.MustArgs(map[string]any{"path": ".vscode/tasks.json", "content": "{}"})},
	} {
		d := g.Decide(ctx, a)
		if d.Outcome != airlock.Suggest || !d.NeedsHuman || d.Classification.Class != airlock.ClassGateConfigure {
			t.Errorf("%s %s: %s, needs-human %v, class %s", a.Tool, a.Args, d.Outcome, d.NeedsHuman, d.Classification.Class)
		}
	}
}
