package shell

import (
	"slices"
	"strings"
	"sync"

	"github.com/airlock-dev/airlock"
)

// Package managers: system packages, language packages and toolchains.
//
// Besides what they install, package managers run code: hooks and
// programs named by options or settings (apt's -o DPkg::Pre-Invoke, pip's
// --editor, npm's --script-shell), project files that are programs
// (Gemfile), shells and interpreters (brew sh, bundle console). Those are
// analysed like the commands they are.

var packageCommands = sync.OnceValue(func() map[string]rule {
	return map[string]rule{
		"apt":      sysPkg(pkgTool{name: "apt", flags: aptFlags, change: aptChange, look: aptRead, fetch: "changelog"}),
		"apt-get":  sysPkg(pkgTool{name: "apt-get", flags: aptFlags, change: aptChange, look: aptRead, fetch: "changelog"}),
		"aptitude": sysPkg(pkgTool{name: "aptitude", flags: aptFlags, change: aptChange, look: aptRead, fetch: "changelog"}),
		"apt-cache": sysPkg(pkgTool{name: "apt-cache", flags: aptCacheFlags, change: "gencaches",
			look: "search show showpkg showsrc stats dump dumpavail unmet depends rdepends pkgnames dotty xvcg policy madison"}),
		"apt-mark": sysPkg(pkgTool{name: "apt-mark", flags: aptMarkFlags, change: "hold unhold auto manual minimize-manual",
			look: "showhold showauto showmanual"}),
		"dnf":      sysPkg(pkgTool{name: "dnf", flags: rpmToolFlags, change: rpmChange, look: rpmRead}),
		"yum":      sysPkg(pkgTool{name: "yum", flags: rpmToolFlags, change: rpmChange, look: rpmRead}),
		"microdnf": sysPkg(pkgTool{name: "microdnf", flags: rpmToolFlags, change: rpmChange, look: rpmRead}),
		"tdnf":     sysPkg(pkgTool{name: "tdnf", flags: rpmToolFlags, change: rpmChange, look: rpmRead}),
		"zypper": sysPkg(pkgTool{name: "zypper", flags: zypperFlags,
			change: "install in remove rm update up dist-upgrade dup patch refresh ref addrepo ar removerepo rr modifyrepo mr addlock al removelock rl source-install si clean",
			look:   "search se info if list-updates lu repos lr packages pa patches lp products pd locks ll what-provides wp"}),
		"apk": sysPkg(pkgTool{name: "apk", flags: apkFlags, change: "add del upgrade update fix cache",
			look: "search info list policy version stats dot audit"}),
		"snap": sysPkg(pkgTool{name: "snap", fetch: "find search",
			change: "install remove refresh revert enable disable connect disconnect set unset alias unalias switch prefer restart start stop save restore forget",
			look:   "list info find search version services logs connections changes change get known aliases warnings help"}),
		"port": sysPkg(pkgTool{name: "port", flags: portFlags, console: true,
			change: "install uninstall upgrade selfupdate sync activate deactivate clean load unload setrequested",
			look:   "search info list installed outdated deps rdeps contents provides variants echo location dependents log help"}),
		"flatpak": sysPkg(pkgTool{name: "flatpak", fetch: "remote-ls remote-info",
			change: "install uninstall update remote-add remote-delete remote-modify repair override mask pin",
			look:   "list info search remotes remote-ls remote-info history ps --version documents permissions"}),
		"emerge": sysPkg(pkgTool{name: "emerge", look: "--search -s --info --pretend -p"}),
		"pkg": sysPkg(pkgTool{name: "pkg", flags: bsdPkgFlags,
			change: "install add delete remove upgrade update autoremove clean lock unlock",
			look:   "info search query audit version which check stats help"}),
		"pacman": pacman, "yay": pacman, "paru": pacman,
		"dpkg": dpkg, "rpm": rpm,
		"brew": brew,
		"npm":  npm, "pnpm": npm, "yarn": npm,
		"pip": pip, "pipx": pipx, "uv": uv, "poetry": poetry, "pipenv": pipenv, "twine": twine,
		"conda": conda, "mamba": conda, "micromamba": conda,
		"gem": gem, "bundle": bundle, "bundler": bundle,
		"composer": composer, "dotnet": dotnet, "nuget": nuget,
		"nvm": use(write(airlock.ClassFSWrite, "changes the Node.js version")).on(on("install",
			install(airlock.TierNetworkEgress, "installs Node.js")), on("ls list current version which --version",
			read("shows Node.js versions")), onRule("exec", toolExec("nvm", 1)), onRule("run", nvmRun)),
		"pyenv": use(write(airlock.ClassFSWrite, "changes the Python version")).on(on("install",
			install(airlock.TierNetworkEgress, "installs Python")),
			on("versions version which whence root prefix --version", read("shows Python versions")),
			onRule("exec", toolExec("pyenv", 0))),
		"rbenv": use(write(airlock.ClassFSWrite, "changes the Ruby version")).on(on("install",
			install(airlock.TierNetworkEgress, "installs Ruby")),
			on("versions version which whence root prefix --version", read("shows Ruby versions")), onRule("exec",
				toolExec("rbenv", 0))),
		"asdf": use(write(airlock.ClassFSWrite, "changes tool versions")).on(on("install plugin",
			install(airlock.TierNetworkEgress, "installs tools")), on("list current where which version info help",
			read("shows tool versions")), onRule("exec", toolExec("asdf", 0)), onRule("env", asdfEnv)),
		"mise": use(write(airlock.ClassFSWrite, "changes tool versions")).on(on("install use upgrade plugins",
			install(airlock.TierNetworkEgress, "installs tools")), on("ls list current where which version doctor env",
			read("shows tool versions")), onRule("exec x", miseExec), onRule("run r", fixed(exec("runs tasks")))),
	}
})

// System packages.

