package shell

import (
	"slices"
	"strings"
	"sync"

	"github.com/airlock-dev/airlock"
)

// Development tools: gh, Go, Rust, interpreters, build tools and test
// runners, compilers, linters and formatters (git is in git.go).

var devCommands = sync.OnceValue(func() map[string]rule {
	return map[string]rule{
		"git": git,
		"gh":  gh,
		"go":  goCmd, "gofmt": gofmt, "goimports": gofmt,
		"cargo": cargo, "rustfmt": rustfmt, "rustup": rustup,
		"python": python, "pypy": python,
		"node": interp(nodeLang), "nodejs": interp(nodeLang),
		"ruby": interp(lang{name: "Ruby", code: "e", values: "rICEFK", inPlace: true, libs: "r"}),
		"perl": interp(lang{name: "Perl", code: "eE", values: "IMm", inPlace: true, libs: "Mm", interactive: "d"}),
		"php":  php,
		"lua":  interp(luaLang), "luajit": interp(luaLang),
		"java": java,
		"deno": deno,
		"bun":  bun,
		"ts-node": interp(lang{name: "TypeScript", code: "ep", longCode: []string{"--eval", "--print"}, interactive: "i",
			longInteractive: []string{"--interactive"}, values: "rO", libs: "r", long: []string{"--require", "--compiler-options",
				"--project"}, longLibs: []string{"--require"}, listen: inspectOpts}),
		"tsx": interp(lang{name: "TypeScript", code: "ep", longCode: []string{"--eval", "--print"}, values: "r", libs: "r",
			long: []string{"--require", "--import"}, longLibs: []string{"--require", "--import"}, listen: inspectOpts}),
		"esno":    interp(lang{name: "TypeScript", code: "e", listen: inspectOpts}),
		"Rscript": interp(lang{name: "R", code: "e"}),
		"R":       interp(lang{name: "R", code: "e", longInteractive: []string{"--interactive"}}),
		"julia": interp(lang{name: "Julia", code: "eE", longCode: []string{"--eval", "--print"}, interactive: "i",
			values: "LJpCt", long: []string{"--load", "--sysimage", "--procs", "--machine-file", "--bind-to", "--cpu-target",
				"--threads", "--output-o", "--output-ji", "--output-bc", "--output-unopt-bc", "--output-asm", "--trace-compile"},
			connects: []string{"--machine-file"}, listen: []string{"--worker"}, writes: []string{"--output-o", "--output-ji",
				"--output-bc", "--output-unopt-bc", "--output-asm", "--trace-compile", "--code-coverage", "--track-allocation"}}),
		"swift": interp(lang{name: "Swift", code: "e"}), "kotlin": interp(lang{name: "Kotlin", code: "e"}),
		"scala": interp(lang{name: "Scala", code: "e"}),
		"groovy": interp(lang{name: "Groovy", code: "e", inPlace: true, long: []string{"-l", "-cp", "-classpath",
			"--classpath", "-c", "--encoding", "--configscript"}, listen: []string{"-l"}}),
		"elixir": interp(elixirLang), "iex": interp(iexLang),
		"erl": interp(lang{name: "Erlang", longCode: []string{"-eval", "-s", "-run"}, long: []string{"-pa", "-pz", "-sname",
			"-name", "-setcookie", "-remsh", "-boot", "-config", "-args_file"}, repl: true,
			batch: []string{"-noshell", "-noinput", "-detached"}, listen: []string{"-sname", "-name"}}),
		"escript": interp(lang{name: "Erlang", code: ""}), "runghc": interp(lang{name: "Haskell", code: "e"}),
		"runhaskell": interp(lang{name: "Haskell", code: "e"}), "clojure": interp(lang{name: "Clojure", code: "e"}),
		"clj":  interp(lang{name: "Clojure", code: "e"}),
		"bb":   interp(lang{name: "Clojure", code: "e", listen: []string{"nrepl-server", "socket-repl", "--nrepl-server", "--socket-repl"}}),
		"dart": dart, "osascript": interp(lang{name: "AppleScript", code: "e"}),
		"tclsh": interp(lang{name: "Tcl", code: ""}), "wish": interp(lang{name: "Tcl", code: ""}),
		"guile":  interp(lang{name: "Scheme", code: "c", values: "lseLxC", listen: []string{"--listen"}}),
		"racket": interp(lang{name: "Racket", code: "e", values: "ftrlkmp", interactive: "i", longInteractive: []string{"--repl"}}),
		"sbcl": interp(lang{name: "Lisp", longCode: []string{"--eval", "--load"}, repl: true,
			batch: []string{"--script", "--non-interactive", "--quit"}}),
		"irb": interp(lang{name: "Ruby", code: "", values: "rI", libs: "r"}), "ghci": interp(lang{name: "Haskell", code: "e",
			repl: true, codeExits: true}),
		"jshell": jshell,
		"make":   makeRule, "gmake": makeRule, "bmake": makeRule,
		"cmake": cmake, "ninja": ninja, "meson": meson, "bazel": bazel, "bazelisk": bazel,
		"buck": build("runs a build"), "buck2": build("runs a build"), "gradle": gradle, "gradlew": gradle,
		"mvn": maven, "mvnw": maven, "ant": build("runs a build", "-logfile", "-l"), "sbt": sbt,
		"mill": sbt, "lein": sbt, "just": just, "task": task,
		"rake": build("runs tasks"), "invoke": build("runs tasks"), "scons": build("runs a build"),
		"xcodebuild": build("runs a build"), "tox": build("runs tests"), "nox": build("runs sessions"),
		"pytest": pytest, "py.test": pytest, "jest": build("runs tests", "--outputFile", "--coverageDirectory"),
		"vitest": serves("runs tests", []string{"--ui", "--api"}, "--outputFile"),
		"mocha":  build("runs tests"), "karma": serves("runs tests", []string{"start", "run"}),
		"ava": build("runs tests"), "phpunit": build("runs tests", "--log-junit", "--log-teamcity", "--testdox-html",
			"--testdox-text", "--testdox-xml", "--coverage-html", "--coverage-clover", "--coverage-xml", "--coverage-text",
			"--coverage-php", "--coverage-cobertura", "--coverage-crap4j"),
		"rspec": build("runs tests", "-o", "--out"), "cucumber": build("runs tests", "-o", "--out"),
		"playwright": playwright, "cypress": serves("runs tests", []string{"open", "install"}),
		"mypy": build("type-checks code, loading its plugins", "--junit-xml", "--html-report", "--txt-report",
			"--xml-report", "--linecount-report", "--linecoverage-report", "--memory-xml-report", "--cobertura-xml-report",
			"--lineprecision-report", "--any-exprs-report", "--xslt-html-report", "--xslt-txt-report", "--cache-dir"),
		"pylint": build("lints code, loading its plugins", "--output"), "pyright": build("type-checks code"),
		"eslint": build("lints code, loading its configuration", "-o", "--output-file", "--cache-location"),
		"tsc": build("compiles TypeScript", "--outFile", "--outDir", "--out", "--declarationDir", "--tsBuildInfoFile",
			"--generateTrace", "--generateCpuProfile"),
		"golangci-lint": build("lints code"),
		"webpack":       serves("bundles code", []string{"serve", "s", "server"}, "-o", "--output-path"),
		"vite":          serves("builds or serves code", []string{"", "dev", "serve", "preview"}, "--outDir"),
		"esbuild":       serves("bundles code", []string{"--serve", "--servedir"}, "--outfile", "--outdir"),
		"rollup":        build("bundles code", "-o", "--file", "-d", "--dir"),
		"turbo":         monorepo, "nx": monorepo, "lerna": monorepo,
		"gcc": cc, "g++": cc, "cc": cc, "c++": cc, "clang": cc, "clang++": cc, "rustc": rustc, "javac": javac,
		"zig": zig, "nasm": asm, "as": asm, "ld": ld,
		"flake8": lint("lints code", "--output-file"), "pyflakes": reads("lints code"), "pycodestyle": reads("lints code"),
		"shellcheck": reads("lints shell scripts"), "hadolint": reads("lints Dockerfiles"), "yamllint": reads("lints YAML"),
		"markdownlint": markdownlint, "staticcheck": staticcheck,
		"govulncheck": fixed(net(airlock.ClassNetHTTP, "checks for known vulnerabilities")),
		"ruff":        ruff, "black": formatter("", "--check --diff --code -c"),
		"isort":    formatter("", "--check --check-only --diff -c --stdout"),
		"prettier": configured(formatter("--write -w", "")), "autopep8": formatter("-i --in-place", ""),
		"yapf": formatter("-i --in-place", ""), "clang-format": formatter("-i", ""), "shfmt": formatter("-w --write", ""),
		"stylua": formatter("", "--check"), "dprint": configured(formatter("fmt", "check")),
	}
})

// gh, the GitHub CLI. What it sends it reads (api --input, -F key=@file,
// gist create, release upload), so a secret it names is read out; what it
// downloads it writes where -D or -O says.
func gh(c *call) effect {
	e := ghCommand(c)
	c.raiseSent(&e)
	c.writesTo(&e, "downloads files where an option says", c.values("-D", "--dir", "-O", "--output")...)
	return e
}

