package shell

import (
	"slices"
	"strings"

	"github.com/airlock-dev/airlock/sensitive"
	"mvdan.cc/sh/v3/syntax"
)

// Values: what a variable may hold where a command uses it. A read is
// proved only when every word that names a file or a command has a value
// known before the script runs, so the analyser follows the values a script
// gives its variables: literal assignments, loops over literal words and
// globs, set -- with literal words, the arguments a function or sh -c is
// given, arithmetic. A value only known at run time (a parameter from
// outside, the output of $( ), what read reads) is dynamic, and a command
// that reads through one is not a proved read.

// value is what a variable may hold.
type value struct {
	// alts are the strings it may hold that are known before the script
	// runs (a variable assigned in one branch of an if may hold either).
	alts []alt
	// dynamic, when not "", says that it may also hold a string only known
	// at run time, and whence ("the environment", "the output of $(…)").
	dynamic string
	// secret: that string may be a secret (an environment variable not
	// known to be harmless, or a copy of one).
	secret bool
	// lenient: the string is a function's argument or a variable a
	// function reads, seen where the function is defined rather than where
	// it is called (see scope.lenient).
	lenient bool
	// list holds an array's elements, when known one by one.
	list []value
	// integer: the variable has the integer attribute (declare -i), so
	// that assigning it evaluates arithmetic. It belongs to the variable,
	// not to the string, and is kept across assignments.
	integer bool
}

// alt is one known string a variable may hold.
type alt struct {
	s string
	// glob: s is a pattern, and the variable holds the name of some file
	// it matches (for f in *.md).
	glob bool
	// under: the variable holds the name of some file under directory s
	// (for f in $(git ls-files)).
	under bool
}

// maxAlts bounds the strings a value keeps; one with more is dynamic.
const maxAlts = 16

func knownValue(s string) value { return value{alts: []alt{{s: s}}} }

func dynamicValue(from string, secret bool) value { return value{dynamic: from, secret: secret} }

// intValue is the value of arithmetic, $#, $?: some integer. Integers hold
// no "/" and no pattern character, so for every check a path or a name
// needs, one integer stands for all: 0.
func intValue() value { return knownValue("0") }

// isDynamic reports whether v may hold a string only known at run time.
func (v value) isDynamic() bool { return v.dynamic != "" }

// union is what a variable may hold when it holds v or w (after an if that
// may or may not have assigned it).
func (v value) union(w value) value {
	out := value{alts: slices.Clip(v.alts), dynamic: v.dynamic, secret: v.secret || w.secret,
		lenient: v.lenient && (w.lenient || !w.isDynamic()) || w.lenient && !v.isDynamic(), integer: v.integer || w.integer}
	if out.dynamic == "" {
		out.dynamic = w.dynamic
	}
	for _, a := range w.alts {
		if !slices.Contains(out.alts, a) {
			out.alts = append(out.alts, a)
		}
	}
	if len(out.alts) > maxAlts {
		out.alts = nil
		if out.dynamic == "" {
			out.dynamic = "one of many values"
		}
	}
	if len(v.list) > 0 && len(w.list) > 0 && len(v.list) == len(w.list) {
		out.list = make([]value, len(v.list))
		for i := range v.list {
			out.list[i] = v.list[i].union(w.list[i])
		}
	}
	return out
}

// equal reports whether v and w hold the same.
func (v value) equal(w value) bool {
	if v.dynamic != w.dynamic || v.secret != w.secret || v.lenient != w.lenient || v.integer != w.integer ||
		!slices.Equal(v.alts, w.alts) || len(v.list) != len(w.list) {
		return false
	}
	for i := range v.list {
		if !v.list[i].equal(w.list[i]) {
			return false
		}
	}
	return true
}

// elements is what "${a[@]}" expands to: the array's elements, or the
// scalar as the one element.
func (v value) elements() []value {
	if v.list != nil {
		return v.list
	}
	return []value{v}
}