const (
	aptChange = "install reinstall remove purge autoremove autopurge upgrade full-upgrade dist-upgrade update build-dep satisfy markauto unmarkauto hold unhold safe-upgrade clean autoclean"
	aptRead   = "search show list policy depends rdepends showsrc madison changelog showpkg stats dump pkgnames why why-not help moo -v --version"
	rpmChange = "install reinstall remove erase upgrade update downgrade autoremove distro-sync groupinstall groupremove groupupdate swap makecache clean config-manager module mark"
	rpmRead   = "search info list provides whatprovides repolist repoquery check-update deplist history help"
)

// pkgTool describes a system package manager.
type pkgTool struct {
	name    string
	flags   getopt
	change  string // verbs that change packages, space-separated
	look    string // verbs (and options) that only show information
	fetch   string // those of them that fetch it from the network
	console bool   // with no verb, it runs package commands read from its input (port)
}

// sysPkg is a system package manager: changes are privileged, queries
// read. An unknown verb is treated as a change. Whatever the verb, options
// that give it another configuration or hooks (apt's -o and -c, dnf's
// --setopt) name programs it runs: a hook Airlock can see is analysed, the
// rest is at least exec.
func sysPkg(t pkgTool) rule {
	changes, looks, fetches := strings.Fields(t.change), strings.Fields(t.look), strings.Fields(t.fetch)
	return func(c *call) effect {
		p := t.flags.parse(c.args)
		ops := p.ops
		verb := ""
		if len(ops) > 0 {
			verb = ops[0].val
		}
		var e effect
		switch {
		case len(ops) > 0 && !ops[0].static:
			e = install(airlock.TierPrivileged, "changes system packages ("+t.name+", a verb only known at run time)")
		case slices.Contains(fetches, verb):
			e = net(airlock.ClassNetHTTP, "fetches package information")
		case slices.Contains(looks, verb) && !(verb == "history" && len(ops) > 1 && slices.Contains(historyChanges, ops[1].val)),
			slices.ContainsFunc(p.opts, func(o option) bool { return slices.Contains(looks, o.name) }):
			e = read("shows package information")
		case verb == "" && t.console && c.in.kind != inUnknown && c.in.kind != inNull:
			e = install(airlock.TierPrivileged, "changes system packages ("+t.name+" commands read from its input)")
		case verb == "" && len(changes) > 0:
			e = read("shows package manager help")
		case slices.Contains(changes, verb):
			e = install(airlock.TierPrivileged, "changes system packages ("+t.name+" "+verb+")")
		default:
			e = install(airlock.TierPrivileged, "changes system packages ("+t.name+")")
		}
		c.useOptions(&e, p.opts, t.flags.roles)
		c.pkgSettings(&e, t.name, p.opts)
		if t.console && verb == "" && slices.ContainsFunc(p.opts, func(o option) bool { return t.flags.roles[o.name] == runsFile }) {
			// Commands from a file (port -F): they may change packages.
			e = install(airlock.TierPrivileged, "changes system packages ("+t.name+" commands from a file)")
		}
		return e
	}
}

// historyChanges are the history verbs of dnf and yum that change packages.
var historyChanges = []string{"undo", "redo", "rollback", "replay"}

var aptFlags = getopt{short: "octa", long: names("--option --target-release --default-release --host-architecture " +
	"--build-profiles"), roles: map[string]role{"-c": runsFile, "--config-file": runsFile}, exact: true}

var aptCacheFlags = getopt{short: "octap",
	roles: map[string]role{"-c": runsFile, "--config-file": runsFile, "-p": writesFile, "--pkg-cache": writesFile,
		"-s": writesFile, "--src-cache": writesFile}, exact: true}

var aptMarkFlags = getopt{short: "oc",
	roles: map[string]role{"-c": runsFile, "--config-file": runsFile, "-f": writesFile, "--file": writesFile},
	exact: true}

var rpmToolFlags = getopt{short: "cRdex", long: names("--setopt --installroot --releasever --enablerepo " +
	"--disablerepo --repo --repoid --repofrompath --exclude --forcearch --enableplugin --disableplugin " +
	"--debuglevel --errorlevel --color"),
	roles: map[string]role{
		"-c": runsFile, "--config": runsFile, "--pluginpath": loadsLibrary, "--pluginconfpath": usesConfig,
		"--downloaddir": writesFile, "--destdir": writesFile,
	}, exact: true}

var zypperFlags = getopt{short: "cRDCpr", long: names("--root --reposd-dir --cache-dir --raw-cache-dir " +
	"--solv-cache-dir --userdata --plus-repo --repo"),
	roles: map[string]role{"-c": runsFile, "--config": runsFile, "--pkg-cache-dir": writesFile}, exact: true}

var apkFlags = getopt{short: "Xp", long: names("--repository --root --arch --cache-dir --repositories-file"),
	roles: map[string]role{"--keys-dir": usesConfig}, exact: true}

var portFlags = getopt{short: "D", roles: map[string]role{"-F": runsFile}}

var bsdPkgFlags = getopt{short: "cjrRo", roles: map[string]role{"-C": runsFile}}

// pkgSettings analyses the settings given on the command line: apt's -o
// KEY=VALUE (a hook runs VALUE with sh -c; Dir:: points apt at other
// programs and configuration), dnf's --setopt (pluginpath, reposdir).
func (c *call) pkgSettings(e *effect, tool string, opts []option) {
	for _, o := range opts {
		if !o.has || o.name != "-o" && o.name != "--option" && o.name != "--setopt" {
			continue
		}
		if !o.val.static {
			c.runUnknown(tool+" "+o.name, o.val.text, "sets an option only known at run time, which can run programs")
			continue
		}
		key, val, _ := strings.Cut(o.val.val, "=")
		key = strings.ToLower(strings.TrimRight(key, ":"))
		switch {
		case strings.Contains(key, "invoke") || strings.Contains(key, "pre-install-pkgs") || strings.Contains(key, "hooks") ||
			strings.Contains(key, "proxy-auto-detect") || strings.Contains(key, "proxyautodetect") || strings.HasSuffix(key, "command"):
			c.shellCommand(tool+" "+o.name+" "+key, val)
		case strings.HasPrefix(key, "dir") || strings.Contains(key, "path") || strings.HasSuffix(key, "dir") ||
			strings.HasPrefix(key, "dpkg::options") || strings.Contains(key, "::bin::"):
			c.use(e, usesConfig, tool+" "+o.name, literal(o.val.val))
		}
	}
}

