package shell

import (
	"slices"
	"strings"
)

// Options. Most programs parse their options with getopt_long or a parser
// like it, which accepts more spellings than a list of exact words
// catches: clusters of letters ("-nf", "-mo FILE", "-moFILE"), values
// attached or not ("--output=FILE", "--output FILE"), options after
// operands, long names cut to any unambiguous prefix ("--outp"), and, for
// some programs, long names after one dash ("-out"). A rule reads a
// command line with its program's getopt, so that every spelling of an
// option is the same option; a spelling the rule does not expect would be
// a way around it.

// getopt says how a program spells its options. The zero value is
// getopt_long with no option that takes a value.
type getopt struct {
	short    string   // letters that take a value: -o F, -oF, -xo F
	optShort string   // letters whose value is optional, so only attached: -iSUFFIX
	long     []string // long options that take a value: --output F, --output=F; "-exec" is spelled with one dash
	optLong  []string // long options whose optional value is only given with "=": --color=never
	flags    []string // long options without a value, so that abbreviations resolve and "-version" is no cluster
	// roles says what the program does with the values of the options
	// that matter (see tool); each of them takes a value.
	roles map[string]role
	// final are options after which every word is an operand (python -c
	// CODE ARGS...).
	final   []string
	exact   bool // long names may not be abbreviated
	single  bool // any long option may be spelled with one dash, -out (getopt_long_only, openssl)
	whole   bool // a word with one dash is one option, never a cluster of letters (Go's flag package)
	joined  bool // a one-dash long option's value may follow its name directly, -MFdeps.d (gcc)
	partial bool // only the options rules ask about are listed: an abbreviation needs two letters
}

// goOptions is how Go's flag package spells options: -name or --name, the
// value after "=" or in the next word, no clusters, no abbreviations.
func goOptions(long ...string) getopt {
	return getopt{long: long, single: true, whole: true, exact: true}
}

// option is one option of a command line.
type option struct {
	name string // as the program names it: "-o", "--output"; as written when unknown or ambiguous
	val  arg
	has  bool // val is set
	// ambiguous: name abbreviates several long options. The program
	// refuses it, but Airlock reads it as each of them (see parsed.has),
	// so that it never reads less into a command than the program might.
	ambiguous bool
}

// parsed is a command line split into options and operands.
type parsed struct {
	opts []option // in order
	ops  []arg
	dyn  bool // a word only known at run time may hold more options
}

// names splits a space-separated list, to keep tables short.
func names(s string) []string { return strings.Fields(s) }

type optKind uint8

const (
	noValue optKind = iota
	needsValue
	optionalValue
)

// parse splits args as getopt_long does: options anywhere, operands in
// order; everything after "--" is an operand. A word only known at run time
// is an operand, unless its known start makes it an option ("--output=$F",
// "-o$F"): its value is then dynamic, and a path it starts with is kept for
// path checks.
func (g getopt) parse(args []arg) parsed {
	var p parsed
	_, p.dyn = g.each(args, false, func(o option, op bool) bool {
		if op {
			p.ops = append(p.ops, o.val)
		} else {
			o.val = shown(o.val)
			p.opts = append(p.opts, o)
		}
		return true
	})
	return p
}

// split is parse for a program whose options end at its first operand: a
// wrapper, whose command follows, or a program with subcommands. The
// operands are that word and every word after it, as written.
func (g getopt) split(args []arg) parsed {
	var p parsed
	var rest int
	rest, p.dyn = g.each(args, true, func(o option, _ bool) bool {
		o.val = shown(o.val)
		p.opts = append(p.opts, o)
		return true
	})
	p.ops = args[rest:]
	return p
}

// each calls f with each option of args and each operand (op, the word in
// o.val), in the order the program reads them, until f returns false. With
// lead, the options end at the first operand (or after "--", or a final
// option): f is not called for it, and rest is its index. dyn reports a
// word only known at run time that may hold more options.
func (g *getopt) each(args []arg, lead bool, f func(o option, op bool) bool) (rest int, dyn bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		v := a.val
		if !a.static {
			a = known(a)
			v = a.val
			if !a.static {
				v, _ = staticPrefix(a.text)
			}
		}
		if len(v) < 2 || v[0] != '-' {
			if lead {
				return i, dyn
			}
			if !f(option{val: a}, true) {
				return len(args), dyn
			}
			continue
		}
		if v == "--" && a.static {
			return g.operands(args, i+1, lead, f), dyn
		}
		if !a.static && lead {
			// Unquoted, it may be several words: where the options end is
			// only known at run time, and so is the first operand (a
			// wrapper's command, a subcommand).
			return i, true
		}
		var end, more bool
		if name, kind, n, ok := g.longWord(v); ok {
			var o option
			o, i, end = g.longOption(args, i, a, v, name, kind, n)
			more = !a.static && !strings.Contains(v, "=") // "--pre$X": a longer name, or a value, may follow
			if !f(o, false) {
				return len(args), dyn
			}
		} else {
			i, end, more = g.cluster(args, i, a, v, f)
		}
		dyn = dyn || more
		if end {
			return g.operands(args, i+1, lead, f), dyn
		}
	}
	return len(args), dyn
}

