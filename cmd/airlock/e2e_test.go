package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/client"
)

// e2e is a running airlock serve (the real Main) and tokens made through
// its API, as a user would: the first-start admin token, then coder-1's
// agent token and bob the reviewer's.
type e2e struct {
	main         *Main
	url          string
	admin, agent string // secrets
	bob          string
}

// startMain runs Main on listen (":0" for any port) over dataDir with the
// e2e policy, and returns it with the admin token it printed, if any.
func startMain(t *testing.T, dataDir, listen string) (*Main, string) {
	t.Helper()
	m, out, err := runMain(t, dataDir, listen)
	if err != nil {
		t.Fatal(err)
	}
	secret := regexp.MustCompile(`AIRLOCK_TOKEN=(\S+)`).FindStringSubmatch(out)
	if secret == nil {
		return m, ""
	}
	return m, secret[1]
}

// runMain runs Main on listen over dataDir with the e2e policy, and returns
// it with what it printed; a Main that failed to start is closed.
func runMain(t *testing.T, dataDir, listen string) (*Main, string, error) {
	t.Helper()
	return runMainWith(t, dataDir, listen, nil)
}

// startMainWith runs Main on any port over dataDir with the e2e policy and
// the configuration as set changes it, closed when the test ends; it
// returns it with the admin token it printed.
func startMainWith(t *testing.T, dataDir string, set func(*Config)) (*Main, string) {
	t.Helper()
	m, out, err := runMainWith(t, dataDir, "127.0.0.1:0", set)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	secret := regexp.MustCompile(`AIRLOCK_TOKEN=(\S+)`).FindStringSubmatch(out)
	if secret == nil {
		t.Fatal("a fresh server printed no admin token")
	}
	return m, secret[1]
}

func runMainWith(t *testing.T, dataDir, listen string, set func(*Config)) (*Main, string, error) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Listen, cfg.DataDir = listen, dataDir
	cfg.Store.Path = filepath.Join(dataDir, "airlock.db")
	cfg.Policies = []string{filepath.Join("testdata", "e2e.yaml")}
	cfg.Timeouts.Sweep = Duration(100 * time.Millisecond)
	cfg.Timeouts.Shutdown = Duration(5 * time.Second)
	if set != nil {
		set(&cfg)
		if err := cfg.readChannelSecrets(); err != nil {
			return nil, "", err
		}
	}
	var out bytes.Buffer
	m := &Main{Config: cfg, Stdout: &out}
	err := m.Run(t.Context())
	if err != nil {
		m.Close()
	}
	return m, out.String(), err
}

func newE2E(t *testing.T) *e2e {
	t.Helper()
	m, admin := startMain(t, t.TempDir(), "127.0.0.1:0")
	t.Cleanup(func() { m.Close() })
	if admin == "" {
		t.Fatal("a fresh server printed no admin token")
	}
	e := &e2e{main: m, url: m.URL(), admin: admin}
	e.agent = e.token(t, "--role", "agent", "--agent", "coder-1")
	e.bob = e.token(t, "--role", "reviewer", "--name", "bob")
	return e
}

// token makes a token with the CLI, as the admin.
func (e *e2e) token(t *testing.T, args ...string) string {
	t.Helper()
	out := e.cli(t, e.admin, 0, append([]string{"token", "create", "--json"}, args...)...)
	var nt airlock.NewToken
	if err := json.Unmarshal([]byte(out), &nt); err != nil || nt.Secret == "" {
		t.Fatalf("token create --json: %v\n%s", err, out)
	}
	return nt.Secret
}