var pacmanFlags = getopt{short: "br", long: names("--dbpath --root --cachedir --gpgdir --arch --assume-installed " +
	"--overwrite --ignore --ignoregroup --print-format --sysroot --sudoflags --mflags --gitflags --editorflags"),
	roles: map[string]role{
		"--logfile": writesFile, "--config": runsFile, "--hookdir": usesConfig, "--pacman-conf": usesConfig,
		"--makepkgconf": usesConfig,
		// yay and paru run these programs.
		"--makepkg": runsProgram, "--pacman": runsProgram, "--git": runsProgram, "--gpg": runsProgram,
		"--sudo": runsProgram, "--editor": runsProgram, "--fm": runsProgram, "--bat": runsProgram,
	}}

func pacman(c *call) effect {
	e := pacmanOp(c)
	p := pacmanFlags.parse(c.args)
	c.useOptions(&e, p.opts, pacmanFlags.roles)
	return e
}

func pacmanOp(c *call) effect {
	if len(c.args) == 0 {
		if c.name == "pacman" {
			return read("shows pacman help")
		}
		return install(airlock.TierPrivileged, "upgrades system packages")
	}
	op := c.args[0].val
	switch {
	case strings.HasPrefix(op, "-F") && (strings.ContainsRune(op[2:], 'y') || c.has("--refresh")):
		return install(airlock.TierPrivileged, "downloads the file databases into the system")
	case strings.HasPrefix(op, "-Q"), strings.HasPrefix(op, "-T"), strings.HasPrefix(op, "-F"),
		op == "--query", op == "-V", op == "--version", op == "-h", op == "--help":
		return read("shows package information")
	case strings.HasPrefix(op, "-S") && strings.ContainsAny(op[2:], "sigl") && !strings.ContainsAny(op[2:], "yu"):
		return read("shows package information")
	}
	return install(airlock.TierPrivileged, "changes system packages")
}

var dpkgFlags = getopt{long: names("--admindir --instdir --root --force --path-exclude --path-include"),
	roles: map[string]role{
		"--log": writesFile, "--pre-invoke": runsCommand, "--post-invoke": runsCommand, "--status-logger": runsCommand,
	}, exact: true}

func dpkg(c *call) effect {
	e := install(airlock.TierPrivileged, "changes system packages (dpkg)")
	if c.has("-l", "--list", "-L", "--listfiles", "-s", "--status", "-S", "--search", "-p", "--print-avail", "-c",
		"--contents", "-I", "--info", "--get-selections", "--print-architecture", "--compare-versions", "--version",
		"--help", "-C", "--audit", "-V", "--verify", "--print-foreign-architectures") {
		e = read("shows package information")
	}
	p := dpkgFlags.parse(c.args)
	c.useOptions(&e, p.opts, dpkgFlags.roles)
	return e
}

var rpmFlags = getopt{short: "ED",
	long:  names("--eval --define --predefine --undefine --dbpath --root --queryformat --qf --target"),
	roles: map[string]role{"--pipe": runsCommand, "--macros": runsFile, "--load": runsFile, "--rcfile": runsFile},
	exact: true}

func rpm(c *call) effect {
	e := install(airlock.TierPrivileged, "changes system packages (rpm)")
	for _, a := range c.args {
		if !a.static || !strings.HasPrefix(a.val, "-") {
			continue
		}
		switch {
		case strings.HasPrefix(a.val, "-q"), strings.HasPrefix(a.val, "-V"), strings.HasPrefix(a.val, "-K"),
			strings.HasPrefix(a.val, "-E"), strings.HasPrefix(a.val, "--eval"), a.val == "--query",
			a.val == "--verify", a.val == "--checksig", a.val == "--version", a.val == "--help":
			e = read("shows package information")
		}
	}
	p := rpmFlags.parse(c.args)
	c.useOptions(&e, p.opts, rpmFlags.roles)
	for _, m := range p.values("-E", "--eval", "-D", "--define", "--predefine") {
		c.rpmMacros(&e, m)
	}
	return e
}

// rpmMacros analyses what rpm macros run when expanded: %(COMMAND) runs a
// shell command, %{lua:CODE} runs Lua, %{load:FILE} reads more macros.
func (c *call) rpmMacros(e *effect, m arg) {
	if !m.static {
		c.runUnknown("rpm --eval", m.text, "expands macros only known at run time, which can run commands")
		return
	}
	v := m.val
	for {
		i := strings.Index(v, "%(")
		if i < 0 {
			break
		}
		end := closing(v[i+2:], '(', ')')
		c.shellCommand("rpm %()", v[i+2:i+2+end])
		v = v[i+2+end:]
	}
	if strings.Contains(m.val, "%{lua:") {
		*e = worse(*e, exec("runs Lua code in rpm macros"))
		c.codeEffects(e, m.val)
	}
	if _, f, ok := strings.Cut(m.val, "%{load:"); ok {
		f, _, _ = strings.Cut(f, "}")
		c.use(e, runsFile, "rpm %{load}", literal(f))
	}
}

// closing returns the index of the bracket that closes an opened one, or
// len(s).
func closing(s string, open, close byte) int {
	depth := 1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case open:
			depth++
		case close:
			if depth--; depth == 0 {
				return i
			}
		}
	}
	return len(s)
}

