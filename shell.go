package airlock

import (
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Shell analysis: a script is parsed once with a real bash parser and every
// command in the tree becomes a Command: what runs after ";", "&&", "|",
// inside "$( )", "<( )", here-documents, function bodies, conditions and
// assignment values; what wrappers such as sudo, env, xargs, find -exec and
// sh -c run; and every redirection that writes a file. The table of programs
// Airlock knows is in shellcmd.go.
//
// The analysis is static and conservative: a word whose value is only known
// at run time is never assumed harmless where it decides what runs (a command
// name, an eval string, a shell's script). Anything that cannot be analysed
// (a parse error, a limit) is an error, never a partial result, so the caller
// can deny.

// Limits. Reaching one is an error: the caller then resolves the action to
// the strictest outcome.
const (
	maxScriptBytes = 1 << 20 // 1 MiB
	maxShellDepth  = 16      // nesting: sh -c inside eval inside sudo ... heredoc interpreters
	maxCommands    = 4096    // effects found in one script
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
)

// analyseShell parses script as bash and returns every effect it finds, in
// source order. cwd (may be "") resolves relative paths. A non-nil error
// means the script could not be fully analysed (parse error, a limit
// reached); its message is shown to people.
func analyseShell(script, cwd string) ([]Command, error) {
	a := newShellAnalyser()
	defer a.release()
	s := &shScope{cwd: shStartDir(cwd)}
	if err := a.walkScript(s, script); err != nil {
		return nil, err
	}
	return a.cmds, nil
}

// analyseArgv classifies a program run without a shell (exec-style tools:
// argv[0] is the program, no shell syntax is interpreted in the words).
// Wrappers (sudo, env, sh -c ...) still apply.
func analyseArgv(argv []string, cwd string) ([]Command, error) {
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
	a := newShellAnalyser()
	defer a.release()
	s := &shScope{cwd: shStartDir(cwd)}
	words := make([]shArg, len(argv))
	for i, w := range argv {
		words[i] = shLiteral(w)
	}
	if err := a.runCall(s, &shCall{words: words, cwd: s.cwd}, shPos{}); err != nil {
		return nil, err
	}
	return a.cmds, nil
}

// shellAnalyser walks one script and its nested scripts.
type shellAnalyser struct {
	parser *syntax.Parser
	cmds   []Command
	depth  int // current nesting of wrappers and nested scripts
	level  int // current nesting of compound commands, for maxSyntaxDepth
}

// Parsers are reused: building one allocates more than parsing a short
// command, and every shell action is analysed.
var shParsers = sync.Pool{New: func() any { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }}

func newShellAnalyser() *shellAnalyser {
	return &shellAnalyser{parser: shParsers.Get().(*syntax.Parser)}
}

func (a *shellAnalyser) release() {
	shParsers.Put(a.parser)
	a.parser = nil
}

// shScope is the state of one script being walked.
//
// The working directory is tracked approximately: a static cd (or pushd,
// popd) applies to the statements that follow it in source order, whatever
// the control flow (an "if" branch that may not run, a loop, "||"). Subshells,
// pipeline elements, command and process substitutions, background commands,
// function bodies and nested scripts get a copy, so their cd does not leak
// out. A dynamic cd makes the directory unknown, and a relative path in an
// unknown directory is not treated as a system path.
type shScope struct {
	src  string   // the script's text, to show dynamic words as written
	cwd  string   // working directory: absolute, "~"-relative, or "" when unknown
	dirs []string // pushd stack
	in   shInput  // the script's own standard input
	// vars holds the static values of variables that arithmetic could run
	// code from (see evalVars), shared with sub-scopes until written.
	vars       map[string]string
	varsShared bool
}

func (s *shScope) sub() *shScope {
	c := *s
	c.dirs = slices.Clip(s.dirs)
	c.varsShared = true
	return &c
}

// setVar records an assignment. Only values that arithmetic evaluation
// could turn into code are kept: an array reference with an expansion
// ("a[$(cmd)]") or another variable's name, which arithmetic follows.
func (s *shScope) setVar(name, value string, static bool) {
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

// shStartDir keeps the caller's directory only when it is usable to resolve
// paths.
func shStartDir(cwd string) string {
	if path.IsAbs(cwd) || cwd == "~" || strings.HasPrefix(cwd, "~/") {
		return path.Clean(cwd)
	}
	return ""
}

// shResolve makes p absolute against cwd when it can; a relative path in an
// unknown directory stays relative. "~user" is that user's home.
func shResolve(cwd, p string) string {
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

// shInput says where a command's standard input comes from: shells and
// interpreters run the code they read there.
type shInput struct {
	kind shInputKind
	text string // shInText: the content; shInFile: the file name
}

type shInputKind uint8

const (
	shInUnknown shInputKind = iota // inherited from whoever runs the script
	shInPipe                       // the previous command of a pipeline
	shInFile                       // "< file"
	shInText                       // a here-document or here-string whose content is known
	shInDynamic                    // a here-document or here-string with expansions
	shInNull                       // nothing: /dev/null, or what xargs gives its commands
)

type shPos struct{ line, col int }

func shPosOf(p syntax.Pos) shPos { return shPos{int(p.Line()), int(p.Col())} }

// shParseError is a syntax error in a script, positioned in that script.
type shParseError struct {
	line, col int
	msg       string
}

func (e *shParseError) Error() string {
	return fmt.Sprintf("line %d:%d: %s", e.line, e.col, e.msg)
}

// shNestedError is a syntax error in a nested script (sh -c, eval, ssh ...),
// positioned at the outermost command that runs it.
type shNestedError struct {
	pos shPos
	via []string
	err *shParseError
}

func (e *shNestedError) Error() string {
	var b strings.Builder
	if e.pos.line > 0 {
		fmt.Fprintf(&b, "line %d:%d: ", e.pos.line, e.pos.col)
	}
	b.WriteString("in ")
	b.WriteString(strings.Join(e.via, " > "))
	b.WriteString(": ")
	b.WriteString(e.err.Error())
	return b.String()
}

// parse parses src as bash.
func (a *shellAnalyser) parse(src string) (*syntax.File, error) {
	if len(src) > maxScriptBytes {
		return nil, errShellTooLong
	}
	if shBracketDepth(src) > maxSyntaxDepth {
		return nil, errShellTooNested
	}
	f, err := a.parser.Parse(strings.NewReader(src), "")
	if err == nil {
		return f, nil
	}
	var pe syntax.ParseError
	if errors.As(err, &pe) {
		return nil, &shParseError{int(pe.Pos.Line()), int(pe.Pos.Col()), pe.Text}
	}
	var le syntax.LangError
	if errors.As(err, &le) {
		msg := le.Error()
		if _, after, ok := strings.Cut(msg, ": "); ok {
			msg = after
		}
		return nil, &shParseError{int(le.Pos.Line()), int(le.Pos.Col()), msg}
	}
	return nil, err
}

// shBracketDepth is the deepest nesting of brackets in src, counted on the
// raw text before parsing (quotes are not understood, which only makes the
// limit stricter).
func shBracketDepth(src string) int {
	depth, deepest := 0, 0
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '(', '{', '[':
			depth++
			deepest = max(deepest, depth)
		case ')', '}', ']':
			depth = max(depth-1, 0)
		}
	}
	return deepest
}

// walkScript parses src and walks it in scope s.
func (a *shellAnalyser) walkScript(s *shScope, src string) error {
	f, err := a.parse(src)
	if err != nil {
		return err
	}
	s.src = src
	return a.walkStmts(s, f.Stmts, s.in)
}

// add records one effect.
func (a *shellAnalyser) add(c Command) error {
	if len(a.cmds) >= maxCommands {
		return errShellTooMany
	}
	a.cmds = append(a.cmds, c)
	return nil
}

// tag adds a wrapper to the Via of the commands recorded since start.
func (a *shellAnalyser) tag(start int, via string) {
	for i := start; i < len(a.cmds); i++ {
		a.cmds[i].Via = append([]string{via}, a.cmds[i].Via...)
	}
}

func (a *shellAnalyser) walkStmts(s *shScope, stmts []*syntax.Stmt, in shInput) error {
	for _, st := range stmts {
		if err := a.walkStmt(s, st, in); err != nil {
			return err
		}
	}
	return nil
}

func (a *shellAnalyser) walkStmt(s *shScope, st *syntax.Stmt, in shInput) error {
	a.level++
	defer func() { a.level-- }()
	if a.level > maxSyntaxDepth {
		return errShellTooNested
	}
	if st.Background || st.Coprocess || st.Disown {
		s = s.sub() // runs in a subshell: its cd does not apply here
	}
	if st.Cmd != nil {
		if err := a.walkCommand(s, st.Cmd, s.stdinOf(st.Redirs, in)); err != nil {
			return err
		}
	}
	return a.walkRedirects(s, st.Redirs)
}

func (a *shellAnalyser) walkCommand(s *shScope, cmd syntax.Command, in shInput) error {
	switch c := cmd.(type) {
	case *syntax.CallExpr:
		return a.walkCall(s, c, in)
	case *syntax.BinaryCmd:
		return a.walkBinary(s, c, in)
	case *syntax.Block:
		return a.walkStmts(s, c.Stmts, in)
	case *syntax.Subshell:
		return a.walkStmts(s.sub(), c.Stmts, in)
	case *syntax.IfClause:
		for cl := c; cl != nil; cl = cl.Else {
			if err := a.walkStmts(s, cl.Cond, in); err != nil {
				return err
			}
			if err := a.walkStmts(s, cl.Then, in); err != nil {
				return err
			}
		}
		return nil
	case *syntax.WhileClause:
		if err := a.walkStmts(s, c.Cond, in); err != nil {
			return err
		}
		return a.walkStmts(s, c.Do, in)
	case *syntax.ForClause:
		switch l := c.Loop.(type) {
		case *syntax.WordIter:
			for _, w := range l.Items {
				if err := a.walkWord(s, w); err != nil {
					return err
				}
			}
		case *syntax.CStyleLoop:
			for _, x := range []syntax.ArithmExpr{l.Init, l.Cond, l.Post} {
				if err := a.evalVars(s, x); err != nil {
					return err
				}
				if err := a.walkNode(s, x); err != nil {
					return err
				}
			}
		}
		return a.walkStmts(s, c.Do, in)
	case *syntax.CaseClause:
		if err := a.walkWord(s, c.Word); err != nil {
			return err
		}
		for _, item := range c.Items {
			for _, p := range item.Patterns {
				if err := a.walkWord(s, p); err != nil {
					return err
				}
			}
			if err := a.walkStmts(s, item.Stmts, in); err != nil {
				return err
			}
		}
		return nil
	case *syntax.FuncDecl:
		// A body counts even if the function is never called: the script
		// may call it in ways Airlock does not follow.
		if c.Body == nil {
			return nil
		}
		return a.walkStmt(s.sub(), c.Body, shInput{})
	case *syntax.ArithmCmd:
		if err := a.add(s.inert(c, "((", "evaluates arithmetic")); err != nil {
			return err
		}
		if err := a.evalVars(s, c.X); err != nil {
			return err
		}
		return a.walkNode(s, c.X)
	case *syntax.TestClause:
		if err := a.add(s.inert(c, "[[", "tests a condition")); err != nil {
			return err
		}
		if err := a.testSinks(s, c.X); err != nil {
			return err
		}
		return a.walkNode(s, c.X)
	case *syntax.LetClause:
		if err := a.add(s.inert(c, "let", "evaluates arithmetic")); err != nil {
			return err
		}
		for _, x := range c.Exprs {
			if err := a.evalVars(s, x); err != nil {
				return err
			}
			if err := a.walkNode(s, x); err != nil {
				return err
			}
		}
		return nil
	case *syntax.DeclClause:
		return a.walkDecl(s, c)
	case *syntax.TimeClause:
		if c.Stmt == nil {
			return nil
		}
		start := len(a.cmds)
		if err := a.walkStmt(s, c.Stmt, in); err != nil {
			return err
		}
		a.tag(start, "time")
		return nil
	case *syntax.CoprocClause:
		start := len(a.cmds)
		if err := a.walkStmt(s.sub(), c.Stmt, in); err != nil {
			return err
		}
		a.tag(start, "coproc")
		return nil
	}
	pos := shPosOf(cmd.Pos())
	return &shParseError{pos.line, pos.col, fmt.Sprintf("unsupported shell construct %T", cmd)}
}

// walkBinary walks "a && b", "a || b" and pipelines. Long chains nest on
// the left (((a && b) && c) && d); they are walked in a loop rather than by
// recursion, so that a chain of any length costs no stack.
func (a *shellAnalyser) walkBinary(s *shScope, c *syntax.BinaryCmd, in shInput) error {
	chain := []*syntax.BinaryCmd{c}
	for {
		x := chain[len(chain)-1].X
		inner, ok := x.Cmd.(*syntax.BinaryCmd)
		if !ok || len(x.Redirs) > 0 || x.Background || x.Coprocess || x.Disown {
			break
		}
		chain = append(chain, inner)
	}
	// scopes[i] is where chain[i] runs as a whole: every element of a
	// pipeline runs in a subshell, so below a pipe the scope is a copy.
	scopes := make([]*shScope, len(chain)+1)
	scopes[0] = s
	for i, b := range chain {
		scopes[i+1] = scopes[i]
		if shPipe(b) {
			scopes[i+1] = scopes[i].sub()
		}
	}
	if err := a.walkStmt(scopes[len(chain)], chain[len(chain)-1].X, in); err != nil {
		return err
	}
	for i := len(chain) - 1; i >= 0; i-- {
		ys, yin := scopes[i], in
		if shPipe(chain[i]) {
			ys, yin = scopes[i].sub(), shInput{kind: shInPipe}
		}
		if err := a.walkStmt(ys, chain[i].Y, yin); err != nil {
			return err
		}
	}
	return nil
}

func shPipe(b *syntax.BinaryCmd) bool { return b.Op == syntax.Pipe || b.Op == syntax.PipeAll }

// inert is the entry of a shell construct that changes nothing outside the
// shell ("[[ ]]", "(( ))", let).
func (s *shScope) inert(n syntax.Node, name, reason string) Command {
	return shCommand(s.source(n), name, shInert(reason), shPosOf(n.Pos()))
}

func shCommand(text, name string, e shEffect, p shPos) Command {
	return Command{
		Text: text, Name: name, Class: e.class, Capability: e.cap, Tier: e.tier, Reason: e.reason,
		Line: p.line, Col: p.col, Generic: e.generic, Inert: e.inert,
	}
}

// source returns n as written in the script being walked.
func (s *shScope) source(n syntax.Node) string {
	from, to := int(n.Pos().Offset()), int(n.End().Offset())
	to = min(to, len(s.src))
	if from >= to {
		return ""
	}
	return s.src[from:to]
}

// walkCall classifies a simple command: its prefix assignments, the program
// it runs, then the substitutions in its words.
func (a *shellAnalyser) walkCall(s *shScope, ce *syntax.CallExpr, in shInput) error {
	for _, as := range ce.Assigns {
		if err := a.walkAssign(s, as, len(ce.Args) == 0); err != nil {
			return err
		}
	}
	if len(ce.Args) == 0 {
		return nil // a bare assignment
	}
	words := make([]shArg, 0, len(ce.Args))
	for _, w := range ce.Args {
		words = s.appendWord(words, w)
	}
	c := &shCall{words: words, in: in, cwd: s.cwd}
	if err := a.runCall(s, c, shPosOf(ce.Pos())); err != nil {
		return err
	}
	for _, w := range ce.Args {
		if err := a.walkWord(s, w); err != nil {
			return err
		}
	}
	return nil
}

// runCall classifies one command given as words, then what it runs.
func (a *shellAnalyser) runCall(s *shScope, c *shCall, pos shPos) error {
	head := c.words[0]
	c.args = c.words[1:]
	if !head.static || head.glob || head.subst {
		e := shUnknown("runs a command whose name is only known at run time")
		return a.add(shCommand(c.text(), head.text, e, pos))
	}
	name, local := shProgramName(head.val)
	c.name = name
	var e shEffect
	switch {
	case local:
		e = shExec("runs " + head.text + ", a program Airlock does not know")
		e.generic = true
		c.raiseReads(&e, c.operands()...)
	case name == "cd" || name == "pushd" || name == "popd":
		s.chdir(c)
		e = shInert("changes the working directory")
	default:
		if rule := shellPrograms[shBaseName(name)]; rule != nil {
			e = rule(c)
		} else {
			e = shExec("runs program " + head.text + ", which Airlock does not know")
			e.generic = true
			c.raiseReads(&e, c.operands()...)
		}
	}
	if !e.none {
		if err := a.add(shCommand(c.text(), name, e, pos)); err != nil {
			return err
		}
	}
	for i := range c.subs {
		if err := a.nested(s, &c.subs[i], pos); err != nil {
			return err
		}
	}
	if name == "source" || name == "." {
		s.cwd = "" // the sourced script may cd anywhere
	}
	return nil
}

// shProgramName resolves the program a command word runs: /usr/bin/git is
// git; ./deploy.sh or scripts/x are local programs.
func shProgramName(word string) (name string, local bool) {
	if !strings.Contains(word, "/") {
		return word, false
	}
	dir, base := path.Split(word)
	if path.IsAbs(word) && base != "" {
		switch path.Base(path.Clean(dir)) {
		case "bin", "sbin":
			return base, false
		}
	}
	return word, true
}

// shBaseName maps versioned interpreter names to their table entry:
// python3.12 → python, pip3 → pip.
func shBaseName(name string) string {
	if strings.HasPrefix(name, "mkfs.") || strings.HasPrefix(name, "fsck.") {
		return name[:4]
	}
	trimmed := strings.TrimRight(name, "0123456789.-")
	if trimmed == name || trimmed == "" {
		return name
	}
	switch trimmed {
	case "python", "pip", "pypy", "php", "ruby", "perl", "lua", "node", "java", "gcc", "g++", "clang", "clang++", "idle", "pydoc", "jshell", "luajit":
		return trimmed
	}
	return name
}

// chdir tracks cd, pushd and popd.
func (s *shScope) chdir(c *shCall) {
	ops := c.operands()
	switch c.name {
	case "popd":
		if n := len(s.dirs); n > 0 && len(ops) == 0 {
			s.cwd, s.dirs = s.dirs[n-1], s.dirs[:n-1]
		} else {
			s.cwd = ""
		}
		return
	case "pushd":
		if len(ops) == 0 || strings.HasPrefix(ops[0].val, "+") {
			s.cwd = "" // rotates the stack
			return
		}
		s.dirs = append(s.dirs, s.cwd)
	}
	if len(ops) == 0 {
		s.cwd = "~"
		return
	}
	v, ok := ops[0].pathValue()
	if !ok || ops[0].glob || v == "-" {
		s.cwd = ""
		return
	}
	if v[0] != '/' && v[0] != '~' && s.cwd == "" {
		return // relative to an unknown directory: still unknown
	}
	s.cwd = shResolve(s.cwd, v)
}

// shNested is something a command runs: another command (sudo rm), a script
// (sh -c, eval, ssh), or words Airlock cannot analyse.
type shNested struct {
	via     string   // the wrapper, as shown in Command.Via
	argv    []shArg  // a command to classify...
	script  string   // ...or a script to parse...
	unknown string   // ...or the reason for an unknown entry
	text    string   // the unknown entry's Text
	in      shInput  // the inner command's or script's standard input
	cwd     string   // its working directory, when setCwd
	setCwd  bool     //
	floor   shEffect // inner effects are raised to at least this tier (0: none)
	lenient bool     // a script that does not parse is an unknown entry, not an error
	xargs   bool     // operands are appended at run time
}

// nested analyses what a command runs, one level deeper, and marks the
// effects found: the wrapper in Via, the outer command's position, the
// wrapper's floor.
func (a *shellAnalyser) nested(s *shScope, n *shNested, pos shPos) error {
	if a.depth >= maxShellDepth {
		return errShellTooDeep
	}
	a.depth++
	defer func() { a.depth-- }()
	start := len(a.cmds)
	inner := s.sub()
	inner.in = n.in
	if n.setCwd {
		inner.cwd = n.cwd
	}
	var err error
	switch {
	case n.unknown != "":
		err = a.add(shCommand(n.text, "", shUnknown(n.unknown), pos))
	case n.argv != nil:
		if len(n.argv) == 0 {
			return nil
		}
		err = a.runCall(inner, &shCall{words: n.argv, in: n.in, cwd: inner.cwd, xargs: n.xargs}, pos)
	default:
		err = a.walkScript(inner, n.script)
		var pe *shParseError
		if n.lenient && errors.As(err, &pe) {
			a.cmds = a.cmds[:start]
			err = a.add(shCommand(n.script, "", shUnknown("runs a command Airlock cannot parse"), pos))
		}
	}
	if err != nil {
		return shWrapNested(err, n.via, pos)
	}
	for i := start; i < len(a.cmds); i++ {
		c := &a.cmds[i]
		c.Via = append([]string{n.via}, c.Via...)
		c.Line, c.Col = pos.line, pos.col
		shApplyFloor(c, n.floor)
	}
	return nil
}

// shWrapNested positions a syntax error of a nested script at the command
// that runs it; limit errors pass unchanged.
func shWrapNested(err error, via string, pos shPos) error {
	var ne *shNestedError
	if errors.As(err, &ne) {
		ne.via = append([]string{via}, ne.via...)
		ne.pos = pos
		return ne
	}
	var pe *shParseError
	if errors.As(err, &pe) {
		return &shNestedError{pos: pos, via: []string{via}, err: pe}
	}
	return err
}

// shApplyFloor raises c to the wrapper's floor: sudo makes anything it runs
// privileged.
func shApplyFloor(c *Command, f shEffect) {
	if f.tier == 0 || c.Tier >= f.tier {
		return
	}
	c.Class, c.Capability, c.Tier = f.class, f.cap, f.tier
	c.Reason = f.reason + ": " + c.Reason
	c.Generic, c.Inert = false, false
}

// walkAssign handles an assignment, bare or as a command prefix (which
// only sets the command's environment).
func (a *shellAnalyser) walkAssign(s *shScope, as *syntax.Assign, bare bool) error {
	if as.Name != nil && !as.Naked {
		if err := a.assignEffect(s, as.Name.Value, as, as.Value); err != nil {
			return err
		}
		if bare {
			v, static, _ := shWordValue(as.Value)
			s.setVar(as.Name.Value, v, static && as.Index == nil && as.Array == nil && !as.Append)
		}
	}
	return a.walkNode(s, as)
}

// assignEffect records what setting variable name does, when it matters:
// PATH, LD_PRELOAD and the like change what later commands run; PAGER and
// EDITOR hold commands that programs run.
func (a *shellAnalyser) assignEffect(s *shScope, name string, n syntax.Node, value *syntax.Word) error {
	pos := shPosOf(n.Pos())
	if reason, ok := shSensitiveVar(name); ok {
		return a.add(shCommand(s.source(n), "", shEnv(reason), pos))
	}
	if !shCommandVar(name) || value == nil {
		return nil
	}
	v, static, _ := shWordValue(value)
	if !static {
		return a.add(shCommand(s.source(n), "", shUnknown("sets "+name+" to a command only known at run time"), pos))
	}
	return a.nested(s, &shNested{via: name, script: v}, pos)
}

// walkDecl handles export, declare, local, readonly, typeset.
func (a *shellAnalyser) walkDecl(s *shScope, d *syntax.DeclClause) error {
	pos := shPosOf(d.Pos())
	variant := d.Variant.Value
	nameref, integer := variant == "nameref", false
	reason := ""
	var cmdVars []*syntax.Assign
	for _, as := range d.Args {
		if as.Name == nil {
			// An option (-x), or a word: "NAME=value" quoted, or dynamic.
			v, static, _ := shWordValue(as.Value)
			switch {
			case !static:
				reason = "sets a variable whose name is only known at run time"
			case strings.HasPrefix(v, "-") || strings.HasPrefix(v, "+"):
				nameref = nameref || (v[0] == '-' && strings.ContainsRune(v, 'n'))
				integer = integer || (v[0] == '-' && strings.ContainsRune(v, 'i'))
			default:
				if name, _, ok := strings.Cut(v, "="); ok {
					if r, bad := shSensitiveVar(name); bad {
						reason = r
					}
				}
			}
			continue
		}
		name := as.Name.Value
		v, static, _ := shWordValue(as.Value)
		s.setVar(name, v, static && as.Value != nil && as.Index == nil && as.Array == nil)
		if integer && as.Value != nil {
			// declare -i evaluates the value as arithmetic when assigning.
			if err := a.evalText(s, v, static, shPosOf(as.Pos())); err != nil {
				return err
			}
		}
		if nameref && as.Value != nil {
			target, static, _ := shWordValue(as.Value)
			if _, bad := shSensitiveVar(target); bad || !static {
				reason = "makes " + name + " refer to another variable, which can change what later commands run"
			}
		}
		if r, bad := shSensitiveVar(name); bad && !as.Naked {
			reason = r
		} else if shCommandVar(name) && as.Value != nil {
			cmdVars = append(cmdVars, as)
		}
	}
	e := shInert("sets shell variables")
	if reason != "" {
		e = shEnv(reason)
	}
	if err := a.add(shCommand(s.source(d), variant, e, pos)); err != nil {
		return err
	}
	for _, as := range cmdVars {
		if err := a.assignEffect(s, as.Name.Value, as, as.Value); err != nil {
			return err
		}
	}
	for _, as := range d.Args {
		if err := a.walkNode(s, as); err != nil {
			return err
		}
	}
	return nil
}

// walkWord walks the substitutions inside a word.
func (a *shellAnalyser) walkWord(s *shScope, w *syntax.Word) error {
	if w == nil || shPlainWord(w) {
		return nil
	}
	return a.walkNode(s, w)
}

// shPlainWord reports whether w has no expansions at all, to skip walking it.
func shPlainWord(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit, *syntax.SglQuoted:
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if _, ok := q.(*syntax.Lit); !ok {
					return false
				}
			}
		default:
			return false
		}
	}
	return true
}