// anyElement is what ${a[i]} may be: any element.
func (v value) anyElement() value {
	if v.list == nil {
		return v
	}
	out := value{}
	if len(v.list) == 0 {
		return knownValue("")
	}
	for i, e := range v.list {
		if i == 0 {
			out = e
			continue
		}
		out = out.union(e)
	}
	return out
}

// harmlessVars are environment variables known to hold no secret: the
// shell's own, the locale, the terminal, the user's name and shell, and the
// places toolchains live. Printing one reveals nothing; what it names is
// still only known at run time.
var harmlessVars = stringSet("USER", "LOGNAME", "SHELL", "PATH", "LANG", "LANGUAGE", "TERM", "COLORTERM",
	"TERM_PROGRAM", "HOSTNAME", "HOSTTYPE", "OSTYPE", "MACHTYPE", "BASH", "BASH_VERSION", "BASH_VERSINFO", "SHLVL",
	"TMPDIR", "TMP", "TEMP", "EDITOR", "VISUAL", "PAGER", "GOPATH", "GOROOT", "GOBIN", "GOOS", "GOARCH",
	"GOMODCACHE", "GOCACHE", "GOVERSION", "NODE_ENV", "NVM_DIR", "NVM_BIN", "VIRTUAL_ENV", "CONDA_PREFIX",
	"CONDA_DEFAULT_ENV", "PYENV_ROOT", "JAVA_HOME", "CARGO_HOME", "RUSTUP_HOME", "XDG_CONFIG_HOME",
	"XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR", "XDG_STATE_HOME", "DISPLAY", "WAYLAND_DISPLAY",
	"CI", "OLDPWD", "COLUMNS", "LINES", "OPTIND", "OPTARG", "TZ", "MAIL", "HISTSIZE", "HISTFILESIZE",
	"BASH_SOURCE", "FUNCNAME", "PIPESTATUS", "GROUPS", "DIRSTACK", "BASH_REMATCH", "BASH_LINENO", "BASHOPTS",
	"SHELLOPTS", "PS1", "PS2", "PS4", "IFS", "HISTCONTROL", "HISTTIMEFORMAT", "GITHUB_ACTIONS", "GITHUB_WORKSPACE",
	"GITHUB_REF", "GITHUB_SHA", "GITHUB_REPOSITORY", "RUNNER_OS", "TERMINFO", "LC_ALL", "LC_CTYPE", "LC_COLLATE",
	"LC_MESSAGES", "LC_NUMERIC", "LC_TIME", "LC_MONETARY")

// integerVars are the shell's own variables that always hold an integer.
var integerVars = stringSet("#", "?", "$", "!", "RANDOM", "SRANDOM", "SECONDS", "LINENO", "BASHPID", "PPID",
	"UID", "EUID", "EPOCHSECONDS", "EPOCHREALTIME", "HISTCMD")

// lookup returns what variable name holds in s.
func (s *scope) lookup(name string) value {
	if v, ok := s.vars[name]; ok {
		return v
	}
	if isParam(name) {
		return s.param(name)
	}
	switch {
	case integerVars[name]:
		return intValue()
	case name == "HOME":
		return knownValue("~")
	case name == "PWD" && s.cwd != "" && !s.lost:
		return knownValue(s.cwd)
	case name == "-":
		return knownValue("hB")
	}
	if s.lenient {
		return value{dynamic: "a variable the function reads where it is called", lenient: !sensitive.SecretVar(name),
			secret: sensitive.SecretVar(name)}
	}
	if s.opaque != "" {
		return dynamicValue(s.opaque, true)
	}
	if harmlessVars[name] {
		return dynamicValue("the environment ($"+name+")", false)
	}
	return dynamicValue("the environment ($"+name+"), which may hold a secret", true)
}

// isParam reports whether name is a positional parameter (1, 2, …, @, *).
func isParam(name string) bool {
	if name == "@" || name == "*" {
		return true
	}
	return name != "" && name != "0" && strings.Trim(name, "0123456789") == ""
}

