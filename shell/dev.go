package shell

import (
	"slices"
	"strings"

	"github.com/airlock-dev/airlock"
)

// Development tools: gh, Go, Rust, interpreters, build tools and test
// runners, compilers, linters and formatters (git is in git.go).

var devCommands = map[string]rule{
	"git": git,
	"gh":  gh,
	"go":  goCmd, "gofmt": formatter("-w", "", "-l", "-d"), "goimports": formatter("-w", "", "-l", "-d"),
	"cargo": cargo, "rustfmt": formatter("", "--check"), "rustup": rustup,
	"python": python, "pypy": python,
	"node": interp(lang{name: "Node.js", code: "ep", longCode: []string{"--eval", "--print"},
		values: "rC", long: []string{"--require", "--import", "--loader", "--experimental-loader", "--conditions",
			"--env-file", "--input-type", "--title", "--inspect-port", "--stack-size"}, runs: []string{"--test", "--run"}}),
	"nodejs": interp(lang{name: "Node.js", code: "ep", longCode: []string{"--eval", "--print"},
		values: "rC", long: []string{"--require", "--import", "--loader"}}),
	"ruby":   interp(lang{name: "Ruby", code: "e", values: "rICEFK", inPlace: true}),
	"perl":   interp(lang{name: "Perl", code: "eE", values: "IMm", inPlace: true}),
	"php":    php,
	"lua":    interp(lang{name: "Lua", code: "e", values: "l"}),
	"luajit": interp(lang{name: "Lua", code: "e", values: "l"}),
	"java":   java,
	"deno":   deno,
	"bun":    bun,
	"ts-node": interp(lang{name: "TypeScript", code: "ep", longCode: []string{"--eval", "--print"},
		values: "rO", long: []string{"--require", "--compiler-options", "--project"}}),
	"tsx":     interp(lang{name: "TypeScript", code: "ep", longCode: []string{"--eval", "--print"}}),
	"esno":    interp(lang{name: "TypeScript", code: "e"}),
	"Rscript": interp(lang{name: "R", code: "e"}), "R": interp(lang{name: "R", code: "e"}),
	"julia": interp(lang{name: "Julia", code: "eE", longCode: []string{"--eval", "--print"}}),
	"swift": interp(lang{name: "Swift", code: "e"}), "kotlin": interp(lang{name: "Kotlin", code: "e"}),
	"scala": interp(lang{name: "Scala", code: "e"}), "groovy": interp(lang{name: "Groovy", code: "e"}),
	"elixir": interp(lang{name: "Elixir", code: "e", longCode: []string{"--eval"}}),
	"erl": interp(lang{name: "Erlang", longCode: []string{"-eval"}, long: []string{"-s", "-run",
		"-pa", "-pz", "-sname", "-name", "-setcookie"}}),
	"escript": interp(lang{name: "Erlang", code: ""}), "runghc": interp(lang{name: "Haskell", code: "e"}),
	"runhaskell": interp(lang{name: "Haskell", code: "e"}), "clojure": interp(lang{name: "Clojure", code: "e"}),
	"clj": interp(lang{name: "Clojure", code: "e"}), "bb": interp(lang{name: "Clojure", code: "e"}),
	"dart": interp(lang{name: "Dart", code: ""}), "osascript": interp(lang{name: "AppleScript", code: "e"}),
	"tclsh": interp(lang{name: "Tcl", code: ""}), "wish": interp(lang{name: "Tcl", code: ""}),
	"guile": interp(lang{name: "Scheme", code: "c"}), "racket": interp(lang{name: "Racket", code: "e"}),
	"sbcl": interp(lang{name: "Lisp", longCode: []string{"--eval", "--load", "--script"}}),
	"irb":  interp(lang{name: "Ruby", code: ""}), "iex": interp(lang{name: "Elixir", code: ""}),
	"ghci": interp(lang{name: "Haskell", code: ""}), "jshell": interp(lang{name: "Java", code: ""}),
	"make": build("runs build recipes"), "gmake": build("runs build recipes"), "bmake": build("runs build recipes"),
	"cmake": build("configures or runs a build"), "ninja": build("runs a build"), "meson": build("configures or runs a build"),
	"bazel": build("runs a build"), "bazelisk": build("runs a build"), "buck": build("runs a build"),
	"buck2": build("runs a build"), "gradle": gradle, "gradlew": gradle, "mvn": maven, "mvnw": maven,
	"ant": build("runs a build"), "sbt": build("runs a build"), "mill": build("runs a build"),
	"lein": build("runs a build"), "just": build("runs recipes"), "task": build("runs tasks"),
	"rake": build("runs tasks"), "invoke": build("runs tasks"), "scons": build("runs a build"),
	"xcodebuild": build("runs a build"), "tox": build("runs tests"), "nox": build("runs sessions"),
	"pytest": build("runs tests"), "py.test": build("runs tests"), "jest": build("runs tests"),
	"vitest": build("runs tests"), "mocha": build("runs tests"), "karma": build("runs tests"),
	"ava": build("runs tests"), "phpunit": build("runs tests"), "rspec": build("runs tests"),
	"cucumber": build("runs tests"), "playwright": build("runs tests"), "cypress": build("runs tests"),
	"mypy": build("type-checks code, loading its plugins"), "pylint": build("lints code, loading its plugins"),
	"pyright": build("type-checks code"), "eslint": build("lints code, loading its configuration"),
	"tsc": build("compiles TypeScript"), "golangci-lint": build("lints code"), "webpack": build("bundles code"),
	"vite": build("builds or serves code"), "esbuild": build("bundles code"), "rollup": build("bundles code"),
	"turbo": build("runs tasks"), "nx": build("runs tasks"), "lerna": build("runs tasks"),
	"gcc": compiler, "g++": compiler, "cc": compiler, "c++": compiler, "clang": compiler,
	"clang++": compiler, "rustc": compiler, "javac": compiler, "zig": build("compiles code"),
	"nasm": compiler, "as": compiler, "ld": compiler,
	"flake8": reads("lints code"), "pyflakes": reads("lints code"), "pycodestyle": reads("lints code"),
	"shellcheck": reads("lints shell scripts"), "hadolint": reads("lints Dockerfiles"), "yamllint": reads("lints YAML"),
	"markdownlint": reads("lints Markdown"), "staticcheck": reads("lints Go code"),
	"govulncheck": fixed(net(airlock.ClassNetHTTP, "checks for known vulnerabilities")),
	"ruff":        ruff, "black": formatter("", "--check", "--diff"), "isort": formatter("", "--check", "--check-only", "--diff", "-c"),
	"prettier": formatter("--write", "-w", "--check", "-c", "--list-different", "-l"), "autopep8": formatter("-i", "--in-place"),
	"yapf": formatter("-i", "--in-place"), "clang-format": formatter("-i", ""), "shfmt": formatter("-w", "--write"),
	"stylua": formatter("", "--check"), "dprint": formatter("fmt", "check"),
}