// walkNode finds what runs inside words, arithmetic and tests: command and
// process substitutions, and assignments hidden in ${X:=…} or (( X = … )).
// It relies on syntax.Walk so that no kind of node is missed.
func (a *shellAnalyser) walkNode(s *shScope, n syntax.Node) error {
	if n == nil {
		return nil
	}
	var err error
	syntax.Walk(n, func(n syntax.Node) bool {
		if err != nil || n == nil {
			return false
		}
		switch n := n.(type) {
		case *syntax.CmdSubst:
			err = a.walkStmts(s.sub(), n.Stmts, s.in)
			return false
		case *syntax.ProcSubst:
			in := s.in
			if n.Op == syntax.CmdOut {
				in = shInput{kind: shInPipe} // >(cmd) reads what the outer command writes
			}
			err = a.walkStmts(s.sub(), n.Stmts, in)
			return false
		case *syntax.ArithmExp:
			err = a.evalVars(s, n.X)
		case *syntax.ParamExp:
			if n.Param != nil && n.Exp != nil && (n.Exp.Op == syntax.AssignUnset || n.Exp.Op == syntax.AssignUnsetOrNull) {
				err = a.assignEffect(s, n.Param.Value, n, nil)
			}
			if err == nil && (n.Index != nil || n.Excl) {
				// ${a[i]} evaluates i; ${!ref} evaluates what ref names.
				err = a.evalVars(s, n)
			}
		case *syntax.BinaryArithm:
			if shArithAssign(n.Op) {
				if name := shArithName(n.X); name != "" {
					err = a.assignEffect(s, name, n, nil)
				}
			}
		case *syntax.UnaryArithm:
			if n.Op == syntax.Inc || n.Op == syntax.Dec {
				if name := shArithName(n.X); name != "" {
					err = a.assignEffect(s, name, n, nil)
				}
			}
		}
		return true
	})
	return err
}

