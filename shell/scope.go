package shell

import (
	"maps"
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// scope is the state of one script being walked.
//
// The working directory is tracked: a static cd (or pushd, popd) applies to
// the statements that follow it; where branches of an if, a loop or "||"
// end in different directories, the directory is lost (only known at run
// time). Subshells, pipeline elements, command and process substitutions,
// background commands and nested scripts get a copy, so their cd does not
// leak out. A relative path in a lost directory is not proved harmless.
//
// The variables a script assigns are tracked the same way (see value.go):
// straight-line assignments replace a value, and where control flow joins
// (after an if, a loop that may run any number of times, "a && b") a
// variable holds what any of the ways in may have left.
type scope struct {
	src  string   // the script's text, to show dynamic words as written
	cwd  string   // working directory: absolute, "~"-relative, or "" when unknown
	lost bool     // a cd went somewhere only known at run time (cwd is "")
	dirs []string // pushd stack
	in   input    // the script's own standard input
	// vars are the variables the script assigned, shared with sub-scopes
	// until written.
	vars       map[string]value
	varsShared bool
	// params are the positional parameters, when known (set --, a
	// function's arguments, sh -c's words); nil when only known at run time.
	params []value
	// funcs are the functions the script defined, shared like vars. A name
	// maps to each body it may have (a nil body: it may also be undefined).
	funcs       map[string][]*syntax.Stmt
	funcsShared bool
	calls       int // function calls being walked, for recursion
	// opaque, when not "", says that code Airlock cannot see (source FILE)
	// may have set any variable: every one is then only known at run time.
	// unseen says the same of functions: any command may be one.
	opaque, unseen string
	// lenient: walking a function's body where it is defined, not where it
	// is called. What its arguments and the variables it reads hold is
	// only known at a call, which is walked again with them (a call the
	// script makes where Airlock sees it), so here they do not count as
	// unknown.
	lenient bool
	// xtrace: set -x is on, so the shell prints every command's words, as
	// expanded, before it runs it.
	xtrace bool
}

func (s *scope) sub() *scope {
	c := *s
	c.dirs = slices.Clip(s.dirs)
	c.varsShared = true
	c.funcsShared = true
	return &c
}

// join makes s what it is after control flow through any of the branches
// (each a sub-scope of s that walked one way) has come back together.
func (s *scope) join(branches ...*scope) {
	if len(branches) == 0 {
		return
	}
	first := branches[0]
	cwd, lost := first.cwd, first.lost
	for _, b := range branches[1:] {
		if b.cwd != cwd || b.lost != lost {
			cwd, lost = "", true
		}
	}
	s.cwd, s.lost = cwd, lost
	for _, b := range branches {
		s.xtrace = s.xtrace || b.xtrace
	}
	if lost {
		s.dirs = nil
	} else {
		s.dirs = first.dirs
	}
	s.opaque, s.unseen = "", ""
	for _, b := range branches {
		s.opaque = orElse(s.opaque, b.opaque)
		s.unseen = orElse(s.unseen, b.unseen)
	}
	s.joinVars(branches)
	s.joinParams(branches)
	s.joinFuncs(branches)
}

func (s *scope) joinVars(branches []*scope) {
	same := true
	for _, b := range branches {
		if !sameMap(b.vars, s.vars) {
			same = false
		}
	}
	if same {
		return
	}
	names := map[string]bool{}
	for _, b := range branches {
		for n := range b.vars {
			names[n] = true
		}
	}
	out := make(map[string]value, len(names))
	for n := range names {
		v := branches[0].lookup(n)
		for _, b := range branches[1:] {
			if w := b.lookup(n); !w.equal(v) {
				v = v.union(w)
			}
		}
		out[n] = v
	}
	s.vars, s.varsShared = out, false
}

// sameMap reports whether two variable maps are the same map (a branch
// that assigned nothing still shares its parent's).
func sameMap(a, b map[string]value) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 {
		return true
	}
	for k := range a {
		pa, pb := a[k], b[k]
		if !pa.equal(pb) {
			return false
		}
	}
	return true
}

