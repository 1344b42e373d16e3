package shell

import (
	_ "embed"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/airlock-dev/airlock"
)

// The options of the programs agents read with (options.txt): for each
// program, and each subcommand, every option it accepts, judged by hand:
// inert, or what it does with its value or by itself. A read is proved
// only when every option it is given is listed and inert; an option that
// is not listed raises the command, whatever the rule that classified it
// thought (proveOptions). A test checks each block against the program's
// own help text (testdata/help).

//go:embed options.txt
var optionsText string

// optSpec is one block of options.txt: how a program (or one of its
// subcommands) spells its options, and what each does.
type optSpec struct {
	name  string
	line  int
	short map[byte]optDef   // -x
	long  map[string]optDef // --name, and -name for single and whole programs
	plus  map[byte]optDef   // +x, for plus programs; 0 for "+" itself
	// Attributes of the header line.
	single, whole, exact bool
	// From the block's comments: options end at the first operand
	// (stop-at-operand); the first word may be an obsolete count, -5 or
	// +5 (obsolete-first).
	lead, obsolete bool
	// helpWords are words of the program's help text that look like
	// options and are not (placeholders such as -NUM), or that it refuses
	// (help-words: ...); TestOptionsCoverHelp skips them.
	helpWords map[string]bool
}

// optDef is one option.
type optDef struct {
	kind optKind
	role role // what the program does with the value (0: inert data)
	flag role // what the option does by itself (0: nothing)
}

// Roles that options.txt gives an option by itself ("!exec"), beyond the
// value roles of tool.go.
const (
	flagExec  role = iota + 100 // runs a program its configuration or environment names
	flagWrite                   // writes a file, or changes the repository or the system
	flagNet                     // connects to the network
	flagList                    // makes its operands lists of files that it reads
	flagConf                    // makes its first operand code or configuration Airlock cannot see
)

var valueRoles = map[string]role{
	"read": sendsFile, "list": listsFiles, "write": writesFile, "cmd": runsCommand, "prog": runsProgram,
	"filter": runsFilter, "conf": runsFile, "lib": loadsLibrary, "socket": usesSocket,
}

var flagRoles = map[string]role{
	"exec": flagExec, "write": flagWrite, "net": flagNet, "list": flagList, "conf": flagConf,
}

// optionSpecs are the blocks of options.txt by name ("sort", "git log"),
// parsed on first use.
var optionSpecs = sync.OnceValue(func() map[string]*optSpec {
	specs, err := parseOptions(optionsText)
	if err != nil {
		// options.txt is embedded and checked by TestOptionsParse: a
		// broken table is a build that must not decide anything.
		panic("shell: options.txt: " + err.Error())
	}
	return specs
})

// subcommandPrograms are the programs options.txt lists subcommands of.
var subcommandPrograms = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for name := range optionSpecs() {
		if prog, _, ok := strings.Cut(name, " "); ok {
			m[prog] = true
		}
	}
	return m
})

// parseOptions parses options.txt; an error says where (line) and what.
func parseOptions(text string) (map[string]*optSpec, error) {
	specs := map[string]*optSpec{}
	var cur *optSpec
	for n, line := range strings.Split(text, "\n") {
		n++
		switch {
		case strings.TrimSpace(line) == "":
		case strings.HasPrefix(line, "#"):
			if cur != nil && strings.HasPrefix(line, "#\t") {
				note := strings.TrimSpace(line[2:])
				cur.lead = cur.lead || strings.HasPrefix(note, "stop-at-operand")
				cur.obsolete = cur.obsolete || strings.HasPrefix(note, "obsolete-first")
				if words, ok := strings.CutPrefix(note, "help-words:"); ok {
					if cur.helpWords == nil {
						cur.helpWords = map[string]bool{}
					}
					for _, w := range strings.Fields(words) {
						cur.helpWords[w] = true
					}
				}
			}
		case line[0] == '\t' || line[0] == ' ':
			if cur == nil {
				return nil, fmt.Errorf("line %d: options before any program", n)
			}
			for _, tok := range strings.Fields(line) {
				if err := cur.add(tok); err != nil {
					return nil, fmt.Errorf("line %d: %q: %v", n, tok, err)
				}
			}
		default:
			head, attrs, _ := strings.Cut(line, ";")
			name := strings.Join(strings.Fields(head), " ")
			if _, dup := specs[name]; dup {
				return nil, fmt.Errorf("line %d: %s is listed twice", n, name)
			}
			cur = &optSpec{name: name, line: n, short: map[byte]optDef{}, long: map[string]optDef{}, plus: map[byte]optDef{}}
			for _, a := range strings.Fields(attrs) {
				switch a {
				case "single":
					cur.single = true
				case "whole":
					cur.whole = true
				case "exact":
					cur.exact = true
				case "plus":
					cur.plus[0] = optDef{} // marks a plus program; "+" itself is listed if it is an option
				default:
					return nil, fmt.Errorf("line %d: unknown attribute %q", n, a)
				}
			}
			specs[name] = cur
		}
	}
	return specs, nil
}