// param returns a positional parameter's value.
func (s *scope) param(name string) value {
	if s.params == nil {
		if s.lenient {
			return value{dynamic: "an argument of the function, given where it is called", lenient: true}
		}
		return dynamicValue("the script's arguments", false)
	}
	if name == "@" || name == "*" {
		return value{list: s.params}
	}
	n := 0
	for _, d := range name {
		n = n*10 + int(d-'0')
		if n > len(s.params) {
			return knownValue("")
		}
	}
	return s.params[n-1]
}

// set records an assignment: straight-line code replaces what the variable
// held.
func (s *scope) set(name string, v value) {
	if s.varsShared || s.vars == nil {
		s.vars, s.varsShared = cloneVars(s.vars), false
	}
	if old, ok := s.vars[name]; ok && old.integer {
		v.integer = true
	}
	s.vars[name] = v
}

func cloneVars(m map[string]value) map[string]value {
	out := make(map[string]value, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// fieldsOf is what a word expands to: the fields of each way it may
// expand (one, unless a variable may hold several strings), each field
// an arg. Every word of a command goes through it, so that a variable's
// value is checked wherever it lands.
func (s *scope) fieldsOf(w *syntax.Word) [][]arg {
	if len(w.Parts) == 1 {
		if lit, ok := w.Parts[0].(*syntax.Lit); ok && lit.Value != "" && !strings.ContainsRune(lit.Value, '\\') &&
			stackTilde(lit.Value) == 0 {
			// The common case: a plain word.
			return [][]arg{{{val: lit.Value, text: lit.Value, static: true, glob: hasGlob(lit.Value)}}}
		}
	}
	x := expansion{s: s, ways: []way{{}}}
	x.parts(w.Parts, false)
	text := ""
	out := make([][]arg, 0, len(x.ways))
	for _, wy := range x.ways {
		fields := wy.done
		if wy.open != nil {
			fields = append(fields, *wy.open)
		}
		args := make([]arg, 0, len(fields))
		for i, f := range fields {
			a := f.arg()
			if i == 0 {
				if text == "" {
					text = s.wordText(w, a)
				}
				a.text = text
			} else {
				a.text, a.extra = "", true
			}
			args = append(args, a)
		}
		out = append(out, args)
	}
	return out
}

// wordText is how a word is shown: a plain literal as written, a quoted
// one quoted, one with expansions as written in the script.
func (s *scope) wordText(w *syntax.Word, a arg) string {
	if plainWord(w) {
		if len(w.Parts) == 1 && litValue(w.Parts[0]) != "" && !strings.ContainsRune(litValue(w.Parts[0]), '\\') {
			return litValue(w.Parts[0])
		}
		return quote(a.val)
	}
	return s.source(w)
}

// expansion expands one word, in every way it may expand.
type expansion struct {
	s    *scope
	ways []way
}

// way is one way a word expands: its fields so far.
type way struct {
	done []field
	open *field // the field being built; nil before the first part and after a split
}

// field is one field of a word being expanded.
type field struct {
	b       []byte
	dynamic string // non-empty: part of it is only known at run time (whence)
	secret  bool
	lenient bool
	glob    bool
	under   bool // the whole field is a file under directory b
	subst   bool // the whole field is a process substitution
	quoted  bool // it has a quoted part, so it is a field even if empty
	spread  bool // see arg.spread
}

func (f field) arg() arg {
	if f.dynamic != "" {
		return arg{from: f.dynamic, secret: f.secret, lenient: f.lenient, subst: f.subst, spread: f.spread}
	}
	if f.under {
		return arg{path: string(f.b), under: true, from: "a list of files under " + string(f.b), spread: f.spread}
	}
	return arg{val: string(f.b), static: true, glob: f.glob}
}

func (x *expansion) each(f func(w *way)) {
	for i := range x.ways {
		f(&x.ways[i])
	}
}

func (w *way) field() *field {
	if w.open == nil {
		w.open = &field{}
	}
	return w.open
}

// split ends the open field (an unquoted expansion's whitespace).
func (w *way) split() {
	if w.open != nil {
		f := *w.open
		if len(f.b) > 0 || f.quoted || f.dynamic != "" || f.under || f.subst {
			w.done = append(w.done, f)
		}
		w.open = nil
	}
}

// literal appends text to every way's open field; glob says it has
// pattern characters the shell expands.
func (x *expansion) literal(s string, quoted, glob bool) {
	x.each(func(w *way) {
		f := w.field()
		if s != "" {
			f.derive()
		}
		f.b = append(f.b, s...)
		f.quoted = f.quoted || quoted
		f.glob = f.glob || glob
	})
}

// derive marks a field that stood for a file under a directory, to which
// more is added: it no longer names one.
func (f *field) derive() {
	if f.under {
		f.under, f.dynamic = false, "a string made from a file's name"
	}
}

// dynamic marks every way's open field as only known at run time.
func (x *expansion) dynamic(from string, secret, lenient bool) {
	x.each(func(w *way) {
		f := w.field()
		if f.dynamic == "" {
			f.dynamic = from
			f.lenient = lenient
		} else {
			f.lenient = f.lenient && lenient
		}
		f.secret = f.secret || secret
		f.spread = true
		f.derive()
	})
}

// fork multiplies the ways by n, for a value that may hold one of n
// strings: way i*n+j takes string j. It reports false, leaving the ways,
// when there would be too many.
func (x *expansion) fork(n int) bool {
	if n == 1 {
		return true
	}
	if len(x.ways)*n > maxAlts {
		return false
	}
	out := make([]way, 0, len(x.ways)*n)
	for _, w := range x.ways {
		for j := 0; j < n; j++ {
			c := way{done: slices.Clone(w.done)}
			if w.open != nil {
				f := *w.open
				f.b = slices.Clone(f.b)
				c.open = &f
			}
			out = append(out, c)
		}
	}
	x.ways = out
	return true
}

// value inserts what a variable holds, quoted or not: unquoted, a known
// string is split at whitespace and its pattern characters glob.
func (x *expansion) value(v value, quoted bool) {
	ifs, splits := x.s.ifs()
	n := len(v.alts)
	if v.isDynamic() {
		n++
	}
	if n == 0 {
		return // an empty array
	}
	if !x.fork(n) {
		x.dynamic("one of many values", v.secret, false)
		return
	}
	for i := range x.ways {
		w := &x.ways[i]
		j := i % n
		if j == len(v.alts) {
			f := w.field()
			if f.dynamic == "" {
				f.dynamic, f.lenient = v.dynamic, v.lenient
			} else {
				f.lenient = f.lenient && v.lenient
			}
			f.secret = f.secret || v.secret
			f.spread = f.spread || !quoted
			f.derive()
			continue
		}
		a := v.alts[j]
		switch {
		case a.under:
			f := w.field()
			f.spread = f.spread || !quoted
			if len(f.b) == 0 && f.dynamic == "" && !f.under {
				f.b, f.under = append(f.b, a.s...), true
			} else {
				f.derive()
				f.dynamic = orElse(f.dynamic, "a string made from a file's name")
			}
		case quoted || !splits:
			f := w.field()
			if a.s != "" {
				f.derive()
			}
			f.b = append(f.b, a.s...)
			f.glob = f.glob || a.glob || !quoted && hasGlob(a.s)
			if !splits && !quoted {
				f.dynamic = "an expansion split by an IFS only known at run time"
				f.spread = true
			}
		default:
			x.splitInto(w, a, ifs)
		}
	}
}

// splitInto appends an unquoted known string to way w, split at IFS.
func (x *expansion) splitInto(w *way, a alt, ifs string) {
	pieces := strings.FieldsFunc(a.s, func(r rune) bool { return strings.ContainsRune(ifs, r) })
	if len(pieces) == 0 {
		if a.s != "" {
			w.split() // only separators: ends the field
		}
		return
	}
	if strings.ContainsRune(ifs, rune(a.s[0])) {
		w.split()
	}
	for i, p := range pieces {
		if i > 0 {
			w.split()
		}
		f := w.field()
		f.derive()
		f.b = append(f.b, p...)
		f.glob = f.glob || a.glob || hasGlob(p)
	}
	if strings.ContainsRune(ifs, rune(a.s[len(a.s)-1])) {
		w.split()
	}
}

// ifs returns the characters unquoted expansions split at, and false
// when they are only known at run time.
func (s *scope) ifs() (string, bool) {
	v, ok := s.vars["IFS"]
	if !ok {
		return " \t\n", s.opaque == ""
	}
	if v.isDynamic() || len(v.alts) != 1 {
		return "", false
	}
	return v.alts[0].s, true
}

// parts expands a word's parts.
func (x *expansion) parts(parts []syntax.WordPart, quoted bool) {
	for i, part := range parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if n := stackTilde(p.Value); n > 0 && !quoted && i == 0 {
				// ~+ is $PWD; ~- and ~N are the directory stack.
				if p.Value[1] == '+' && n == 2 && x.s.cwd != "" && !x.s.lost {
					x.literal(x.s.cwd, false, false)
				} else {
					x.dynamic("the directory stack ("+p.Value[:n]+")", false, false)
				}
				p = &syntax.Lit{Value: p.Value[n:]}
			}
			var b strings.Builder
			if quoted {
				unescape(&b, p.Value, "$`\"\\\n")
			} else {
				unescape(&b, p.Value, "")
			}
			x.literal(b.String(), quoted, !quoted && hasGlob(p.Value))
		case *syntax.SglQuoted:
			var b strings.Builder
			if p.Dollar {
				ansiC(&b, p.Value)
			} else {
				b.WriteString(p.Value)
			}
			x.literal(b.String(), true, false)
		case *syntax.DblQuoted:
			x.each(func(w *way) { w.field().quoted = true })
			x.parts(p.Parts, true)
		case *syntax.ParamExp:
			x.param(p, quoted)
		case *syntax.CmdSubst:
			v := x.s.substValue(p)
			x.value(v, quoted)
		case *syntax.ArithmExp:
			x.value(intValue(), quoted)
		case *syntax.ProcSubst:
			x.each(func(w *way) {
				f := w.field()
				f.dynamic, f.subst = "a process substitution", true
			})
		case *syntax.ExtGlob:
			x.literal(p.Op.String()+p.Pattern.Value+")", false, true)
		default:
			x.dynamic("an expansion Airlock does not follow", true, false)
		}
	}
}