// Homebrew.

var brew = lazy(func() rule {
	return use(exec("runs a brew command")).withNone(read("shows brew help")).on(
		onRule("install reinstall", func(c *call) effect {
			if c.has("-i", "--interactive") {
				// Stops in a shell in the build environment.
				return c.stdinCode("shell", true)
			}
			return install(airlock.TierNetworkEgress, "installs packages with Homebrew")
		}),
		on("upgrade update tap fetch", install(airlock.TierNetworkEgress, "installs packages with Homebrew")),
		onRule("bundle", func(c *call) effect {
			if ops := c.operands(); len(ops) > 0 && ops[0].val == "exec" {
				return toolExec("brew bundle exec", 0)(c)
			}
			return install(airlock.TierNetworkEgress, "installs the Brewfile's packages (the Brewfile is Ruby code)")
		}),
		onRule("sh", func(c *call) effect {
			if cmd, ok := c.value("-c", "--cmd"); ok {
				c.runWords("brew sh --cmd", []arg{cmd}, c.in).lenient = true
				return exec("runs a command in Homebrew's build environment")
			}
			return c.stdinCode("shell", true)
		}),
		onRule("irb", func(c *call) effect { return c.stdinCode("Ruby", false) }),
		on("ruby", exec("runs Ruby code with Homebrew's libraries")),
		on("uninstall remove rm untap cleanup autoremove link unlink pin unpin postinstall",
			install(airlock.TierWrite, "removes or relinks Homebrew packages")),
		on("list ls info abv search outdated deps uses leaves config doctor dr --prefix --cellar --repository --version -v home homepage desc cat log commands shellenv --env missing options tap-info formulae casks docs help", read("shows package information")),
		on("edit create extract", write(airlock.ClassFSWrite, "edits formulae")),
		onRule("services", func(c *call) effect {
			ops := c.operands()
			if len(ops) == 0 || ops[0].val == "list" || ops[0].val == "info" {
				return read("lists services")
			}
			if ops[0].val == "start" || ops[0].val == "run" || ops[0].val == "restart" {
				return admin("registers a background service")
			}
			return write(airlock.ClassFSWrite, "stops or cleans services")
		}),
	)
})

// JavaScript.

// npmRoles are npm's settings, given as options to npm, pnpm, yarn and npx,
// that name programs it runs, code it loads and places it writes.
var npmRoles = map[string]role{
	"--script-shell": runsProgram, "--shell": runsProgram, "--editor": runsProgram, "--browser": runsProgram,
	"--git": runsProgram, "--node-options": loadsLibrary, "--onload-script": loadsLibrary,
	"--userconfig": usesConfig, "--globalconfig": usesConfig, "--prefix": writesFile, "--cache": writesFile,
	"--logs-dir": writesFile, "--pack-destination": writesFile,
}

var npmFlags = getopt{short: "Cw", long: names("--cwd --filter --workspace --dir --registry --tag --access --otp"),
	roles: npmRoles}

// npmProgramSettings are the settings whose value is a program npm, pnpm or
// yarn runs later (yarn runs yarnPath for every command): setting one
// changes what later commands run.
var npmProgramSettings = []string{"script-shell", "shell", "editor", "browser", "git", "node-options",
	"onload-script", "userconfig", "globalconfig", "yarnpath", "yarn-path", "viewer"}

// npm covers npm, pnpm and yarn.
func npm(c *call) effect {
	p := npmFlags.parse(c.args)
	e := npmVerb(c)
	c.useOptions(&e, p.opts, npmFlags.roles)
	return e
}

// npmGlobals are the options of npm, pnpm and yarn before a subcommand.
var npmGlobals = getopt{short: "Cw", long: names("--prefix --cwd --filter --workspace --dir"), exact: true}

