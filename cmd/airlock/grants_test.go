package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
)

// TestApproveAndRemember: a reviewer approves `npm test` with --remember
// 7d; the agent's next `npm test …` runs without a person, decided by the
// grant, while `npm test; rm -rf ~` does not; the grant is listed, shown
// and revoked, and then the same call asks again.
func TestApproveAndRemember(t *testing.T) {
	ts := newTestServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go ts.enf.KeepGrants(ctx)

	bash := func(command string) []string {
		return []string{"check", "--agent", "agent-1", "--tool", "Bash", "--cwd", "/w", "--args", `{"command":"` + command + `"}`, "--no-wait"}
	}
	code, stdout, stderr := ts.run(t, "agent", bash("npm test")...)
	m := approvalLine.FindStringSubmatch(stdout)
	if code != exitPending || m == nil {
		t.Fatalf("npm test before any grant: exit %d, want %d with an approval\nstdout:\n%s\nstderr:\n%s", code, exitPending, stdout, stderr)
	}
	out := ts.want(t, "admin", []string{"approvals", "approve", m[1], "--remember", "7d"}, 0,
		"granted ", "agent-1 may run `npm test …` (Bash) without asking, up to write")
	grant := regexp.MustCompile(`granted (\S+):`).FindStringSubmatch(out)
	if grant == nil {
		t.Fatalf("approve --remember named no grant:\n%s", out)
	}

	// The gate takes the grant up from the store's wake-up.
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, stdout, stderr = ts.run(t, "agent", bash("npm test --coverage")...)
		if code == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("npm test --coverage under the grant: exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(stdout, "grant "+grant[1]+" by ops from approval "+m[1]) {
		t.Errorf("the decision does not name the grant:\n%s", stdout)
	}
	if code, stdout, _ := ts.run(t, "agent", bash("npm test; rm -rf ~")...); code == 0 {
		t.Errorf("npm test; rm -rf ~ ran under the grant:\n%s", stdout)
	}
	ts.want(t, "admin", []string{"grants", "list"}, 0, grant[1], "live", "agent-1 may run `npm test …` (Bash)")
	ts.want(t, "bob", []string{"grants", "show", grant[1]}, 0, "covers:", "granted:    by ops from approval "+m[1])
	ts.want(t, "agent", []string{"grants", "list"}, exitCheck, "unauthorized")
	ts.want(t, "bob", []string{"grants", "revoke", grant[1], "--reason", "done"}, 0, "revoked grant "+grant[1])
	ts.want(t, "admin", []string{"grants", "revoke", grant[1]}, exitCheck, "already revoked")

	deadline = time.Now().Add(10 * time.Second)
	for {
		code, stdout, stderr = ts.run(t, "agent", bash("npm test --coverage")...)
		if code == exitPending {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("npm test --coverage after the revocation: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitPending, stdout, stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestGrantProposalsCLI: with too little in the record there is nothing
// to propose, and ratify needs a proposal's agent, tool and one shape.
func TestGrantProposalsCLI(t *testing.T) {
	ts := newTestServer(t)
	ts.want(t, "bob", []string{"grants", "proposals"}, 0, "no proposals")
	ts.want(t, "admin", []string{"grants", "ratify", "--tool", "Bash", "--command", "npm test"}, exitUsage, "needs --agent and --tool")
	ts.want(t, "admin", []string{"grants", "ratify", "--agent", "agent-1", "--tool", "Bash"}, exitUsage, "one of --command, --path or --exact")
	ts.want(t, "admin", []string{"grants", "ratify", "--agent", "agent-1", "--tool", "Bash", "--command", "npm test", "--path", "/w"},
		exitUsage, "one of --command, --path or --exact")
	ts.want(t, "admin", []string{"grants", "ratify", "--agent", "agent-1", "--tool", "Bash", "--command", "npm test"}, exitCheck,
		"no current proposal for agent agent-1, tool Bash, `npm test …`")
}

// TestPolicyBacktestCLI: the server's recorded decisions replayed through
// a changed policy file print what changes; a policy file with an error is
// refused with its location.
func TestPolicyBacktestCLI(t *testing.T) {
	ts := newTestServer(t)
	for _, tool := range []string{"deploy", "read_file", "delete_file"} {
		ts.run(t, "agent", "check", "--agent", "agent-1", "--tool", tool, "--args", `{"target":"x","path":"/w/a"}`, "--no-wait")
	}
	dir := t.TempDir()
	next := filepath.Join(dir, "next.yaml")
	if err := os.WriteFile(next, []byte("name: next\nrules:\n  - {tool: deploy, outcome: auto, max_tier: privileged}\n  - {tool: read_file, outcome: deny}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ts.want(t, "bob", []string{"policy", "backtest", next}, 0, "replayed 3 decisions",
		"asks avoided: 1; newly run without a person: 1", "newly denied: 1", "ask → auto: 1", "auto → deny: 1", "agent-1  deploy")
	ts.want(t, "bob", []string{"policy", "backtest", next, "--json", "--agent", "agent-2"}, 0, `"replayed": 0`)
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: bad\nrules:\n  - {tool: deploy, outcome: sometimes}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ts.want(t, "bob", []string{"policy", "backtest", bad}, exitCheck, "bad.yaml:3:")
}

// TestRememberWithABudget: approve and remember with --remember-budget 2:
// the grant runs what it covers twice, `grants show` says what is left,
// and the third call asks again, naming the spent budget; a malformed
// budget is refused before anything is approved.
func TestRememberWithABudget(t *testing.T) {
	ts := newTestServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go ts.enf.KeepGrants(ctx)
	check := []string{"check", "--agent", "agent-1", "--tool", "Bash", "--cwd", "/w", "--args", `{"command":"make build"}`, "--no-wait"}
	_, stdout, _ := ts.run(t, "agent", check...)
	m := approvalLine.FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("make build asked for no approval:\n%s", stdout)
	}
	ts.want(t, "admin", []string{"approvals", "approve", m[1], "--remember", "7d", "--remember-budget", "2/week"}, exitUsage,
		`--remember-budget: budget "2/week": per "week"`)
	ts.want(t, "admin", []string{"approvals", "approve", m[1], "--remember-budget", "2"}, exitUsage, "needs --remember DURATION")
	out := ts.want(t, "admin", []string{"approvals", "approve", m[1], "--remember", "7d", "--remember-budget", "2"}, 0, "granted ")
	grant := regexp.MustCompile(`granted (\S+):`).FindStringSubmatch(out)
	if grant == nil {
		t.Fatalf("approve --remember named no grant:\n%s", out)
	}
	// The approved request lets one check run (whether before or after
	// the gate takes the grant up); the grant, two more; then it asks.
	deadline := time.Now().Add(10 * time.Second)
	byGrant, byApproval := 0, 0
	for {
		code, stdout, stderr := ts.run(t, "agent", check...)
		switch {
		case code == 0 && strings.Contains(stdout, "grant "+grant[1]):
			byGrant++
			if byGrant == 1 {
				ts.want(t, "bob", []string{"grants", "show", grant[1]}, 0, "budget:", "(2 uses per grant): 1 use left")
			}
			continue
		case code == 0:
			byApproval++
			continue
		case code == exitPending && byGrant == 0 && time.Now().Before(deadline):
			time.Sleep(50 * time.Millisecond) // the gate has not taken the grant up yet
			continue
		}
		if code != exitPending || byGrant != 2 || byApproval != 1 || !strings.Contains(stdout, "is spent") {
			t.Fatalf("after %d runs by the grant and %d by the approval: exit %d, want %d naming the spent budget\nstdout:\n%s\nstderr:\n%s",
				byGrant, byApproval, code, exitPending, stdout, stderr)
		}
		break
	}
	ts.want(t, "bob", []string{"grants", "show", grant[1]}, 0, "0 uses left")
}

// TestApprovalGroups: pending requests of one agent, tool and shape are
// grouped; approving one with --group approves the group, each request
// bound to its own hash and audited as its own resolution; a request
// decided on its own refuses --group.
func TestApprovalGroups(t *testing.T) {
	ts := newTestServer(t)
	var ids []string
	for _, command := range []string{"npm test --shard=1", "npm test --shard=2", "npm test --watch", "make build"} {
		_, stdout, _ := ts.run(t, "agent", "check", "--agent", "agent-1", "--tool", "Bash", "--cwd", "/w",
			"--args", `{"command":"`+command+`"}`, "--no-wait")
		m := approvalLine.FindStringSubmatch(stdout)
		if m == nil {
			t.Fatalf("%s asked for no approval:\n%s", command, stdout)
		}
		ids = append(ids, m[1])
	}
	prod := ts.checkPending(t, "prod") // a privileged deploy: alone
	ts.want(t, "bob", []string{"approvals", "groups"}, 0, "agent-1 may run `npm test …` (Bash): 3 pending",
		"settle all: airlock approvals approve "+ids[0]+" --group", "agent-1 may run `make build …` (Bash): 1 pending",
		"decided on its own")
	ts.want(t, "admin", []string{"approvals", "approve", prod, "--group"}, exitCheck, "is decided on its own")
	ts.want(t, "admin", []string{"approvals", "approve", ids[1], "--group", "--run-now"}, exitUsage, "neither --hash nor --run-now")
	out := ts.want(t, "admin", []string{"approvals", "approve", ids[1], "--group", "--reason", "the test suite"}, 0)
	if n := strings.Count(out, "by ops at"); n != 3 {
		t.Fatalf("approve --group approved %d requests, want 3:\n%s", n, out)
	}
	for i, id := range ids {
		ap, err := ts.db.Approval(context.Background(), id)
		want := airlock.StatusApproved
		if i == 3 {
			want = airlock.StatusPending // make build: another shape
		}
		if err != nil || ap.Status != want || (want == airlock.StatusApproved && ap.Reason != "the test suite") {
			t.Errorf("request %d: %s (%q), %v; want %s", i, ap.Status, ap.Reason, err, want)
		}
	}
	evs, err := ts.db.Events(context.Background(), airlock.EventFilter{Kind: airlock.EventApprovalResolved, Limit: 100})
	if err != nil || len(evs) != 3 {
		t.Errorf("%d approval.resolved events, %v; want one per request", len(evs), err)
	}
}
