package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"mvdan.cc/sh/v3/syntax"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/hook"
	"github.com/airlock-dev/airlock/hook/relay"
)

func newHookCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hook {claude-code|codex|gemini|install|uninstall|doctor}",
		Short: "Gate Claude Code, Codex and Gemini CLI: the hook program and its installer",
		Long: `Hook makes Airlock the program an agent host runs before and after every
tool call. 'airlock hook install <host>' writes the host's settings; the host
then runs 'airlock-hook <host>' — a small program built beside airlock that
starts fast — or 'airlock hook <host>', the same answers, with each call's
JSON on standard input, and
Airlock answers in the host's terms: allowed, refused with the stable code
and what to do, or — when a person must decide — held until they do in the
inbox or with 'airlock approvals', up to the hook's timeout.

The hook fails closed: a server it cannot reach, a token it refuses, a
payload it cannot read or an event it does not know all block the call
(exit code 2 and a one-line reason), whatever the host does on a hook error.

Hosts: claude-code (Claude Code), codex (OpenAI Codex CLI), gemini (Gemini
CLI). See docs/HOSTS.md.`,
		Args: argsNone(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageError("%s needs a host or a subcommand", cmd.CommandPath())
		},
	}
	for _, name := range hook.HostNames() {
		cmd.AddCommand(newHookRunCmd(name))
	}
	cmd.AddCommand(newHookInstallCmd(), newHookUninstallCmd(), newHookDoctorCmd())
	return cmd
}

func newHookRunCmd(name string) *cobra.Command {
	host, _ := hook.Lookup(name)
	s := hook.SettingsOf(host)
	var (
		timeout time.Duration
		askAt   string
	)
	cmd := &cobra.Command{
		Use:   name,
		Short: "Answer one " + name + " hook call (the host runs this; its JSON on standard input)",
		Long: `Reads one hook call of ` + name + ` on standard input, asks the Airlock server
(--server or $AIRLOCK_SERVER, the agent token in $AIRLOCK_TOKEN or
--token-file) and answers in the host's terms on standard output. When a
person must decide, the call is held until they do, or until --timeout (the
host's timeout for this hook) nearly runs out: then the call is refused with
AIRLOCK-PENDING and the request stays pending — retry the same call once it
is approved and it runs, once.

Every failure blocks the call: exit code 2 and a one-line reason on
standard error.`,
		Args: argsNone(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			r := runHook(cmd, host, timeout, askAt)
			if r.Stdout != "" {
				fmt.Fprint(cmd.OutOrStdout(), r.Stdout)
			}
			if r.Stderr != "" {
				fmt.Fprintln(cmd.ErrOrStderr(), r.Stderr)
			}
			if r.Exit != 0 {
				return &exitError{code: r.Exit}
			}
			return nil
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", s.DefaultTimeout, "the host's timeout for this hook: an ask is held until shortly before it")
	if name == "claude-code" {
		cmd.Flags().StringVar(&askAt, "ask-at", "airlock", "where an ask goes: airlock (the call is held while Airlock's reviewers decide) or host (Claude Code's own permission prompt; the record says the user consented there)")
	}
	// A hook must answer in the host's terms whatever went wrong, a flag
	// included: exit 2 with one line, never cobra's usage text.
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &exitError{code: 2, err: errors.New(hook.Fail(airlock.Errorf(airlock.EINVALID, "%v", err)).Stderr)}
	})
	return cmd
}

// runHook answers one hook call; it never returns a reply that lets a call
// run unless the server said so.
func runHook(cmd *cobra.Command, host hook.Host, timeout time.Duration, askAt string) hook.Reply {
	payload, err := io.ReadAll(io.LimitReader(cmd.InOrStdin(), hook.MaxPayload+1))
	if err != nil {
		return hook.Fail(airlock.Errorf(airlock.EINVALID, "read the hook payload: %v", err))
	}
	if _, err := host.Parse(payload); err != nil {
		return hook.Fail(err)
	}
	if askAt != "" && askAt != "airlock" && askAt != "host" {
		return hook.Fail(airlock.Errorf(airlock.EINVALID, "--ask-at %q: want airlock or host", askAt))
	}
	c, err := newClient(cmd)
	if err != nil {
		return hook.Fail(airlock.Errorf(airlock.EUNAUTHORIZED, "%s", firstLine(err)))
	}
	return (&relay.Client{URL: c.URL, Token: c.Token}).Run(cmd.Context(), host.Name(), payload, timeout, askAt)
}

