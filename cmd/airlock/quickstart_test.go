package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/hook/hosttest"
)

// The quick starts are run from their Markdown, as a user pastes them: each
// fenced block that a <!-- quickstart NAME … --> comment precedes runs in
// bash, its commands as written, in a fresh working directory with a fresh
// HOME and the built binaries beside it (as `go build -o . ./cmd/...`
// leaves them). A doc that drifts from the code fails here.
//
// The comment says how a person runs the block (it is invisible on the
// rendered page):
//
//	term=T        the terminal it is pasted into (default "1"): what its
//	              export lines set stays for the next block of that terminal
//	bg=NAME       it keeps running (a server, a check that waits for a
//	              person); until=RE waits for its output to match first
//	wait=NAME     the block is what NAME printed when it ended (its lines
//	              are only comments of what to expect)
//	watch=NAME    the block is what NAME, still running, prints: its
//	              expect= are waited for
//	fill=TEXT:VAR the doc's abbreviation TEXT (airlock_…, 01a2…) stands for
//	              what VAR captured: the user pastes their own value
//	capture=VAR:RE  VAR is RE's first group in the block's output
//	expect=RE     the output matches RE; exit=N its exit code (default 0)
//	skip=WHY      it is not run (WHY says where it is exercised instead)
//	cwd=repo      it is pasted in the clone of Airlock (go build ./cmd/...)
//
// Each quick start's server listens where its doc says, unless that port is
// taken on this machine: then on a free one, named to every command with
// AIRLOCK_SERVER and to serve with AIRLOCK_LISTEN, and written for
// 127.0.0.1:8080 where a command names it, as the README tells a user
// whose server listens elsewhere.
var quickstarts = []struct {
	name, file string
	// then is what the person does after the doc's blocks (runs the agent).
	then func(t *testing.T, r *quickstartRun)
}{
	{"readme", "../../README.md", nil},
	{"hosts", "../../docs/HOSTS.md", claudeAfterQuickstart},
	{"notifications", "../../docs/NOTIFICATIONS.md", nil},
	{"mcp", "../../docs/MCP.md", nil},
}

func TestQuickstarts(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the built binaries through bash")
	}
	for _, qs := range quickstarts {
		t.Run(qs.name, func(t *testing.T) {
			blocks, err := quickstartBlocks(qs.file, qs.name)
			if err != nil {
				t.Fatal(err)
			}
			if len(blocks) == 0 {
				t.Fatalf("%s has no <!-- quickstart %s … --> blocks", qs.file, qs.name)
			}
			r := newQuickstartRun(t)
			r.run(t, blocks)
			if qs.then != nil {
				qs.then(t, r)
			}
		})
	}
}

// qsBlock is one fenced block of a quick start and how it is run.
type qsBlock struct {
	file        string
	line        int // of the fence
	text        string
	term, bg    string
	wait, until string
	watch       string
	inRepo      bool
	fills       [][2]string // TEXT, VAR
	captures    [][2]string // VAR, RE
	expects     []string
	exit        int
	skip        string
}

func (b qsBlock) where() string { return fmt.Sprintf("%s:%d", filepath.Base(b.file), b.line) }

var qsComment = regexp.MustCompile(`^<!--\s*quickstart\s+(\S+)\s*(.*?)\s*-->\s*$`)