// cli runs the command line against the server with a token and checks
// its exit code; it returns stdout.
func (e *e2e) cli(t *testing.T, token string, code int, args ...string) string {
	t.Helper()
	t.Setenv("AIRLOCK_TOKEN", token)
	got, stdout, stderr := runCLI(t, append(args, "--server", e.url)...)
	if got != code {
		t.Fatalf("airlock %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), got, code, stdout, stderr)
	}
	return stdout + stderr
}

func (e *e2e) client(secret string) *client.Client { return client.New(e.url, secret) }

func action(tool, arg string) airlock.Action {
	return airlock.Action{Agent: "coder-1", Tool: tool, Args: airlock.MustArgs(map[string]any{"target": arg})}
}

// pending waits until the agent's check has queued its request, and
// returns it.
func (e *e2e) pending(t *testing.T, tool string) airlock.Approval {
	t.Helper()
	return e.pendingN(t, tool, 1)[0]
}

// pendingN waits until n requests for tool are pending.
func (e *e2e) pendingN(t *testing.T, tool string, n int) []airlock.Approval {
	t.Helper()
	c := e.client(e.bob)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		page, err := c.Approvals(t.Context(), airlock.ApprovalFilter{Status: []airlock.ApprovalStatus{airlock.StatusPending}, Tool: tool})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Approvals) == n {
			return page.Approvals
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%d pending %s requests did not appear", n, tool)
	return nil
}

// enforceAsync runs the agent's blocking check in the background.
func (e *e2e) enforceAsync(t *testing.T, a airlock.Action) <-chan airlock.Enforcement {
	done := make(chan airlock.Enforcement, 1)
	c := e.client(e.agent)
	go func() { done <- c.Enforce(context.WithoutCancel(t.Context()), a) }()
	return done
}

func receive(t *testing.T, ch <-chan airlock.Enforcement) airlock.Enforcement {
	t.Helper()
	select {
	case enf := <-ch:
		return enf
	case <-time.After(30 * time.Second):
		t.Fatal("the blocked check did not return")
		return airlock.Enforcement{}
	}
}

func TestE2EAskApprovedFromTheCLI(t *testing.T) {
	e := newE2E(t)
	done := e.enforceAsync(t, action("deploy", "prod"))
	ap := e.pending(t, "deploy")
	out := e.cli(t, e.bob, 0, "approvals", "approve", ap.ID, "--reason", "release window")
	if !strings.Contains(out, "bob") {
		t.Errorf("approve output does not say who approved:\n%s", out)
	}
	enf := receive(t, done)
	if !enf.Allowed || enf.Approval == nil || enf.Approval.ResolvedBy != "bob" || enf.Approval.Surface != airlock.SurfaceCLI {
		t.Fatalf("the waiting check: %+v", enf)
	}
	// The approval is in the audit log, which verifies.
	out = e.cli(t, e.bob, 0, "audit", "verify")
	if !strings.Contains(strings.ToLower(out), "ok") && !strings.Contains(strings.ToLower(out), "verified") {
		t.Errorf("audit verify:\n%s", out)
	}
}

func TestE2EReject(t *testing.T) {
	e := newE2E(t)
	done := e.enforceAsync(t, action("deploy", "staging"))
	ap := e.pending(t, "deploy")
	e.cli(t, e.bob, 0, "approvals", "reject", ap.ID, "--reason", "not on a Friday")
	enf := receive(t, done)
	if enf.Allowed || enf.Code != airlock.CodeRejected || !strings.Contains(enf.Message, "not on a Friday") {
		t.Fatalf("rejected check: %+v", enf)
	}
}

func TestE2ETimeout(t *testing.T) {
	e := newE2E(t)
	enf := receive(t, e.enforceAsync(t, action("page_oncall", "db")))
	if enf.Allowed || enf.Code != airlock.CodeTimeout {
		t.Fatalf("unanswered check: %+v, want AIRLOCK-TIMEOUT", enf)
	}
}

func TestE2ESuggestThenOneShotRetry(t *testing.T) {
	e := newE2E(t)
	agent := e.client(e.agent)
	a := action("propose", "refactor")
	enf := agent.Enforce(t.Context(), a)
	if enf.Allowed || enf.Code != airlock.CodeSuggested || enf.Approval == nil {
		t.Fatalf("suggest: %+v", enf)
	}
	e.cli(t, e.bob, 0, "approvals", "approve", enf.Approval.ID)
	if enf = agent.Enforce(t.Context(), a); !enf.Allowed || enf.Label != airlock.LabelGrantUsed {
		t.Fatalf("retry after approval: %+v, want allowed once", enf)
	}
	if enf = agent.Enforce(t.Context(), a); enf.Allowed || enf.Code != airlock.CodeSuggested {
		t.Fatalf("second retry: %+v, want a new proposal", enf)
	}
}

func TestE2ENeedsHuman(t *testing.T) {
	e := newE2E(t)
	enf := e.client(e.agent).Enforce(t.Context(), action("wire_money", "acme"))
	if enf.Allowed || enf.Code != airlock.CodeNeedsHuman || enf.Approval == nil ||
		!strings.HasSuffix(enf.Approval.Class, airlock.NeedsHumanSuffix) || !enf.Approval.Detail.RequiresHuman {
		t.Fatalf("needs-human: %+v", enf)
	}
}

func TestE2EAgentCannotApprove(t *testing.T) {
	e := newE2E(t)
	done := e.enforceAsync(t, action("deploy", "prod"))
	ap := e.pending(t, "deploy")
	out := e.cli(t, e.agent, exitCheck, "approvals", "approve", ap.ID)
	if !strings.Contains(out, "unauthorized") && !strings.Contains(out, "may not") {
		t.Errorf("agent approving: %s", out)
	}
	// The attempt is audited, and the request is still pending.
	page, err := e.client(e.admin).Events(t.Context(), airlock.EventFilter{Kind: airlock.EventAccessRefused})
	if err != nil || len(page.Events) != 1 || !strings.Contains(string(page.Events[0].Payload), "agent:coder-1") {
		t.Fatalf("refused attempt not audited: %+v, %v", page.Events, err)
	}
	if got, _ := e.client(e.bob).Approval(t.Context(), ap.ID); got.Status != airlock.StatusPending {
		t.Fatalf("request is %s after the agent's attempt", got.Status)
	}
	e.cli(t, e.bob, 0, "approvals", "reject", ap.ID, "--reason", "cleanup")
	receive(t, done)
}

func TestE2EWrongHashRefused(t *testing.T) {
	e := newE2E(t)
	done := e.enforceAsync(t, action("deploy", "prod"))
	ap := e.pending(t, "deploy")
	other, _ := action("deploy", "something else").Hash()
	out := e.cli(t, e.bob, exitCheck, "approvals", "approve", ap.ID, "--hash", other.String())
	if !strings.Contains(out, airlock.CodeHashMismatch) {
		t.Errorf("wrong hash: %s", out)
	}
	if got, _ := e.client(e.bob).Approval(t.Context(), ap.ID); got.Status != airlock.StatusPending {
		t.Fatalf("request is %s after a mismatched approval", got.Status)
	}
	e.cli(t, e.bob, 0, "approvals", "approve", ap.ID, "--hash", ap.ActionHash.String())
	if enf := receive(t, done); !enf.Allowed {
		t.Fatalf("approved with the right hash: %+v", enf)
	}
}

// TestE2ERestart stops the server with requests pending and a client
// blocked on one; after a restart on the same address they are still
// pending, can be resolved, and the client, reconnecting with the
// approval ID, gets the outcome.
func TestE2ERestart(t *testing.T) {
	dir := t.TempDir()
	m, admin := startMain(t, dir, "127.0.0.1:0")
	addr := strings.TrimPrefix(m.URL(), "http://")
	e := &e2e{main: m, url: m.URL(), admin: admin}
	e.agent = e.token(t, "--role", "agent", "--agent", "coder-1")
	e.bob = e.token(t, "--role", "reviewer", "--name", "bob")

	agent := e.client(e.agent)
	agent.Wait = 500 * time.Millisecond
	left, err := agent.CheckWait(t.Context(), action("deploy", "left"), 0)
	if err != nil || !left.Pending {
		t.Fatalf("check: %+v, %v", left, err)
	}
	done := make(chan airlock.Enforcement, 1)
	go func() { done <- agent.Enforce(context.WithoutCancel(t.Context()), action("deploy", "blocked")) }()
	e.pendingN(t, "deploy", 2)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}

	m, again := startMain(t, dir, addr)
	t.Cleanup(func() { m.Close() })
	if again != "" {
		t.Error("a restarted server printed a new admin token")
	}
	bob := e.client(e.bob)
	page, err := bob.Approvals(t.Context(), airlock.ApprovalFilter{Status: []airlock.ApprovalStatus{airlock.StatusPending}})
	if err != nil || len(page.Approvals) != 2 {
		t.Fatalf("after restart: %d pending (%v), want 2", len(page.Approvals), err)
	}
	for _, ap := range page.Approvals {
		if _, err := bob.Resolve(t.Context(), ap.ID, airlock.StatusApproved, ap.ActionHash, "", airlock.SurfaceAPI); err != nil {
			t.Fatal(err)
		}
	}
	if enf := receive(t, done); !enf.Allowed {
		t.Fatalf("the client blocked across the restart: %+v", enf)
	}
	got, err := agent.Resume(t.Context(), left.Approval.ID, 0)
	if err != nil || !got.Allowed {
		t.Fatalf("resumed by approval ID after the restart: %+v, %v", got, err)
	}
}