// firstLine is an error's first line, without the "airlock: " prefix.
func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return strings.TrimPrefix(s, "airlock: ")
}

// hookTarget is where a host's settings live for one install.
type hookTarget struct {
	host  hook.Host
	s     hook.Settings
	scope string
	dir   string // the project, for project and local scopes
	path  string // the settings file
}

func addScopeFlags(cmd *cobra.Command, scope, dir *string) {
	cmd.Flags().StringVar(scope, "scope", "user", "user (your home: every project), project (the project's shared settings, committed) or local (Claude Code: the project's settings.local.json, not committed)")
	cmd.Flags().StringVar(dir, "dir", ".", "the project folder, for --scope project or local")
}

func resolveTarget(name, scope, dir string) (hookTarget, error) {
	host, err := hook.Lookup(name)
	if err != nil {
		return hookTarget{}, usageError("%s", airlock.ErrorMessage(err))
	}
	t := hookTarget{host: host, s: hook.SettingsOf(host), scope: scope}
	switch scope {
	case "user":
		base := os.Getenv(t.s.DirEnv)
		if base == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return t, usageError("--scope user: %v", err)
			}
			base = filepath.Join(home, t.s.Dir)
		}
		t.path = filepath.Join(base, t.s.File)
	case "project", "local":
		abs, err := filepath.Abs(dir)
		if err != nil {
			return t, usageError("--dir %s: %v", dir, err)
		}
		t.dir = abs
		file := t.s.File
		if scope == "local" {
			if t.s.LocalFile == "" {
				return t, usageError("--scope local: %s has no per-person settings file; use --scope project or user", name)
			}
			file = t.s.LocalFile
		}
		t.path = filepath.Join(abs, t.s.Dir, file)
	default:
		return t, usageError("--scope %q: want user, project or local", scope)
	}
	return t, nil
}

func newHookInstallCmd() *cobra.Command {
	var (
		scope, dir, command, askAt string
		useHTTP                    bool
		timeout                    time.Duration
	)
	cmd := &cobra.Command{
		Use:   "install {claude-code|codex|gemini}",
		Short: "Install Airlock's hook in a host's settings",
		Long: `Install writes Airlock's hook into the host's settings, on every tool event
Airlock answers, merged into what is there: other hooks, other keys and
their order are kept, the file is backed up first, and installing twice
changes nothing.

The hook command carries --server and --token-file when you give them here;
otherwise it reads $AIRLOCK_SERVER and $AIRLOCK_TOKEN from the host's
environment when it runs. For --scope user and local the command names by
its absolute path the airlock-hook program beside this airlock (a host
starts the hook on every tool call, and airlock-hook starts in a fraction
of airlock's time), or this airlock where there is none; for --scope
project (a file a team commits) it is plain 'airlock hook', found on each
person's PATH. --command names either program instead.

Codex runs only hooks its user trusted: install records the trust of the
hooks it writes in Codex's config.toml, as Codex itself does.

--http (Claude Code only) installs hooks the host POSTs to the server's
/v1/hooks/claude-code, with the token from $AIRLOCK_TOKEN in the host's
environment: no process per tool call. Claude Code runs a call whose HTTP
hook could not be reached, so this path fails open while the server is
down; the command hook does not.`,
		Example: `  airlock token create --role agent --agent claude-laptop > ~/.config/airlock/claude.token
  airlock hook install claude-code --token-file ~/.config/airlock/claude.token
  airlock hook install codex --scope project --dir ~/src/app
  airlock hook install gemini --timeout 10m`,
		Args: argsExactly(1, "the host: claude-code, codex or gemini"),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := resolveTarget(args[0], scope, dir)
			if err != nil {
				return err
			}
			if timeout <= 0 {
				timeout = t.s.DefaultTimeout
			}
			e := hook.Entry{Timeout: timeout}
			switch {
			case askAt != "airlock" && askAt != "host":
				return usageError("--ask-at %q: want airlock or host", askAt)
			case askAt == "host" && t.host.Name() != "claude-code":
				return usageError("--ask-at host: only Claude Code's hooks can hand a call to its own prompt; %s would run it", t.host.Name())
			}
			if useHTTP {
				if t.host.Name() != "claude-code" {
					return usageError("--http: only Claude Code POSTs its hooks to a URL; %s runs a command", t.host.Name())
				}
				u, err := serverURL(cmd)
				if err != nil {
					return err
				}
				hold, _ := relay.Hold(timeout)
				e.URL = u + "/v1/hooks/" + t.host.Name() + "?hold=" + hold.String()
				if askAt == "host" {
					e.URL += "&ask=host"
				}
				e.Headers = map[string]string{"Authorization": "Bearer $" + envToken}
				e.AllowedEnvVars = []string{envToken}
			} else if e.Command, err = hookCommand(cmd, t, command, timeout, askAt); err != nil {
				return err
			}
			return installHook(cmd, t, e)
		},
	}
	addScopeFlags(cmd, &scope, &dir)
	cmd.Flags().StringVar(&command, "command", "", "the program the host runs: an airlock executable, or airlock-hook (default: the airlock-hook beside this airlock, else this airlock, by absolute path; 'airlock' for --scope project)")
	cmd.Flags().StringVar(&askAt, "ask-at", "airlock", "Claude Code: where an ask goes: airlock (held for Airlock's reviewers) or host (Claude Code's own permission prompt)")
	cmd.Flags().BoolVar(&useHTTP, "http", false, "Claude Code: POST hooks to the server instead of running a command")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "the host's timeout for each hook call; an ask is held until shortly before it (default: the host's, 10m for Claude Code and Codex, 1m for Gemini CLI)")
	return cmd
}

