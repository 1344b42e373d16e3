package sensitive

import (
	"path"
	"strings"
)

// Clean returns p made absolute against cwd (when cwd is absolute) and
// cleaned. A leading "~" stays, standing for the home directory. A Windows
// path (C:\Users\u, or any path when cwd is one) gets forward slashes and
// keeps its drive.
func Clean(p, cwd string) string {
	switch {
	case p == "":
		return ""
	case strings.HasPrefix(p, "~"):
		return path.Clean(p)
	case isDrive(p):
		return path.Clean(strings.ReplaceAll(p, `\`, "/"))
	case path.IsAbs(p):
		return path.Clean(p)
	case isDrive(cwd):
		return path.Join(strings.ReplaceAll(cwd, `\`, "/"), strings.ReplaceAll(p, `\`, "/"))
	case path.IsAbs(cwd):
		return path.Join(cwd, p)
	}
	return path.Clean(p)
}

// isDrive reports whether p starts with a Windows drive (C:\ or C:/).
func isDrive(p string) bool {
	return len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/') &&
		('a' <= p[0] && p[0] <= 'z' || 'A' <= p[0] && p[0] <= 'Z')
}

// IsNullDevice reports whether p is a sink or a stream that stores nothing.
func IsNullDevice(p string) bool {
	switch p {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty", "/dev/zero":
		return true
	}
	return strings.HasPrefix(p, "/dev/fd/")
}

// SplitHome splits a path inside a home directory into the home and the
// rest: "~/x", "~user/x", "/home/u/x", "/Users/u/x" (in any case, as macOS
// reads it), "/root/x", "/var/root/x" (macOS's root), and the same behind a
// Windows drive or its Unix spellings (C:/Users/u/x, /c/Users/u/x,
// /mnt/c/Users/u/x).
func SplitHome(p string) (home, rest string, ok bool) {
	if strings.HasPrefix(p, "~") {
		user, rest, _ := strings.Cut(p[1:], "/")
		if user == "+" || user == "-" || user != "" && user[0] >= '0' && user[0] <= '9' {
			return "", "", false // ~+ and ~- are $PWD and $OLDPWD, ~N the directory stack
		}
		return p[:1+len(user)], rest, true
	}
	start := skipRoot(p)
	if start < 0 {
		return "", "", false
	}
	names := p[start:] // after "/"
	first, after, _ := strings.Cut(names, "/")
	switch {
	case strings.EqualFold(first, "home"), strings.EqualFold(first, "users"):
		user, rest, _ := strings.Cut(after, "/")
		if user == "" {
			return "", "", false
		}
		return p[:start+len(first)+1+len(user)], rest, true
	case strings.EqualFold(first, "root"):
		return p[:start+len(first)], after, true
	case strings.EqualFold(first, "var"):
		second, rest, _ := strings.Cut(after, "/")
		if strings.EqualFold(second, "root") {
			return p[:start+len(first)+1+len(second)], rest, true
		}
	}
	return "", "", false
}

// skipRoot returns where the names of an absolute path start once the
// prefixes that only restate another path are skipped: a Windows drive
// (C:/), its Unix spellings before Users (/c/, /mnt/c/, /cygdrive/c/), and
// macOS's /private before etc, var and tmp. It returns -1 for a path that
// is not absolute.
func skipRoot(p string) int {
	i := 0
	if isDrive(p) {
		i = 2
	}
	if i >= len(p) || p[i] != '/' && p[i] != '\\' {
		return -1
	}
	i++
	rest := p[i:]
	for _, pre := range []string{"mnt/", "cygdrive/", ""} {
		r, ok := cutFold(rest, pre)
		if !ok || len(r) < 3 || r[1] != '/' || !isLetter(r[0]) {
			continue
		}
		if u, ok := cutFold(r[2:], "users"); ok && (u == "" || u[0] == '/') {
			return i + len(pre) + 2
		}
	}
	if r, ok := cutFold(rest, "private/"); ok {
		for _, d := range []string{"etc", "var", "tmp"} {
			if u, ok := cutFold(r, d); ok && (u == "" || u[0] == '/') {
				return i + len("private/")
			}
		}
	}
	return i
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// cutFold is strings.CutPrefix ignoring ASCII case.
func cutFold(s, prefix string) (string, bool) {
	if len(s) < len(prefix) || !strings.EqualFold(s[:len(prefix)], prefix) {
		return s, false
	}
	return s[len(prefix):], true
}

// maxNames bounds the names a path is split into on the stack; a deeper
// path is split on the heap.
const maxNames = 24

// A pathNames is a path split into names as the catalogue matches them.
type pathNames struct {
	names []string
	abs   bool
	home  int  // the index of the first name inside a home directory, or -1
	proc  bool // the path reached another process's root (/proc/PID/root/...)
}

// split splits p (cleaned) into names, appended to buf. Each name is read
// as Windows reads it (trailing dots and spaces dropped, an alternate data
// stream's ":name" dropped), and /proc/PID/root/ is the path it reaches.
func split(p string, buf []string) pathNames {
	n := pathNames{names: buf[:0], home: -1}
	start := 0
	if !strings.HasPrefix(p, "~") {
		if s := skipRoot(p); s >= 0 {
			n.abs, start = true, s
		}
	}
	for i := start; i <= len(p); i++ {
		if i < len(p) && p[i] != '/' {
			continue
		}
		if i > start {
			n.names = append(n.names, windowsName(p[start:i]))
		}
		start = i + 1
	}
	for n.abs && len(n.names) >= 3 && foldEqual(n.names[0], "proc") && foldEqual(n.names[2], "root") {
		n.names, n.proc = n.names[3:], true
	}
	switch {
	case len(n.names) == 0:
	case !n.abs && strings.HasPrefix(n.names[0], "~"):
		if _, _, ok := SplitHome(n.names[0]); ok {
			n.home = 1
		}
	case !n.abs:
	case len(n.names) >= 2 && (foldEqual(n.names[0], "home") || foldEqual(n.names[0], "users")):
		n.home = 2
	case foldEqual(n.names[0], "root"):
		n.home = 1
	case len(n.names) >= 2 && foldEqual(n.names[0], "var") && foldEqual(n.names[1], "root"):
		n.home = 2
	}
	return n
}

// windowsName returns a name as Windows opens it: "credentials." and
// "credentials " are "credentials", and "credentials::$DATA" is its content.
func windowsName(s string) string {
	if i := strings.IndexByte(s, ':'); i > 0 {
		s = s[:i]
	}
	i := len(s)
	for i > 0 && (s[i-1] == '.' || s[i-1] == ' ') {
		i--
	}
	if i == 0 {
		return s
	}
	return s[:i]
}