// stackTilde returns the length of a word's tilde prefix that names the
// working directory or the directory stack (~+, ~-, ~2, ~+1, ~-3), 0 if
// it has none.
func stackTilde(v string) int {
	if len(v) < 2 || v[0] != '~' {
		return 0
	}
	n := 1
	if v[1] == '+' || v[1] == '-' {
		n = 2
	}
	for n < len(v) && v[n] >= '0' && v[n] <= '9' {
		n++
	}
	if n == 1 || n < len(v) && v[n] != '/' {
		return 0 // ~ or ~user
	}
	return n
}

// param expands a parameter expansion.
func (x *expansion) param(p *syntax.ParamExp, quoted bool) {
	if p.Param == nil || p.Flags != nil || p.NestedParam != nil || p.Width || p.IsSet || len(p.Modifiers) > 0 {
		x.dynamic("an expansion Airlock does not follow", true, false)
		return
	}
	name := p.Param.Value
	switch {
	case p.Length:
		x.value(intValue(), quoted)
		return
	case p.Names != 0:
		x.value(dynamicValue("the names of variables", false), quoted)
		return
	}
	v := x.s.paramValue(p)
	if (name == "@" || p.Index != nil && isAllIndex(p.Index)) && p.Excl == false && quoted && v.list != nil &&
		p.Slice == nil && p.Repl == nil && p.Exp == nil {
		// "$@", "${a[@]}": one field per element.
		for i, e := range v.list {
			if i > 0 {
				x.each(func(w *way) { w.split(); w.field().quoted = true })
			}
			x.value(e, true)
		}
		if len(v.list) == 0 {
			x.each(func(w *way) {
				if w.open != nil && len(w.open.b) == 0 && w.open.dynamic == "" {
					w.open.quoted = false
				}
			})
		}
		return
	}
	x.value(x.s.operate(p, v), quoted)
	if (name == "@" || p.Index != nil && isAllIndex(p.Index)) && v.list == nil && v.isDynamic() {
		// "$@" of arguments only known at run time: any number of fields.
		x.each(func(w *way) { w.field().spread = true })
	}
}

