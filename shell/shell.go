// Package shell sees inside shell commands for the gate. A script is
// parsed once with a real bash parser (mvdan.cc/sh) and every command in
// the tree becomes an airlock.Command: what runs after ";", "&&", "|",
// inside "$( )", "<( )", here-documents, function bodies, conditions and
// assignment values; what wrappers such as sudo, env, xargs, find -exec and
// sh -c run; and every redirection that writes a file. Each command is
// classified by the table of programs Airlock knows (program.go, one file
// per family: builtin.go, wrapper.go, file.go, network.go, admin.go,
// dev.go, git.go, package.go, infra.go).
//
// The analysis is static and conservative: a word whose value is only known
// at run time is never assumed harmless where it decides what runs (a command
// name, an eval string, a shell's script). Anything that cannot be analysed
// (a parse error, a limit) is an error, never a partial result, so the gate
// can deny. The package classifies; it never decides an outcome.
package shell

import (
	"errors"
	"fmt"
	"sync"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/sensitive"
	"mvdan.cc/sh/v3/syntax"
)

// Limits. Reaching one is an error: the caller then resolves the action to
// the strictest outcome.
const (
	maxScriptBytes = 1 << 20 // 1 MiB
	maxShellDepth  = 16      // nesting: sh -c inside eval inside sudo ... heredoc interpreters
	maxCommands    = 4096    // effects found in one script
	// maxSteps bounds the statements walked for one script, counting those
	// a loop's body is walked again for (its values settling) and a
	// function's body at each call.
	maxSteps = 20_000
)

// maxSyntaxDepth bounds how deeply a script's constructs nest: brackets,
// and compound commands inside each other. The parser recurses once per
// level and dies of a stack overflow on a few hundred thousand levels, which
// fit in maxScriptBytes; no real script comes near this bound.
const maxSyntaxDepth = 500

var (
	errShellTooLong   = errors.New("script is longer than 1 MiB")
	errShellTooNested = fmt.Errorf("script nests constructs more than %d levels deep", maxSyntaxDepth)
	errShellTooDeep   = fmt.Errorf("commands are nested more than %d levels deep", maxShellDepth)
	errShellTooMany   = fmt.Errorf("script runs more than %d commands", maxCommands)
	errShellTooLarge  = fmt.Errorf("script takes more than %d steps to analyse (loops and calls nested too deeply)", maxSteps)
)

// Analyser is the catalog.ShellAnalyser of this package. Its zero value is
// ready to use, and it is safe for concurrent use.
type Analyser struct{}

// AnalyseScript parses script as bash and returns every command it runs, in
// source order.
func (Analyser) AnalyseScript(script, cwd string, paths *sensitive.Catalogue) ([]airlock.Command, error) {
	return analyseShellWith(paths, script, cwd)
}

// AnalyseArgv returns the commands of a program run without a shell.
func (Analyser) AnalyseArgv(argv []string, cwd string, paths *sensitive.Catalogue) ([]airlock.Command, error) {
	return analyseArgvWith(paths, argv, cwd)
}

// analyseShell parses script as bash and returns every effect it finds, in
// source order. cwd (may be "") resolves relative paths. A non-nil error
// means the script could not be fully analysed (parse error, a limit
// reached); its message is shown to people.
func analyseShell(script, cwd string) ([]airlock.Command, error) {
	return analyseShellWith(nil, script, cwd)
}

func analyseShellWith(paths *sensitive.Catalogue, script, cwd string) ([]airlock.Command, error) {
	a := newWalker(paths)
	defer a.release()
	s := &scope{cwd: startDir(cwd)}
	a.start = s.cwd
	if err := a.walkScript(s, script); err != nil {
		return nil, err
	}
	return a.cmds, nil
}

// analyseArgv classifies a program run without a shell (exec-style tools:
// argv[0] is the program, no shell syntax is interpreted in the words).
// Wrappers (sudo, env, sh -c ...) still apply.
func analyseArgv(argv []string, cwd string) ([]airlock.Command, error) {
	return analyseArgvWith(nil, argv, cwd)
}

func analyseArgvWith(paths *sensitive.Catalogue, argv []string, cwd string) ([]airlock.Command, error) {
	if len(argv) == 0 {
		return nil, errors.New("empty argument list")
	}
	size := 0
	for _, w := range argv {
		size += len(w) + 1
	}
	if size > maxScriptBytes {
		return nil, errShellTooLong
	}
	a := newWalker(paths)
	defer a.release()
	s := &scope{cwd: startDir(cwd)}
	a.start = s.cwd
	words := make([]arg, len(argv))
	for i, w := range argv {
		words[i] = literal(w)
	}
	if err := a.runCall(s, &call{words: words, cwd: s.cwd, start: a.start, plainDir: &a.plainDir, cat: a.cat}, position{}); err != nil {
		return nil, err
	}
	return a.cmds, nil
}

// walker walks one script and its nested scripts.
type walker struct {
	parser *syntax.Parser
	cmds   []airlock.Command
	depth  int32 // current nesting of wrappers and nested scripts
	level  int32 // current nesting of compound commands, for maxSyntaxDepth
	// fifos are the named pipes the script made (mkfifo): a command whose
	// input is one reads what another command writes, as from a pipe
	// (sh -i < f | nc host port > f is a remote shell).
	fifos    []string
	plainDir string // see call.plainDir
	start    string // the action's working directory (call.start)
	steps    int    // statements walked, for maxSteps
	// cat is the catalogue of sensitive paths the policy judges by (nil:
	// the built-in one).
	cat *sensitive.Catalogue
	// evaluating are the strings being evaluated as arithmetic, so that
	// one that names itself is not followed forever.
	evaluating map[string]bool
}

// Parsers are reused: building one allocates more than parsing a short
// command, and every shell action is analysed.
var parsers = sync.Pool{New: func() any { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }}

func newWalker(paths *sensitive.Catalogue) *walker {
	return &walker{parser: parsers.Get().(*syntax.Parser), cat: paths}
}

func (a *walker) release() {
	parsers.Put(a.parser)
	a.parser = nil
}
