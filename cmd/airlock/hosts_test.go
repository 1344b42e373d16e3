package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/hook/hosttest"
)

// The real-host tests run a whole turn of Claude Code, Codex and Gemini CLI
// (pinned in hook/testdata/hosts) against a scripted local model: the host
// runs its real hook machinery — the hook that `airlock hook install`
// wrote, the built airlock binary — and the test reads what the model was
// told and what ran.

// realHost is one host as the real-host tests drive it.
type realHost struct {
	name  string // Airlock's name for it
	host  string // hosttest's
	scope string // where the test installs the hook
	run   func(context.Context, hosttest.Options) (*hosttest.Turn, error)
	shell func(command string) hosttest.Call
}

var realHosts = []realHost{
	{"claude-code", hosttest.Claude, "project", hosttest.RunClaude,
		func(c string) hosttest.Call { return hosttest.Call{Tool: "Bash", Input: map[string]any{"command": c}} }},
	{"codex", hosttest.Codex, "user", hosttest.RunCodex,
		func(c string) hosttest.Call {
			return hosttest.Call{Tool: "exec_command", Input: map[string]any{"cmd": c}}
		}},
	{"gemini", hosttest.Gemini, "project", hosttest.RunGemini,
		func(c string) hosttest.Call {
			return hosttest.Call{Tool: "run_shell_command", Input: map[string]any{"command": c}}
		}},
}

// hostWorld is a project and a home for one host, with Airlock's hook
// installed by `airlock hook install`.
type hostWorld struct {
	h          realHost
	dir, home  string
	codexTrust string // the config.toml install wrote (Codex)
}

