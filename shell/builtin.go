package shell

import (
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/airlock-dev/airlock"
)

// Shell built-ins that change nothing outside the shell, and those that
// run strings (eval, trap, alias, source).
var builtins = sync.OnceValue(func() map[string]rule {
	return map[string]rule{
		":": inertRule("does nothing"), "true": inertRule("does nothing"), "false": inertRule("does nothing"),
		"echo": echo, "printf": printf, "read": readVars,
		"shift": inertRule("shifts arguments"), "wait": waitRule,
		"exit": inertRule("exits the shell"), "return": inertRule("returns"), "logout": inertRule("exits the shell"),
		"break": inertRule("leaves a loop"), "continue": inertRule("continues a loop"),
		"test": testRule, "[": testRule,
		"pwd": inertRule("prints the working directory"), "type": inertRule("describes a command"),
		"hash": hash, "set": setRule, "shopt": shoptRule,
		"unset": unset, "export": declare, "declare": declare, "local": declare, "readonly": declare,
		"typeset": declare, "let": letRule, "umask": inertRule("sets the file mode mask"),
		"ulimit": inertRule("sets resource limits"), "getopts": getopts, "jobs": jobsRule,
		"bg": inertRule("resumes a job"), "fg": inertRule("resumes a job"), "disown": inertRule("forgets a job"),
		"times": inertRule("prints times"), "caller": inertRule("prints the call stack"),
		"dirs": inertRule("prints the directory stack"), "help": inertRule("prints help"),
		"suspend": inertRule("suspends the shell"), "compgen": completes, "complete": completes,
		"compopt": inertRule("sets completions"), "bind": bindRule, "unalias": inertRule("removes aliases"),
		"mapfile": mapfile, "readarray": mapfile, "enable": enable, "history": history,
		"fc": fc, "hist": fc, "r": fixed(unknown("runs a command again from the history")),
		"eval": eval, "source": source, ".": source, "trap": trap, "alias": alias,
		// zsh's own.
		"ztcp": ztcp, "zsocket": ztcp, "zftp": fixed(net(airlock.ClassNetConnect, "transfers files over FTP")),
		"zmodload": zmodload, "zpty": zpty, "sched": schedRule, "emulate": emulateRule,
		"zcompile": writes(airlock.ClassFSWrite, "compiles shell functions to a file"),
	}
})

// echo prints its words; a word that may hold a secret (echo
// "$GITHUB_TOKEN") makes it a secret read (call.prove).
func echo(*call) effect { return inert("prints text") }

func printf(c *call) effect {
	if v, ok := c.value("-v"); ok {
		c.evalName(v, "printf -v")
		if r, bad := sensitiveVar(v.val); bad || !v.static && !v.lenient {
			return env(orElse(r, "sets a variable whose name is only known at run time"))
		}
		return inert("prints text into a variable")
	}
	return echo(c)
}

// testRule is test and [: -v NAME evaluates a subscript in NAME.
func testRule(c *call) effect {
	for i := 0; i+1 < len(c.args); i++ {
		if a := c.args[i]; a.static && a.val == "-v" {
			c.evalName(c.args[i+1], "test -v")
		}
	}
	return inert("tests a condition")
}

// letRule is let run as a command (builtin let …): each word is an
// arithmetic expression.
func letRule(c *call) effect {
	for _, a := range c.args {
		switch {
		case a.static:
			c.runScript("let", "(( "+a.val+" ))", input{}).lenient = true
		case !a.lenient:
			c.runUnknown("let", a.text, "evaluates arithmetic only known at run time, which may run commands")
		}
	}
	return inert("evaluates arithmetic")
}

