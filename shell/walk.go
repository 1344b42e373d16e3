package shell

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/sensitive"
	"mvdan.cc/sh/v3/syntax"
)

type position struct{ line, col int }

func positionOf(p syntax.Pos) position { return position{int(p.Line()), int(p.Col())} }

// parseError is a syntax error in a script, positioned in that script.
type parseError struct {
	line, col int
	msg       string
}

func (e *parseError) Error() string {
	return fmt.Sprintf("line %d:%d: %s", e.line, e.col, e.msg)
}

// nestedError is a syntax error in a nested script (sh -c, eval, ssh ...),
// positioned at the outermost command that runs it.
type nestedError struct {
	pos position
	via []string
	err *parseError
}

func (e *nestedError) Error() string {
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
func (a *walker) parse(src string) (*syntax.File, error) {
	if len(src) > maxScriptBytes {
		return nil, errShellTooLong
	}
	if bracketDepth(src) > maxSyntaxDepth {
		return nil, errShellTooNested
	}
	f, err := a.parser.Parse(strings.NewReader(src), "")
	if err == nil {
		return f, nil
	}
	var pe syntax.ParseError
	if errors.As(err, &pe) {
		return nil, &parseError{int(pe.Pos.Line()), int(pe.Pos.Col()), pe.Text}
	}
	var le syntax.LangError
	if errors.As(err, &le) {
		msg := le.Error()
		if _, after, ok := strings.Cut(msg, ": "); ok {
			msg = after
		}
		return nil, &parseError{int(le.Pos.Line()), int(le.Pos.Col()), msg}
	}
	return nil, err
}

// bracketDepth is the deepest nesting of brackets in src, counted on the
// raw text before parsing (quotes are not understood, which only makes the
// limit stricter).
func bracketDepth(src string) int {
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
func (a *walker) walkScript(s *scope, src string) error {
	f, err := a.parse(src)
	if err != nil {
		return err
	}
	s.src = src
	return a.walkStmts(s, f.Stmts, s.in)
}

// add records one effect.
func (a *walker) add(c airlock.Command) error {
	if len(a.cmds) >= maxCommands {
		return errShellTooMany
	}
	a.cmds = append(a.cmds, c)
	return nil
}

// tag adds a wrapper to the Via of the commands recorded since start.
func (a *walker) tag(start int, via string) {
	for i := start; i < len(a.cmds); i++ {
		a.cmds[i].Via = append([]string{via}, a.cmds[i].Via...)
	}
}

func (a *walker) walkStmts(s *scope, stmts []*syntax.Stmt, in input) error {
	for _, st := range stmts {
		if err := a.walkStmt(s, st, in); err != nil {
			return err
		}
	}
	return nil
}

func (a *walker) walkStmt(s *scope, st *syntax.Stmt, in input) error {
	a.level++
	defer func() { a.level-- }()
	if a.level > maxSyntaxDepth {
		return errShellTooNested
	}
	if st.Background || st.Coprocess || st.Disown {
		s = s.sub() // runs in a subshell: its cd does not apply here
	}
	if st.Cmd != nil {
		in := s.stdinOf(st.Redirs, in)
		if in.kind == inFile && slices.Contains(a.fifos, resolvePath(s.cwd, in.text)) {
			in = input{kind: inPipe}
		}
		if err := a.walkCommand(s, st.Cmd, in); err != nil {
			return err
		}
	}
	return a.walkRedirects(s, st.Redirs)
}

func (a *walker) walkCommand(s *scope, cmd syntax.Command, in input) error {
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
		return a.walkStmt(s.sub(), c.Body, input{})
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
	pos := positionOf(cmd.Pos())
	return &parseError{pos.line, pos.col, fmt.Sprintf("unsupported shell construct %T", cmd)}
}

// walkBinary walks "a && b", "a || b" and pipelines. Long chains nest on
// the left (((a && b) && c) && d); they are walked in a loop rather than by
// recursion, so that a chain of any length costs no stack.
func (a *walker) walkBinary(s *scope, c *syntax.BinaryCmd, in input) error {
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
	scopes := make([]*scope, len(chain)+1)
	scopes[0] = s
	for i, b := range chain {
		scopes[i+1] = scopes[i]
		if isPipe(b) {
			scopes[i+1] = scopes[i].sub()
		}
	}
	if err := a.walkStmt(scopes[len(chain)], chain[len(chain)-1].X, in); err != nil {
		return err
	}
	for i := len(chain) - 1; i >= 0; i-- {
		ys, yin := scopes[i], in
		if isPipe(chain[i]) {
			left := chain[i].X // what writes into the pipe: a command, or the last of a pipeline
			if i < len(chain)-1 {
				left = chain[i+1].Y
			}
			ys, yin = scopes[i].sub(), input{kind: inPipe, text: printed(left)}
		}
		if err := a.walkStmt(ys, chain[i].Y, yin); err != nil {
			return err
		}
	}
	return nil
}

func isPipe(b *syntax.BinaryCmd) bool { return b.Op == syntax.Pipe || b.Op == syntax.PipeAll }

// printed is the text a statement writes into a pipe when Airlock knows
// it: echo (without -e) or printf whose format has no conversion or
// escape, with words known before the script runs; "" otherwise. A
// backslash makes it unknown too, since sh's echo (dash's) reads escapes.
func printed(st *syntax.Stmt) string {
	if len(st.Redirs) > 0 || st.Negated || st.Background || st.Coprocess {
		return ""
	}
	ce, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(ce.Assigns) > 0 || len(ce.Args) == 0 || ce.Args[0].Lit() != "echo" && ce.Args[0].Lit() != "printf" {
		return ""
	}
	words := make([]string, 0, len(ce.Args))
	for _, w := range ce.Args {
		v, static, glob := wordValue(w)
		if !static || glob || hasBraces(w) || strings.ContainsRune(v, '\\') {
			return ""
		}
		words = append(words, v)
	}
	args := words[1:]
	if words[0] == "printf" {
		if len(args) > 0 && args[0] == "--" {
			args = args[1:]
		}
		if len(args) == 0 || strings.HasPrefix(args[0], "-") || strings.ContainsRune(args[0], '%') {
			return "" // -v assigns; a conversion takes the arguments
		}
		return args[0]
	}
	newline := "\n"
	for len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-' && strings.Trim(args[0][1:], "neE") == "" {
		if strings.ContainsRune(args[0], 'e') {
			return ""
		}
		if strings.ContainsRune(args[0], 'n') {
			newline = ""
		}
		args = args[1:]
	}
	return strings.Join(args, " ") + newline
}

// inert is the entry of a shell construct that changes nothing outside the
// shell ("[[ ]]", "(( ))", let).
func (s *scope) inert(n syntax.Node, name, reason string) airlock.Command {
	return commandOf(s.source(n), name, inert(reason), positionOf(n.Pos()))
}

func commandOf(text, name string, e effect, p position) airlock.Command {
	return airlock.Command{
		Text: text, Name: name, Class: e.class, Capability: e.cap, Tier: e.tier, Reason: e.reason,
		Line: p.line, Col: p.col, Generic: e.generic, Inert: e.inert,
	}
}

// source returns n as written in the script being walked.
func (s *scope) source(n syntax.Node) string {
	from, to := int(n.Pos().Offset()), int(n.End().Offset())
	to = min(to, len(s.src))
	if from >= to {
		return ""
	}
	return s.src[from:to]
}

// walkCall classifies a simple command: its prefix assignments, the program
// it runs, then the substitutions in its words.
func (a *walker) walkCall(s *scope, ce *syntax.CallExpr, in input) error {
	for _, as := range ce.Assigns {
		if err := a.walkAssign(s, as, len(ce.Args) == 0); err != nil {
			return err
		}
	}
	if len(ce.Args) == 0 {
		return nil // a bare assignment
	}
	words := make([]arg, 0, len(ce.Args))
	for _, w := range ce.Args {
		words = s.appendWord(words, w)
	}
	c := &call{words: words, in: in, cwd: s.cwd, plainDir: &a.plainDir}
	if err := a.runCall(s, c, positionOf(ce.Pos())); err != nil {
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
func (a *walker) runCall(s *scope, c *call, pos position) error {
	head := c.words[0]
	c.args = c.words[1:]
	if !head.static || head.glob || head.subst {
		e := unknown("runs a command whose name is only known at run time")
		return a.add(commandOf(c.text(), head.text, e, pos))
	}
	name, local := programName(head.val)
	c.name = name
	var e effect
	switch {
	case local:
		e = exec("runs " + head.text + ", a program Airlock does not know")
		e.generic = true
		c.raiseReads(&e, c.operands()...)
	case name == "cd" || name == "pushd" || name == "popd":
		s.chdir(c)
		e = inert("changes the working directory")
	default:
		if rule := programRule(name); rule != nil {
			e = rule(c)
		} else {
			e = exec("runs program " + head.text + ", which Airlock does not know")
			e.generic = true
			c.raiseReads(&e, c.operands()...)
		}
	}
	c.raiseNamed(&e, !local && metadataOnly[baseName(name)])
	if !e.none {
		if err := a.add(commandOf(c.text(), name, e, pos)); err != nil {
			return err
		}
	}
	for i := range c.subs {
		if err := a.runNested(s, &c.subs[i], pos); err != nil {
			return err
		}
	}
	if name == "source" || name == "." {
		s.cwd = "" // the sourced script may cd anywhere
	}
	if name == "mkfifo" || name == "mknod" {
		for _, op := range c.operands("-m", "--mode", "-Z", "--context") {
			if op.static {
				a.fifos = append(a.fifos, resolvePath(s.cwd, op.val))
			}
		}
	}
	return nil
}

// programName resolves the program a command word runs: /usr/bin/git is
// git; ./deploy.sh or scripts/x are local programs.
func programName(word string) (name string, local bool) {
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

// programRule is the table's rule for a program: its own entry, else the
// entry of the name without a version (python3.12 → python, tclsh8.6 →
// tclsh, go1.22.0 → go), else nil.
func programRule(name string) rule {
	name = baseName(name)
	if r := programs()[name]; r != nil {
		return r // 7z, ping6, linux32: the table knows the name itself
	}
	if trimmed := strings.TrimRight(name, "0123456789.-"); trimmed != "" {
		return programs()[trimmed]
	}
	return nil
}

// baseName maps the file-system makers and checkers of each type
// (mkfs.ext4, fsck.xfs) to their table entry.
func baseName(name string) string {
	if strings.HasPrefix(name, "mkfs.") || strings.HasPrefix(name, "fsck.") {
		return name[:4]
	}
	return name
}

// chdir tracks cd, pushd and popd.
func (s *scope) chdir(c *call) {
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
	s.cwd = resolvePath(s.cwd, v)
}

// nested is something a command runs: another command (sudo rm), a script
// (sh -c, eval, ssh), or words Airlock cannot analyse.
type nested struct {
	via     string // the wrapper, as shown in airlock.Command.Via
	argv    []arg  // a command to classify...
	script  string // ...or a script to parse...
	unknown string // ...or the reason for an unknown entry
	text    string // the unknown entry's Text
	in      input  // the inner command's or script's standard input
	cwd     string // its working directory, when setCwd
	setCwd  bool   //
	floor   effect // inner effects are raised to at least this tier (0: none)
	lenient bool   // a script that does not parse is an unknown entry, not an error
	xargs   bool   // operands are appended at run time
}

// runNested analyses what a command runs, one level deeper, and marks the
// effects found: the wrapper in Via, the outer command's position, the
// wrapper's floor.
func (a *walker) runNested(s *scope, n *nested, pos position) error {
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
		err = a.add(commandOf(n.text, "", unknown(n.unknown), pos))
	case n.argv != nil:
		if len(n.argv) == 0 {
			return nil
		}
		err = a.runCall(inner, &call{words: n.argv, in: n.in, cwd: inner.cwd, xargs: n.xargs, plainDir: &a.plainDir},
			pos)
	default:
		err = a.walkScript(inner, n.script)
		var pe *parseError
		if n.lenient && errors.As(err, &pe) {
			a.cmds = a.cmds[:start]
			err = a.add(commandOf(n.script, "", unknown("runs a command Airlock cannot parse"), pos))
		}
	}
	if err != nil {
		return wrapNested(err, n.via, pos)
	}
	for i := start; i < len(a.cmds); i++ {
		c := &a.cmds[i]
		c.Via = append([]string{n.via}, c.Via...)
		c.Line, c.Col = pos.line, pos.col
		applyFloor(c, n.floor)
	}
	return nil
}

// wrapNested positions a syntax error of a nested script at the command
// that runs it; limit errors pass unchanged.
func wrapNested(err error, via string, pos position) error {
	var ne *nestedError
	if errors.As(err, &ne) {
		ne.via = append([]string{via}, ne.via...)
		ne.pos = pos
		return ne
	}
	var pe *parseError
	if errors.As(err, &pe) {
		return &nestedError{pos: pos, via: []string{via}, err: pe}
	}
	return err
}

// applyFloor raises c to the wrapper's floor: sudo makes anything it runs
// privileged.
func applyFloor(c *airlock.Command, f effect) {
	if f.tier == 0 || c.Tier >= f.tier {
		return
	}
	c.Class, c.Capability, c.Tier = f.class, f.cap, f.tier
	c.Reason = f.reason + ": " + c.Reason
	c.Generic, c.Inert = false, false
}

// walkAssign handles an assignment, bare or as a command prefix (which
// only sets the command's environment).
func (a *walker) walkAssign(s *scope, as *syntax.Assign, bare bool) error {
	if as.Name != nil && !as.Naked {
		if err := a.assignEffect(s, as.Name.Value, as, as.Value); err != nil {
			return err
		}
		if bare {
			v, static, _ := wordValue(as.Value)
			s.setVar(as.Name.Value, v, static && as.Index == nil && as.Array == nil && !as.Append)
		}
	}
	return a.walkNode(s, as)
}

// assignEffect records what setting variable name does, when it matters:
// PATH, LD_PRELOAD and the like change what later commands run; PAGER and
// EDITOR hold commands that programs run.
func (a *walker) assignEffect(s *scope, name string, n syntax.Node, value *syntax.Word) error {
	pos := positionOf(n.Pos())
	if reason, ok := sensitiveVar(name); ok {
		return a.add(commandOf(s.source(n), "", env(reason), pos))
	}
	if !commandVar(name) || value == nil {
		return nil
	}
	v, static, _ := wordValue(value)
	if !static {
		return a.add(commandOf(s.source(n), "", unknown("sets "+name+" to a command only known at run time"), pos))
	}
	return a.runNested(s, &nested{via: name, script: commandScript(name, v)}, pos)
}

// printsVars reports whether a declaration names no variable, so that it
// prints them all: export, export -p, declare -x, typeset -p.
func printsVars(d *syntax.DeclClause) bool {
	if d.Variant.Value == "local" {
		return false
	}
	for _, as := range d.Args {
		v, static, _ := wordValue(as.Value)
		if as.Name != nil || !static || !strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "+") ||
			strings.ContainsAny(v, "fF") { // functions, not variables
			return false
		}
	}
	return true
}

// walkDecl handles export, declare, local, readonly, typeset.
func (a *walker) walkDecl(s *scope, d *syntax.DeclClause) error {
	pos := positionOf(d.Pos())
	variant := d.Variant.Value
	nameref, integer := variant == "nameref", false
	reason := ""
	var cmdVars []*syntax.Assign
	for _, as := range d.Args {
		if as.Name == nil {
			// An option (-x), or a word: "NAME=value" quoted, or dynamic.
			v, static, _ := wordValue(as.Value)
			switch {
			case !static:
				reason = "sets a variable whose name is only known at run time"
			case strings.HasPrefix(v, "-") || strings.HasPrefix(v, "+"):
				nameref = nameref || (v[0] == '-' && strings.ContainsRune(v, 'n'))
				integer = integer || (v[0] == '-' && strings.ContainsRune(v, 'i'))
			default:
				if name, _, ok := strings.Cut(v, "="); ok {
					if r, bad := sensitiveVar(name); bad {
						reason = r
					}
				}
			}
			continue
		}
		name := as.Name.Value
		v, static, _ := wordValue(as.Value)
		s.setVar(name, v, static && as.Value != nil && as.Index == nil && as.Array == nil)
		if integer && as.Value != nil {
			// declare -i evaluates the value as arithmetic when assigning.
			if err := a.evalText(s, v, static, positionOf(as.Pos())); err != nil {
				return err
			}
		}
		if nameref && as.Value != nil {
			target, static, _ := wordValue(as.Value)
			if _, bad := sensitiveVar(target); bad || !static {
				reason = "makes " + name + " refer to another variable, which can change what later commands run"
			}
		}
		if r, bad := sensitiveVar(name); bad && !as.Naked {
			reason = r
		} else if commandVar(name) && as.Value != nil {
			cmdVars = append(cmdVars, as)
		}
	}
	e := inert("sets shell variables")
	if reason != "" {
		e = env(reason)
	} else if printsVars(d) {
		e = printsEnvironment
	}
	if err := a.add(commandOf(s.source(d), variant, e, pos)); err != nil {
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
func (a *walker) walkWord(s *scope, w *syntax.Word) error {
	if w == nil || plainWord(w) {
		return nil
	}
	return a.walkNode(s, w)
}

// plainWord reports whether w has no expansions at all, to skip walking it.
func plainWord(w *syntax.Word) bool {
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
func (a *walker) walkNode(s *scope, n syntax.Node) error {
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
				in = input{kind: inPipe} // >(cmd) reads what the outer command writes
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
			if arithAssign(n.Op) {
				if name := arithName(n.X); name != "" {
					err = a.assignEffect(s, name, n, nil)
				}
			}
		case *syntax.UnaryArithm:
			if n.Op == syntax.Inc || n.Op == syntax.Dec {
				if name := arithName(n.X); name != "" {
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
func (a *walker) evalVars(s *scope, n syntax.Node) error {
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
			if err := a.evalText(s, value, true, positionOf(n.Pos())); err != nil {
				return err
			}
		}
	}
	return nil
}

// evalText analyses a value that arithmetic evaluates, when it may hide a
// command substitution in an array subscript.
func (a *walker) evalText(s *scope, value string, static bool, pos position) error {
	if !static || !strings.ContainsRune(value, '[') || !strings.ContainsAny(value, "$`") {
		return nil
	}
	// Parsed as the argument of ":", the value's substitutions are walked.
	return a.runNested(s, &nested{via: "arithmetic", script: ": " + value, lenient: true}, pos)
}

// testSinks finds the arithmetic comparisons of a [[ ]] test (-eq, -lt
// ...), whose operands are evaluated as arithmetic.
func (a *walker) testSinks(s *scope, x syntax.TestExpr) error {
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

func arithAssign(op syntax.BinAritOperator) bool {
	switch op {
	case syntax.Assgn, syntax.AddAssgn, syntax.SubAssgn, syntax.MulAssgn, syntax.QuoAssgn,
		syntax.RemAssgn, syntax.AndAssgn, syntax.OrAssgn, syntax.XorAssgn, syntax.ShlAssgn,
		syntax.ShrAssgn, syntax.AndBoolAssgn, syntax.OrBoolAssgn, syntax.XorBoolAssgn, syntax.PowAssgn:
		return true
	}
	return false
}

// arithName returns the variable an arithmetic operand names.
func arithName(x syntax.ArithmExpr) string {
	w, ok := x.(*syntax.Word)
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(w.Lit(), "[")
	return name
}

// stdinOf returns where a statement's standard input comes from, given its
// redirections and what it would inherit.
func (s *scope) stdinOf(redirs []*syntax.Redirect, in input) input {
	for _, r := range redirs {
		if r.N != nil && r.N.Value != "0" {
			continue
		}
		switch r.Op {
		case syntax.RdrIn, syntax.RdrInOut:
			v, static, _ := wordValue(r.Word)
			switch {
			case static && v == "/dev/null":
				in = input{kind: inNull}
			case static:
				in = input{kind: inFile, text: v}
			default:
				in = input{kind: inFile, text: s.source(r.Word)}
			}
		case syntax.Hdoc, syntax.DashHdoc:
			if t, ok := heredoc(r); ok {
				in = input{kind: inText, text: t}
			} else {
				in = input{kind: inDynamic}
			}
		case syntax.WordHdoc:
			if v, static, _ := wordValue(r.Word); static {
				in = input{kind: inText, text: v + "\n"}
			} else {
				in = input{kind: inDynamic}
			}
		case syntax.DplIn:
			in = input{}
		}
	}
	return in
}

// heredoc returns the content of a here-document when it has no
// expansions.
func heredoc(r *syntax.Redirect) (string, bool) {
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
			unescape(&b, lit.Value, "$`\\\n")
		}
	}
	return b.String(), true
}

func (a *walker) walkRedirects(s *scope, redirs []*syntax.Redirect) error {
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

// redirect records a redirection that writes a file, reads a secret, or
// opens a network connection.
func (a *walker) redirect(s *scope, r *syntax.Redirect) error {
	e := write(airlock.ClassFSWrite, "writes a file")
	switch r.Op {
	case syntax.RdrOut, syntax.RdrClob, syntax.RdrAll, syntax.RdrAllClob:
	case syntax.AppOut, syntax.AppClob, syntax.AppAll, syntax.AppAllClob:
		e.reason = "appends to a file"
	case syntax.RdrInOut:
		e.reason = "opens a file for writing"
	case syntax.DplOut:
		// ">&2" and ">&-" duplicate or close descriptors; ">&file" writes a file.
		if v, static, _ := wordValue(r.Word); static && isFd(v) {
			return nil
		}
	case syntax.RdrIn:
		e = effect{} // reading matters only for what is read
	default:
		return nil
	}
	target := s.wordArg(r.Word)
	if reason, ok := netRedirect(r.Word, target); ok {
		e = net(airlock.ClassNetConnect, reason)
		return a.add(commandOf(s.redirText(r, target.text), "", e, positionOf(r.Pos())))
	}
	v, ok := target.pathValue()
	if !ok && e.tier == 0 {
		return nil
	}
	if ok {
		p := resolvePath(s.cwd, v)
		if read, ok := secretRead(p, target.glob); ok && r.Op == syntax.RdrIn {
			e = read
		} else if e.tier == 0 {
			return nil
		} else if target.static && sensitive.IsNullDevice(sensitive.Clean(p, "")) {
			return nil
		}
		raiseWrite(&e, p, target.glob)
	}
	return a.add(commandOf(s.redirText(r, target.text), "", e, positionOf(r.Pos())))
}

// netRedirect reports whether a redirection may open a network connection,
// and says where: bash itself connects when a redirection names
// /dev/tcp/HOST/PORT or /dev/udp/HOST/PORT, whatever the command, and the
// host name alone can carry data out. A target only known at run time may
// be one of them unless its known start rules it out.
func netRedirect(w *syntax.Word, target arg) (string, bool) {
	v, ok := target.pathValue()
	if !ok {
		prefix := literalPrefix(w)
		for _, dev := range []string{"/dev/tcp/", "/dev/udp/"} {
			if strings.HasPrefix(dev, prefix) || strings.HasPrefix(prefix, dev) {
				return "redirects to a place only known at run time, which may be a network connection (" + dev + "...)", true
			}
		}
		return "", false
	}
	c := strings.Split(path.Clean(v), "/")
	if len(c) < 3 || c[0] != "" || !matchComponent(c[1], "dev", target.glob) {
		return "", false
	}
	for _, proto := range []string{"tcp", "udp"} {
		if matchComponent(c[2], proto, target.glob) {
			host := strings.Join(c[3:], ":")
			return "opens a network connection to " + host + " (bash's /dev/" + proto + ")", true
		}
	}
	return "", false
}

// matchComponent reports whether a path component is name, or with glob a
// pattern that may match it.
func matchComponent(component, name string, glob bool) bool {
	if !glob {
		return component == name
	}
	ok, _ := path.Match(component, name)
	return ok
}

// literalPrefix is the text a word starts with before its first expansion.
func literalPrefix(w *syntax.Word) string {
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			unescape(&b, p.Value, "")
		case *syntax.SglQuoted:
			if p.Dollar {
				return b.String()
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok {
					return b.String()
				}
				unescape(&b, lit.Value, "$`\"\\\n")
			}
		default:
			return b.String()
		}
	}
	return b.String()
}

func (s *scope) redirText(r *syntax.Redirect, target string) string {
	prefix := ""
	if r.N != nil && r.OpPos.Offset() > r.Pos().Offset() && int(r.OpPos.Offset()) <= len(s.src) {
		prefix = s.src[r.Pos().Offset():r.OpPos.Offset()]
	}
	return prefix + r.Op.String() + " " + target
}

// isFd reports whether a ">&" target is a descriptor: "2", "-", "3-".
func isFd(v string) bool {
	v = strings.TrimSuffix(v, "-")
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}