func npmVerb(c *call) effect {
	sub, rest, ok := subcommand(c.args, npmGlobals)
	if !ok {
		return unknown("runs " + c.name + " with a subcommand only known at run time")
	}
	global := hasOption(c.args, "-g", "--global", "--location=global")
	switch sub {
	case "":
		if c.name == "yarn" {
			return install(airlock.TierNetworkEgress, "installs packages")
		}
		if hasOption(c.args, "-v", "--version", "-h", "--help") || c.name == "npm" {
			return read("prints version or help")
		}
		return install(airlock.TierNetworkEgress, "installs packages")
	case "install", "i", "in", "ins", "inst", "insta", "instal", "isnt", "isnta", "isntal", "isntall", "add",
		"ci", "clean-install", "ic", "install-clean", "isntall-clean", "update", "up", "upgrade", "udpate",
		"install-test", "it", "install-ci-test", "cit", "link", "ln", "dedupe", "ddp", "prune", "uninstall",
		"un", "unlink", "remove", "rm", "r", "import", "fetch":
		if global {
			return install(airlock.TierPrivileged, "installs packages globally")
		}
		return install(airlock.TierNetworkEgress, "installs packages (and runs their install scripts)")
	case "global":
		return install(airlock.TierPrivileged, "installs packages globally")
	case "dlx", "exec", "x", "node":
		return c.delegate(rest, npmExec(sub))
	case "explore":
		// npm explore PKG -- CMD runs CMD in a shell; without CMD, a shell
		// that reads its input.
		if i := slices.IndexFunc(rest, func(a arg) bool { return a.val == "--" }); i >= 0 && i+1 < len(rest) {
			c.runWords("npm explore", rest[i+1:], c.in)
			return exec("runs a command in an installed package's directory")
		}
		return c.stdinCode("shell", true)
	case "publish", "unpublish":
		return publish("publishes a package to a registry")
	case "view", "v", "info", "show", "search", "s", "se", "find", "outdated", "audit", "doctor", "ping",
		"whoami", "fund", "repo", "docs", "bugs", "home", "dist-tag", "dist-tags", "owner", "access", "team",
		"token", "org", "hook", "star", "stars", "unstar", "deprecate", "profile", "npm":
		if sub == "audit" && len(rest) > 0 && rest[0].val == "fix" {
			return install(airlock.TierNetworkEgress, "installs package updates")
		}
		if sub == "npm" && len(rest) > 0 && rest[0].val == "publish" {
			return publish("publishes a package to a registry")
		}
		return net(airlock.ClassNetHTTP, "talks to the package registry")
	case "ls", "list", "la", "ll", "explain", "why", "root", "bin", "prefix", "help", "help-search", "get",
		"query", "sbom", "completion", "licenses", "-v", "--version", "store", "config", "c", "pkg", "version":
		if len(rest) > 0 && (sub == "config" || sub == "c" || sub == "pkg" || sub == "version") {
			switch rest[0].val {
			case "get", "list", "ls", "path":
			default:
				return npmSetting(rest[1:])
			}
		}
		return read("shows package information")
	case "set":
		if len(rest) > 0 && rest[0].val == "version" {
			// yarn set version downloads the yarn that later commands run.
			return install(airlock.TierNetworkEgress, "installs a yarn release for the project")
		}
		return npmSetting(rest)
	case "init", "create", "innit":
		if len(operands(rest)) > 0 {
			return effect{class: airlock.ClassProcessExec, cap: airlock.CapNetworkEgress, tier: airlock.TierNetworkEgress, reason: "downloads and runs a project generator"}
		}
		return write(airlock.ClassFSWrite, "creates package files")
	case "pack", "shrinkwrap", "cache", "login", "adduser", "add-user", "logout", "edit", "set-script":
		return write(airlock.ClassFSWrite, "changes package files or settings")
	case "plugin":
		return install(airlock.TierNetworkEgress, "installs "+c.name+" plugins, code it runs")
	}
	script := sub
	if ops := operands(rest); (sub == "run" || sub == "run-script") && len(ops) > 0 {
		script = ops[0].text
	}
	if c.name == "pnpm" && sub != "run" && sub != "run-script" {
		// pnpm runs a command that is not one of its own or a script as
		// pnpm exec does.
		c.run("pnpm", c.args[slices.IndexFunc(c.args, func(a arg) bool { return a.val == sub }):], effect{})
	}
	return exec("runs package script " + script)
}

// npmSetting classifies npm config set: a setting naming a program changes
// what later commands run.
func npmSetting(words []arg) effect {
	for _, w := range words {
		key, _, _ := strings.Cut(strings.ToLower(strings.TrimLeft(w.val, "-")), "=")
		if !w.static || slices.Contains(npmProgramSettings, key) {
			return env("sets " + w.text + ", a program later package manager commands run")
		}
	}
	return write(airlock.ClassFSWrite, "changes package settings")
}

// npmExec is npm exec and x, and pnpm's and yarn's dlx, exec and node: it
// runs a command, which it may download first.
func npmExec(sub string) rule {
	return func(c *call) effect {
		p := npxFlags.split(c.args)
		ops := p.ops
		switch {
		case sub == "node":
			c.run(c.name+" node", append([]arg{literal("node")}, c.args...), effect{})
			return exec("runs Node.js with the project's packages")
		case sub == "exec" && (c.name == "yarn" || c.name == "pnpm" && hasOption(c.words[1:], "-c", "--shell-mode")):
			// Its words are a shell command.
			c.runWords(c.name+" exec", ops, c.in)
			return exec("runs a command with the project's packages")
		case sub == "exec" && c.name == "pnpm":
			c.run("pnpm exec", ops, effect{})
			return exec("runs a command with the project's packages")
		}
		return c.downloadRun(p)
	}
}

// Python.

var pipFlags = getopt{short: "cdefiortw", long: names("--python --proxy --retries --timeout --exists-action " +
	"--trusted-host --cert --client-cert --use-feature --use-deprecated --keyring-provider --editable " +
	"--index-url --extra-index-url --find-links --global-option --config-settings --build-option --platform " +
	"--python-version --implementation --abi --upgrade-strategy --progress-bar --root-user-action --only-binary " +
	"--no-binary --format --path"), flags: names("--break-system-packages --global --site --user --pre " +
	"--prefer-binary"),
	roles: map[string]role{
		"--log": writesFile, "--log-file": writesFile, "--report": writesFile, "--root": writesFile,
		"--prefix": writesFile, "--target": writesFile, "-t": writesFile, "--src": writesFile, "-d": writesFile,
		"--dest": writesFile, "-w": writesFile, "--wheel-dir": writesFile, "--cache-dir": writesFile,
		"-o": writesFile, "--output": writesFile,
		"-r": sendsFile, "--requirement": sendsFile, "-c": sendsFile, "--constraint": sendsFile,
		"--editor": runsProgram,
	}}

func pip(c *call) effect {
	p := pipFlags.parse(c.args)
	e := pipVerb(c, p)
	c.useOptions(&e, p.opts, pipFlags.roles)
	for _, py := range p.values("--python") {
		// pip runs itself with this interpreter.
		c.run("pip --python", []arg{py, literal("-m"), literal("pip"), literal("--version")}, effect{})
	}
	return e
}

// pipGlobals are pip's options before a subcommand.
var pipGlobals = getopt{long: names("--python --cache-dir --log --proxy --retries --timeout --exists-action " +
	"--trusted-host --cert --client-cert --use-feature --use-deprecated --keyring-provider"), exact: true}

