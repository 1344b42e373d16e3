package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/gate"
	airlockhttp "github.com/airlock-dev/airlock/http"
	"github.com/airlock-dev/airlock/sqlite"
)

// testServer is a real Airlock server over a temporary SQLite store, with
// a token file for each of its people: "agent" (agent-1's agent token),
// "bob" (the deploy rule's reviewer), "carol" (a reviewer of nothing) and
// "admin". airlocktest.Policy decides: read_file auto, deploy ask (bob,
// alice owns agent-1), delete_file deny, wire_money needs-human.
type testServer struct {
	url     string
	db      *sqlite.DB
	enf     *gate.Enforcer
	files   map[string]string // who → token file
	secrets map[string]string // who → secret
}

func newTestServer(t *testing.T) *testServer {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	db := sqlite.NewDB(filepath.Join(dir, "a.db"))
	if err := db.Open(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s := &airlockhttp.Server{Enforcer: &gate.Enforcer{Gate: airlocktest.NewGate(t), Store: db}}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	t.Cleanup(s.Drain)

	ts := &testServer{url: hs.URL, db: db, enf: s.Enforcer, files: map[string]string{}, secrets: map[string]string{}}
	for who, tok := range map[string]airlock.Token{
		"agent": {Role: airlock.RoleAgent, Name: "agent-1", Agent: "agent-1"},
		"bob":   {Role: airlock.RoleReviewer, Name: "bob"},
		"carol": {Role: airlock.RoleReviewer, Name: "carol"},
		"admin": {Role: airlock.RoleAdmin, Name: "ops"},
	} {
		secret, h := airlock.NewTokenSecret()
		tok.ID = uuid.Must(uuid.NewV7()).String()
		if _, err := db.CreateToken(ctx, tok, h); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, who+".token")
		if err := os.WriteFile(file, []byte(secret+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		ts.files[who], ts.secrets[who] = file, secret
	}
	t.Setenv(envServer, hs.URL)
	t.Setenv(envToken, "")
	return ts
}

// args returns the command line with who's token file.
func (ts *testServer) args(who string, args ...string) []string {
	if who == "" {
		return args
	}
	return append(slices.Clone(args), "--token-file", ts.files[who])
}

// run runs the CLI as who ("" for no token) and returns its exit code and
// output.
func (ts *testServer) run(t *testing.T, who string, args ...string) (int, string, string) {
	t.Helper()
	return runCLI(t, ts.args(who, args...)...)
}

// want runs the CLI as who and checks its exit code and that its output
// contains every string of contains.
func (ts *testServer) want(t *testing.T, who string, args []string, code int, contains ...string) string {
	t.Helper()
	got, stdout, stderr := ts.run(t, who, args...)
	if got != code {
		t.Errorf("airlock %s: exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), got, code, stdout, stderr)
	}
	for _, want := range contains {
		if !strings.Contains(stdout+stderr, want) {
			t.Errorf("airlock %s: output does not contain %q\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), want, stdout, stderr)
		}
	}
	return stdout
}

// background runs the CLI as who in a goroutine until it ends or the
// returned cancel is called.
func (ts *testServer) background(t *testing.T, who string, args ...string) *bgRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	b := &bgRun{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(b.done)
		b.code = run(ctx, ts.args(who, args...), &b.stdout, &b.stderr)
	}()
	t.Cleanup(func() { cancel(); <-b.done })
	return b
}

type bgRun struct {
	cancel         context.CancelFunc
	done           chan struct{}
	code           int
	stdout, stderr lockedBuffer
}

// waitOutput waits until the output contains s.
func (b *bgRun) waitOutput(t *testing.T, s string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(b.stdout.String()+b.stderr.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the output\nstdout:\n%s\nstderr:\n%s", s, b.stdout.String(), b.stderr.String())
		}
		select {
		case <-b.done:
			if !strings.Contains(b.stdout.String()+b.stderr.String(), s) {
				t.Fatalf("ended (exit %d) without %q\nstdout:\n%s\nstderr:\n%s", b.code, s, b.stdout.String(), b.stderr.String())
			}
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// wait waits for the run to end and returns its exit code.
func (b *bgRun) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-b.done:
		return b.code
	case <-time.After(10 * time.Second):
		t.Fatalf("still running\nstdout:\n%s\nstderr:\n%s", b.stdout.String(), b.stderr.String())
		return -1
	}
}

// lockedBuffer is a buffer written by one goroutine and read by another.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *lockedBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *lockedBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var approvalLine = regexp.MustCompile(`(?m)^approval ([0-9a-f-]{36})$`)

// checkPending runs check --no-wait for a deploy of target as the agent and
// returns the approval ID it printed.
func (ts *testServer) checkPending(t *testing.T, target string) string {
	t.Helper()
	code, stdout, stderr := ts.run(t, "agent", "check", "--agent", "agent-1", "--tool", "deploy",
		"--args", `{"target":"`+target+`"}`, "--no-wait")
	if code != exitPending {
		t.Fatalf("check --no-wait: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitPending, stdout, stderr)
	}
	m := approvalLine.FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("check --no-wait printed no approval ID:\n%s", stdout)
	}
	return m[1]
}

func deployArgs(target string) []string {
	return []string{"check", "--agent", "agent-1", "--tool", "deploy", "--args", `{"target":"` + target + `"}`}
}

func TestCheck(t *testing.T) {
	ts := newTestServer(t)
	check := func(tool string) []string {
		return []string{"check", "--agent", "agent-1", "--tool", tool, "--args", `{"path":"/work/a.txt"}`}
	}
	ts.want(t, "agent", check("read_file"), exitOK, "auto: agent-1 read_file", "rule reads", "allowed: ")
	ts.want(t, "agent", check("write_file"), exitOK, "notify: ", "allowed: ")
	ts.want(t, "agent", check("delete_file"), exitCheck, "deny: ", "refused: AIRLOCK-DENIED: ", "rule forbidden")
	ts.want(t, "agent", check("wire_money"), exitCheck, "refused: AIRLOCK-NEEDS-HUMAN: ")
	ts.want(t, "admin", check("read_file"), exitOK, "allowed: ")

	// The server's refusals and the command line's mistakes.
	ts.want(t, "agent", []string{"check", "--agent", "agent-2", "--tool", "read_file"}, exitCheck,
		"unauthorized: agent:agent-1 may not check actions for agent agent-2")
	ts.want(t, "bob", check("read_file"), exitCheck, "reviewer:bob may not check actions")
	ts.want(t, "agent", []string{"check", "--tool", "read_file"}, exitUsage, "check needs --agent and --tool")
	ts.want(t, "agent", []string{"check", "--agent", "agent-1", "--tool", "t", "--args", `{"a":1,"a":2}`}, exitUsage,
		`duplicate object member name "a"`)
	ts.want(t, "agent", []string{"check", "--agent", "agent-1", "--tool", "t", "--args", `[1]`}, exitUsage, "the action is not valid")

	// --json prints the Enforcement.
	code, stdout, stderr := ts.run(t, "agent", append(check("read_file"), "--json")...)
	if code != exitOK {
		t.Fatalf("--json: exit %d: %s", code, stderr)
	}
	var enf airlock.Enforcement
	if err := json.Unmarshal([]byte(stdout), &enf); err != nil {
		t.Fatalf("--json is not JSON: %v\n%s", err, stdout)
	}
	if !enf.Allowed || enf.Decision.Outcome != airlock.Auto || enf.Decision.ActionHash.IsZero() {
		t.Errorf("--json = %+v", enf)
	}
}

func TestCheckAskApproved(t *testing.T) {
	ts := newTestServer(t)
	id := ts.checkPending(t, "prod")

	// The same action, blocking, joins the request and waits for bob.
	b := ts.background(t, "agent", deployArgs("prod")...)
	b.waitOutput(t, "waiting for approval "+id+" (reviewers bob, alice (owner) or an admin, expires in ")
	if !strings.Contains(b.stdout.String(), "ask: agent-1 deploy") {
		t.Errorf("the decision is not printed at once:\n%s", b.stdout.String())
	}

	out := ts.want(t, "bob", []string{"approvals", "approve", id, "--reason", "release window"}, exitOK,
		"approval: "+id, "hash:     sha256:", "approved approval "+id, "by bob at ", "via cli", "(reason: release window)")
	if got := b.wait(t); got != exitOK {
		t.Fatalf("the waiting check exited %d, want 0\nstdout:\n%s\nstderr:\n%s", got, b.stdout.String(), b.stderr.String())
	}
	if !strings.Contains(b.stdout.String(), "allowed: ") || !strings.Contains(b.stdout.String(), "approved by bob") {
		t.Errorf("the waiting check printed:\n%s", b.stdout.String())
	}
	// The summary echoes the hash the resolution carried.
	ap, err := ts.db.Approval(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "sha256:"+ap.ActionHash.String()) || ap.Surface != airlock.SurfaceCLI || ap.ResolvedBy != "bob" {
		t.Errorf("approved %+v after printing:\n%s", ap, out)
	}

	// The request's life is in the audit log: a family of kinds by prefix.
	stdout := ts.want(t, "bob", []string{"audit", "tail", "--kind", "approval."}, exitOK)
	if got := strings.Count(stdout, "\n"); got != 3 || !strings.Contains(stdout, "approval.requested   agent-1") ||
		!strings.Contains(stdout, "approval.resolved    agent-1         approved      "+id) {
		t.Errorf("tail --kind approval. printed:\n%s", stdout)
	}

	// Once settled, nobody settles it again: who and how is said.
	ts.want(t, "admin", []string{"approvals", "reject", id, "--reason", "too late"}, exitCheck,
		"approval "+id+" was already approved by bob at ", "via cli (reason: release window)")
}

func TestCheckAskRejected(t *testing.T) {
	ts := newTestServer(t)
	id := ts.checkPending(t, "staging")
	b := ts.background(t, "agent", append(deployArgs("staging"), "--json")...)
	b.waitOutput(t, "waiting for approval "+id)

	ts.want(t, "bob", []string{"approvals", "reject", id}, exitUsage, "reject needs --reason")
	ts.want(t, "bob", []string{"approvals", "reject", id, "--reason", "  "}, exitUsage, "reject needs --reason")
	code, stdout, stderr := ts.run(t, "bob", "approvals", "reject", id, "--reason", "not during the freeze", "--json")
	if code != exitOK {
		t.Fatalf("reject: exit %d\n%s%s", code, stdout, stderr)
	}
	var ap airlock.Approval
	if err := json.Unmarshal([]byte(stdout), &ap); err != nil {
		t.Fatalf("reject --json is not JSON: %v\n%s", err, stdout)
	}
	if ap.Status != airlock.StatusRejected || ap.ResolvedBy != "bob" || ap.Reason != "not during the freeze" {
		t.Errorf("rejected %+v", ap)
	}
	if got := b.wait(t); got != exitCheck {
		t.Fatalf("the waiting check exited %d, want 1\n%s", got, b.stderr.String())
	}
	var enf airlock.Enforcement
	if err := json.Unmarshal([]byte(b.stdout.String()), &enf); err != nil {
		t.Fatalf("check --json is not JSON: %v\n%s", err, b.stdout.String())
	}
	if enf.Allowed || enf.Code != airlock.CodeRejected {
		t.Errorf("the waiting check got %+v", enf)
	}
}

func TestApproveRefused(t *testing.T) {
	ts := newTestServer(t)
	id := ts.checkPending(t, "prod")
	ts.want(t, "agent", []string{"approvals", "approve", id}, exitCheck,
		"airlock: unauthorized: agent:agent-1 may not resolve approval requests")
	ts.want(t, "carol", []string{"approvals", "approve", id}, exitCheck,
		"unauthorized: carol may not resolve approval "+id+": reviewers are bob, alice (owner), or an admin")
	ts.want(t, "bob", []string{"approvals", "approve", id, "--hash", strings.Repeat("ab", 32)}, exitCheck,
		"AIRLOCK-HASH-MISMATCH", "reload it and review what it now holds")
	ts.want(t, "bob", []string{"approvals", "approve", id, "--hash", "sha256:123"}, exitUsage, "--hash: action hash must be 64 hex digits")
	ts.want(t, "bob", []string{"approvals", "approve", "0193a000-0000-7000-8000-000000000000"}, exitCheck, "not_found")
	ap, err := ts.db.Approval(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	// The audit log says who was refused, on which request and action.
	stdout := ts.want(t, "bob", []string{"audit", "tail", "--kind", "access.refused"}, exitOK)
	if !regexp.MustCompile(`access\.refused +reviewer:carol +unauthorized +`+id+` +- +agent-1: deploy `).MatchString(stdout) ||
		!regexp.MustCompile(`access\.refused +reviewer:bob +AIRLOCK-HASH-MISMATCH +`+id+` `).MatchString(stdout) ||
		!regexp.MustCompile(`access\.refused +agent:agent-1 +unauthorized +- +- +POST /v1/approvals/`+id+`/resolution`).MatchString(stdout) {
		t.Errorf("tail --kind access.refused printed:\n%s", stdout)
	}
	if ap.Status != airlock.StatusPending {
		t.Fatalf("a refused resolution changed the request: %+v", ap)
	}
	// The hash the reviewer saw, pinned, goes through.
	ts.want(t, "bob", []string{"approvals", "approve", id, "--hash", "sha256:" + ap.ActionHash.String()}, exitOK,
		"approved approval "+id)
}

func TestCheckStopsWaiting(t *testing.T) {
	ts := newTestServer(t)
	b := ts.background(t, "agent", deployArgs("prod")...)
	b.waitOutput(t, "waiting for approval ")
	b.cancel() // Ctrl-C
	if got := b.wait(t); got != exitCheck {
		t.Fatalf("interrupted check exited %d, want 1", got)
	}
	m := regexp.MustCompile(`stopped waiting for approval ([0-9a-f-]{36}): interrupted`).FindStringSubmatch(b.stderr.String())
	if m == nil || !strings.Contains(b.stderr.String(), "airlock approvals cancel "+m[1]) {
		t.Fatalf("stderr:\n%s", b.stderr.String())
	}
	// It stays pending, and the agent may withdraw it.
	ts.want(t, "agent", []string{"approvals", "cancel", m[1], "--reason", "plan changed"}, exitOK,
		"cancelled approval "+m[1], "by agent:agent-1", "(reason: plan changed)")
	ts.want(t, "bob", []string{"approvals", "approve", m[1]}, exitCheck, "was already cancelled by agent:agent-1")
	ts.want(t, "agent", []string{"approvals", "cancel", m[1]}, exitCheck, "was already cancelled by agent:agent-1")

	ts.want(t, "agent", append(deployArgs("dev"), "--timeout", "200ms"), exitCheck,
		"stopped waiting for approval ", "--timeout 200ms passed", "The request stays pending until")
}

// A check left pending (--no-wait, --timeout) is not lost: the same check
// run again runs on its approval, and --resume waits on it by its ID.
func TestCheckComesBack(t *testing.T) {
	ts := newTestServer(t)
	id := ts.checkPending(t, "prod")
	ts.want(t, "bob", []string{"approvals", "approve", id}, exitOK)
	ts.want(t, "agent", append(deployArgs("prod"), "--no-wait"), exitOK, "allowed: ", "approved by bob (approval "+id+")")
	// Once: the next identical check is a new request for a person.
	if again := ts.checkPending(t, "prod"); again == id {
		t.Fatalf("the approval of %s let a second check through", id)
	}

	// --resume waits on the request, and ends as the check would have.
	id = ts.checkPending(t, "staging")
	ts.want(t, "agent", []string{"check", "--resume", id, "--no-wait"}, exitPending, "pending: ", "approval "+id)
	b := ts.background(t, "agent", "check", "--resume", id)
	b.waitOutput(t, "waiting for approval "+id)
	if !strings.Contains(b.stdout.String(), "ask: agent-1 deploy") {
		t.Errorf("--resume does not print the decision:\n%s", b.stdout.String())
	}
	ts.want(t, "bob", []string{"approvals", "approve", id}, exitOK)
	if got := b.wait(t); got != exitOK || !strings.Contains(b.stdout.String(), "allowed: ") {
		t.Fatalf("check --resume after approval: exit %d\n%s%s", got, b.stdout.String(), b.stderr.String())
	}
	ts.want(t, "agent", []string{"check", "--resume", id}, exitCheck, "refused: AIRLOCK-USED: ")

	// A rejection: --resume tells it.
	id = ts.checkPending(t, "friday")
	ts.want(t, "bob", []string{"approvals", "reject", id, "--reason", "not on a Friday"}, exitOK)
	ts.want(t, "agent", []string{"check", "--resume", id}, exitCheck, "refused: AIRLOCK-REJECTED: ", "not on a Friday")

	ts.want(t, "agent", []string{"check", "--resume", id, "--agent", "agent-1", "--args", "{}"}, exitUsage,
		"--resume waits on a request, which holds its action: drop --agent, --args")
	ts.want(t, "agent", []string{"check", "--resume", "0193a000-0000-7000-8000-000000000000"}, exitCheck, "not_found")
	ts.want(t, "agent", append(deployArgs("dev"), "--timeout", "200ms"), exitCheck, "airlock check --resume ")
}

func TestApprovalsServerMode(t *testing.T) {
	ts := newTestServer(t)
	id := ts.checkPending(t, "prod")
	stdout := ts.want(t, "bob", []string{"approvals", "list", "--status", "pending"}, exitOK, "ID", "SUMMARY", id+"  pending")
	if strings.Count(stdout, "\n") != 2 {
		t.Errorf("list printed:\n%s", stdout)
	}
	code, stdout, stderr := ts.run(t, "bob", "approvals", "list", "--json")
	var page airlock.ApprovalPage
	if code != exitOK || json.Unmarshal([]byte(stdout), &page) != nil || len(page.Approvals) != 1 || page.Approvals[0].ID != id {
		t.Fatalf("list --json: exit %d\n%s%s", code, stdout, stderr)
	}
	ts.want(t, "bob", []string{"approvals", "list", "--status", "approved"}, exitOK, "no approval requests match")
	ts.want(t, "bob", []string{"approvals", "list", "--cursor", "page-2"}, exitUsage, `invalid cursor "page-2"`)
	ts.want(t, "bob", []string{"approvals", "show", id}, exitOK, "id:           "+id, "reviewers:    bob", "owner:        alice")
	code, stdout, _ = ts.run(t, "agent", "approvals", "show", id, "--json")
	var ap airlock.Approval
	if code != exitOK || json.Unmarshal([]byte(stdout), &ap) != nil || ap.ID != id {
		t.Fatalf("show --json: exit %d\n%s", code, stdout)
	}
	ts.want(t, "bob", []string{"approvals", "show", "0193a000-0000-7000-8000-000000000000"}, exitCheck, "not_found")
}

func TestApprovalsWatch(t *testing.T) {
	ts := newTestServer(t)
	ts.want(t, "agent", []string{"check", "--agent", "agent-1", "--tool", "read_file", "--args", `{"path":"/a"}`}, exitOK)
	head, err := ts.db.Head(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	w := ts.background(t, "bob", "approvals", "watch", "--after", strconvI(head))
	wj := ts.background(t, "bob", "approvals", "watch", "--after", strconvI(head), "--json", "--class", "nothing.like.it")
	id := ts.checkPending(t, "prod")
	ts.want(t, "bob", []string{"approvals", "approve", id, "--reason", "ok"}, exitOK)
	w.waitOutput(t, "approval.resolved   "+id+"  agent-1  deploy")
	w.waitOutput(t, "approved by bob via cli: ok")
	w.cancel()
	if got := w.wait(t); got != exitOK {
		t.Errorf("watch exited %d, want 0", got)
	}
	lines := strings.Split(strings.TrimSpace(w.stdout.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "approval.requested  "+id) ||
		!strings.Contains(lines[0], "ask: ") || !strings.Contains(lines[0], "reviewers bob, alice (owner) or an admin, expires in") {
		t.Errorf("watch printed:\n%s", w.stdout.String())
	}
	wj.cancel()
	wj.wait(t)
	if wj.stdout.String() != "" {
		t.Errorf("watch --class printed another class's changes:\n%s", wj.stdout.String())
	}
}

func strconvI(n int64) string { return strconv.FormatInt(n, 10) }

func TestToken(t *testing.T) {
	ts := newTestServer(t)
	code, stdout, stderr := ts.run(t, "admin", "token", "create", "--role", "reviewer", "--name", "dave", "--expires", "720h")
	if code != exitOK {
		t.Fatalf("create: exit %d\n%s%s", code, stdout, stderr)
	}
	m := regexp.MustCompile(`(?m)^secret: (airlock_\S+)$`).FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("create printed no secret:\n%s", stdout)
	}
	secret := m[1]
	if n := strings.Count(stdout+stderr, secret); n != 1 {
		t.Errorf("the secret is printed %d times", n)
	}
	if !strings.Contains(stderr, "not shown again") || !strings.Contains(stdout, "created reviewer token ") ||
		!strings.Contains(stdout, " for dave (expires 20") {
		t.Errorf("create printed:\n%s\n%s", stdout, stderr)
	}

	// The new token works, through AIRLOCK_TOKEN.
	t.Setenv(envToken, secret)
	ts.want(t, "", []string{"approvals", "list"}, exitOK, "no approval requests match")
	t.Setenv(envToken, "")

	stdout = ts.want(t, "admin", []string{"token", "list"}, exitOK, "ID", "ROLE", "REVOKED", "dave", "agent-1", "ops")
	if strings.Contains(stdout, "airlock_") {
		t.Errorf("list shows a secret:\n%s", stdout)
	}
	code, stdout, _ = ts.run(t, "admin", "token", "list", "--json")
	var toks []airlock.Token
	if code != exitOK || json.Unmarshal([]byte(stdout), &toks) != nil || len(toks) != 5 || strings.Contains(stdout, "airlock_") {
		t.Fatalf("list --json: exit %d\n%s", code, stdout)
	}
	var dave airlock.Token
	for _, tok := range toks {
		if tok.Name == "dave" {
			dave = tok
		}
	}
	if dave.ID == "" || dave.Role != airlock.RoleReviewer || dave.CreatedBy != "ops" || dave.Expires.IsZero() {
		t.Fatalf("dave's token: %+v", dave)
	}

	ts.want(t, "admin", []string{"token", "revoke", dave.ID}, exitOK, "revoked reviewer token "+dave.ID+" for dave at ", "by ops")
	t.Setenv(envToken, secret)
	ts.want(t, "", []string{"approvals", "list"}, exitCheck, "unauthenticated: the token was revoked or has expired",
		"does not accept this token")
	t.Setenv(envToken, "")
	ts.want(t, "admin", []string{"token", "list"}, exitOK, " by ops")

	// --json carries the secret, once.
	code, stdout, _ = ts.run(t, "admin", "token", "create", "--role", "agent", "--agent", "agent-2", "--json")
	var nt airlock.NewToken
	if code != exitOK || json.Unmarshal([]byte(stdout), &nt) != nil || !strings.HasPrefix(nt.Secret, "airlock_") ||
		nt.Token.Agent != "agent-2" || nt.Token.Role != airlock.RoleAgent {
		t.Fatalf("create --json: exit %d\n%s", code, stdout)
	}

	for _, tc := range []struct {
		who      string
		args     []string
		code     int
		contains string
	}{
		{"bob", []string{"token", "create", "--role", "reviewer", "--name", "eve"}, exitCheck, "reviewer:bob may not create tokens"},
		{"bob", []string{"token", "list"}, exitCheck, "reviewer:bob may not list tokens"},
		{"admin", []string{"token", "create"}, exitUsage, "token create needs --role"},
		{"admin", []string{"token", "create", "--role", "god"}, exitUsage, `unknown role "god"`},
		{"admin", []string{"token", "create", "--role", "agent"}, exitUsage, "an agent token needs --agent"},
		{"admin", []string{"token", "create", "--role", "reviewer"}, exitUsage, "a reviewer token needs --name"},
		{"admin", []string{"token", "create", "--role", "admin", "--agent", "a"}, exitUsage, "give --name instead of --agent"},
		{"admin", []string{"token", "revoke"}, exitUsage, "needs one token ID"},
		{"admin", []string{"token", "revoke", "nope"}, exitCheck, "not_found"},
	} {
		ts.want(t, tc.who, tc.args, tc.code, tc.contains)
	}
}

func TestTrust(t *testing.T) {
	ts := newTestServer(t)
	ts.want(t, "admin", []string{"trust"}, exitOK, "no trust records match")
	for _, tool := range []string{"read_file", "read_file", "delete_file"} {
		ts.run(t, "agent", "check", "--agent", "agent-1", "--tool", tool, "--args", `{"path":"/a"}`)
	}
	id := ts.checkPending(t, "prod")
	ts.want(t, "bob", []string{"approvals", "approve", id}, exitOK)

	stdout := ts.want(t, "bob", []string{"trust"}, exitOK)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if got, want := strings.Fields(lines[0]), []string{"AGENT", "CLASS", "TOTAL", "SUCCESS", "DENIED", "TIMEOUT", "FAILURE",
		"APPROVED", "REJECTED", "EXPIRED", "RATE", "MEDIAN"}; !slices.Equal(got, want) {
		t.Errorf("header %v, want %v", got, want)
	}
	var approvedRow []string
	for _, l := range lines[1:] {
		if f := strings.Fields(l); len(f) == 12 && f[7] == "1" {
			approvedRow = f
		}
	}
	if approvedRow == nil || approvedRow[0] != "agent-1" || approvedRow[10] != "100%" || approvedRow[11] == "-" {
		t.Errorf("no row for the approved deploy:\n%s", stdout)
	}
	// bob approved at once, faster than the request could be read: the
	// review signals say so, for bob and for agent-1; an agent's token
	// sees the table alone.
	for _, want := range []string{"review signals since", "REVIEWER", "AGENT", "1 approval faster than the request could be read"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("trust does not say %q:\n%s", want, stdout)
		}
	}
	if _, out, _ := ts.run(t, "agent", "trust"); strings.Contains(out, "review signals") {
		t.Errorf("an agent's token read the review signals:\n%s", out)
	}

	code, stdout, _ := ts.run(t, "agent", "trust", "--json", "--since", "1h")
	var sums []airlock.TrustSummary
	if code != exitOK || json.Unmarshal([]byte(stdout), &sums) != nil || len(sums) < 2 {
		t.Fatalf("trust --json: exit %d\n%s", code, stdout)
	}
	var total int64
	for _, s := range sums {
		total += s.Total
	}
	if total != 4 {
		t.Errorf("trust --json totals %d records, want 4:\n%s", total, stdout)
	}
	ts.want(t, "agent", []string{"trust", "--agent", "agent-2"}, exitCheck, "agent:agent-1 may not read trust records of agent agent-2")
	ts.want(t, "bob", []string{"trust", "--since", "yesterday"}, exitUsage, `--since "yesterday"`)
}

func TestAuditServerMode(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	for range 3 {
		ts.run(t, "agent", "check", "--agent", "agent-1", "--tool", "read_file", "--args", `{"path":"/a"}`)
		ts.run(t, "agent", "check", "--agent", "agent-1", "--tool", "delete_file", "--args", `{"path":"/a"}`)
	}
	all, err := ts.db.Events(ctx, airlock.EventFilter{Limit: airlock.MaxPageSize})
	if err != nil {
		t.Fatal(err)
	}
	var decisions []int64
	for _, e := range all {
		if e.Kind == airlock.EventDecision {
			decisions = append(decisions, e.Seq)
		}
	}

	// tail: the last n, oldest first.
	rows := func(out string) []int64 {
		var seqs []int64
		for l := range strings.Lines(out) {
			if seq, err := strconv.ParseInt(strings.Fields(l + " x")[0], 10, 64); err == nil {
				seqs = append(seqs, seq)
			}
		}
		return seqs
	}
	stdout := ts.want(t, "bob", []string{"audit", "tail", "-n", "3"}, exitOK, "SEQ", "KIND", "OUTCOME")
	if got, want := rows(stdout), seqs(all[len(all)-3:]); !slices.Equal(got, want) {
		t.Errorf("tail -n 3 printed %v, want %v\n%s", got, want, stdout)
	}
	stdout = ts.want(t, "bob", []string{"audit", "tail", "-n", "4", "--kind", "decision"}, exitOK)
	if got, want := rows(stdout), decisions[len(decisions)-4:]; !slices.Equal(got, want) {
		t.Errorf("tail --kind decision printed %v, want %v\n%s", got, want, stdout)
	}
	stdout = ts.want(t, "bob", []string{"audit", "tail", "-n", "100", "--kind", "decision"}, exitOK)
	if got, want := rows(stdout), decisions; !slices.Equal(got, want) {
		t.Errorf("tail -n 100 --kind decision printed %v, want %v", got, want)
	}
	ts.want(t, "bob", []string{"audit", "tail", "--kind", "grant.used"}, exitOK, "no events match")
	// An agent's tail holds its own events only.
	var mine []airlock.Event
	for _, e := range all {
		if e.Agent == "agent-1" {
			mine = append(mine, e)
		}
	}
	code, stdout, _ := ts.run(t, "agent", "audit", "tail", "-n", "2", "--json")
	if got, want := seqs(decodeLines(t, stdout)), seqs(mine[len(mine)-2:]); code != exitOK || !slices.Equal(got, want) {
		t.Errorf("tail --json: exit %d, printed %v, want %v\n%s", code, got, want, stdout)
	}
	ts.want(t, "bob", []string{"audit", "tail", "-n", "-1"}, exitUsage, "-n -1")

	// tail -f follows.
	f := ts.background(t, "bob", "audit", "tail", "-n", "1", "-f", "--kind", "decision")
	f.waitOutput(t, strconvI(decisions[len(decisions)-1])+" ")
	ts.run(t, "agent", "check", "--agent", "agent-1", "--tool", "write_file", "--args", `{"path":"/b"}`)
	f.waitOutput(t, "decision             agent-1         notify")
	f.cancel()
	if got := f.wait(t); got != exitOK {
		t.Errorf("tail -f exited %d", got)
	}

	// verify and export ask the server.
	head, _ := ts.db.Head(ctx)
	ts.want(t, "bob", []string{"audit", "verify"}, exitOK, "ok: ", "head seq ")
	code, stdout, _ = ts.run(t, "admin", "audit", "verify", "--json")
	var rep airlock.ChainReport
	if code != exitOK || json.Unmarshal([]byte(stdout), &rep) != nil || !rep.OK() || rep.HeadSeq < head {
		t.Fatalf("verify --json: exit %d\n%s", code, stdout)
	}
	ts.want(t, "agent", []string{"audit", "verify"}, exitCheck, "agent:agent-1 may not verify the audit log")

	code, stdout, stderr := ts.run(t, "bob", "audit", "export")
	if code != exitOK {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}
	exported := decodeLines(t, stdout)
	all, _ = ts.db.Events(ctx, airlock.EventFilter{Limit: airlock.MaxPageSize})
	if got, want := seqs(exported), seqs(all); len(got) < len(want) || !slices.Equal(got[:len(want)], want) {
		t.Errorf("export wrote %v, want %v", got, want)
	}
	out := filepath.Join(t.TempDir(), "decisions.jsonl")
	ts.want(t, "bob", []string{"audit", "export", "--kind", "decision", "-o", out}, exitOK, "wrote 7 events to "+out)
}

func TestPolicyServerMode(t *testing.T) {
	ts := newTestServer(t)
	explain := []string{"policy", "explain", "--agent", "agent-1", "--tool", "deploy", "--args", `{"target":"prod"}`}
	ts.want(t, "bob", explain, exitOK, "outcome:     ask", "rule deploys", "hash:        sha256:")
	code, stdout, _ := ts.run(t, "agent", append(explain, "--json")...)
	var d airlock.Decision
	if code != exitOK || json.Unmarshal([]byte(stdout), &d) != nil || d.Outcome != airlock.Ask || d.Rule == nil || d.Rule.ID != "deploys" {
		t.Fatalf("explain --json: exit %d\n%s", code, stdout)
	}
	ts.want(t, "bob", []string{"policy", "explain", "--tool", "deploy"}, exitUsage, "needs --agent and --tool")
	// Hints reach the server's decision as an agent's would.
	ts.want(t, "bob", append(explain, "--hint", "read_only", "--hint", "tier=spend"), exitOK,
		"hints:       tier=spend, read_only\n", "rule deploys")
	// Nothing was recorded.
	if head, _ := ts.db.Head(context.Background()); head != 4 {
		t.Errorf("explain recorded events: head %d, want the 4 token events", head)
	}

	ts.want(t, "bob", []string{"policy", "show"}, exitOK, "# The policy stack in force on the server at "+ts.url,
		"  - name: enforce\n    layer: project\n", "      - id: deploys ", "airlocktest.yaml:15:5 · step tool")
	ts.want(t, "bob", []string{"policy", "show", "--table"}, exitOK, "LAYER", "project", "enforce", "airlocktest.yaml", "rule deploys")
	code, stdout, _ = ts.run(t, "agent", "policy", "show", "--json")
	var stack airlockhttp.PolicyStack
	if code != exitOK || json.Unmarshal([]byte(stdout), &stack) != nil || len(stack.Layers) != 1 || stack.Layers[0].Name != "enforce" ||
		!slices.ContainsFunc(stack.Layers[0].Rules, func(r gate.EffectiveRule) bool { return r.ID == "deploys" }) {
		t.Fatalf("policy show --json: exit %d\n%s", code, stdout)
	}
	ts.want(t, "bob", []string{"policy", "effective", "--agent", "agent-1"}, exitOK,
		"agent:        agent-1\n", "project layer: enforce (airlocktest.yaml)", "rule deploys")
	code, stdout, _ = ts.run(t, "agent", "policy", "effective", "--json") // an agent token names its own agent
	var ep gate.EffectivePolicy
	if code != exitOK || json.Unmarshal([]byte(stdout), &ep) != nil || ep.Agent != "agent-1" || len(ep.Layers) != 1 ||
		!slices.ContainsFunc(ep.Layers[0].Rules, func(r gate.EffectiveRule) bool { return r.ID == "deploys" }) {
		t.Fatalf("policy effective --json: exit %d\n%s", code, stdout)
	}
	ts.want(t, "agent", []string{"policy", "effective", "--agent", "agent-2"}, exitCheck, "may not read the effective policy of agent agent-2")
	ts.want(t, "bob", []string{"policy", "effective"}, exitUsage, "agent is required")

	// Files still decide offline.
	wantRun(t, []string{"policy", "explain", "testdata/policy.yaml", "--agent", "coder-1", "--tool", "Bash",
		"--args", `{"command":"git status"}`}, exitOK, "rule git-status")
}

func TestServerFlags(t *testing.T) {
	ts := newTestServer(t)
	list := []string{"approvals", "list"}

	// No token: a usage error that says how to get one.
	ts.want(t, "", []string{"check", "--agent", "a", "--tool", "t"}, exitUsage,
		"airlock check needs a token for the Airlock server at "+ts.url, "set AIRLOCK_TOKEN (or --token-file FILE)",
		"airlock token create", "'airlock serve' prints the admin")
	ts.want(t, "", []string{"token", "list"}, exitUsage, "needs a token")

	// AIRLOCK_TOKEN, and --token-file over it.
	t.Setenv(envToken, ts.secrets["bob"])
	ts.want(t, "", list, exitOK)
	ts.want(t, "admin", []string{"token", "list"}, exitOK)

	// AIRLOCK_SERVER, and --server over it.
	t.Setenv(envServer, "http://127.0.0.1:1")
	ts.want(t, "", list, exitCheck, "airlock: unavailable: ", "is the server at http://127.0.0.1:1 running?")
	ts.want(t, "", append(list, "--server", ts.url+"/"), exitOK)
	ts.want(t, "", append(list, "--server", "127.0.0.1:8080"), exitUsage, `--server "127.0.0.1:8080": want the server's URL`)
	ts.want(t, "", append(list, "--server", "https://u:p@example.com"), exitUsage, "put no credentials in the URL")
	t.Setenv(envServer, "ftp://example.com")
	ts.want(t, "", list, exitUsage, `AIRLOCK_SERVER "ftp://example.com"`)
	t.Setenv(envServer, ts.url)

	// Token files: missing, empty, readable by others, unknown.
	dir := t.TempDir()
	empty, open, wrong := filepath.Join(dir, "empty"), filepath.Join(dir, "open"), filepath.Join(dir, "wrong")
	os.WriteFile(empty, []byte("\n"), 0o600)
	os.WriteFile(open, []byte(ts.secrets["bob"]), 0o644)
	os.Chmod(open, 0o644)
	os.WriteFile(wrong, []byte("airlock_nope"), 0o600)
	ts.want(t, "", append(list, "--token-file", filepath.Join(dir, "missing")), exitUsage, "--token-file: open ")
	ts.want(t, "", append(list, "--token-file", empty), exitUsage, "is empty")
	ts.want(t, "", append(list, "--token-file", open), exitOK, "is readable by other users (mode 0644): chmod 600")
	ts.want(t, "", append(list, "--token-file", wrong), exitCheck, "unauthenticated: unknown token")

	// There is no --token flag.
	ts.want(t, "", append(list, "--token", "x"), exitUsage, "unknown flag: --token")
	ts.want(t, "", []string{"--help"}, exitOK, "There is deliberately no --token flag")
}

func TestCompletion(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
		code, stdout, stderr := runCLI(t, "completion", sh)
		if code != exitOK || !strings.Contains(stdout, "airlock") || len(stdout) < 1000 {
			t.Errorf("completion %s: exit %d, %d bytes\n%s", sh, code, len(stdout), stderr)
		}
	}
	_, stdout, _ := runCLI(t, "completion", "bash")
	if !strings.HasPrefix(stdout, "# bash completion V2 for airlock") {
		t.Errorf("completion bash printed %.80q", stdout)
	}
	// Cobra's completion protocol works: commands, then flag values.
	_, stdout, _ = runCLI(t, "__complete", "app")
	if !strings.Contains(stdout, "approvals") {
		t.Errorf("__complete app: %q", stdout)
	}
	_, stdout, _ = runCLI(t, "__complete", "token", "create", "--role", "")
	if !strings.Contains(stdout, "reviewer") {
		t.Errorf("__complete --role: %q", stdout)
	}
}

func TestCompleteApprovalIDs(t *testing.T) {
	ts := newTestServer(t)
	id := ts.checkPending(t, "prod")
	t.Setenv(envToken, ts.secrets["bob"]) // __complete reads its last argument as the word to complete
	_, stdout, stderr := ts.run(t, "", "__complete", "approvals", "approve", "")
	if !strings.Contains(stdout, id+"\t") {
		t.Errorf("__complete approvals approve: %q %q", stdout, stderr)
	}
}

// token create --out writes the secret to a file in a directory that need
// not exist (docs/HOSTS.md's ~/.config/airlock/ on a fresh HOME), and makes
// no token when the file cannot be written.
func TestTokenCreateOut(t *testing.T) {
	ts := newTestServer(t)
	home := t.TempDir()
	file := filepath.Join(home, ".config", "airlock", "claude.token")
	stdout := ts.want(t, "admin", []string{"token", "create", "--role", "agent", "--agent", "claude-laptop", "--out", file}, exitOK,
		"created agent token ", "for agent claude-laptop", "secret written to "+file+" (mode 0600)")
	if strings.Contains(stdout, "airlock_") {
		t.Errorf("the secret is printed:\n%s", stdout)
	}
	for path, want := range map[string]os.FileMode{file: 0o600, filepath.Dir(file): 0o700 | os.ModeDir} {
		if fi, err := os.Stat(path); err != nil || fi.Mode() != want {
			t.Errorf("%s: %v, err %v; want mode %v", path, fi.Mode(), err, want)
		}
	}
	if entries, _ := os.ReadDir(filepath.Dir(file)); len(entries) != 1 {
		t.Errorf("the directory holds %d files, want the token's only", len(entries))
	}
	// The file is a token file as the hook and the proxy read it.
	ts.want(t, "", []string{"approvals", "list", "--token-file", file}, exitOK, "no approval requests match")

	tokens := func() int {
		toks, err := ts.db.Tokens(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return len(toks)
	}
	before := tokens()
	blocked := filepath.Join(home, "blocked")
	if err := os.WriteFile(blocked, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{filepath.Join(blocked, "x.token"), home} {
		ts.want(t, "admin", []string{"token", "create", "--role", "agent", "--agent", "a", "--out", out}, exitCheck,
			"airlock: --out: ", "no token created")
	}
	if got := tokens(); got != before {
		t.Errorf("%d tokens made although the secret could not be written", got-before)
	}
}

// A secret that could not be written after its token was made is not
// lost: the token is revoked.
func TestLostSecretRevokes(t *testing.T) {
	ts := newTestServer(t)
	c := client.New(ts.url, ts.secrets["admin"])
	nt, err := c.CreateToken(t.Context(), airlock.RoleAgent, "", "a", 0)
	if err != nil {
		t.Fatal(err)
	}
	cmd := newTokenCreateCmd()
	cmd.SetContext(t.Context())
	var out bytes.Buffer
	cmd.SetOut(&out)
	err = lostSecret(cmd, c, nt, errors.New("write the secret to x: disk full"))
	if err == nil || !strings.Contains(err.Error(), "disk full; token "+nt.Token.ID+" was created and is now revoked") {
		t.Errorf("err %v", err)
	}
	if strings.Contains(out.String(), nt.Secret) {
		t.Errorf("a revoked token's secret is printed: %s", out.String())
	}
	toks, err := ts.db.Tokens(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range toks {
		if tok.ID == nt.Token.ID && tok.Revoked.IsZero() {
			t.Errorf("token %s is not revoked", tok.ID)
		}
	}
}