// setRule sets shell options; alone it prints every variable.
func setRule(c *call) effect {
	if len(c.args) == 0 {
		return printsEnvironment
	}
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		switch {
		case !a.static:
			if !a.lenient {
				return env("sets shell options only known at run time")
			}
		case a.val == "--" || a.val == "-":
			return inert("sets the positional parameters")
		case len(a.val) > 1 && (a.val[0] == '-' || a.val[0] == '+'):
			for _, ch := range a.val[1:] {
				switch {
				case ch == 'o' && i+1 < len(c.args): // -o NAME, -euo pipefail
					i++
					if o := c.args[i]; !o.static || !inertSetOptions[o.val] {
						return env("sets shell option " + o.text + ", which changes how the shell reads later commands")
					}
				case ch == 'o': // set -o alone prints the options
				case !strings.ContainsRune(inertSetFlags, ch):
					return env("sets shell option -" + string(ch) + ", which changes how the shell reads later commands")
				}
			}
		default:
			return inert("sets the positional parameters")
		}
	}
	return inert("sets shell options")
}

// The shell options that leave how later commands are read as Airlock
// reads them (bash(1), "The Set Builtin", "The Shopt Builtin"); any other
// (set -k makes every NAME=VALUE word an environment variable, shopt -s
// dotglob makes * match .env, cdable_vars makes cd follow a variable,
// lastpipe runs a pipeline's last command in this shell) is privileged,
// as a variable that changes what later commands run is.
var (
	inertSetFlags   = "abBCeEfhHmnPtTuvx"
	inertSetOptions = stringSet("allexport", "braceexpand", "emacs", "errexit", "errtrace", "functrace", "hashall",
		"histexpand", "history", "ignoreeof", "interactive-comments", "monitor", "noclobber", "noexec", "noglob",
		"nolog", "notify", "nounset", "onecmd", "physical", "pipefail", "verbose", "vi", "xtrace")
	inertShoptOptions = stringSet("checkhash", "checkjobs", "checkwinsize", "cmdhist", "complete_fullquote",
		"direxpand", "dirspell", "extglob", "extquote", "failglob", "force_fignore", "globasciiranges", "globstar",
		"gnu_errfmt", "histappend", "histreedit", "histverify", "hostcomplete", "huponexit", "inherit_errexit",
		"interactive_comments", "lithist", "localvar_inherit", "localvar_unset", "login_shell", "mailwarn",
		"no_empty_cmd_completion", "nocaseglob", "nocasematch", "noexpand_translation", "nullglob", "progcomp",
		"progcomp_alias", "promptvars", "shift_verbose", "sourcepath", "varredir_close", "assoc_expand_once",
		"autocd", "cdspell", "checkwinsize", "compat31", "execfail")
)

// shoptRule is shopt: setting or unsetting an option not known to leave
// later commands as Airlock reads them is privileged (see inertSetOptions).
func shoptRule(c *call) effect {
	p := getopt{}.parse(c.args)
	if !p.has("-s", "-u") {
		return inert("prints shell options")
	}
	o := p.has("-o")
	for _, name := range p.ops {
		switch {
		case !name.static:
			if !name.lenient {
				return env("sets shell options only known at run time")
			}
		case o && !inertSetOptions[name.val], !o && !inertShoptOptions[name.val]:
			return env("sets shell option " + name.text + ", which changes how the shell reads later commands")
		}
	}
	return inert("sets shell options")
}