// gh, the GitHub CLI.
func gh(c *call) effect {
	ops := c.operands("-R", "--repo", "-X", "--method", "-f", "--field", "-F", "--raw-field", "-H", "--header",
		"-q", "--jq", "-t", "--template", "--input", "-b", "--body", "-T", "--title", "-B", "--base", "-l", "--label",
		"-a", "--assignee", "-m", "--milestone", "-L", "--limit", "-s", "--state", "-w", "--web")
	if len(ops) == 0 {
		return read("shows gh help")
	}
	group := ops[0].val
	verb := ""
	if len(ops) > 1 {
		verb = ops[1].val
	}
	destroy := effect{class: airlock.ClassNetHTTP, cap: airlock.CapNetworkEgress, tier: airlock.TierDestructive, reason: "deletes on GitHub (gh " + group + " " + verb + ")"}
	switch group {
	case "auth":
		if verb == "token" || verb == "status" && c.has("-t", "--show-token") {
			return effect{class: airlock.ClassCredentialsRead, cap: airlock.CapCredentialsRead, tier: airlock.TierPrivileged, reason: "prints the GitHub token"}
		}
		if verb == "status" {
			return net(airlock.ClassNetHTTP, "checks GitHub authentication")
		}
		return write(airlock.ClassFSWrite, "changes GitHub credentials")
	case "api":
		m, _ := c.value("-X", "--method")
		if strings.EqualFold(m.val, "DELETE") || !m.static && m.text != "" {
			destroy.reason = "sends a DELETE request to the GitHub API"
			return destroy
		}
		return net(airlock.ClassNetHTTP, "calls the GitHub API")
	case "alias":
		if verb == "set" && c.has("-s", "--shell") && len(ops) > 3 {
			c.runWords("gh alias", ops[3:4], input{})
		}
		return write(airlock.ClassFSWrite, "changes gh aliases")
	case "extension", "ext":
		if verb == "install" || verb == "upgrade" {
			return net(airlock.ClassPackageInstall, "installs a gh extension")
		}
	case "repo", "pr":
		if verb == "clone" || verb == "checkout" || verb == "co" || verb == "fork" {
			e := gitNet(airlock.ClassGitWrite, "clones or checks out from GitHub")
			if verb == "clone" && len(ops) > 3 {
				c.raiseWrites(&e, ops[3])
			}
			return e
		}
	}
	switch verb {
	case "delete", "remove", "rm", "archive", "unarchive":
		return destroy
	case "view", "list", "ls", "status", "diff", "checks", "watch", "download", "search":
		return net(airlock.ClassNetHTTP, "reads from GitHub")
	}
	return net(airlock.ClassNetHTTP, "changes things on GitHub (gh "+group+" "+verb+")")
}