// operands gives f the words from i on as operands, as written, and
// returns where they start; with lead, it leaves them to the caller.
func (g *getopt) operands(args []arg, i int, lead bool, f func(o option, op bool) bool) int {
	if lead {
		return min(i, len(args))
	}
	for ; i < len(args); i++ {
		if !f(option{val: args[i]}, true) {
			break
		}
	}
	return len(args)
}

// longWord reports whether option word v (its known part) is a long
// option, and which, with what it takes and how many options it may be
// (more than one for an ambiguous abbreviation): a word with two dashes; a
// word with one that names a long option (-exec, or -out for a program
// that takes one dash or two); any one-dash word of a program without
// clusters (whole).
func (g *getopt) longWord(v string) (name string, kind optKind, n int, ok bool) {
	word, _, _ := strings.Cut(v, "=")
	name, kind, n = g.resolve(word)
	if n == 0 && g.whole && strings.HasPrefix(word, "--") {
		name = word[1:] // Go's flag package: --name is -name
	}
	switch {
	case strings.HasPrefix(v, "--") || n > 0:
		return name, kind, n, true
	case g.joined:
		if j := g.joinedName(word); j != "" {
			return j, needsValue, 1, true
		}
	}
	return word, noValue, 0, g.whole
}

// longOption reads the long option at args[i], whose known part is v, and
// returns it with the index of the last word it used, and whether it ends
// the options.
func (g *getopt) longOption(args []arg, i int, a arg, v, name string, kind optKind, n int) (option, int, bool) {
	o := option{name: name, ambiguous: n > 1}
	word, val, eq := strings.Cut(v, "=")
	switch {
	case eq:
		o.val, o.has = attached(a, val), true
	case g.joined && kind == needsValue && len(word) > len(name) && strings.HasPrefix(word, name):
		o.val, o.has = attached(a, word[len(name):]), true
	case !a.static:
	case kind == needsValue && i+1 < len(args):
		i++
		o.val, o.has = known(args[i]), true
	}
	return o, i, slices.Contains(g.final, name)
}

// cluster reads a word of short options ("-nf", "-oFILE") whose known part
// is v, and returns the index of the last word it used, whether one of its
// options ends the options, and whether a dynamic word may hold more.
func (g *getopt) cluster(args []arg, i int, a arg, v string, f func(o option, op bool) bool) (int, bool, bool) {
	for j := 1; j < len(v); j++ {
		ch := v[j]
		o := option{name: shortName(ch)}
		value, optional := g.takesShort(ch)
		switch {
		case (value || optional) && (j+1 < len(v) || !a.static):
			o.val, o.has = attached(a, v[j+1:]), true
		case value && i+1 < len(args):
			i++
			o.val, o.has = known(args[i]), true
		}
		if !f(o, false) {
			return len(args), false, false
		}
		if value || optional {
			return i, slices.Contains(g.final, o.name), false
		}
	}
	return i, false, !a.static // more letters may follow
}

// takesShort reports whether letter ch takes a value, and whether that
// value is optional.
func (g *getopt) takesShort(ch byte) (value, optional bool) {
	if strings.IndexByte(g.optShort, ch) >= 0 || listsShort(g.optLong, ch) {
		return false, true
	}
	if strings.IndexByte(g.short, ch) >= 0 || listsShort(g.long, ch) {
		return true, false
	}
	for n := range g.roles {
		if len(n) == 2 && n[0] == '-' && n[1] == ch {
			return true, false
		}
	}
	return false, false
}

// listsShort reports whether names holds short option ch ("-o").
func listsShort(names []string, ch byte) bool {
	for _, n := range names {
		if len(n) == 2 && n[0] == '-' && n[1] == ch {
			return true
		}
	}
	return false
}

