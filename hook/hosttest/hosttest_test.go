package hosttest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/hook/hosttest"
)

var capture = flag.Bool("capture", false, "rewrite testdata/hooks/<host>/captured/*.json from the payloads the hosts send")

// Markers in a command tell the test hook what to answer at the pre-tool
// event: the payload carries the command, so the hook finds them in stdin.
const (
	markAllow  = "hosttest-allow"
	markExit2  = "hosttest-exit2"
	markDeny   = "hosttest-deny"
	markBlock  = "hosttest-block" // Codex: {"decision":"block"}
	markExit1  = "hosttest-exit1"
	markFailed = "hosttest-failed"

	reasonExit2 = "blocked by the hosttest hook"
	reasonDeny  = "denied by the hosttest hook"
	reasonBlock = "refused by the hosttest hook"
)

// command creates a file named after the marker, so that whether it ran can
// be seen afterwards, and prints a line that should reach the model.
func command(mark string) string { return fmt.Sprintf("touch %s.txt; echo ran-%s", mark, mark) }

const failing = "echo " + markFailed + "; ls hosttest-missing-file"

// testHook writes a hook script that saves each payload under rec and, at the
// pre-tool event (first argument "pre"), answers as the marker in the
// payload says; denyJSON is the host's deny answer on stdout.
func testHook(t *testing.T, denyJSON string) (script, rec string) {
	t.Helper()
	dir := t.TempDir()
	rec = filepath.Join(dir, "rec")
	if err := os.Mkdir(rec, 0o755); err != nil {
		t.Fatal(err)
	}
	script = filepath.Join(dir, "hook.sh")
	body := fmt.Sprintf(`#!/bin/sh
in=$(cat)
printf '%%s' "$in" > "%s/$(date +%%s%%N)-$1.json"
[ "$1" = pre ] || exit 0
case "$in" in
*%s*) echo "%s" >&2; exit 2;;
*%s*) printf '%%s\n' '%s'; exit 0;;
*%s*) printf '%%s\n' '{"decision":"block","reason":"%s"}'; exit 0;;
*%s*) echo "hosttest hook failed" >&2; exit 1;;
esac
exit 0
`, rec, markExit2, reasonExit2, markDeny, denyJSON, markBlock, reasonBlock, markExit1)
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script, rec
}

// payload is one recorded hook input.
type payload struct {
	Kind string // the hook script's first argument
	Raw  []byte
	Doc  map[string]any
}

func payloads(t *testing.T, rec string) []payload {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(rec, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files) // named by time
	var out []payload
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p := payload{Kind: strings.TrimSuffix(filepath.Base(f)[strings.Index(filepath.Base(f), "-")+1:], ".json"), Raw: raw}
		if err := json.Unmarshal(raw, &p.Doc); err != nil {
			t.Fatalf("hook payload %s is not JSON: %v\n%s", f, err, raw)
		}
		out = append(out, p)
	}
	return out
}