func ghCommand(c *call) effect {
	ops := c.operands("-R", "--repo", "-X", "--method", "-f", "--field", "-F", "--raw-field", "-H", "--header",
		"-q", "--jq", "-t", "--template", "--input", "-b", "--body", "-T", "--title", "-B", "--base", "-l", "--label",
		"-a", "--assignee", "-m", "--milestone", "-L", "--limit", "-s", "--state", "-w", "--web", "-D", "--dir",
		"-O", "--output", "-p", "--pattern", "--body-file", "-c", "--codespace")
	if len(ops) == 0 {
		return read("shows gh help")
	}
	group := ops[0].val
	verb := ""
	if len(ops) > 1 {
		verb = ops[1].val
	}
	destroy := effect{class: airlock.ClassNetHTTP, cap: airlock.CapNetworkEgress, tier: airlock.TierDestructive, reason: "deletes on GitHub (gh " + group + " " + verb + ")"}
	token := effect{class: airlock.ClassCredentialsRead, cap: airlock.CapCredentialsRead, tier: airlock.TierPrivileged, reason: "prints the GitHub token"}
	switch group {
	case "auth":
		switch {
		case verb == "token" || verb == "status" && c.has("-t", "--show-token"):
			return token
		case verb == "git-credential" && len(ops) > 2 && ops[2].val == "get":
			return token
		case verb == "status":
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
		switch {
		case verb == "set" && len(ops) > 3 && (c.has("-s", "--shell") || strings.HasPrefix(ops[3].val, "!")):
			c.runWords("gh alias", []arg{literal(strings.TrimPrefix(ops[3].val, "!"))}, input{})
			if !ops[3].static {
				c.runUnknown("gh alias", ops[3].text, "defines an alias only known at run time")
			}
		case verb == "set" && len(ops) > 3 && ops[3].val == "-", verb == "import":
			return exec("imports gh aliases, which may run shell commands")
		case verb == "list" || verb == "ls":
			return read("lists gh aliases")
		}
		return write(airlock.ClassFSWrite, "changes gh aliases")
	case "config":
		switch verb {
		case "get", "list", "ls":
			return read("shows gh settings")
		case "set":
			if len(ops) > 3 && (ops[2].val == "pager" || ops[2].val == "editor" || ops[2].val == "browser") {
				c.runWords("gh config "+ops[2].val, ops[3:4], input{})
			}
		}
		return write(airlock.ClassFSWrite, "changes gh settings")
	case "ssh-key", "gpg-key":
		if verb == "add" {
			return infraChange(airlock.TierPrivileged, "adds a key that grants access to the GitHub account")
		}
	case "extension", "ext":
		if verb == "install" || verb == "upgrade" {
			return net(airlock.ClassPackageInstall, "installs a gh extension")
		}
	case "repo", "pr":
		if group == "repo" && verb == "deploy-key" && len(ops) > 2 && ops[2].val == "add" {
			return infraChange(airlock.TierPrivileged, "adds a key that grants access to the repository")
		}
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

// goOutputs are the go command's flags whose value is a file or folder it
// writes.
var goOutputs = names("-o -coverprofile -cpuprofile -memprofile -blockprofile -mutexprofile -trace -outputdir " +
	"-test.coverprofile -test.cpuprofile -test.memprofile -test.blockprofile -test.mutexprofile -test.trace " +
	"-test.outputdir -test.testlogfile -debug-trace -debug-runtime-trace")

// goBuildFlags are the go command's flags that take a value.
var goBuildFlags = goOptions(slices.Concat(goOutputs, names("-C -p -run -bench -count -timeout -tags -ldflags "+
	"-gcflags -asmflags -mod -modfile -exec -toolexec -vettool -overlay -pgo -covermode -coverpkg -parallel -skip "+
	"-shuffle -vet -fuzz -fuzztime -f -buildmode -compiler -installsuffix -pkgdir -http"))...)

// goFlag reports whether a Go boolean flag is set: -w, --w, -w=true, not
// -w=false.
func goFlag(p parsed, name string) bool {
	for _, o := range p.opts {
		if o.name == name && !(o.has && (o.val.val == "false" || o.val.val == "0")) {
			return true
		}
	}
	return false
}

// goEnvPrograms are the go env settings that make later go commands run
// other programs (CC, GOFLAGS=-toolexec=...) or fetch code from elsewhere.
var goEnvPrograms = stringSet("CC", "CXX", "FC", "AR", "PKG_CONFIG", "GOFLAGS", "GOTOOLCHAIN", "GOPROXY", "GONOSUMDB",
	"GONOSUMCHECK", "GOSUMDB", "GOINSECURE", "GOPRIVATE", "GONOPROXY", "GOVCS", "GOENV", "CGO_CFLAGS_ALLOW",
	"CGO_CPPFLAGS_ALLOW", "CGO_CXXFLAGS_ALLOW", "CGO_LDFLAGS_ALLOW", "CGO_FFLAGS_ALLOW")

// goCmd: the go command. Whatever the subcommand, its build flags may name
// programs it runs (-exec around test binaries, -toolexec around every
// tool, -vettool, -ldflags=-extld) and files it writes (-o, profiles).
func goCmd(c *call) effect {
	sub, rest, ok := subcommand(c.args, getopt{short: "C"})
	if !ok {
		return unknown("runs go with a subcommand only known at run time")
	}
	p := goBuildFlags.parse(rest)
	for _, f := range []string{"-exec", "-toolexec", "-vettool"} {
		for _, x := range p.values(f) {
			c.runWords("go "+sub+" "+f, []arg{x}, input{})
		}
	}
	for _, x := range p.values("-ldflags") {
		fields := strings.Fields(x.val)
		for i, f := range fields {
			name, val, eq := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(f, "-"), "-"), "=")
			if name != "extld" && name != "extar" {
				continue
			}
			if !eq && i+1 < len(fields) {
				val = fields[i+1]
			}
			c.runScript("go "+sub+" -ldflags=-"+name, strings.Trim(val, `"'`), input{})
		}
	}
	e := goSub(c, sub, p)
	c.writesTo(&e, "writes files where -o or a profile flag says", p.values(goOutputs...)...)
	c.raiseNetCode(&e) // go run MODULE@VERSION ~/.ssh/id_rsa
	return e
}

func goSub(c *call, sub string, p parsed) effect {
	ops := p.ops
	remote := slices.ContainsFunc(ops, func(a arg) bool { return strings.Contains(a.val, "@") })
	switch sub {
	case "", "help", "version":
		return read("shows Go information")
	case "doc":
		if p.has("-http") {
			return net(airlock.ClassNetConnect, "serves documentation over HTTP")
		}
		return read("shows Go documentation")
	case "list":
		if goFlag(p, "-m") && (goFlag(p, "-u") || goFlag(p, "-versions") || goFlag(p, "-retracted") || remote) {
			return net(airlock.ClassNetHTTP, "queries the module proxy")
		}
		return read("lists Go packages")
	case "vet":
		if goFlag(p, "-fix") {
			return write(airlock.ClassFSWrite, "applies vet's fixes to Go files")
		}
		return read("checks Go code")
	case "bug":
		return net(airlock.ClassNetHTTP, "opens a browser to report an issue, with details of this system")
	case "env":
		if p.has("-w", "-u") {
			for _, op := range ops {
				if key, _, _ := strings.Cut(op.val, "="); goEnvPrograms[key] {
					return env("sets " + key + ", which makes later go commands run or fetch other code")
				}
			}
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
				e := write(airlock.ClassFSWrite, "changes go.mod")
				c.raiseWrites(&e, ops[1:]...)
				return e
			}
		}
		return install(airlock.TierNetworkEgress, "downloads Go modules")
	case "work", "fix", "fmt":
		return write(airlock.ClassFSWrite, "changes Go files")
	case "clean":
		return write(airlock.ClassFSWrite, "removes build outputs")
	case "telemetry":
		return write(airlock.ClassFSWrite, "changes Go telemetry settings")
	case "tool":
		if len(ops) > 0 && (ops[0].val == "trace" || ops[0].val == "pprof" && p.has("-http")) {
			return net(airlock.ClassNetConnect, "serves a profile or trace viewer over HTTP")
		}
		return exec("runs a Go tool")
	case "build", "test", "run", "generate":
		if remote && (sub == "run" || sub == "build") {
			return effect{class: airlock.ClassProcessExec, cap: airlock.CapNetworkEgress, tier: airlock.TierNetworkEgress, reason: "downloads and runs a Go module"}
		}
		return exec("builds and runs Go code")
	}
	return exec("runs go " + sub)
}

var gofmtFlags = goOptions(names("-r -cpuprofile -memprofile -local -srcdir -memrate -trace")...)

// gofmt and goimports rewrite files with -w; their flags are Go's (--w),
// and profiles they write count.
func gofmt(c *call) effect {
	p := gofmtFlags.parse(c.args)
	e := read("checks formatting")
	c.raiseReads(&e, p.ops...)
	if goFlag(p, "-w") {
		e = write(airlock.ClassFSWrite, "formats files in place")
		c.raiseWrites(&e, p.ops...)
	}
	c.writesTo(&e, "writes a profile", p.values("-cpuprofile", "-memprofile", "-trace")...)
	return e
}

var cargoVerbs = lazy(func() rule {
	return use(exec("runs a cargo command")).withNone(read("shows cargo help")).with(cargoOpts).on(
		on("build b test t run r check c clippy doc d bench rustc rustdoc fix package", exec("builds and runs Rust code")),
		on("install add update fetch vendor generate-lockfile", install(airlock.TierNetworkEgress, "downloads Rust crates")),
		on("publish yank", publish("publishes a crate to a registry")),
		on("owner login logout", net(airlock.ClassNetHTTP, "changes registry settings")),
		on("search info", net(airlock.ClassNetHTTP, "queries a registry")),
		on("remove rm uninstall clean new init", write(airlock.ClassFSWrite, "changes the project")),
		on("tree metadata locate-project pkgid verify-project version help --version -V read-manifest", read("shows project information")),
		onRule("fmt", formatter("", "--check")),
	)
})

var cargoOpts = getopt{short: "ZC", long: names("--config --color --explain"), exact: true}

// cargo: its subcommands, and what its options change: --config settings
// name programs it runs (runners, linkers, rustc wrappers) or where it
// fetches code; +toolchain picks the cargo that runs; output folders.
func cargo(c *call) effect {
	args := c.args
	toolchain := toolchainOf(args)
	if toolchain != "" {
		args = args[1:]
	}
	e := c.delegate(args, cargoVerbs)
	if toolchain != "" {
		e = worse(e, customToolchain("cargo", toolchain))
	}
	for _, cfg := range optValues(args, "--config") {
		e = worse(e, c.cargoConfig(cfg))
	}
	c.writesTo(&e, "writes build outputs where an option says", optValues(args, "--target-dir", "--artifact-dir",
		"--out-dir", "--root", "--lockfile-path")...)
	if rest := cargoOpts.split(args).ops; len(rest) > 1 && rest[0].static {
		switch rest[0].val {
		case "new", "init", "vendor":
			c.raiseWrites(&e, operands(rest[1:], "--name", "--vcs", "--edition", "--registry", "-s", "--sync")...)
		case "rustc", "rustdoc":
			// Words after -- go to rustc.
			if flags := gitAfter(rest, "--"); len(flags) > 0 {
				c.rustcFlags(&e, "cargo "+rest[0].val, append(optValues(flags, "-C", "--codegen"), optValues(flags, "-Z")...))
				c.writesTo(&e, "writes compiler output where rustc's options say", optValues(flags, "-o", "--out-dir")...)
			}
		}
	}
	return e
}