func pipVerb(c *call, p parsed) effect {
	sub, rest, ok := subcommand(c.args, pipGlobals)
	if !ok {
		return unknown("runs pip with a subcommand only known at run time")
	}
	switch sub {
	case "install", "download", "wheel", "lock":
		if p.has("--break-system-packages") {
			return install(airlock.TierPrivileged, "installs Python packages over the system's (--break-system-packages)")
		}
		return install(airlock.TierNetworkEgress, "installs Python packages")
	case "uninstall":
		return install(airlock.TierWrite, "removes Python packages")
	case "", "list", "show", "freeze", "check", "inspect", "debug", "help", "hash", "completion":
		return read("shows Python packages")
	case "search", "index":
		return net(airlock.ClassNetHTTP, "queries the package index")
	case "config", "cache":
		ops := operands(rest)
		switch {
		case sub == "config" && len(ops) > 0 && (ops[0].val == "get" || ops[0].val == "list" || ops[0].val == "debug"):
			return maySecret("prints pip's settings, whose index URLs may hold passwords")
		case len(ops) > 0 && (ops[0].val == "info" || ops[0].val == "dir" || ops[0].val == "list"):
			return read("shows pip's cache")
		case sub == "config" && p.has("--global", "--site"):
			return install(airlock.TierPrivileged, "changes the system's pip settings")
		case len(ops) > 0 && ops[0].val == "edit":
			return exec("opens pip's settings in an editor")
		}
		return write(airlock.ClassFSWrite, "changes pip settings or cache")
	}
	return install(airlock.TierNetworkEgress, "runs pip "+sub)
}

func pipx(c *call) effect {
	ops := c.operands()
	if len(ops) == 0 {
		return read("shows pipx help")
	}
	switch ops[0].val {
	case "install", "upgrade", "upgrade-all", "reinstall", "reinstall-all", "inject", "install-all":
		return install(airlock.TierNetworkEgress, "installs Python applications")
	case "run":
		return effect{class: airlock.ClassProcessExec, cap: airlock.CapNetworkEgress, tier: airlock.TierNetworkEgress, reason: "downloads and runs a Python application"}
	case "runpip":
		// pipx runpip VENV ARGS runs pip in an application's environment.
		i := slices.IndexFunc(c.args, func(a arg) bool { return a.val == "runpip" })
		if i+2 <= len(c.args) {
			return c.delegate(c.args[i+2:], pip)
		}
		return read("shows pipx help")
	case "uninstall", "uninstall-all", "uninject", "pin", "unpin":
		return install(airlock.TierWrite, "removes Python applications")
	case "ensurepath":
		return effect{class: airlock.ClassFSWrite, cap: airlock.CapHostAdmin, tier: airlock.TierPrivileged, reason: "edits shell start-up files"}
	case "list", "environment", "completions", "interpreter", "--version", "--help", "-h":
		return read("shows Python applications")
	}
	return exec("runs pipx " + ops[0].text)
}

func uv(c *call) effect {
	e := uvVerb(c)
	// --python names an interpreter uv runs; a path may be any program.
	if py, ok := c.value("--python", "-p"); ok && strings.Contains(py.val, "/") {
		c.run("uv --python", []arg{py, literal("--version")}, effect{})
	}
	return e
}

// uvGlobals are uv's options before a subcommand; uvRunOpts those of uv
// run before its command.
var (
	uvGlobals = getopt{long: names("--directory --project --cache-dir --config-file --color"), exact: true}
	uvRunOpts = getopt{short: "pw", long: names("--with --with-editable --with-requirements --python --project " +
		"--directory --package --env-file --extra --group --index --default-index --index-url --extra-index-url " +
		"--find-links --only-group --no-group"), exact: true}
)

func uvVerb(c *call) effect {
	sub, rest, ok := subcommand(c.args, uvGlobals)
	if !ok {
		return unknown("runs uv with a subcommand only known at run time")
	}
	switch sub {
	case "pip":
		return c.delegate(rest, pip)
	case "run":
		cmd := uvRunOpts.split(rest).ops
		if len(cmd) == 0 {
			return exec("runs the project")
		}
		c.run("uv run", cmd, effect{})
		return install(airlock.TierNetworkEgress, "syncs the project's environment")
	case "tool":
		if len(rest) > 0 && (rest[0].val == "run") {
			return c.delegate(rest[1:], npx)
		}
		if len(rest) > 0 && (rest[0].val == "list" || rest[0].val == "dir") {
			return read("lists tools")
		}
		return install(airlock.TierNetworkEgress, "installs tools")
	case "add", "remove", "sync", "lock", "python", "self", "export":
		return install(airlock.TierNetworkEgress, "changes project dependencies")
	case "publish":
		return publish("publishes a package")
	case "build", "init", "venv", "cache", "format":
		return write(airlock.ClassFSWrite, "writes project files")
	case "", "tree", "version", "help", "--version":
		return read("shows project information")
	}
	return exec("runs uv " + sub)
}

var poetry = lazy(func() rule {
	return use(exec("runs a poetry command")).withNone(read("shows poetry help")).on(
		on("add install update lock sync self source", install(airlock.TierNetworkEgress, "changes project dependencies")),
		on("remove", install(airlock.TierWrite, "removes a dependency")),
		onRule("run", toolExec("poetry run", 0)),
		onRule("shell", func(c *call) effect { return c.stdinCode("shell", true) }),
		onRule("env", pythonEnv("poetry env")),
		onRule("config", func(c *call) effect {
			if len(c.operands()) > 1 || c.has("--unset") {
				return write(airlock.ClassFSWrite, "changes poetry settings")
			}
			return read("shows poetry settings")
		}),
		on("build init new", write(airlock.ClassFSWrite, "writes project files")),
		on("publish", publish("publishes a package")),
		onRule("export", func(c *call) effect {
			e := write(airlock.ClassFSWrite, "exports the project's requirements")
			c.raiseWrites(&e, c.values("-o", "--output")...)
			return e
		}),
		on("show check version search about list help", read("shows project information")),
	)
})