// add parses one option of a block: NAME, then "=" (a value), "?=" or "?"
// (an optional value), a value role, and "!ROLE" (the option itself).
func (sp *optSpec) add(tok string) error {
	var name string
	var short byte
	kind := 0 // 1 short, 2 long, 3 plus
	switch {
	case strings.HasPrefix(tok, "--") || strings.HasPrefix(tok, "-") && len(tok) > 2 && strings.IndexAny(tok[2:3], "=?!") < 0:
		// --name, or a one-dash long name (-name, npm's -dd).
		end := strings.IndexAny(tok[2:], "=?!")
		if end < 0 {
			end = len(tok) - 2
		}
		name, tok, kind = tok[:end+2], tok[end+2:], 2
	case strings.HasPrefix(tok, "-") && len(tok) >= 2:
		short, tok, kind = tok[1], tok[2:], 1
	case strings.HasPrefix(tok, "+") && len(tok) >= 2 && strings.IndexByte("=?!", tok[1]) >= 0:
		short, tok, kind = 0, tok[1:], 3
	case strings.HasPrefix(tok, "+") && len(tok) >= 2:
		short, tok, kind = tok[1], tok[2:], 3
	default:
		return fmt.Errorf("not an option")
	}
	d := optDef{}
	switch {
	case strings.HasPrefix(tok, "?="):
		d.kind, tok = optionalValue, tok[2:]
	case strings.HasPrefix(tok, "="):
		d.kind, tok = needsValue, tok[1:]
	case strings.HasPrefix(tok, "?"):
		d.kind, tok = optionalValue, tok[1:]
	}
	valueRole, flag, _ := strings.Cut(tok, "!")
	if valueRole != "" {
		if d.kind == noValue {
			return fmt.Errorf("a value role on an option without a value")
		}
		r, ok := valueRoles[valueRole]
		if !ok {
			return fmt.Errorf("unknown value role %q", valueRole)
		}
		d.role = r
	}
	if flag != "" {
		r, ok := flagRoles[flag]
		if !ok {
			return fmt.Errorf("unknown role %q", flag)
		}
		d.flag = r
	}
	switch kind {
	case 1:
		if _, dup := sp.short[short]; dup {
			return fmt.Errorf("listed twice")
		}
		sp.short[short] = d
	case 2:
		if _, dup := sp.long[name]; dup {
			return fmt.Errorf("listed twice")
		}
		sp.long[name] = d
	case 3:
		if _, isPlus := sp.plus[0]; !isPlus && short != 0 {
			return fmt.Errorf("a + option in a block without the plus attribute")
		}
		sp.plus[short] = d
	}
	return nil
}

// specOpt is one option of a command line, read with a spec.
type specOpt struct {
	name string
	def  optDef
	val  arg
	has  bool
}

// read splits args as the program does: its options, in order, and the
// first option it does not list ("" if none).
func (sp *optSpec) read(args []arg) (opts []specOpt, rest int, unknown string) {
	_, isPlus := sp.plus[0]
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.static {
			if sp.lead {
				return opts, i, ""
			}
			continue // an operand, or an option: prove judges the word
		}
		v := a.val
		if i == 0 && sp.obsolete && len(v) > 1 && (v[0] == '-' || v[0] == '+') && v[1] >= '0' && v[1] <= '9' {
			continue // head -5, tail +5: the obsolete count
		}
		switch {
		case v == "--":
			return opts, i + 1, ""
		case len(v) < 2 || v[0] != '-' && !(isPlus && v[0] == '+'):
			if sp.lead {
				return opts, i, ""
			}
			continue // an operand
		case v[0] == '+':
			d, ok := sp.plus[v[1]]
			at := 2
			if !ok {
				d, ok, at = sp.plus[0], sp.plus[0].kind != noValue, 1
			}
			if !ok {
				return opts, i, v
			}
			o := specOpt{name: v[:at], def: d}
			if d.kind != noValue && at < len(v) {
				o.val, o.has = literal(v[at:]), true
			} else if d.kind == needsValue && i+1 < len(args) {
				i++
				o.val, o.has = args[i], true
			}
			opts = append(opts, o)
		case strings.HasPrefix(v, "--") || (sp.single || sp.whole) && len(v) > 2 || sp.hasLong(v):
			word, val, eq := strings.Cut(v, "=")
			name, d, ok := sp.longOption(word)
			if !ok {
				return opts, i, word
			}
			o := specOpt{name: name, def: d}
			if sp.name == "find" && d.role == runsCommand {
				// find -exec CMD ... ; (or {} +): the command's words, which
				// find's rule analyses.
				for i++; i < len(args) && !(args[i].static && (args[i].val == ";" ||
					args[i].val == "+" && args[i-1].static && args[i-1].val == "{}")); i++ {
				}
				opts = append(opts, o)
				continue
			}
			switch {
			case eq && d.kind == noValue:
				return opts, i, v // the program refuses a value here
			case eq:
				o.val, o.has = literal(val), true
			case d.kind == needsValue && i+1 < len(args):
				i++
				o.val, o.has = args[i], true
			}
			opts = append(opts, o)
		default:
			for j := 1; j < len(v); j++ {
				d, ok := sp.short[v[j]]
				if !ok {
					return opts, i, "-" + v[j:j+1]
				}
				o := specOpt{name: "-" + v[j:j+1], def: d}
				if d.kind != noValue {
					if j+1 < len(v) {
						o.val, o.has = literal(v[j+1:]), true
					} else if d.kind == needsValue && i+1 < len(args) {
						i++
						o.val, o.has = args[i], true
					}
					opts = append(opts, o)
					break
				}
				opts = append(opts, o)
			}
		}
	}
	return opts, len(args), ""
}

