package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/client"
)

// The hook tests run the built binary the way a host runs its hook: the
// payload on stdin, the answer on stdout, the reason on stderr, the exit
// code read.

var (
	binOnce sync.Once
	binDir  string
	binErr  error
)

// binaries builds airlock and airlock-hook into one folder, as go install
// does, and the benchmark's minhook beside them, once per test run.
func binaries(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "airlock-bin-"); binErr != nil {
			return
		}
		out, err := exec.Command("go", "build", "-o", binDir+string(filepath.Separator), ".", "../airlock-hook", "./testdata/minhook").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binDir
}

// airlockBinary is the built airlock.
func airlockBinary(t testing.TB) string { return filepath.Join(binaries(t), "airlock") }

// hookProgram is a hook program as a host runs it, with the host's name
// and its flags: `airlock hook <host>` or `airlock-hook <host>`.
type hookProgram struct {
	name string
	argv func(t testing.TB, host string) []string
}

var hookPrograms = []hookProgram{
	{"airlock", func(t testing.TB, host string) []string { return []string{airlockBinary(t), "hook", host} }},
	{"airlock-hook", func(t testing.TB, host string) []string {
		return []string{filepath.Join(binaries(t), "airlock-hook"), host}
	}},
}

// eachHook runs f as a subtest for every hook program and host.
func eachHook(t *testing.T, f func(t *testing.T, p hookProgram, hc hostCase)) {
	for _, p := range hookPrograms {
		for _, hc := range hostCases {
			t.Run(p.name+"/"+hc.host, func(t *testing.T) { f(t, p, hc) })
		}
	}
}

// hookServer is a running airlock serve with the hooks policy (or
// another): agent host-1 (owner alice) with its token, and bob, who
// reviews.
type hookServer struct {
	main        *Main
	url         string
	admin, host string // secrets
	bob         string
	dir         string
}

func newHookServer(t testing.TB) *hookServer { return newPolicyServer(t, "hooks.yaml") }

// newPolicyServer is a hookServer deciding by testdata/<policy>.
func newPolicyServer(t testing.TB, policy string) *hookServer {
	t.Helper()
	dir := t.TempDir()
	cfg := DefaultConfig()
	cfg.Listen, cfg.DataDir = "127.0.0.1:0", dir
	cfg.Store.Path = filepath.Join(dir, "airlock.db")
	cfg.Policies = []string{filepath.Join("testdata", policy)}
	cfg.Timeouts.Shutdown = Duration(5 * time.Second)
	var out bytes.Buffer
	m := &Main{Config: cfg, Stdout: &out}
	if err := m.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	admin := regexp.MustCompile(`AIRLOCK_TOKEN=(\S+)`).FindStringSubmatch(out.String())
	if admin == nil {
		t.Fatal("a fresh server printed no admin token")
	}
	s := &hookServer{main: m, url: m.URL(), admin: admin[1], dir: dir}
	s.host = s.token(t, airlock.RoleAgent, "", "host-1")
	s.bob = s.token(t, airlock.RoleReviewer, "bob", "")
	return s
}

func (s *hookServer) token(t testing.TB, role airlock.Role, name, agent string) string {
	t.Helper()
	nt, err := client.New(s.url, s.admin).CreateToken(t.Context(), role, name, agent, 0)
	if err != nil {
		t.Fatal(err)
	}
	return nt.Secret
}

// hookRun is one run of the hook process.
type hookRun struct {
	exit           int
	stdout, stderr string
	took           time.Duration
}

// run runs the program for host with args, payload on stdin, against
// server url with token, as a host would.
func (p hookProgram) run(t *testing.T, url, token, host string, payload []byte, args ...string) hookRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	argv := append(p.argv(t, host), args...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "AIRLOCK_SERVER="+url, "AIRLOCK_TOKEN="+token)
	cmd.Stdin = bytes.NewReader(payload)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := hookRun{stdout: stdout.String(), stderr: stderr.String(), took: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.exit = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return r
}

// hostCase is one host's way of sending a shell command and of saying
// allow or deny.
type hostCase struct {
	host    string
	pre     string // the event before a tool call
	post    string // the event after it
	payload func(event, command, callID string) []byte
	// allowed and blocked read a run's answer.
	allowed func(r hookRun) bool
	blocked func(r hookRun) (reason string, ok bool)
}