// toolchainOf returns the toolchain of a rustup proxy's "+toolchain"
// first argument (cargo +nightly build), or "".
func toolchainOf(args []arg) string {
	if len(args) > 0 && args[0].static && strings.HasPrefix(args[0].val, "+") {
		return args[0].val[1:]
	}
	return ""
}

// customToolchain is what running a rustup toolchain's program costs: a
// release channel is rustup's own, any other name is a toolchain linked to
// a folder (rustup toolchain link), whose programs Airlock cannot see.
func customToolchain(prog, name string) effect {
	channel, _, _ := strings.Cut(name, "-")
	if channel == "stable" || channel == "beta" || channel == "nightly" || channel != "" && strings.Trim(channel, "0123456789.") == "" {
		return effect{}
	}
	return exec("runs the " + prog + " of toolchain " + name + ", which may be any program")
}

// cargoConfig analyses a --config value: KEY=VALUE, or a file of settings.
func (c *call) cargoConfig(cfg arg) effect {
	if !cfg.static {
		return exec("loads cargo settings only known at run time, which can name programs to run")
	}
	key, val, ok := strings.Cut(cfg.val, "=")
	key = strings.TrimSpace(strings.ToLower(key))
	if !ok || strings.ContainsAny(key, "/ ") {
		e := exec("loads cargo settings from " + cfg.text + ", which can name programs to run")
		c.raiseReads(&e, cfg)
		return e
	}
	words := tomlStrings(val)
	last := key[strings.LastIndexByte(key, '.')+1:]
	switch {
	case strings.HasPrefix(key, "alias."):
		c.runScript("cargo --config "+key, "cargo "+strings.Join(words, " "), input{})
	case last == "runner" || last == "linker" || last == "ar" || last == "rustc" || last == "rustdoc" ||
		last == "rustc-wrapper" || last == "rustc-workspace-wrapper" || last == "browser" ||
		strings.HasSuffix(last, "credential-provider") || strings.HasSuffix(last, "credential-providers"):
		c.runScript("cargo --config "+key, strings.Join(words, " "), input{})
	case last == "rustflags" || last == "rustdocflags":
		var settings []arg
		for i, w := range words {
			if v, ok := strings.CutPrefix(w, "-C"); ok {
				if v == "" && i+1 < len(words) {
					v = words[i+1]
				}
				settings = append(settings, literal(v))
			}
		}
		e := effect{}
		c.rustcFlags(&e, "cargo --config "+key, settings)
		return e
	case strings.HasPrefix(key, "env."):
		if r, bad := sensitiveVar(strings.TrimPrefix(cfg.val[:strings.IndexByte(cfg.val, '=')], "env.")); bad {
			return env(r)
		}
	case strings.HasPrefix(key, "source.") || strings.HasPrefix(key, "patch.") || strings.HasPrefix(key, "registries.") ||
		strings.HasPrefix(key, "registry.") || key == "paths":
		return env("changes where cargo fetches code from (" + key + ")")
	case last == "target-dir" || last == "root" || last == "build-dir" || last == "artifact-dir":
		e := write(airlock.ClassFSWrite, "writes build outputs where "+key+" says")
		c.raiseWrites(&e, literal(strings.Join(words, "")))
		return e
	}
	return effect{}
}

// tomlStrings returns the strings of a TOML value: "a b", ['a', 'b'], or
// a bare word.
func tomlStrings(v string) []string {
	v = strings.TrimSpace(v)
	if !strings.ContainsAny(v, `"'`) {
		return strings.Fields(strings.Trim(v, "[]"))
	}
	var out []string
	for {
		i := strings.IndexAny(v, `"'`)
		if i < 0 {
			return out
		}
		q := v[i]
		j := strings.IndexByte(v[i+1:], q)
		if j < 0 {
			return append(out, v[i+1:])
		}
		out = append(out, v[i+1:i+1+j])
		v = v[i+2+j:]
	}
}

func rustup(c *call) effect {
	ops := c.operands()
	if len(ops) == 0 {
		return read("shows rustup help")
	}
	switch ops[0].val {
	case "show", "which", "help", "--version", "doc", "completions":
		return read("shows toolchains")
	case "default", "override", "set":
		// A toolchain given as a path is a folder of programs rustup runs.
		if slices.ContainsFunc(ops[1:], func(a arg) bool { return strings.Contains(a.val, "/") }) || c.has("--path") {
			return env("makes rustup run the programs of a folder as the toolchain")
		}
		return write(airlock.ClassFSWrite, "changes toolchain settings")
	case "toolchain":
		if len(ops) > 1 && ops[1].val == "link" {
			return env("links a folder as a toolchain: rustup then runs its programs as rustc, cargo and the rest")
		}
		if len(ops) > 1 && (ops[1].val == "list" || ops[1].val == "help") {
			return read("lists toolchains")
		}
	case "self":
		if len(ops) > 1 && ops[1].val == "uninstall" {
			return adminDestroy("removes rustup and every toolchain")
		}
	case "run":
		// The command is the words after the toolchain, options included.
		for i, a := range c.args {
			if a.static && a.val == "run" {
				rest := getopt{}.split(c.args[i+1:]).ops
				if len(rest) > 1 {
					c.run("rustup run", rest[1:], effect{})
				}
				if len(rest) > 0 && rest[0].static {
					if e := customToolchain("program", rest[0].val); e.tier > 0 {
						return e
					}
				}
				return effect{none: true}
			}
		}
	}
	return install(airlock.TierNetworkEgress, "installs Rust toolchains")
}

// formatter rewrites files unless a check option is given; writes, when
// set, are the options that make it write (and then it writes whatever else
// is given: prettier -l --write lists and rewrites). Both are lists of
// options separated by spaces.
func formatter(writes, checks string) rule {
	given := func(c *call, opts string) bool {
		return slices.ContainsFunc(strings.Fields(opts), func(o string) bool {
			return c.has(o) || slices.ContainsFunc(c.operands(), func(a arg) bool { return a.val == o })
		})
	}
	return func(c *call) effect {
		if writes != "" && !given(c, writes) || writes == "" && given(c, checks) {
			return reads("checks formatting")(c)
		}
		e := write(airlock.ClassFSWrite, "formats files in place")
		c.raiseWrites(&e, c.operands()...)
		return e
	}
}

// rustfmt formats in place; +toolchain picks the rustfmt that runs.
func rustfmt(c *call) effect {
	t := toolchainOf(c.args)
	if t == "" {
		return formatter("", "--check")(c)
	}
	return worse(c.delegate(c.args[1:], formatter("", "--check")), customToolchain("rustfmt", t))
}

// lint reads the files it is given; outs are options naming a report file.
func lint(reason string, outs ...string) rule {
	return func(c *call) effect {
		e := read(reason)
		c.raiseReads(&e, c.operands(outs...)...)
		c.writesTo(&e, "writes its report into a file", c.values(outs...)...)
		return e
	}
}

// markdownlint: --fix rewrites files, -o writes a report, and rules or a
// configuration in JavaScript run code.
func markdownlint(c *call) effect {
	e := lint("lints Markdown", "-o", "--output", "-c", "--config", "-r", "--rules", "-i", "--ignore", "-p", "--ignore-path")(c)
	js := slices.ContainsFunc(c.values("-c", "--config"), func(a arg) bool {
		return strings.HasSuffix(a.val, "js") || !a.static
	})
	if js || len(c.values("-r", "--rules")) > 0 {
		e = worse(e, exec("runs custom rules or a configuration written in JavaScript"))
	}
	if c.has("--fix") {
		w := write(airlock.ClassFSWrite, "fixes Markdown files")
		c.raiseWrites(&w, c.operands("-o", "--output", "-c", "--config", "-r", "--rules", "-i", "--ignore", "-p", "--ignore-path")...)
		e = worse(e, w)
	}
	return e
}

// staticcheckDebug are staticcheck's debug flags (Go's), which write
// profiles.
var staticcheckDebug = names("-debug.cpuprofile -debug.memprofile -debug.trace -debug.measure-analyzers")

// staticcheck takes Go flags; its debug flags write profiles.
func staticcheck(c *call) effect {
	e := reads("lints Go code", "-checks", "-f", "-go", "-tags", "-matrix")(c)
	c.writesTo(&e, "writes a profile or trace", goOptions(staticcheckDebug...).values(c.args, staticcheckDebug...)...)
	return e
}

// ninja -t browse serves the build graph.
func ninja(c *call) effect {
	e := build("runs a build", "-f", "-C", "-j", "-l", "-k", "-d", "-w")(c)
	if t, ok := c.value("-t"); ok && t.val == "browse" {
		e = worse(e, net(airlock.ClassNetConnect, "serves the build graph over HTTP"))
	}
	return e
}

// configured is a formatter or linter that loads the project's JavaScript
// configuration and plugins (prettier.config.js, --plugin): it runs code
// even when it only checks.
func configured(r rule) rule {
	return func(c *call) effect {
		e := r(c)
		if e.tier < airlock.TierWrite {
			x := exec("checks files, running its JavaScript configuration and plugins")
			c.raiseReads(&x, c.operands()...)
			e = x
		}
		return e
	}
}

func ruff(c *call) effect {
	ops := c.operands("-o", "--output-file", "--config", "--target-version", "--select", "--ignore", "--extend-select",
		"--line-length", "--output-format", "--exclude", "--cache-dir")
	var e effect
	if len(ops) > 0 && ops[0].val == "format" && !c.has("--check", "--diff") || c.has("--fix", "--add-noqa") && !c.has("--diff") ||
		len(ops) > 0 && ops[0].val == "clean" {
		e = write(airlock.ClassFSWrite, "rewrites Python files")
		c.raiseWrites(&e, ops...)
	} else {
		e = reads("lints Python code")(c)
	}
	c.writesTo(&e, "writes its report into a file", c.values("-o", "--output-file")...)
	return e
}