// Bash evaluates arithmetic recursively: a variable's value is itself an
// arithmetic expression, and an array subscript in it is expanded, so
// x='a[$(rm -rf /)]'; echo $((x)) runs rm although no substitution appears
// unquoted. evalVars follows the variables an arithmetic expression (or
// subscript, or [[ -eq ]] operand) names to the static values the script
// gave them, and analyses the code they hide. Values from outside the script
// (the environment, input, command output) are not followed: like running a
// script file, what they run is not visible here.
func (a *shellAnalyser) evalVars(s *shScope, n syntax.Node) error {
	if len(s.vars) == 0 || n == nil {
		return nil
	}
	var names []string
	syntax.Walk(n, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Word:
			if name, _, _ := strings.Cut(n.Lit(), "["); syntax.ValidName(name) {
				names = append(names, name)
			}
		case *syntax.ParamExp:
			if n.Param != nil {
				names = append(names, n.Param.Value)
			}
		case *syntax.CmdSubst, *syntax.ProcSubst:
			return false
		}
		return true
	})
	for _, name := range names {
		value, ok := s.vars[name]
		for hops := 0; ok && syntax.ValidName(value) && hops < 8; hops++ {
			value, ok = s.vars[value]
		}
		if ok {
			if err := a.evalText(s, value, true, shPosOf(n.Pos())); err != nil {
				return err
			}
		}
	}
	return nil
}