func orElse(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// varTargets checks the variables a built-in assigns (read NAME): a
// subscript in a name is evaluated.
func (c *call) varTargets(names []arg, reason string) effect {
	for _, n := range names {
		c.evalName(n, c.name)
	}
	for _, n := range names {
		if !n.static {
			if n.lenient {
				continue
			}
			return env("sets a variable whose name is only known at run time")
		}
		name, _, _ := strings.Cut(n.val, "[")
		if r, bad := sensitiveVar(name); bad {
			return env(r)
		}
	}
	return inert(reason)
}

func readVars(c *call) effect {
	p := getopt{short: "adinNptu"}.split(c.args)
	names := p.ops
	if a, ok := p.value("-a"); ok {
		names = append(names, a)
	}
	return c.varTargets(names, "reads input into variables")
}

func getopts(c *call) effect {
	ops := c.operands()
	if len(ops) >= 2 {
		return c.varTargets(ops[1:2], "parses options")
	}
	return inert("parses options")
}

func mapfile(c *call) effect {
	p := getopt{short: "dnOsuCc"}.split(c.args)
	names := p.ops
	if cb, ok := p.value("-C"); ok {
		if !cb.static {
			return unknown("runs a callback only known at run time")
		}
		c.runScript("mapfile -C", cb.val, input{})
	}
	return c.varTargets(names, "reads lines into an array")
}

func unset(c *call) effect {
	if c.has("-f") {
		return inert("removes functions")
	}
	e := c.varTargets(c.operands(), "unsets variables")
	if !e.inert {
		e.reason = "un" + e.reason
	}
	return e
}

// declare is export or declare run as a command (command export X=1); the
// usual form is a DeclClause, handled by walkDecl.
func declare(c *call) effect {
	for _, a := range c.args {
		if !a.static {
			return env("sets a variable whose name is only known at run time")
		}
		name, _, _ := strings.Cut(a.val, "=")
		if r, bad := sensitiveVar(name); bad && strings.Contains(a.val, "=") {
			return env(r)
		}
	}
	return inert("sets shell variables")
}

func hash(c *call) effect {
	p := getopt{short: "p"}.split(c.args)
	if prog, ok := p.value("-p"); ok {
		return env("makes a command name run " + prog.text)
	}
	return inert("remembers command locations")
}

// waitRule is wait, whose -p NAME puts a process id in a variable.
func waitRule(c *call) effect {
	p := getopt{short: "p"}.split(c.args)
	if v, ok := p.value("-p"); ok {
		return c.varTargets([]arg{v}, "waits for jobs")
	}
	return inert("waits for jobs")
}

// enable loads built-ins from a shared library with -f, and also when a
// name is no built-in: bash then looks for a library of that name (one with
// a "/" is the library's path).
func enable(c *call) effect {
	p := getopt{short: "f"}.split(c.args)
	names := p.ops
	if f, ok := p.value("-f"); ok {
		return env("loads shell built-ins from library " + f.text)
	}
	if !p.has("-n", "-d") {
		for _, n := range names {
			if !n.static || !bashBuiltins[n.val] {
				return env("loads shell built-in " + n.text + " from a library")
			}
		}
	}
	return inert("enables or disables built-ins")
}

// bashBuiltins are the names of bash's built-ins.
var bashBuiltins = stringSet(".", ":", "[", "alias", "bg", "bind", "break", "builtin", "caller", "cd", "command",
	"compgen", "complete", "compopt", "continue", "declare", "dirs", "disown", "echo", "enable", "eval", "exec",
	"exit", "export", "false", "fc", "fg", "getopts", "hash", "help", "history", "jobs", "kill", "let", "local",
	"logout", "mapfile", "popd", "printf", "pushd", "pwd", "read", "readarray", "readonly", "return", "set",
	"shift", "shopt", "source", "suspend", "test", "times", "trap", "true", "type", "typeset", "ulimit", "umask",
	"unalias", "unset", "wait")

// fc runs commands from the history again, through the editor -e names
// ("-e -" and -s run them as they are), unless it only lists them (-l).
func fc(c *call) effect {
	p := getopt{short: "e"}.split(c.args)
	if e, ok := p.value("-e"); p.has("-l") && !p.has("-s") && (!ok || e.val != "-") {
		return read("lists the history")
	}
	return unknown("runs commands again from the history")
}

// history -r and -n read a file (by default the history file) into the
// history, which history then prints; -w and -a write it to a file.
func history(c *call) effect {
	p := getopt{short: "d"}.split(c.args)
	ops := p.ops
	if len(p.opts) == 0 {
		return read("prints the shell history")
	}
	e := write(airlock.ClassFSWrite, "changes the shell history")
	file := literal("~/.bash_history") // HISTFILE's default
	if len(ops) > 0 {
		file = ops[0]
	}
	switch {
	case p.has("-w", "-a"):
		c.raiseWrites(&e, file)
	case p.has("-r", "-n"):
		c.raiseReads(&e, file)
	}
	return e
}

// bindRule is bind: it reads key bindings from a file (-f), whose lines an
// error message prints, and binds keys to shell commands (-x), which run
// when the key is pressed.
func bindRule(c *call) effect {
	p := getopt{short: "mqurfx"}.split(c.args)
	e := inert("sets key bindings")
	for _, o := range p.opts {
		switch {
		case o.name == "-f" && o.has:
			e = read("reads key bindings from " + o.val.text)
			c.raiseReads(&e, o.val)
		case o.name == "-x" && o.has:
			if !o.val.static {
				return unknown("binds a key to a command only known at run time")
			}
			if _, cmd, ok := strings.Cut(o.val.val, ":"); ok {
				c.runScript("bind -x", strings.TrimSpace(cmd), input{})
			}
		}
	}
	return e
}

// completes is compgen or complete: -C names a command that generates
// completions, and -W a word list that bash expands, running the command
// substitutions in it. compgen does so at once, complete when a word is
// completed.
func completes(c *call) effect {
	p := getopt{short: "oAGWFCXPS"}.split(c.args)
	for _, o := range p.opts {
		if !o.has || o.name != "-C" && o.name != "-W" {
			continue
		}
		if !o.val.static {
			return unknown("completes with a command only known at run time")
		}
		script := o.val.val
		if o.name == "-W" {
			script = ": " + script
		}
		n := c.runScript(c.name+" "+o.name, script, input{})
		n.lenient = true
	}
	return inert("lists or sets completions")
}

// jobsRule is jobs, whose -x runs a command with job numbers in its words.
func jobsRule(c *call) effect {
	p := getopt{}.split(c.args)
	rest := p.ops
	if !p.has("-x") || len(rest) == 0 {
		return inert("lists jobs")
	}
	c.run("jobs -x", rest, effect{})
	return effect{none: true}
}

// ztcp and zsocket open (or with -l, listen on) TCP and Unix connections.
func ztcp(c *call) effect {
	if len(c.args) == 0 {
		return read("lists connections")
	}
	if (getopt{}).split(c.args).has("-c") {
		return inert("closes a connection")
	}
	return net(airlock.ClassNetConnect, "opens a network connection")
}

// zmodload loads zsh modules (shared libraries) unless it only lists them.
func zmodload(c *call) effect {
	p := getopt{}.split(c.args)
	names := p.ops
	if len(names) == 0 || p.has("-l", "-L", "-e", "-u") {
		return inert("lists or unloads zsh modules")
	}
	return exec("loads zsh modules, which are libraries")
}

// zpty runs a command in a pseudo-terminal: "zpty [-eb] NAME COMMAND...";
// its other options talk to one that runs.
func zpty(c *call) effect {
	p := getopt{}.split(c.args)
	rest := p.ops
	if len(rest) < 2 || p.has("-d", "-w", "-r", "-t", "-L", "-n") {
		return inert("talks to a command in a pseudo-terminal")
	}
	c.runWords("zpty", rest[1:], input{})
	return effect{none: true}
}

// schedRule is zsh's sched, which runs a command later: "sched [-o]
// [+]TIME COMMAND...".
func schedRule(c *call) effect {
	p := getopt{}.split(c.args)
	rest := p.ops
	if len(rest) < 2 {
		return inert("lists or removes scheduled commands")
	}
	c.runWords("sched", rest[1:], input{})
	return effect{none: true}
}

// emulateRule is zsh's emulate, which runs the command given to -c in
// another shell's mode.
func emulateRule(c *call) effect {
	if cmd, ok := c.value("-c"); ok {
		if !cmd.static {
			return unknown("runs a command only known at run time")
		}
		c.runScript("emulate -c", cmd.val, c.in)
		return effect{none: true}
	}
	return inert("sets shell options")
}

func eval(c *call) effect {
	if len(c.args) == 0 {
		return inert("does nothing")
	}
	script, ok := joinValues(c.args)
	if !ok {
		if slices.ContainsFunc(c.args, func(a arg) bool { return !a.static && !a.lenient }) {
			return unknown("evaluates a string only known at run time")
		}
		return exec("evaluates a string the function's arguments give")
	}
	c.runScript("eval", script, c.in).share = true
	return effect{none: true}
}

func source(c *call) effect {
	args := c.args
	if len(args) > 0 && args[0].static && args[0].val == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		return inert("does nothing")
	}
	return c.runsFile(args[0], "shell", true)
}

