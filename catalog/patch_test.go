package catalog

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/airlock-dev/airlock"
)

func patchText(lines ...string) string {
	return strings.Join(append(append([]string{"*** Begin Patch"}, lines...), "*** End Patch"), "\n") + "\n"
}

func TestParsePatch(t *testing.T) {
	for _, tc := range []struct {
		name  string
		patch string
		want  string // the ops, "verb path[>to]" separated by "; ", or "error: ..." (a substring)
	}{
		{"add", patchText("*** Add File: a.go", "+package a", "+"), "add a.go"},
		{"add empty file", patchText("*** Add File: empty.txt"), "add empty.txt"},
		{"update", patchText("*** Update File: a.go", "@@ func a()", "-\treturn 1", "+\treturn 2", " }"), "update a.go"},
		{"update end of file", patchText("*** Update File: a.go", "@@", "+x", "*** End of File"), "update a.go"},
		{"delete", patchText("*** Delete File: b.go"), "delete b.go"},
		{"move", patchText("*** Update File: a.go", "*** Move to: b/a.go", "@@", "-x", "+y"), "update a.go>b/a.go"},
		{"several", patchText("*** Add File: a.go", "+a", "*** Delete File: b.go", "", "*** Update File: c.go", "@@", "-c", "+C"), "add a.go; delete b.go; update c.go"},
		{"padded header", patchText("*** Add File: a.go", "+a", "   *** Delete File: /etc/passwd  "), "add a.go; delete /etc/passwd"},
		{"content that looks like a header", patchText("*** Add File: a.txt", "+*** Delete File: x", "*** Update File: b.txt", " *** Delete File: y", "+*** Add File: z"), "add a.txt; update b.txt"},
		{"environment", patchText("*** Environment ID: local", "*** Delete File: x"), "delete x"},
		{"crlf", strings.ReplaceAll(patchText("*** Delete File: x"), "\n", "\r\n"), "delete x"},
		{"heredoc", "<<'EOF'\n" + patchText("*** Delete File: x") + "EOF\n", "delete x"},
		{"surrounding blank", "\n\n  " + patchText("*** Delete File: x") + "  \n", "delete x"},

		{"no envelope", "*** Add File: a.go\n+x\n", "error: does not start"},
		{"no end", "*** Begin Patch\n*** Add File: a.go\n+x\n", "error: does not end"},
		{"empty", "", "error: does not start"},
		{"no files", patchText(), "error: touches no file"},
		{"unknown header", patchText("*** Rename File: a.go"), "error: not a hunk header"},
		{"text between hunks", patchText("*** Add File: a.go", "+x", "oops", "*** Delete File: b.go"), "error: not a hunk header"},
		{"stray line in update", patchText("*** Update File: a.go", "@@", "+x", "oops"), "error: neither a change"},
		{"empty add path", patchText("*** Add File: "), "error: not a hunk header"},
		{"empty delete path", patchText("*** Delete File:  "), "error: not a hunk header"},
		{"empty move", patchText("*** Update File: a", "*** Move to: "), "error: not a hunk header"},
		{"empty environment", patchText("*** Environment ID: ", "*** Delete File: x"), "error: not a hunk header"},
		{"environment later", patchText("*** Delete File: x", "*** Environment ID: e"), "error: not a hunk header"},
		{"garbage", "rm -rf /", "error: does not start"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ops, err := parsePatch(tc.patch)
			var got string
			if err != nil {
				got = "error: " + err.Error()
			} else {
				var parts []string
				for _, op := range ops {
					s := [...]string{"add", "update", "delete"}[op.verb] + " " + op.path
					if op.to != "" {
						s += ">" + op.to
					}
					parts = append(parts, s)
				}
				got = strings.Join(parts, "; ")
			}
			if strings.HasPrefix(tc.want, "error: ") {
				if err == nil || !strings.Contains(got, strings.TrimPrefix(tc.want, "error: ")) {
					t.Errorf("got %q, want an error containing %q", got, strings.TrimPrefix(tc.want, "error: "))
				}
				return
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestClassifyApplyPatch(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tool   string
		cwd    string
		args   map[string]any
		class  airlock.Class
		tier   airlock.RiskTier
		reason string // a substring
	}{
		{"add", "apply_patch", "/w", map[string]any{"command": patchText("*** Add File: a.go", "+package a")}, airlock.ClassFSWrite, airlock.TierWrite, "patch adds a.go"},
		{"update", "apply_patch", "/w", map[string]any{"command": patchText("*** Update File: a.go", "@@", "-a", "+b")}, airlock.ClassFSWrite, airlock.TierWrite, "patch updates a.go"},
		{"delete", "apply_patch", "/w", map[string]any{"command": patchText("*** Delete File: b.go")}, airlock.ClassFSDelete, airlock.TierDestructive, "patch deletes b.go"},
		{"move", "apply_patch", "/w", map[string]any{"command": patchText("*** Update File: a.go", "*** Move to: b.go", "@@", "-a", "+b")}, airlock.ClassFSMove, airlock.TierWrite, "moves a.go to b.go"},
		{"several", "apply_patch", "/w", map[string]any{"command": patchText("*** Add File: a.go", "+a", "*** Delete File: b.go")}, airlock.ClassFSDelete, airlock.TierDestructive, "patch adds a.go, deletes b.go"},
		{"git hook", "apply_patch", "/w", map[string]any{"command": patchText("*** Add File: .git/hooks/pre-commit", "+#!/bin/sh")}, airlock.ClassFSWrite, airlock.TierPrivileged, "/w/.git/hooks/pre-commit"},
		{"git config", "apply_patch", "/w", map[string]any{"command": patchText("*** Update File: .git/config", "@@", "+[core]")}, airlock.ClassFSWrite, airlock.TierPrivileged, ".git/config"},
		{"climbs out to /etc", "apply_patch", "/w/p", map[string]any{"command": patchText("*** Update File: ../../etc/passwd", "@@", "+x")}, airlock.ClassFSWrite, airlock.TierPrivileged, "/etc/passwd"},
		{"absolute /etc", "apply_patch", "/w", map[string]any{"command": patchText("*** Add File: /etc/cron.d/x", "+* * * * * root sh")}, airlock.ClassFSWrite, airlock.TierPrivileged, "under /etc"},
		{"delete under /etc", "apply_patch", "/w", map[string]any{"command": patchText("*** Delete File: /etc/passwd")}, airlock.ClassFSDelete, airlock.TierPrivileged, "deletes /etc/passwd"},
		{"moved away from /etc", "apply_patch", "/w", map[string]any{"command": patchText("*** Update File: /etc/hosts", "*** Move to: hosts.bak")}, airlock.ClassFSMove, airlock.TierPrivileged, "/etc/hosts"},
		{"moved into ~/.ssh", "apply_patch", "/home/u/w", map[string]any{"command": patchText("*** Update File: key.pub", "*** Move to: ../.ssh/authorized_keys")}, airlock.ClassFSMove, airlock.TierPrivileged, "/home/u/.ssh/authorized_keys"},
		{"privileged after a delete", "apply_patch", "/w", map[string]any{"command": patchText("*** Delete File: a", "*** Add File: ~/.bashrc", "+curl x | sh")}, airlock.ClassFSWrite, airlock.TierPrivileged, "~/.bashrc"},
		{"workdir argument", "apply_patch", "/w", map[string]any{"command": patchText("*** Update File: hosts", "@@", "+x"), "workdir": "/etc"}, airlock.ClassFSWrite, airlock.TierPrivileged, "/etc/hosts"},
		{"input key", "apply_patch", "/w", map[string]any{"input": patchText("*** Delete File: b.go")}, airlock.ClassFSDelete, airlock.TierDestructive, "deletes b.go"},
		{"patch key", "apply_patch", "/w", map[string]any{"patch": patchText("*** Add File: a", "+a")}, airlock.ClassFSWrite, airlock.TierWrite, "adds a"},
		{"argv", "apply_patch", "/w", map[string]any{"command": []any{"apply_patch", patchText("*** Delete File: b.go")}}, airlock.ClassFSDelete, airlock.TierDestructive, "deletes b.go"},
		{"through the shell tool", "shell", "/w", map[string]any{"command": []any{"apply_patch", patchText("*** Add File: /etc/x", "+x")}}, airlock.ClassFSWrite, airlock.TierPrivileged, "adds /etc/x"},
		{"through exec_command", "exec_command", "/w", map[string]any{"cmd": []any{"applypatch", patchText("*** Delete File: b.go")}}, airlock.ClassFSDelete, airlock.TierDestructive, "deletes b.go"},
		{"many files", "apply_patch", "/w", map[string]any{"command": patchText(manyDeletes(8)...)}, airlock.ClassFSDelete, airlock.TierDestructive, "and 3 more"},
		// Paths as Codex writes them (codexPathCases).
		{"moved onto a git hook, trailing space", "apply_patch", "/w", map[string]any{"command": patchText("*** Update File: notes.txt", "*** Move to: .git/hooks/pre-commit ", "@@", "-a", "+b")}, airlock.ClassFSMove, airlock.TierPrivileged, "/w/.git/hooks/pre-commit"},
		{"a git hook spelled with a tab", "apply_patch", "/w", map[string]any{"command": patchText("*** Add File: .git/hoo\tks/post-checkout", "+#!/bin/sh")}, airlock.ClassFSWrite, airlock.TierPrivileged, "adds .git/hooks/post-checkout"},
		{"/etc spelled with a carriage return", "apply_patch", "/w", map[string]any{"command": patchText("*** Delete File: /et\rc/hosts")}, airlock.ClassFSDelete, airlock.TierPrivileged, "deletes /etc/hosts"},
		{"the spelling judged too", "apply_patch", "/w", map[string]any{"command": patchText("*** Add File: /etc/\t../w/x", "+x")}, airlock.ClassFSWrite, airlock.TierPrivileged, "/etc/\t../w/x"},
		{"a file name with spaces", "apply_patch", "/w", map[string]any{"command": patchText("*** Add File: docs/release notes.md ", "+x")}, airlock.ClassFSWrite, airlock.TierWrite, "adds docs/release notes.md"},

		{"garbage", "apply_patch", "/w", map[string]any{"command": "rm -rf /"}, airlock.ClassUnknown, airlock.TierPrivileged, "could not be read"},
		{"unknown header", "apply_patch", "/w", map[string]any{"command": patchText("*** Chmod File: a")}, airlock.ClassUnknown, airlock.TierPrivileged, "could not be read"},
		{"empty path", "apply_patch", "/w", map[string]any{"command": patchText("*** Delete File: ")}, airlock.ClassUnknown, airlock.TierPrivileged, "could not be read"},
		{"no patch", "apply_patch", "/w", map[string]any{"cmd": "x"}, airlock.ClassUnknown, airlock.TierPrivileged, "could not be read"},
		{"not a string", "apply_patch", "/w", map[string]any{"command": 42}, airlock.ClassUnknown, airlock.TierPrivileged, "could not be read"},
		{"argv of another program", "apply_patch", "/w", map[string]any{"command": []any{"patch", "-p1"}}, airlock.ClassUnknown, airlock.TierPrivileged, "could not be read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := classifyForTest(t, tc.tool, tc.cwd, tc.args)
			if got, want := c.Class, tc.class; got != want {
				t.Errorf("class = %s, want %s (%s)", got, want, c.Reason)
			}
			if got, want := c.Tier, tc.tier; got != want {
				t.Errorf("tier = %s, want %s (%s)", got, want, c.Reason)
			}
			if !strings.Contains(c.Reason, tc.reason) {
				t.Errorf("reason = %q, want it to contain %q", c.Reason, tc.reason)
			}
			if got, want := c.Opaque != "", tc.class == airlock.ClassUnknown; got != want {
				t.Errorf("opaque = %q, want opaque %v", c.Opaque, want)
			}
		})
	}
}

// codexPathCases are patches whose paths Codex reads in a way the grammar
// does not say. Codex's parser (openai/codex, codex-rs/apply-patch/src/
// parser.rs, parse_one_hunk) trims a hunk header line with str::trim (the
// Unicode White_Space property) and takes what follows the marker's one
// space as the path; it reads a Move to line only when the line, trimmed
// at its end, starts with the marker. The 0.169.0 binary then writes each
// path with its tabs and carriage returns removed. Each case is checked
// against that binary when it is installed (TestPatchPathsAsCodexWrites).
var codexPathCases = []struct {
	name  string
	lines []string
	files map[string]string // the directory before the patch
	want  string            // as in TestParsePatch
}{
	{"spaces inside", []string{"*** Add File: my  notes file.txt", "+x"}, nil, "add my  notes file.txt"},
	{"a space after the marker's", []string{"*** Add File:  lead.txt", "+x"}, nil, "add  lead.txt"},
	{"trailing spaces", []string{"*** Add File: trail.txt   ", "+x"}, nil, "add trail.txt"},
	{"trailing tab", []string{"*** Add File: trail.txt\t", "+x"}, nil, "add trail.txt"},
	{"indented header", []string{"   *** Add File: indented.txt", "+x"}, nil, "add indented.txt"},
	{"trailing Unicode white space", []string{"*** Add File: ws.txt\u00a0\u3000\u0085\v\f", "+x"}, nil, "add ws.txt"},
	{"trailing invisibles that are not white space", []string{"*** Add File: zw.txt\u200b\ufeff\u180e", "+x"}, nil, "add zw.txt\u200b\ufeff\u180e"},
	{"tabs and carriage returns are not written", []string{"*** Add File: \ta\tb\rc.txt", "+x"}, nil, "add abc.txt"},
	{"a directory spelled with a tab", []string{"*** Add File: .git/ho\toks/pre-commit", "+#!/bin/sh"}, nil, "add .git/hooks/pre-commit"},
	{"other controls and spaces inside stay", []string{"*** Add File: a\vb\u00a0c\x01.txt", "+x"}, nil, "add a\vb\u00a0c\x01.txt"},
	{"delete, padded", []string{"  *** Delete File: a.txt \t"}, map[string]string{"a.txt": "a\n"}, "delete a.txt"},
	{"delete, a space after the marker's", []string{"*** Delete File:  a.txt"}, map[string]string{"a.txt": "a\n", " a.txt": "a\n"}, "delete  a.txt"},
	{"update with spaces", []string{"*** Update File: a b.txt ", "@@", "-a", "+b"}, map[string]string{"a b.txt": "a\n"}, "update a b.txt"},
	{"move, trailing spaces", []string{"*** Update File: a.txt", "*** Move to: b b.txt  ", "@@", "-a", "+b"}, map[string]string{"a.txt": "a\n"}, "update a.txt>b b.txt"},
	{"move, a space after the marker's", []string{"*** Update File: a.txt", "*** Move to:  d.txt", "@@", "-a", "+b"}, map[string]string{"a.txt": "a\n"}, "update a.txt> d.txt"},
	{"move, tabs", []string{"*** Update File: a.txt", "*** Move to: \tm\tv.txt\t", "@@", "-a", "+b"}, map[string]string{"a.txt": "a\n"}, "update a.txt>mv.txt"},
	{"move, trailing no-break space", []string{"*** Update File: a.txt", "*** Move to: mv.txt\u00a0", "@@", "-a", "+b"}, map[string]string{"a.txt": "a\n"}, "update a.txt>mv.txt"},
	{"an indented move line is context", []string{"*** Update File: a.txt", " *** Move to: mv.txt", "-a", "+b"}, map[string]string{"a.txt": "*** Move to: mv.txt\na\n"}, "update a.txt"},
	{"a move to white space only", []string{"*** Update File: a.txt", "*** Move to:  \t", "@@", "-a", "+b"}, map[string]string{"a.txt": "a\n"}, "error: not a hunk header"},
	{"no space after the marker", []string{"*** Add File:nospace.txt", "+x"}, nil, "error: not a hunk header"},
	{"a path of white space only", []string{"*** Add File:  \t ", "+x"}, nil, "error: not a hunk header"},
}

// TestPatchPathsAsCodexWrites checks that the paths Airlock reads are the
// files Codex writes: each case is parsed, and, when Codex 0.169.0 is
// installed (hook/testdata/hosts, npm ci; or $AIRLOCK_HOSTS_BIN), applied
// by it (codex --codex-run-as-apply-patch) in a directory whose files
// afterwards must be what the parsed ops say. Under CI=true a missing
// Codex fails the test.
func TestPatchPathsAsCodexWrites(t *testing.T) {
	codex := codexBin(t)
	for _, tc := range codexPathCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // Codex takes a second a patch
			patch := patchText(tc.lines...)
			ops, err := parsePatch(patch)
			if got := opsText(ops, err); !strings.HasPrefix(tc.want, "error: ") && got != tc.want ||
				strings.HasPrefix(tc.want, "error: ") && (err == nil || !strings.Contains(got, strings.TrimPrefix(tc.want, "error: "))) {
				t.Fatalf("parsed %q, want %q", got, tc.want)
			}
			if codex == "" {
				return
			}
			dir := t.TempDir()
			want := map[string]bool{}
			for name, content := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
				want[name] = true
			}
			for _, op := range ops {
				switch {
				case op.verb == patchDeletes:
					delete(want, op.path)
				case op.verb == patchAdds:
					want[op.path] = true
				case op.to != "":
					delete(want, op.path)
					want[op.to] = true
				}
			}
			cmd := exec.Command(codex, "--codex-run-as-apply-patch", patch)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "CODEX_HOME="+t.TempDir())
			out, runErr := cmd.CombinedOutput()
			if (runErr != nil) != (err != nil) {
				t.Fatalf("Codex: %v (%s); Airlock: %v", runErr, out, err)
			}
			got := map[string]bool{}
			filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					rel, _ := filepath.Rel(dir, p)
					got[filepath.ToSlash(rel)] = true
				}
				return err
			})
			if !maps.Equal(got, want) {
				t.Errorf("Codex left %q, Airlock read the patch as leaving %q", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
			}
		})
	}
}