func isAllIndex(i syntax.ArithmExpr) bool {
	w, ok := i.(*syntax.Word)
	return ok && (w.Lit() == "@" || w.Lit() == "*")
}

// paramValue is what the parameter of p holds, before p's operator:
// followed through ${!ref} and an array's subscript.
func (s *scope) paramValue(p *syntax.ParamExp) value {
	name := p.Param.Value
	v := s.lookup(name)
	if p.Excl {
		// ${!ref}: the variable ref names.
		if v.isDynamic() || len(v.alts) == 0 {
			return dynamicValue("a variable named only at run time", true)
		}
		out := value{}
		for i, a := range v.alts {
			target, _, _ := strings.Cut(a.s, "[")
			t := dynamicValue("a variable named only at run time", true)
			if syntax.ValidName(target) || isParam(target) {
				t = s.lookup(target)
			}
			if i == 0 {
				out = t
			} else {
				out = out.union(t)
			}
		}
		v = out
	}
	if p.Index != nil {
		if isAllIndex(p.Index) {
			if name == "@" || name == "*" {
				return v
			}
			return value{list: v.elements(), dynamic: v.dynamic, secret: v.secret, lenient: v.lenient}
		}
		return v.anyElement()
	}
	if name == "@" || name == "*" {
		return v
	}
	if v.list != nil {
		if len(v.list) == 0 {
			return knownValue("")
		}
		return v.list[0]
	}
	return v
}