// build is a build tool or test runner: it runs the project's code. The
// values of outs are files or folders it writes (reports, logs).
func build(reason string, outs ...string) rule {
	return func(c *call) effect {
		e := exec(reason)
		c.raiseReads(&e, c.operands(outs...)...)
		c.writesTo(&e, "writes files where "+strings.Join(outs, " or ")+" says", c.values(outs...)...)
		c.inspects(&e, "JavaScript")
		return e
	}
}

// serves is a build tool whose subcommands or options (serve) serve the
// network: a dev server, a report viewer.
func serves(reason string, serve []string, outs ...string) rule {
	return func(c *call) effect {
		e := build(reason, outs...)(c)
		first := ""
		if ops := c.operands(outs...); len(ops) > 0 {
			first = ops[0].val
		}
		if slices.Contains(serve, first) || slices.ContainsFunc(serve, func(o string) bool { return strings.HasPrefix(o, "-") && c.has(o) }) {
			e = worse(e, net(airlock.ClassNetConnect, "serves the network ("+c.name+")"))
		}
		return e
	}
}

// pytest: --basetemp is deleted before the run, --pdb and --trace read
// debugger commands from standard input, --pastebin uploads the session.
func pytest(c *call) effect {
	outs := []string{"--junitxml", "--junit-xml", "--resultlog", "--result-log", "--html", "--log-file", "--report-log",
		"--json-report-file", "--basetemp", "-c", "--config-file", "--rootdir", "-p", "-o", "--override-ini"}
	e := build("runs tests", outs...)(c)
	for _, d := range c.values("--basetemp") {
		rm := remove("deletes --basetemp " + d.text + " before the run")
		c.raiseWrites(&rm, d)
		e = worse(e, rm)
	}
	c.writesTo(&e, "writes a report or log", c.values(outs[:8]...)...)
	for _, r := range c.values("--cov-report") {
		if _, p, ok := strings.Cut(r.val, ":"); ok {
			c.writesTo(&e, "writes a coverage report", literal(p))
		}
	}
	if c.has("--pdb", "--trace") {
		e = worse(e, c.stdinCode("Python", false))
	}
	if c.has("--pastebin") {
		e = worse(e, net(airlock.ClassNetHTTP, "uploads the test session to a pastebin"))
	}
	return e
}

// makeRule: make runs the makefile's recipes; --eval text and a makefile
// read from a here-document are parsed for the commands they run and the
// files they write, and variables that name programs (SHELL, CC) set on
// the command line are analysed.
func makeRule(c *call) effect {
	if len(c.args) == 1 && c.args[0].static && (c.args[0].val == "--version" || c.args[0].val == "-v") {
		return read("prints make's version") // -v, --version: before any makefile is read
	}
	e := exec("runs build recipes")
	c.raiseReads(&e, c.operands("-f", "--file", "--makefile", "-C", "--directory", "-I", "--include-dir", "-o",
		"--old-file", "-W", "--what-if", "--new-file", "--assume-new", "-j", "--jobs", "-l", "--load-average", "-E", "--eval")...)
	for _, x := range c.values("-E", "--eval") {
		if !x.static {
			c.runUnknown("make --eval", x.text, "evaluates makefile text only known at run time")
			continue
		}
		c.makeText(&e, x.val)
	}
	for _, f := range c.values("-f", "--file", "--makefile") {
		if f.static && (f.val == "-" || f.val == "/dev/stdin") {
			switch c.in.kind {
			case inText:
				c.makeText(&e, c.in.text)
			case inUnknown, inPipe, inDynamic:
				e = worse(e, unknown("runs a makefile read from standard input"))
			}
		}
	}
	for _, op := range c.operands() {
		name, val, ok := strings.Cut(op.val, "=")
		if !op.static || !ok {
			continue
		}
		switch name = strings.TrimSuffix(name, ":"); {
		case name == "SHELL" || name == ".SHELLFLAGS":
			// Recipes run as SHELL -c RECIPE.
			c.runScript("make "+name, val+" -c :", input{})
		case makePrograms[name]:
			c.runScript("make "+name, val, input{})
		}
	}
	return e
}

// makePrograms are make's variables that name the programs its implicit
// rules run.
var makePrograms = stringSet("CC", "CXX", "CPP", "LD", "AR", "AS", "FC", "RM", "MAKE", "INSTALL", "LEX", "YACC",
	"MAKEINFO", "TEX", "PC", "M2C", "CO", "GET")

// makeText finds in makefile text what make runs ($(shell CMD), VAR != CMD,
// recipe lines) and the files it writes ($(file >PATH,...)).
func (c *call) makeText(e *effect, text string) {
	for _, s := range makeCalls(text, "shell") {
		c.runScript("make $(shell)", s, input{})
	}
	for _, s := range makeCalls(text, "file") {
		op, _, _ := strings.Cut(s, ",")
		op = strings.TrimSpace(op)
		if p, ok := strings.CutPrefix(op, ">"); ok {
			c.writesTo(e, "writes a file from makefile text ($(file >...))", literal(strings.TrimSpace(strings.TrimPrefix(p, ">"))))
		} else if p, ok := strings.CutPrefix(op, "<"); ok {
			r := read("reads a file from makefile text ($(file <...))")
			c.raiseReads(&r, literal(strings.TrimSpace(p)))
			*e = worse(*e, r)
		}
	}
	for _, line := range strings.Split(text, "\n") {
		if recipe, ok := strings.CutPrefix(line, "\t"); ok {
			c.runScript("make recipe", strings.TrimLeft(recipe, "@-+ "), input{})
		} else if _, cmd, ok := strings.Cut(line, "!="); ok && !strings.ContainsAny(line[:strings.Index(line, "!=")], ":$(") {
			c.runScript("make !=", strings.TrimSpace(cmd), input{})
		}
	}
}

// makeCalls returns the arguments of each call of function fn in makefile
// text: $(fn ARGS) or ${fn ARGS}, brackets balanced.
func makeCalls(text, fn string) []string {
	var out []string
	for _, open := range []string{"$(", "${"} {
		closer := map[string]byte{"$(": ')', "${": '}'}[open]
		rest := text
		for {
			i := strings.Index(rest, open+fn)
			if i < 0 {
				break
			}
			rest = rest[i+len(open)+len(fn):]
			if rest == "" || rest[0] != ' ' && rest[0] != '\t' {
				continue
			}
			depth, end := 1, -1
			for j := 0; j < len(rest) && end < 0; j++ {
				switch rest[j] {
				case open[1]:
					depth++
				case closer:
					if depth--; depth == 0 {
						end = j
					}
				}
			}
			if end < 0 {
				end = len(rest)
			}
			out = append(out, strings.TrimSpace(rest[:end]))
			rest = rest[end:]
		}
	}
	return out
}

// cmakeTools are cmake -E's commands, as the programs that do the same.
var cmakeTools = map[string][]string{
	"cat": {"cat"}, "copy": {"cp"}, "copy_if_different": {"cp"}, "copy_if_newer": {"cp"},
	"copy_directory": {"cp", "-r"}, "copy_directory_if_different": {"cp", "-r"}, "copy_directory_if_newer": {"cp", "-r"},
	"rename": {"mv"}, "rm": {"rm"}, "remove": {"rm", "-f"}, "remove_directory": {"rm", "-rf"},
	"make_directory": {"mkdir", "-p"}, "touch": {"touch"}, "touch_nocreate": {"touch", "-c"},
	"create_symlink": {"ln", "-s"}, "create_hardlink": {"ln"}, "echo": {"echo"}, "echo_append": {"echo", "-n"},
	"env": {"env"}, "time": {"time"}, "tar": {"tar"}, "md5sum": {"md5sum"}, "sha1sum": {"sha1sum"},
	"sha224sum": {"sha224sum"}, "sha256sum": {"sha256sum"}, "sha384sum": {"sha384sum"}, "sha512sum": {"sha512sum"},
	"compare_files": {"cmp"}, "sleep": {"sleep"}, "true": {"true"}, "false": {"false"}, "environment": {"printenv"},
	"capabilities": {"true"},
}

// cmake: -E runs a portable command, analysed as the program that does the
// same; otherwise it configures or runs a build, writing where its options
// say; cache entries naming compilers or launchers name programs it runs.
func cmake(c *call) effect {
	if len(c.args) > 1 && c.args[0].static && c.args[0].val == "-E" && c.args[1].static {
		verb, rest := c.args[1].val, c.args[2:]
		if verb == "chdir" && len(rest) > 1 {
			n := c.run("cmake -E chdir", rest[1:], effect{})
			if d, ok := rest[0].pathValue(); ok {
				n.cwd, n.setCwd = c.resolve(d), true
			}
			return effect{none: true}
		}
		if tool, ok := cmakeTools[verb]; ok {
			argv := make([]arg, 0, len(tool)+len(rest))
			for _, w := range tool {
				argv = append(argv, literal(w))
			}
			c.run("cmake -E", append(argv, rest...), effect{})
			return effect{none: true}
		}
		return exec("runs cmake -E " + verb)
	}
	outs := []string{"-B", "--graphviz", "--trace-redirect", "--profiling-output", "--prefix", "--system-information"}
	e := build("configures or runs a build", outs...)(c)
	for _, d := range c.values("-D") {
		key, val, ok := strings.Cut(d.val, "=")
		key, _, _ = strings.Cut(key, ":")
		if d.static && ok && (strings.Contains(key, "COMPILER") || strings.Contains(key, "LAUNCHER") ||
			strings.HasSuffix(key, "_PROGRAM") || strings.HasSuffix(key, "LINKER") || strings.HasSuffix(key, "EMULATOR")) {
			c.runScript("cmake -D"+key, strings.ReplaceAll(val, ";", " "), input{})
		}
	}
	for _, a := range c.args {
		if a.static && strings.HasPrefix(a.val, "--help") {
			// --help-full FILE and the like write the help into FILE.
			if ops := c.operands(); len(ops) > 0 {
				c.writesTo(&e, "writes help into a file", ops[len(ops)-1])
			}
			break
		}
	}
	return e
}

var mesonDevenvOpts = getopt{short: "Cw", long: names("--workdir --dump-format"), exact: true}

