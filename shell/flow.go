package shell

import (
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/airlock-dev/airlock"
	"mvdan.cc/sh/v3/syntax"
)

// Control flow: where a branch may or may not run, what it assigns joins
// what was there before (scope.join); a loop's body may run any number of
// times, so what it assigns reaches its start again.

// walkIf walks an if: the first condition always runs, then one branch.
func (a *walker) walkIf(s *scope, c *syntax.IfClause, in input) error {
	if err := a.walkStmts(s, c.Cond, in); err != nil {
		return err
	}
	then := s.sub()
	if err := a.walkStmts(then, c.Then, in); err != nil {
		return err
	}
	other := s.sub()
	switch {
	case c.Else == nil:
	case len(c.Else.Cond) == 0: // else
		if err := a.walkStmts(other, c.Else.Then, in); err != nil {
			return err
		}
	default: // elif
		if err := a.walkIf(other, c.Else, in); err != nil {
			return err
		}
	}
	s.join(then, other)
	return nil
}

// walkCase walks a case: the word, then at most one item (or, with ;& and
// ;;&, the items after it).
func (a *walker) walkCase(s *scope, c *syntax.CaseClause, in input) error {
	if err := a.walkWord(s, c.Word); err != nil {
		return err
	}
	if err := a.secretCompared(s, c.Word); err != nil {
		return err
	}
	branches := []*scope{s.sub()} // no pattern matched
	var prev *scope
	for _, item := range c.Items {
		b := s.sub()
		if prev != nil {
			b.join(s.sub(), prev) // ;& and ;;& go on from the item before
		}
		for _, p := range item.Patterns {
			if err := a.walkWord(b, p); err != nil {
				return err
			}
		}
		if err := a.walkStmts(b, item.Stmts, in); err != nil {
			return err
		}
		branches = append(branches, b)
		prev = nil
		if item.Op != syntax.Break {
			prev = b
		}
	}
	s.join(branches...)
	return nil
}

// walkFor walks a for loop: its variable takes each of the words in turn.
func (a *walker) walkFor(s *scope, c *syntax.ForClause, in input) error {
	switch l := c.Loop.(type) {
	case *syntax.WordIter:
		items := value{}
		if !l.InPos.IsValid() {
			items = s.lookup("@").anyElement() // for x; do: the positional parameters
		} else {
			first := true
			for _, w := range l.Items {
				if err := a.walkWord(s, w); err != nil {
					return err
				}
				for _, way := range s.wordFields(w) {
					for _, f := range way {
						v := fieldValue(f)
						if first {
							items, first = v, false
						} else {
							items = items.union(v)
						}
					}
				}
			}
			if first {
				items = knownValue("") // no words: the body never runs
			}
		}
		name := l.Name.Value
		return a.loop(s, len(a.cmds), c, func(b *scope) { b.set(name, items) }, func(b *scope) error {
			return a.walkStmts(b, c.Do, in)
		})
	case *syntax.CStyleLoop:
		pos := positionOf(c.Pos())
		if err := a.arith(s, l.Init, pos); err != nil {
			return err
		}
		return a.loop(s, len(a.cmds), c, nil, func(b *scope) error {
			if err := a.arith(b, l.Cond, pos); err != nil {
				return err
			}
			if err := a.walkStmts(b, c.Do, in); err != nil {
				return err
			}
			return a.arith(b, l.Post, pos)
		})
	}
	return nil
}

// fieldValue is the value a field holds, as a variable's value.
func fieldValue(f arg) value {
	switch {
	case f.static:
		return value{alts: []alt{{s: f.val, glob: f.glob}}}
	case f.under:
		return value{alts: []alt{{s: f.path, under: true}}}
	}
	return value{dynamic: orElse(f.from, "a value only known at run time"), secret: f.secret, lenient: f.lenient}
}

// maxLoopPasses bounds the passes over a loop's body that follow the
// values it assigns back to its start; a value still changing after them
// is only known at run time.
const maxLoopPasses = 3

