package airlock

import (
	"fmt"
	"strings"
	"testing"
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
		{"empty move", patchText("*** Update File: a", "*** Move to: "), "error: empty path"},
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
		class  Class
		tier   RiskTier
		reason string // a substring
	}{
		{"add", "apply_patch", "/w", map[string]any{"command": patchText("*** Add File: a.go", "+package a")}, ClassFSWrite, TierWrite, "patch adds a.go"},
		{"update", "apply_patch", "/w", map[string]any{"command": patchText("*** Update File: a.go", "@@", "-a", "+b")}, ClassFSWrite, TierWrite, "patch updates a.go"},
		{"delete", "apply_patch", "/w", map[string]any{"command": patchText("*** Delete File: b.go")}, ClassFSDelete, TierDestructive, "patch deletes b.go"},
		{"move", "apply_patch", "/w", map[string]any{"command": patchText("*** Update File: a.go", "*** Move to: b.go", "@@", "-a", "+b")}, ClassFSMove, TierWrite, "moves a.go to b.go"},
		{"several", "apply_patch", "/w", map[string]any{"command": patchText("*** Add File: a.go", "+a", "*** Delete File: b.go")}, ClassFSDelete, TierDestructive, "patch adds a.go, deletes b.go"},
		{"git hook", "apply_patch", "/w", map[string]any{"command": patchText("*** Add File: .git/hooks/pre-commit", "+#!/bin/sh")}, ClassFSWrite, TierPrivileged, "/w/.git/hooks/pre-commit"},
		{"git config", "apply_patch", "/w", map[string]any{"command": patchText("*** Update File: .git/config", "@@", "+[core]")}, ClassFSWrite, TierPrivileged, ".git/config"},
		{"climbs out to /etc", "apply_patch", "/w/p", map[string]any{"command": patchText("*** Update File: ../../etc/passwd", "@@", "+x")}, ClassFSWrite, TierPrivileged, "/etc/passwd"},
		{"absolute /etc", "apply_patch", "/w", map[string]any{"command": patchText("*** Add File: /etc/cron.d/x", "+* * * * * root sh")}, ClassFSWrite, TierPrivileged, "under /etc"},
		{"delete under /etc", "apply_patch", "/w", map[string]any{"command": patchText("*** Delete File: /etc/passwd")}, ClassFSDelete, TierPrivileged, "deletes /etc/passwd"},
		{"moved away from /etc", "apply_patch", "/w", map[string]any{"command": patchText("*** Update File: /etc/hosts", "*** Move to: hosts.bak")}, ClassFSMove, TierPrivileged, "/etc/hosts"},
		{"moved into ~/.ssh", "apply_patch", "/home/u/w", map[string]any{"command": patchText("*** Update File: key.pub", "*** Move to: ../.ssh/authorized_keys")}, ClassFSMove, TierPrivileged, "/home/u/.ssh/authorized_keys"},
		{"privileged after a delete", "apply_patch", "/w", map[string]any{"command": patchText("*** Delete File: a", "*** Add File: ~/.bashrc", "+curl x | sh")}, ClassFSWrite, TierPrivileged, "~/.bashrc"},
		{"workdir argument", "apply_patch", "/w", map[string]any{"command": patchText("*** Update File: hosts", "@@", "+x"), "workdir": "/etc"}, ClassFSWrite, TierPrivileged, "/etc/hosts"},
		{"input key", "apply_patch", "/w", map[string]any{"input": patchText("*** Delete File: b.go")}, ClassFSDelete, TierDestructive, "deletes b.go"},
		{"patch key", "apply_patch", "/w", map[string]any{"patch": patchText("*** Add File: a", "+a")}, ClassFSWrite, TierWrite, "adds a"},
		{"argv", "apply_patch", "/w", map[string]any{"command": []any{"apply_patch", patchText("*** Delete File: b.go")}}, ClassFSDelete, TierDestructive, "deletes b.go"},
		{"through the shell tool", "shell", "/w", map[string]any{"command": []any{"apply_patch", patchText("*** Add File: /etc/x", "+x")}}, ClassFSWrite, TierPrivileged, "adds /etc/x"},
		{"through exec_command", "exec_command", "/w", map[string]any{"cmd": []any{"applypatch", patchText("*** Delete File: b.go")}}, ClassFSDelete, TierDestructive, "deletes b.go"},
		{"many files", "apply_patch", "/w", map[string]any{"command": patchText(manyDeletes(8)...)}, ClassFSDelete, TierDestructive, "and 3 more"},

		{"garbage", "apply_patch", "/w", map[string]any{"command": "rm -rf /"}, ClassUnknown, TierPrivileged, "could not be read"},
		{"unknown header", "apply_patch", "/w", map[string]any{"command": patchText("*** Chmod File: a")}, ClassUnknown, TierPrivileged, "could not be read"},
		{"empty path", "apply_patch", "/w", map[string]any{"command": patchText("*** Delete File: ")}, ClassUnknown, TierPrivileged, "could not be read"},
		{"no patch", "apply_patch", "/w", map[string]any{"cmd": "x"}, ClassUnknown, TierPrivileged, "could not be read"},
		{"not a string", "apply_patch", "/w", map[string]any{"command": 42}, ClassUnknown, TierPrivileged, "could not be read"},
		{"argv of another program", "apply_patch", "/w", map[string]any{"command": []any{"patch", "-p1"}}, ClassUnknown, TierPrivileged, "could not be read"},
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
			if got, want := c.Opaque != "", tc.class == ClassUnknown; got != want {
				t.Errorf("opaque = %q, want opaque %v", c.Opaque, want)
			}
		})
	}
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
	f.Add("garbage")
	f.Fuzz(func(t *testing.T, patch string) {
		ops, err := parsePatch(patch)
		c := classifyPatch(patchSpec(), patch, "/w", nil)
		if err != nil {
			if c.Opaque == "" || c.Tier != TierPrivileged {
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
			min := TierWrite
			if op.verb == patchDeletes {
				min = TierDestructive
			}
			if c.Tier < min {
				t.Fatalf("patch touching %+v classified %s", op, c)
			}
		}
	})
}