// meson devenv runs a command, or a shell, in the build's environment.
func meson(c *call) effect {
	ops := operands(c.args, "-C", "-w", "--workdir", "--dump-format")
	if len(ops) == 0 || ops[0].val != "devenv" {
		e := build("configures or runs a build")(c)
		if len(ops) > 1 && (ops[0].val == "subprojects" || ops[0].val == "wrap") {
			e = install(airlock.TierNetworkEgress, "downloads subprojects")
		}
		return e
	}
	for i, a := range c.args {
		if a.static && a.val == "devenv" {
			rest := mesonDevenvOpts.split(c.args[i+1:]).ops
			if len(rest) > 0 {
				c.run("meson devenv", rest, effect{})
				return effect{none: true}
			}
		}
	}
	e := c.stdinCode("shell", true)
	if e.none {
		return e
	}
	c.writesTo(&e, "writes the environment into a file", c.values("--dump")...)
	return e
}

// bazel runs --run_under's command around what it runs.
func bazel(c *call) effect {
	for _, x := range c.values("--run_under") {
		c.runWords("bazel --run_under", []arg{x}, input{})
	}
	return build("runs a build", "--script_path")(c)
}

func gradle(c *call) effect {
	for _, op := range c.operands() {
		if strings.HasPrefix(op.val, "publish") && !strings.Contains(op.val,
			"MavenLocal") || strings.Contains(op.val, ":publish") && !strings.Contains(op.val, "MavenLocal") {
			return publish("publishes artifacts")
		}
	}
	if c.has("--scan") {
		return net(airlock.ClassNetHTTP, "runs a build and uploads a build scan")
	}
	return exec("runs a build")
}

// maven: deploying publishes; the exec plugin runs exec.executable.
func maven(c *call) effect {
	ops := c.operands("-f", "--file", "-s", "--settings", "-P", "--activate-profiles", "-pl",
		"--projects", "-T", "--threads", "-D", "-l", "--log-file", "-gs", "--global-settings")
	for _, op := range ops {
		if op.val == "deploy" || op.val == "release:perform" || strings.HasSuffix(op.val, ":deploy") {
			return publish("publishes artifacts")
		}
	}
	e := exec("runs a build")
	var argv []arg
	for _, d := range c.values("-D") {
		switch key, val, _ := strings.Cut(d.val, "="); key {
		case "exec.executable":
			argv = append([]arg{literal(val)}, argv...)
		case "exec.args":
			argv = append(argv, literal(val))
		case "showPasswords":
			if val != "false" {
				return effect{class: airlock.ClassCredentialsRead, cap: airlock.CapCredentialsRead, tier: airlock.TierPrivileged,
					reason: "prints the passwords of its settings"}
			}
		}
	}
	if len(argv) > 0 && argv[0].val != "" {
		c.runWords("mvn exec.executable", argv, input{})
	}
	c.writesTo(&e, "writes its log into a file", c.values("-l", "--log-file")...)
	return e
}

// sbt and lein: a bare sbt, or a console, reads commands from standard
// input; publishing uploads.
func sbt(c *call) effect {
	ops := c.operands()
	for _, op := range ops {
		v := op.val
		switch {
		case strings.Contains(v, "publish") && !strings.Contains(v, "Local") && !strings.Contains(v, "M2"),
			v == "deploy", v == "release":
			return publish("publishes artifacts")
		case v == "repl" || strings.HasPrefix(v, "console") || v == "shell":
			return worse(exec("runs a build"), c.stdinCode("Scala or Clojure", false))
		}
	}
	if c.name == "sbt" && len(ops) == 0 && !c.has("--version", "-V", "--help", "-h") {
		return worse(exec("runs a build"), c.stdinCode("sbt", false))
	}
	return exec("runs a build")
}

// just runs recipes with its shell; --command runs a command, --chooser
// and --shell name programs.
func just(c *call) effect {
	for i, a := range c.args {
		if a.static && (a.val == "--command" || a.val == "-c") && i+1 < len(c.args) {
			c.run("just --command", c.args[i+1:], effect{})
			break
		}
	}
	for _, x := range c.values("--chooser") {
		c.runWords("just --chooser", []arg{x}, input{})
	}
	if sh, ok := c.value("--shell"); ok {
		words := append([]arg{sh}, c.values("--shell-arg")...)
		c.runWords("just --shell", append(words, literal(":")), input{})
	}
	return build("runs recipes")(c)
}

// task is go-task or Taskwarrior: Taskwarrior's execute runs a command,
// and rc.editor names one.
func task(c *call) effect {
	ops := c.operands("-t", "--taskfile", "-d", "--dir", "-o", "--output")
	for i, op := range ops {
		if op.static && op.val == "execute" && i+1 < len(ops) {
			c.run("task execute", ops[i+1:], effect{})
			break
		}
		if k, v, ok := strings.Cut(op.val, "="); op.static && ok && (k == "rc.editor" || k == "rc.editor:") {
			c.runScript("task rc.editor", v, input{})
		} else if v, ok := strings.CutPrefix(op.val, "rc.editor:"); op.static && ok {
			c.runScript("task rc.editor", v, input{})
		}
	}
	return build("runs tasks")(c)
}

// playwright: its reports and recorders serve or browse the network.
func playwright(c *call) effect {
	e := build("runs tests", "--output", "-o")(c)
	if ops := c.operands("--output", "-o", "--reporter", "--config", "-c", "--project", "-g", "--grep"); len(ops) > 0 {
		switch ops[0].val {
		case "show-report", "show-trace", "open", "codegen", "cr", "ff", "wk", "merge-reports":
			e = worse(e, net(airlock.ClassNetConnect, "serves or opens pages ("+ops[0].val+")"))
		case "install", "install-deps", "uninstall":
			e = worse(e, install(airlock.TierNetworkEgress, "downloads browsers"))
		}
	}
	if c.has("--ui", "--ui-host", "--ui-port") {
		e = worse(e, net(airlock.ClassNetConnect, "serves its UI"))
	}
	return e
}

// lerna and nx publish or push releases.
func monorepo(c *call) effect {
	e := build("runs tasks")(c)
	ops := c.operands()
	if len(ops) == 0 {
		return e
	}
	switch {
	case ops[0].val == "publish", ops[0].val == "release" && slices.ContainsFunc(ops[1:], func(a arg) bool { return a.val == "publish" }):
		return publish("publishes packages")
	case ops[0].val == "version", ops[0].val == "release", ops[0].val == "login", ops[0].val == "link", ops[0].val == "connect":
		return worse(e, net(airlock.ClassNetHTTP, "pushes releases or talks to its service"))
	case ops[0].val == "graph":
		return worse(e, net(airlock.ClassNetConnect, "serves the project graph"))
	}
	return e
}

// Compilers: C-family compilers, rustc, javac, assemblers and the linker.
// Each writes its outputs; options that run other programs (-wrapper,
// -C linker=), load plugins or name output files are classified by what
// they do. Whatever they write, a word that names a place where a write
// persists (~/.bashrc, ~/.ssh) may be written.

// ccOutputs are the C compiler options whose value is a file it writes.
var ccOutputs = []string{"-o", "-MF", "-aux-info", "-dumpdir", "--output", "-fprofile-generate",
	"-ftime-trace", "-fcrash-diagnostics-dir", "-save-stats", "-fcallgraph-info", "-fdump-rtl-all"}

func cc(c *call) effect {
	e := write(airlock.ClassFSWrite, "compiles code")
	c.raiseWrites(&e, joinedValues(c.args, ccOutputs...)...)
	for _, a := range c.args {
		v := a.val
		if !a.static || !strings.HasPrefix(v, "-") {
			continue
		}
		name, val, _ := strings.Cut(v, "=")
		switch {
		case v == "-wrapper":
		case strings.HasPrefix(v, "-fplugin") || strings.HasPrefix(v, "-fpass-plugin") || v == "-load" ||
			strings.Contains(v, "-plugin"):
			e = worse(e, exec("loads a compiler plugin"))
		case name == "-fuse-ld" && strings.Contains(val, "/") || name == "--ld-path" || strings.HasPrefix(v, "-B") ||
			strings.HasPrefix(v, "-specs") || name == "--gcc-toolchain":
			e = worse(e, exec("runs compiler programs from a place an option names"))
		case strings.HasPrefix(v, "-Wl,") || strings.HasPrefix(v, "-Xlinker"):
			c.linkerOutputs(&e, strings.Split(strings.TrimPrefix(v, "-Wl,"), ","))
		case name == "-fprofile-generate" || name == "-ftime-trace" || name == "--output" || name == "-save-stats":
			c.writesTo(&e, "writes a file named by "+name, literal(val))
		}
	}
	for _, w := range c.values("-wrapper") {
		if !w.static {
			c.runUnknown("cc -wrapper", w.text, "runs a wrapper only known at run time")
			continue
		}
		words := strings.Split(w.val, ",")
		argv := make([]arg, len(words))
		for i, x := range words {
			argv[i] = literal(x)
		}
		c.run("cc -wrapper", argv, effect{})
	}
	for _, x := range c.values("-Xlinker") {
		c.linkerOutputs(&e, []string{x.val})
	}
	c.raiseSent(&e)
	c.persists(&e)
	return e
}

// joinedValues returns the values of compiler-style options, which take
// their value in the next word or joined to the option (-MFdeps.d,
// -o/etc/x, -aux-info=x).
func joinedValues(args []arg, opts ...string) []arg {
	return getopt{long: opts, exact: true, joined: true}.values(args, opts...)
}

// linkerOutputs raises e by the files that linker options write
// (-Wl,-o,FILE, -Wl,-Map=FILE) and the plugins they load.
func (c *call) linkerOutputs(e *effect, opts []string) {
	for i, o := range opts {
		name, val, eq := strings.Cut(o, "=")
		switch {
		case (o == "-o" || o == "--output" || o == "-Map" || o == "--Map") && i+1 < len(opts):
			c.writesTo(e, "links into a file", literal(opts[i+1]))
		case eq && (name == "--output" || name == "-Map" || name == "--Map" || name == "--dependency-file"):
			c.writesTo(e, "links into a file", literal(val))
		case strings.Contains(name, "plugin"):
			*e = worse(*e, exec("loads a linker plugin"))
		}
	}
}

// zig cc and zig c++ are C compilers.
func zig(c *call) effect {
	if len(c.args) > 0 && c.args[0].static && (c.args[0].val == "cc" || c.args[0].val == "c++") {
		return c.delegate(c.args[1:], cc)
	}
	e := build("compiles code", "--cache-dir", "--prefix", "-p")(c)
	for _, a := range c.args {
		if name, p, ok := strings.Cut(a.val, "="); a.static && ok && strings.HasPrefix(name, "-femit-") {
			c.writesTo(&e, "writes a build output where "+name+" says", literal(p))
		}
	}
	return e
}