// operate applies a parameter expansion's operator to what the parameter
// holds. Operators Airlock computes keep the value known; the others make
// it dynamic, keeping whether it may be a secret.
func (s *scope) operate(p *syntax.ParamExp, v value) value {
	if v.list != nil && p.Slice == nil && p.Repl == nil && p.Exp == nil {
		// "${a[*]}", "$*": the elements joined by spaces.
		return joinElements(v.list)
	}
	unknownOf := func(what string) value {
		return value{dynamic: what, secret: v.secret, lenient: v.lenient && v.isDynamic()}
	}
	switch {
	case p.Slice != nil:
		return unknownOf("a part of a string")
	case p.Repl != nil:
		orig, ok1 := staticWord(p.Repl.Orig)
		with, ok2 := staticWord(p.Repl.With)
		// In bash 5.2, & in the replacement stands for the match
		// (patsub_replacement): not computed here.
		if !ok1 || !ok2 || v.isDynamic() || hasGlob(orig) || orig == "" || strings.ContainsAny(orig, "#%") ||
			strings.ContainsAny(with, "&\\") {
			return unknownOf("a string with a part replaced")
		}
		return v.mapAlts(func(a string) string {
			if p.Repl.All {
				return strings.ReplaceAll(a, orig, with)
			}
			return strings.Replace(a, orig, with, 1)
		})
	case p.Exp == nil:
		return v
	}
	word := value{}
	if p.Exp.Word != nil {
		fields := s.fieldsOf(p.Exp.Word)
		word = valueOfFields(fields)
	} else {
		word = knownValue("")
	}
	switch p.Exp.Op {
	case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AssignUnset, syntax.AssignUnsetOrNull:
		if !v.isDynamic() && len(v.alts) > 0 && !slices.ContainsFunc(v.alts, func(a alt) bool { return a.s == "" }) {
			return v // set and not empty: the word is not used
		}
		return v.union(word)
	case syntax.AlternateUnset, syntax.AlternateUnsetOrNull:
		if !v.isDynamic() && len(v.alts) == 1 && v.alts[0].s == "" && p.Exp.Op == syntax.AlternateUnsetOrNull {
			return knownValue("")
		}
		return knownValue("").union(word)
	case syntax.ErrorUnset, syntax.ErrorUnsetOrNull:
		return v
	case syntax.RemSmallPrefix, syntax.RemLargePrefix, syntax.RemSmallSuffix, syntax.RemLargeSuffix:
		pat, ok := staticWord(p.Exp.Word)
		if !ok || v.isDynamic() {
			return unknownOf("a string with a part removed")
		}
		return v.mapAlts(func(a string) string { return trimPattern(a, pat, p.Exp.Op) })
	case syntax.UpperFirst, syntax.UpperAll, syntax.LowerFirst, syntax.LowerAll:
		if v.isDynamic() {
			return unknownOf("a string with its case changed")
		}
		return v.mapAlts(func(a string) string {
			switch p.Exp.Op {
			case syntax.UpperAll:
				return strings.ToUpper(a)
			case syntax.LowerAll:
				return strings.ToLower(a)
			case syntax.UpperFirst:
				if a != "" {
					return strings.ToUpper(a[:1]) + a[1:]
				}
			case syntax.LowerFirst:
				if a != "" {
					return strings.ToLower(a[:1]) + a[1:]
				}
			}
			return a
		})
	case syntax.OtherParamOps:
		op, _ := staticWord(p.Exp.Word)
		switch op {
		case "Q", "E", "U", "u", "L":
			if v.isDynamic() {
				return unknownOf("a string transformed")
			}
			return v.mapAlts(func(a string) string {
				switch op {
				case "Q":
					return quote(a)
				case "E":
					var b strings.Builder
					ansiC(&b, a)
					return b.String()
				case "U":
					return strings.ToUpper(a)
				case "L":
					return strings.ToLower(a)
				}
				if a != "" {
					return strings.ToUpper(a[:1]) + a[1:]
				}
				return a
			})
		}
		return unknownOf("a string transformed")
	}
	return unknownOf("an expansion Airlock does not follow")
}