// quickstartBlocks reads the blocks of quick start name from file.
func quickstartBlocks(file, name string) ([]qsBlock, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(data), "\n")
	var out []qsBlock
	for i := 0; i < len(lines); i++ {
		m := qsComment.FindStringSubmatch(strings.TrimSpace(lines[i]))
		if m == nil || m[1] != name {
			continue
		}
		b := qsBlock{file: file, term: "1"}
		fields, err := qsFields(m[2])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", file, i+1, err)
		}
		for _, f := range fields {
			k, v, _ := strings.Cut(f, "=")
			switch k {
			case "term":
				b.term = v
			case "bg":
				b.bg = v
			case "wait":
				b.wait = v
			case "watch":
				b.watch = v
			case "until":
				b.until = v
			case "fill", "capture":
				x, y, ok := strings.Cut(v, ":")
				if !ok {
					return nil, fmt.Errorf("%s:%d: %s=%q: want %s=A:B", file, i+1, k, v, k)
				}
				if k == "fill" {
					b.fills = append(b.fills, [2]string{x, y})
				} else {
					b.captures = append(b.captures, [2]string{x, y})
				}
			case "expect":
				b.expects = append(b.expects, v)
			case "exit":
				if b.exit, err = strconv.Atoi(v); err != nil {
					return nil, fmt.Errorf("%s:%d: exit=%q: %v", file, i+1, v, err)
				}
			case "skip":
				b.skip = v
			case "cwd":
				if v != "repo" {
					return nil, fmt.Errorf("%s:%d: cwd=%q: only cwd=repo is known", file, i+1, v)
				}
				b.inRepo = true
			default:
				return nil, fmt.Errorf("%s:%d: unknown quickstart field %q", file, i+1, k)
			}
		}
		j := i + 1
		for j < len(lines) && strings.TrimSpace(lines[j]) == "" {
			j++
		}
		if j == len(lines) || !strings.HasPrefix(strings.TrimSpace(lines[j]), "```") {
			return nil, fmt.Errorf("%s:%d: a quickstart comment must be followed by a fenced block", file, i+1)
		}
		b.line = j + 1
		k := j + 1
		for k < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[k]), "```") {
			k++
		}
		b.text = strings.Join(lines[j+1:k], "\n")
		out = append(out, b)
		i = k
	}
	return out, nil
}

// qsFields splits a comment's fields at spaces; "double quotes" keep one.
func qsFields(s string) ([]string, error) {
	var out []string
	var b strings.Builder
	quoted, any := false, false
	for _, r := range s {
		switch {
		case r == '"':
			quoted, any = !quoted, true
		case r == ' ' && !quoted:
			if any {
				out = append(out, b.String())
				b.Reset()
				any = false
			}
		default:
			b.WriteRune(r)
			any = true
		}
	}
	if quoted {
		return nil, fmt.Errorf("unclosed quote in %q", s)
	}
	if any {
		out = append(out, b.String())
	}
	return out, nil
}

// quickstartRun is one quick start's machine: its directory, home,
// terminals, background processes and captured values.
type quickstartRun struct {
	dir, home string
	env       []string
	listen    string // where the server listens when 127.0.0.1:8080 is taken
	ended     []int  // the process groups of the blocks run in the foreground
	vars      map[string]string
	bgs       map[string]*qsProcess
}

type qsProcess struct {
	cmd  *exec.Cmd
	out  *qsBuffer
	done chan struct{} // closed when it has ended, with err
	err  error
}

// qsBuffer is output that is read while it is written.
type qsBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (q *qsBuffer) Write(p []byte) (int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.b.Write(p)
}

func (q *qsBuffer) String() string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.b.String()
}