// installHost installs program p as h's hook with the built airlock, as a
// user would. For airlock-hook in a user's settings install names no
// program: it finds airlock-hook beside itself, and the settings must say
// so.
func installHost(t *testing.T, s *hookServer, h realHost, p hookProgram, server string) *hostWorld {
	t.Helper()
	bin := airlockBinary(t) // before HOME moves: go build keeps its cache there
	argv := p.argv(t, h.name)
	exe := argv[0]
	w := &hostWorld{h: h, dir: t.TempDir(), home: t.TempDir()}
	tokenFile := filepath.Join(w.home, "airlock.token")
	if err := os.WriteFile(tokenFile, []byte(s.host+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", w.home)
	t.Setenv("CODEX_HOME", filepath.Join(w.home, ".codex"))
	t.Setenv("AIRLOCK_TOKEN", "")
	args := []string{"hook", "install", h.name, "--scope", h.scope, "--dir", w.dir, "--server", server, "--token-file", tokenFile}
	if p.name != "airlock-hook" || h.scope == "project" {
		args = append(args, "--command", exe)
	}
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("airlock %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	settings := regexp.MustCompile(`installed Airlock's hook in (\S+) on`).FindSubmatch(out)
	if settings == nil {
		t.Fatalf("airlock hook install said:\n%s", out)
	}
	if b, err := os.ReadFile(string(settings[1])); err != nil || !strings.Contains(string(b), strings.Join(argv, " ")) {
		t.Fatalf("the settings install wrote do not run %s: %v\n%s", strings.Join(argv, " "), err, b)
	}
	if h.name == "codex" {
		b, err := os.ReadFile(filepath.Join(w.home, ".codex", "config.toml"))
		if err != nil {
			t.Fatalf("install codex wrote no trust: %v", err)
		}
		w.codexTrust = string(b)
	}
	return w
}

func (w *hostWorld) turn(t *testing.T, calls ...hosttest.Call) *hosttest.Turn {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	turn, err := w.h.run(ctx, hosttest.Options{Dir: w.dir, Home: w.home, Calls: calls, CodexConfig: w.codexTrust})
	t.Logf("%s: a turn of %d calls took %s", w.h.name, len(calls), time.Since(start).Round(time.Millisecond))
	if err != nil {
		t.Fatalf("%s turn: %v\n%s", w.h.name, err, turn)
	}
	if len(turn.Results) != len(calls) {
		t.Fatalf("%s answered %d of %d calls\n%s", w.h.name, len(turn.Results), len(calls), turn)
	}
	return turn
}

func (w *hostWorld) exists(name string) bool {
	_, err := os.Stat(filepath.Join(w.dir, name))
	return err == nil
}

// TestRealHosts: in one real turn of each host, a read runs and its output
// reaches the model; a destructive command is blocked and the model is told
// the code and the rule; a write that asks is held while a reviewer
// approves it through the API, then runs; and each execution is in the
// audit log, linked to its decision.
func TestRealHosts(t *testing.T) {
	eachRealHost(t, func(t *testing.T, p hookProgram, h realHost) {
		s := newHookServer(t)
		w := installHost(t, s, h, p, s.url)
		if err := os.WriteFile(filepath.Join(w.dir, "marker.txt"), []byte("marker-3f9a\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(filepath.Join(w.dir, "victim"), 0o755); err != nil {
			t.Fatal(err)
		}

		approved := make(chan error, 1)
		go func() {
			ap, err := pendingFor(t.Context(), s, "approved-file")
			if err == nil {
				_, err = client.New(s.url, s.bob).Resolve(t.Context(), ap.ID, airlock.StatusApproved, ap.ActionHash, "ok", airlock.SurfaceAPI)
			}
			approved <- err
		}()
		turn := w.turn(t, h.shell("cat marker.txt"), h.shell("rm -rf victim"), h.shell("touch approved-file"))

		if r := turn.Results[0]; r.IsError || !strings.Contains(r.Output, "marker-3f9a") {
			t.Errorf("cat marker.txt: the model was told %q (error %t), want the file's text", r.Output, r.IsError)
		}
		if r := turn.Results[1]; !strings.Contains(r.Output, airlock.CodeDenied) || !strings.Contains(r.Output, "no-deletes") {
			t.Errorf("rm -rf victim: the model was told %q, want %s and the rule", r.Output, airlock.CodeDenied)
		}
		if !w.exists("victim") {
			t.Error("rm -rf victim ran: the folder is gone")
		}
		if err := <-approved; err != nil {
			t.Fatalf("approve: %v", err)
		}
		if r := turn.Results[2]; r.IsError || strings.Contains(r.Output, "AIRLOCK-") {
			t.Errorf("touch approved-file after the approval: the model was told %q", r.Output)
		}
		if !w.exists("approved-file") {
			t.Error("touch approved-file did not run after its approval")
		}
		assertExecuted(t, s, "cat marker.txt", "touch approved-file")
	})
}

// TestRealHostsServerDown: with the server gone, no host runs the call —
// Codex included, which runs calls whose hooks fail in any way but one.
func TestRealHostsServerDown(t *testing.T) {
	eachRealHost(t, func(t *testing.T, p hookProgram, h realHost) {
		s := newHookServer(t)
		w := installHost(t, s, h, p, "http://"+freeAddr(t))
		turn := w.turn(t, h.shell("touch never-file"))
		if w.exists("never-file") {
			t.Fatalf("the call ran with the server down\n%s", turn)
		}
		if r := turn.Results[0]; !strings.Contains(r.Output, airlock.CodeUnavailable) {
			t.Errorf("the model was told %q, want %s", r.Output, airlock.CodeUnavailable)
		}
	})
}

// eachRealHost runs f as a subtest for every hook program and real host.
func eachRealHost(t *testing.T, f func(t *testing.T, p hookProgram, h realHost)) {
	for _, p := range hookPrograms {
		for _, h := range realHosts {
			t.Run(p.name+"/"+h.name, func(t *testing.T) {
				hosttest.Require(t, h.host)
				f(t, p, h)
			})
		}
	}
}

// pendingFor waits for the pending request whose arguments name what.
func pendingFor(ctx context.Context, s *hookServer, what string) (airlock.Approval, error) {
	c := client.New(s.url, s.bob)
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		page, err := c.Approvals(ctx, airlock.ApprovalFilter{Status: []airlock.ApprovalStatus{airlock.StatusPending}})
		if err != nil {
			return airlock.Approval{}, err
		}
		for _, ap := range page.Approvals {
			if strings.Contains(string(ap.Args), what) {
				return ap, nil
			}
		}
		select {
		case <-ctx.Done():
			return airlock.Approval{}, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// assertExecuted checks that each command's execution was recorded, linked
// to the decision that let it run.
func assertExecuted(t *testing.T, s *hookServer, commands ...string) {
	t.Helper()
	c := client.New(s.url, s.admin)
	page, err := c.Events(t.Context(), airlock.EventFilter{Kind: airlock.EventActionExecuted, Agent: "host-1", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, command := range commands {
		found := false
		for _, e := range page.Events {
			var p struct {
				DecisionSeq int64  `json:"decision_seq"`
				Consent     string `json:"consent"`
			}
			if json.Unmarshal(e.Payload, &p) != nil || p.DecisionSeq == 0 || p.Consent != "" {
				continue
			}
			d, err := c.Events(t.Context(), airlock.EventFilter{AfterSeq: p.DecisionSeq - 1, Limit: 1})
			if err == nil && len(d.Events) == 1 && d.Events[0].Kind == airlock.EventDecision &&
				strings.Contains(string(d.Events[0].Payload), command) {
				found = true
			}
		}
		if !found {
			t.Errorf("no action.executed linked to the decision on %q among %d executions", command, len(page.Events))
		}
	}
}

// TestRealClaudeHTTPHook: installed with --http, Claude Code POSTs its
// hooks to the server itself — no process per call — with the token from
// its environment: reads run, rm -rf is refused, executions are recorded.
func TestRealClaudeHTTPHook(t *testing.T) {
	hosttest.Require(t, hosttest.Claude)
	s := newHookServer(t)
	h := realHosts[0]
	w := &hostWorld{h: h, dir: t.TempDir(), home: t.TempDir()}
	t.Setenv("HOME", w.home)
	wantRun(t, []string{"hook", "install", "claude-code", "--http", "--scope", "project", "--dir", w.dir, "--server", s.url}, 0, "installed")
	if err := os.WriteFile(filepath.Join(w.dir, "marker.txt"), []byte("marker-http\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(w.dir, "victim"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	calls := []hosttest.Call{h.shell("cat marker.txt"), h.shell("rm -rf victim")}
	turn, err := hosttest.RunClaude(ctx, hosttest.Options{Dir: w.dir, Home: w.home, Calls: calls, Env: []string{"AIRLOCK_TOKEN=" + s.host}})
	if err != nil || len(turn.Results) != 2 {
		t.Fatalf("turn: %v\n%s", err, turn)
	}
	if r := turn.Results[0]; r.IsError || !strings.Contains(r.Output, "marker-http") {
		t.Errorf("cat marker.txt: the model was told %q", r.Output)
	}
	if r := turn.Results[1]; !strings.Contains(r.Output, airlock.CodeDenied) {
		t.Errorf("rm -rf victim: the model was told %q, want %s", r.Output, airlock.CodeDenied)
	}
	if !w.exists("victim") {
		t.Error("rm -rf victim ran")
	}
	assertExecuted(t, s, "cat marker.txt")
}

// TestRealHostsEdit: a reviewer approves an edit of the held call. Claude
// Code runs the edited input (updatedInput) and Gemini CLI too (its
// tool_input merged over the model's: the edit changes no argument's
// name); Codex, whose hooks cannot change a call, is told AIRLOCK-EDITED
// and the edited action to run instead — and neither host runs the
// original.
func TestRealHostsEdit(t *testing.T) {
	p := hookPrograms[0]
	for _, h := range realHosts {
		t.Run(h.name, func(t *testing.T) {
			hosttest.Require(t, h.host)
			s := newHookServer(t)
			w := installHost(t, s, h, p, s.url)
			approved := make(chan error, 1)
			go func() {
				ap, err := pendingFor(t.Context(), s, "original-file")
				if err == nil {
					edited := strings.Replace(string(ap.Args), "touch original-file", "touch edited-file", 1)
					_, err = client.New(s.url, s.bob).ResolveWith(t.Context(), airlock.Resolution{ApprovalID: ap.ID,
						Status: airlock.StatusApproved, ActionHash: ap.ActionHash, Surface: airlock.SurfaceAPI,
						Edit: &airlock.Edit{Args: json.RawMessage(edited)}})
				}
				approved <- err
			}()
			turn := w.turn(t, h.shell("touch original-file"))
			if err := <-approved; err != nil {
				t.Fatalf("approve the edit: %v", err)
			}
			if w.exists("original-file") {
				t.Errorf("%s ran the original call after its edit was approved", h.name)
			}
			r := turn.Results[0]
			if h.name == "codex" {
				if w.exists("edited-file") || !strings.Contains(r.Output, airlock.CodeEdited) || !strings.Contains(r.Output, "touch edited-file") {
					t.Errorf("codex: the model was told %q; want %s and the edited command, and nothing run", r.Output, airlock.CodeEdited)
				}
				return
			}
			if !w.exists("edited-file") || strings.Contains(r.Output, "AIRLOCK-") {
				t.Errorf("%s: the edited call did not run (the model was told %q)", h.name, r.Output)
			}
			assertExecuted(t, s, "touch original-file")
			// The record says what ran: the edit's hash.
			page, perr := client.New(s.url, s.admin).Events(t.Context(), airlock.EventFilter{Kind: airlock.EventActionExecuted, Agent: "host-1"})
			aps, aerr := client.New(s.url, s.bob).Approvals(t.Context(), airlock.ApprovalFilter{Status: []airlock.ApprovalStatus{airlock.StatusApproved}})
			if perr != nil || aerr != nil || len(aps.Approvals) != 1 || aps.Approvals[0].Edit == nil || len(page.Events) != 1 ||
				!strings.Contains(string(page.Events[0].Payload), aps.Approvals[0].Edit.ActionHash.String()) {
				t.Errorf("the execution record does not name the edit that ran: %+v %v %v", page.Events, perr, aerr)
			}
		})
	}
}
