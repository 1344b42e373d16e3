package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/airlock-dev/airlock"
	airlockhttp "github.com/airlock-dev/airlock/http"
)

// runCLI runs the command line and returns its exit code and output.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// wantRun runs the CLI and checks its exit code and that its output
// (stdout or stderr) contains every string of contains.
func wantRun(t *testing.T, args []string, code int, contains ...string) {
	t.Helper()
	got, stdout, stderr := runCLI(t, args...)
	if got != code {
		t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", got, code, stdout, stderr)
	}
	for _, want := range contains {
		if !strings.Contains(stdout+stderr, want) {
			t.Errorf("output does not contain %q\nstdout:\n%s\nstderr:\n%s", want, stdout, stderr)
		}
	}
}

func TestPolicyCommands(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		contains []string // in stdout or stderr
	}{
		{"lint ok", []string{"policy", "lint", "testdata/policy.yaml"}, exitOK, []string{"ok: 1 policy file(s), 0 warning(s)"}},
		{"lint broken", []string{"policy", "lint", "testdata/broken.yaml"}, exitCheck,
			[]string{`testdata/broken.yaml:3:5: unknown field "outcom" in rules[0] (did you mean "outcome"?`}},
		{"lint warns", []string{"policy", "lint", "testdata/failing.yaml"}, exitOK,
			[]string{"testdata/failing.yaml:3:5: warning: rule shadowed can never decide: rule writes (line 2)"}},
		{"lint strict", []string{"policy", "lint", "--strict", "testdata/failing.yaml"}, exitCheck, []string{"1 warning(s), and --strict is set"}},
		{"lint warns about a default that stops at its ceiling", []string{"policy", "lint", "testdata/levels.yaml"}, exitOK,
			[]string{"testdata/levels.yaml:4:44: warning: this policy writes outcomes as levels (L1-L3), so an action no rule matches gets the levels default L2 (notify), but only up to network-egress",
				"`default: {outcome: L2, max_tier: network-egress}`", "ok: 1 policy file(s), 1 warning(s)"}},
		{"lint missing file", []string{"policy", "lint", "testdata/nope.yaml"}, exitCheck, []string{"testdata/nope.yaml:", "no such file"}},
		{"test ok", []string{"policy", "test", "-v", "testdata/policy.yaml"}, exitOK,
			[]string{"PASS git status runs (testdata/policy.yaml:12:5)", "ok: 2 test(s) passed"}},
		{"test fails", []string{"policy", "test", "testdata/failing.yaml"}, exitCheck,
			[]string{`FAIL writes run (testdata/failing.yaml:5:5): outcome is ask, want auto`, "FAIL: 1 of 1 test(s) failed"}},
		{"test broken", []string{"policy", "test", "testdata/broken.yaml"}, exitCheck, []string{"broken.yaml:3:5"}},
		{"explain", []string{"policy", "explain", "testdata/policy.yaml", "--agent", "coder-1", "--tool", "Bash",
			"--args", `{"command":"git status && rm -rf /"}`}, exitOK,
			[]string{"outcome:     suggest", "AIRLOCK-NEEDS-HUMAN", "rule git-status", "fs.delete", "hash:        sha256:"}},
		{"explain a default that stops at its ceiling", []string{"policy", "explain", "testdata/levels.yaml", "--agent", "a", "--tool", "Bash",
			"--args", `{"command":"sudo rm -rf /"}`}, exitOK,
			[]string{"outcome:     ask", "decided by:  command 1: tier default",
				"ceiling:     the levels default (notify) of project policy levels (testdata/levels.yaml) applies where no rule matches, but reaches only network-egress, " +
					"and command 1 (rm -rf /) is privileged (system.admin); to let it decide such actions, write `default: {outcome: L2, max_tier: privileged}`"}},
		{"explain a broken policy", []string{"policy", "explain", "testdata/failing.yaml", "--agent", "a", "--tool", "t"}, exitCheck,
			[]string{`test "writes run" fails`}},
		{"explain without agent", []string{"policy", "explain", "testdata/policy.yaml", "--tool", "Bash"}, exitUsage,
			[]string{"needs --agent and --tool"}},
		{"explain with duplicate keys", []string{"policy", "explain", "testdata/policy.yaml", "--agent", "a", "--tool", "t",
			"--args", `{"a":1,"a":2}`}, exitUsage, []string{`duplicate object member name "a"`}},
		{"explain with a bad hint", []string{"policy", "explain", "testdata/policy.yaml", "--agent", "a", "--tool", "t",
			"--hint-tier", "huge"}, exitUsage, []string{`unknown risk tier "huge"`}},
		{"test with hints", []string{"policy", "test", "-v", "testdata/readonly.yaml"}, exitOK,
			[]string{"PASS a read the server claims runs (testdata/readonly.yaml:6:5)", "ok: 2 test(s) passed"}},
		{"test with an unknown hint", []string{"policy", "test", "testdata/badhint.yaml"}, exitCheck,
			[]string{`testdata/badhint.yaml:3:63: unknown field "readonly" in tests[0].action.hints (did you mean "read_only"? valid: needs_human, read_only, reason, tier)`}},
		{"explain with a hint", []string{"policy", "explain", "testdata/readonly.yaml", "--agent", "a", "--tool", "mcp__fs__read_text_file",
			"--args", `{"path":"README.md"}`, "--hint", "read_only"}, exitOK,
			[]string{"outcome:     auto", "hints:       read_only\n", "class:       mcp.read", "classifier trust-fs-reads"}},
		{"explain without the hint", []string{"policy", "explain", "testdata/readonly.yaml", "--agent", "a", "--tool", "mcp__fs__read_text_file",
			"--args", `{"path":"README.md"}`, "--hint", "read_only=false", "--hint", "tier=read"}, exitOK,
			[]string{"outcome:     ask", "class:       mcp.call"}},
		{"explain with hints and a tier", []string{"policy", "explain", "testdata/readonly.yaml", "--agent", "a", "--tool", "mcp__fs__read_text_file",
			"--hint", "read_only", "--hint", "tier=spend", "--hint", "needs_human"}, exitOK,
			[]string{"outcome:     suggest", "hints:       tier=spend, needs_human, read_only\n", "risk tier:   spend"}},
		{"explain with an unknown hint", []string{"policy", "explain", "testdata/readonly.yaml", "--agent", "a", "--tool", "t",
			"--hint", "readonly"}, exitUsage, []string{`--hint readonly: unknown hint "readonly" (did you mean "read_only"? valid: needs_human, read_only, reason, tier)`}},
		{"explain with a bad hint value", []string{"policy", "explain", "testdata/readonly.yaml", "--agent", "a", "--tool", "t",
			"--hint", "read_only=yes"}, exitUsage, []string{`--hint read_only=yes: hint read_only is true or false, not "yes"`}},
		{"explain a known MCP server's read", []string{"policy", "explain", "../../gate/starter.yaml", "--agent", "a", "--tool", "mcp__fs__read_text_file",
			"--mcp-server", "filesystem", "--args", `{"path":"/home/u/p/README.md"}`}, exitOK, []string{"outcome:     auto", "class:       fs.read"}},
		{"explain a known MCP server's secret read", []string{"policy", "explain", "../../gate/starter.yaml", "--agent", "a", "--tool", "mcp__fs__read_text_file",
			"--mcp-server", "filesystem", "--args", `{"path":"/home/u/.ssh/id_rsa"}`}, exitOK, []string{"outcome:     suggest", "credentials.read"}},
		{"explain an unknown MCP server", []string{"policy", "explain", "../../gate/starter.yaml", "--agent", "a", "--tool", "mcp__fs__read_text_file",
			"--mcp-server", "filesytem"}, exitUsage, []string{`--mcp-server: "filesytem" is not a server of Airlock's MCP catalogue (did you mean "filesystem"?`}},
		{"effective", []string{"policy", "effective", "testdata/policy.yaml", "--agent", "coder-1"}, exitOK,
			[]string{"agent:        coder-1\n", "project layer: demo (testdata/policy.yaml)",
				"1. auto: rule git-status [tool] tool Bash · command git status * · up to network-egress (testdata/policy.yaml:3:5)",
				"1. tag + needs-human: rule deletes-need-a-person [class] class fs.delete · reviewers sre (testdata/policy.yaml:7:5)"}},
		{"effective without agent", []string{"policy", "effective", "testdata/policy.yaml"}, exitUsage,
			[]string{"--agent is required with policy files"}},
		{"effective of a broken policy", []string{"policy", "effective", "testdata/broken.yaml", "--agent", "a"}, exitCheck,
			[]string{"testdata/broken.yaml:3:5"}},
		{"no files", []string{"policy", "test"}, exitUsage, []string{"needs at least one policy file"}},
		{"unknown flag", []string{"policy", "lint", "--nope", "x"}, exitUsage, []string{"unknown flag: --nope"}},
		{"unknown command", []string{"polcy"}, exitUsage, []string{`unknown command "polcy"`}},
		{"schema", []string{"policy", "schema"}, exitOK, []string{`"title": "Airlock policy"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantRun(t, tc.args, tc.code, tc.contains...)
		})
	}
}

func TestPolicyExplainJSON(t *testing.T) {
	code, stdout, stderr := runCLI(t, "policy", "explain", "testdata/policy.yaml", "--agent", "coder-1",
		"--tool", "Bash", "--args", `{"command":"git status"}`, "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var d struct {
		Outcome        string `json:"outcome"`
		ActionHash     string `json:"action_hash"`
		Classification struct {
			Class string `json:"class"`
		} `json:"classification"`
		Rule struct {
			ID   string `json:"id"`
			Line int    `json:"line"`
		} `json:"rule"`
	}
	if err := json.Unmarshal([]byte(stdout), &d); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	if d.Outcome != "auto" || d.Classification.Class != "git.read" || d.Rule.ID != "git-status" || d.Rule.Line != 3 || len(d.ActionHash) != 64 {
		t.Fatalf("decision = %+v", d)
	}
}

// A session policy given to effective is named as left out, not merged:
// a running session pushes it for itself.
func TestPolicyEffectiveSessionPolicy(t *testing.T) {
	session := filepath.Join(t.TempDir(), "session.yaml")
	if err := os.WriteFile(session, []byte("name: tight\nlayer: session\ndefault: deny\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "policy", "effective", "testdata/policy.yaml", session, "--agent", "coder-1")
	if code != exitOK || !strings.Contains(stderr, "session policy tight") || !strings.Contains(stderr, "not shown") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	if strings.Contains(stdout, "tight") || !strings.Contains(stdout, "project layer: demo") {
		t.Errorf("the effective policy shows the session policy, or not the project's:\n%s", stdout)
	}
}

// TestReadmeNamesTheServer: the README's walkthrough says, before its first
// command, how to reach a server that is not on the default address.
func TestReadmeNamesTheServer(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, walk, ok := strings.Cut(string(b), "## Five minutes with the server")
	if !ok {
		t.Fatal("README.md has no walkthrough")
	}
	before, _, _ := strings.Cut(walk, "./airlock serve")
	for _, want := range []string{envServer, "--server", defaultListen} {
		if !strings.Contains(before, want) {
			t.Errorf("the walkthrough does not say %q before its first command", want)
		}
	}
}

// TestPolicyShowFiles: policy show prints the stack the files make, as
// YAML that reads back, as a table and as data, and the starter for a
// configuration without policies.
func TestPolicyShowFiles(t *testing.T) {
	code, stdout, stderr := runCLI(t, "policy", "show", "testdata/show.yaml")
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"# The policy stack of the policy files given, from the top layer down.\n",
		"  - name: show\n    layer: project\n    file: testdata/show.yaml\n    sha256: ",
		"    default: {outcome: notify, max_tier: write} # testdata/show.yaml:4:10\n",
		"        destructive: ask                 # destructive and above: at least ask (testdata/show.yaml:7:11)\n",
		"      coder-1:                           # testdata/show.yaml:10:3\n        preset: standard\n        owner: alice\n",
		"      - id: deploy                       # testdata/show.yaml:16:5 · step tool\n" +
			"        description: the deploy tool runs on its own\n        tool: deploy_prod\n" +
			"        outcome: auto                    # up to privileged\n",
		"        tool: [Read, Grep]\n        when: \"args.file_path.startsWith(\\\"/tmp\\\")\"\n        outcome: auto                    # up to network-egress\n",
		"      - id: deletes-need-a-person        # testdata/show.yaml:29:5 · step class\n        class: fs.delete\n        needs_human: true\n",
		"    sensitive_paths:\n      secrets: ~/work/vault/**\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("policy show lacks %q:\n%s", want, stdout)
		}
	}
	// The YAML reads back as what it shows.
	var doc struct {
		Layers []struct {
			Name  string `yaml:"name"`
			Layer string `yaml:"layer"`
			Rules []struct {
				ID      string `yaml:"id"`
				When    string `yaml:"when"`
				Outcome string `yaml:"outcome"`
			} `yaml:"rules"`
		} `yaml:"layers"`
	}
	if err := yaml.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("policy show is not YAML: %v\n%s", err, stdout)
	}
	if len(doc.Layers) != 1 || doc.Layers[0].Layer != "project" || len(doc.Layers[0].Rules) != 4 ||
		doc.Layers[0].Rules[1].When != `args.file_path.startsWith("/tmp")` || doc.Layers[0].Rules[3].Outcome != "" {
		t.Errorf("policy show reads back as %+v", doc)
	}

	wantRun(t, []string{"policy", "show", "--table", "testdata/show.yaml"}, exitOK,
		"LAYER    NAME  FILE                SHA256", "project  show  testdata/show.yaml",
		"policy default              what no rule matches", "up to write",
		"rule deploy                 tool deploy_prod", "up to privileged      testdata/show.yaml:16:5",
		"rule deletes-need-a-person  class fs.delete", "tag + needs-human")

	code, stdout, _ = runCLI(t, "policy", "show", "--json", "testdata/show.yaml")
	var st airlockhttp.PolicyStack
	if code != exitOK || json.Unmarshal([]byte(stdout), &st) != nil || len(st.Layers) != 1 {
		t.Fatalf("policy show --json: exit %d\n%s", code, stdout)
	}
	l := st.Layers[0]
	if l.Name != "show" || len(l.SHA256) != 64 || l.Default != airlock.Notify || l.DefaultCeiling != airlock.TierWrite ||
		len(l.Floors) != 2 || len(l.Agents) != 1 || len(l.Classifiers) != 1 || len(l.Rules) != 4 || l.Tests != 1 ||
		len(l.SensitivePaths["secrets"]) != 1 {
		t.Errorf("policy show --json: %+v", l)
	}
	if r := l.Rules[0]; r.ID != "deploy" || r.Ceiling != airlock.TierPrivileged || len(r.Reach) != 1 || !r.Reach[0].Unknown {
		t.Errorf("rule deploy as data: %+v", r)
	}

	// The configuration's policies, and the starter without any.
	dir := t.TempDir()
	abs, _ := filepath.Abs("testdata/show.yaml")
	writeFile(t, filepath.Join(dir, "with.yaml"), "policies: ["+abs+"]\n")
	writeFile(t, filepath.Join(dir, "without.yaml"), "listen: 127.0.0.1:8080\n")
	wantRun(t, []string{"policy", "show", "--config", filepath.Join(dir, "with.yaml")}, exitOK,
		"# The policy stack of the policy files "+filepath.Join(dir, "with.yaml")+" names", "  - name: show\n")
	wantRun(t, []string{"policy", "show", "--config", filepath.Join(dir, "without.yaml")}, exitOK,
		"which names no policy file: the built-in starter policy", "  - name: starter\n    layer: organisation\n    file: \"builtin:starter.yaml\"\n",
		"        write: ask ", "      - id: needs-a-human ")

	wantRun(t, []string{"policy", "show", "--json", "--table", "testdata/show.yaml"}, exitUsage, "--json and --table are two formats")
	wantRun(t, []string{"policy", "show", "--config", filepath.Join(dir, "with.yaml"), "testdata/show.yaml"}, exitUsage, "not both")
	wantRun(t, []string{"policy", "show", "testdata/broken.yaml"}, exitCheck, "testdata/broken.yaml:3:5")
}

// TestReadmeSaysHowToRecover: the walkthrough's first step, which prints the
// one-time admin token, says how to get another when it is lost.
func TestReadmeSaysHowToRecover(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, step, _ := strings.Cut(string(b), "**1. Start the server**")
	step, _, _ = strings.Cut(step, "**2.")
	if !strings.Contains(step, "airlock token recover") {
		t.Errorf("the walkthrough's step 1 does not name 'airlock token recover':\n%s", step)
	}
}
