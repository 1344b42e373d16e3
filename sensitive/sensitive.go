// Package sensitive knows which file paths matter to a gate: those whose
// reading reveals a secret (a private key, a cloud credential, the shadow
// password file), and those whose writing changes the system (a system
// directory, a file that grants access or runs at login).
//
// The checks are lexical: Airlock decides before anything runs and does not
// touch the file system, so symbolic links are not followed.
package sensitive

import (
	"path"
	"strings"
)

// Clean returns p made absolute against cwd (when cwd is absolute) and
// cleaned. A leading "~" stays, standing for the home directory.
func Clean(p, cwd string) string {
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

// IsNullDevice reports whether p is a sink or a stream that stores nothing.
func IsNullDevice(p string) bool {
	switch p {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty", "/dev/zero":
		return true
	}
	return strings.HasPrefix(p, "/dev/fd/")
}

// under reports whether p is dir or a path inside it.
func under(p, dir string) bool {
	return strings.HasPrefix(p, dir) && (len(p) == len(dir) || p[len(dir)] == '/')
}

// isSystem reports whether writing p changes the system: the root itself, a
// system directory, or a file that grants access or runs at login.
func isSystem(p string) bool {
	p = Clean(p, "")
	if p == "" || IsNullDevice(p) {
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
	".bashrc": true, ".bash_profile": true, ".bash_login": true, ".bash_logout": true, ".bash_aliases": true,
	".profile": true, ".zshrc": true, ".zprofile": true, ".zshenv": true, ".zlogin": true, ".zlogout": true,
	".config/fish/config.fish": true, ".xprofile": true, ".xinitrc": true, ".xsession": true, ".pam_environment": true,
}

// runsLater are home-relative files whose content a program runs as
// commands when it next starts, or that name the programs it runs: an
// editor's, a pager's, a debugger's, a terminal multiplexer's start-up
// files, git's, cargo's, npm's and the cloud tools' configuration.
var runsLater = map[string]bool{
	".gitconfig": true, ".config/git/config": true, ".cargo/config": true, ".cargo/config.toml": true,
	".kube/config": true, ".aws/config": true, ".npmrc": true, ".yarnrc": true, ".yarnrc.yml": true,
	".vimrc": true, ".exrc": true, ".gvimrc": true, ".emacs": true, ".nanorc": true, ".lessfilter": true,
	".lesskey": true, ".config/lesskey": true, ".toprc": true, ".config/procps/toprc": true, ".mlrrc": true,
	".ackrc": true, ".config/bat/config": true, ".gdbinit": true, ".wgetrc": true, ".curlrc": true,
	".tmux.conf": true, ".config/tmux/tmux.conf": true, ".screenrc": true, ".config/pip/pip.conf": true,
	".pip/pip.conf": true, ".ripgreprc": true,
}

// runsLaterDirs are home-relative folders whose files a program runs, or
// that come first in PATH.
var runsLaterDirs = []string{
	".ssh", ".config/autostart", ".config/systemd", "Library/LaunchAgents", ".config/environment.d",
	".config/fish/conf.d", ".config/fish/functions", ".config/nvim", ".vim", ".emacs.d",
	".docker/cli-plugins", ".ipython/profile_default/startup", ".local/bin", "bin",
}

// isPersistencePath reports whether writing p grants access or runs code
// later: a home directory's ssh folder, a shell start-up file, an
// autostart location, a program's start-up file or commands, a folder in
// PATH; and, in any repository, its hooks and configuration, and a
// direnv .envrc.
func isPersistencePath(p string) bool {
	for _, seg := range []string{".git/hooks", ".git/config", ".husky"} {
		if p == seg || strings.HasPrefix(p, seg+"/") || strings.Contains(p, "/"+seg+"/") || strings.HasSuffix(p, "/"+seg) {
			return true
		}
	}
	if path.Base(p) == ".envrc" {
		return true
	}
	_, rest, ok := SplitHome(p)
	if !ok {
		return false
	}
	if startupFiles[rest] || runsLater[rest] {
		return true
	}
	for _, d := range runsLaterDirs {
		if under(rest, d) {
			return true
		}
	}
	return false
}

// SplitHome splits a path inside a home directory ("~/x", "/home/u/x",
// "/Users/u/x", "/root/x") into the home and the rest.
func SplitHome(p string) (home, rest string, ok bool) {
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
				return p[:len(base)+len(user)], rest, true
			}
		}
	}
	return "", "", false
}