func goCmd(c *call) effect {
	sub, rest, ok := subcommand(c.args, optSpec{short: "C"})
	if !ok {
		return unknown("runs go with a subcommand only known at run time")
	}
	ops := operands(rest, "-o", "-C", "-p", "-run", "-bench", "-count", "-timeout", "-tags", "-ldflags",
		"-gcflags", "-asmflags", "-mod", "-modfile", "-coverprofile", "-cpuprofile", "-memprofile", "-exec",
		"-toolexec", "-overlay", "-pgo", "-covermode", "-coverpkg", "-parallel", "-skip", "-shuffle", "-vet",
		"-fuzz", "-fuzztime", "-f", "-json", "-buildmode", "-compiler", "-installsuffix", "-pkgdir", "-trimpath")
	remote := slices.ContainsFunc(ops, func(a arg) bool { return strings.Contains(a.val, "@") })
	switch sub {
	case "", "help", "version", "doc", "list", "vet", "bug":
		return read("shows Go information")
	case "env":
		if hasOption(rest, "-w", "-u") {
			return write(airlock.ClassFSWrite, "changes Go settings")
		}
		return read("shows Go settings")
	case "get", "install":
		return install(airlock.TierNetworkEgress, "downloads and installs Go modules")
	case "mod":
		if len(ops) > 0 {
			switch ops[0].val {
			case "graph", "why", "verify":
				return read("shows module information")
			case "edit", "init":
				return write(airlock.ClassFSWrite, "changes go.mod")
			}
		}
		return install(airlock.TierNetworkEgress, "downloads Go modules")
	case "work", "fix", "fmt":
		return write(airlock.ClassFSWrite, "changes Go files")
	case "clean":
		return write(airlock.ClassFSWrite, "removes build outputs")
	case "telemetry":
		return write(airlock.ClassFSWrite, "changes Go telemetry settings")
	case "build", "test", "run", "generate", "tool":
		if x, ok := valueOf(rest, "-exec", "-toolexec"); ok {
			c.runWords("go "+sub+" -exec", []arg{x}, input{})
		}
		if remote && (sub == "run" || sub == "build") {
			return effect{class: airlock.ClassProcessExec, cap: airlock.CapNetworkEgress, tier: airlock.TierNetworkEgress, reason: "downloads and runs a Go module"}
		}
		e := exec("builds and runs Go code")
		if o, ok := valueOf(rest, "-o"); ok {
			c.raiseWrites(&e, o)
		}
		return e
	}
	return exec("runs go " + sub)
}

func valueOf(args []arg, opts ...string) (arg, bool) {
	vs := optValues(args, true, opts...)
	if len(vs) == 0 {
		return arg{}, false
	}
	return vs[0], true
}

