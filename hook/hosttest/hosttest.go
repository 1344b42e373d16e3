// Package hosttest runs one real turn of an agent host against a scripted
// model, so that hook tests exercise the hosts' real hook machinery.
//
// It is imported only by tests. The hosts (Claude Code, Codex, Gemini CLI)
// are the npm packages pinned in hook/testdata/hosts; install them with
// `cd hook/testdata/hosts && npm ci`. The model is a local HTTP server on
// 127.0.0.1: each turn makes the tool calls in Options.Calls, one per model
// turn, then ends with a short text answer. The caller writes the hook
// settings into Options.Dir (or Options.Home) beforehand; the harness writes
// only what the host needs to reach the scripted model.
package hosttest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Host names, as accepted by Require and Bin.
const (
	Claude = "claude"
	Codex  = "codex"
	Gemini = "gemini"
)

// FinalText is what the scripted model answers once every call has been made.
const FinalText = "hosttest: done"

// Options describe one turn.
type Options struct {
	// Dir is the project folder the host runs in. The caller has written the
	// hook settings there already (.claude/settings.json, .codex/hooks.json,
	// .gemini/settings.json).
	Dir string
	// Home is a scratch folder used as HOME. Codex's CODEX_HOME is Home/.codex
	// unless Env sets CODEX_HOME.
	Home string
	// Env holds extra environment variables (KEY=value), applied last, e.g.
	// AIRLOCK_SERVER, AIRLOCK_TOKEN or a PATH with the airlock binary's folder.
	Env []string
	// Prompt is the user's message; a default is used when empty.
	Prompt string
	// Calls are the tool calls the scripted model makes, one per model turn,
	// in order.
	Calls []Call
	// ExtraArgs are appended to the host's command line.
	ExtraArgs []string
	// TrustHooks passes --dangerously-bypass-hook-trust to Codex, which
	// otherwise skips hooks it has not been told to trust, silently.
	TrustHooks bool
	// CodexConfig is TOML appended to the config.toml the harness writes into
	// CODEX_HOME (e.g. approval_policy, or [hooks] tables).
	CodexConfig string
	// Stdin is the host's standard input; nil means /dev/null. Hosts given a
	// prompt on the command line must not wait on a terminal.
	Stdin io.Reader
}

// Call is one tool call made by the scripted model.
type Call struct {
	Tool  string // the host's tool name: Bash, exec_command, run_shell_command
	Input any    // the tool's arguments, marshalled to a JSON object
}

// Result is what the host sent back to the model for one call.
type Result struct {
	Tool    string // the call's tool name
	CallID  string // the call's id as the scripted model issued it
	Output  string // the tool result text
	IsError bool   // set when the host marks the result as an error (Claude Code)
	// Raw is the result exactly as the host sent it (a tool_result block,
	// a function_call_output item or a functionResponse part).
	Raw json.RawMessage
}

// Turn is what happened during one turn.
type Turn struct {
	Results  []Result // one per call the host answered, in order
	Stdout   string
	Stderr   string
	ExitCode int
	Requests int      // requests the scripted model received
	Log      []string // "METHOD /path" of every request, in order
}

// String describes a turn with the host's output, for t.Fatal.
func (t *Turn) String() string {
	return fmt.Sprintf("exit %d, %d requests %v, %d results\nstdout:\n%s\nstderr:\n%s",
		t.ExitCode, t.Requests, t.Log, len(t.Results), t.Stdout, t.Stderr)
}

// Bin returns the path of a host's executable: $AIRLOCK_HOSTS_BIN/<host> when
// that variable is set, else hook/testdata/hosts/node_modules/.bin/<host> under
// the module root. The file may not exist; see Require.
func Bin(host string) string {
	if dir := os.Getenv("AIRLOCK_HOSTS_BIN"); dir != "" {
		return filepath.Join(dir, host)
	}
	return filepath.Join(moduleRoot(), "hook", "testdata", "hosts", "node_modules", ".bin", host)
}

// moduleRoot is the folder holding go.mod above this source file.
func moduleRoot() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "."
	}
	dir := filepath.Dir(file)
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		up := filepath.Dir(d)
		if up == d {
			return filepath.Join(dir, "..", "..")
		}
		d = up
	}
}