// find returns the first payload for event whose text holds mark.
func find(ps []payload, event, mark string) *payload {
	for i, p := range ps {
		if p.Doc["hook_event_name"] == event && bytes.Contains(p.Raw, []byte(mark)) {
			return &ps[i]
		}
	}
	return nil
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func exists(dir, mark string) bool {
	_, err := os.Stat(filepath.Join(dir, mark+".txt"))
	return err == nil
}

func turnContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// checkTurn fails the test with the host's output unless the turn answered
// every call.
func checkTurn(t *testing.T, turn *hosttest.Turn, err error, calls int) {
	t.Helper()
	if err != nil || turn.ExitCode != 0 || len(turn.Results) != calls {
		if turn != nil {
			t.Log(turn)
		}
		t.Fatalf("turn: err %v; want exit 0 and %d results", err, calls)
	}
}

// expect checks one call's fate: whether its command ran and what the model
// was told.
type expect struct {
	mark    string
	ran     bool
	says    string // a substring of the result the model received
	isError bool   // checked where the host reports it (Claude Code)
}

func checkResults(t *testing.T, host, dir string, turn *hosttest.Turn, want []expect) {
	t.Helper()
	for i, w := range want {
		got := turn.Results[i]
		if ran := exists(dir, w.mark); ran != w.ran {
			t.Errorf("%s %s: command ran = %v, want %v (result %q)", host, w.mark, ran, w.ran, got.Output)
		}
		if !strings.Contains(got.Output, w.says) {
			t.Errorf("%s %s: model was told %q, want it to contain %q", host, w.mark, got.Output, w.says)
		}
		if host == hosttest.Claude && got.IsError != w.isError {
			t.Errorf("%s %s: is_error = %v, want %v", host, w.mark, got.IsError, w.isError)
		}
	}
}

func TestClaude(t *testing.T) {
	t.Parallel()
	hosttest.Require(t, hosttest.Claude)
	dir, home := t.TempDir(), t.TempDir()
	hook, rec := testHook(t, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"`+reasonDeny+`"}}`)
	writeFile(t, filepath.Join(dir, ".claude", "settings.json"), fmt.Sprintf(`{
  "permissions": {"allow": ["Bash"]},
  "hooks": {
    "PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": %[1]q}]}],
    "PostToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": %[2]q}]}],
    "PostToolUseFailure": [{"matcher": "*", "hooks": [{"type": "command", "command": %[3]q}]}]
  }
}`, hook+" pre", hook+" post", hook+" postfailure"))
	bash := func(cmd string) hosttest.Call {
		return hosttest.Call{Tool: "Bash", Input: map[string]any{"command": cmd, "description": "hosttest"}}
	}
	calls := []hosttest.Call{bash(command(markAllow)), bash(command(markExit2)), bash(command(markDeny)), bash(command(markExit1)), bash(failing)}
	turn, err := hosttest.RunClaude(turnContext(t), hosttest.Options{Dir: dir, Home: home, Calls: calls})
	checkTurn(t, turn, err, len(calls))
	checkResults(t, hosttest.Claude, dir, turn, []expect{
		{mark: markAllow, ran: true, says: "ran-" + markAllow},
		{mark: markExit2, says: reasonExit2, isError: true},
		{mark: markDeny, says: reasonDeny, isError: true},
		// A hook that exits 1 is a non-blocking error: the call runs.
		{mark: markExit1, ran: true, says: "ran-" + markExit1},
		{mark: markFailed, says: "Exit code 2", isError: true},
	})

	ps := payloads(t, rec)
	if p := find(ps, "PostToolUse", markFailed); p != nil {
		t.Errorf("claude: PostToolUse fired for a failed command (PostToolUseFailure is expected alone): %s", p.Raw)
	}
	saveCaptures(t, hosttest.Claude, dir, home, map[string]*payload{
		"pretooluse-bash.json":         find(ps, "PreToolUse", markAllow),
		"posttooluse-bash.json":        find(ps, "PostToolUse", markAllow),
		"posttoolusefailure-bash.json": find(ps, "PostToolUseFailure", markFailed),
	})
}

func TestCodex(t *testing.T) {
	t.Parallel()
	hosttest.Require(t, hosttest.Codex)
	dir, home := t.TempDir(), t.TempDir()
	hook, rec := testHook(t, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"`+reasonDeny+`"}}`)
	writeFile(t, filepath.Join(home, ".codex", "hooks.json"), fmt.Sprintf(`{
  "hooks": {
    "PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": %[1]q}]}],
    "PostToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": %[2]q}]}]
  }
}`, hook+" pre", hook+" post"))
	exec := func(cmd string) hosttest.Call {
		return hosttest.Call{Tool: "exec_command", Input: map[string]any{"cmd": cmd}}
	}
	calls := []hosttest.Call{exec(command(markAllow)), exec(command(markExit2)), exec(command(markDeny)), exec(command(markBlock)), exec(command(markExit1)), exec(failing)}
	turn, err := hosttest.RunCodex(turnContext(t), hosttest.Options{Dir: dir, Home: home, Calls: calls, TrustHooks: true})
	checkTurn(t, turn, err, len(calls))
	checkResults(t, hosttest.Codex, dir, turn, []expect{
		{mark: markAllow, ran: true, says: "ran-" + markAllow},
		{mark: markExit2, says: "Command blocked by PreToolUse hook: " + reasonExit2},
		{mark: markDeny, says: "Command blocked by PreToolUse hook: " + reasonDeny},
		{mark: markBlock, says: "Command blocked by PreToolUse hook: " + reasonBlock},
		{mark: markExit1, ran: true, says: "ran-" + markExit1},
		{mark: markFailed, says: "Process exited with code 2"},
	})

	ps := payloads(t, rec)
	saveCaptures(t, hosttest.Codex, dir, home, map[string]*payload{
		"pretooluse-bash.json":         find(ps, "PreToolUse", markAllow),
		"posttooluse-bash.json":        find(ps, "PostToolUse", markAllow),
		"posttooluse-bash-failed.json": find(ps, "PostToolUse", markFailed),
	})
}