// evalText analyses a value that arithmetic evaluates, when it may hide a
// command substitution in an array subscript.
func (a *shellAnalyser) evalText(s *shScope, value string, static bool, pos shPos) error {
	if !static || !strings.ContainsRune(value, '[') || !strings.ContainsAny(value, "$`") {
		return nil
	}
	// Parsed as the argument of ":", the value's substitutions are walked.
	return a.nested(s, &shNested{via: "arithmetic", script: ": " + value, lenient: true}, pos)
}

// testSinks finds the arithmetic comparisons of a [[ ]] test (-eq, -lt
// ...), whose operands are evaluated as arithmetic.
func (a *shellAnalyser) testSinks(s *shScope, x syntax.TestExpr) error {
	if len(s.vars) == 0 {
		return nil
	}
	var err error
	syntax.Walk(x, func(n syntax.Node) bool {
		if b, ok := n.(*syntax.BinaryTest); ok && err == nil {
			switch b.Op {
			case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
				if err = a.evalVars(s, b.X); err == nil {
					err = a.evalVars(s, b.Y)
				}
			}
		}
		return err == nil
	})
	return err
}

func shArithAssign(op syntax.BinAritOperator) bool {
	switch op {
	case syntax.Assgn, syntax.AddAssgn, syntax.SubAssgn, syntax.MulAssgn, syntax.QuoAssgn,
		syntax.RemAssgn, syntax.AndAssgn, syntax.OrAssgn, syntax.XorAssgn, syntax.ShlAssgn,
		syntax.ShrAssgn, syntax.AndBoolAssgn, syntax.OrBoolAssgn, syntax.XorBoolAssgn, syntax.PowAssgn:
		return true
	}
	return false
}