// hookCommand is the command line the host runs: the airlock-hook program
// where it sits beside this airlock (it starts in a few milliseconds: a
// host waits for it on every tool call), else `airlock hook <host>`.
func hookCommand(cmd *cobra.Command, t hookTarget, exe string, timeout time.Duration, askAt string) (string, error) {
	if exe == "" {
		exe = "airlock"
		if t.scope != "project" {
			p, err := os.Executable()
			if err != nil {
				return "", checkFailed(fmt.Errorf("airlock: find this executable: %v (give --command)", err))
			}
			if exe, err = filepath.Abs(p); err != nil {
				return "", checkFailed(fmt.Errorf("airlock: %v", err))
			}
			if fast := besideExe(exe, hook.FastProgram); fast != "" {
				exe = fast
			}
		}
	}
	words := []string{exe, "hook", t.host.Name()}
	if hook.IsFastProgram(exe) {
		words = []string{exe, t.host.Name()}
	}
	if timeout != t.s.DefaultTimeout {
		words = append(words, "--timeout", timeout.String())
	}
	if askAt == "host" {
		words = append(words, "--ask-at", "host")
	}
	if cmd.Flags().Changed("server") {
		u, err := serverURL(cmd)
		if err != nil {
			return "", err
		}
		words = append(words, "--server", u)
	}
	if f, _ := cmd.Flags().GetString("token-file"); f != "" {
		abs, err := filepath.Abs(f)
		if err != nil {
			return "", usageError("--token-file: %v", err)
		}
		if _, err := os.Stat(abs); err != nil {
			return "", usageError("--token-file: %v", err)
		}
		words = append(words, "--token-file", abs)
	}
	for i, w := range words {
		q, err := syntax.Quote(w, syntax.LangPOSIX)
		if err != nil {
			return "", usageError("%q cannot be written in a shell command: %v", w, err)
		}
		words[i] = q
	}
	return strings.Join(words, " "), nil
}

// besideExe is the executable called name in exe's folder, or "".
func besideExe(exe, name string) string {
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	p := filepath.Join(filepath.Dir(exe), name)
	if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() || (runtime.GOOS != "windows" && fi.Mode().Perm()&0o111 == 0) {
		return ""
	}
	return p
}

func installHook(cmd *cobra.Command, t hookTarget, e hook.Entry) error {
	out := cmd.OutOrStdout()
	old, err := readSettings(t.path)
	if err != nil {
		return err
	}
	text, changed, err := hook.Install(t.host, old, e)
	if err != nil {
		return usageError("%s:%s", t.path, airlock.ErrorMessage(err))
	}
	if changed {
		backup, err := writeSettings(t.path, old, text)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "installed Airlock's hook in %s on %s\n", t.path, strings.Join(t.s.Events, ", "))
		if backup != "" {
			fmt.Fprintf(out, "the previous settings are in %s\n", backup)
		}
	} else {
		fmt.Fprintf(out, "Airlock's hook is already installed in %s: nothing changed\n", t.path)
	}
	if err := trustHooks(cmd, t, text); err != nil {
		return err
	}
	fmt.Fprintf(out, "check it with: airlock hook doctor %s%s\n", t.host.Name(), scopeArgs(t))
	return nil
}