// TestCodexUntrustedHooks shows why the harness has Options.TrustHooks:
// without trust Codex skips the hook, silently, and runs the command.
func TestCodexUntrustedHooks(t *testing.T) {
	t.Parallel()
	hosttest.Require(t, hosttest.Codex)
	dir, home := t.TempDir(), t.TempDir()
	hook, rec := testHook(t, "")
	writeFile(t, filepath.Join(home, ".codex", "hooks.json"), fmt.Sprintf(`{"hooks": {
  "PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": %q}]}]}}`, hook+" pre"))
	calls := []hosttest.Call{{Tool: "exec_command", Input: map[string]any{"cmd": command(markExit2)}}}
	turn, err := hosttest.RunCodex(turnContext(t), hosttest.Options{Dir: dir, Home: home, Calls: calls})
	checkTurn(t, turn, err, len(calls))
	if !exists(dir, markExit2) {
		t.Errorf("codex without hook trust: command did not run; result %q", turn.Results[0].Output)
	}
	if ps := payloads(t, rec); len(ps) != 0 {
		t.Errorf("codex without hook trust: hook ran %d times, want 0", len(ps))
	}
}

// TestCodexPermissionRequest makes Codex ask for approval: the model asks
// for escalated permissions and --approve-for-me routes the request to the
// automatic reviewer, which fires PermissionRequest first.
func TestCodexPermissionRequest(t *testing.T) {
	t.Parallel()
	hosttest.Require(t, hosttest.Codex)
	dir, home := t.TempDir(), t.TempDir()
	hook, rec := testHook(t, "")
	writeFile(t, filepath.Join(home, ".codex", "hooks.json"), fmt.Sprintf(`{"hooks": {
  "PermissionRequest": [{"matcher": "*", "hooks": [{"type": "command", "command": %q}]}]}}`, hook+" permission"))
	calls := []hosttest.Call{{Tool: "exec_command", Input: map[string]any{
		"cmd": command(markAllow), "sandbox_permissions": "require_escalated", "justification": "hosttest needs to write"}}}
	turn, err := hosttest.RunCodex(turnContext(t), hosttest.Options{Dir: dir, Home: home, Calls: calls, TrustHooks: true,
		ExtraArgs: []string{"--approve-for-me"}})
	if err != nil {
		t.Log(turn)
		t.Fatal(err)
	}
	p := find(payloads(t, rec), "PermissionRequest", markAllow)
	if p == nil {
		t.Log(turn)
		t.Fatal("codex: PermissionRequest did not fire")
	}
	saveCaptures(t, hosttest.Codex, dir, home, map[string]*payload{"permissionrequest-bash.json": p})
}