var cargo = use(exec("runs a cargo command")).withNone(read("shows cargo help")).on(
	on("build b test t run r check c clippy doc d bench rustc rustdoc fix", exec("builds and runs Rust code")),
	on("install add update fetch vendor generate-lockfile", install(airlock.TierNetworkEgress, "downloads Rust crates")),
	on("publish yank", publish("publishes a crate to a registry")),
	on("owner login logout", net(airlock.ClassNetHTTP, "changes registry settings")),
	on("search info", net(airlock.ClassNetHTTP, "queries a registry")),
	on("remove rm uninstall clean new init", write(airlock.ClassFSWrite, "changes the project")),
	on("tree metadata locate-project pkgid verify-project version help --version -V read-manifest", read("shows project information")),
	onRule("fmt", formatter("", "--check")),
)

func rustup(c *call) effect {
	ops := c.operands()
	if len(ops) == 0 {
		return read("shows rustup help")
	}
	switch ops[0].val {
	case "show", "which", "help", "--version", "doc", "check":
		return read("shows toolchains")
	case "default", "override", "set", "completions":
		return write(airlock.ClassFSWrite, "changes toolchain settings")
	case "run":
		if len(ops) > 2 {
			c.run("rustup run", ops[2:], effect{})
		}
		return effect{none: true}
	}
	return install(airlock.TierNetworkEgress, "installs Rust toolchains")
}

// formatter rewrites files unless a check option is given; writeOpt, when
// set, is the option that makes it write.
func formatter(writeOpt string, checkOpts ...string) rule {
	return func(c *call) effect {
		if writeOpt != "" && !c.has(writeOpt) && !slices.ContainsFunc(c.operands(), func(a arg) bool { return a.val == writeOpt }) {
			return reads("checks formatting")(c)
		}
		for _, o := range checkOpts {
			if o != "" && (c.has(o) || slices.ContainsFunc(c.operands(), func(a arg) bool { return a.val == o })) {
				return reads("checks formatting")(c)
			}
		}
		e := write(airlock.ClassFSWrite, "formats files in place")
		c.raiseWrites(&e, c.operands()...)
		return e
	}
}

func ruff(c *call) effect {
	ops := c.operands()
	if len(ops) > 0 && ops[0].val == "format" && !c.has("--check", "--diff") || c.has("--fix") && !c.has("--diff") {
		e := write(airlock.ClassFSWrite, "rewrites Python files")
		c.raiseWrites(&e, ops...)
		return e
	}
	return reads("lints Python code")(c)
}

// build is a build tool or test runner: it runs the project's code.
func build(reason string) rule {
	return func(c *call) effect {
		e := exec(reason)
		c.raiseReads(&e, c.operands()...)
		return e
	}
}

func gradle(c *call) effect {
	for _, op := range c.operands() {
		if strings.HasPrefix(op.val, "publish") && !strings.Contains(op.val,
			"MavenLocal") || strings.Contains(op.val, ":publish") && !strings.Contains(op.val, "MavenLocal") {
			return publish("publishes artifacts")
		}
	}
	return exec("runs a build")
}

func maven(c *call) effect {
	for _, op := range c.operands("-f", "--file", "-s", "--settings", "-P", "--activate-profiles", "-pl",
		"--projects", "-T", "--threads", "-D") {
		if op.val == "deploy" || op.val == "release:perform" || strings.HasSuffix(op.val, ":deploy") {
			return publish("publishes artifacts")
		}
	}
	return exec("runs a build")
}

func compiler(c *call) effect {
	e := write(airlock.ClassFSWrite, "compiles code")
	c.raiseWrites(&e, c.values("-o", "-d")...)
	return e
}

// optName is an option word without its "=value".
func optName(v string) string {
	name, _, _ := strings.Cut(v, "=")
	return name
}

// lang describes an interpreter's options.
type lang struct {
	name     string   // the language, for reasons
	code     string   // short options whose value is code (python's c, node's e)
	longCode []string // long options whose value is code (--eval)
	values   string   // short options that take a value
	long     []string // long options that take a value
	inPlace  bool     // -i edits files in place (perl, ruby)
	runs     []string // options that run something without a script (node --test)
}