func newQuickstartRun(t *testing.T) *quickstartRun {
	bin := binaries(t)
	root := t.TempDir()
	r := &quickstartRun{dir: filepath.Join(root, "work"), home: filepath.Join(root, "home"),
		vars: map[string]string{}, bgs: map[string]*qsProcess{}}
	for _, d := range []string{r.dir, r.home} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"airlock", "airlock-hook"} {
		data, err := os.ReadFile(filepath.Join(bin, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(r.dir, name), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A fresh user: no Airlock variables, a new HOME, the machine's PATH.
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(k, "AIRLOCK_") && k != "HOME" && k != "PATH" &&
			!strings.HasPrefix(k, "XDG_") {
			r.env = append(r.env, kv)
		}
	}
	// Go keeps its module and build caches where it did (a fresh HOME
	// would move them), and the MCP servers and client the docs run with
	// npx are the ones mcp/testdata/servers pins (npm ci there), found
	// in the working directory's node_modules as npx finds a project's.
	for _, k := range []string{"GOPATH", "GOMODCACHE", "GOCACHE", "GOFLAGS"} {
		out, err := exec.Command("go", "env", k).Output()
		if err != nil {
			t.Fatal(err)
		}
		r.env = append(r.env, k+"="+strings.TrimSpace(string(out)))
	}
	mods, err := filepath.Abs("../../mcp/testdata/servers/node_modules")
	if err != nil {
		t.Fatal(err)
	}
	switch _, err := os.Stat(mods); {
	case err == nil:
		if err := os.Symlink(mods, filepath.Join(r.dir, "node_modules")); err != nil {
			t.Fatal(err)
		}
	case os.Getenv("CI") == "true":
		t.Fatalf("the pinned MCP servers and client are missing (npm ci in mcp/testdata/servers): %v", err)
	}
	// The binaries are on PATH, as go install leaves them, and beside
	// the work (./airlock), as go build -o . does.
	r.env = append(r.env, "HOME="+r.home, "PATH="+r.dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	if l, err := net.Listen("tcp", "127.0.0.1:8080"); err == nil {
		l.Close()
	} else {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		r.env = append(r.env, "AIRLOCK_SERVER=http://"+addr, "AIRLOCK_LISTEN="+addr)
		r.listen = addr
		t.Logf("127.0.0.1:8080 is taken here: the server listens on %s", addr)
	}
	t.Cleanup(func() {
		// As a person closes each terminal: what a block left running in
		// the background ends; ^C to each that still runs.
		for _, pgid := range r.ended {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
		for _, p := range r.bgs {
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGINT)
		}
		for _, p := range r.bgs {
			select {
			case <-p.done:
			case <-time.After(10 * time.Second):
				_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
				<-p.done
			}
		}
	})
	return r
}

const qsTimeout = 60 * time.Second

func (r *quickstartRun) run(t *testing.T, blocks []qsBlock) {
	for _, b := range blocks {
		if b.skip != "" {
			t.Logf("%s: not run here: %s", b.where(), b.skip)
			continue
		}
		script, err := r.script(b)
		if err != nil {
			t.Fatalf("%s: %v", b.where(), err)
		}
		var out string
		code := 0
		switch {
		case b.wait != "":
			p := r.bgs[b.wait]
			if p == nil {
				t.Fatalf("%s: wait=%s: no such background block", b.where(), b.wait)
			}
			select {
			case <-p.done:
				code = exitCode(p.err)
			case <-time.After(qsTimeout):
				t.Fatalf("%s: %s has not ended after %s:\n%s", b.where(), b.wait, qsTimeout, p.out)
			}
			out = p.out.String()
		case b.watch != "":
			p := r.bgs[b.watch]
			if p == nil {
				t.Fatalf("%s: watch=%s: no such background block", b.where(), b.watch)
			}
			out = r.watchFor(t, b, p)
		case b.bg != "":
			p := r.start(t, b, script)
			r.bgs[b.bg] = p
			if b.until != "" {
				out = r.until(t, b, p)
			}
		default:
			ctx, cancel := context.WithTimeout(t.Context(), qsTimeout)
			cmd := r.command(ctx, script)
			if b.inRepo {
				cmd.Dir = repoRoot(t)
			}
			raw, err := cmd.CombinedOutput()
			cancel()
			out, code = string(raw), exitCode(err)
			if errors.Is(err, exec.ErrWaitDelay) {
				// bash ended; what it left in the background kept the output.
				code = cmd.ProcessState.ExitCode()
			}
			r.ended = append(r.ended, cmd.Process.Pid)
		}
		t.Logf("%s (terminal %s):\n%s\n%s", b.where(), b.term, strings.TrimSpace(b.text), qsIndent(out))
		if b.bg == "" && b.watch == "" && code != b.exit {
			t.Fatalf("%s: exit code %d, want %d:\n%s", b.where(), code, b.exit, out)
		}
		for _, re := range b.expects {
			if !regexp.MustCompile(re).MatchString(out) {
				t.Fatalf("%s: output does not match %q:\n%s", b.where(), re, out)
			}
		}
		r.capture(t, b, out)
	}
}

// script is the block as bash runs it in its terminal: the terminal's
// exports before, and after, kept for its next block.
func (r *quickstartRun) script(b qsBlock) (string, error) {
	text := b.text
	for _, f := range b.fills {
		v, ok := r.vars[f[1]]
		if !ok {
			return "", fmt.Errorf("fill=%s:%s: nothing captured as %s yet", f[0], f[1], f[1])
		}
		if !strings.Contains(text, f[0]) {
			return "", fmt.Errorf("fill=%s:%s: the block has no %q", f[0], f[1], f[0])
		}
		text = strings.ReplaceAll(text, f[0], v)
	}
	if r.listen != "" {
		text = strings.ReplaceAll(text, "127.0.0.1:8080", r.listen)
	}
	env := filepath.Join(r.dir, ".term-"+b.term)
	var s strings.Builder
	fmt.Fprintf(&s, "set -e\n[ -f %q ] && . %q\n", env, env)
	s.WriteString(text)
	if b.bg == "" {
		fmt.Fprintf(&s, "\nexport -p > %q\n", env)
	}
	return s.String(), nil
}

func (r *quickstartRun) command(ctx context.Context, script string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir, cmd.Env = r.dir, r.env
	// Its own process group, so that the whole terminal is stopped: bash
	// and what it started.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// What a block left running in the background (cmd &) keeps the
	// output open; its terminal is read until bash ends.
	cmd.WaitDelay = time.Second
	return cmd
}

func (r *quickstartRun) start(t *testing.T, b qsBlock, script string) *qsProcess {
	p := &qsProcess{cmd: r.command(context.Background(), script), out: &qsBuffer{}, done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("%s: %v", b.where(), err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	return p
}

// until waits for a background block's output to match its until=.
func (r *quickstartRun) until(t *testing.T, b qsBlock, p *qsProcess) string {
	return r.waitOutput(t, b, p, []string{b.until})
}

// watchFor waits for a background block's output to match every expect=
// of block b.
func (r *quickstartRun) watchFor(t *testing.T, b qsBlock, p *qsProcess) string {
	return r.waitOutput(t, b, p, b.expects)
}

func (r *quickstartRun) waitOutput(t *testing.T, b qsBlock, p *qsProcess, res []string) string {
	matches := func(out string) bool {
		for _, re := range res {
			if !regexp.MustCompile(re).MatchString(out) {
				return false
			}
		}
		return true
	}
	deadline := time.Now().Add(qsTimeout)
	for {
		out := p.out.String()
		if matches(out) {
			return out
		}
		select {
		case <-p.done:
			t.Fatalf("%s: ended (%v) before its output matched %q:\n%s", b.where(), p.err, res, p.out)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: output has not matched %q after %s:\n%s", b.where(), res, qsTimeout, out)
		}
	}
}

func (r *quickstartRun) capture(t *testing.T, b qsBlock, out string) {
	for _, c := range b.captures {
		m := regexp.MustCompile(c[1]).FindStringSubmatch(out)
		if len(m) < 2 {
			t.Fatalf("%s: capture=%s: %q is not in the output:\n%s", b.where(), c[0], c[1], out)
		}
		r.vars[c[0]] = m[1]
	}
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}

func qsIndent(s string) string {
	var b strings.Builder
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		b.WriteString("\t| " + sc.Text() + "\n")
	}
	return b.String()
}

// claudeAfterQuickstart runs the agent as HOSTS' quick start ends: "Then
// run the agent as usual." A real Claude Code (hook/testdata/hosts), driven
// by a scripted model, in the quick start's HOME, where the doc's install
// wrote the hook: a read runs, a destructive command is refused until a
// person decides.
func claudeAfterQuickstart(t *testing.T, r *quickstartRun) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	turn, err := hosttest.RunClaude(ctx, hosttest.Options{Dir: r.dir, Home: r.home, Calls: []hosttest.Call{
		{Tool: "Bash", Input: map[string]any{"command": "ls"}},
		{Tool: "Bash", Input: map[string]any{"command": "rm -rf build"}},
	}})
	if err != nil {
		t.Fatalf("claude: %v\n%s", err, turn)
	}
	if len(turn.Results) != 2 {
		t.Fatalf("claude answered %d of 2 calls\n%s", len(turn.Results), turn)
	}
	t.Logf("claude ran ls: %q; rm -rf build: %q", turn.Results[0].Output, turn.Results[1].Output)
	if !strings.Contains(turn.Results[0].Output, "airlock-hook") {
		t.Errorf("ls through the gate did not run: %q", turn.Results[0].Output)
	}
	if !strings.Contains(turn.Results[1].Output, "AIRLOCK-") {
		t.Errorf("rm -rf build was not stopped by Airlock: %q", turn.Results[1].Output)
	}
}

// repoRoot is the clone this test runs in.
func repoRoot(t *testing.T) string {
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}
