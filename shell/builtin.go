package shell

import (
	"strings"

	"github.com/airlock-dev/airlock"
)

// Shell built-ins that change nothing outside the shell, and those that
// run strings (eval, trap, alias, source).
var builtins = map[string]rule{
	":": inertRule("does nothing"), "true": inertRule("does nothing"), "false": inertRule("does nothing"),
	"echo": inertRule("prints text"), "printf": printf, "read": readVars,
	"shift": inertRule("shifts arguments"), "wait": inertRule("waits for jobs"),
	"exit": inertRule("exits the shell"), "return": inertRule("returns"), "logout": inertRule("exits the shell"),
	"break": inertRule("leaves a loop"), "continue": inertRule("continues a loop"),
	"test": inertRule("tests a condition"), "[": inertRule("tests a condition"),
	"pwd": inertRule("prints the working directory"), "type": inertRule("describes a command"),
	"hash": hash, "set": inertRule("sets shell options"), "shopt": inertRule("sets shell options"),
	"unset": unset, "export": declare, "declare": declare, "local": declare, "readonly": declare,
	"typeset": declare, "let": inertRule("evaluates arithmetic"), "umask": inertRule("sets the file mode mask"),
	"ulimit": inertRule("sets resource limits"), "getopts": getopts, "jobs": inertRule("lists jobs"),
	"bg": inertRule("resumes a job"), "fg": inertRule("resumes a job"), "disown": inertRule("forgets a job"),
	"times": inertRule("prints times"), "caller": inertRule("prints the call stack"),
	"dirs": inertRule("prints the directory stack"), "help": inertRule("prints help"),
	"suspend": inertRule("suspends the shell"), "compgen": inertRule("lists completions"),
	"complete": inertRule("sets completions"), "compopt": inertRule("sets completions"),
	"bind": inertRule("sets key bindings"), "unalias": inertRule("removes aliases"),
	"mapfile": mapfile, "readarray": mapfile, "enable": enable, "fc": fc, "history": history,
	"eval": eval, "source": source, ".": source, "trap": trap, "alias": alias,
}

func printf(c *call) effect {
	if v, ok := c.value("-v"); ok {
		if r, bad := sensitiveVar(v.val); bad || !v.static {
			return env(orElse(r, "sets a variable whose name is only known at run time"))
		}
	}
	return inert("prints text")
}

func orElse(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// varTargets checks the variables a built-in assigns (read NAME).
func varTargets(names []arg, reason string) effect {
	for _, n := range names {
		if !n.static {
			return env("sets a variable whose name is only known at run time")
		}
		if r, bad := sensitiveVar(n.val); bad {
			return env(r)
		}
	}
	return inert(reason)
}

func readVars(c *call) effect {
	names := c.operands("-a", "-d", "-i", "-n", "-N", "-p", "-t", "-u")
	names = append(names, c.values("-a")...)
	return varTargets(names, "reads input into variables")
}

func getopts(c *call) effect {
	ops := c.operands()
	if len(ops) >= 2 {
		return varTargets(ops[1:2], "parses options")
	}
	return inert("parses options")
}

func mapfile(c *call) effect {
	if cb, ok := c.value("-C"); ok {
		if !cb.static {
			return unknown("runs a callback only known at run time")
		}
		c.runScript("mapfile -C", cb.val, input{})
	}
	return varTargets(c.operands("-d", "-n", "-O", "-s", "-u", "-C", "-c"), "reads lines into an array")
}

func unset(c *call) effect {
	if c.has("-f") {
		return inert("removes functions")
	}
	e := varTargets(c.operands(), "unsets variables")
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
	if p, ok := c.value("-p"); ok {
		return env("makes a command name run " + p.text)
	}
	return inert("remembers command locations")
}

func enable(c *call) effect {
	if f, ok := c.value("-f"); ok {
		return env("loads shell built-ins from library " + f.text)
	}
	return inert("enables or disables built-ins")
}

func fc(c *call) effect {
	if c.has("-l") {
		return read("lists the history")
	}
	return unknown("runs commands again from the history")
}

func history(c *call) effect {
	if len(c.args) > 0 && strings.HasPrefix(c.args[0].val, "-") {
		return write(airlock.ClassFSWrite, "changes the shell history")
	}
	return read("prints the shell history")
}

func eval(c *call) effect {
	if len(c.args) == 0 {
		return inert("does nothing")
	}
	script, ok := joinValues(c.args)
	if !ok {
		return unknown("evaluates a string only known at run time")
	}
	c.runScript("eval", script, c.in)
	return effect{none: true}
}

func source(c *call) effect {
	if len(c.args) == 0 {
		return inert("does nothing")
	}
	return c.runsFile(c.args[0], "shell", true)
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

func alias(c *call) effect {
	for _, a := range c.operands() {
		if !a.static {
			return unknown("defines an alias only known at run time")
		}
		if name, val, ok := strings.Cut(a.val, "="); ok {
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
		return exec("runs " + lang + " code from a here-document, which Airlock cannot inspect")
	case inFile:
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
