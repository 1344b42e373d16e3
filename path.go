package airlock

import (
	"path"
	"strings"
)

// Paths decide a tier in two ways: writing under a system directory or to a
// file that grants persistence or access (authorized_keys, shell start-up
// files) is privileged, and reading a credential store is credential access.
// The checks are lexical: Airlock decides before anything runs and does not
// touch the file system, so symbolic links are not followed.

// cleanPath returns p made absolute against cwd (when cwd is absolute) and
// cleaned. A leading "~" stays, standing for the home directory.
func cleanPath(p, cwd string) string {
	switch {
	case p == "":
		return ""
	case strings.HasPrefix(p, "~"):
		return path.Clean(p)
	case path.IsAbs(p):
		return path.Clean(p)
	case path.IsAbs(cwd):
		return path.Join(cwd, p)
	}
	return path.Clean(p)
}

// systemDirs are the directories where a write changes the system rather
// than a workspace. /var/tmp and /tmp are not among them.
var systemDirs = []string{
	"/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
	"/boot", "/sys", "/proc", "/dev", "/var", "/opt", "/root", "/snap", "/srv",
	"/System", "/Library", "/private/etc", "/private/var",
}

// scratchDirs are exceptions inside systemDirs where anyone may write.
var scratchDirs = []string{"/var/tmp", "/var/folders", "/private/var/folders", "/dev/shm"}

// isNullDevice reports whether p is a sink or a stream that stores nothing.
func isNullDevice(p string) bool {
	switch p {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty", "/dev/zero":
		return true
	}
	return strings.HasPrefix(p, "/dev/fd/")
}

func under(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// isSystemPath reports whether writing p (relative to cwd) changes the system:
// the root itself, a system directory, or a file that grants access or runs
// at login.
func isSystemPath(p, cwd string) bool {
	p = cleanPath(p, cwd)
	if p == "" || isNullDevice(p) {
		return false
	}
	if p == "/" {
		return true
	}
	for _, d := range scratchDirs {
		if under(p, d) {
			return false
		}
	}
	for _, d := range systemDirs {
		if under(p, d) {
			return true
		}
	}
	return isPersistencePath(p)
}

// startupFiles run code at login or grant access when written.
var startupFiles = map[string]bool{
	".bashrc": true, ".bash_profile": true, ".bash_login": true, ".bash_logout": true,
	".profile": true, ".zshrc": true, ".zprofile": true, ".zshenv": true, ".zlogin": true,
	".config/fish/config.fish": true,
}

// isPersistencePath reports whether p is in a home directory's ssh folder, a
// shell start-up file, or an autostart location.
func isPersistencePath(p string) bool {
	_, rest, ok := splitHome(p)
	if !ok {
		return false
	}
	switch {
	case startupFiles[rest]:
		return true
	case rest == ".ssh" || strings.HasPrefix(rest, ".ssh/"):
		return true
	case strings.HasPrefix(rest, ".config/autostart/"), strings.HasPrefix(rest, ".config/systemd/"),
		strings.HasPrefix(rest, "Library/LaunchAgents/"):
		return true
	}
	return false
}

// splitHome splits a path inside a home directory ("~/x", "/home/u/x",
// "/Users/u/x", "/root/x") into the home and the rest.
func splitHome(p string) (home, rest string, ok bool) {
	switch {
	case p == "~":
		return "~", "", true
	case strings.HasPrefix(p, "~/"):
		return "~", p[2:], true
	case strings.HasPrefix(p, "/root/"):
		return "/root", p[len("/root/"):], true
	}
	for _, base := range []string{"/home/", "/Users/"} {
		if strings.HasPrefix(p, base) {
			user, rest, _ := strings.Cut(p[len(base):], "/")
			if user != "" {
				return base + user, rest, true
			}
		}
	}
	return "", "", false
}

// credentialFiles are files whose content is a secret, wherever they are.
var credentialFiles = map[string]bool{
	".netrc": true, ".git-credentials": true, ".pgpass": true, ".my.cnf": true,
	"id_rsa": true, "id_dsa": true, "id_ecdsa": true, "id_ed25519": true,
	"id_ecdsa_sk": true, "id_ed25519_sk": true,
}

// credentialDirs are home-relative folders that hold secrets.
var credentialDirs = []string{
	".ssh", ".aws", ".gnupg", ".azure", ".config/gcloud", ".config/gh", ".kube",
	".docker", ".password-store",
}

// isCredentialPath reports whether reading p (relative to cwd) reads a secret:
// a private key, a cloud or registry credential, the shadow password file.
func isCredentialPath(p, cwd string) bool {
	p = cleanPath(p, cwd)
	if p == "" {
		return false
	}
	switch p {
	case "/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/master.passwd":
		return true
	}
	if strings.HasPrefix(p, "/etc/ssh/ssh_host_") && strings.HasSuffix(p, "_key") {
		return true
	}
	base := path.Base(p)
	if credentialFiles[base] {
		return true
	}
	if _, rest, ok := splitHome(p); ok {
		for _, d := range credentialDirs {
			if !under(rest, d) {
				continue
			}
			// Public halves and host lists are not secrets.
			if d == ".ssh" && (strings.HasSuffix(base, ".pub") || base == "known_hosts" || base == "config") {
				return false
			}
			return true
		}
	}
	return false
}
