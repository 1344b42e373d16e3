package shell

import (
	"strings"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/sensitive"
)

// Paths: how the paths a command names change its effect. Which paths
// matter is package sensitive's knowledge.

// raiseWrite raises e when writing p changes the system, or configures
// the gate (an agent host's or an editor's settings, Airlock's own files):
// that write is class gate.configure.
func raiseWrite(cat *sensitive.Catalogue, e *effect, p string, glob bool) {
	if e.class != airlock.ClassGateConfigure && (e.tier < airlock.TierPrivileged || fileClass(e.class)) {
		if what, ok := cat.GateConfig(p, glob); ok {
			e.reason = verbFor(e.class) + " the gate's configuration (" + what + "): " + sensitive.Clean(p, "")
			e.class, e.tier, e.cap, e.generic = airlock.ClassGateConfigure, airlock.TierPrivileged, airlock.CapGateConfigure, false
			return
		}
	}
	if e.tier >= airlock.TierPrivileged {
		return
	}
	if place, ok := cat.SystemPlace(p, glob); ok {
		e.tier, e.cap, e.generic = airlock.TierPrivileged, airlock.CapHostAdmin, false
		e.reason = verbFor(e.class) + " " + place
	}
}

// fileClass reports whether class is one of the file classes, which a more
// particular class (gate.configure) may replace.
func fileClass(class airlock.Class) bool {
	switch class {
	case airlock.ClassFSWrite, airlock.ClassFSMkdir, airlock.ClassFSCopy, airlock.ClassFSMove, airlock.ClassFSDelete,
		airlock.ClassFSPermissions:
		return true
	}
	return false
}

// verbFor names what an effect of class does to files, for reasons such as
// "writes under /etc".
func verbFor(class airlock.Class) string {
	switch class {
	case airlock.ClassFSMkdir:
		return "creates directories"
	case airlock.ClassFSCopy:
		return "copies files"
	case airlock.ClassFSMove:
		return "moves files"
	case airlock.ClassFSPermissions:
		return "changes permissions"
	case airlock.ClassFSDelete:
		return "deletes files"
	case airlock.ClassPackageInstall:
		return "installs packages"
	}
	return "writes"
}

// throughLink reports whether a path reaches a place its text does not
// say, which a lexical check cannot follow: a ".." after a name that may be
// a symbolic link (the kernel follows the link first, so
// /proc/self/cwd/../.aws is the home's .aws, and /var/run/../home is
// /home), or a directory reached through a descriptor or a process
// (/dev/fd/3/.ssh after exec 3< ~, /proc/self/cwd/x).
func throughLink(p string) bool {
	segs := strings.Split(p, "/")
	named := false
	for i, s := range segs {
		switch {
		case s == "" || s == ".":
		case s == "..":
			if named {
				return true
			}
		case i == 0 && strings.HasPrefix(s, "~"):
			// the home, which the shell resolves
		default:
			named = true
		}
	}
	var names []string
	for _, s := range segs {
		if s != "" && s != "." {
			names = append(names, s)
		}
	}
	if len(names) < 3 || segs[0] != "" {
		return false
	}
	switch {
	case names[0] == "dev" && names[1] == "fd", names[0] == "dev" && (names[1] == "stdin" || names[1] == "stdout" || names[1] == "stderr"):
		return true // a directory open on a descriptor, and a path inside it
	case names[0] == "proc":
		for i, n := range names[2:] {
			if (n == "cwd" || n == "fd" || n == "fdinfo" || n == "map_files") && i+3 < len(names) {
				return true
			}
		}
	}
	return false
}

// linkRead is the effect of reading through such a path.
func linkRead(p string) effect {
	return maySecret("reads " + p + ", whose place is only known when it runs (a \"..\" after a name that may be a symbolic link, or a directory open on a descriptor): it may be a secret")
}

// secretRead is the effect of reading p when it holds a secret (see
// sensitive.Secret): credentials, a disk, memory, a process's environment.
func secretRead(cat *sensitive.Catalogue, p string, glob bool) (effect, bool) {
	what, ok := cat.Secret(p, glob)
	if !ok {
		return effect{}, false
	}
	return readsSecret(p, what), true
}

func readsSecret(p, what string) effect {
	return effect{class: airlock.ClassCredentialsRead, cap: airlock.CapCredentialsRead, tier: airlock.TierPrivileged,
		reason: "reads " + what + ": " + sensitive.Clean(p, "")}
}