// pythonEnv is poetry env: "use PYTHON" runs that interpreter to learn its
// version.
func pythonEnv(via string) rule {
	return func(c *call) effect {
		ops := c.operands()
		switch {
		case len(ops) > 1 && ops[0].val == "use":
			c.run(via+" use", []arg{ops[1], literal("--version")}, effect{})
			return write(airlock.ClassFSWrite, "changes the project's environment")
		case len(ops) > 0 && ops[0].val == "remove":
			return write(airlock.ClassFSWrite, "removes a virtual environment")
		}
		return read("shows the project's environments")
	}
}

var pipenv = lazy(func() rule {
	return use(exec("runs a pipenv command")).withNone(install(airlock.TierNetworkEgress, "installs dependencies")).on(
		on("install uninstall update sync lock upgrade", install(airlock.TierNetworkEgress, "changes project dependencies")),
		onRule("run", toolExec("pipenv run", 0)),
		onRule("shell", func(c *call) effect { return c.stdinCode("shell", true) }),
		on("graph check requirements scripts verify --venv --where --py", read("shows project information")),
		on("clean", write(airlock.ClassFSWrite, "removes packages")),
	)
})

var twineFlags = getopt{short: "rusicp",
	long: names("--repository --repository-url --username --password --identity --comment --config-file --cert " +
		"--client-cert"), flags: names("--sign"), roles: map[string]role{"--sign-with": runsProgram}}

func twine(c *call) effect {
	p := twineFlags.parse(c.args)
	ops := p.ops
	e := read("checks packages")
	if len(ops) > 0 && (ops[0].val == "upload" || ops[0].val == "register") {
		e = publish("publishes a package to PyPI")
		c.raiseReads(&e, ops[1:]...)
	}
	c.useOptions(&e, p.opts, twineFlags.roles)
	return e
}

var conda = lazy(func() rule {
	return use(exec("runs a conda command")).withNone(read("shows conda help")).on(
		onRule("install create update upgrade env", func(c *call) effect {
			e := install(airlock.TierNetworkEgress, "changes conda environments")
			c.raiseReads(&e, c.values("--file", "-f")...)
			c.raiseWrites(&e, c.values("--prefix", "-p")...)
			return e
		}),
		on("remove uninstall clean", install(airlock.TierWrite, "removes conda packages")),
		on("activate deactivate", write(airlock.ClassFSWrite, "activates a conda environment, changing PATH")),
		on("list info compare doctor notices --version", read("shows conda information")),
		on("search", net(airlock.ClassNetHTTP, "searches package channels")),
		on("config", write(airlock.ClassFSWrite, "changes conda settings")),
		on("init", effect{class: airlock.ClassFSWrite, cap: airlock.CapHostAdmin, tier: airlock.TierPrivileged, reason: "edits shell start-up files"}),
		onRule("shell", func(c *call) effect {
			// micromamba shell init edits start-up files, shell hook prints, and
			// shell alone starts a shell that reads its input.
			ops := c.operands()
			switch {
			case len(ops) > 0 && (ops[0].val == "init" || ops[0].val == "deinit" || ops[0].val == "reinit"):
				return effect{class: airlock.ClassFSWrite, cap: airlock.CapHostAdmin, tier: airlock.TierPrivileged, reason: "edits shell start-up files"}
			case len(ops) > 0 && ops[0].val == "hook":
				return read("prints shell code")
			}
			return c.stdinCode("shell", true)
		}),
		onRule("run", toolExec("conda run", 0)),
	)
})

// Ruby.

var gemFlags = getopt{short: "CgosvNPpd", long: names("--config-file --source --version --platform --trust-policy " +
	"--target --format"),
	roles: map[string]role{
		"-e": runsProgram, "--editor": runsProgram, "-i": writesFile, "--install-dir": writesFile,
		"-n": writesFile, "--bindir": writesFile, "--build-root": writesFile, "--file": sendsFile,
	}}

func gem(c *call) effect {
	p := gemFlags.parse(c.args)
	e := gemVerb(c, p)
	c.useOptions(&e, p.opts, gemFlags.roles)
	return e
}

func gemVerb(c *call, p parsed) effect {
	sub, rest, ok := subcommand(c.args, getopt{})
	if !ok {
		return unknown("runs gem with a subcommand only known at run time")
	}
	switch sub {
	case "install", "i", "update":
		if p.has("--user-install") {
			return install(airlock.TierNetworkEgress, "installs Ruby gems for the user")
		}
		return install(airlock.TierPrivileged, "installs Ruby gems system-wide")
	case "exec":
		// gem exec GEM [ARGS] installs GEM and runs its program.
		if ops := operands(rest); len(ops) > 0 {
			c.run("gem exec", ops, effect{})
		}
		return effect{class: airlock.ClassProcessExec, cap: airlock.CapNetworkEgress, tier: airlock.TierNetworkEgress, reason: "downloads and runs a gem"}
	case "push", "yank":
		return publish("publishes a gem")
	case "uninstall", "cleanup":
		return install(airlock.TierWrite, "removes Ruby gems")
	case "build", "sources", "cert", "signin", "signout", "unpack", "pristine", "rdoc", "generate_index", "rebuild":
		return write(airlock.ClassFSWrite, "changes gem files or settings")
	case "fetch", "mirror":
		return install(airlock.TierNetworkEgress, "downloads gems")
	case "server":
		return net(airlock.ClassNetConnect, "serves gems to network peers")
	case "owner":
		return net(airlock.ClassNetHTTP, "changes gem owners")
	case "open":
		return exec("opens a gem in an editor")
	case "search":
		return net(airlock.ClassNetHTTP, "searches RubyGems")
	case "", "list", "query", "info", "contents", "dependency", "environment", "env", "help", "outdated",
		"specification", "spec", "which", "stale", "check", "lock", "--version", "-v", "-h", "--help":
		return read("shows gem information")
	}
	return exec("runs gem " + sub)
}

