package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