// shArithName returns the variable an arithmetic operand names.
func shArithName(x syntax.ArithmExpr) string {
	w, ok := x.(*syntax.Word)
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(w.Lit(), "[")
	return name
}

// stdinOf returns where a statement's standard input comes from, given its
// redirections and what it would inherit.
func (s *shScope) stdinOf(redirs []*syntax.Redirect, in shInput) shInput {
	for _, r := range redirs {
		if r.N != nil && r.N.Value != "0" {
			continue
		}
		switch r.Op {
		case syntax.RdrIn, syntax.RdrInOut:
			v, static, _ := shWordValue(r.Word)
			switch {
			case static && v == "/dev/null":
				in = shInput{kind: shInNull}
			case static:
				in = shInput{kind: shInFile, text: v}
			default:
				in = shInput{kind: shInFile, text: s.source(r.Word)}
			}
		case syntax.Hdoc, syntax.DashHdoc:
			if t, ok := shHeredoc(r); ok {
				in = shInput{kind: shInText, text: t}
			} else {
				in = shInput{kind: shInDynamic}
			}
		case syntax.WordHdoc:
			if v, static, _ := shWordValue(r.Word); static {
				in = shInput{kind: shInText, text: v + "\n"}
			} else {
				in = shInput{kind: shInDynamic}
			}
		case syntax.DplIn:
			in = shInput{}
		}
	}
	return in
}

// shHeredoc returns the content of a here-document when it has no
// expansions.
func shHeredoc(r *syntax.Redirect) (string, bool) {
	if r.Hdoc == nil {
		return "", true
	}
	quoted := false
	for _, p := range r.Word.Parts {
		if lit, ok := p.(*syntax.Lit); !ok || strings.ContainsRune(lit.Value, '\\') {
			quoted = true
		}
	}
	var b strings.Builder
	for _, p := range r.Hdoc.Parts {
		lit, ok := p.(*syntax.Lit)
		if !ok {
			return "", false
		}
		if quoted {
			b.WriteString(lit.Value)
		} else {
			shUnescape(&b, lit.Value, "$`\\\n")
		}
	}
	return b.String(), true
}

func (a *shellAnalyser) walkRedirects(s *shScope, redirs []*syntax.Redirect) error {
	for _, r := range redirs {
		if err := a.redirect(s, r); err != nil {
			return err
		}
		if r.Hdoc == nil { // a here-document's Word is its delimiter
			if err := a.walkWord(s, r.Word); err != nil {
				return err
			}
		}
		if err := a.walkWord(s, r.Hdoc); err != nil {
			return err
		}
	}
	return nil
}