var hostCases = []hostCase{
	{
		host: "claude-code", pre: "PreToolUse", post: "PostToolUse",
		payload: func(event, command, callID string) []byte {
			return mustJSON(map[string]any{"session_id": "sess-1", "transcript_path": "/tmp/t.jsonl", "cwd": "/work/app",
				"permission_mode": "default", "hook_event_name": event, "tool_name": "Bash",
				"tool_input": map[string]any{"command": command}, "tool_use_id": callID,
				"tool_response": map[string]any{"stdout": "done", "stderr": "", "interrupted": false}, "duration_ms": 25})
		},
		allowed: func(r hookRun) bool {
			return r.exit == 0 && claudeDecision(r.stdout) == "allow"
		},
		blocked: func(r hookRun) (string, bool) {
			var a struct {
				H struct {
					D string `json:"permissionDecision"`
					R string `json:"permissionDecisionReason"`
				} `json:"hookSpecificOutput"`
			}
			if r.exit == 2 {
				return r.stderr, true
			}
			if json.Unmarshal([]byte(r.stdout), &a) != nil || a.H.D != "deny" || r.exit != 0 {
				return "", false
			}
			return a.H.R, true
		},
	},
	{
		host: "codex", pre: "PreToolUse", post: "PostToolUse",
		payload: func(event, command, callID string) []byte {
			return mustJSON(map[string]any{"session_id": "sess-2", "turn_id": "turn-1", "transcript_path": "/tmp/r.jsonl", "cwd": "/work/app",
				"hook_event_name": event, "model": "gpt-5.5-codex", "permission_mode": "default", "tool_name": "Bash",
				"tool_input": map[string]any{"command": command}, "tool_use_id": callID, "tool_response": "done"})
		},
		// PreToolUse cannot allow in Codex: no objection is exit 0, no output.
		allowed: func(r hookRun) bool { return r.exit == 0 && strings.TrimSpace(r.stdout) == "" },
		blocked: func(r hookRun) (string, bool) { return r.stderr, r.exit == 2 && strings.TrimSpace(r.stderr) != "" },
	},
	{
		host: "gemini", pre: "BeforeTool", post: "AfterTool",
		payload: func(event, command, callID string) []byte {
			return mustJSON(map[string]any{"session_id": "sess-3", "transcript_path": "/tmp/s.json", "cwd": "/work/app",
				"hook_event_name": event, "timestamp": "2026-11-25T05:00:00.000Z", "tool_name": "run_shell_command",
				"tool_input": map[string]any{"command": command}, "tool_response": map[string]any{"llmContent": "done", "returnDisplay": "done"}})
		},
		allowed: func(r hookRun) bool {
			var a struct{ Decision string }
			return r.exit == 0 && json.Unmarshal([]byte(r.stdout), &a) == nil && a.Decision == "allow"
		},
		blocked: func(r hookRun) (string, bool) {
			var a struct{ Decision, Reason string }
			if r.exit == 2 {
				return r.stderr, true
			}
			if r.exit != 0 || json.Unmarshal([]byte(r.stdout), &a) != nil || a.Decision != "deny" {
				return "", false
			}
			return a.Reason, true
		},
	},
}