// loop walks a loop whose body may run any number of times. enter binds
// the loop's variable at the start of each pass. Entries the body repeats
// from those recorded since from (the loop's condition) are dropped. When the body may change
// what later commands see (a variable, the directory), it is first walked
// without recording, until what reaches its start settles.
func (a *walker) loop(s *scope, from int, body syntax.Node, enter func(*scope), walk func(*scope) error) error {
	entry := s.sub()
	if enter != nil {
		enter(entry)
	}
	if mayChange(body) {
		for pass := 0; ; pass++ {
			mark := len(a.cmds)
			trial := entry.sub()
			err := walk(trial)
			a.cmds = a.cmds[:mark]
			if err != nil {
				return err
			}
			next := entry.sub()
			next.join(entry.sub(), trial)
			if enter != nil {
				enter(next)
			}
			if sameState(next, entry) {
				break
			}
			if pass+1 == maxLoopPasses {
				next.widen(entry)
				entry = next
				break
			}
			entry = next
		}
	}
	b := entry.sub()
	mark := len(a.cmds)
	if err := walk(b); err != nil {
		return err
	}
	a.dedupe(from, mark)
	s.join(s.sub(), b)
	return nil
}

// sameState reports whether two scopes leave later commands the same.
func sameState(x, y *scope) bool {
	return x.cwd == y.cwd && x.lost == y.lost && x.opaque == y.opaque && x.unseen == y.unseen && x.xtrace == y.xtrace &&
		sameMap(x.vars, y.vars) && slices.EqualFunc(x.params, y.params, value.equal) && (x.params == nil) == (y.params == nil) &&
		maps.EqualFunc(x.funcs, y.funcs, slices.Equal)
}

// widen makes every variable whose value differs from before's only known
// at run time, and the directory lost if it differs.
func (s *scope) widen(before *scope) {
	for name, v := range s.vars {
		if !v.equal(before.lookup(name)) {
			s.set(name, v.union(dynamicValue("a value a loop keeps changing", v.secret)))
		}
	}
	if s.cwd != before.cwd {
		s.cwd, s.lost = "", true
	}
	if !slices.EqualFunc(s.params, before.params, value.equal) {
		s.params = nil
	}
}

// mayChange reports whether running n may change what later commands see:
// a variable, the directory, the positional parameters, a function.
// It errs towards yes.
func mayChange(n syntax.Node) bool {
	found := false
	syntax.Walk(n, func(n syntax.Node) bool {
		if found {
			return false
		}
		switch n := n.(type) {
		case *syntax.Assign, *syntax.DeclClause, *syntax.LetClause, *syntax.ArithmCmd, *syntax.ArithmExp,
			*syntax.FuncDecl, *syntax.ForClause:
			found = true
		case *syntax.ParamExp:
			found = n.Exp != nil && (n.Exp.Op == syntax.AssignUnset || n.Exp.Op == syntax.AssignUnsetOrNull)
		case *syntax.CallExpr:
			if len(n.Args) == 0 {
				return true
			}
			name := n.Args[0].Lit()
			if name == "" || !stateless()[name] {
				found = true // read, cd, set, eval, a function … or a name only known at run time
			}
		}
		return !found
	})
	return found
}

// stateless are commands that set no variable of the shell and leave its
// directory: every program (which runs in a process of its own), most
// built-ins. Only these are listed; anything else counts as changing state.
var stateless = sync.OnceValue(func() map[string]bool {
	m := stringSet(":", "true", "false", "echo", "test", "[", "pwd", "type", "help", "jobs", "times", "caller",
		"dirs", "exit", "return", "break", "continue", "umask", "ulimit", "wait")
	for name := range programs() {
		if !bashBuiltins[name] && name != "eval" && name != "source" && name != "." {
			m[name] = true
		}
	}
	return m
})

// walkFuncDecl records a function for the calls that follow, and walks its
// body where it is defined, so that what it does counts even if the script
// calls it in a way Airlock does not follow. There its arguments, and the
// variables it reads, are only known at a call: a call walks the body
// again with them (callFunction).
func (a *walker) walkFuncDecl(s *scope, c *syntax.FuncDecl) error {
	if c.Name == nil {
		// The parser takes "()()" for a zsh anonymous function even in
		// bash mode; bash rejects it.
		return &parseError{int(c.Position.Line()), int(c.Position.Col()), "a function without a name is not bash"}
	}
	if c.Body == nil {
		return nil
	}
	s.define(c.Name.Value, c.Body)
	body := s.sub()
	body.params = nil
	// Bash calls these itself, with arguments Airlock does not see.
	body.lenient = c.Name.Value != "command_not_found_handle" && c.Name.Value != "command_not_found_handler"
	return a.walkStmt(body, c.Body, input{})
}

