// Package sensitive knows which file paths matter to a gate: secrets,
// places that run code later, the gate's own configuration, the system.
//
// Reading one reveals a secret; writing one runs code later, configures
// the gate itself or changes the system. What it knows is a catalogue kept as
// data (catalogue.tsv), each entry with its source; a policy may add to it.
//
// The checks are lexical: Airlock decides before anything runs and does not
// touch the file system, so symbolic links are not followed. Names are
// compared as a case-insensitive file system compares them (macOS's and
// Windows' are), and /private/etc is /etc.
package sensitive

import "strings"

// The package's functions answer with the built-in catalogue; a
// *Catalogue's methods with what a policy added too.

// Secret reports whether reading p (absolute or "~"-relative) reveals a
// secret, and which kind: "credentials" (a key, a token, a password file),
// "a disk device" (every file on it), "memory" (the kernel's or a
// process's), "a process's environment" (where tokens live), "an input or
// capture device" (keystrokes, a camera, a microphone), an agent host's
// login, Airlock's own tokens and data. Another process's view of the file
// system (/proc/PID/root/...) counts as the path it reaches. With glob, p
// is a pattern the shell expands, which counts when it may match a secret.
func Secret(p string, glob bool) (what string, ok bool) { return (*Catalogue)(nil).Secret(p, glob) }

// Secret is the package's Secret with c's entries.
func (c *Catalogue) Secret(p string, glob bool) (what string, ok bool) {
	p = Clean(p, "")
	if p == "" {
		return "", false
	}
	var buf [maxNames]string
	n := split(p, buf[:0])
	if e := c.find(KindSecret, &n, glob); e != nil {
		return e.What, true
	}
	return "", false
}

// GateConfig reports whether writing p (absolute or "~"-relative; creating,
// editing, deleting, moving onto or linking it) configures the gate: an
// agent host's or an editor's settings, at the user's level or a
// project's (.claude/settings.local.json, .codex/hooks.json,
// .gemini/settings.json, .mcp.json, .vscode/tasks.json), or Airlock's own
// configuration, tokens and data. Such a write may switch the gate off or
// run commands outside it, so it needs a person. what names the program
// ("Claude Code's settings"). With glob, p is a pattern that counts when
// it may match one.
func GateConfig(p string, glob bool) (what string, ok bool) {
	return (*Catalogue)(nil).GateConfig(p, glob)
}

// GateConfig is the package's GateConfig with c's entries.
func (c *Catalogue) GateConfig(p string, glob bool) (what string, ok bool) {
	p = Clean(p, "")
	if p == "" {
		return "", false
	}
	var buf [maxNames]string
	n := split(p, buf[:0])
	if e := c.find(KindGateConfig, &n, glob); e != nil {
		return e.What, true
	}
	return "", false
}

// Persists reports whether writing p (absolute or "~"-relative) grants
// access, runs code later or configures the gate: a shell start-up file,
// the ssh folder (authorized_keys), an autostart location, a repository's
// hooks, an agent host's settings (see GateConfig). With glob, p is a
// pattern that counts when it may match one.
func Persists(p string, glob bool) bool { return (*Catalogue)(nil).Persists(p, glob) }

// Persists is the package's Persists with c's entries.
func (c *Catalogue) Persists(p string, glob bool) bool {
	p = Clean(p, "")
	if p == "" {
		return false
	}
	var buf [maxNames]string
	n := split(p, buf[:0])
	return c.persists(&n, glob)
}

func (c *Catalogue) persists(n *pathNames, glob bool) bool {
	return c.find(KindRunsLater, n, glob) != nil || c.find(KindGateConfig, n, glob) != nil
}

// SystemPlace reports whether writing p (absolute or "~"-relative) changes
// the system, or runs code later, or configures the gate (see Persists),
// and says where: "to /", "under /etc", "~/.bashrc". With glob, p is a
// pattern the shell expands, which counts when it may match such a place.
func SystemPlace(p string, glob bool) (string, bool) { return (*Catalogue)(nil).SystemPlace(p, glob) }

// SystemPlace is the package's SystemPlace with c's entries.
func (c *Catalogue) SystemPlace(p string, glob bool) (string, bool) {
	p = Clean(p, "")
	if p == "" || IsNullDevice(p) {
		return "", false
	}
	var buf [maxNames]string
	n := split(p, buf[:0])
	if n.abs && len(n.names) == 0 {
		return "to /", true
	}
	if n.proc {
		return "under /proc", true
	}
	if e := c.find(KindSystem, &n, glob); e != nil {
		if m := strings.Count(e.under, "/"); e.under != "" && len(n.names) >= m && !anyMeta(n.names[:m]) {
			return "under " + e.under, true
		}
		return p, true
	}
	if c.persists(&n, glob) {
		return p, true
	}
	return "", false
}

// HoldsSecrets reports whether a directory holds secrets somewhere inside
// it, so that reading it whole (grep -r, tar, rsync -a, cp -r) reads them:
// the root, a home directory or the folder of them, /etc, /proc, a folder
// above a credential store (~/.config above ~/.config/gh), or one inside a
// store.
func HoldsSecrets(dir string) bool { return (*Catalogue)(nil).HoldsSecrets(dir) }

// HoldsSecrets is the package's HoldsSecrets with c's entries.
func (c *Catalogue) HoldsSecrets(dir string) bool {
	dir = Clean(dir, "")
	if dir == "" {
		return false
	}
	var buf [maxNames]string
	n := split(dir, buf[:0])
	switch {
	case n.abs && len(n.names) == 0, // the root
		n.home == len(n.names), // a home directory
		n.abs && len(n.names) == 1 && (foldEqual(n.names[0], "home") || foldEqual(n.names[0], "users") ||
			foldEqual(n.names[0], "private") || foldEqual(n.names[0], "var")): // the homes' folder
		return true
	}
	return c.holds(KindSecret, &n) || c.find(KindSecret, &n, false) != nil
}

// SecretVar reports whether an environment variable's name says it holds a
// secret: a token, a password, a key, a connection string (GITHUB_TOKEN,
// AWS_SECRET_ACCESS_KEY, PGPASSWORD, OPENAI_API_KEY, DATABASE_URL).
func SecretVar(name string) bool { return (*Catalogue)(nil).SecretVar(name) }

// SecretVar is the package's SecretVar with c's entries.
func (c *Catalogue) SecretVar(name string) bool { return name != "" && c.matchVar(name) != nil }

// SecretName reports whether a file of this name holds a secret wherever it
// is (id_rsa, .netrc, .env); with glob, whether the pattern may match one.
func SecretName(name string, glob bool) bool { return (*Catalogue)(nil).SecretName(name, glob) }

// SecretName is the package's SecretName with c's entries.
func (c *Catalogue) SecretName(name string, glob bool) bool {
	if name == "" {
		return false
	}
	return c.matchName(KindSecret, name, glob)
}