func TestGemini(t *testing.T) {
	t.Parallel()
	hosttest.Require(t, hosttest.Gemini)
	dir, home := t.TempDir(), t.TempDir()
	hook, rec := testHook(t, `{"decision":"deny","reason":"`+reasonDeny+`"}`)
	writeFile(t, filepath.Join(dir, ".gemini", "settings.json"), fmt.Sprintf(`{
  "hooks": {
    "BeforeTool": [{"matcher": ".*", "hooks": [{"type": "command", "command": %[1]q, "timeout": 60000}]}],
    "AfterTool": [{"matcher": ".*", "hooks": [{"type": "command", "command": %[2]q, "timeout": 60000}]}]
  }
}`, hook+" pre", hook+" post"))
	shell := func(cmd string) hosttest.Call {
		return hosttest.Call{Tool: "run_shell_command", Input: map[string]any{"command": cmd}}
	}
	calls := []hosttest.Call{shell(command(markAllow)), shell(command(markExit2)), shell(command(markDeny)), shell(command(markExit1)), shell(failing)}
	turn, err := hosttest.RunGemini(turnContext(t), hosttest.Options{Dir: dir, Home: home, Calls: calls})
	checkTurn(t, turn, err, len(calls))
	checkResults(t, hosttest.Gemini, dir, turn, []expect{
		{mark: markAllow, ran: true, says: "ran-" + markAllow},
		{mark: markExit2, says: "Tool execution blocked: " + reasonExit2},
		{mark: markDeny, says: "Tool execution blocked: " + reasonDeny},
		{mark: markExit1, ran: true, says: "ran-" + markExit1},
		{mark: markFailed, says: "Exit Code: 2"},
	})
	for i, r := range turn.Results {
		if blocked := i == 1 || i == 2; r.IsError != blocked {
			t.Errorf("gemini call %d: error response = %v, want %v", i, r.IsError, blocked)
		}
	}

	ps := payloads(t, rec)
	saveCaptures(t, hosttest.Gemini, dir, home, map[string]*payload{
		"beforetool-run_shell_command.json":       find(ps, "BeforeTool", markAllow),
		"aftertool-run_shell_command.json":        find(ps, "AfterTool", markAllow),
		"aftertool-run_shell_command-failed.json": find(ps, "AfterTool", markFailed),
	})
}

// Placeholders the captures use for what changes from run to run.
const (
	projectDir = "/work/project"
	homeDir    = "/work/home"
)

var (
	reTimestamp = regexp.MustCompile(`"timestamp":"[^"]*"`)
	reDuration  = regexp.MustCompile(`"duration_ms":\d+`)
	reRollout   = regexp.MustCompile(`rollout-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-`)
	reSession   = regexp.MustCompile(`session-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-`)
	reDayDir    = regexp.MustCompile(`/sessions/\d{4}/\d{2}/\d{2}/`)
	rePGID      = regexp.MustCompile(`PGID: \d+`)
	reWall      = regexp.MustCompile(`Wall time: [0-9.]+ seconds`)
	reChunk     = regexp.MustCompile(`Chunk ID: [0-9a-f]+`)
)

