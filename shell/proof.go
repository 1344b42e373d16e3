package shell

import (
	"errors"
	"strings"

	"github.com/airlock-dev/airlock"
	"mvdan.cc/sh/v3/syntax"
)

// The read contract (docs/POLICY.md, "What read means"): a command is
// read-tier only when every part of it is understood. prove holds each
// read (and each built-in that changes nothing) to it; a part that is not
// understood raises the command.

// emptinessTest reports whether word i of c is the operand of test's (or
// ['s) -n or -z, which only tells whether it is empty.
func emptinessTest(c *call, i int) bool {
	if c.name != "test" && c.name != "[" || i < 2 {
		return false
	}
	op := c.words[i-1]
	return op.static && (op.val == "-n" || op.val == "-z")
}

// maySecret is the effect of a command that may reveal a secret: it reads
// or prints something only known at run time, which may be one.
func maySecret(reason string) effect {
	return effect{class: airlock.ClassCredentialsRead, cap: airlock.CapCredentialsRead, tier: airlock.TierPrivileged,
		reason: reason}
}

// prove raises e, the effect a rule gave a command, when the command is
// read-tier (or an inert built-in) but not proved harmless:
//   - a word or its input holds a value that may be a secret (an
//     environment variable not known to be harmless, a copy of one): it
//     prints it, or uses it;
//   - a word of a read is only known at run time: it may name any file, a
//     secret included, or be an option;
//   - a read names files relative to a directory only known at run time.
func (c *call) prove(e effect) effect {
	if e.none || e.tier > airlock.TierRead {
		return e
	}
	// A word that may hold a secret is printed (echo), sent, or quoted in
	// an error message (cd "$TOKEN": no such directory), and a comparison
	// tells it bit by bit; only test's -n and -z tell no more than whether
	// it is empty.
	for i, w := range c.words {
		if !w.static && w.secret && !w.lenient && !emptinessTest(c, i) {
			return maySecret("prints or uses " + w.text + ", which holds " + w.from)
		}
	}
	if e.inert {
		return e
	}
	if c.in.secret {
		return maySecret("reads " + c.in.from + " from its input, which may hold a secret")
	}
	for _, w := range c.args {
		if w.static || w.subst || w.lenient || w.path != "" || w.extra && w.from == "" {
			continue
		}
		return maySecret("reads what " + orElse(w.text, "a word") + " names, which holds " + orElse(w.from, "a value only known at run time") +
			": it may name any file, a secret included")
	}
	for _, name := range c.envs {
		if !inertEnv(name) {
			return worse(e, exec("runs "+c.name+" with $"+name+" set, which Airlock does not know to be inert"))
		}
	}
	if c.lost {
		for _, w := range c.args {
			if w.static && w.val != "" && w.val[0] != '-' && w.val[0] != '/' && w.val[0] != '~' {
				return maySecret("reads " + w.text + " relative to a directory only known at run time, which may hold secrets")
			}
		}
	}
	return e
}