var bundle = lazy(func() rule {
	return use(exec("runs a bundler command")).withNone(install(airlock.TierNetworkEgress, "installs gems")).on(
		on("install update add lock cache package outdated binstubs plugin", install(airlock.TierNetworkEgress, "installs gems")),
		onRule("exec", toolExec("bundle exec", 0)),
		onRule("console", func(c *call) effect { return c.stdinCode("Ruby", false) }),
		// The Gemfile is Ruby code, which these evaluate.
		on("list show info check platform doctor licenses viz", exec("evaluates the Gemfile, which is Ruby code")),
		on("version help --version -v", read("shows bundler information")),
		on("config remove clean init gem", write(airlock.ClassFSWrite, "changes bundler files or settings")),
	)
})

// PHP and .NET.

// composerGlobals are composer's options before a subcommand.
var composerGlobals = getopt{long: names("--working-dir -d"), exact: true}

func composer(c *call) effect {
	if sub, rest, ok := subcommand(c.args, composerGlobals); ok && sub == "global" {
		// composer global CMD runs CMD in the global project.
		return worse(c.delegate(rest, composerVerbs), install(airlock.TierNetworkEgress, "changes global PHP tools"))
	}
	return composerVerbs(c)
}

var composerVerbs = lazy(func() rule {
	return use(exec("runs a composer command")).withNone(read("shows composer help")).on(
		on("install i require update upgrade u remove rm create-project reinstall self-update selfupdate", install(airlock.TierNetworkEgress, "changes PHP dependencies")),
		onRule("exec", toolExec("composer exec", 0)),
		on("run-script run test", exec("runs a package script")),
		on("show info outdated validate depends why why-not licenses check-platform-reqs diagnose about help list audit", read("shows package information")),
		on("search", net(airlock.ClassNetHTTP, "searches Packagist")),
		on("dump-autoload dumpautoload init config clear-cache archive", write(airlock.ClassFSWrite, "changes project files")),
	)
})

var dotnet = lazy(func() rule {
	return use(exec("runs a dotnet command")).withNone(read("shows dotnet help")).on(
		onRule("build test run publish pack watch msbuild clean", func(c *call) effect {
			e := exec("builds or runs .NET code")
			c.raiseWrites(&e, c.values("-o", "--output", "--diag")...)
			return e
		}),
		on("restore add remove tool workload new", install(airlock.TierNetworkEgress, "changes .NET packages or tools")),
		on("list sln --info --version --list-sdks --list-runtimes help", read("shows .NET information")),
		onRule("fsi", func(c *call) effect {
			// F# interactive: a script, or code read from its input.
			if ops := c.operands(); len(ops) > 0 {
				return c.runsFile(ops[0], "F#", false)
			}
			return c.stdinCode("F#", false)
		}),
		onRule("dev-certs", func(c *call) effect {
			if c.has("--trust", "-t", "--clean", "-c") {
				return admin("changes the system's trusted certificates")
			}
			e := write(airlock.ClassFSWrite, "creates a development certificate")
			c.raiseWrites(&e, c.values("-ep", "--export-path")...)
			return e
		}),
		onRule("user-secrets", func(c *call) effect {
			if ops := c.operands(); len(ops) > 0 && ops[0].val == "list" {
				return effect{class: airlock.ClassCredentialsRead, cap: airlock.CapCredentialsRead, tier: airlock.TierPrivileged, reason: "prints the project's user secrets"}
			}
			return write(airlock.ClassFSWrite, "changes the project's user secrets")
		}),
		onRule("nuget", nuget),
	)
})

func nuget(c *call) effect {
	if ops := c.operands(); len(ops) > 0 && (ops[0].val == "push" || ops[0].val == "delete") {
		return publish("publishes or deletes a NuGet package")
	}
	return install(airlock.TierNetworkEgress, "manages NuGet packages")
}

// nodeInstall is bun's install family.
func nodeInstall(c *call) effect {
	if c.has("-g", "--global") {
		return install(airlock.TierPrivileged, "installs packages globally")
	}
	return install(airlock.TierNetworkEgress, "installs packages")
}

// Version managers.

// toolExecOpts are the options of a version manager's exec before the
// command it runs.
var toolExecOpts = getopt{short: "npe", long: names("--name --prefix"), exact: true}

// toolExec runs the words after skip operands as a command (poetry run X,
// bundle exec X).
func toolExec(via string, skip int) rule {
	return func(c *call) effect {
		rest := toolExecOpts.split(c.args).ops
		if len(rest) <= skip {
			return exec("runs a command in a tool's environment")
		}
		c.run(via, rest[skip:], effect{})
		return effect{none: true}
	}
}

// nvmRun is nvm run VERSION ARGS: node with ARGS.
func nvmRun(c *call) effect {
	rest := getopt{}.split(c.args).ops
	if len(rest) < 1 {
		return exec("runs Node.js")
	}
	c.run("nvm run", append([]arg{literal("node")}, rest[1:]...), effect{})
	return effect{none: true}
}

// asdfEnv is asdf env COMMAND [UTIL ARGS]: UTIL (env by default) in
// COMMAND's environment.
func asdfEnv(c *call) effect {
	if ops := c.operands(); len(ops) > 1 {
		return toolExec("asdf env", 1)(c)
	}
	return read("shows a tool's environment")
}

// miseExec is mise exec TOOL@VERSION... -- COMMAND, or -c 'COMMAND'; with
// neither it starts a shell.
func miseExec(c *call) effect {
	if cmd, ok := c.value("-c", "--command"); ok {
		c.runWords("mise exec -c", []arg{cmd}, c.in)
		return effect{none: true}
	}
	if i := slices.IndexFunc(c.args, func(a arg) bool { return a.val == "--" }); i >= 0 && i+1 < len(c.args) {
		c.run("mise exec", c.args[i+1:], effect{})
		return effect{none: true}
	}
	return c.stdinCode("shell", true)
}
