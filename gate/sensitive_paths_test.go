package gate

import (
	"context"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock"
)

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