// shortNames holds "-" before each byte, so that a short option's name is
// a slice of it rather than a new string.
var shortNames = func() string {
	var b strings.Builder
	for i := 0; i < 256; i++ {
		b.WriteByte('-')
		b.WriteByte(byte(i))
	}
	return b.String()
}()

func shortName(ch byte) string { return shortNames[2*int(ch) : 2*int(ch)+2] }

// resolve returns the long option that word names, what it takes, and how
// many options it may be: the option itself, or the one it abbreviates. A
// word that abbreviates several keeps its spelling, and takes a value if
// one of them does; one that names none keeps it too (n is 0).
func (g *getopt) resolve(word string) (name string, kind optKind, n int) {
	if name, ok := g.spelled(word); ok {
		return name, g.kind(name), 1
	}
	name, kind = word, noValue
	if g.exact || !g.single && !strings.HasPrefix(word, "--") {
		return name, kind, 0
	}
	g.eachName(func(long string) {
		if !g.abbreviation(word, long) || n > 0 && long == name {
			return
		}
		if k := g.kind(long); k == needsValue || n == 0 {
			kind = k
		}
		name = long
		n++
	})
	if n > 1 {
		name = word
	}
	return name, kind, n
}

// eachName calls f with every long option the program has.
func (g *getopt) eachName(f func(string)) {
	for _, list := range [][]string{g.long, g.optLong, g.flags} {
		for _, n := range list {
			f(n)
		}
	}
	for n := range g.roles {
		f(n)
	}
}

// spelled returns the long option that word spells out in full (with one
// dash or two, for a program that takes either).
func (g *getopt) spelled(word string) (string, bool) {
	if !g.single {
		listed := !isShortName(word, g.whole) && (slices.Contains(g.long, word) || slices.Contains(g.optLong, word) ||
			slices.Contains(g.flags, word) || len(g.roles) > 0 && g.roles[word] != 0)
		return word, listed
	}
	found := ""
	g.eachName(func(name string) {
		if found == "" && !isShortName(name, g.whole) && sameName(word, name, g.single) {
			found = name
		}
	})
	return found, found != ""
}

// sameName reports whether word spells name: exactly, or with one dash or
// two for a program that takes either.
func sameName(word, name string, single bool) bool {
	if !single {
		return word == name
	}
	return strings.TrimLeft(word, "-") == strings.TrimLeft(name, "-")
}

// isShortName reports whether a listed name is a short option's ("-o"),
// which is read in clusters, not as a long option.
func isShortName(name string, whole bool) bool {
	return !whole && len(name) == 2 && name[0] == '-' && name[1] != '-'
}

// abbreviation reports whether word, an option word, is a prefix of long
// option name that the program takes for it: after two dashes, at least
// one letter (two when only some options are listed); after one dash
// (single), at least two, a single letter being a short option.
func (g *getopt) abbreviation(word, name string) bool {
	if g.exact || isShortName(name, g.whole) {
		return false
	}
	least := 1
	if g.partial {
		least = 2
	}
	var w, n string
	switch {
	case g.single:
		if !strings.HasPrefix(word, "--") {
			least = 2
		}
		w, n = strings.TrimLeft(word, "-"), strings.TrimLeft(name, "-")
	case !strings.HasPrefix(word, "--") || !strings.HasPrefix(name, "--"):
		return false
	default:
		w, n = word[2:], name[2:]
	}
	return len(w) >= least && len(w) < len(n) && strings.HasPrefix(n, w)
}

// kind is what long option name takes.
func (g *getopt) kind(name string) optKind {
	switch {
	case slices.Contains(g.optLong, name):
		return optionalValue
	case slices.Contains(g.long, name), len(g.roles) > 0 && g.roles[name] != 0:
		return needsValue
	}
	return noValue
}

// joinedName returns the longest one-dash long option that takes a value
// and starts word ("-MF" for "-MFdeps.d"), or "".
func (g *getopt) joinedName(word string) string {
	found := ""
	for _, n := range g.long {
		if len(n) > 2 && n[1] != '-' && strings.HasPrefix(word, n) && len(n) > len(found) {
			found = n
		}
	}
	return found
}

// valueArg is the value attached to an option word, whose known part is
// v. A dynamic value that starts with a path is a pattern of that path,
// for path checks ("--output=/etc/$F" may be any file under /etc).
func valueArg(a arg, v string) arg { return shown(attached(a, v)) }