// mapAlts applies f to each known string of v; a pattern stays one only
// when f leaves it unchanged.
func (v value) mapAlts(f func(string) string) value {
	out := v
	out.alts = make([]alt, 0, len(v.alts))
	for _, a := range v.alts {
		n := f(a.s)
		na := alt{s: n, glob: a.glob && n == a.s}
		if a.under {
			if n != a.s {
				return dynamicValue("a string derived from a file's name", false)
			}
			na.under = true
		}
		if (a.glob) && n != a.s {
			return dynamicValue("a string derived from a file's name", false)
		}
		if !slices.Contains(out.alts, na) {
			out.alts = append(out.alts, na)
		}
	}
	return out
}

func joinElements(list []value) value {
	out := knownValue("")
	for i, e := range list {
		if i > 0 {
			out = concat(out, knownValue(" "))
		}
		out = concat(out, e)
	}
	return out
}

// concat is what a+b holds.
func concat(a, b value) value {
	if a.isDynamic() || b.isDynamic() {
		return value{dynamic: a.dynamic + b.dynamic, secret: a.secret || b.secret,
			lenient: (a.lenient || !a.isDynamic()) && (b.lenient || !b.isDynamic())}
	}
	if len(a.alts)*len(b.alts) > maxAlts {
		return dynamicValue("one of many values", false)
	}
	out := value{}
	for _, x := range a.alts {
		for _, y := range b.alts {
			if x.under || y.under {
				return dynamicValue("a string derived from a file's name", false)
			}
			na := alt{s: x.s + y.s, glob: x.glob || y.glob}
			if !slices.Contains(out.alts, na) {
				out.alts = append(out.alts, na)
			}
		}
	}
	return out
}