func (s *scope) joinParams(branches []*scope) {
	p := branches[0].params
	for _, b := range branches[1:] {
		if !slices.EqualFunc(p, b.params, value.equal) || (p == nil) != (b.params == nil) {
			s.params = nil
			return
		}
	}
	s.params = p
}

func (s *scope) joinFuncs(branches []*scope) {
	names := map[string]bool{}
	for _, b := range branches {
		for n := range b.funcs {
			names[n] = true
		}
	}
	if len(names) == 0 {
		return
	}
	out := make(map[string][]*syntax.Stmt, len(names))
	for n := range names {
		var bodies []*syntax.Stmt
		for _, b := range branches {
			defs, ok := b.funcs[n]
			if !ok {
				defs = []*syntax.Stmt{nil}
			}
			for _, d := range defs {
				if !slices.Contains(bodies, d) {
					bodies = append(bodies, d)
				}
			}
		}
		out[n] = bodies
	}
	s.funcs, s.funcsShared = out, false
}

// define records a function's body.
func (s *scope) define(name string, body *syntax.Stmt) {
	if s.funcsShared || s.funcs == nil {
		s.funcs, s.funcsShared = maps.Clone(s.funcs), false
		if s.funcs == nil {
			s.funcs = map[string][]*syntax.Stmt{}
		}
	}
	s.funcs[name] = []*syntax.Stmt{body}
}

// forgetVars makes every variable only known at run time from here on:
// code Airlock cannot see (a sourced file) or a variable reference may
// have set any of them.
func (s *scope) forgetVars(why string) {
	s.opaque = why
	s.vars, s.varsShared = nil, false
	s.params = nil
}

// forget is forgetVars for code Airlock cannot see, which may also have
// defined any function.
func (s *scope) forget(why string) {
	s.forgetVars(why)
	s.unseen = why
}

// startDir keeps the caller's directory only when it is usable to resolve
// paths.
func startDir(cwd string) string {
	if path.IsAbs(cwd) || cwd == "~" || strings.HasPrefix(cwd, "~/") {
		return path.Clean(cwd)
	}
	return ""
}

// resolvePath makes p absolute against cwd when it can; a relative path in an
// unknown directory stays relative. "~user" is that user's home.
func resolvePath(cwd, p string) string {
	switch {
	case p == "":
		return ""
	case p[0] == '~' && len(p) > 1 && p[1] != '/':
		user, rest, _ := strings.Cut(p[1:], "/")
		home := "/home/" + user
		if user == "root" {
			home = "/root"
		}
		return path.Join(home, rest)
	case p[0] == '/' || p[0] == '~':
		return path.Clean(p)
	case cwd != "":
		return path.Join(cwd, p)
	}
	return path.Clean(p)
}

// input says where a command's standard input comes from: shells and
// interpreters run the code they read there.
type input struct {
	kind inputKind
	// text is, for inText, the content; for inFile, the file name; for
	// inPipe, what the previous command writes when Airlock knows it (echo,
	// printf), else "".
	text string
	// under, for inPipe, is the directory under which every line the
	// previous command writes names a file (git ls-files, find .): what
	// xargs or read makes of them.
	under string
	// secret: a here-document or here-string that expands a value which
	// may be a secret; from says whence.
	secret bool
	from   string
	// envs, passed with a statement's input to its command, are the
	// variables its prefix assignments set.
	envs []string
}

// names returns what a command reads from its input when Airlock knows it
// (a here-document, what echo writes into a pipe), for a program that
// takes it as a list of names or of words (cpio -o, tar -T -, xargs), which
// stay names whatever else the text holds.
func (in input) names() (string, bool) {
	return in.text, in.kind == inText || in.kind == inPipe && in.text != ""
}

type inputKind uint8

const (
	inUnknown inputKind = iota // inherited from whoever runs the script
	inPipe                     // the previous command of a pipeline (text: what it writes, when known)
	inFile                     // "< file"
	inText                     // a here-document or here-string whose content is known
	inDynamic                  // a here-document or here-string with expansions
	inNull                     // nothing: /dev/null, or what xargs gives its commands
)