func claudeDecision(stdout string) string {
	var a struct {
		H struct {
			D string `json:"permissionDecision"`
		} `json:"hookSpecificOutput"`
	}
	_ = json.Unmarshal([]byte(stdout), &a)
	return a.H.D
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// TestHookBinaryDecides: a read runs, a destructive command is refused with
// the code and the rule, and the execution after an allowed call lands in
// the audit log linked to its decision — for every host.
func TestHookBinaryDecides(t *testing.T) {
	s := newHookServer(t)
	eachHook(t, func(t *testing.T, p hookProgram, hc hostCase) {
		r := p.run(t, s.url, s.host, hc.host, hc.payload(hc.pre, "ls -la", "call-read-"+p.name+"-"+hc.host))
		if !hc.allowed(r) {
			t.Fatalf("ls -la: %+v, want allowed", r)
		}
		r = p.run(t, s.url, s.host, hc.host, hc.payload(hc.pre, "rm -rf build", "call-rm-"+p.name+"-"+hc.host))
		reason, ok := hc.blocked(r)
		if !ok || !strings.Contains(reason, airlock.CodeDenied) || !strings.Contains(reason, "no-deletes") {
			t.Fatalf("rm -rf build: %+v, want blocked with AIRLOCK-DENIED and the rule", r)
		}
		r = p.run(t, s.url, s.host, hc.host, hc.payload(hc.post, "ls -la", "call-read-"+p.name+"-"+hc.host))
		if r.exit != 0 {
			t.Fatalf("%s: %+v", hc.post, r)
		}
		c := client.New(s.url, s.admin)
		page, err := c.Events(t.Context(), airlock.EventFilter{Kind: airlock.EventActionExecuted, Agent: "host-1", Newest: true, Limit: 1})
		if err != nil || len(page.Events) != 1 {
			t.Fatalf("action.executed: %v %v", page.Events, err)
		}
		var ex struct {
			DecisionSeq int64  `json:"decision_seq"`
			Status      string `json:"status"`
			Consent     string `json:"consent"`
		}
		if err := json.Unmarshal(page.Events[0].Payload, &ex); err != nil || ex.DecisionSeq == 0 || ex.Status != "ok" || ex.Consent != "" {
			t.Fatalf("action.executed payload %s: want linked to its decision, ok", page.Events[0].Payload)
		}
		d, err := c.Events(t.Context(), airlock.EventFilter{AfterSeq: ex.DecisionSeq - 1, Limit: 1})
		if err != nil || len(d.Events) != 1 || d.Events[0].Kind != airlock.EventDecision || !strings.Contains(string(d.Events[0].Payload), `"command":"ls -la"`) {
			t.Fatalf("decision_seq %d is not the call's decision: %v %v", ex.DecisionSeq, d.Events, err)
		}
	})
}

// TestHookBinaryAskHeldThenApproved: an ask holds the call while a reviewer
// approves it from the CLI; then the call runs.
func TestHookBinaryAskHeldThenApproved(t *testing.T) {
	s := newHookServer(t)
	eachHook(t, func(t *testing.T, p hookProgram, hc hostCase) {
		file := "held-" + p.name + "-" + hc.host
		done := make(chan hookRun, 1)
		go func() {
			done <- p.run(t, s.url, s.host, hc.host, hc.payload(hc.pre, "touch "+file, "call-held-"+p.name+"-"+hc.host))
		}()
		ap := waitPending(t, s, file)
		t.Setenv("AIRLOCK_TOKEN", s.bob)
		if code, out, errOut := runCLI(t, "approvals", "approve", ap.ID, "--server", s.url); code != 0 {
			t.Fatalf("approve: %d %s %s", code, out, errOut)
		}
		select {
		case r := <-done:
			if !hc.allowed(r) {
				t.Fatalf("after the approval: %+v, want allowed", r)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the held hook did not answer after the approval")
		}
	})
}

// waitPending waits for the pending request whose command names file.
func waitPending(t *testing.T, s *hookServer, file string) airlock.Approval {
	t.Helper()
	c := client.New(s.url, s.bob)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		page, err := c.Approvals(t.Context(), airlock.ApprovalFilter{Status: []airlock.ApprovalStatus{airlock.StatusPending}, Search: file})
		if err != nil {
			t.Fatal(err)
		}
		for _, ap := range page.Approvals {
			if strings.Contains(string(ap.Args), file) {
				return ap
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no pending request for %s", file)
	return airlock.Approval{}
}

// TestHookBinaryAskPastTimeout: an ask nobody decides within the hook's
// timeout is refused in time, naming the request, which stays pending;
// approved later, the same call retried runs once, and a second retry asks
// again.
func TestHookBinaryAskPastTimeout(t *testing.T) {
	s := newHookServer(t)
	eachHook(t, func(t *testing.T, p hookProgram, hc hostCase) {
		command := "touch late-" + p.name + "-" + hc.host
		r := p.run(t, s.url, s.host, hc.host, hc.payload(hc.pre, command, "call-late-1"), "--timeout", "4s")
		reason, ok := hc.blocked(r)
		if !ok || !strings.Contains(reason, airlock.CodePending) {
			t.Fatalf("past the timeout: %+v, want blocked with %s", r, airlock.CodePending)
		}
		if r.took >= 4*time.Second {
			t.Errorf("the hook answered after %s, past the host's 4s timeout", r.took)
		}
		ap := waitPending(t, s, "late-"+p.name+"-"+hc.host)
		if !strings.Contains(reason, ap.ID) {
			t.Errorf("the refusal does not name request %s: %s", ap.ID, reason)
		}
		if _, err := client.New(s.url, s.bob).Resolve(t.Context(), ap.ID, airlock.StatusApproved, ap.ActionHash, "", airlock.SurfaceCLI); err != nil {
			t.Fatal(err)
		}
		// The model retries the same call: a new call ID, the same action.
		r = p.run(t, s.url, s.host, hc.host, hc.payload(hc.pre, command, "call-late-2"), "--timeout", "4s")
		if !hc.allowed(r) {
			t.Fatalf("the retry after the approval: %+v, want allowed", r)
		}
		r = p.run(t, s.url, s.host, hc.host, hc.payload(hc.pre, command, "call-late-3"), "--timeout", "4s")
		if reason, ok := hc.blocked(r); !ok || !strings.Contains(reason, airlock.CodePending) {
			t.Fatalf("a second retry: %+v, want held and refused as pending again (an approval runs once)", r)
		}
	})
}

// TestHookBinaryFailsClosed: a server that is down, a refused token, a
// payload that is not JSON, an unknown event, a bad flag: exit 2 and one
// line, for every program, host and event.
func TestHookBinaryFailsClosed(t *testing.T) {
	s := newHookServer(t)
	down := "http://" + freeAddr(t)
	eachHook(t, func(t *testing.T, p hookProgram, hc hostCase) {
		for _, event := range []string{hc.pre, hc.post, "PermissionRequest"} {
			if hc.host == "gemini" && event == "PermissionRequest" {
				continue
			}
			payload := hc.payload(event, "ls", "call-x")
			cases := []struct {
				name, url, token string
				payload          []byte
				args             []string
			}{
				// A hook keeps trying a server it cannot reach until shortly
				// before the host's timeout: a short one.
				{"server down", down, s.host, payload, []string{"--timeout", "1s"}},
				{"token refused", s.url, "airlock_not-a-token", payload, nil},
				{"reviewer token", s.url, s.bob, payload, nil},
				{"no token", s.url, "", payload, nil},
				{"garbage", s.url, s.host, []byte("rm -rf / \x00\xff"), nil},
				{"empty", s.url, s.host, nil, nil},
				{"unknown event", s.url, s.host, bytes.Replace(payload, []byte(event), []byte("SessionStart"), 1), nil},
				{"bad flag", s.url, s.host, payload, []string{"--timeout", "soon"}},
				{"bad server", "ftp://airlock.example", s.host, payload, nil},
				{"zero timeout", s.url, s.host, payload, []string{"--timeout", "0s"}},
				// A payload that could be read two ways: Airlock would decide
				// on one reading while the host runs the other.
				{"a key twice", s.url, s.host, bytes.Replace(payload, []byte(`"tool_input":{"command":"ls"`), []byte(`"tool_input":{"command":"rm -rf ~","command":"ls"`), 1), nil},
				{"keys differing in case", s.url, s.host, bytes.Replace(payload, []byte(`"tool_name":"run_shell_command"`), []byte(`"tool_name":"run_shell_command","TOOL_NAME":"read_file"`), 1), nil},
				{"keys differing in case", s.url, s.host, bytes.Replace(payload, []byte(`"tool_name":"Bash"`), []byte(`"tool_name":"Bash","TOOL_NAME":"Read"`), 1), nil},
			}
			for _, c := range cases {
				if bytes.Equal(c.payload, payload) && strings.HasPrefix(c.name, "key") {
					continue // the other host's spelling
				}
				t.Run(event+"/"+c.name, func(t *testing.T) {
					r := p.run(t, c.url, c.token, hc.host, c.payload, c.args...)
					if r.exit != 2 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, "AIRLOCK-") {
						t.Fatalf("%+v: want exit 2 and one line naming the code", r)
					}
					if strings.HasPrefix(c.name, "key") && !strings.Contains(r.stderr, "duplicate member") {
						t.Errorf("%+v: want the reason to name the duplicate member", r)
					}
				})
			}
		}
	})
}

// freeAddr returns an address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	m, _, err := runMain(t, t.TempDir(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimPrefix(m.URL(), "http://")
	m.Close()
	return addr
}

// TestHookInstallDoctorUninstall: install writes the host's settings with a
// backup, a second install changes nothing, doctor passes line by line
// against the live server, uninstall takes exactly the hook away, and
// doctor then fails.
func TestHookInstallDoctorUninstall(t *testing.T) {
	s := newHookServer(t)
	for _, host := range []string{"claude-code", "codex", "gemini"} {
		t.Run(host, func(t *testing.T) {
			home, dir := t.TempDir(), t.TempDir()
			t.Setenv("HOME", home)
			t.Setenv("CODEX_HOME", filepath.Join(home, ".codex"))
			t.Setenv("AIRLOCK_TOKEN", "")
			tokenFile := filepath.Join(home, "token")
			if err := os.WriteFile(tokenFile, []byte(s.host), 0o600); err != nil {
				t.Fatal(err)
			}
			scope := []string{"--scope", "project", "--dir", dir}
			settings := map[string]string{
				"claude-code": filepath.Join(dir, ".claude", "settings.json"),
				"codex":       filepath.Join(dir, ".codex", "hooks.json"),
				"gemini":      filepath.Join(dir, ".gemini", "settings.json"),
			}[host]
			if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
				t.Fatal(err)
			}
			original := `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"./mine.sh"}]}]},"other":1}`
			if err := os.WriteFile(settings, []byte(original), 0o644); err != nil {
				t.Fatal(err)
			}
			install := append([]string{"hook", "install", host, "--command", "/bin/true", "--server", s.url, "--token-file", tokenFile}, scope...)
			wantRun(t, install, 0, "installed Airlock's hook in "+settings, "previous settings are in")
			wantRun(t, install, 0, "already installed", "nothing changed")
			backups, _ := filepath.Glob(settings + ".airlock-*.bak")
			if len(backups) != 1 {
				t.Fatalf("backups: %v, want one", backups)
			}
			if b, _ := os.ReadFile(backups[0]); string(b) != original {
				t.Errorf("the backup holds %s", b)
			}
			doctorArgs := append([]string{"hook", "doctor", host}, scope...)
			wantRun(t, doctorArgs, 0, "ok   settings:", "ok   command: /bin/true", "ok   server:", "ok   token: agent host-1", "ok   test decision:")
			if host == "codex" {
				wantRun(t, doctorArgs, 0, "ok   trust:")
			}
			wantRun(t, append([]string{"hook", "uninstall", host}, scope...), 0, "removed Airlock's hook")
			got, _ := os.ReadFile(settings)
			var a, b any
			_ = json.Unmarshal(got, &a)
			_ = json.Unmarshal([]byte(original), &b)
			if fmt.Sprint(a) != fmt.Sprint(b) {
				t.Errorf("after uninstall:\n%s\nwant:\n%s", got, original)
			}
			wantRun(t, doctorArgs, 1, "FAIL settings:")
			if host == "codex" {
				if b, _ := os.ReadFile(filepath.Join(home, ".codex", "config.toml")); strings.Contains(string(b), "hooks.state") {
					t.Errorf("uninstall left Codex's trust of the hooks:\n%s", b)
				}
			}
		})
	}
}

// TestHookBinaryAskAtHost: with --ask-at host, Claude Code's own prompt
// gets the ask (no request is queued for Airlock's reviewers), and when the
// call then runs the record says the host's user consented — never that
// Airlock approved.
func TestHookBinaryAskAtHost(t *testing.T) {
	s := newHookServer(t)
	c := client.New(s.url, s.admin)
	hc := hostCases[0] // Claude Code
	for _, p := range hookPrograms {
		t.Run(p.name, func(t *testing.T) {
			file, call := "at-host-"+p.name, "call-host-"+p.name
			r := p.run(t, s.url, s.host, hc.host, hc.payload("PreToolUse", "touch "+file, call), "--ask-at", "host")
			if r.exit != 0 || claudeDecision(r.stdout) != "ask" {
				t.Fatalf("ask at host: %+v, want permissionDecision ask", r)
			}
			page, err := c.Approvals(t.Context(), airlock.ApprovalFilter{Status: []airlock.ApprovalStatus{airlock.StatusPending}})
			if err != nil || len(page.Approvals) != 0 {
				t.Fatalf("an ask at the host queued requests: %v %v", page.Approvals, err)
			}
			// Reads and refusals are Airlock's still.
			if r := p.run(t, s.url, s.host, hc.host, hc.payload("PreToolUse", "rm -rf build", call+"-rm"), "--ask-at", "host"); claudeDecision(r.stdout) != "deny" {
				t.Fatalf("rm -rf with ask at host: %+v, want deny", r)
			}
			r = p.run(t, s.url, s.host, hc.host, hc.payload("PostToolUse", "touch "+file, call))
			if r.exit != 0 {
				t.Fatalf("PostToolUse: %+v", r)
			}
			evs, err := c.Events(t.Context(), airlock.EventFilter{Kind: airlock.EventActionExecuted, Newest: true, Limit: 1})
			if err != nil || len(evs.Events) != 1 || !strings.Contains(string(evs.Events[0].Payload), `"consent":"host"`) {
				t.Fatalf("the execution record: %v %v, want consent host", evs.Events, err)
			}
			// Codex and Gemini cannot ask from a hook: the flag is Claude Code's.
			for _, other := range hostCases[1:] {
				if r := p.run(t, s.url, s.host, other.host, other.payload(other.pre, "touch x", "c"), "--ask-at", "host"); r.exit != 2 {
					t.Fatalf("%s --ask-at host: %+v, want exit 2", other.host, r)
				}
			}
		})
	}
}