// valueOfFields is what an assignment's word holds: the fields of each
// way joined (an assignment does not split).
func valueOfFields(ways [][]arg) value {
	out := value{}
	for i, fields := range ways {
		v := knownValue("")
		for j, f := range fields {
			if j > 0 {
				v = concat(v, knownValue(" "))
			}
			switch {
			case f.static:
				v = concat(v, value{alts: []alt{{s: f.val, glob: f.glob}}})
			case f.under && len(fields) == 1:
				v = value{alts: []alt{{s: f.path, under: true}}}
			default:
				v = concat(v, value{dynamic: f.from, secret: f.secret, lenient: f.lenient})
			}
		}
		if i == 0 {
			out = v
		} else {
			out = out.union(v)
		}
	}
	if len(ways) == 0 {
		return knownValue("")
	}
	return out
}

// assignValue is what an assignment's word gives the variable: no field
// splitting or globbing, a tilde expanded.
func (s *scope) assignValue(w *syntax.Word) value {
	if w == nil {
		return knownValue("")
	}
	v := valueOfFields(s.fieldsOf(w))
	for i := range v.alts {
		v.alts[i].glob = false // an assignment does not glob
	}
	return v
}

// staticWord is the value of a word with no expansions.
func staticWord(w *syntax.Word) (string, bool) {
	if w == nil {
		return "", true
	}
	v, static, _ := wordValue(w)
	return v, static
}

// trimPattern removes pattern pat from the start (# ##) or end (% %%) of
// s, the shortest or the longest match, as bash does.
func trimPattern(s, pat string, op syntax.ParExpOperator) string {
	switch op {
	case syntax.RemSmallPrefix:
		for i := 0; i <= len(s); i++ {
			if patMatch(pat, s[:i]) {
				return s[i:]
			}
		}
	case syntax.RemLargePrefix:
		for i := len(s); i >= 0; i-- {
			if patMatch(pat, s[:i]) {
				return s[i:]
			}
		}
	case syntax.RemSmallSuffix:
		for i := len(s); i >= 0; i-- {
			if patMatch(pat, s[i:]) {
				return s[:i]
			}
		}
	case syntax.RemLargeSuffix:
		for i := 0; i <= len(s); i++ {
			if patMatch(pat, s[i:]) {
				return s[:i]
			}
		}
	}
	return s
}

// patMatch matches s against a bash pattern, where "*" matches any string,
// "/" included.
func patMatch(pat, s string) bool {
	for len(pat) > 0 {
		switch pat[0] {
		case '*':
			for len(pat) > 0 && pat[0] == '*' {
				pat = pat[1:]
			}
			if pat == "" {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if patMatch(pat, s[i:]) {
					return true
				}
			}
			return false
		case '?':
			if s == "" {
				return false
			}
			pat, s = pat[1:], s[1:]
		case '[':
			end := strings.IndexByte(pat[1:], ']')
			if end < 0 || s == "" {
				if s == "" || s[0] != '[' {
					return false
				}
				pat, s = pat[1:], s[1:]
				continue
			}
			set := pat[1 : end+1]
			neg := strings.HasPrefix(set, "!") || strings.HasPrefix(set, "^")
			if neg {
				set = set[1:]
			}
			if inSet(set, s[0]) == neg {
				return false
			}
			pat, s = pat[end+2:], s[1:]
		case '\\':
			if len(pat) > 1 {
				pat = pat[1:]
			}
			fallthrough
		default:
			if s == "" || s[0] != pat[0] {
				return false
			}
			pat, s = pat[1:], s[1:]
		}
	}
	return s == ""
}

func inSet(set string, c byte) bool {
	for i := 0; i < len(set); i++ {
		if i+2 < len(set) && set[i+1] == '-' {
			if set[i] <= c && c <= set[i+2] {
				return true
			}
			i += 2
			continue
		}
		if set[i] == c {
			return true
		}
	}
	return false
}