// The admin token is lost: the operator, with the data directory, makes a
// new one while the server runs, and revokes the lost one with it.
func TestE2ELostAdminToken(t *testing.T) {
	e := newE2E(t)
	dir := e.main.Config.DataDir
	t.Setenv("AIRLOCK_TOKEN", "")
	t.Setenv("AIRLOCK_CONFIG", "")
	code, stdout, stderr := runCLI(t, "token", "recover", "--data", dir, "--name", "ops", "--json")
	if code != 0 {
		t.Fatalf("token recover: exit %d\n%s%s", code, stdout, stderr)
	}
	var nt airlock.NewToken
	if err := json.Unmarshal([]byte(stdout), &nt); err != nil || nt.Secret == "" || nt.Token.Role != airlock.RoleAdmin ||
		nt.Token.Name != "ops" || !strings.HasPrefix(nt.Token.CreatedBy, "airlock token recover") {
		t.Fatalf("token recover --json: %v\n%s", err, stdout)
	}

	// The running server takes it at once: it revokes the lost token.
	tokens, err := e.client(nt.Secret).Tokens(t.Context())
	if err != nil {
		t.Fatalf("the recovered token on the running server: %v", err)
	}
	var lost string
	for _, tok := range tokens {
		if tok.CreatedBy == "airlock serve (first start)" {
			lost = tok.ID
		}
	}
	e.cli(t, nt.Secret, 0, "token", "revoke", lost)
	if _, err := e.client(e.admin).Tokens(t.Context()); airlock.ErrorCode(err) != "unauthenticated" {
		t.Fatalf("the lost token after its revocation: %v, want unauthenticated", err)
	}
	// Audited as made by the recovery, and the chain holds.
	page, err := e.client(nt.Secret).Events(t.Context(), airlock.EventFilter{Kind: airlock.EventTokenCreated, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if last := page.Events[len(page.Events)-1]; !strings.Contains(string(last.Payload), `"created_by":"airlock token recover`) ||
		!strings.Contains(string(last.Payload), nt.Token.ID) {
		t.Errorf("the last token.created event: %s", last.Payload)
	}
	e.cli(t, nt.Secret, 0, "audit", "verify")

	// Without a database there, it creates none.
	empty := t.TempDir()
	wantRun(t, []string{"token", "recover", "--data", empty}, exitUsage, "no airlock database at "+filepath.Join(empty, "airlock.db"))
	wantRun(t, []string{"token", "recover", "--data", dir, "--name", ""}, exitUsage, "--name")
}

// A start that prints no admin token says where it went and how to make
// another: a person who tried the server once has usually lost it.
func TestE2ERestartSaysHowToRecover(t *testing.T) {
	dir := t.TempDir()
	m, admin := startMain(t, dir, "127.0.0.1:0")
	if admin == "" {
		t.Fatal("a fresh server printed no admin token")
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	restart := func(want ...string) *Main {
		t.Helper()
		m, out, err := runMain(t, dir, "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("the start printed no %q:\n%s", w, out)
			}
		}
		return m
	}
	m = restart("The admin token was printed at this data's first start", "airlock token recover --data "+dir)
	c := client.New(m.URL(), admin)
	tokens, err := c.Tokens(t.Context())
	if err != nil || len(tokens) != 1 {
		t.Fatalf("tokens: %v, %v", tokens, err)
	}
	if _, err := c.RevokeToken(t.Context(), tokens[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m = restart("No admin token is left", "airlock token recover --data "+dir)
	m.Close()
}
