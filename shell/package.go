package shell

import (
	"slices"
	"strings"

	"github.com/airlock-dev/airlock"
)

// Package managers: system packages, language packages and toolchains.

var packageCommands = map[string]rule{
	"apt": sysPkg("apt", aptChange, aptRead), "apt-get": sysPkg("apt-get", aptChange, aptRead),
	"aptitude": sysPkg("aptitude", aptChange, aptRead), "apt-cache": fixed(read("shows package information")),
	"apt-mark": sysPkg("apt-mark", "hold unhold auto manual minimize-manual", "showhold showauto showmanual"),
	"dnf":      sysPkg("dnf", rpmChange, rpmRead), "yum": sysPkg("yum", rpmChange, rpmRead),
	"microdnf": sysPkg("microdnf", rpmChange, rpmRead), "tdnf": sysPkg("tdnf", rpmChange, rpmRead),
	"zypper": sysPkg("zypper", "install in remove rm update up dist-upgrade dup patch refresh ref addrepo ar removerepo rr modifyrepo mr addlock al removelock rl source-install si clean",
		"search se info if list-updates lu repos lr packages pa patches lp products pd locks ll what-provides wp"),
	"apk": sysPkg("apk", "add del upgrade update fix cache", "search info list policy version stats dot audit"),
	"snap": sysPkg("snap",
		"install remove refresh revert enable disable connect disconnect set unset alias unalias switch prefer restart start stop save restore forget", "list info find search version services logs connections changes change get known aliases warnings help"),
	"port": sysPkg("port",
		"install uninstall upgrade selfupdate sync activate deactivate clean load unload setrequested", "search info list installed outdated deps rdeps contents provides variants echo location dependents log help"),
	"flatpak": sysPkg("flatpak",
		"install uninstall update remote-add remote-delete remote-modify repair override mask pin", "list info search remotes remote-ls remote-info history ps --version documents permissions"),
	"emerge": sysPkg("emerge", "", "--search -s --info --pretend -p"),
	"pkg":    sysPkg("pkg", "install add delete remove upgrade update autoremove clean lock unlock", "info search query audit version which check stats help"),
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
		read("shows Node.js versions")), onRule("exec run", toolExec("nvm", 1))),
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
		read("shows tool versions")), onRule("exec", toolExec("asdf", 0))),
	"mise": use(write(airlock.ClassFSWrite, "changes tool versions")).on(on("install use upgrade plugins",
		install(airlock.TierNetworkEgress, "installs tools")), on("ls list current where which version doctor env",
		read("shows tool versions")), onRule("exec x", toolExec("mise", 0)), onRule("run r", fixed(exec("runs tasks")))),
}

const (
	aptChange = "install reinstall remove purge autoremove autopurge upgrade full-upgrade dist-upgrade update build-dep satisfy markauto unmarkauto hold unhold safe-upgrade clean autoclean"
	aptRead   = "search show list policy depends rdepends showsrc madison changelog showpkg stats dump pkgnames why why-not help moo -v --version"
	rpmChange = "install reinstall remove erase upgrade update downgrade autoremove distro-sync groupinstall groupremove groupupdate swap makecache clean config-manager module mark"
	rpmRead   = "search info list provides whatprovides repolist repoquery check-update deplist history help"
)

// sysPkg is a system package manager: changes are privileged, queries
// read. An unknown verb is treated as a change.
func sysPkg(tool, change, look string) rule {
	changes, looks := strings.Fields(change), strings.Fields(look)
	return func(c *call) effect {
		for _, a := range c.args {
			if a.static && slices.Contains(looks, a.val) {
				return read("shows package information")
			}
		}
		for _, op := range c.operands("-o", "-c", "-t", "--target-release", "-a", "--setopt", "--enablerepo",
			"--disablerepo", "--installroot", "--releasever") {
			if op.static && slices.Contains(changes, op.val) {
				return install(airlock.TierPrivileged, "changes system packages ("+tool+" "+op.val+")")
			}
			break
		}
		if len(c.operands()) == 0 && len(changes) > 0 {
			return read("shows package manager help")
		}
		return install(airlock.TierPrivileged, "changes system packages ("+tool+")")
	}
}