// normalize replaces what changes from run to run in a payload (scratch
// paths, ids, times) with fixed placeholders, keeping every field and the
// host's field order.
func normalize(raw []byte, doc map[string]any, dir, home string) []byte {
	s := string(raw)
	for _, d := range []struct{ from, to string }{{dir, projectDir}, {home, homeDir}} {
		if real, err := filepath.EvalSymlinks(d.from); err == nil && real != d.from {
			s = strings.ReplaceAll(s, real, d.to)
		}
		s = strings.ReplaceAll(s, d.from, d.to)
	}
	// Claude Code names a project's transcript folder after its path.
	s = strings.ReplaceAll(s, strings.ReplaceAll(dir, "/", "-"), "-work-project")
	// Gemini CLI names it after the folder's base name.
	s = strings.ReplaceAll(s, "/.gemini/tmp/"+filepath.Base(dir)+"/", "/.gemini/tmp/project/")
	ids := map[string]string{
		"session_id": "00000000-0000-0000-0000-000000000001",
		"prompt_id":  "00000000-0000-0000-0000-000000000002",
		"turn_id":    "00000000-0000-0000-0000-000000000003",
	}
	for key, placeholder := range ids {
		if id, _ := doc[key].(string); id != "" {
			s = strings.ReplaceAll(s, id, placeholder)
			if len(id) >= 8 { // Gemini's transcript name holds the id's first 8 characters
				s = strings.ReplaceAll(s, "-"+id[:8]+".jsonl", "-"+placeholder[:8]+".jsonl")
			}
		}
	}
	s = reTimestamp.ReplaceAllString(s, `"timestamp":"2026-01-01T00:00:00.000Z"`)
	s = reDuration.ReplaceAllString(s, `"duration_ms":100`)
	s = reRollout.ReplaceAllString(s, "rollout-2026-01-01T00-00-00-")
	s = reSession.ReplaceAllString(s, "session-2026-01-01T00-00-")
	s = reDayDir.ReplaceAllString(s, "/sessions/2026/01/01/")
	s = rePGID.ReplaceAllString(s, "PGID: 4242")
	s = reWall.ReplaceAllString(s, "Wall time: 0.0100 seconds")
	s = reChunk.ReplaceAllString(s, "Chunk ID: 000000")
	var out bytes.Buffer
	if err := json.Indent(&out, []byte(s), "", "  "); err != nil {
		return []byte(s)
	}
	out.WriteByte('\n')
	return out.Bytes()
}

// capturedDir is testdata/hooks/<host>/captured at the module root.
func capturedDir(host string) string {
	return filepath.Join("..", "..", "testdata", "hooks", host, "captured")
}

// saveCaptures writes the payloads under -capture; otherwise it checks that
// the host still sends the fields the committed captures hold, so that a
// version bump that changes a payload is noticed.
func saveCaptures(t *testing.T, host, dir, home string, captures map[string]*payload) {
	t.Helper()
	for name, p := range captures {
		if p == nil {
			t.Errorf("%s: no payload for %s", host, name)
			continue
		}
		path := filepath.Join(capturedDir(host), name)
		if *capture {
			writeFile(t, path, string(normalize(p.Raw, p.Doc, dir, home)))
			continue
		}
		committed, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: %v (run go test ./hook/hosttest -capture)", host, err)
			continue
		}
		var want map[string]any
		if err := json.Unmarshal(committed, &want); err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if got, want := keys(p.Doc), keys(want); !slices.Equal(got, want) {
			t.Errorf("%s %s: fields %v, the capture has %v (rerun with -capture)", host, name, got, want)
		}
	}
}