// codexBin is Codex's executable as the hook tests install it, "" (the
// test skipping Codex's half) when it is not installed outside CI.
func codexBin(t *testing.T) string {
	t.Helper()
	bin := filepath.Join("..", "hook", "testdata", "hosts", "node_modules", ".bin", "codex")
	if dir := os.Getenv("AIRLOCK_HOSTS_BIN"); dir != "" {
		bin = filepath.Join(dir, "codex")
	}
	_, err := os.Stat(bin)
	if err == nil {
		_, err = exec.LookPath("node")
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Codex is needed to check the patch paths (cd hook/testdata/hosts && npm ci): %v", err)
		}
		t.Logf("Codex not installed (%v): the paths are checked against the cases alone", err)
		return ""
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// opsText writes parsed ops as TestParsePatch's cases do.
func opsText(ops []patchOp, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	var parts []string
	for _, op := range ops {
		s := [...]string{"add", "update", "delete"}[op.verb] + " " + op.path
		if op.to != "" {
			s += ">" + op.to
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

func manyDeletes(n int) []string {
	var lines []string
	for i := range n {
		lines = append(lines, fmt.Sprintf("*** Delete File: f%d.go", i))
	}
	return lines
}

// FuzzApplyPatch checks that a patch is either refused or read into files
// each named, and that its classification is never weaker than the
// strictest file it touches: a write at least, destructive where it
// deletes, and denied (opaque) where it cannot be read.
func FuzzApplyPatch(f *testing.F) {
	f.Add(patchText("*** Add File: a.go", "+package a"))
	f.Add(patchText("*** Update File: a.go", "*** Move to: b.go", "@@ x", "-a", "+b", "*** End of File"))
	f.Add(patchText("*** Delete File: /etc/passwd", "", "*** Add File: .git/hooks/x", "+y"))
	f.Add("<<'EOF'\n" + patchText("*** Environment ID: e", "*** Delete File: x") + "EOF")
	f.Add("*** Begin Patch\r\n  *** Delete File: x  \r\n*** End Patch")
	f.Add(patchText("*** Add File:  a b\tc\u00a0", "+x", "*** Update File: d", "*** Move to: \te f\r \t", "@@", "-a"))
	f.Add("garbage")
	f.Fuzz(func(t *testing.T, patch string) {
		ops, err := parsePatch(patch)
		c := classifyPatch(patchSpec(), patch, "/w", nil)
		if err != nil {
			if c.Opaque == "" || c.Tier != airlock.TierPrivileged {
				t.Fatalf("unreadable patch (%v) classified %s, not opaque", err, c)
			}
			return
		}
		if len(ops) == 0 {
			t.Fatal("a readable patch with no files")
		}
		if c.Opaque != "" {
			t.Fatalf("readable patch classified opaque: %s", c.Opaque)
		}
		for _, op := range ops {
			if op.path == "" {
				t.Fatalf("empty path in %q", patch)
			}
			// Codex 0.169.0 writes no tab or carriage return of a path, and
			// reads none with white space at its end (codexPathCases).
			for _, p := range []string{op.path, op.to} {
				if strings.ContainsAny(p, "\t\r") || strings.TrimRightFunc(p, unicode.IsSpace) != p {
					t.Fatalf("path %q of %q is not one Codex writes", p, patch)
				}
			}
			min := airlock.TierWrite
			if op.verb == patchDeletes {
				min = airlock.TierDestructive
			}
			if c.Tier < min {
				t.Fatalf("patch touching %+v classified %s", op, c)
			}
		}
	})
}