func pacman(c *call) effect {
	if len(c.args) == 0 {
		if c.name == "pacman" {
			return read("shows pacman help")
		}
		return install(airlock.TierPrivileged, "upgrades system packages")
	}
	op := c.args[0].val
	switch {
	case strings.HasPrefix(op, "-Q"), strings.HasPrefix(op, "-T"), strings.HasPrefix(op, "-F"),
		op == "--query", op == "-V", op == "--version", op == "-h", op == "--help":
		return read("shows package information")
	case strings.HasPrefix(op, "-S") && strings.ContainsAny(op[2:], "sigl") && !strings.ContainsAny(op[2:], "yu"):
		return read("shows package information")
	}
	return install(airlock.TierPrivileged, "changes system packages")
}

func dpkg(c *call) effect {
	if c.has("-l", "--list", "-L", "--listfiles", "-s", "--status", "-S", "--search", "-p", "--print-avail", "-c",
		"--contents", "-I", "--info", "--get-selections", "--print-architecture", "--compare-versions", "--version",
		"--help", "-C", "--audit", "-V", "--verify", "--print-foreign-architectures") {
		return read("shows package information")
	}
	return install(airlock.TierPrivileged, "changes system packages (dpkg)")
}

func rpm(c *call) effect {
	for _, a := range c.args {
		if !a.static || !strings.HasPrefix(a.val, "-") {
			continue
		}
		switch {
		case strings.HasPrefix(a.val, "-q"), strings.HasPrefix(a.val, "-V"), strings.HasPrefix(a.val, "-K"),
			a.val == "--query", a.val == "--verify", a.val == "--checksig", a.val == "--eval", a.val == "--version", a.val == "--help":
			return read("shows package information")
		}
	}
	return install(airlock.TierPrivileged, "changes system packages (rpm)")
}

var brew = use(exec("runs a brew command")).withNone(read("shows brew help")).on(
	on("install reinstall upgrade update tap bundle fetch", install(airlock.TierNetworkEgress, "installs packages with Homebrew")),
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

// npm covers npm, pnpm and yarn.
func npm(c *call) effect {
	sub, rest, ok := subcommand(c.args, optSpec{long: []string{"--prefix", "--cwd", "-C", "--filter", "--workspace", "-w", "--dir"}})
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
	case "dlx":
		return effect{class: airlock.ClassProcessExec, cap: airlock.CapNetworkEgress, tier: airlock.TierNetworkEgress, reason: "downloads and runs a package"}
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
				return write(airlock.ClassFSWrite, "changes package settings")
			}
		}
		return read("shows package information")
	case "init", "create", "innit":
		if len(operands(rest)) > 0 {
			return effect{class: airlock.ClassProcessExec, cap: airlock.CapNetworkEgress, tier: airlock.TierNetworkEgress, reason: "downloads and runs a project generator"}
		}
		return write(airlock.ClassFSWrite, "creates package files")
	case "pack", "shrinkwrap", "cache", "login", "adduser", "add-user", "logout", "set", "edit", "set-script":
		return write(airlock.ClassFSWrite, "changes package files or settings")
	}
	script := sub
	if ops := operands(rest); (sub == "run" || sub == "run-script") && len(ops) > 0 {
		script = ops[0].text
	}
	return exec("runs package script " + script)
}

// nodeInstall is bun's install family.
func nodeInstall(c *call) effect {
	if c.has("-g", "--global") {
		return install(airlock.TierPrivileged, "installs packages globally")
	}
	return install(airlock.TierNetworkEgress, "installs packages")
}