// maxCalls bounds nested function calls (recursion); a deeper call is
// code Airlock does not follow.
const maxCalls = 8

// callFunction walks the bodies a function may have for one call, in the
// scope it is called from (a function runs in the calling shell), with the
// call's words as its arguments. Entries the body's walk where it was
// defined already recorded are not recorded twice.
func (a *walker) callFunction(s *scope, c *call, bodies []*syntax.Stmt, pos position) error {
	if s.calls >= maxCalls {
		return a.add(commandOf(c.text(), c.name, unknown("calls function "+c.name+" recursively, deeper than Airlock follows"), pos))
	}
	if err := a.add(commandOf(c.text(), c.name, inert("calls function "+c.name+", defined in the script"), pos)); err != nil {
		return err
	}
	args := valuesOf(c.words[1:])
	branches := make([]*scope, 0, len(bodies))
	for _, body := range bodies {
		b := s.sub()
		if body == nil { // it may not be defined: the name is a program
			branches = append(branches, b)
			continue
		}
		b.params, b.calls = args, s.calls+1
		mark := len(a.cmds)
		if err := a.walkStmt(b, body, c.in); err != nil {
			return err
		}
		a.dedupe(0, mark)
		// A function's local variables are its own: the caller's come back.
		for _, name := range locals(body) {
			if v, ok := s.vars[name]; ok {
				b.set(name, v)
			} else if b.vars != nil {
				b.vars = cloneVars(b.vars)
				delete(b.vars, name)
			}
		}
		b.params, b.calls = s.params, s.calls
		branches = append(branches, b)
	}
	s.join(branches...)
	return nil
}

// locals returns the variables a function body declares local (local,
// and declare or typeset without -g).
func locals(body *syntax.Stmt) []string {
	var out []string
	syntax.Walk(body, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.FuncDecl:
			return n.Body == body // a nested function's locals are its own
		case *syntax.DeclClause:
			v := n.Variant.Value
			if v != "local" && v != "declare" && v != "typeset" {
				return true
			}
			for _, as := range n.Args {
				if as.Name == nil {
					if w, ok := staticWord(as.Value); ok && (w == "-g" || len(w) > 1 && w[0] == '-' && containsByte(w, 'g')) {
						return true // declare -g: global
					}
					continue
				}
				out = append(out, as.Name.Value)
			}
		}
		return true
	})
	return out
}

func containsByte(s string, b byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == b {
			return true
		}
	}
	return false
}

// dedupe drops the entries recorded since mark that repeat one recorded
// since from (a function's body walked again at a call, a command walked
// for each value a variable may hold, a loop's condition walked again).
func (a *walker) dedupe(from, mark int) {
	if mark >= len(a.cmds) {
		return
	}
	seen := make(map[string]bool, len(a.cmds)-from)
	for _, c := range a.cmds[from:mark] {
		seen[commandKey(c)] = true
	}
	out := a.cmds[:mark]
	for _, c := range a.cmds[mark:] {
		if k := commandKey(c); !seen[k] {
			seen[k] = true
			out = append(out, c)
		}
	}
	a.cmds = out
}

// commandKey is a string that two entries share exactly when they are
// the same.
func commandKey(c airlock.Command) string {
	return fmt.Sprintf("%q %q %s %s %d %q %d:%d %t %t %q", c.Text, c.Name, c.Class, c.Capability, c.Tier, c.Reason,
		c.Line, c.Col, c.Generic, c.Inert, c.Via)
}

func sameCommand(x, y airlock.Command) bool {
	return x.Text == y.Text && x.Name == y.Name && x.Class == y.Class && x.Capability == y.Capability &&
		x.Tier == y.Tier && x.Reason == y.Reason && x.Line == y.Line && x.Col == y.Col && x.Generic == y.Generic &&
		x.Inert == y.Inert && slices.Equal(x.Via, y.Via)
}