// interp is an interpreter: inline code or a script runs and cannot be
// inspected; code read from a pipe is unknown.
func interp(l lang) rule {
	return func(c *call) effect {
		args := c.args
		code, inPlace, info, runs := false, false, false, false
		i := 0
	loop:
		for i < len(args) {
			a := args[i]
			v := a.val
			if !a.static || len(v) < 2 || v[0] != '-' {
				break
			}
			i++
			switch {
			case v == "--":
				break loop
			case v == "--version" || v == "--help" || v == "-h" || v == "-v" || v == "-V" || v == "-version":
				info = true
			case slices.Contains(l.runs, v):
				runs = true
			case strings.HasPrefix(v, "--") || slices.Contains(l.long, optName(v)) || slices.Contains(l.longCode, optName(v)):
				name, _, eq := strings.Cut(v, "=")
				if slices.Contains(l.longCode, name) {
					code = true
					if !eq {
						i++
					}
					break loop
				}
				if !eq && slices.Contains(l.long, name) {
					i++
				}
			default:
				for j := 1; j < len(v); j++ {
					ch := v[j]
					if strings.IndexByte(l.code, ch) >= 0 {
						code = true
						if j == len(v)-1 {
							i++
						}
						break loop
					}
					if l.inPlace && ch == 'i' {
						inPlace = true
						break
					}
					if strings.IndexByte(l.values, ch) >= 0 {
						if j == len(v)-1 {
							i++
						}
						break
					}
				}
			}
		}
		ops := args[min(i, len(args)):]
		switch {
		case inPlace:
			e := write(airlock.ClassFSWrite, "edits files in place")
			c.raiseWrites(&e, ops...)
			return e
		case code:
			e := exec("runs " + l.name + " code Airlock cannot inspect")
			c.raiseReads(&e, ops...)
			return e
		case len(ops) > 0:
			e := c.runsFile(ops[0], l.name, false)
			c.raiseReads(&e, ops[1:]...)
			return e
		case runs:
			return exec("runs " + l.name + " code")
		case info:
			return read("prints version or help")
		}
		return c.stdinCode(l.name, false)
	}
}

func python(c *call) effect {
	args := c.args
	info := false
	i := 0
	for i < len(args) {
		a := args[i]
		v := a.val
		if !a.static || len(v) < 2 || v[0] != '-' {
			break
		}
		i++
		if v == "--" {
			break
		}
		if strings.HasPrefix(v, "--") {
			info = info || v == "--version" || v == "--help"
			if v == "--check-hash-based-pycs" {
				i++
			}
			continue
		}
		for j := 1; j < len(v); j++ {
			switch v[j] {
			case 'c':
				e := exec("runs Python code Airlock cannot inspect")
				if j == len(v)-1 {
					i++
				}
				c.raiseReads(&e, args[min(i, len(args)):]...)
				return e
			case 'm':
				mod := v[j+1:]
				if mod == "" && i < len(args) {
					mod = args[i].val
					if !args[i].static {
						return exec("runs a Python module only known at run time")
					}
					i++
				}
				return pythonModule(c, mod, args[min(i, len(args)):])
			case 'W', 'X':
				if j == len(v)-1 {
					i++
				}
				j = len(v)
			case 'V', 'h':
				info = true
			}
		}
	}
	ops := args[min(i, len(args)):]
	switch {
	case len(ops) > 0:
		e := c.runsFile(ops[0], "Python", false)
		c.raiseReads(&e, ops[1:]...)
		return e
	case info:
		return read("prints version or help")
	}
	return c.stdinCode("Python", false)
}

func pythonModule(c *call, mod string, rest []arg) effect {
	switch mod {
	case "pip", "pip3":
		return c.delegate(rest, pip)
	case "uv":
		return c.delegate(rest, uv)
	case "pipx":
		return c.delegate(rest, pipx)
	case "twine":
		return c.delegate(rest, twine)
	case "poetry":
		return c.delegate(rest, poetry)
	case "http.server", "SimpleHTTPServer", "smtpd", "aiosmtpd", "xmlrpc.server", "CGIHTTPServer":
		return net(airlock.ClassNetConnect, "serves the network")
	case "venv", "virtualenv":
		e := write(airlock.ClassFSWrite, "creates a virtual environment")
		c.raiseWrites(&e, operands(rest, "--prompt")...)
		return e
	case "pytest", "unittest", "doctest", "nose", "nose2", "tox", "nox", "coverage":
		return exec("runs tests")
	case "json.tool", "pydoc", "site", "sysconfig", "platform", "this", "tabnanny", "pyclbr", "tokenize",
		"ast", "dis", "calendar", "uuid", "timeit", "pstats", "tomllib", "sqlite3", "zipfile", "tarfile", "gzip", "base64":
		e := read("runs a standard library tool")
		c.raiseReads(&e, rest...)
		return e
	case "build", "compileall", "py_compile", "ensurepip":
		return write(airlock.ClassFSWrite, "builds or compiles Python code")
	}
	return exec("runs Python module " + mod)
}