func pip(c *call) effect {
	sub, rest, ok := subcommand(c.args, optSpec{long: []string{"--python", "--cache-dir", "--log", "--proxy",
		"--retries", "--timeout", "--exists-action", "--trusted-host", "--cert", "--client-cert", "--use-feature",
		"--use-deprecated", "--keyring-provider"}})
	if !ok {
		return unknown("runs pip with a subcommand only known at run time")
	}
	switch sub {
	case "install", "download", "wheel", "lock":
		if hasOption(rest, "--break-system-packages") {
			return install(airlock.TierPrivileged, "installs Python packages over the system's (--break-system-packages)")
		}
		e := install(airlock.TierNetworkEgress, "installs Python packages")
		raiseWrite(&e, "", false)
		for _, d := range optValues(rest, false, "--root", "--prefix", "--target", "-t", "--src", "-d", "--dest") {
			if d.static {
				raiseWrite(&e, c.resolve(d.val), d.glob)
			}
		}
		return e
	case "uninstall":
		return install(airlock.TierWrite, "removes Python packages")
	case "", "list", "show", "freeze", "check", "inspect", "debug", "help", "hash", "completion":
		return read("shows Python packages")
	case "search", "index":
		return net(airlock.ClassNetHTTP, "queries the package index")
	case "config", "cache":
		if ops := operands(rest); len(ops) > 0 && (ops[0].val == "get" || ops[0].val == "list" || ops[0].val == "debug" || ops[0].val == "info" || ops[0].val == "dir") {
			return read("shows pip settings")
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
	case "uninstall", "uninstall-all", "uninject", "pin", "unpin":
		return install(airlock.TierWrite, "removes Python applications")
	case "ensurepath":
		return effect{class: airlock.ClassFSWrite, cap: airlock.CapHostAdmin, tier: airlock.TierPrivileged, reason: "edits shell start-up files"}
	}
	return read("shows Python applications")
}

func uv(c *call) effect {
	sub, rest, ok := subcommand(c.args, optSpec{long: []string{"--directory", "--project", "--cache-dir", "--config-file", "--color"}})
	if !ok {
		return unknown("runs uv with a subcommand only known at run time")
	}
	switch sub {
	case "pip":
		return c.delegate(rest, pip)
	case "run":
		_, cmd := splitOpts(rest, optSpec{short: "pw", long: []string{"--with", "--with-editable", "--with-requirements",
			"--python", "--project", "--directory", "--package", "--env-file", "--extra", "--group", "--index",
			"--default-index", "--index-url", "--extra-index-url", "--find-links", "--only-group", "--no-group"}})
		if len(cmd) == 0 {
			return exec("runs the project")
		}
		c.run("uv run", cmd, effect{})
		return install(airlock.TierNetworkEgress, "syncs the project's environment")
	case "tool":
		if len(rest) > 0 && (rest[0].val == "run") {
			return effect{class: airlock.ClassProcessExec, cap: airlock.CapNetworkEgress, tier: airlock.TierNetworkEgress, reason: "downloads and runs a tool"}
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

var poetry = use(exec("runs a poetry command")).withNone(read("shows poetry help")).on(
	on("add install update lock sync self source", install(airlock.TierNetworkEgress, "changes project dependencies")),
	on("remove", install(airlock.TierWrite, "removes a dependency")),
	onRule("run", toolExec("poetry run", 0)),
	on("shell", exec("opens a shell in the project's environment")),
	on("build init new", write(airlock.ClassFSWrite, "writes project files")),
	on("publish", publish("publishes a package")),
	on("show check env version search about list help config", read("shows project information")),
)

var pipenv = use(exec("runs a pipenv command")).withNone(install(airlock.TierNetworkEgress, "installs dependencies")).on(
	on("install uninstall update sync lock upgrade", install(airlock.TierNetworkEgress, "changes project dependencies")),
	onRule("run", toolExec("pipenv run", 0)),
	on("shell", exec("opens a shell in the project's environment")),
	on("graph check requirements scripts verify --venv --where --py", read("shows project information")),
	on("clean", write(airlock.ClassFSWrite, "removes packages")),
)

func twine(c *call) effect {
	if ops := c.operands(); len(ops) > 0 && ops[0].val == "upload" {
		return publish("publishes a package to PyPI")
	}
	return read("checks packages")
}

var conda = use(exec("runs a conda command")).withNone(read("shows conda help")).on(
	on("install create update upgrade env", install(airlock.TierNetworkEgress, "changes conda environments")),
	on("remove uninstall clean", install(airlock.TierWrite, "removes conda packages")),
	on("activate deactivate", write(airlock.ClassFSWrite, "activates a conda environment, changing PATH")),
	on("list info search compare doctor notices --version", read("shows conda information")),
	on("config", write(airlock.ClassFSWrite, "changes conda settings")),
	onRule("run", toolExec("conda run", 0)),
)

func gem(c *call) effect {
	sub, rest, ok := subcommand(c.args, optSpec{})
	if !ok {
		return unknown("runs gem with a subcommand only known at run time")
	}
	switch sub {
	case "install", "i", "update":
		if hasOption(rest, "--user-install") {
			return install(airlock.TierNetworkEgress, "installs Ruby gems for the user")
		}
		return install(airlock.TierPrivileged, "installs Ruby gems system-wide")
	case "push", "yank":
		return publish("publishes a gem")
	case "uninstall", "cleanup":
		return install(airlock.TierWrite, "removes Ruby gems")
	case "build", "sources", "cert", "signin", "signout":
		return write(airlock.ClassFSWrite, "changes gem files or settings")
	case "owner":
		return net(airlock.ClassNetHTTP, "changes gem owners")
	}
	return read("shows gem information")
}

var bundle = use(exec("runs a bundler command")).withNone(install(airlock.TierNetworkEgress, "installs gems")).on(
	on("install update add lock cache package outdated binstubs", install(airlock.TierNetworkEgress, "installs gems")),
	onRule("exec", toolExec("bundle exec", 0)),
	on("list show info check platform doctor version help", read("shows gem information")),
	on("config remove clean init gem", write(airlock.ClassFSWrite, "changes bundler files or settings")),
)

var composer = use(exec("runs a composer command")).withNone(read("shows composer help")).on(
	on("install i require update upgrade u remove rm create-project reinstall", install(airlock.TierNetworkEgress, "changes PHP dependencies")),
	on("global", install(airlock.TierNetworkEgress, "changes global PHP tools")),
	on("run-script run exec test", exec("runs a package script")),
	on("show info outdated validate depends why why-not licenses search check-platform-reqs diagnose about help list audit", read("shows package information")),
	on("dump-autoload dumpautoload init config clear-cache", write(airlock.ClassFSWrite, "changes project files")),
)

var dotnet = use(exec("runs a dotnet command")).withNone(read("shows dotnet help")).on(
	on("build test run publish pack watch msbuild clean", exec("builds or runs .NET code")),
	on("restore add remove tool workload new", install(airlock.TierNetworkEgress, "changes .NET packages or tools")),
	on("list sln --info --version --list-sdks --list-runtimes help", read("shows .NET information")),
	onRule("nuget", nuget),
)

func nuget(c *call) effect {
	if ops := c.operands(); len(ops) > 0 && (ops[0].val == "push" || ops[0].val == "delete") {
		return publish("publishes or deletes a NuGet package")
	}
	return install(airlock.TierNetworkEgress, "manages NuGet packages")
}

// toolExec runs the words after skip operands as a command (poetry run X,
// bundle exec X).
func toolExec(via string, skip int) rule {
	return func(c *call) effect {
		_, rest := splitOpts(c.args, optSpec{short: "npe", long: []string{"--name", "--prefix", "-n", "-p"}})
		if len(rest) <= skip {
			return exec("runs a command in a tool's environment")
		}
		c.run(via, rest[skip:], effect{})
		return effect{none: true}
	}
}

// npmRoles are npm's settings, given as options to npm, pnpm, yarn and npx,
// that name programs it runs, code it loads and places it writes.
var npmRoles = map[string]role{
	"--script-shell": runsCommand, "--shell": runsCommand, "--editor": runsCommand, "--browser": runsCommand,
	"--git": runsCommand, "--node-options": loadsLibrary, "--onload-script": loadsLibrary,
	"--userconfig": usesConfig, "--globalconfig": usesConfig, "--prefix": writesFile, "--cache": writesFile,
	"--logs-dir": writesFile, "--pack-destination": writesFile,
}