func trap(c *call) effect {
	ops := c.operands()
	if c.has("-l", "-p") || len(ops) < 2 || !ops[0].static && ops[0].text == "" {
		return inert("lists or resets signal handlers")
	}
	action := ops[0]
	switch {
	case !action.static:
		return unknown("sets a signal handler only known at run time")
	case action.val == "" || action.val == "-" || isFd(action.val):
		return inert("resets signal handlers")
	}
	c.runScript("trap", action.val, input{})
	return inert("sets a signal handler")
}

// alias defines commands: each value is analysed as the command it runs.
// An alias for a wrapper (alias s=sudo) runs what follows it where it is
// used, which Airlock does not see: its command is only known then.
func alias(c *call) effect {
	for _, a := range c.operands() {
		if !a.static {
			return unknown("defines an alias only known at run time")
		}
		if name, val, ok := strings.Cut(a.val, "="); ok {
			if f := strings.Fields(val); len(f) > 0 && (wrappers()[baseName(path.Base(f[0]))] != nil ||
				f[0] == "eval" || f[0] == "source" || f[0] == ".") && !strings.ContainsAny(val, ";&|<>()`$\n") {
				val += " ${ALIAS_ARGUMENTS}"
			}
			c.runScript("alias "+name, val, input{})
		}
	}
	return inert("defines aliases")
}