func keys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// TestClaudePermissionRequest: in -p mode Claude Code denies a call that
// needs permission without firing PermissionRequest; with the SDK's stdio
// permission prompt (--permission-prompt-tool stdio, stream-json input) it
// fires the hook while it asks the SDK.
func TestClaudePermissionRequest(t *testing.T) {
	t.Parallel()
	hosttest.Require(t, hosttest.Claude)
	dir, home := t.TempDir(), t.TempDir()
	hook, rec := testHook(t, "")
	writeFile(t, filepath.Join(dir, ".claude", "settings.json"), fmt.Sprintf(`{"hooks": {
  "PermissionRequest": [{"matcher": "*", "hooks": [{"type": "command", "command": %q}]}]}}`, hook+" permission"))
	calls := []hosttest.Call{{Tool: "Bash", Input: map[string]any{"command": command(markAllow), "description": "hosttest"}}}
	// Claude Code asks the permission prompt tool on stdin. Its input is
	// held open until the hook has fired: a host that reaches the question
	// after the end of its input fails it ("Stream closed") without
	// running the hook. The hook gives no answer; the prompt then fails.
	stdin := &heldOpen{r: strings.NewReader(`{"type":"user","message":{"role":"user","content":"Run the scripted calls."}}` + "\n"),
		until: func() bool { m, _ := filepath.Glob(filepath.Join(rec, "*-permission.json")); return len(m) > 0 },
		limit: 20 * time.Second}
	turn, err := hosttest.RunClaude(turnContext(t), hosttest.Options{Dir: dir, Home: home, Calls: calls, Stdin: stdin,
		ExtraArgs: []string{"--input-format", "stream-json", "--output-format", "stream-json", "--verbose", "--permission-prompt-tool", "stdio"}})
	checkTurn(t, turn, err, len(calls))
	p := find(payloads(t, rec), "PermissionRequest", markAllow)
	if p == nil {
		t.Log(turn)
		t.Fatal("claude: PermissionRequest did not fire")
	}
	saveCaptures(t, hosttest.Claude, dir, home, map[string]*payload{"permissionrequest-bash.json": p})
}

// heldOpen is a host's standard input: r, then no end until until
// reports true (or limit passes after r's end).
type heldOpen struct {
	r     io.Reader
	until func() bool
	limit time.Duration
}

func (h *heldOpen) Read(p []byte) (int, error) {
	if n, err := h.r.Read(p); n > 0 || err != io.EOF {
		return n, err
	}
	for end := time.Now().Add(h.limit); !h.until() && time.Now().Before(end); {
		time.Sleep(20 * time.Millisecond)
	}
	return 0, io.EOF
}

// httpHook is a Claude Code "type": "http" hook endpoint that records each
// request and answers as the marker in the body says.
type httpHook struct {
	mu   sync.Mutex
	reqs []httpRequest
}

type httpRequest struct {
	Method  string              `json:"method"`
	Path    string              `json:"path"`
	Headers map[string][]string `json:"headers"`
	Body    json.RawMessage     `json:"body"`
}