// redirect records a redirection that writes a file, or reads a credential.
func (a *shellAnalyser) redirect(s *shScope, r *syntax.Redirect) error {
	e := shWrite(ClassFSWrite, "writes a file")
	switch r.Op {
	case syntax.RdrOut, syntax.RdrClob, syntax.RdrAll, syntax.RdrAllClob:
	case syntax.AppOut, syntax.AppClob, syntax.AppAll, syntax.AppAllClob:
		e.reason = "appends to a file"
	case syntax.RdrInOut:
		e.reason = "opens a file for writing"
	case syntax.DplOut:
		// ">&2" and ">&-" duplicate or close descriptors; ">&file" writes a file.
		if v, static, _ := shWordValue(r.Word); static && shIsFd(v) {
			return nil
		}
	case syntax.RdrIn:
		return a.readRedirect(s, r)
	default:
		return nil
	}
	target := s.wordArg(r.Word)
	if v, ok := target.pathValue(); ok {
		p := shResolve(s.cwd, v)
		if target.static && isNullDevice(cleanPath(p, "")) {
			return nil
		}
		shRaiseWrite(&e, p, target.glob)
	}
	return a.add(shCommand(s.redirText(r, target.text), "", e, shPosOf(r.Pos())))
}

// readRedirect records "< file" when the file is a credential.
func (a *shellAnalyser) readRedirect(s *shScope, r *syntax.Redirect) error {
	target := s.wordArg(r.Word)
	v, ok := target.pathValue()
	if !ok {
		return nil
	}
	p := shResolve(s.cwd, v)
	if !shCredentialPath(p, target.glob) {
		return nil
	}
	return a.add(shCommand(s.redirText(r, target.text), "", shCredentials(p), shPosOf(r.Pos())))
}

func (s *shScope) redirText(r *syntax.Redirect, target string) string {
	prefix := ""
	if r.N != nil && r.OpPos.Offset() > r.Pos().Offset() && int(r.OpPos.Offset()) <= len(s.src) {
		prefix = s.src[r.Pos().Offset():r.OpPos.Offset()]
	}
	return prefix + r.Op.String() + " " + target
}

// shIsFd reports whether a ">&" target is a descriptor: "2", "-", "3-".
func shIsFd(v string) bool {
	v = strings.TrimSuffix(v, "-")
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}

// shArg is one word of a command.
type shArg struct {
	val    string // the value, when static
	text   string // as shown in Command.Text ("" for the extra words of a brace expansion)
	static bool   // the value is known before the script runs
	glob   bool   // has unquoted pattern characters the shell may expand
	subst  bool   // a process substitution <( ) standing for a file
	extra  bool   // a second or later word of a brace expansion
	// path stands for a dynamic word in path checks: find -exec's "{}" is a
	// file under find's start path.
	path string
}

// pathValue is the path a word names, for path checks, if known.
func (a shArg) pathValue() (string, bool) {
	switch {
	case a.static && a.val != "":
		return a.val, true
	case !a.static && a.path != "":
		return a.path, true
	}
	return "", false
}

// shLiteral is a word given literally (argv, or built by a rule).
func shLiteral(v string) shArg {
	return shArg{val: v, text: shQuote(v), static: true}
}

// shQuote quotes v for bash only when it needs quoting.
func shQuote(v string) string {
	q, err := syntax.Quote(v, syntax.LangBash)
	if err != nil {
		return strconv.Quote(v) // only NUL bytes cannot be quoted
	}
	return q
}

// wordArg converts one word.
func (s *shScope) wordArg(w *syntax.Word) shArg {
	val, static, glob := shWordValue(w)
	a := shArg{val: val, static: static, glob: glob}
	switch {
	case static && len(w.Parts) == 1 && !strings.ContainsRune(shLitValue(w.Parts[0]), '\\') && shLitValue(w.Parts[0]) != "":
		// An unquoted literal is shown as written: it is valid shell and
		// keeps its globs, tildes and braces meaningful.
		a.text = val
	case static:
		a.text = shQuote(val)
	default:
		a.text = s.source(w)
		if len(w.Parts) == 1 {
			_, a.subst = w.Parts[0].(*syntax.ProcSubst)
		}
		a.path = s.knownPrefixPath(w)
	}
	return a
}

// knownPrefixPath returns the path a dynamic word names when it starts with
// $HOME or $PWD and the rest is static ("$HOME/.bashrc" is "~/.bashrc"), so
// that path checks see it; "" otherwise.
func (s *shScope) knownPrefixPath(w *syntax.Word) string {
	parts := w.Parts
	var inner []syntax.WordPart
	if dq, ok := parts[0].(*syntax.DblQuoted); ok && len(dq.Parts) > 0 {
		inner, parts = dq.Parts[1:], append([]syntax.WordPart{dq.Parts[0]}, parts[1:]...)
	}
	pe, ok := parts[0].(*syntax.ParamExp)
	if !ok || pe.Param == nil || pe.Exp != nil || pe.Index != nil || pe.Slice != nil || pe.Repl != nil || pe.Excl || pe.Length {
		return ""
	}
	var prefix string
	switch pe.Param.Value {
	case "HOME":
		prefix = "~"
	case "PWD":
		prefix = s.cwd
	}
	if prefix == "" {
		return ""
	}
	var b strings.Builder
	b.WriteString(prefix)
	for _, p := range inner {
		lit, ok := p.(*syntax.Lit)
		if !ok {
			return ""
		}
		shUnescape(&b, lit.Value, "$`\"\\\n")
	}
	rest, static, _ := shWordValue(&syntax.Word{Parts: parts[1:]})
	if len(parts) > 1 && !static {
		return ""
	}
	b.WriteString(rest)
	return b.String()
}

func shLitValue(p syntax.WordPart) string {
	if lit, ok := p.(*syntax.Lit); ok {
		return lit.Value
	}
	return ""
}

// maxBraceWords bounds brace expansion; a word that expands to more is
// treated as dynamic.
const maxBraceWords = 64

// appendWord converts w and appends it to args; a brace expansion
// ({rm,-rf,/}) becomes the words the shell would run.
func (s *shScope) appendWord(args []shArg, w *syntax.Word) []shArg {
	a := s.wordArg(w)
	if !shHasBraces(w) {
		return append(args, a)
	}
	words, ok := shExpandBraces(w)
	switch {
	case !ok:
		a.static, a.val = false, "" // expands to too many words: dynamic
		return append(args, a)
	case len(words) == 0:
		return append(args, a)
	}
	words[0].text = a.text
	return append(args, words...)
}

// shExpandBraces returns the words a brace expansion produces, or false
// when they are more than maxBraceWords.
func shExpandBraces(w *syntax.Word) ([]shArg, bool) {
	wc := *w
	if !syntax.SplitBraces(&wc) {
		return nil, true
	}
	var words []shArg
	for ew, err := range expand.BracesSeq(nil, &wc) {
		if err != nil || len(words) == maxBraceWords {
			return nil, false
		}
		val, static, glob := shWordValue(ew)
		words = append(words, shArg{val: val, static: static, glob: glob, extra: len(words) > 0})
	}
	return words, true
}

