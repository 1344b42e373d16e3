package shell

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/sensitive"
	"mvdan.cc/sh/v3/expand"
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
	if a.steps++; a.steps > maxSteps {
		return errShellTooLarge
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
		return a.walkIf(s, c, in)
	case *syntax.WhileClause:
		// The condition runs at least once; then the body and the
		// condition, any number of times.
		from := len(a.cmds)
		if err := a.walkStmts(s, c.Cond, in); err != nil {
			return err
		}
		return a.loop(s, from, c, nil, func(b *scope) error {
			if err := a.walkStmts(b, c.Do, in); err != nil {
				return err
			}
			return a.walkStmts(b, c.Cond, in)
		})
	case *syntax.ForClause:
		return a.walkFor(s, c, in)
	case *syntax.CaseClause:
		return a.walkCase(s, c, in)
	case *syntax.FuncDecl:
		return a.walkFuncDecl(s, c)
	case *syntax.ArithmCmd:
		if err := a.add(s.inert(c, "((", "evaluates arithmetic")); err != nil {
			return err
		}
		return a.arith(s, c.X, positionOf(c.Pos()))
	case *syntax.TestClause:
		if err := a.add(s.inert(c, "[[", "tests a condition")); err != nil {
			return err
		}
		return a.walkTest(s, c.X)
	case *syntax.LetClause:
		if err := a.add(s.inert(c, "let", "evaluates arithmetic")); err != nil {
			return err
		}
		for _, x := range c.Exprs {
			if err := a.arith(s, x, positionOf(c.Pos())); err != nil {
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
			ys, yin = scopes[i].sub(), scopes[i].pipeInput(left)
			if err := a.walkStmt(ys, chain[i].Y, yin); err != nil {
				return err
			}
			continue
		}
		// The right of && and || may or may not run.
		ys = scopes[i].sub()
		if err := a.walkStmt(ys, chain[i].Y, yin); err != nil {
			return err
		}
		if !sameState(ys, scopes[i]) {
			scopes[i].join(scopes[i].sub(), ys)
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
	cmd := ""
	if len(ce.Args) > 0 {
		cmd = ce.Args[0].Lit()
	}
	for _, as := range ce.Assigns {
		if err := a.walkAssign(s, as, len(ce.Args) == 0, cmd); err != nil {
			return err
		}
	}
	if len(ce.Args) == 0 {
		return nil // a bare assignment
	}
	// Each way the words may expand (a variable that may hold either of
	// two strings) is classified; entries that repeat are recorded once.
	pos := positionOf(ce.Pos())
	if words := plainWords(ce.Args); words != nil {
		if len(ce.Assigns) > 0 {
			in.envs = assignedNames(ce.Assigns)
		}
		return a.callWords(s, words, in, pos) // nothing to expand: no substitution to walk
	}
	ways := [][]arg{nil}
	for _, w := range ce.Args {
		ways = product(ways, s.wordFields(w))
	}
	mark := len(a.cmds)
	in.envs = assignedNames(ce.Assigns)
	if len(ways) > 1 {
		// Each way starts from the same state; what they leave joins.
		branches := make([]*scope, 0, len(ways))
		for _, words := range ways {
			b := s.sub()
			if err := a.callWords(b, words, in, pos); err != nil {
				return err
			}
			branches = append(branches, b)
		}
		s.join(branches...)
		a.dedupe(mark, mark+1)
	} else if err := a.callWords(s, ways[0], in, pos); err != nil {
		return err
	}
	for _, w := range ce.Args {
		if err := a.walkWord(s, w); err != nil {
			return err
		}
	}
	return nil
}

// callWords runs one command given as expanded words: a function the
// script defined, or a program or built-in.
func (a *walker) callWords(s *scope, words []arg, in input, pos position) error {
	if len(words) == 0 {
		return nil // every word expanded to nothing
	}
	c := &call{words: words, in: in, cwd: s.cwd, start: a.start, lost: s.lost, envs: in.envs, xtrace: s.xtrace, plainDir: &a.plainDir, cat: a.cat}
	c.in.envs = nil
	if head := words[0]; head.static && !head.glob {
		if bodies, ok := s.funcs[head.val]; ok {
			c.name, c.args = head.val, words[1:]
			if err := a.callFunction(s, c, bodies, pos); err != nil {
				return err
			}
			if !slices.Contains(bodies, nil) {
				return nil
			}
		}
	}
	if err := a.runCall(s, c, pos); err != nil {
		return err
	}
	return a.stateAfter(s, c, pos)
}

// assignedNames are the variables prefix assignments set.
func assignedNames(assigns []*syntax.Assign) []string {
	var names []string
	for _, as := range assigns {
		if as.Name != nil {
			names = append(names, as.Name.Value)
		}
	}
	return names
}

// plainWords returns the words of a command when each is a plain literal
// (git status, go test ./...), the common case, which expand to
// themselves; nil when one has an expansion, a quote, an escape or braces.
func plainWords(words []*syntax.Word) []arg {
	out := make([]arg, len(words))
	for i, w := range words {
		if len(w.Parts) != 1 {
			return nil
		}
		lit, ok := w.Parts[0].(*syntax.Lit)
		if !ok || lit.Value == "" || strings.ContainsAny(lit.Value, "\\{~") {
			return nil
		}
		out[i] = arg{val: lit.Value, text: lit.Value, static: true, glob: hasGlob(lit.Value)}
	}
	return out
}

// product is every way of following one of ways by one of more, bounded:
// past maxAlts ways, each word that may expand in several ways is only
// known at run time.
func product(ways, more [][]arg) [][]arg {
	if len(more) == 1 {
		for i := range ways {
			ways[i] = append(ways[i], more[0]...)
		}
		return ways
	}
	if len(ways)*len(more) > maxAlts {
		first := more[0]
		d := arg{text: orElse(first[0].text, ""), from: "one of many values"}
		for _, m := range more {
			for _, f := range m {
				d.secret = d.secret || f.secret
			}
		}
		for i := range ways {
			ways[i] = append(ways[i], d)
		}
		return ways
	}
	out := make([][]arg, 0, len(ways)*len(more))
	for _, w := range ways {
		for _, m := range more {
			out = append(out, append(slices.Clip(w), m...))
		}
	}
	return out
}

// wordFields is what a word expands to (scope.fieldsOf), after its brace
// expansion: {a,b}.txt is two words.
func (s *scope) wordFields(w *syntax.Word) [][]arg {
	if !hasBraces(w) {
		return s.fieldsOf(w)
	}
	wc := *w
	if !syntax.SplitBraces(&wc) {
		return s.fieldsOf(w)
	}
	ways := [][]arg{nil}
	n := 0
	for ew, err := range expand.BracesSeq(nil, &wc) {
		if err != nil || n == maxBraceWords {
			return [][]arg{{{text: s.source(w), from: "a brace expansion of many words"}}}
		}
		n++
		ways = product(ways, s.fieldsOf(ew))
	}
	text := s.source(w)
	for _, way := range ways {
		for i := range way {
			way[i].text, way[i].extra = "", i > 0
		}
		if len(way) > 0 {
			way[0].text = text
		}
	}
	return ways
}

// runCall classifies one command given as words, then what it runs.
func (a *walker) runCall(s *scope, c *call, pos position) error {
	head := c.words[0]
	c.args = c.words[1:]
	if !head.static || head.glob || head.subst {
		e := unknown("runs a command whose name is only known at run time")
		if head.lenient {
			e = exec("runs a command named by the function's arguments")
		}
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
	e = c.proveOptions(c.prove(e))
	if s.unseen != "" && !e.none && e.tier < airlock.TierWrite && !bashBuiltins[name] {
		e = exec("runs " + name + ", which " + s.unseen + " may have replaced with a function")
	}
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
	lose := func() { s.cwd, s.lost = "", true }
	switch c.name {
	case "popd":
		if n := len(s.dirs); n > 0 && len(ops) == 0 {
			s.cwd, s.dirs = s.dirs[n-1], s.dirs[:n-1]
			s.lost = s.cwd == ""
		} else {
			lose()
		}
		return
	case "pushd":
		if len(ops) == 0 || strings.HasPrefix(ops[0].val, "+") {
			lose() // rotates the stack
			return
		}
		s.dirs = append(s.dirs, s.cwd)
	}
	if len(ops) == 0 {
		s.cwd, s.lost = "~", false
		return
	}
	if !ops[0].static || ops[0].glob || ops[0].val == "" || ops[0].val == "-" {
		lose()
		return
	}
	v := ops[0].val
	if throughLink(v) {
		lose()
		return
	}
	if v[0] != '/' && v[0] != '~' && s.cwd == "" {
		return // relative to an unknown directory: still unknown
	}
	s.cwd, s.lost = resolvePath(s.cwd, v), false
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
	share   bool   // the script runs in the same shell (eval): what it assigns stays
	xtrace  bool   // the shell traces the script (sh -x): it prints every command's words
	params  []value
	setArgs bool // params are the script's positional parameters (sh -c SCRIPT NAME ARGS...)
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
	if n.share {
		inner = s
		saved := s.in
		defer func() { s.in = saved }()
	}
	inner.in = n.in
	if n.setCwd {
		inner.cwd, inner.lost = n.cwd, n.cwd == ""
	}
	if n.setArgs {
		inner.params = n.params
	}
	inner.xtrace = inner.xtrace || n.xtrace
	var err error
	switch {
	case n.unknown != "":
		err = a.add(commandOf(n.text, "", unknown(n.unknown), pos))
	case n.argv != nil:
		if len(n.argv) == 0 {
			return nil
		}
		err = a.runCall(inner, &call{words: n.argv, in: n.in, cwd: inner.cwd, start: a.start, lost: inner.lost, xargs: n.xargs, plainDir: &a.plainDir, cat: a.cat},
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
// only sets the command's environment): what setting the variable does
// (assignEffect), the subscript of an array element (evaluated as
// arithmetic), and, for a bare one, the value the variable holds after it.
func (a *walker) walkAssign(s *scope, as *syntax.Assign, bare bool, cmd string) error {
	if as.Name == nil || as.Naked {
		return a.walkNode(s, as)
	}
	name := as.Name.Value
	pos := positionOf(as.Pos())
	if !bare && name == "IFS" && (cmd == "read" || cmd == "mapfile" || cmd == "readarray" || cmd != "" && !bashBuiltins[cmd]) {
		// IFS=… read splits that one line; a program does not see IFS (bash
		// does not take it from the environment).
	} else if err := a.assignEffect(s, name, as, as.Value); err != nil {
		return err
	}
	if as.Index != nil {
		if err := a.arithVars(s, as.Index, pos); err != nil {
			return err
		}
	}
	if err := a.walkNode(s, as); err != nil {
		return err
	}
	if err := a.arraySubscripts(s, as); err != nil {
		return err
	}
	v := s.arrayValue(as)
	if as.Array == nil {
		v = s.assignValue(as.Value)
		if as.Append {
			v = concat(s.lookup(name), v)
		}
	}
	if s.lookup(name).integer {
		// declare -i: the value is evaluated as arithmetic.
		for _, e := range v.elements() {
			if err := a.arithValue(s, e, "$"+name, pos, 0); err != nil {
				return err
			}
		}
		v = intValue()
	}
	if !bare {
		return nil
	}
	if as.Index != nil {
		v = s.lookup(name).union(v) // one element changes: any element may be either
		v.list = nil
	}
	s.set(name, v)
	return nil
}

// arraySubscripts evaluates the subscripts an array assignment names,
// a=([i]=x): those of an indexed array are arithmetic.
func (a *walker) arraySubscripts(s *scope, as *syntax.Assign) error {
	if as.Array == nil {
		return nil
	}
	for _, el := range as.Array.Elems {
		if el.Index != nil {
			if err := a.arithVars(s, el.Index, positionOf(el.Pos())); err != nil {
				return err
			}
		}
	}
	return nil
}

// arrayValue is what an array assignment, a=(x y), gives: the elements,
// each word expanded and split as command words are.
func (s *scope) arrayValue(as *syntax.Assign) value {
	if as.Array == nil {
		return value{}
	}
	var list []value
	if as.Append {
		list = slices.Clone(s.lookup(as.Name.Value).elements())
	}
	for _, el := range as.Array.Elems {
		if el.Value == nil {
			continue
		}
		ways := s.wordFields(el.Value)
		if len(ways) != 1 {
			list = append(list, valueOfFields(ways))
			continue
		}
		for _, f := range ways[0] {
			list = append(list, fieldValue(f))
		}
	}
	if list == nil {
		list = []value{}
	}
	return value{list: list}
}

// assignEffect records what setting variable name does, when it matters:
// PATH, LD_PRELOAD and the like change what later commands run; PAGER and
// EDITOR hold commands that programs run.
func (a *walker) assignEffect(s *scope, name string, n syntax.Node, w *syntax.Word) error {
	pos := positionOf(n.Pos())
	if reason, ok := sensitiveVar(name); ok {
		return a.add(commandOf(s.source(n), "", env(reason), pos))
	}
	if !commandVar(name) || w == nil {
		return nil
	}
	v := s.assignValue(w)
	if v.isDynamic() && !v.lenient {
		return a.add(commandOf(s.source(n), "", unknown("sets "+name+" to a command only known at run time"), pos))
	}
	for _, al := range v.alts {
		if err := a.runNested(s, &nested{via: name, script: commandScript(name, al.s)}, pos); err != nil {
			return err
		}
	}
	return nil
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
	nameref, integer, prints := variant == "nameref", false, false
	reason := ""
	e := inert("sets shell variables")
	var cmdVars []*syntax.Assign
	for _, as := range d.Args {
		if as.Name == nil {
			// An option (-x), or a word: "NAME=value" quoted, or dynamic.
			ways := s.wordFields(as.Value)
			for _, way := range ways {
				for _, f := range way {
					switch {
					case !f.static:
						if !f.lenient {
							reason = "sets a variable whose name is only known at run time"
						}
					case strings.HasPrefix(f.val, "-") || strings.HasPrefix(f.val, "+"):
						nameref = nameref || f.val[0] == '-' && strings.ContainsRune(f.val, 'n')
						integer = integer || f.val[0] == '-' && strings.ContainsRune(f.val, 'i')
						prints = prints || f.val[0] == '-' && strings.ContainsRune(f.val, 'p')
					default:
						full, val, hasValue := strings.Cut(f.val, "=")
						name, sub, indexed := strings.Cut(full, "[")
						if r, bad := sensitiveVar(name); bad && hasValue {
							reason = r
						}
						if indexed {
							if err := a.evalString(s, strings.TrimSuffix(sub, "]"), "the subscript of "+name, pos); err != nil {
								return err
							}
						}
						if hasValue && syntax.ValidName(name) && !indexed {
							s.set(name, knownValue(val))
						}
					}
				}
			}
			continue
		}
		name := as.Name.Value
		if as.Index != nil {
			if err := a.arithVars(s, as.Index, positionOf(as.Pos())); err != nil {
				return err
			}
		}
		switch {
		case as.Naked && prints:
			if v := s.lookup(name); v.secret && !v.lenient {
				e = effect{class: airlock.ClassCredentialsRead, cap: airlock.CapCredentialsRead, tier: airlock.TierPrivileged,
					reason: "prints $" + name + ", which holds " + v.dynamic}
			}
		case as.Naked:
			v := s.lookup(name)
			if variant == "local" || variant == "declare" || variant == "typeset" {
				if _, assigned := s.vars[name]; !assigned {
					v = knownValue("") // a new local or declared variable is empty
				}
			}
			v.integer = v.integer || integer
			s.set(name, v)
		default:
			if err := a.arraySubscripts(s, as); err != nil {
				return err
			}
			v := s.arrayValue(as)
			if as.Array == nil {
				v = s.assignValue(as.Value)
			}
			if integer || s.lookup(name).integer {
				// declare -i evaluates the value as arithmetic when assigning.
				for _, e := range v.elements() {
					if err := a.arithValue(s, e, "$"+name, positionOf(as.Pos()), 0); err != nil {
						return err
					}
				}
				v = intValue()
			}
			v.integer = integer
			if nameref {
				if t := v; t.isDynamic() || len(t.alts) != 1 || !syntax.ValidName(t.alts[0].s) {
					reason = "makes " + name + " refer to a variable only known at run time"
				} else if _, bad := sensitiveVar(t.alts[0].s); bad {
					reason = "makes " + name + " refer to " + t.alts[0].s + ", which can change what later commands run"
				}
			}
			s.set(name, v)
		}
		if r, bad := sensitiveVar(name); bad && !as.Naked {
			reason = r
		} else if commandVar(name) && as.Value != nil {
			cmdVars = append(cmdVars, as)
		}
	}
	if nameref {
		// What a name refers to is assigned through it: Airlock no longer
		// knows what any variable holds.
		s.forgetVars("a variable reference (declare -n)")
	}
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
// process substitutions, assignments hidden in ${X:=…} or (( X = … )), and
// the strings bash evaluates (arithmetic, subscripts, ${!ref}, ${x@P}).
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
			err = a.arithVars(s, n.X, positionOf(n.Pos()))
		case *syntax.ParamExp:
			err = a.paramEval(s, n)
		case *syntax.BinaryArithm:
			if arithAssign(n.Op) {
				if name := arithName(n.X); name != "" {
					err = a.assignEffect(s, name, n, nil)
					s.set(name, intValue())
				}
			}
		case *syntax.UnaryArithm:
			if n.Op == syntax.Inc || n.Op == syntax.Dec {
				if name := arithName(n.X); name != "" {
					err = a.assignEffect(s, name, n, nil)
					s.set(name, intValue())
				}
			}
		}
		return true
	})
	return err
}

// paramEval analyses what expanding a parameter evaluates or assigns:
// ${X:=…} assigns X; ${a[i]} and ${s:o:l} evaluate arithmetic; ${!ref}
// reads the variable ref names, whose subscript is evaluated; ${x@P}
// expands x's value as a prompt.
func (a *walker) paramEval(s *scope, n *syntax.ParamExp) error {
	if n.Param == nil {
		return nil
	}
	pos := positionOf(n.Pos())
	name := n.Param.Value
	if n.Exp != nil && (n.Exp.Op == syntax.AssignUnset || n.Exp.Op == syntax.AssignUnsetOrNull) {
		if err := a.assignEffect(s, name, n, n.Exp.Word); err != nil {
			return err
		}
		s.set(name, s.operate(n, s.lookup(name)))
	}
	if n.Index != nil && !isAllIndex(n.Index) {
		if err := a.arithVars(s, n.Index, pos); err != nil {
			return err
		}
	}
	if n.Slice != nil {
		if err := a.arithVars(s, n.Slice.Offset, pos); err != nil {
			return err
		}
		if err := a.arithVars(s, n.Slice.Length, pos); err != nil {
			return err
		}
	}
	if n.Excl && n.Names == 0 {
		ref := s.lookup(name)
		if ref.isDynamic() && !ref.lenient {
			return a.add(commandOf(s.source(n), "", unknown("reads the variable $"+name+" names, which is only known at run time; a subscript in it would run commands"), pos))
		}
		for _, al := range ref.alts {
			if _, sub, ok := strings.Cut(al.s, "["); ok {
				if err := a.evalString(s, strings.TrimSuffix(sub, "]"), "the subscript in $"+name, pos); err != nil {
					return err
				}
			}
		}
	}
	if n.Exp != nil && (n.Exp.Op == syntax.ErrorUnset || n.Exp.Op == syntax.ErrorUnsetOrNull) && n.Exp.Word != nil {
		// ${x:?MESSAGE} prints MESSAGE when x is unset, whatever the command.
		if v := s.assignValue(n.Exp.Word); v.secret && !v.lenient {
			return a.add(commandOf(s.source(n), "", maySecret("prints "+s.source(n.Exp.Word)+" if $"+name+
				" is unset, and it holds "+v.dynamic), pos))
		}
	}
	if n.Exp != nil && n.Exp.Op == syntax.OtherParamOps {
		if op, _ := staticWord(n.Exp.Word); op == "P" {
			return a.evalPrompt(s, s.paramValue(n), "${"+name+"@P}", pos)
		}
	}
	return nil
}

// walkTest walks a [[ ]] test: its substitutions; the operands of -eq,
// -lt … are evaluated as arithmetic; -v NAME evaluates NAME's subscript.
func (a *walker) walkTest(s *scope, x syntax.TestExpr) error {
	if err := a.walkNode(s, x); err != nil {
		return err
	}
	var err error
	syntax.Walk(x, func(n syntax.Node) bool {
		if err != nil {
			return false
		}
		switch n := n.(type) {
		case *syntax.BinaryTest:
			switch n.Op {
			case syntax.TsMatch, syntax.TsMatchShort, syntax.TsNoMatch, syntax.TsReMatch, syntax.TsBefore, syntax.TsAfter:
				// Comparing a secret tells it, a pattern at a time.
				err = a.secretCompared(s, n.X, n.Y)
			case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
				pos := positionOf(n.Pos())
				for _, operand := range []syntax.TestExpr{n.X, n.Y} {
					if w, ok := operand.(*syntax.Word); ok && err == nil {
						// The operand's value is evaluated: [[ $x -eq 1 ]]
						// evaluates what x holds, [[ x -eq 1 ]] too.
						err = a.arithValue(s, s.assignValue(w), s.source(w), pos, 0)
					}
				}
			}
		case *syntax.UnaryTest:
			if n.Op == syntax.TsVarSet {
				if w, ok := n.X.(*syntax.Word); ok {
					err = a.testVarSet(s, w, positionOf(n.Pos()))
				}
			}
		}
		return true
	})
	return err
}

// secretCompared records a comparison of operands one of which may hold
// a secret: its result tells the secret, bit by bit.
func (a *walker) secretCompared(s *scope, operands ...syntax.Node) error {
	for _, o := range operands {
		w, ok := o.(*syntax.Word)
		if !ok {
			continue
		}
		if v := s.assignValue(w); v.secret && !v.lenient {
			return a.add(commandOf(s.source(w), "", maySecret("compares "+s.source(w)+", which holds "+v.dynamic+
				": the result tells it"), positionOf(w.Pos())))
		}
	}
	return nil
}

// testVarSet analyses [[ -v NAME ]]: a subscript in NAME is evaluated.
func (a *walker) testVarSet(s *scope, w *syntax.Word, pos position) error {
	for _, way := range s.fieldsOf(w) {
		for _, f := range way {
			if !f.static {
				if f.lenient {
					continue
				}
				return a.add(commandOf(s.source(w), "[[", unknown("tests a variable named only at run time, whose subscript would run commands"), pos))
			}
			if _, sub, ok := strings.Cut(f.val, "["); ok {
				if err := a.evalString(s, strings.TrimSuffix(sub, "]"), "the subscript in -v "+f.val, pos); err != nil {
					return err
				}
			}
		}
	}
	return nil
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
			v := s.assignValue(r.Word)
			switch {
			case !v.isDynamic() && len(v.alts) == 1 && v.alts[0].s == "/dev/null":
				in = input{kind: inNull}
			case !v.isDynamic() && len(v.alts) == 1 && !v.alts[0].under:
				in = input{kind: inFile, text: v.alts[0].s}
			default:
				in = input{kind: inFile, text: s.source(r.Word)}
			}
		case syntax.Hdoc, syntax.DashHdoc:
			if t, ok := heredoc(r); ok {
				in = input{kind: inText, text: t}
			} else {
				in = s.textInput(s.assignValue(r.Hdoc), "")
			}
		case syntax.WordHdoc:
			in = s.textInput(s.assignValue(r.Word), "\n")
		case syntax.DplIn:
			in = input{}
		}
	}
	return in
}

// textInput is the input a here-document or here-string with expansions
// gives: its text when every expansion is known, else dynamic, keeping
// whether it may hold a secret.
func (s *scope) textInput(v value, end string) input {
	if !v.isDynamic() && len(v.alts) == 1 && !v.alts[0].under {
		return input{kind: inText, text: v.alts[0].s + end}
	}
	return input{kind: inDynamic, secret: v.secret && !v.lenient, from: orElse(v.dynamic, "a text with expansions")}
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

// redirect records a redirection that writes a file, reads a secret or a
// file only known at run time, or opens a network connection: for each way
// its target may expand.
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
	mark := len(a.cmds)
	for _, way := range s.wordFields(r.Word) {
		target := arg{text: s.source(r.Word), from: "a redirection's target"}
		if len(way) > 0 {
			target = way[0]
			target.text = s.source(r.Word)
		}
		if err := a.redirectTo(s, r, e, target); err != nil {
			return err
		}
	}
	a.dedupe(mark, mark+1)
	return nil
}

// redirectTo records a redirection to one target.
func (a *walker) redirectTo(s *scope, r *syntax.Redirect, e effect, target arg) error {
	pos := positionOf(r.Pos())
	if reason, ok := netRedirect(r.Word, target); ok {
		e = net(airlock.ClassNetConnect, reason)
		return a.add(commandOf(s.redirText(r, target.text), "", e, pos))
	}
	v, ok := target.pathValue()
	if !ok && e.tier == 0 {
		if target.static || target.lenient || target.subst {
			return nil
		}
		e = maySecret("reads a file only known at run time (" + target.text + ", which holds " +
			orElse(target.from, "a value only known at run time") + "): it may be a secret")
		return a.add(commandOf(s.redirText(r, target.text), "", e, pos))
	}
	if ok && r.Op == syntax.RdrIn && throughLink(v) {
		return a.add(commandOf(s.redirText(r, target.text), "", linkRead(v), pos))
	}
	if ok {
		p := resolvePath(s.cwd, v)
		if read, ok := secretRead(a.cat, p, target.glob); ok && r.Op == syntax.RdrIn {
			e = read
		} else if target.under && r.Op == syntax.RdrIn && a.cat.HoldsSecrets(sensitive.Clean(p, "")) {
			e = maySecret("reads a file under " + p + ", which holds secrets")
		} else if e.tier == 0 && s.lost && v != "" && v[0] != '/' && v[0] != '~' {
			e = maySecret("reads " + target.text + " relative to a directory only known at run time, which may hold secrets")
		} else if e.tier == 0 {
			return nil
		} else if target.static && sensitive.IsNullDevice(sensitive.Clean(p, "")) {
			return nil
		}
		raiseWrite(a.cat, &e, p, target.glob)
	}
	return a.add(commandOf(s.redirText(r, target.text), "", e, pos))
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