// attached is valueArg without the text that shows it, which costs a
// quoting: each leaves it to what keeps the value (shown).
func attached(a arg, v string) arg {
	if a.static {
		return arg{val: v, static: true, glob: a.glob}
	}
	out := arg{text: a.text}
	if strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~") {
		out.path, out.glob = v+"*", true
	}
	return out
}

// shown gives an attached value the text that shows it.
func shown(a arg) arg {
	if a.static && a.text == "" {
		a.text = quote(a.val)
	}
	return a
}

// has reports whether one of names is given. A name with "=" is an option
// given that value ("--location=global").
func (p parsed) has(names ...string) bool {
	for _, o := range p.opts {
		if o.is(names) {
			return true
		}
	}
	return false
}

// values returns the values given to names, in order.
func (p parsed) values(names ...string) []arg {
	var out []arg
	for _, o := range p.opts {
		if o.has && o.is(names) {
			out = append(out, o.val)
		}
	}
	return out
}

// value returns the first value given to one of names.
func (p parsed) value(names ...string) (arg, bool) {
	for _, o := range p.opts {
		if o.has && o.is(names) {
			return o.val, true
		}
	}
	return arg{}, false
}

// is reports whether o is one of names: by name, by name and value
// ("--location=global"), or, for an ambiguous abbreviation, by being a
// prefix of one.
func (o option) is(names []string) bool {
	for _, n := range names {
		switch {
		case n == o.name:
			return true
		case o.ambiguous && strings.HasPrefix(n, o.name):
			return true
		case len(n) > len(o.name) && n[len(o.name)] == '=' && strings.HasPrefix(n, o.name):
			return o.has && o.val.static && n[len(o.name)+1:] == o.val.val
		}
	}
	return false
}

// has reports whether args give one of names, read with g; values
// returns the values args give them, in order. They read what parse does,
// without keeping the rest.
func (g getopt) has(args []arg, names ...string) bool {
	found := false
	g.each(args, false, func(o option, op bool) bool {
		found = !op && o.is(names)
		return !found
	})
	return found
}

func (g getopt) values(args []arg, names ...string) []arg {
	var out []arg
	g.each(args, false, func(o option, op bool) bool {
		if !op && o.has && o.is(names) {
			out = append(out, shown(o.val))
		}
		return true
	})
	return out
}

// The simple readings: a rule that asks about a few options of a program
// it has no getopt for reads the command line with those options alone,
// spelled out in full. Short names ("-f") match in clusters, long ones
// ("--force", "-delete") with or without a value.

// has reports whether one of opts is given.
func (c *call) has(opts ...string) bool { return hasOption(c.args, opts...) }

func hasOption(args []arg, opts ...string) bool {
	return getopt{flags: opts, exact: true}.has(args, opts...)
}

// value returns the value of the first of opts given: "-o FILE", "-oFILE",
// "--output FILE", "--output=FILE".
func (c *call) value(opts ...string) (arg, bool) {
	g := getopt{long: opts, exact: true}
	var val arg
	found := false
	g.each(c.args, false, func(o option, op bool) bool {
		if found = !op && o.has && o.is(opts); found {
			val = shown(o.val)
		}
		return !found
	})
	return val, found
}

// values returns the values of every occurrence of opts.
func (c *call) values(opts ...string) []arg { return optValues(c.args, opts...) }

func optValues(args []arg, opts ...string) []arg {
	return getopt{long: opts, exact: true}.values(args, opts...)
}

// operands returns the words that are not options, skipping the value of
// each option of valueOpts ("-o", "--output"; "--output=x" carries its
// own). Everything after "--" is an operand.
func (c *call) operands(valueOpts ...string) []arg { return operands(c.args, valueOpts...) }

func operands(args []arg, valueOpts ...string) []arg {
	g := getopt{long: valueOpts, exact: true}
	var out []arg
	g.each(args, false, func(o option, op bool) bool {
		if op {
			out = append(out, o.val)
		}
		return true
	})
	return out
}

// subcommand finds a program's subcommand after its global options. ok is
// false when the subcommand is only known at run time.
func subcommand(args []arg, g getopt) (sub string, rest []arg, ok bool) {
	rest = g.split(args).ops
	if len(rest) == 0 {
		return "", nil, true
	}
	if !rest[0].static {
		return "", rest[1:], false
	}
	return rest[0].val, rest[1:], true
}