func scopeArgs(t hookTarget) string {
	switch t.scope {
	case "user":
		return ""
	}
	return " --scope " + t.scope + " --dir " + t.dir
}

func newHookUninstallCmd() *cobra.Command {
	var scope, dir string
	cmd := &cobra.Command{
		Use:   "uninstall {claude-code|codex|gemini}",
		Short: "Remove Airlock's hook from a host's settings",
		Long: `Uninstall removes exactly what install added: Airlock's hooks, and the groups
and event lists they leave empty. Everything else stays as it was; the file
is backed up first.`,
		Args: argsExactly(1, "the host: claude-code, codex or gemini"),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := resolveTarget(args[0], scope, dir)
			if err != nil {
				return err
			}
			old, err := readSettings(t.path)
			if err != nil {
				return err
			}
			text, changed, err := hook.Uninstall(t.host, old)
			if err != nil {
				return usageError("%s:%s", t.path, airlock.ErrorMessage(err))
			}
			if err := untrustHooks(cmd, t, old); err != nil {
				return err
			}
			if !changed {
				fmt.Fprintf(cmd.OutOrStdout(), "no Airlock hook in %s: nothing changed\n", t.path)
				return nil
			}
			backup, err := writeSettings(t.path, old, text)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "removed Airlock's hook from %s (the previous settings are in %s)\n", t.path, backup)
			return nil
		},
	}
	addScopeFlags(cmd, &scope, &dir)
	return cmd
}

// maxSettings bounds a settings file install reads.
const maxSettings = 16 << 20

func readSettings(path string) ([]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, checkFailed(fmt.Errorf("airlock: %v", err))
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSettings+1))
	switch {
	case err != nil:
		return nil, checkFailed(fmt.Errorf("airlock: read %s: %v", path, err))
	case len(b) > maxSettings:
		return nil, checkFailed(fmt.Errorf("airlock: %s is larger than %d bytes: not a settings file", path, maxSettings))
	}
	return b, nil
}

// writeSettings replaces a settings file atomically, keeping its mode, and
// returns where the previous text was backed up ("" for a new file).
func writeSettings(path string, old, text []byte) (string, error) {
	mode := os.FileMode(0o644)
	backup := ""
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
		backup = fmt.Sprintf("%s.airlock-%s.bak", path, time.Now().UTC().Format("20060102T150405.000000000Z"))
		if err := os.WriteFile(backup, old, mode); err != nil {
			return "", checkFailed(fmt.Errorf("airlock: back up %s: %v", path, err))
		}
	}
	if err := writeAtomic(path, text, mode); err != nil {
		return "", checkFailed(fmt.Errorf("airlock: write %s: %v", path, err))
	}
	return backup, nil
}

// writeAtomic writes a file whole or not at all.
func writeAtomic(path string, text []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(text); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

func newHookDoctorCmd() *cobra.Command {
	var scope, dir string
	cmd := &cobra.Command{
		Use:   "doctor {claude-code|codex|gemini}",
		Short: "Check that a host is gated: its settings, the server, the token, one test decision",
		Long: `Doctor checks, one result per line: that the host's settings hold Airlock's
hook on every event, that the command they run exists, that Codex trusts
it, that the server answers, that the token is an agent's, and that a
harmless test decision (a file read, explained: nothing is recorded) comes
back. It exits 1 when any check fails.`,
		Args: argsExactly(1, "the host: claude-code, codex or gemini"),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := resolveTarget(args[0], scope, dir)
			if err != nil {
				return err
			}
			if !doctor(cmd, t) {
				return &exitError{code: exitCheck}
			}
			return nil
		},
	}
	addScopeFlags(cmd, &scope, &dir)
	return cmd
}