func (h *httpHook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	h.reqs = append(h.reqs, httpRequest{r.Method, r.URL.RequestURI(), r.Header.Clone(), body})
	h.mu.Unlock()
	switch {
	case bytes.Contains(body, []byte(markDeny)):
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":%q}}`, reasonDeny)
	case bytes.Contains(body, []byte(markExit2)):
		http.Error(w, reasonExit2, http.StatusInternalServerError)
	case bytes.Contains(body, []byte(markExit1)):
		w.WriteHeader(http.StatusNoContent)
	default:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{}`)
	}
}

// TestClaudeHTTPHook drives a "type": "http" PreToolUse hook: what Claude
// Code sends, which answers block, and what a failing endpoint does.
func TestClaudeHTTPHook(t *testing.T) {
	hosttest.Require(t, hosttest.Claude)
	hh := &httpHook{}
	srv := httptest.NewServer(hh)
	t.Cleanup(srv.Close)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close() // connection refused

	bash := func(cmd string) hosttest.Call {
		return hosttest.Call{Tool: "Bash", Input: map[string]any{"command": cmd, "description": "hosttest"}}
	}
	run := func(t *testing.T, hook string, calls []hosttest.Call) (string, string, *hosttest.Turn) {
		dir, home := t.TempDir(), t.TempDir()
		writeFile(t, filepath.Join(dir, ".claude", "settings.json"), `{"permissions": {"allow": ["Bash"]}, "hooks": {
  "PreToolUse": [{"matcher": "*", "hooks": [`+hook+`]}]}}`)
		turn, err := hosttest.RunClaude(turnContext(t), hosttest.Options{Dir: dir, Home: home, Calls: calls,
			Env: []string{"AIRLOCK_TOKEN=hosttest-token", "OTHER_SECRET=hosttest-other"}})
		checkTurn(t, turn, err, len(calls))
		return dir, home, turn
	}
	t.Run("answers", func(t *testing.T) {
		t.Parallel()
		hook := fmt.Sprintf(`{"type": "http", "url": %q, "headers": {"Authorization": "Bearer $AIRLOCK_TOKEN", "X-Other": "${OTHER_SECRET}"}, "allowedEnvVars": ["AIRLOCK_TOKEN"], "timeout": 30}`, srv.URL+"/hook/claude")
		dir, home, turn := run(t, hook, []hosttest.Call{bash(command(markAllow)), bash(command(markDeny)), bash(command(markExit2)), bash(command(markExit1))})
		checkResults(t, hosttest.Claude, dir, turn, []expect{
			{mark: markAllow, ran: true, says: "ran-" + markAllow}, // 200 {}
			{mark: markDeny, says: reasonDeny, isError: true},      // 200 with the deny JSON
			{mark: markExit2, ran: true, says: "ran-" + markExit2}, // 500: a non-blocking error
			{mark: markExit1, ran: true, says: "ran-" + markExit1}, // 204, no body
		})
		hh.mu.Lock()
		defer hh.mu.Unlock()
		var first *httpRequest
		for i, r := range hh.reqs {
			if bytes.Contains(r.Body, []byte(markAllow)) {
				first = &hh.reqs[i]
			}
		}
		if first == nil {
			t.Fatal("the http hook was not called")
		}
		if got, want := first.Headers["Authorization"], []string{"Bearer hosttest-token"}; !slices.Equal(got, want) {
			t.Errorf("Authorization = %q, want %q ($VAR interpolated when allowedEnvVars lists it)", got, want)
		}
		if got, want := first.Headers["X-Other"], []string{""}; !slices.Equal(got, want) {
			t.Errorf("X-Other = %q, want %q (a variable not in allowedEnvVars is replaced by nothing)", got, want)
		}
		var doc map[string]any
		if err := json.Unmarshal(first.Body, &doc); err != nil {
			t.Fatal(err)
		}
		body := normalize(first.Body, doc, dir, home)
		first.Body = json.RawMessage(bytes.TrimSpace(body))
		if first.Method != http.MethodPost || first.Path != "/hook/claude" {
			t.Errorf("request %s %s, want POST /hook/claude", first.Method, first.Path)
		}
		saveCaptures(t, hosttest.Claude, dir, home, map[string]*payload{"http-pretooluse-bash.json": {Raw: first.Body, Doc: doc}})
		if *capture {
			b, err := json.MarshalIndent(first, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(capturedDir(hosttest.Claude), "http-request-pretooluse-bash.json"), string(b)+"\n")
		}
	})
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		hook := fmt.Sprintf(`{"type": "http", "url": %q}`, closed.URL+"/hook/claude")
		dir, _, turn := run(t, hook, []hosttest.Call{bash(command(markAllow))})
		checkResults(t, hosttest.Claude, dir, turn, []expect{{mark: markAllow, ran: true, says: "ran-" + markAllow}})
	})
	// 2.1.197 ignores "onFailure": the hook still answers (the settings
	// file and the hook are kept) but a refused connection does not block.
	t.Run("onFailure", func(t *testing.T) {
		t.Parallel()
		live := fmt.Sprintf(`{"type": "http", "url": %q, "onFailure": "block"}`, srv.URL+"/hook/claude")
		dir, _, turn := run(t, live, []hosttest.Call{bash(command(markDeny))})
		checkResults(t, hosttest.Claude, dir, turn, []expect{{mark: markDeny, says: reasonDeny, isError: true}})
		refused := fmt.Sprintf(`{"type": "http", "url": %q, "onFailure": "block"}`, closed.URL+"/hook/claude")
		dir, _, turn = run(t, refused, []hosttest.Call{bash(command(markAllow))})
		checkResults(t, hosttest.Claude, dir, turn, []expect{{mark: markAllow, ran: true, says: "ran-" + markAllow}})
	})
}

// TestHookTimeout: a hook that outlives its timeout is killed and the call
// goes on as if the hook had failed: it runs, on every host. Airlock's hook
// must answer before the host's timeout (an approval that waits longer than
// the timeout needs the host's timeout raised). The hook sleeps past the
// turn's own deadline, so a turn that ends with the call run is one whose
// host gave up on the hook: no wall-clock bound on a loaded machine.
func TestHookTimeout(t *testing.T) {
	slow := func(t *testing.T) string {
		script := filepath.Join(t.TempDir(), "slow.sh")
		// exec: a child left holding the hook's stdout keeps Gemini CLI
		// waiting past the timeout until the pipe closes.
		writeFile(t, script, "#!/bin/sh\ncat >/dev/null\nexec sleep 300\n")
		if err := os.Chmod(script, 0o755); err != nil {
			t.Fatal(err)
		}
		return script
	}
	for _, tc := range []struct {
		host     string
		settings func(dir, home, script string)
		run      func(context.Context, hosttest.Options) (*hosttest.Turn, error)
		call     hosttest.Call
	}{
		{hosttest.Claude, func(dir, home, script string) {
			writeFile(t, filepath.Join(dir, ".claude", "settings.json"), fmt.Sprintf(`{"permissions": {"allow": ["Bash"]}, "hooks": {
  "PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": %q, "timeout": 1}]}]}}`, script))
		}, hosttest.RunClaude, hosttest.Call{Tool: "Bash", Input: map[string]any{"command": command(markAllow)}}},
		{hosttest.Codex, func(dir, home, script string) {
			writeFile(t, filepath.Join(home, ".codex", "hooks.json"), fmt.Sprintf(`{"hooks": {
  "PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": %q, "timeout": 1}]}]}}`, script))
		}, hosttest.RunCodex, hosttest.Call{Tool: "exec_command", Input: map[string]any{"cmd": command(markAllow)}}},
		{hosttest.Gemini, func(dir, home, script string) {
			writeFile(t, filepath.Join(dir, ".gemini", "settings.json"), fmt.Sprintf(`{"hooks": {
  "BeforeTool": [{"matcher": ".*", "hooks": [{"type": "command", "command": %q, "timeout": 1000}]}]}}`, script))
		}, hosttest.RunGemini, hosttest.Call{Tool: "run_shell_command", Input: map[string]any{"command": command(markAllow)}}},
	} {
		t.Run(tc.host, func(t *testing.T) {
			t.Parallel()
			hosttest.Require(t, tc.host)
			dir, home := t.TempDir(), t.TempDir()
			tc.settings(dir, home, slow(t))
			turn, err := tc.run(turnContext(t), hosttest.Options{Dir: dir, Home: home, Calls: []hosttest.Call{tc.call}, TrustHooks: true})
			checkTurn(t, turn, err, 1)
			checkResults(t, tc.host, dir, turn, []expect{{mark: markAllow, ran: true, says: "ran-" + markAllow}})
		})
	}
}

// TestContextEndsTurn: when ctx ends the host and its process group are
// killed and the turn returns ctx's error.
func TestContextEndsTurn(t *testing.T) {
	t.Parallel()
	hosttest.Require(t, hosttest.Claude)
	dir, home := t.TempDir(), t.TempDir()
	script := filepath.Join(t.TempDir(), "hang.sh")
	writeFile(t, script, "#!/bin/sh\ncat >/dev/null\nsleep 60\n")
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, ".claude", "settings.json"), fmt.Sprintf(`{"hooks": {
  "PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": %q}]}]}}`, script))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	start := time.Now()
	_, err := hosttest.RunClaude(ctx, hosttest.Options{Dir: dir, Home: home,
		Calls: []hosttest.Call{{Tool: "Bash", Input: map[string]any{"command": "true"}}}})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("turn took %v after its deadline of 3s", d)
	}
}