// ld links: -o, -Map and --dependency-file write, plugins load.
func ld(c *call) effect {
	e := write(airlock.ClassFSWrite, "links code")
	var opts []string
	for _, a := range c.args {
		opts = append(opts, a.val)
	}
	c.raiseWrites(&e, c.values("-o", "--output")...)
	c.linkerOutputs(&e, opts)
	c.raiseSent(&e)
	c.persists(&e)
	return e
}

// asm: as writes -o, listings (-a=FILE) and --MD dependencies; nasm writes
// -o, -l listings, -MF dependencies and -Z error files.
func asm(c *call) effect {
	e := write(airlock.ClassFSWrite, "assembles code")
	c.raiseWrites(&e, joinedValues(c.args, "-o", "--MD", "-l", "-MF", "-Z")...)
	for _, a := range c.args {
		if name, val, ok := strings.Cut(a.val, "="); a.static && ok && strings.HasPrefix(name, "-a") {
			c.writesTo(&e, "writes a listing", literal(val))
		}
	}
	c.raiseSent(&e)
	c.persists(&e)
	return e
}

// javac writes classes, sources and headers (-d, -s, -h); annotation
// processors and plugins run at compile time; -J passes JVM options.
func javac(c *call) effect {
	e := write(airlock.ClassFSWrite, "compiles code")
	c.raiseWrites(&e, joinedValues(c.args, "-d", "-s", "-h")...)
	if c.has("-processor", "-processorpath", "--processor-path", "--processor-module-path") ||
		slices.ContainsFunc(c.args, func(a arg) bool { return strings.HasPrefix(a.val, "-Xplugin") }) {
		e = worse(e, exec("runs annotation processors or compiler plugins"))
	}
	var jvm []arg
	for _, w := range c.args {
		if w.static && strings.HasPrefix(w.val, "-J") {
			jvm = append(jvm, valueArg(w, w.val[2:]))
		}
	}
	c.jvmOptions(&e, "javac", jvm)
	c.raiseSent(&e)
	c.persists(&e)
	return e
}

// rustc writes -o, --out-dir, --emit KIND=PATH and --print KIND=PATH;
// codegen options run a linker or load backends and plugins.
func rustc(c *call) effect {
	if c.has("--explain") || len(c.args) == 1 && c.has("--version", "-V", "--help", "-h") {
		return read("explains an error or prints help")
	}
	e := write(airlock.ClassFSWrite, "compiles code")
	c.raiseWrites(&e, c.values("-o", "--out-dir")...)
	for _, x := range c.values("--emit", "--print") {
		for _, kind := range strings.Split(x.val, ",") {
			if _, p, ok := strings.Cut(kind, "="); ok {
				c.writesTo(&e, "writes compiler output where --emit or --print says", literal(p))
			}
		}
	}
	c.rustcFlags(&e, "rustc", append(c.values("-C", "--codegen"), c.values("-Z")...))
	if t := toolchainOf(c.args); t != "" {
		e = worse(e, customToolchain("rustc", t))
	}
	c.raiseSent(&e)
	c.persists(&e)
	return e
}

// rustcFlags analyses rustc -C and -Z settings (KEY=VALUE): the linker is
// a program it runs; codegen backends and LLVM plugins are libraries it
// loads; incremental and profile directories are written.
func (c *call) rustcFlags(e *effect, via string, settings []arg) {
	for _, s := range settings {
		key, val, _ := strings.Cut(s.val, "=")
		switch strings.ReplaceAll(key, "_", "-") {
		case "linker", "ar", "dlltool":
			c.runWords(via+" -C "+key, []arg{literal(val)}, input{})
		case "link-arg", "link-args":
			c.linkerOutputs(e, strings.Fields(val))
		case "codegen-backend", "llvm-plugins", "linker-plugin-lto":
			*e = worse(*e, exec("loads a compiler library ("+key+")"))
		case "incremental", "profile-generate", "self-profile", "dump-mir-dir", "temps-dir":
			c.writesTo(e, "writes where -C "+key+" says", literal(val))
		}
	}
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
	libs     string   // short options (among values) naming a library to load (ruby -r, perl -M, lua -l)
	longLibs []string // long ones (node --require)
	// interactive are the options (short letters, or long names) that make
	// it read more code from standard input once its code or script has run
	// (python -i); a repl does so unless one of batch is given.
	interactive     string
	longInteractive []string
	repl            bool
	batch           []string
	codeExits       bool     // inline code turns the REPL off (ghci -e)
	listen          []string // options (or first operands) that open a port through which peers run code (node --inspect)
	connects        []string // options that make it connect to other hosts (julia --machine-file)
	writes          []string // options whose value is a file or directory it writes (node --redirect-warnings)
	info            []string // options that only print information; nil: -h, -v, -V, -version, --version
	module          string   // short options whose value is a module to run (python -m)
	runModule       func(c *call, mod string, rest []arg) effect
}

// isInfo reports whether option name only prints information (--help*).
func (l lang) isInfo(name string) bool {
	if strings.HasPrefix(name, "--help") {
		return true
	}
	if l.info != nil {
		return slices.Contains(l.info, name)
	}
	return slices.Contains(defaultInfo, name)
}

// defaultInfo are the options that only print information, unless a
// language says otherwise.
var defaultInfo = []string{"--version", "-h", "-v", "-V", "-version"}

// getopt is how the interpreter spells its options: they end at the
// script, and at inline code or a module to run (python -c CODE ARGS),
// whose arguments follow.
func (l lang) getopt() getopt {
	g := getopt{short: l.code + l.values + l.module, long: slices.Concat(l.long, l.longCode), exact: true}
	if l.inPlace {
		g.optShort = "i"
	}
	info := l.info
	if info == nil {
		info = defaultInfo
	}
	for _, n := range slices.Concat(info, l.runs, l.batch, l.longInteractive, l.listen, l.connects) {
		if strings.HasPrefix(n, "-") && !slices.Contains(g.long, n) {
			g.flags = append(g.flags, n)
		}
	}
	for _, ch := range l.code + l.module {
		g.final = append(g.final, "-"+string(ch))
	}
	g.final = append(g.final, l.longCode...)
	return g
}

// langParse is what an interpreter's options ask for.
type langParse struct {
	code, inPlace, info, runs, interactive, batch bool
	listen, connects                              string // the option that opens a port, or connects
	libs, writes                                  []arg
	module                                        *arg  // the module to run
	ops                                           []arg // the script and its arguments
}

func (l lang) parse(args []arg) langParse { return l.read(l.getopt(), args) }

// read reads args with the interpreter's getopt g.
func (l lang) read(g getopt, args []arg) langParse {
	var p langParse
	opts := g.split(args)
	for _, o := range opts.opts {
		short := len(o.name) == 2 && o.name[1] != '-'
		letter := func(set string) bool { return short && strings.IndexByte(set, o.name[1]) >= 0 }
		switch {
		case l.isInfo(o.name):
			p.info = true
		case slices.Contains(l.runs, o.name):
			p.runs = true
		case slices.Contains(l.listen, o.name):
			p.listen = o.name
		case slices.Contains(l.connects, o.name):
			p.connects = o.name
		case slices.Contains(l.batch, o.name):
			p.batch = true
		case letter(l.interactive) || slices.Contains(l.longInteractive, o.name):
			p.interactive = true
		case letter(l.code) || slices.Contains(l.longCode, o.name):
			p.code = true
		case l.inPlace && o.name == "-i":
			p.inPlace = true
		case letter(l.module):
			m := o.val
			p.module = &m
		case letter(l.libs) || slices.Contains(l.longLibs, o.name):
			p.libs = append(p.libs, o.val)
		}
		if slices.Contains(l.writes, o.name) && o.has {
			p.writes = append(p.writes, o.val)
		}
	}
	p.ops = opts.ops
	if len(p.ops) > 0 && p.ops[0].static && slices.Contains(l.listen, p.ops[0].val) {
		p.listen = p.ops[0].val // bb nrepl-server
	}
	return p
}

// interp is an interpreter: inline code or a script runs and cannot be
// inspected; code read from a pipe is unknown. Libraries it loads, ports it
// opens and files it writes by option count too.
func interp(l lang) rule {
	g := l.getopt()
	return func(c *call) effect {
		p := l.read(g, c.args)
		// A batch option may follow the code (erl -s init stop -noshell).
		p.batch = p.batch || slices.ContainsFunc(c.args, func(a arg) bool { return a.static && slices.Contains(l.batch, a.val) })
		ops := p.ops
		stdin := false
		var e effect
		switch {
		case p.inPlace:
			e = write(airlock.ClassFSWrite, "edits files in place")
			c.raiseWrites(&e, ops...)
		case p.code:
			e = exec("runs " + l.name + " code Airlock cannot inspect")
			c.raiseReads(&e, ops...)
		case p.module != nil && !p.module.static:
			e = exec("runs a " + l.name + " module only known at run time")
		case p.module != nil:
			e = l.runModule(c, p.module.val, ops)
		case len(ops) > 0:
			e = c.runsFile(ops[0], l.name, false)
			c.raiseReads(&e, ops[1:]...)
			stdin = ops[0].static && (ops[0].val == "-" || ops[0].val == "/dev/stdin")
		case p.runs:
			e = exec("runs " + l.name + " code")
		case p.info && !p.interactive:
			return read("prints version or help")
		default:
			e, stdin = c.stdinCode(l.name, false), true
		}
		if !stdin && (p.interactive || l.repl && !p.batch && !(p.code && l.codeExits)) {
			e, stdin = worse(e, c.stdinCode(l.name, false)), true
		}
		c.loads(&e, l.name, p.libs)
		if p.listen != "" {
			e = worse(e, listens("opens a port ("+p.listen+") through which other programs run "+l.name+" code"))
		}
		if p.connects != "" {
			e = worse(e, net(airlock.ClassNetConnect, "connects to other hosts ("+p.connects+")"))
		}
		c.writesTo(&e, "writes a file named by an option", p.writes...)
		c.raiseNetCode(&e)
		return e
	}
}

