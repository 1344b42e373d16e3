package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Strings the shell evaluates later. Bash evaluates arithmetic
// recursively: a variable's value is itself an arithmetic expression, and
// an array subscript in it is expanded, running the command substitutions
// it holds, so x='a[$(rm -rf /)]'; echo $((x)) runs rm although no
// substitution appears unquoted. The same holds wherever bash reads a
// variable's name with a subscript: printf -v, read, declare, [[ -v ]],
// ${!ref}; and ${x@P} expands x's value as a prompt, substitutions
// included. Each such string is analysed as code where its value is
// known, and is code only known at run time where it is not.

// arith analyses an arithmetic expression bash evaluates: its own
// substitutions, and the values of the variables it names.
func (a *walker) arith(s *scope, x syntax.ArithmExpr, pos position) error {
	if x == nil {
		return nil
	}
	// What the variables hold before the expression assigns them (x++
	// evaluates x's value first), then the substitutions and assignments.
	if err := a.arithVars(s, x, pos); err != nil {
		return err
	}
	return a.walkNode(s, x)
}

// arithVars evaluates the variables an arithmetic expression names, as
// bash does.
func (a *walker) arithVars(s *scope, x syntax.ArithmExpr, pos position) error {
	if x == nil {
		return nil
	}
	var err error
	syntax.Walk(x, func(n syntax.Node) bool {
		if err != nil {
			return false
		}
		switch n := n.(type) {
		case *syntax.BinaryArithm:
			if n.Op == syntax.Assgn {
				// x = …: x's old value is not read; a subscript of x is.
				if w, ok := n.X.(*syntax.Word); ok {
					if _, sub, indexed := strings.Cut(w.Lit(), "["); indexed {
						err = a.evalString(s, strings.TrimSuffix(sub, "]"), "a subscript", pos)
					} else if len(w.Parts) == 1 {
						if p, ok := w.Parts[0].(*syntax.ParamExp); ok && p.Index != nil {
							err = a.arithVars(s, p.Index, pos)
						}
					}
				}
				if err == nil {
					err = a.arithVars(s, n.Y, pos)
				}
				return false
			}
		case *syntax.Word:
			// A bare name in arithmetic: x, or a[i] whose subscript the
			// parser kept in the word.
			if lit := n.Lit(); lit != "" {
				name, sub, indexed := strings.Cut(lit, "[")
				if syntax.ValidName(name) {
					err = a.arithValue(s, s.lookup(name), name, pos, 0)
				}
				if err == nil && indexed {
					err = a.evalString(s, strings.TrimSuffix(sub, "]"), "the subscript of "+name, pos)
				}
				return true
			}
			if quotedWord(n) {
				// let 'x=a[…]', (( "$x" )): the word's value is evaluated.
				err = a.arithValue(s, s.assignValue(n), s.source(n), pos, 0)
				return false
			}
		case *syntax.ParamExp:
			// $x, or a[i] in arithmetic: its value is pasted in, then
			// evaluated. Its subscript is paramEval's (walkNode).
			if n.Param != nil && !n.Length {
				err = a.arithValue(s, s.operate(n, s.paramValue(n)), "$"+n.Param.Value, pos, 0)
			}
			return false
		case *syntax.CmdSubst:
			err = a.arithValue(s, s.substValue(n), "the output of $(…)", pos, 0)
			return false
		case *syntax.ProcSubst, *syntax.ArithmExp:
			return false // walkNode's
		}
		return true
	})
	return err
}

// quotedWord reports whether a word has a quoted part.
func quotedWord(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			return true
		}
	}
	return false
}

// maxArithHops bounds how far a chain of variables naming variables is
// followed (bash stops at 1024 levels with an error).
const maxArithHops = 8

// arithValue analyses what evaluating v as arithmetic runs: an integer
// runs nothing; a name is followed; any other string is parsed as an
// arithmetic expression and analysed; a string only known at run time may
// run any command.
func (a *walker) arithValue(s *scope, v value, what string, pos position, hops int) error {
	if v.lenient && !v.secret {
		return nil // checked where the function is called
	}
	if v.isDynamic() {
		return a.add(commandOf(what, "", unknown("evaluates "+what+" as arithmetic, and it holds "+v.dynamic+
			": a string only known at run time, whose array subscripts would run commands"), pos))
	}
	for _, al := range v.alts {
		str := strings.TrimSpace(al.s)
		if str == "" || isNumber(str) || a.evaluating[str] || hops >= maxArithHops {
			// Evaluating a string again inside itself, bash stops with an
			// error: nothing new runs.
			continue
		}
		if a.evaluating == nil {
			a.evaluating = map[string]bool{}
		}
		a.evaluating[str] = true
		var err error
		if syntax.ValidName(str) {
			err = a.arithValue(s, s.lookup(str), str, pos, hops+1)
		} else {
			err = a.runNested(s, &nested{via: what, script: "(( " + str + " ))", lenient: true}, pos)
		}
		delete(a.evaluating, str)
		if err != nil {
			return err
		}
	}
	return nil
}

// evalString analyses a string bash evaluates as arithmetic.
func (a *walker) evalString(s *scope, str, what string, pos position) error {
	return a.arithValue(s, knownValue(str), what, pos, 0)
}

// isNumber reports whether s is an integer constant bash reads without
// evaluating anything: 42, -7, 0x1f, 8#17.
func isNumber(s string) bool {
	s = strings.TrimLeft(s, "+-")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '#' || c == '_' || c == '@') {
			return false
		}
	}
	return s[0] >= '0' && s[0] <= '9'
}

// evalName analyses a variable name that a built-in assigns or tests
// (printf -v NAME, read NAME, [[ -v NAME ]], unset NAME): a subscript in
// it is evaluated as arithmetic. A name only known at run time may hold
// any subscript.
func (c *call) evalName(name arg, via string) {
	if !name.static {
		if !name.lenient {
			c.runUnknown(via, name.text, "names a variable only known at run time, whose array subscript would run commands")
		}
		return
	}
	if _, sub, ok := strings.Cut(name.val, "["); ok && !isNumber(strings.TrimSuffix(sub, "]")) {
		c.runScript(via, "(( "+strings.TrimSuffix(sub, "]")+" ))", input{}).lenient = true
	}
}

// evalPrompt analyses ${x@P}: x's value expanded as a prompt, which runs
// the command substitutions in it.
func (a *walker) evalPrompt(s *scope, v value, what string, pos position) error {
	if v.list != nil {
		for _, e := range v.list { // ${a[@]@P}: each element
			if err := a.evalPrompt(s, e, what, pos); err != nil {
				return err
			}
		}
		return nil
	}
	if v.lenient && !v.secret {
		return nil
	}
	if v.isDynamic() {
		return a.add(commandOf(what, "", unknown("expands "+what+" as a prompt, and it holds "+v.dynamic+
			": a string only known at run time, whose substitutions would run commands"), pos))
	}
	for _, al := range v.alts {
		if !strings.ContainsAny(al.s, "$`") {
			continue
		}
		// As the body of a here-document: expansions, no word splitting.
		script := ": <<AIRLOCK_PROMPT_END\n" + al.s + "\nAIRLOCK_PROMPT_END\n"
		if err := a.runNested(s, &nested{via: what, script: script, lenient: true}, pos); err != nil {
			return err
		}
	}
	return nil
}
