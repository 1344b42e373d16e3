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
// The working directory is tracked approximately: a static cd (or pushd,
// popd) applies to the statements that follow it in source order, whatever
// the control flow (an "if" branch that may not run, a loop, "||"). Subshells,
// pipeline elements, command and process substitutions, background commands,
// function bodies and nested scripts get a copy, so their cd does not leak
// out. A dynamic cd makes the directory unknown, and a relative path in an
// unknown directory is not treated as a system path.
type scope struct {
	src  string   // the script's text, to show dynamic words as written
	cwd  string   // working directory: absolute, "~"-relative, or "" when unknown
	dirs []string // pushd stack
	in   input    // the script's own standard input
	// vars holds the static values of variables that arithmetic could run
	// code from (see evalVars), shared with sub-scopes until written.
	vars       map[string]string
	varsShared bool
}

func (s *scope) sub() *scope {
	c := *s
	c.dirs = slices.Clip(s.dirs)
	c.varsShared = true
	return &c
}

// setVar records an assignment. Only values that arithmetic evaluation
// could turn into code are kept: an array reference with an expansion
// ("a[$(cmd)]") or another variable's name, which arithmetic follows.
func (s *scope) setVar(name, value string, static bool) {
	keep := static && (syntax.ValidName(value) || strings.ContainsRune(value, '[') && strings.ContainsAny(value, "$`"))
	if _, had := s.vars[name]; !had && !keep {
		return
	}
	if s.varsShared || s.vars == nil {
		s.vars, s.varsShared = maps.Clone(s.vars), false
		if s.vars == nil {
			s.vars = map[string]string{}
		}
	}
	if keep {
		s.vars[name] = value
	} else {
		delete(s.vars, name)
	}
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