// listens is a program that gives whoever connects a way to run code on
// this machine: a debugger or REPL port is a shell for network peers.
func listens(reason string) effect {
	return effect{class: airlock.ClassNetConnect, cap: airlock.CapNetworkEgress, tier: airlock.TierPrivileged, reason: reason}
}

// loads raises an interpreter by the libraries it is told to load: one
// that opens connections (ruby -rsocket, perl -MIO::Socket) makes it a
// network program.
func (c *call) loads(e *effect, lang string, libs []arg) {
	for _, lib := range libs {
		if !lib.static {
			*e = worse(*e, exec("loads a "+lang+" library only known at run time"))
			continue
		}
		if e.tier < airlock.TierNetworkEgress && networkLib(lib.val) {
			e.cap, e.tier, e.generic = airlock.CapNetworkEgress, airlock.TierNetworkEgress, false
			e.reason += ", and loads " + lib.val + ", which connects to the network"
		}
	}
}

// networkLib reports whether a library's name says it connects: a socket,
// HTTP, mail or remote-shell library, or ruby's "un" (ruby -run -e httpd
// serves files).
func networkLib(name string) bool {
	l := strings.ToLower(name)
	if l == "un" || l == "cpan" {
		return true
	}
	for _, k := range networkLibs {
		if strings.Contains(l, k) {
			return true
		}
	}
	return false
}

var networkLibs = []string{"socket", "http", "net/", "net::", "lwp", "urllib", "request", "ftp", "smtp",
	"telnet", "open-uri", "webrick", "mojo", "curl", "websocket", "ssh", "drb", "fetch", "grpc"}

var pythonInterp = lazy(func() rule {
	return interp(lang{name: "Python", code: "c", module: "m", values: "WX", interactive: "i",
		long: []string{"--check-hash-based-pycs"}, info: []string{"--version", "-V", "-h", "-?"}, runModule: pythonModule})
})

// python is an interpreter whose -m runs a module (pythonModule); -X
// pycache_prefix=DIR writes the compiled files under DIR.
func python(c *call) effect {
	e := pythonInterp(c)
	for _, x := range optValues(c.args, "-X") {
		if p, ok := strings.CutPrefix(x.val, "pycache_prefix="); ok {
			c.writesTo(&e, "writes compiled files under -X pycache_prefix", arg{val: p, text: quote(p), static: x.static, glob: x.glob})
		}
	}
	return e
}

func pythonModule(c *call, mod string, rest []arg) effect {
	ops := operands(rest, "-d", "--directory", "-b", "--bind", "-p", "-o", "--output", "-c", "--create", "-e", "--extract")
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
	case "http.server", "SimpleHTTPServer", "smtpd", "aiosmtpd", "xmlrpc.server", "CGIHTTPServer", "wsgiref.simple_server":
		// Serving a folder of secrets hands them out.
		e := net(airlock.ClassNetConnect, "serves the network")
		c.raiseReads(&e, optValues(rest, "-d", "--directory")...)
		return e
	case "ftplib", "telnetlib", "imaplib", "poplib", "nntplib", "smtplib", "webbrowser", "urllib.request":
		return net(airlock.ClassNetConnect, "connects to the network ("+mod+")")
	case "venv", "virtualenv":
		e := write(airlock.ClassFSWrite, "creates a virtual environment")
		c.raiseWrites(&e, operands(rest, "--prompt")...)
		return e
	case "pytest", "unittest", "doctest", "nose", "nose2", "tox", "nox", "coverage":
		return c.delegate(rest, pytest)
	case "code", "asyncio", "idlelib", "IPython", "ptpython", "bpython", "pdb":
		// A console, or a debugger: what it runs comes from standard input.
		e := c.stdinCode("Python", false)
		if len(ops) > 0 {
			e = worse(exec("runs Python script "+ops[0].text), e)
		}
		return e
	case "pydoc":
		switch {
		case hasOption(rest, "-p", "-b", "-n"):
			return net(airlock.ClassNetConnect, "serves documentation over HTTP")
		case hasOption(rest, "-w"):
			return write(airlock.ClassFSWrite, "writes HTML documentation, importing the modules it documents")
		}
		return exec("imports the modules it documents, which runs their code")
	case "json.tool", "json":
		e := read("formats JSON")
		if len(ops) > 1 {
			c.writesTo(&e, "formats JSON into a file", ops[1])
		}
		c.raiseReads(&e, ops...)
		return e
	case "zipfile", "tarfile":
		if hasOption(rest, "-l", "--list", "-t", "--test") {
			e := read("lists an archive")
			c.raiseReads(&e, ops...)
			return e
		}
		e := write(airlock.ClassFSWrite, "creates or extracts an archive")
		c.raiseWrites(&e, append(optValues(rest, "-c", "--create"), ops...)...)
		return e
	case "gzip":
		e := write(airlock.ClassFSWrite, "compresses or decompresses files")
		c.raiseWrites(&e, ops...)
		return e
	case "sqlite3":
		e := write(airlock.ClassFSWrite, "runs SQL, which can write database files")
		if len(ops) > 0 {
			c.raiseWrites(&e, ops[0])
		}
		return e
	case "site", "sysconfig", "platform", "this", "tabnanny", "pyclbr", "tokenize", "ast", "dis", "calendar", "uuid",
		"pstats", "tomllib", "base64", "pickletools", "filecmp", "mimetypes", "quopri", "encodings.rot_13":
		e := read("runs a standard library tool")
		c.raiseReads(&e, rest...)
		return e
	case "build", "compileall", "py_compile", "ensurepip", "zipapp", "lib2to3":
		return write(airlock.ClassFSWrite, "builds or compiles Python code")
	}
	e := exec("runs Python module " + mod)
	if mod == "cProfile" || mod == "profile" || mod == "trace" {
		c.writesTo(&e, "writes its report where -o says", optValues(rest, "-o", "--outfile", "--file")...)
	}
	return e
}

var phpOpts = getopt{short: "rBREcdfFtzS",
	long: names("--run --process-begin --process-code --process-end --php-ini --define --file --process-file " +
		"--docroot --zend-extension --server --rf --rc --re --rz --ri"), exact: true}

// php: inline code, a script, a web server; -d settings may name code to
// run (auto_prepend_file), libraries to load or files to write.
func php(c *call) effect {
	p := phpOpts.split(c.args)
	ops, has := p.ops, p.has
	stdin := false
	var e effect
	switch {
	case has("-h", "--help", "-v", "--version", "-i", "--info", "-m", "--modules", "--ini", "--rf", "--rc", "--re", "--rz", "--ri"):
		return read("prints PHP information")
	case has("-S", "--server"):
		// Serving a folder of secrets hands them out.
		e = net(airlock.ClassNetConnect, "serves the network, running the PHP files it serves")
		if root, ok := p.value("-t", "--docroot"); ok {
			c.raiseReads(&e, root)
		}
	case has("-l", "--syntax-check", "-s", "--syntax-highlight", "--syntax-highlighting", "-w", "--strip"):
		e = read("checks or shows PHP source")
		if f, ok := p.value("-f", "--file"); ok {
			ops = append(ops, f)
		}
		c.raiseReads(&e, ops...)
		return e
	case has("-r", "-B", "-R", "-E", "--run", "--process-begin", "--process-code", "--process-end"):
		e = exec("runs PHP code Airlock cannot inspect")
		c.raiseReads(&e, ops...)
	default:
		f, ok := p.value("-f", "--file", "-F", "--process-file")
		if !ok && len(ops) > 0 {
			f, ok, ops = ops[0], true, ops[1:]
		}
		if !ok {
			e, stdin = c.stdinCode("PHP", false), true
			break
		}
		e = c.runsFile(f, "PHP", false)
		c.raiseReads(&e, ops...)
		stdin = f.static && (f.val == "-" || f.val == "/dev/stdin")
	}
	if has("-a", "--interactive") && !stdin {
		e, stdin = worse(e, c.stdinCode("PHP", false)), true
	}
	for _, o := range p.opts {
		switch {
		case o.has && (o.name == "-d" || o.name == "--define"):
			e = worse(e, c.phpSetting(o.val))
		case o.has && (o.name == "-z" || o.name == "--zend-extension"):
			e = worse(e, exec("loads a PHP extension library"))
		case o.has && (o.name == "-c" || o.name == "--php-ini"):
			x := exec("loads PHP settings from " + o.val.text + ", which can name code to run")
			c.raiseReads(&x, o.val)
			e = worse(e, x)
		}
	}
	c.raiseNetCode(&e)
	return e
}

// phpSetting is what a -d setting makes php do beyond running its code.
func (c *call) phpSetting(kv arg) effect {
	if !kv.static {
		return exec("changes a PHP setting only known at run time")
	}
	key, val, _ := strings.Cut(kv.val, "=")
	v := arg{val: val, text: quote(val), static: true, glob: kv.glob}
	switch strings.ToLower(strings.TrimSpace(key)) {
	case "auto_prepend_file", "auto_append_file":
		return c.runsFile(v, "PHP", false)
	case "extension", "zend_extension":
		return exec("loads a PHP extension library")
	case "sendmail_path":
		c.runScript("php -d sendmail_path", val, input{})
	case "error_log", "session.save_path", "mail.log", "opcache.file_cache", "xdebug.output_dir", "xdebug.log",
		"upload_tmp_dir", "sys_temp_dir":
		e := write(airlock.ClassFSWrite, "writes files where -d "+key+" says")
		c.raiseWrites(&e, v)
		return e
	}
	return effect{}
}

func java(c *call) effect {
	ops := c.operands("-cp", "-classpath", "--class-path", "-p", "--module-path", "--add-opens", "--add-exports",
		"--add-modules", "--add-reads", "--limit-modules", "--upgrade-module-path", "--patch-module", "--source", "--release", "-d")
	if len(ops) == 0 && c.has("-version", "--version", "-showversion", "-help", "--help", "-h", "-?", "-X") {
		return read("prints version or help")
	}
	e := exec("runs Java code Airlock cannot inspect")
	c.raiseReads(&e, ops...)
	c.jvmOptions(&e, "java", c.args)
	return e
}