// shHasBraces reports whether w may hold a brace expansion: a "{" and a ","
// or ".." in its unquoted text ("{}" alone is find's placeholder).
func shHasBraces(w *syntax.Word) bool {
	open, sep := false, false
	for _, p := range w.Parts {
		if lit, ok := p.(*syntax.Lit); ok {
			open = open || strings.ContainsRune(lit.Value, '{')
			sep = sep || strings.ContainsRune(lit.Value, ',') || strings.Contains(lit.Value, "..")
		}
	}
	return open && sep
}

// shWordValue returns the value of a word whose value does not depend on
// run time: literals and quotes, not parameters or substitutions. Unquoted
// pattern characters stay in the value and set glob.
func shWordValue(w *syntax.Word) (val string, static, glob bool) {
	if w == nil {
		return "", false, false
	}
	if len(w.Parts) == 1 {
		if lit, ok := w.Parts[0].(*syntax.Lit); ok && !strings.ContainsRune(lit.Value, '\\') {
			return lit.Value, true, shHasGlob(lit.Value)
		}
	}
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			glob = glob || shHasGlob(p.Value)
			shUnescape(&b, p.Value, "")
		case *syntax.SglQuoted:
			if p.Dollar {
				shANSIC(&b, p.Value)
			} else {
				b.WriteString(p.Value)
			}
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok {
					return "", false, false
				}
				shUnescape(&b, lit.Value, "$`\"\\\n")
			}
		case *syntax.ExtGlob:
			glob = true
			b.WriteString(p.Op.String())
			b.WriteString(p.Pattern.Value)
			b.WriteByte(')')
		default:
			return "", false, false
		}
	}
	return b.String(), true, glob
}

// shHasGlob reports unescaped pattern characters in an unquoted literal; a
// "[" counts only with a "]" after it ("[" alone is the test command).
func shHasGlob(lit string) bool {
	for i := 0; i < len(lit); i++ {
		switch lit[i] {
		case '\\':
			i++
		case '*', '?':
			return true
		case '[':
			if strings.IndexByte(lit[i+1:], ']') >= 0 {
				return true
			}
		}
	}
	return false
}

// shUnescape writes s without its backslash escapes. escapable lists the
// characters a backslash escapes ("" means every character, as unquoted); a
// backslash-newline disappears.
func shUnescape(b *strings.Builder, s, escapable string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		next := s[i+1]
		switch {
		case next == '\n':
			i++
		case escapable == "" || strings.IndexByte(escapable, next) >= 0:
			b.WriteByte(next)
			i++
		default:
			b.WriteByte(c)
		}
	}
}

// shANSIC decodes the escapes of a $'...' string.
func shANSIC(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch c = s[i]; c {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case 'c':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i] & 0x1f)
			}
		case 'x', 'u', 'U':
			digits := 2
			if c == 'u' {
				digits = 4
			} else if c == 'U' {
				digits = 8
			}
			n, used := shParseDigits(s[i+1:], 16, digits)
			if used == 0 {
				b.WriteByte('\\')
				b.WriteByte(c)
				continue
			}
			i += used
			if c == 'x' {
				b.WriteByte(byte(n))
			} else if n <= utf8.MaxRune {
				b.WriteRune(rune(n))
			}
		case '0', '1', '2', '3', '4', '5', '6', '7':
			n, used := shParseDigits(s[i:], 8, 3)
			i += used - 1
			b.WriteByte(byte(n))
		default: // \\ \' \" \? and unknown escapes
			if !strings.ContainsRune(`\'"?`, rune(c)) {
				b.WriteByte('\\')
			}
			b.WriteByte(c)
		}
	}
}

// shParseDigits reads up to max digits of base from the start of s.
func shParseDigits(s string, base, max int) (n, used int) {
	for used < max && used < len(s) {
		d := shDigit(s[used])
		if d < 0 || d >= base {
			break
		}
		n = n*base + d
		used++
	}
	return n, used
}

func shDigit(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// Paths.

// shRaiseWrite raises e when writing p changes the system.
func shRaiseWrite(e *shEffect, p string, glob bool) {
	if e.tier >= TierPrivileged {
		return
	}
	if place, ok := shSystemPlace(p, glob); ok {
		e.tier, e.cap, e.generic = TierPrivileged, CapHostAdmin, false
		e.reason = shVerbFor(e.class) + " " + place
	}
}

// shVerbFor names what an effect of class does to files, for reasons such as
// "writes under /etc".
func shVerbFor(class Class) string {
	switch class {
	case ClassFSMkdir:
		return "creates directories"
	case ClassFSCopy:
		return "copies files"
	case ClassFSMove:
		return "moves files"
	case ClassFSPermissions:
		return "changes permissions"
	case ClassFSDelete:
		return "deletes files"
	case ClassPackageInstall:
		return "installs packages"
	}
	return "writes"
}

// shSystemPlace reports whether writing p (resolved) changes the system and
// says where: "under /etc", "~/.bashrc". A pattern counts when it may match
// a system path.
func shSystemPlace(p string, glob bool) (string, bool) {
	if p == "" {
		return "", false
	}
	if !isSystemPath(p, "") && !(glob && shGlobMaySystem(p)) {
		return "", false
	}
	c := cleanPath(p, "")
	if c == "/" {
		return "to /", true
	}
	for _, d := range systemDirs {
		if under(c, d) {
			return "under " + d, true
		}
	}
	return c, true
}

// shCredentialPath reports whether reading p (resolved) reads a secret; a
// pattern counts when it may match one.
func shCredentialPath(p string, glob bool) bool {
	if p == "" {
		return false
	}
	if isCredentialPath(p, "") {
		return true
	}
	return glob && shGlobMayCredential(p)
}

func shCredentials(p string) shEffect {
	return shEffect{class: ClassCredentialsRead, cap: CapCredentialsRead, tier: TierPrivileged,
		reason: "reads credentials: " + cleanPath(p, "")}
}

// shGlobMaySystem reports whether pattern p may match a system path: its
// pattern characters sit where they decide the directory ("/e*/passwd",
// "~/.b*rc").
func shGlobMaySystem(p string) bool {
	if strings.HasPrefix(p, "/") {
		for _, d := range systemDirs {
			if shGlobPrefixMatch(p, d, true) {
				return true
			}
		}
		if shGlobPrefixMatch(p, "/", true) {
			return true
		}
	}
	_, rest, ok := splitHome(p)
	if !ok {
		return false
	}
	rest = "~/" + rest
	for _, f := range shPersistenceSamples {
		if shGlobPrefixMatch(rest, f, true) {
			return true
		}
	}
	return false
}

// shPersistenceSamples are home-relative places whose writing
// isPersistencePath flags; patterns are matched against them.
var shPersistenceSamples = []string{
	"~/.bashrc", "~/.bash_profile", "~/.bash_login", "~/.bash_logout", "~/.profile",
	"~/.zshrc", "~/.zprofile", "~/.zshenv", "~/.zlogin", "~/.config/fish/config.fish",
	"~/.ssh", "~/.config/autostart/x", "~/.config/systemd/x", "~/Library/LaunchAgents/x",
}

// shCredentialSamples are typical secrets; patterns are matched against them.
var shCredentialSamples = []string{
	"/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/master.passwd",
	"/etc/ssh/ssh_host_rsa_key", "/etc/ssh/ssh_host_ecdsa_key", "/etc/ssh/ssh_host_ed25519_key",
	"~/.ssh/id_rsa", "~/.ssh/id_ecdsa", "~/.ssh/id_ed25519", "~/.ssh/id_dsa",
	"~/.aws/credentials", "~/.aws/config", "~/.gnupg/private-keys-v1.d", "~/.azure/accessTokens.json",
	"~/.config/gcloud/credentials.db", "~/.config/gh/hosts.yml", "~/.kube/config",
	"~/.docker/config.json", "~/.password-store", "~/.netrc", "~/.git-credentials",
	"~/.pgpass", "~/.my.cnf",
}

func shGlobMayCredential(p string) bool {
	if _, rest, ok := splitHome(p); ok {
		p = "~/" + rest
	}
	if strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~/") {
		for _, c := range shCredentialSamples {
			if c[0] == p[0] && shGlobPrefixMatch(p, c, false) {
				return true
			}
		}
	}
	// A base name pattern counts when it says enough to aim at a key
	// ("id_*"), not when it matches anything ("*").
	base := path.Base(p)
	if len(base)-strings.Count(base, "*")-strings.Count(base, "?") < 2 || strings.ContainsRune(base, '[') {
		return false
	}
	for name := range credentialFiles {
		if shMatch(base, name) {
			return true
		}
	}
	return false
}

