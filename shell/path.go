package shell

import (
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