// hasLong reports whether word, or its part before "=", is a one-dash long
// option the program lists by its full name.
func (sp *optSpec) hasLong(word string) bool {
	name, _, _ := strings.Cut(word, "=")
	_, ok := sp.long[name]
	return ok
}

// longOption finds a long option by its full name or, for a program that
// takes abbreviations, by a prefix of exactly one. For a program that
// takes either dash (single, whole), -name and --name are the same.
func (sp *optSpec) longOption(word string) (string, optDef, bool) {
	if d, ok := sp.long[word]; ok {
		return word, d, true
	}
	if sp.single || sp.whole {
		for _, alt := range []string{"-" + strings.TrimLeft(word, "-"), "--" + strings.TrimLeft(word, "-")} {
			if d, ok := sp.long[alt]; ok {
				return alt, d, true
			}
		}
	}
	if sp.exact || len(strings.TrimLeft(word, "-")) == 0 {
		return "", optDef{}, false
	}
	found := ""
	for _, name := range slices.Sorted(maps.Keys(sp.long)) {
		if strings.HasPrefix(name, word) {
			if found != "" {
				return "", optDef{}, false // ambiguous: the program refuses it
			}
			found = name
		}
	}
	return found, sp.long[found], found != ""
}

// optionLike reports whether a word may be read as an option: it starts
// with "-" (or "+" for a plus program) and is not "-" alone.
func optionLike(a arg) bool {
	return a.static && len(a.val) > 1 && (a.val[0] == '-' || a.val[0] == '+')
}

// proveOptions raises e, a read, unless every option the command gives is
// known to be inert (or its role has been judged): an option options.txt
// does not list for the program is code Airlock cannot see.
func (c *call) proveOptions(e effect) effect {
	if e.none || e.inert || e.tier != airlock.TierRead {
		return e
	}
	prog := baseName(c.name)
	args := c.args
	spec := optionSpecs()[prog]
	if subcommandPrograms()[prog] {
		// Global options, then the subcommand and its own.
		if spec == nil {
			spec = &optSpec{name: prog}
		}
		lead := *spec
		lead.lead = true
		opts, rest, unknown := lead.read(args)
		if unknown != "" {
			return c.unprovedOption(e, prog, unknown)
		}
		e = c.useSpecOptions(e, prog, opts)
		args = args[rest:]
		if len(args) == 0 || !args[0].static {
			return e
		}
		prog += " " + args[0].val
		args = args[1:]
		spec = optionSpecs()[prog]
	}
	if spec == nil {
		for _, a := range args {
			if optionLike(a) && !(len(args) == 1 && (a.val == "--version" || a.val == "--help")) {
				return c.unprovedOption(e, prog, a.val)
			}
		}
		return e
	}
	opts, _, unknown := spec.read(args)
	if unknown != "" {
		return c.unprovedOption(e, prog, unknown)
	}
	return c.useSpecOptions(e, prog, opts)
}

func (c *call) unprovedOption(e effect, prog, opt string) effect {
	return worse(e, exec("runs "+prog+" with "+opt+", an option Airlock does not know to be inert"))
}

// useSpecOptions applies what the options of a read do: a value's role
// (a file it writes, a command it runs), an option's own (!exec).
func (c *call) useSpecOptions(e effect, prog string, opts []specOpt) effect {
	for _, o := range opts {
		via := prog + " " + o.name
		switch o.def.flag {
		case flagExec:
			e = worse(e, exec("runs a program its configuration or environment names ("+via+")"))
		case flagWrite:
			e = worse(e, write(airlock.ClassFSWrite, "writes files or changes the repository or the system ("+via+")"))
		case flagNet:
			e = worse(e, net(airlock.ClassNetConnect, "connects to the network ("+via+")"))
		case flagList:
			e = worse(e, maySecret("reads the files its operands list, which Airlock cannot see ("+via+")"))
		case flagConf:
			e = worse(e, exec("follows code or settings in a file Airlock cannot see ("+via+")"))
		}
		if !o.has || o.def.role == 0 {
			continue
		}
		switch o.def.role {
		case runsCommand, runsFilter, runsProgram:
			if len(c.subs) > 0 {
				continue // the rule analysed what it runs
			}
		}
		c.use(&e, o.def.role, via, o.val)
	}
	return e
}
