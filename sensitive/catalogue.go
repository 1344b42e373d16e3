package sensitive

import (
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// Kind is what a catalogue entry says about the paths it matches.
type Kind uint8

// The kinds of entry.
const (
	// KindSecret: reading the path reveals a secret (a key, a token, a
	// password file, memory, a process's environment).
	KindSecret Kind = iota + 1
	// KindRunsLater: writing the path runs code later or grants access (a
	// shell start-up file, ~/.ssh, a git hook, a folder in PATH).
	KindRunsLater
	// KindGateConfig: writing the path configures an agent host, an editor
	// or Airlock itself, which can switch the gate off or run code outside
	// it (.claude/settings.local.json, .codex/hooks.json, .mcp.json,
	// .vscode/tasks.json, Airlock's tokens and data).
	KindGateConfig
	// KindSystem: writing under the path changes the system (/etc, /usr).
	KindSystem
	// KindSecretVar: an environment variable whose name says it holds a
	// secret (GITHUB_TOKEN, DATABASE_URL). Its pattern is a name, not a path.
	KindSecretVar
	kinds
)

var kindNames = [kinds]string{"", "secret", "runs-later", "gate-config", "system", "secret-var"}

// String returns the kind's name in the catalogue file: "secret",
// "runs-later", "gate-config", "system", "secret-var".
func (k Kind) String() string {
	if k < kinds {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// ParseKind parses a kind's name.
func ParseKind(s string) (Kind, error) {
	for k := KindSecret; k < kinds; k++ {
		if kindNames[k] == s {
			return k, nil
		}
	}
	return 0, fmt.Errorf("unknown kind %q (valid: %s)", s, strings.Join(kindNames[1:], ", "))
}

// Entry is one line of a catalogue.
type Entry struct {
	Kind Kind
	// Pattern is an absolute path (/etc/shadow), a path in every home
	// directory (~/.aws/**), or a path at any depth (**/.env, or .env):
	// "*", "?" and "[...]" match within a name, "**" any number of names. A
	// leading "!" takes the paths it matches out of the kind (the built-in
	// catalogue only). For KindSecretVar it is a variable name pattern.
	Pattern string
	// What the entry is, in the words of a reason ("credentials", "Claude
	// Code's settings").
	What string
	// Source is where the fact comes from: a URL, or a policy's file and
	// line.
	Source string
}

type anchor uint8

const (
	anchorRoot anchor = iota // /abs
	anchorHome               // ~/rel
	anchorAny                // **/rel
)

type segKind uint8

const (
	segLit  segKind = iota // a name
	segGlob                // a name pattern
	segAny                 // **
)

// A pseg is one name of a compiled pattern, folded.
type pseg struct {
	text     string
	kind     segKind
	pre, suf string // a glob's literal start and end, which a name must have
}

// newGlob makes the pseg of a name pattern.
func newGlob(text string) pseg {
	s := pseg{text: text, kind: segGlob}
	i := strings.IndexAny(text, "*?[")
	j := strings.LastIndexAny(text, "*?]")
	if i < 0 || j < 0 {
		s.pre = text
		return s
	}
	s.pre = text[:i]
	if text[j] != ']' || strings.Contains(text[:j], "[") {
		s.suf = text[j+1:]
	}
	return s
}

// may reports whether a name may match the glob: it has its literal start
// and end. A name that is not ASCII is left to the full match.
func (s *pseg) may(name string) bool {
	if len(name) < len(s.pre)+len(s.suf) {
		return !isASCII(name)
	}
	for i := 0; i < len(s.pre); i++ {
		if c := name[i]; c >= 0x80 || lower(c) != s.pre[i] {
			return c >= 0x80 || !isASCII(name)
		}
	}
	for i, j := len(s.suf)-1, len(name)-1; i >= 0; i, j = i-1, j-1 {
		if c := name[j]; c >= 0x80 || lower(c) != s.suf[i] {
			return c >= 0x80 || !isASCII(name)
		}
	}
	return true
}

// entry is a compiled Entry.
type entry struct {
	Entry
	neg    bool
	anchor anchor
	segs   []pseg // after the anchor
	under  string // for a system directory: the literal part of its pattern ("/etc")
	min    int    // how many names a path needs to match it (not counting **)
	many   bool   // it has a **: it matches paths of min names or more
}

// compile parses e's pattern.
func compile(e Entry) (*entry, error) {
	c := &entry{Entry: e}
	p := e.Pattern
	if p == "" {
		return nil, errors.New("empty pattern")
	}
	if strings.ContainsAny(p, "\x00\\") {
		return nil, fmt.Errorf("pattern %q: a path has no NUL or backslash (write / between names)", p)
	}
	if strings.HasPrefix(p, "!") {
		c.neg, p = true, p[1:]
	}
	if e.Kind == KindSecretVar {
		if p == "" || strings.ContainsAny(p, "/=") {
			return nil, fmt.Errorf("pattern %q is not a variable name", e.Pattern)
		}
		if err := checkGlob(p); err != nil {
			return nil, fmt.Errorf("pattern %q: %v", e.Pattern, err)
		}
		c.segs = []pseg{newGlob(foldPattern(p))}
		return c, nil
	}
	switch {
	case strings.HasPrefix(p, "/"):
		c.anchor, p = anchorRoot, p[1:]
	case p == "~" || strings.HasPrefix(p, "~/"):
		c.anchor, p = anchorHome, strings.TrimPrefix(p[1:], "/")
	case strings.HasPrefix(p, "~"):
		return nil, fmt.Errorf("pattern %q: write ~/ for every home directory; a named user's (~%s) is not supported",
			e.Pattern, strings.SplitN(p[1:], "/", 2)[0])
	default:
		c.anchor = anchorAny
		p = strings.TrimPrefix(p, "**/")
	}
	if p == "" {
		return nil, fmt.Errorf("pattern %q names no file", e.Pattern)
	}
	for _, name := range strings.Split(p, "/") {
		switch {
		case name == "" || name == "." || name == "..":
			return nil, fmt.Errorf("pattern %q: empty, . or .. name", e.Pattern)
		case name == "**":
			if n := len(c.segs); n > 0 && c.segs[n-1].kind == segAny {
				continue
			}
			c.segs = append(c.segs, pseg{kind: segAny})
		case strings.Contains(name, "**"):
			return nil, fmt.Errorf("pattern %q: ** stands alone between slashes", e.Pattern)
		case hasMeta(name):
			if err := checkGlob(name); err != nil {
				return nil, fmt.Errorf("pattern %q: %v", e.Pattern, err)
			}
			c.segs = append(c.segs, newGlob(foldPattern(name)))
		default:
			c.segs = append(c.segs, pseg{text: foldPattern(name), kind: segLit})
		}
	}
	if c.anchor == anchorAny && c.segs[0].kind == segAny {
		c.segs = c.segs[1:] // **/**/x is **/x
		if len(c.segs) == 0 {
			return nil, fmt.Errorf("pattern %q matches every path", e.Pattern)
		}
	}
	for _, s := range c.segs {
		if s.kind == segAny {
			c.many = true
		} else {
			c.min++
		}
	}
	if e.Kind == KindSystem && c.anchor == anchorRoot {
		var lit []string
		for _, s := range strings.Split(p, "/") {
			if hasMeta(s) || s == "**" {
				break
			}
			lit = append(lit, s)
		}
		c.under = "/" + strings.Join(lit, "/")
	}
	return c, nil
}

// checkGlob reports a malformed name pattern: an unclosed class.
func checkGlob(name string) error {
	for i := 0; i < len(name); i++ {
		if name[i] != '[' {
			continue
		}
		_, end, ok := classMatch(name, i+1, 0)
		if !ok {
			return fmt.Errorf("%q has a [ that is not closed", name)
		}
		i = end - 1
	}
	return nil
}

// foldPattern folds a pattern's literal runes, keeping its syntax.
func foldPattern(p string) string {
	var b strings.Builder
	for _, r := range p {
		if ignorable(r) {
			continue
		}
		b.WriteRune(canon(r))
	}
	return b.String()
}

// A keyed is a map of entries by a folded name, with a filter that turns
// most names away before they are hashed: the lengths and first bytes of
// its keys.
type keyed struct {
	m     map[string][]*entry
	lens  uint64    // bit n: a key of n bytes (n < 63), bit 63: a longer one
	first [4]uint64 // bit c: a key that starts with byte c
}

func (k *keyed) add(key string, e *entry) {
	if k.m == nil {
		k.m = map[string][]*entry{}
	}
	k.m[key] = append(k.m[key], e)
	k.lens |= 1 << min(len(key), 63)
	if key != "" {
		k.first[key[0]>>6] |= 1 << (key[0] & 63)
	}
}

// lookup returns the entries held under a name, folded: without an
// allocation when the name is short and ASCII.
func (k *keyed) lookup(name string) []*entry {
	if k.m == nil || name == "" {
		return nil
	}
	c := lower(name[0])
	if c < 0x80 && (k.lens&(1<<min(len(name), 63)) == 0 || k.first[c>>6]&(1<<(c&63)) == 0) {
		return nil
	}
	var buf [64]byte
	if len(name) <= len(buf) {
		ascii := true
		for i := 0; i < len(name); i++ {
			c := name[i]
			if c >= 0x80 {
				ascii = false
				break
			}
			buf[i] = lower(c)
		}
		if ascii {
			return k.m[string(buf[:len(name)])]
		}
	}
	return k.m[fold(name)]
}

// index finds the entries of one kind (positive or negative) that may
// match a path, without trying them all.
type index struct {
	root keyed    // anchorRoot, by the first name
	home keyed    // anchorHome, by the first name inside the home
	base keyed    // anchorAny of one literal name, by it
	ext  keyed    // anchorAny of one name "*.ext", by ".ext"
	seg  keyed    // anchorAny of several names, the first literal: by it
	scan []*entry // the rest: tried on every path
	all  []*entry
	vars []*entry // KindSecretVar
}

func newIndex() *index {
	return &index{}
}

func (ix *index) add(e *entry) {
	ix.all = append(ix.all, e)
	if e.Kind == KindSecretVar {
		ix.vars = append(ix.vars, e)
		return
	}
	first := e.segs[0]
	switch {
	case e.anchor == anchorRoot && first.kind == segLit:
		ix.root.add(first.text, e)
	case e.anchor == anchorHome && first.kind == segLit:
		ix.home.add(first.text, e)
	case e.anchor == anchorAny && len(e.segs) == 1 && first.kind == segLit:
		ix.base.add(first.text, e)
	case e.anchor == anchorAny && len(e.segs) == 1 && isExtPattern(first.text):
		ext := first.text[strings.LastIndexByte(first.text, '.'):]
		ix.ext.add(ext, e)
	case e.anchor == anchorAny && len(e.segs) > 1 && first.kind == segLit:
		ix.seg.add(first.text, e)
	default:
		ix.scan = append(ix.scan, e)
	}
}

// isExtPattern reports whether a name pattern is "*" and a literal
// extension (*.key, *.tfstate.backup).
func isExtPattern(p string) bool {
	return strings.HasPrefix(p, "*") && !hasMeta(p[1:]) && strings.Contains(p[1:], ".")
}

// A table is one catalogue's compiled entries: by kind, positive and
// negative.
type table struct {
	entries []*entry
	pos     [kinds]*index
	neg     [kinds]*index
}

func newTable(entries []*entry) *table {
	t := &table{entries: entries}
	for k := range kinds {
		t.pos[k], t.neg[k] = newIndex(), newIndex()
	}
	for _, e := range entries {
		if e.neg {
			t.neg[e.Kind].add(e)
		} else {
			t.pos[e.Kind].add(e)
		}
	}
	return t
}

//go:embed catalogue.tsv
var builtinTSV string

var builtin = sync.OnceValue(func() *Catalogue {
	entries, err := Parse(builtinTSV)
	if err != nil {
		panic("sensitive: the built-in catalogue does not parse: " + err.Error())
	}
	c, err := build(entries, true)
	if err != nil {
		panic("sensitive: the built-in catalogue does not compile: " + err.Error())
	}
	return c
})

// Parse reads a catalogue in the format of the built-in one (catalogue.tsv):
// one entry a line, kind, pattern, what and source separated by tabs; "#"
// starts a comment line. It does not compile the patterns.
func Parse(text string) ([]Entry, error) {
	var out []Entry
	var errs []error
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		var fields []string
		for _, f := range strings.Split(line, "\t") {
			if f = strings.TrimSpace(f); f != "" {
				fields = append(fields, f)
			}
		}
		if len(fields) != 4 {
			errs = append(errs, fmt.Errorf("line %d: %d fields, want 4 (kind, pattern, what, source) separated by tabs", n+1, len(fields)))
			continue
		}
		k, err := ParseKind(fields[0])
		if err != nil {
			errs = append(errs, fmt.Errorf("line %d: %v", n+1, err))
			continue
		}
		out = append(out, Entry{Kind: k, Pattern: fields[1], What: fields[2], Source: fields[3]})
	}
	return out, errors.Join(errs...)
}

// Builtin returns the built-in catalogue (catalogue.tsv), compiled on
// first use.
func Builtin() *Catalogue { return builtin() }

// Entries returns the built-in catalogue's entries, in file order.
func Entries() []Entry {
	t := builtin().tables[0]
	out := make([]Entry, len(t.entries))
	for i, e := range t.entries {
		out[i] = e.Entry
	}
	return out
}

// Catalogue is a set of sensitive paths: the built-in one, and what
// policies added. Its methods answer for paths as the package's functions
// do; a nil *Catalogue is the built-in one. A Catalogue is immutable and
// safe for concurrent use.
type Catalogue struct {
	tables []*table // the built-in one first
}

func build(entries []Entry, negations bool) (*Catalogue, error) {
	var compiled []*entry
	var errs []error
	for _, e := range entries {
		if e.Kind == 0 || e.Kind >= kinds {
			errs = append(errs, fmt.Errorf("pattern %q: no kind", e.Pattern))
			continue
		}
		c, err := compile(e)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if c.neg && !negations {
			errs = append(errs, fmt.Errorf("pattern %q: a policy can only add to the catalogue; ! takes paths out", e.Pattern))
			continue
		}
		compiled = append(compiled, c)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &Catalogue{tables: []*table{newTable(compiled)}}, nil
}

// Compile checks one pattern of a kind as Extend would take it.
func Compile(kind Kind, pattern string) error {
	_, err := build([]Entry{{Kind: kind, Pattern: pattern}}, false)
	return err
}

// Extend returns c with entries added: a policy's own sensitive paths.
// They can only add: a pattern starting with "!" is refused.
func (c *Catalogue) Extend(entries ...Entry) (*Catalogue, error) {
	if len(entries) == 0 {
		return c, nil
	}
	added, err := build(entries, false)
	if err != nil {
		return nil, err
	}
	base := c.orBuiltin()
	return &Catalogue{tables: append(append([]*table(nil), base.tables...), added.tables...)}, nil
}

// Join returns the catalogue of every path some of cs holds (nil ones are
// the built-in catalogue): the stack of a gate's policies.
func Join(cs ...*Catalogue) *Catalogue {
	var out *Catalogue
	for _, c := range cs {
		if c == nil || out == c {
			continue
		}
		if out == nil {
			out = c
			continue
		}
		seen := map[*table]bool{}
		var tables []*table
		for _, t := range append(append([]*table(nil), out.tables...), c.tables...) {
			if !seen[t] {
				seen[t] = true
				tables = append(tables, t)
			}
		}
		out = &Catalogue{tables: tables}
	}
	return out
}

func (c *Catalogue) orBuiltin() *Catalogue {
	if c == nil {
		return builtin()
	}
	return c
}

// find returns the first entry of kind that matches the path, or nil.
func (c *Catalogue) find(kind Kind, n *pathNames, glob bool) *entry {
	for _, t := range c.orBuiltin().tables {
		if e := t.find(kind, n, glob); e != nil {
			return e
		}
	}
	return nil
}

func (t *table) find(kind Kind, n *pathNames, glob bool) *entry {
	e := t.pos[kind].match(n, glob, false)
	if e == nil {
		return nil
	}
	if neg := t.neg[kind]; len(neg.all) > 0 && neg.match(n, glob, true) != nil {
		return nil
	}
	return e
}

// match returns an entry of the index that matches the path. With glob,
// the path's names are shell patterns, and an entry matches when some
// expansion of them may match it; with cover (for negations), an entry
// matches when it matches every expansion.
func (ix *index) match(n *pathNames, glob, cover bool) *entry {
	if len(n.names) == 0 {
		return nil
	}
	if glob && !cover && anyMeta(n.names) {
		return ix.matchGlob(n)
	}
	names := n.names
	if n.abs {
		for _, e := range ix.root.lookup(names[0]) {
			if matchNames(e.segs, names, cover) {
				return e
			}
		}
	}
	if n.home >= 0 && n.home < len(names) {
		for _, e := range ix.home.lookup(names[n.home]) {
			if matchNames(e.segs, names[n.home:], cover) {
				return e
			}
		}
	}
	last := names[len(names)-1]
	if es := ix.base.lookup(last); len(es) > 0 {
		return es[0]
	}
	if i := strings.LastIndexByte(last, '.'); i >= 0 {
		for _, e := range ix.ext.lookup(last[i:]) {
			if globMatch(e.segs[0].text, last, cover) {
				return e
			}
		}
	}
	for i := range names {
		for _, e := range ix.seg.lookup(names[i]) {
			if matchNames(e.segs[1:], names[i+1:], cover) {
				return e
			}
		}
	}
	for _, e := range ix.scan {
		if e.match(n, cover) {
			return e
		}
	}
	return nil
}

// match tries one entry on a path (of literal names, or cover).
func (e *entry) match(n *pathNames, cover bool) bool {
	names := n.names
	switch e.anchor {
	case anchorRoot:
		return n.abs && matchNames(e.segs, names, cover)
	case anchorHome:
		return n.home >= 0 && matchNames(e.segs, names[n.home:], cover)
	}
	lo, hi := e.positions(len(names))
	for i := lo; i <= hi; i++ {
		if matchNames(e.segs, names[i:], cover) {
			return true
		}
	}
	return false
}

// positions returns where in a path of n names an entry that may be
// anywhere can start: it needs as many names as it has, and exactly as
// many unless it has a **.
func (e *entry) positions(n int) (lo, hi int) {
	hi = n - e.min
	if !e.many {
		lo = hi
	}
	return max(lo, 0), hi
}

func anyMeta(names []string) bool {
	for _, s := range names {
		if hasMeta(s) {
			return true
		}
	}
	return false
}

// matchNames reports whether the pattern's names match the path's, all of
// them.
func matchNames(segs []pseg, names []string, cover bool) bool {
	for len(segs) > 0 {
		s := segs[0]
		if s.kind == segAny {
			segs = segs[1:]
			if len(segs) == 0 {
				return true
			}
			for i := range names {
				if matchNames(segs, names[i:], cover) {
					return true
				}
			}
			return false
		}
		if len(names) == 0 {
			return false
		}
		if s.kind == segLit && !cover {
			if !foldEqual(names[0], s.text) {
				return false
			}
		} else if s.kind == segGlob && !s.may(names[0]) || !globMatch(s.text, names[0], cover) {
			return false
		}
		segs, names = segs[1:], names[1:]
	}
	return len(names) == 0
}

// matchGlob tries every entry on a path whose names are shell patterns.
func (ix *index) matchGlob(n *pathNames) *entry {
	globstar := false
	for _, s := range n.names {
		globstar = globstar || s == "**"
	}
	for _, e := range ix.all {
		if e.Kind == KindSecretVar {
			continue
		}
		switch e.anchor {
		case anchorRoot:
			if n.abs && globNames(e.segs, n.names, true, false) {
				return e
			}
		case anchorHome:
			if n.home >= 0 && globNames(e.segs, n.names[n.home:], true, false) {
				return e
			}
		default:
			if len(e.segs) == 1 && e.segs[0].kind == segLit && len(n.names) > 0 && onlyExtension(n.names[len(n.names)-1]) {
				continue // a type of file (*.txt) does not say passwords.txt
			}
			lo, hi := e.positions(len(n.names))
			if globstar {
				lo, hi = 0, len(n.names)-1
			}
			for i := lo; i <= hi; i++ {
				if globNames(e.segs, n.names[i:], false, false) {
					return e
				}
			}
		}
	}
	return nil
}

// globNames reports whether some expansion of the shell patterns names
// may match the entry's names segs. With prefix, names may also stop
// above the entry (a pattern for a directory that holds it) once a
// pattern character took part. A pattern that ends the path counts
// against a name that may be anywhere only when it says enough
// (saysEnough): "cat *" is not taken to read an id_rsa that may be there.
func globNames(segs []pseg, names []string, prefix, globbed bool) bool {
	for len(segs) > 0 {
		s := segs[0]
		if len(names) > 0 && names[0] == "**" { // bash's globstar: any number of names
			if globNames(segs, names[1:], prefix, true) {
				return true
			}
			if s.kind != segAny {
				segs = segs[1:]
			}
			if globNames(segs, names, prefix, true) {
				return true
			}
			return false
		}
		if s.kind == segAny {
			segs = segs[1:]
			if len(segs) == 0 {
				return true
			}
			for i := range names {
				if globNames(segs, names[i:], prefix, globbed) {
					return true
				}
			}
			return prefix && globbed
		}
		if len(names) == 0 {
			return prefix && globbed
		}
		name := names[0]
		if hasMeta(name) {
			if !prefix && len(names) == 1 && !saysEnough(name) || !globMay(name, &s) || !intersect(name, s.text) {
				return false
			}
			globbed = true
		} else if s.kind == segLit && !foldEqual(name, s.text) || s.kind == segGlob && !globMatch(s.text, name, false) {
			return false
		}
		segs, names = segs[1:], names[1:]
	}
	return len(names) == 0
}

// onlyExtension reports whether a shell pattern says only a type of file
// (*.txt, *.tar.gz): like *, it reads whatever files of that type are
// there, and counts against the catalogue's types (*.p12) and its names in
// a particular place (config/database.yml) but not against a name that may
// be anywhere (passwords.txt).
func onlyExtension(in string) bool {
	return strings.HasPrefix(in, "*.") && !hasMeta(in[1:])
}

// globMay reports whether a shell pattern may meet a catalogue name: the
// literal start of each is a start of the other, and so for their ends.
func globMay(in string, s *pseg) bool {
	if !isASCII(in) {
		return true
	}
	pre, suf := in, ""
	if i := strings.IndexAny(in, "*?["); i >= 0 {
		pre = in[:i]
		if j := strings.LastIndexAny(in, "*?]"); j >= 0 && (in[j] != ']' || !strings.Contains(in[:j], "[")) {
			suf = in[j+1:]
		}
	}
	spre, ssuf := s.pre, s.suf
	if s.kind == segLit {
		spre, ssuf = s.text, s.text
	}
	n := min(len(pre), len(spre))
	m := min(len(suf), len(ssuf))
	return strings.EqualFold(pre[:n], spre[:n]) && strings.EqualFold(suf[len(suf)-m:], ssuf[len(ssuf)-m:])
}

// holds reports whether a directory is, or is above, a path of kind: the
// home of every home, or a directory on the way to an absolute or
// home-relative entry.
func (c *Catalogue) holds(kind Kind, n *pathNames) bool {
	for _, t := range c.orBuiltin().tables {
		for _, e := range t.pos[kind].all {
			switch e.anchor {
			case anchorRoot:
				if n.abs && prefixNames(e.segs, n.names) {
					return true
				}
			case anchorHome:
				if n.home >= 0 && prefixNames(e.segs, n.names[n.home:]) {
					return true
				}
			}
		}
	}
	return false
}

// prefixNames reports whether names lead to the entry's names: each
// matches, and the entry goes on (or matches them all).
func prefixNames(segs []pseg, names []string) bool {
	for len(names) > 0 {
		if len(segs) == 0 {
			return false
		}
		s := segs[0]
		if s.kind == segAny {
			return true
		}
		if s.kind == segLit && !foldEqual(names[0], s.text) || s.kind == segGlob && !globMatch(s.text, names[0], false) {
			return false
		}
		segs, names = segs[1:], names[1:]
	}
	return true
}

// matchVar reports whether a variable name matches an entry of kind
// KindSecretVar.
func (c *Catalogue) matchVar(name string) *entry {
	for _, t := range c.orBuiltin().tables {
		for _, e := range t.pos[KindSecretVar].vars {
			if globMatch(e.segs[0].text, name, false) {
				neg := false
				for _, x := range t.neg[KindSecretVar].vars {
					if globMatch(x.segs[0].text, name, false) {
						neg = true
						break
					}
				}
				if !neg {
					return e
				}
			}
		}
	}
	return nil
}

// matchName reports whether a file of this name (one name, no directory)
// is a secret wherever it is; with glob, whether the pattern may name one.
func (c *Catalogue) matchName(kind Kind, name string, glob bool) bool {
	pattern := glob && hasMeta(name)
	for _, t := range c.orBuiltin().tables {
		ix := t.pos[kind]
		try := func(e *entry) bool {
			if e.anchor != anchorAny || len(e.segs) != 1 || e.segs[0].kind == segAny {
				return false
			}
			ok := false
			if pattern {
				// (globMay, which allocates nothing, first.)
				ok = globMay(name, &e.segs[0]) && intersect(name, e.segs[0].text)
			} else {
				ok = globMatch(e.segs[0].text, name, false)
			}
			if !ok {
				return false
			}
			var buf [maxNames]string
			n := split(name, buf[:0])
			return t.neg[kind].match(&n, glob, true) == nil
		}
		if pattern {
			// A pattern may meet any entry's pattern: try them all.
			for _, e := range ix.all {
				if try(e) {
					return true
				}
			}
			continue
		}
		// A literal name: the entries of that name, of its extension, and
		// those the index could not key (a pattern such as .env*).
		for _, e := range ix.base.lookup(name) {
			if try(e) {
				return true
			}
		}
		if i := strings.LastIndexByte(name, '.'); i >= 0 {
			for _, e := range ix.ext.lookup(name[i:]) {
				if try(e) {
					return true
				}
			}
		}
		for _, e := range ix.scan {
			if try(e) {
				return true
			}
		}
	}
	return false
}
