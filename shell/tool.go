package shell

import (
	"maps"
	"slices"
	"strings"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/sensitive"
)

// Tools: programs known by what their options do. A program's getopt says
// how it spells its options and, in roles, what it does with the values of
// those that matter (a file it writes, a file it reads and sends or
// prints, a command it runs, a library it loads); use applies a role to a
// value, for an option as for a word of a console command.

// role is what a program does with an option's value or a console
// command's word.
type role uint8

const (
	writesFile   role = iota + 1 // writes the file or directory it names
	sendsFile                    // reads the file it names and sends or prints it
	listsFiles                   // reads the names of files to read from the file it names ("-": its input)
	runsCommand                  // runs it as a shell command
	runsFilter                   // runs it as a shell command that reads what the program writes (a pager)
	runsProgram                  // runs it as a program, with arguments of its own (a shell given runs a script)
	runsFile                     // follows the commands or the configuration in the file it names, which Airlock cannot see
	usesConfig                   // like runsFile, for a configuration that also holds its credentials (mysql --defaults-file)
	loadsLibrary                 // loads a library, an engine or a plugin
	usesSocket                   // talks to the local socket it names
	opensEditor                  // runs an editor, or another program the environment names (console commands)
	setsVars                     // sets variables, some of which name commands or files (console commands)
	runsConsole                  // runs it as commands of the same console (lftp's alias and cmd:at-exit)
	runsKeys                     // types it as keys, which can run shell commands (mutt's push)
)

// tool is a program that reads the files it is given (or only shows
// information about them, with meta), and does what its options' roles
// say.
type tool struct {
	getopt
	reason string
	meta   bool
}

func (t tool) rule(c *call) effect { return t.classify(c, t.parse(c.args)) }

func (t tool) classify(c *call, p parsed) effect {
	e := read(t.reason)
	if !t.meta {
		c.raiseReads(&e, p.ops...)
	}
	c.useOptions(&e, p.opts, t.roles)
	if p.dyn && t.runs() {
		e = worse(e, exec("takes options only known at run time, which may run commands"))
	}
	return e
}

// runs reports whether one of the tool's options runs a command.
func (t tool) runs() bool {
	for _, r := range t.roles {
		if r == runsCommand || r == runsFilter || r == runsProgram {
			return true
		}
	}
	return false
}

// client is a program that does base, and what its options' roles say.
func client(g getopt, base effect) rule {
	return func(c *call) effect {
		e := base
		c.useOptions(&e, g.parse(c.args).opts, g.roles)
		return e
	}
}

// useOptions records what a command does with its options' values. An
// ambiguous abbreviation counts as each option it may be.
func (c *call) useOptions(e *effect, opts []option, roles map[string]role) {
	for _, o := range opts {
		switch {
		case !o.has:
		case roles[o.name] != 0:
			c.use(e, roles[o.name], c.name+" "+o.name, o.val)
		case o.ambiguous:
			for _, name := range slices.Sorted(maps.Keys(roles)) {
				if o.is([]string{name}) {
					c.use(e, roles[name], c.name+" "+name, o.val)
				}
			}
		}
	}
}

// use records what a command does with a value: a file it writes or sends
// (raised by the path), a command it runs (analysed), a file of commands or
// a library (code Airlock cannot see, at least exec). A file named "|CMD"
// or "CMD|" is a command that output goes to or input comes from (psql -o
// '|cmd', mutt's source 'cmd|'), and "@FILE" is FILE (swaks --body @FILE).
func (c *call) use(e *effect, r role, via string, v arg) {
	if v.static && (r == writesFile || r == sendsFile || r == runsFile) {
		switch {
		case strings.HasPrefix(v.val, "|"):
			c.shellCommand(via+" |", v.val[1:])
			return
		case strings.HasSuffix(v.val, "|") && r != writesFile:
			c.shellCommand(via, strings.TrimSuffix(v.val, "|"))
			return
		case strings.HasPrefix(v.val, "@") && r == sendsFile:
			v = valueArg(v, v.val[1:])
		}
	}
	switch r {
	case writesFile:
		if stream(v) {
			return
		}
		*e = worse(*e, write(airlock.ClassFSWrite, "writes "+v.text))
		c.raiseWrites(e, v)
	case sendsFile:
		c.raiseReads(e, v)
	case listsFiles:
		c.raiseReads(e, v)
		names := c.stdinNames(v)
		c.raiseReads(e, names...)
		if names == nil && e.tier < airlock.TierPrivileged {
			// The files it reads are the names in v, which Airlock cannot
			// see: any file, a secret included.
			*e = maySecret("reads the files " + v.text + " lists (" + via + "), which Airlock cannot see")
		}
	case runsCommand:
		c.runWords(via, []arg{v}, input{}).lenient = true
	case runsFilter:
		c.runWords(via, []arg{v}, input{kind: inPipe})
	case runsProgram:
		c.runWords(via, []arg{v, literal("...")}, input{}).lenient = true
	case runsFile, usesConfig:
		*e = worse(*e, exec("follows the commands or settings in "+v.text+", which Airlock cannot see ("+via+")"))
		if r == runsFile {
			c.raiseReads(e, v)
		}
	case loadsLibrary:
		*e = worse(*e, loadsNative("loads a library or plugin ("+via+" "+v.text+"), which runs any code with the program's rights"))
	case usesSocket:
		if v, ok := v.pathValue(); ok && e.tier < airlock.TierPrivileged {
			if place, ok := c.cat.SystemPlace(c.resolve(v), false); ok {
				*e = effect{class: airlock.ClassNetConnect, cap: airlock.CapHostAdmin, tier: airlock.TierPrivileged,
					reason: "talks to a system service's socket " + place}
			}
		}
	case opensEditor:
		*e = worse(*e, exec("runs an editor or a program its environment names ("+via+")"))
	case runsKeys:
		c.runUnknown(via, via+" "+v.text, "types keys, which can run shell commands")
	}
}

// shellCommand analyses a shell command that a client runs (ftp's "!cmd");
// none is an interactive shell, which reads input Airlock cannot see.
func (c *call) shellCommand(via, cmd string) {
	if cmd = strings.TrimSpace(cmd); cmd == "" {
		c.runUnknown(via, via, "starts a shell that reads its input")
		return
	}
	c.runScript(via, cmd, input{}).lenient = true
}

// stream reports whether a file a program writes is standard output or a
// sink ("-", /dev/stdout, /dev/null), which stores nothing.
func stream(a arg) bool {
	return a.static && (a.val == "-" || sensitive.IsNullDevice(a.val))
}

// stdinNames returns the file names a list holds when the list is the
// command's standard input and Airlock knows it (a here-document, echo's
// words): the names a program reads with --files0-from=- or -T -.
func (c *call) stdinNames(list arg) []arg {
	text, ok := c.in.names()
	if !list.static || list.val != "-" && list.val != "/dev/stdin" || !ok {
		return nil
	}
	var out []arg
	for _, n := range strings.FieldsFunc(text, func(r rune) bool { return r == '\n' || r == 0 }) {
		out = append(out, literal(n))
	}
	return out
}