// credentialFiles are files whose content is a secret, wherever they are:
// keys, and the files where tools keep tokens and passwords.
var credentialFiles = map[string]bool{
	".netrc": true, ".git-credentials": true, ".pgpass": true, ".my.cnf": true,
	"id_rsa": true, "id_dsa": true, "id_ecdsa": true, "id_ed25519": true,
	"id_ecdsa_sk": true, "id_ed25519_sk": true,
	".npmrc": true, ".pypirc": true, ".vault-token": true, ".s3cfg": true, ".boto": true,
	"credentials.tfrc.json": true, ".bash_history": true, ".zsh_history": true,
	".psql_history": true, ".mysql_history": true, ".python_history": true,
}

// credentialDirs are home-relative folders that hold secrets.
var credentialDirs = []string{
	".ssh", ".aws", ".gnupg", ".azure", ".config/gcloud", ".config/gh", ".kube",
	".docker", ".password-store", ".cargo/credentials", ".cargo/credentials.toml",
	".gem/credentials", ".config/hub", ".config/rclone", ".oci", ".config/doctl",
	".terraform.d/credentials.tfrc.json", ".local/share/keyrings", ".mozilla/firefox",
	".config/google-chrome", ".config/chromium", "Library/Keychains",
}

// isCredential reports whether reading p reads a secret: a private key, a
// cloud or registry credential, the shadow password file.
func isCredential(p string) bool {
	p = Clean(p, "")
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
	if credentialFiles[base] || isDotenv(base) {
		return true
	}
	if _, rest, ok := SplitHome(p); ok {
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

// maySystem reports whether pattern p may match a system path: its
// pattern characters sit where they decide the directory ("/e*/passwd",
// "~/.b*rc").
func maySystem(p string) bool {
	if strings.HasPrefix(p, "/") {
		for _, d := range systemDirs {
			if globPrefixMatch(p, d, true) {
				return true
			}
		}
		if globPrefixMatch(p, "/", true) {
			return true
		}
	}
	return Persists(p, true)
}

// persistenceSamples are home-relative places whose writing
// isPersistencePath flags; patterns are matched against them.
var persistenceSamples = []string{
	"~/.bashrc", "~/.bash_profile", "~/.bash_login", "~/.bash_logout", "~/.profile",
	"~/.zshrc", "~/.zprofile", "~/.zshenv", "~/.zlogin", "~/.config/fish/config.fish",
	"~/.ssh", "~/.config/autostart/x", "~/.config/systemd/x", "~/Library/LaunchAgents/x",
	"~/.gitconfig", "~/.vimrc", "~/.local/bin/x", "~/bin/x",
}

// credentialSamples are typical secrets; patterns are matched against them.
var credentialSamples = []string{
	"/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/master.passwd",
	"/etc/ssh/ssh_host_rsa_key", "/etc/ssh/ssh_host_ecdsa_key", "/etc/ssh/ssh_host_ed25519_key",
	"~/.ssh/id_rsa", "~/.ssh/id_ecdsa", "~/.ssh/id_ed25519", "~/.ssh/id_dsa",
	"~/.aws/credentials", "~/.aws/config", "~/.gnupg/private-keys-v1.d", "~/.azure/accessTokens.json",
	"~/.config/gcloud/credentials.db", "~/.config/gh/hosts.yml", "~/.kube/config",
	"~/.docker/config.json", "~/.password-store", "~/.netrc", "~/.git-credentials",
	"~/.pgpass", "~/.my.cnf",
}

func mayCredential(p string) bool {
	if _, rest, ok := SplitHome(p); ok {
		p = "~/" + rest
	}
	if strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~/") {
		for _, c := range credentialSamples {
			if c[0] == p[0] && globPrefixMatch(p, c, false) {
				return true
			}
		}
	}
	// A base name pattern counts when it says enough to aim at a key
	// ("id_*"), not when it matches anything ("*").
	base := path.Base(p)
	if len(base)-strings.Count(base, "*")-strings.Count(base, "?") < 2 || strings.ContainsRune(base, '[') {
		return false
	}
	return SecretName(base, true)
}

// globPrefixMatch reports whether the pattern p may name target or a path
// inside it (or, when p is shorter, a parent of it): each of their common
// components matches. With needGlob, a pattern character must sit in a
// common component, so that a literal prefix ("/var/tmp/*") is left to the
// lexical checks.
func globPrefixMatch(p, target string, needGlob bool) bool {
	pc := strings.Split(path.Clean(p), "/")
	tc := strings.Split(target, "/")
	if target == "/" {
		tc = []string{"", ""}
	}
	n := min(len(pc), len(tc))
	globbed := false
	for i := 0; i < n; i++ {
		if strings.ContainsAny(pc[i], "*?[") {
			globbed = true
		}
		if !matchName(pc[i], tc[i]) {
			return false
		}
	}
	return globbed || !needGlob
}

// matchName matches one path component as bash does by default: a pattern
// matches a name starting with "." only if it starts with "." itself.
func matchName(pattern, name string) bool {
	if strings.HasPrefix(name, ".") && !strings.HasPrefix(pattern, ".") {
		return false
	}
	ok, _ := path.Match(pattern, name)
	return ok
}

// SystemPlace reports whether writing p (absolute or "~"-relative) changes
// the system, and says where: "to /", "under /etc", "~/.bashrc". With glob,
// p is a pattern the shell expands, which counts when it may match a system
// path.
func SystemPlace(p string, glob bool) (string, bool) {
	if p == "" {
		return "", false
	}
	if !isSystem(p) && !(glob && maySystem(p)) {
		return "", false
	}
	c := Clean(p, "")
	if c == "/" {
		return "to /", true
	}
	for _, d := range systemDirs {
		if under(c, d) {
			return "under " + d, true
		}
	}
	return c, true
}

// Persists reports whether writing p (absolute or "~"-relative) grants
// access or runs code later: a shell start-up file, the ssh folder
// (authorized_keys), an autostart location. With glob, p is a pattern that
// counts when it may match one.
func Persists(p string, glob bool) bool {
	p = Clean(p, "")
	if isPersistencePath(p) {
		return true
	}
	if !glob {
		return false
	}
	_, rest, ok := SplitHome(p)
	if !ok {
		return false
	}
	rest = "~/" + rest
	for _, f := range persistenceSamples {
		if globPrefixMatch(rest, f, true) {
			return true
		}
	}
	return false
}

// Secret reports whether reading p (absolute or "~"-relative) reveals a
// secret, and which kind: "credentials" (a key, a token, a password file),
// "a disk device" (every file on it), "memory" (the kernel's or a
// process's), "a process's environment" (where tokens live), "an input or
// capture device" (keystrokes, a camera, a microphone). Another process's
// view of the file system (/proc/PID/root/...) counts as the path it
// reaches. With glob, p is a pattern the shell expands, which counts when
// it may match a secret.
func Secret(p string, glob bool) (what string, ok bool) {
	p = Clean(p, "")
	if p == "" {
		return "", false
	}
	if rest, ok := procRoot(p); ok {
		p = rest
	}
	if isCredential(p) || glob && mayCredential(p) {
		return "credentials", true
	}
	for _, s := range secretPlaces {
		if s.match(p) || glob && globPrefixMatch(p, s.sample, false) && strings.ContainsAny(p, "*?[") {
			return s.what, true
		}
	}
	return "", false
}

// isDotenv reports whether a file is a project's environment file (.env,
// .env.production), where applications keep their keys and passwords; the
// examples and templates checked in beside them are not.
func isDotenv(name string) bool {
	rest, ok := strings.CutPrefix(name, ".env")
	if !ok || rest != "" && rest[0] != '.' {
		return false
	}
	switch strings.TrimPrefix(rest, ".") {
	case "example", "sample", "template", "dist", "defaults", "schema":
		return false
	}
	return true
}

// HoldsSecrets reports whether a directory holds secrets somewhere inside
// it, so that reading it whole (grep -r, tar, rsync -a, cp -r) reads them:
// the root, a home directory or the folder of them, /etc, /root, /proc, a
// folder above a credential store (~/.config above ~/.config/gh).
func HoldsSecrets(dir string) bool {
	dir = Clean(dir, "")
	switch dir {
	case "/", "/home", "/Users", "/etc", "/etc/ssh", "/root", "/proc", "/var", "/var/lib", "/private", "/private/etc":
		return true
	}
	if _, rest, ok := SplitHome(dir); ok {
		if rest == "" {
			return true
		}
		for _, d := range credentialDirs {
			if under(d, rest) {
				return true
			}
		}
	}
	_, secret := Secret(dir, false)
	return secret
}

// SecretVar reports whether an environment variable's name says it holds a
// secret: a token, a password, a key (GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY,
// PGPASSWORD, OPENAI_API_KEY).
func SecretVar(name string) bool {
	n := strings.ToUpper(name)
	for _, w := range []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "PRIVATE_KEY", "API_KEY", "APIKEY",
		"ACCESS_KEY", "CREDENTIAL", "AUTH_KEY", "SESSION_KEY"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return strings.HasSuffix(n, "_PASS") || strings.HasSuffix(n, "_PWD") || strings.HasSuffix(n, "_KEY")
}

// SecretName reports whether a file of this name holds a secret wherever it
// is (id_rsa, .netrc, .env); with glob, whether the pattern may match one.
func SecretName(name string, glob bool) bool {
	if credentialFiles[name] || isDotenv(name) {
		return true
	}
	if !glob {
		return false
	}
	for n := range credentialFiles {
		if matchName(name, n) {
			return true
		}
	}
	return matchName(name, ".env") || matchName(name, ".env.local")
}

// procRoot strips the /proc/PID/root prefix through which one process
// reaches another's file system.
func procRoot(p string) (string, bool) {
	rest, ok := strings.CutPrefix(p, "/proc/")
	if !ok {
		return "", false
	}
	_, rest, ok = strings.Cut(rest, "/")
	if !ok {
		return "", false
	}
	rest, ok = strings.CutPrefix(rest, "root")
	if !ok || rest != "" && rest[0] != '/' {
		return "", false
	}
	return "/" + strings.TrimPrefix(rest, "/"), true
}

// A secretPlace is a kind of path whose reading reveals secrets, other
// than credential files; sample is one of them, which patterns are matched
// against.
type secretPlace struct {
	what   string
	sample string
	match  func(p string) bool
}

var secretPlaces = []secretPlace{
	{"memory", "/dev/mem", func(p string) bool {
		switch p {
		case "/dev/mem", "/dev/kmem", "/dev/port", "/proc/kcore", "/dev/crash":
			return true
		}
		return procFile(p, "mem")
	}},
	{"a process's environment", "/proc/1/environ", func(p string) bool { return procFile(p, "environ") }},
	{"a disk device", "/dev/sda", isDiskDevice},
	{"an input or capture device", "/dev/input/event0", func(p string) bool {
		return under(p, "/dev/input") || under(p, "/dev/snd") || strings.HasPrefix(p, "/dev/video") ||
			strings.HasPrefix(p, "/dev/hidraw") || p == "/dev/uinput"
	}},
}

// procFile reports whether p is /proc/PID/name (or /proc/PID/task/TID/name).
func procFile(p, name string) bool {
	rest, ok := strings.CutPrefix(p, "/proc/")
	if !ok || !strings.HasSuffix(rest, "/"+name) {
		return false
	}
	return !strings.Contains(strings.TrimSuffix(rest, "/"+name), "root/")
}

// diskDevices are the name prefixes of block devices under /dev: Linux
// disks, partitions, device-mapper and loop devices; BSD and macOS disks.
var diskDevices = []string{
	"sd", "hd", "vd", "xvd", "nvme", "mmcblk", "dm-", "md", "loop", "sr", "nbd", "zd", "rbd",
	"disk", "rdisk", "ada", "da", "nvd", "wd",
}

func isDiskDevice(p string) bool {
	rest, ok := strings.CutPrefix(p, "/dev/")
	if !ok {
		return false
	}
	if under(rest, "mapper") && rest != "mapper/control" || under(rest, "disk") || under(rest, "block") {
		return rest != "mapper" && rest != "disk" && rest != "block"
	}
	for _, d := range diskDevices {
		if strings.HasPrefix(rest, d) && len(rest) > len(d) && !strings.Contains(rest, "/") {
			return true
		}
	}
	return false
}