// jvmOptions raises e by the JVM options among words: commands it runs on
// an error (-XX:OnError), agents and debuggers it loads (-agentlib:jdwp
// gives a peer a way to run code), files it writes (-XX:HeapDumpPath,
// -Xlog:...:file=).
func (c *call) jvmOptions(e *effect, via string, words []arg) {
	for _, w := range words {
		if !w.static || !strings.HasPrefix(w.val, "-") {
			continue
		}
		v := w.val
		name, val, _ := strings.Cut(v, "=")
		switch {
		case name == "-XX:OnError" || name == "-XX:OnOutOfMemoryError":
			c.runScript(via+" "+name, strings.ReplaceAll(val, "%p", "1"), input{})
		case strings.Contains(v, "jdwp") || strings.HasPrefix(name, "-Dcom.sun.management.jmxremote"):
			*e = worse(*e, listens("opens a debugger or management connection through which a peer runs Java code"))
		case strings.HasPrefix(v, "-javaagent:") || strings.HasPrefix(v, "-agentlib:") || strings.HasPrefix(v, "-agentpath:"):
			*e = worse(*e, exec("loads a Java agent library"))
		case name == "-XX:HeapDumpPath" || name == "-XX:ErrorFile" || name == "-XX:LogFile" ||
			name == "-XX:ArchiveClassesAtExit" || name == "-XX:CRaCCheckpointTo" || strings.HasPrefix(v, "-Xloggc:"):
			if strings.HasPrefix(v, "-Xloggc:") {
				val = v[len("-Xloggc:"):]
			}
			c.writesTo(e, "writes a file named by "+name, literal(val))
		case strings.HasPrefix(v, "-Xlog:") || strings.HasPrefix(v, "-XX:StartFlightRecording"):
			for _, part := range strings.FieldsFunc(v, func(r rune) bool { return r == ':' || r == ',' }) {
				if f, ok := strings.CutPrefix(part, "file="); ok {
					c.writesTo(e, "writes a log or recording file", literal(f))
				} else if f, ok := strings.CutPrefix(part, "filename="); ok {
					c.writesTo(e, "writes a log or recording file", literal(f))
				}
			}
		}
	}
}

// jshell is a Java REPL: -J and -R pass options to its JVMs.
func jshell(c *call) effect {
	e := interp(lang{name: "Java", values: "JRC", long: []string{"--class-path", "--module-path", "--add-modules",
		"--startup", "--feedback", "--add-exports", "--execution"}, repl: true})(c)
	var jvm []arg
	for _, w := range c.args {
		if w.static && (strings.HasPrefix(w.val, "-J") || strings.HasPrefix(w.val, "-R")) {
			jvm = append(jvm, valueArg(w, w.val[2:]))
		}
	}
	c.jvmOptions(&e, "jshell", jvm)
	return e
}

// inspectOpts open a debugger port: whoever connects runs code.
var inspectOpts = []string{"--inspect", "--inspect-brk", "--inspect-wait"}

// inspects raises e when one of inspectOpts is given.
func (c *call) inspects(e *effect, lang string) {
	if c.has(inspectOpts...) {
		*e = worse(*e, listens("opens a debugger port through which other programs run "+lang+" code"))
	}
}

var nodeLang = lang{name: "Node.js", code: "ep", longCode: []string{"--eval", "--print"}, values: "rC", libs: "r",
	long: []string{"--require", "--import", "--loader", "--experimental-loader", "--conditions", "--env-file",
		"--input-type", "--title", "--inspect-port", "--stack-size", "--redirect-warnings", "--cpu-prof-dir",
		"--heap-prof-dir", "--diagnostic-dir", "--report-dir", "--report-directory", "--report-filename", "--tls-keylog",
		"--trace-event-file-pattern", "--snapshot-blob", "--run", "--cpu-prof-name", "--heap-prof-name", "--openssl-config"},
	longLibs: []string{"--require", "--import", "--loader", "--experimental-loader"}, runs: []string{"--test", "--run"},
	interactive: "i", longInteractive: []string{"--interactive"}, listen: inspectOpts,
	writes: []string{"--redirect-warnings", "--cpu-prof-dir", "--heap-prof-dir", "--diagnostic-dir", "--report-dir",
		"--report-directory", "--report-filename", "--tls-keylog", "--trace-event-file-pattern", "--snapshot-blob",
		"--cpu-prof-name", "--heap-prof-name"}}

var luaLang = lang{name: "Lua", code: "e", values: "l", libs: "l", interactive: "i"}

var elixirLang = lang{name: "Elixir", code: "e", longCode: []string{"--eval"}, values: "r",
	long:   []string{"--sname", "--name", "--cookie", "--rpc-eval", "--require", "-pr", "--erl", "--remsh", "-pa", "-pz"},
	listen: []string{"--sname", "--name"}, connects: []string{"--rpc-eval", "--remsh"}}

var iexLang = func() lang { l := elixirLang; l.repl = true; return l }()

func deno(c *call) effect {
	ops := c.operands("-o", "--output", "--root", "--config", "-c", "--import-map", "--cert", "--lock", "--env-file",
		"--location", "--seed", "--v8-flags", "--reload", "--inspect-port")
	var e effect
	switch {
	case len(ops) == 0 && c.has("--version", "-V", "--help", "-h"):
		return read("prints version or help")
	case len(ops) == 0:
		e = c.stdinCode("JavaScript", false)
	default:
		e = denoCommand(c, ops)
	}
	if len(ops) == 0 || ops[0].val == "repl" {
		e = worse(e, c.stdinCode("JavaScript", false))
	}
	c.writesTo(&e, "writes files where -o says", c.values("-o", "--output")...)
	c.inspects(&e, "JavaScript")
	c.raiseNetCode(&e)
	return e
}

func denoCommand(c *call, ops []arg) effect {
	remote := slices.ContainsFunc(ops, func(a arg) bool {
		return strings.Contains(a.val, "://") || strings.HasPrefix(a.val, "npm:") || strings.HasPrefix(a.val, "jsr:")
	})
	switch ops[0].val {
	case "install", "cache", "upgrade", "add", "x", "jupyter", "outdated":
		e := install(airlock.TierNetworkEgress, "downloads JavaScript modules")
		c.raiseWrites(&e, c.values("--root")...)
		return e
	case "fmt":
		return formatter("", "--check")(c)
	case "lint", "check", "info", "doc", "types", "help", "completions", "coverage":
		e := read("checks or describes code")
		if remote {
			e = net(airlock.ClassNetHTTP, "downloads the modules it checks or describes")
		}
		if c.has("--fix") {
			e = worse(e, write(airlock.ClassFSWrite, "fixes files"))
		}
		return e
	case "compile", "bundle", "init", "vendor":
		return write(airlock.ClassFSWrite, "writes project files")
	case "publish":
		return publish("publishes a package")
	case "remove", "uninstall", "clean":
		return write(airlock.ClassFSWrite, "removes packages or caches")
	case "serve":
		return net(airlock.ClassNetConnect, "serves the network")
	}
	if remote {
		return effect{class: airlock.ClassProcessExec, cap: airlock.CapNetworkEgress, tier: airlock.TierNetworkEgress, reason: "downloads and runs code"}
	}
	e := exec("runs JavaScript code Airlock cannot inspect")
	if c.has("-A", "--allow-all", "-N", "--allow-net") {
		e = effect{class: airlock.ClassProcessExec, cap: airlock.CapNetworkEgress, tier: airlock.TierNetworkEgress,
			reason: "runs JavaScript code Airlock cannot inspect, allowed to use the network"}
	}
	if c.has("-e", "--eval") || ops[0].val == "eval" {
		return e
	}
	c.raiseReads(&e, ops...)
	return e
}

func bun(c *call) effect {
	ops := c.operands("-o", "--outfile", "--outdir", "--cwd", "-r", "--preload", "--config", "-c", "--env-file")
	var e effect
	switch {
	case len(ops) == 0 && c.has("-e", "--eval", "-p", "--print"):
		e = exec("runs JavaScript code Airlock cannot inspect")
	case len(ops) == 0 && c.has("--version", "-v", "--help", "-h", "--revision"):
		return read("prints version or help")
	case len(ops) == 0:
		e = exec("runs bun")
	default:
		e = bunCommand(c, ops)
	}
	c.writesTo(&e, "writes bundles where an option says", c.values("-o", "--outfile", "--outdir")...)
	c.inspects(&e, "JavaScript")
	c.raiseNetCode(&e)
	return e
}

func bunCommand(c *call, ops []arg) effect {
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
	case "exec":
		// bun exec runs its operand with bun's shell, which reads bash.
		c.runWords("bun exec", ops[1:], c.in)
		return effect{none: true}
	case "repl":
		e := c.stdinCode("JavaScript", false)
		return e
	}
	return exec("runs JavaScript code Airlock cannot inspect")
}

// dart: its subcommands; pub talks to the package registry.
func dart(c *call) effect {
	ops := c.operands("-o", "--output", "--define", "-D", "--packages", "--observe", "--enable-vm-service")
	e := exec("runs Dart code Airlock cannot inspect")
	if len(ops) == 0 {
		e = read("prints Dart help or version")
	} else {
		switch ops[0].val {
		case "pub":
			e = dartPub(ops[1:])
		case "analyze", "info", "help", "--version":
			e = read("checks or describes code")
		case "format":
			e = formatter("", "--output=none --output=show --output=json")(c)
		case "fix":
			e = write(airlock.ClassFSWrite, "fixes code")
			if !c.has("--apply") {
				e = read("shows fixes")
			}
		case "compile", "create", "doc":
			e = write(airlock.ClassFSWrite, "writes project files")
		case "devtools":
			e = net(airlock.ClassNetConnect, "serves developer tools")
		}
		c.raiseReads(&e, ops[1:]...)
	}
	c.writesTo(&e, "writes files where -o says", c.values("-o", "--output")...)
	if c.has("--observe", "--enable-vm-service") {
		e = worse(e, listens("opens the Dart VM service, through which other programs run code"))
	}
	return e
}

func dartPub(ops []arg) effect {
	if len(ops) == 0 {
		return read("shows pub help")
	}
	switch ops[0].val {
	case "publish", "lish":
		return publish("publishes a package")
	case "deps", "outdated", "token":
		if ops[0].val == "token" {
			return write(airlock.ClassFSWrite, "changes registry tokens")
		}
		return read("shows dependencies")
	}
	return install(airlock.TierNetworkEgress, "downloads Dart packages")
}
