package catalog

import (
	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/sensitive"
)

// A ShellAnalyser finds every command that a shell script would run, or
// that a program run without a shell would run through its wrappers (sudo,
// env, sh -c ...), so that the gate decides each one (docs/POLICY.md, Classification). Package
// shell implements it over a real bash parser.
//
// An analyser never returns a partial list: when it cannot analyse a script
// completely (a syntax error, a limit reached) it returns an error, and the
// gate decides the strictest outcome. A gate without an analyser cannot see
// inside any shell command, so it denies them all.
type ShellAnalyser interface {
	// AnalyseScript returns the commands of a bash script, in source order.
	// cwd is the directory it runs in: absolute, "~"-relative, or "" when
	// unknown.
	//
	// paths are the sensitive paths to judge reads and writes by: the
	// built-in catalogue and what the policy stack adds (sensitive_paths);
	// nil is the built-in catalogue.
	AnalyseScript(script, cwd string, paths *sensitive.Catalogue) ([]airlock.Command, error)
	// AnalyseArgv returns the commands of a program run without a shell:
	// argv[0] is the program, and no shell syntax is interpreted in the
	// words.
	AnalyseArgv(argv []string, cwd string, paths *sensitive.Catalogue) ([]airlock.Command, error)
}