// stateAfter records what a built-in leaves the shell: the variables it
// assigns (read, printf -v, mapfile, getopts, unset), the positional
// parameters (set --, shift), and what a sourced script may have changed.
func (a *walker) stateAfter(s *scope, c *call, pos position) error {
	set := func(name string, v value) error { return a.assign(s, name, v, pos) }
	var err error
	switch c.name {
	case "read":
		p := getopt{short: "adinNptu"}.split(c.args)
		v := s.inputValue(c.in)
		for _, n := range p.ops {
			if n.static && syntax.ValidName(n.val) {
				err = errors.Join(err, set(n.val, v))
			}
		}
		if arr, ok := p.value("-a"); ok && arr.static && syntax.ValidName(arr.val) {
			err = errors.Join(err, set(arr.val, v))
		}
		if len(p.ops) == 0 {
			err = errors.Join(err, set("REPLY", v))
		}
	case "mapfile", "readarray":
		p := getopt{short: "dnOsuCc"}.split(c.args)
		name := "MAPFILE"
		if len(p.ops) > 0 && p.ops[0].static {
			name = p.ops[0].val
		}
		if syntax.ValidName(name) {
			err = set(name, value{list: []value{s.inputValue(c.in)}, dynamic: "the lines mapfile reads"})
		}
	case "printf":
		if v, ok := c.value("-v"); ok && v.static {
			name, _, _ := strings.Cut(v.val, "[")
			out := dynamicValue("what printf formats", false)
			for _, w := range c.args {
				out.secret = out.secret || w.secret && !w.lenient
			}
			if syntax.ValidName(name) {
				err = set(name, out)
			}
		}
	case "getopts":
		ops := c.operands()
		if len(ops) >= 2 && ops[1].static && syntax.ValidName(ops[1].val) {
			err = set(ops[1].val, dynamicValue("the options getopts reads", false))
		}
		err = errors.Join(err, set("OPTARG", dynamicValue("an option's value, read by getopts", false)), set("OPTIND", intValue()))
	case "wait":
		if v, ok := c.value("-p"); ok && v.static && syntax.ValidName(v.val) {
			err = set(v.val, intValue())
		}
	case "unset":
		if c.has("-f") {
			return nil
		}
		for _, n := range c.operands() {
			if n.static && syntax.ValidName(n.val) {
				s.set(n.val, knownValue(""))
			}
		}
	case "set":
		args := c.args
		for i := 0; i < len(args); i++ {
			w := args[i]
			if !w.static {
				s.params = nil
				return nil
			}
			if w.val == "--" || w.val == "-" {
				s.params = valuesOf(args[i+1:])
				return nil
			}
			if !strings.HasPrefix(w.val, "-") && !strings.HasPrefix(w.val, "+") {
				s.params = valuesOf(args[i:])
				return nil
			}
			on := w.val[0] == '-'
			if strings.ContainsRune(w.val[1:], 'x') {
				s.xtrace = on // set -x traces every command, its words expanded
			}
			if strings.ContainsRune(w.val[1:], 'o') && i+1 < len(args) {
				// -o NAME (-euo pipefail): the next word is an option's name.
				i++
				if args[i].static && args[i].val == "xtrace" {
					s.xtrace = on
				}
			}
		}
	case "shift":
		n := 1
		if ops := c.operands(); len(ops) > 0 {
			if !ops[0].static || !isNumber(ops[0].val) {
				s.params = nil
				return nil
			}
			n = 0
			for _, d := range ops[0].val {
				n = n*10 + int(d-'0')
			}
		}
		if s.params != nil {
			s.params = s.params[min(n, len(s.params)):]
		}
	case "source", ".":
		s.forget("the sourced script")
		s.cwd, s.lost = "", true // it may cd anywhere
	}
	return err
}

// assign records a value a built-in gives a variable: one with the integer
// attribute (declare -i) evaluates it as arithmetic first.
func (a *walker) assign(s *scope, name string, v value, pos position) error {
	if s.lookup(name).integer {
		for _, e := range v.elements() {
			if err := a.arithValue(s, e, "$"+name, pos, 0); err != nil {
				return err
			}
		}
		if v.list != nil {
			v = value{list: []value{intValue()}}
		} else {
			v = intValue()
		}
	}
	s.set(name, v)
	return nil
}

// inertEnv reports whether setting environment variable name for one
// command leaves what a read does a read: the locale, the time zone, the
// terminal and colours, how sizes and times are shown; a pager or editor
// variable, whose command is analysed (commandVar). Any other variable may
// change what a program loads or runs (a sensitiveVar is privileged).
func inertEnv(name string) bool {
	return inertEnvs[name] || strings.HasPrefix(name, "LC_") || commandVar(name)
}

var inertEnvs = stringSet("LANG", "LANGUAGE", "TZ", "TERM", "COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR",
	"CLICOLOR", "CLICOLOR_FORCE", "COLORTERM", "GREP_COLOR", "GREP_COLORS", "LS_COLORS", "TIME_STYLE",
	"QUOTING_STYLE", "BLOCK_SIZE", "BLOCKSIZE", "DF_BLOCK_SIZE", "DU_BLOCK_SIZE", "LS_BLOCK_SIZE",
	"POSIXLY_CORRECT", "GIT_TERMINAL_PROMPT", "GIT_OPTIONAL_LOCKS", "GIT_FLUSH", "NODE_ENV", "CI",
	"PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "PYTHONIOENCODING", "RUST_BACKTRACE", "RUST_LOG",
	"CGO_ENABLED", "GOOS", "GOARCH", "GO111MODULE", "TERM_PROGRAM", "IFS")

// valuesOf is what words hold, as positional parameters: nil (not known)
// when a word may be no field or several at run time, which moves the
// ones after it.
func valuesOf(words []arg) []value {
	for _, w := range words {
		if w.spread || w.glob {
			return nil
		}
	}
	out := make([]value, 0, len(words))
	for _, w := range words {
		out = append(out, fieldValue(w))
	}
	return out
}

// inputValue is what read and mapfile assign: a line of their input.
func (s *scope) inputValue(in input) value {
	if in.under != "" {
		return value{alts: []alt{{s: in.under, under: true}}}
	}
	if in.kind == inText && !strings.ContainsAny(in.text, "$`") {
		// A here-document or here-string whose text is known: its lines,
		// as words, are read; the whole text stands for them.
		return dynamicValue("a line of known text", false)
	}
	return dynamicValue("what "+orElse(in.from, "its input")+" holds", in.secret)
}