// doctor prints one line per check and reports whether all passed.
func doctor(cmd *cobra.Command, t hookTarget) bool {
	out := cmd.OutOrStdout()
	ok := true
	line := func(pass bool, format string, args ...any) {
		mark := "ok  "
		if !pass {
			mark, ok = "FAIL", false
		}
		fmt.Fprintf(out, "%s %s\n", mark, fmt.Sprintf(format, args...))
	}
	text, err := readSettings(t.path)
	if err != nil {
		line(false, "settings: %s", firstLine(err))
		return false
	}
	found, err := hook.Installed(t.host, text)
	if err != nil {
		line(false, "settings: %s: %s", t.path, airlock.ErrorMessage(err))
		return false
	}
	var missing []string
	for _, ev := range t.s.Events {
		if len(found[ev]) == 0 {
			missing = append(missing, ev)
		}
	}
	if len(missing) > 0 {
		line(false, "settings: %s has no Airlock hook on %s: run airlock hook install %s%s", t.path, strings.Join(missing, ", "), t.host.Name(), scopeArgs(t))
		return false
	}
	line(true, "settings: %s has Airlock's hook on %s", t.path, strings.Join(t.s.Events, ", "))

	entry := installedEntry(found[t.s.Events[0]][0])
	if entry.Command != "" {
		exe, flags := commandWords(entry.Command)
		if p, err := exec.LookPath(exe); err != nil {
			line(false, "command: %s: %v", exe, err)
		} else {
			line(true, "command: %s", p)
		}
		for k, v := range flags {
			if cmd.Flags().Lookup(k) != nil && !cmd.Flags().Changed(k) {
				_ = cmd.Flags().Set(k, v) // check as the hook will run: its --server, its --token-file
			}
		}
	} else {
		line(true, "http: the host POSTs to %s", entry.URL)
	}
	if err := checkTrust(cmd, t, text); err != nil {
		line(false, "trust: %s", firstLine(err))
	} else if t.host.Name() == "codex" {
		line(true, "trust: Codex trusts the hooks (config.toml)")
	}

	c, err := newClient(cmd)
	if err != nil {
		line(false, "token: %s", firstLine(err))
		return false
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), 10*time.Second)
	defer cancel()
	tok, err := c.Whoami(ctx)
	if err != nil {
		line(false, "server: %s: %s: %s", c.URL, airlock.ErrorCode(err), airlock.ErrorMessage(err))
		return false
	}
	line(true, "server: %s answers", c.URL)
	if tok.Role != airlock.RoleAgent {
		line(false, "token: %s is not an agent token: hooks run as one agent (airlock token create --role agent --agent NAME)", tok.Subject())
		return false
	}
	line(true, "token: agent %s (token %s)", tok.Agent, tok.ID)
	a := doctorAction(t, tok.Agent)
	e, err := c.Explain(ctx, a)
	if err != nil {
		line(false, "test decision: %s: %s", airlock.ErrorCode(err), airlock.ErrorMessage(err))
		return false
	}
	line(true, "test decision: %s", e.Summary)
	return ok
}

// doctorAction is a harmless call of the host's: a read of its settings.
func doctorAction(t hookTarget, agent string) airlock.Action {
	tool, key := "Read", "file_path"
	switch t.host.Name() {
	case "codex":
		return airlock.Action{Agent: agent, Tool: "Bash", Args: airlock.MustArgs(map[string]any{"command": "ls"}), Cwd: filepath.Dir(t.path)}
	case "gemini":
		tool = "read_file"
	}
	return airlock.Action{Agent: agent, Tool: tool, Args: airlock.MustArgs(map[string]any{key: t.path}), Cwd: filepath.Dir(t.path)}
}

// installedEntry reads an installed hook's command or URL.
func installedEntry(raw []byte) hook.Entry {
	var h struct {
		Command string `json:"command"`
		URL     string `json:"url"`
	}
	_ = json.Unmarshal(raw, &h)
	return hook.Entry{Command: h.Command, URL: h.URL}
}

// commandWords splits an installed hook command: the executable and the
// values of its --flag VALUE pairs.
func commandWords(command string) (string, map[string]string) {
	f, err := syntax.NewParser().Parse(strings.NewReader(command), "")
	flags := map[string]string{}
	if err != nil || len(f.Stmts) != 1 {
		return command, flags
	}
	call, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 {
		return command, flags
	}
	var words []string
	for _, w := range call.Args {
		words = append(words, w.Lit())
		if w.Lit() == "" {
			words[len(words)-1] = unquote(w)
		}
	}
	for i := 1; i+1 < len(words); i++ {
		if k, ok := strings.CutPrefix(words[i], "--"); ok {
			flags[k] = words[i+1]
		}
	}
	return words[0], flags
}

// unquote reads a word made of quoted parts.
func unquote(w *syntax.Word) string {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					b.WriteString(l.Value)
				}
			}
		}
	}
	return b.String()
}