// runsFile classifies running a script file: a process substitution is code
// produced by another command; /dev/stdin reads standard input.
func (c *call) runsFile(f arg, lang string, shell bool) effect {
	switch {
	case f.subst:
		return unknown("runs code produced by another command")
	case !f.static && f.path == "" && !f.lenient:
		return unknown("runs a " + lang + " script only known at run time (" + orElse(f.from, f.text) + ")")
	case f.static && (f.val == "/dev/stdin" || f.val == "/dev/fd/0" || f.val == "-"):
		return c.stdinCode(lang, shell)
	}
	e := exec("runs " + lang + " script " + f.text)
	c.raiseReads(&e, f)
	return e
}

// stdinCode classifies a shell or interpreter that reads its code from
// standard input.
func (c *call) stdinCode(lang string, shell bool) effect {
	if c.xargs {
		return unknown("runs code named by its input (xargs)")
	}
	switch c.in.kind {
	case inText:
		if shell {
			c.runScript(c.name+" <<", c.in.text, input{})
			return effect{none: true}
		}
		// Judged by what it names, as inline code is.
		e := exec("runs " + lang + " code from a here-document, which Airlock cannot inspect")
		c.raiseText(&e, c.in.text)
		return e
	case inFile:
		if p := c.resolve(c.in.text); strings.HasPrefix(p, "/dev/") || strings.HasPrefix(p, "/proc/") {
			return unknown("runs code read from " + c.in.text + ", which Airlock cannot see")
		}
		return exec("runs " + lang + " script " + c.in.text)
	case inNull:
		return read("runs nothing: its input is empty")
	case inPipe:
		return unknown("runs code read from a pipe")
	case inDynamic:
		return unknown("runs code from a here-document with expansions")
	}
	return unknown("runs code read from standard input")
}