func php(c *call) effect {
	switch {
	case c.has("-S"):
		return net(airlock.ClassNetConnect, "serves the network")
	case c.has("-l", "--syntax-check", "-v", "--version", "-i", "--info", "-m", "--modules"):
		return read("checks PHP code or prints information")
	}
	if f, ok := c.value("-f", "--file"); ok {
		return c.runsFile(f, "PHP", false)
	}
	return interp(lang{name: "PHP", code: "rBRE", values: "cdtz", long: []string{"--php-ini", "--define",
		"--docroot", "--zend-extension"}})(c)
}

func java(c *call) effect {
	ops := c.operands("-cp", "-classpath", "--class-path", "-p", "--module-path", "--add-opens", "--add-exports",
		"--add-modules", "--add-reads", "--limit-modules", "--upgrade-module-path", "--patch-module", "--source", "--release", "-d")
	if len(ops) == 0 && c.has("-version", "--version", "-showversion", "-help", "--help", "-h", "-?", "-X") {
		return read("prints version or help")
	}
	e := exec("runs Java code Airlock cannot inspect")
	c.raiseReads(&e, ops...)
	return e
}

func deno(c *call) effect {
	ops := c.operands()
	if len(ops) == 0 {
		if c.has("--version", "-V", "--help", "-h") {
			return read("prints version or help")
		}
		return c.stdinCode("JavaScript", false)
	}
	remote := slices.ContainsFunc(ops, func(a arg) bool {
		return strings.Contains(a.val, "://") || strings.HasPrefix(a.val, "npm:") || strings.HasPrefix(a.val, "jsr:")
	})
	switch ops[0].val {
	case "install", "cache", "upgrade", "add", "x", "jupyter", "outdated":
		return install(airlock.TierNetworkEgress, "downloads JavaScript modules")
	case "fmt":
		return formatter("", "--check")(c)
	case "lint", "check", "info", "doc", "types", "help", "completions", "coverage":
		return read("checks or describes code")
	case "compile", "bundle", "init", "vendor":
		return write(airlock.ClassFSWrite, "writes project files")
	case "publish":
		return publish("publishes a package")
	case "remove", "uninstall", "clean":
		return write(airlock.ClassFSWrite, "removes packages or caches")
	}
	if remote {
		return effect{class: airlock.ClassProcessExec, cap: airlock.CapNetworkEgress, tier: airlock.TierNetworkEgress, reason: "downloads and runs code"}
	}
	e := exec("runs JavaScript code Airlock cannot inspect")
	if c.has("-e", "--eval") || ops[0].val == "eval" {
		return e
	}
	c.raiseReads(&e, ops...)
	return e
}

func bun(c *call) effect {
	ops := c.operands()
	if len(ops) == 0 {
		switch {
		case c.has("-e", "--eval", "-p", "--print"):
			return exec("runs JavaScript code Airlock cannot inspect")
		case c.has("--version", "-v", "--help", "-h", "--revision"):
			return read("prints version or help")
		}
		return exec("runs bun")
	}
	switch ops[0].val {
	case "install", "i", "add", "a", "remove", "rm", "update", "link", "unlink", "pm", "outdated", "patch":
		return nodeInstall(c)
	case "x":
		return effect{class: airlock.ClassProcessExec, cap: airlock.CapNetworkEgress, tier: airlock.TierNetworkEgress, reason: "downloads and runs a package"}
	case "publish":
		return publish("publishes a package")
	case "create", "init", "upgrade":
		return install(airlock.TierNetworkEgress, "downloads templates or bun itself")
	case "build":
		return write(airlock.ClassFSWrite, "bundles code")
	}
	return exec("runs JavaScript code Airlock cannot inspect")
}