// shGlobPrefixMatch reports whether the pattern p may name target or a path
// inside it (or, when p is shorter, a parent of it): each of their common
// components matches. With needGlob, a pattern character must sit in a
// common component, so that a literal prefix ("/var/tmp/*") is left to the
// lexical checks.
func shGlobPrefixMatch(p, target string, needGlob bool) bool {
	pc := strings.Split(path.Clean(p), "/")
	tc := strings.Split(target, "/")
	if target == "/" {
		tc = []string{"", ""}
	}
	n := min(len(pc), len(tc))
	globbed := false
	for i := 0; i < n; i++ {
		if shHasGlob(pc[i]) {
			globbed = true
		}
		if !shMatch(pc[i], tc[i]) {
			return false
		}
	}
	return globbed || !needGlob
}

// shMatch matches one path component as bash does by default: a pattern
// matches a name starting with "." only if it starts with "." itself.
func shMatch(pattern, name string) bool {
	if strings.HasPrefix(name, ".") && !strings.HasPrefix(pattern, ".") {
		return false
	}
	ok, _ := path.Match(pattern, name)
	return ok
}

// Variables.

// shSensitive lists the variables whose value changes what later commands
// run or how; setting one is privileged.
var shSensitive = map[string]string{
	"PATH":                  "changes which programs later commands run",
	"LD_PRELOAD":            "loads a library into every program",
	"LD_LIBRARY_PATH":       "changes which libraries programs load",
	"LD_AUDIT":              "loads a library into every program",
	"GLIBC_TUNABLES":        "changes how every program starts",
	"BASH_ENV":              "runs a file when a shell starts",
	"ENV":                   "runs a file when a shell starts",
	"PROMPT_COMMAND":        "runs a command at every prompt",
	"IFS":                   "changes how the shell splits words",
	"SHELLOPTS":             "changes the options of child shells",
	"BASHOPTS":              "changes the options of child shells",
	"PS4":                   "runs substitutions when the shell traces",
	"CDPATH":                "changes where cd goes",
	"HOME":                  "changes the home directory that ~ and programs rely on",
	"GIT_SSH":               "changes the program git runs to connect",
	"GIT_SSH_COMMAND":       "changes the command git runs to connect",
	"GIT_EXEC_PATH":         "changes the programs git runs",
	"GIT_PROXY_COMMAND":     "changes the command git runs to connect",
	"GIT_ASKPASS":           "changes the program git runs for passwords",
	"SSH_ASKPASS":           "changes the program ssh runs for passwords",
	"GIT_EXTERNAL_DIFF":     "changes the program git runs for diffs",
	"GIT_CONFIG_PARAMETERS": "changes git configuration, which can run commands",
	"GIT_CONFIG_COUNT":      "changes git configuration, which can run commands",
	"GIT_CONFIG":            "changes git configuration, which can run commands",
	"GIT_CONFIG_GLOBAL":     "changes git configuration, which can run commands",
	"GIT_CONFIG_SYSTEM":     "changes git configuration, which can run commands",
	"GIT_DIR":               "changes the repository, whose configuration can run commands",
	"GIT_TEMPLATE_DIR":      "changes the hooks git installs",
	"PYTHONPATH":            "changes the code Python loads",
	"PYTHONSTARTUP":         "runs a file when Python starts",
	"PYTHONHOME":            "changes the code Python loads",
	"NODE_OPTIONS":          "changes the code Node.js loads",
	"NODE_PATH":             "changes the code Node.js loads",
	"PERL5OPT":              "changes the code Perl loads",
	"PERL5LIB":              "changes the code Perl loads",
	"PERLLIB":               "changes the code Perl loads",
	"RUBYOPT":               "changes the code Ruby loads",
	"RUBYLIB":               "changes the code Ruby loads",
	"JAVA_TOOL_OPTIONS":     "changes the code Java loads",
	"_JAVA_OPTIONS":         "changes the code Java loads",
}

// shSensitiveVar returns why setting name matters, if it does.
func shSensitiveVar(name string) (string, bool) {
	if r, ok := shSensitive[name]; ok {
		return "sets " + name + ", which " + r, true
	}
	switch {
	case strings.HasPrefix(name, "DYLD_"):
		return "sets " + name + ", which changes the libraries programs load", true
	case strings.HasPrefix(name, "BASH_FUNC_"):
		return "sets " + name + ", which replaces a command in child shells", true
	case strings.HasPrefix(name, "GIT_CONFIG_KEY_"), strings.HasPrefix(name, "GIT_CONFIG_VALUE_"):
		return "sets " + name + ", which changes git configuration", true
	}
	return "", false
}

// shCommandVar reports whether name holds a command that programs run
// (git runs $GIT_PAGER); its value is analysed as a command.
func shCommandVar(name string) bool {
	switch name {
	case "PAGER", "GIT_PAGER", "MANPAGER", "SYSTEMD_PAGER", "EDITOR", "VISUAL", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR":
		return true
	}
	return false
}