// Require returns the path of a host's executable. When the host or Node.js
// is missing it fails the test under CI=true and skips it otherwise.
func Require(t testing.TB, host string) string {
	t.Helper()
	switch host {
	case Claude, Codex, Gemini:
	default:
		t.Fatalf("hosttest: unknown host %q", host)
	}
	missing := func(what string) {
		t.Helper()
		msg := fmt.Sprintf("hosttest: %s; install the hosts with: cd hook/testdata/hosts && npm ci", what)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if _, err := exec.LookPath("node"); err != nil {
		missing("node is not on PATH")
	}
	bin := Bin(host)
	if _, err := os.Stat(bin); err != nil {
		missing(fmt.Sprintf("%s not found at %s", host, bin))
	}
	return bin
}

// request is one request the scripted model received.
type request struct {
	Method, Path string
	Body         []byte
}

// model is a scripted model server. answer writes the reply to one request.
type model struct {
	srv *httptest.Server

	mu       sync.Mutex
	requests []request
	results  []Result // the longest list of results seen in one request
}

func newModel(answer func(m *model, w http.ResponseWriter, r *http.Request, body []byte)) *model {
	m := &model{}
	m.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(http.MaxBytesReader(w, r.Body, 64<<20))
		if r.Header.Get("Content-Encoding") == "zstd" || r.Header.Get("Content-Encoding") == "gzip" {
			http.Error(w, "compressed bodies are not supported", http.StatusUnsupportedMediaType)
			return
		}
		m.mu.Lock()
		m.requests = append(m.requests, request{r.Method, r.URL.RequestURI(), body})
		m.mu.Unlock()
		answer(m, w, r, body)
	}))
	return m
}

// saw records the results found in a request; the longest list wins, since
// each request carries the whole conversation so far.
func (m *model) saw(results []Result) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(results) >= len(m.results) {
		m.results = results
	}
}

func (m *model) fill(turn *Turn) {
	m.mu.Lock()
	defer m.mu.Unlock()
	turn.Requests = len(m.requests)
	for _, r := range m.requests {
		turn.Log = append(turn.Log, r.Method+" "+r.Path)
	}
	turn.Results = m.results
}

// callID is the id the scripted model gives its n-th call.
func callID(prefix string, n int) string { return fmt.Sprintf("%s%d", prefix, n+1) }

// inputJSON marshals a call's input, {} when nil.
func inputJSON(c Call) []byte {
	if c.Input == nil {
		return []byte("{}")
	}
	b, err := json.Marshal(c.Input)
	if err != nil {
		panic(fmt.Sprintf("hosttest: marshal input of %s: %v", c.Tool, err))
	}
	return b
}

// sse writes one server-sent event; event may be empty.
func sse(w http.ResponseWriter, event string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		panic(err)
	}
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func startSSE(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// baseEnv is the environment every host starts from: nothing of the user's
// environment but PATH and locale, so that no real credential or config leaks
// into a turn.
func baseEnv(home string) []string {
	env := []string{"HOME=" + home, "USER=hosttest", "LANG=C.UTF-8", "TERM=dumb", "NO_COLOR=1", "CI=true"}
	for _, k := range []string{"PATH", "TMPDIR", "SYSTEMROOT"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

func check(opts *Options) error {
	if opts.Dir == "" || opts.Home == "" {
		return errors.New("hosttest: Options.Dir and Options.Home are required")
	}
	if opts.Prompt == "" {
		opts.Prompt = "Run the tool calls you were scripted to make."
	}
	return nil
}

// run starts bin with args in dir and waits for it, killing its whole process
// group when ctx ends.
func run(ctx context.Context, bin string, args []string, dir string, env []string, stdin io.Reader, turn *Turn) error {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	if cmd.Process != nil {
		// Hooks and tools may leave children behind; end them with the host.
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	turn.Stdout, turn.Stderr = stdout.String(), stderr.String()
	turn.ExitCode = -1
	if cmd.ProcessState != nil {
		turn.ExitCode = cmd.ProcessState.ExitCode()
	}
	if ctx.Err() != nil {
		return fmt.Errorf("hosttest: %s: %w", filepath.Base(bin), ctx.Err())
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return fmt.Errorf("hosttest: run %s: %w", filepath.Base(bin), err)
	}
	return nil
}

// joinText joins the text parts of a tool result.
func joinText(parts []string) string { return strings.Join(parts, "") }
