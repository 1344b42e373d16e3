package shell

import (
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Provenance: what a command writes, when that bounds what a later command
// reads. A program that lists file names (git ls-files, find ., ls) writes
// names of files under a directory, and filters that keep some of its
// lines (head, sort, grep) keep that; so the words xargs appends, the
// lines read reads and the fields of $( ) are files under that directory,
// like find -exec's {}: a read of them is a read under the directory,
// checked as one (raiseReadTree).

// pipeInput is the input a pipeline element gets from left, the command
// writing into the pipe.
func (s *scope) pipeInput(left *syntax.Stmt) input {
	in := input{kind: inPipe, text: printed(left)}
	if dir, ok := s.listerDir(left); ok {
		in.under = dir
	}
	return in
}

// substValue is what a command substitution $( ) holds: names of files
// under a directory when it lists them, else its output, only known at
// run time.
func (s *scope) substValue(cs *syntax.CmdSubst) value {
	if len(cs.Stmts) == 1 {
		if dir, ok := s.listerDir(cs.Stmts[0]); ok {
			return value{alts: []alt{{s: dir, under: true}}}
		}
		if counts(cs.Stmts[0]) {
			return intValue()
		}
	}
	return dynamicValue("the output of $(…)", false)
}

// counts reports whether st writes only integers: its last command counts
// (wc -l, grep -c, git rev-list --count) or prints a number (nproc).
func counts(st *syntax.Stmt) bool {
	for {
		b, ok := st.Cmd.(*syntax.BinaryCmd)
		if !ok || b.Op != syntax.Pipe {
			break
		}
		st = b.Y
	}
	ce, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(st.Redirs) > 0 && !onlyStdin(st.Redirs) {
		return false
	}
	words, ok := staticWords(ce)
	if !ok {
		return false
	}
	args := words[1:]
	switch words[0] {
	case "wc":
		// Reading its input, wc prints only the counts; given files, it
		// prints their names too.
		for _, w := range args {
			if !slices.Contains([]string{"-l", "-c", "-w", "-m", "--lines", "--bytes", "--words", "--chars"}, w) {
				return false
			}
		}
		return true
	case "grep", "egrep", "fgrep":
		// grep -c PATTERN [FILE]: one file, no name printed.
		count, files := false, 0
		for _, w := range args {
			switch {
			case w == "-c" || w == "--count":
				count = true
			case strings.HasPrefix(w, "-"):
				if strings.Trim(w[1:], "ciEFvwx") != "" {
					return false
				}
				count = count || strings.ContainsRune(w, 'c')
			default:
				files++
			}
		}
		return count && files <= 2
	case "nproc":
		return len(args) == 0
	case "id":
		return len(args) == 1 && (args[0] == "-u" || args[0] == "-g")
	case "date":
		return len(args) == 1 && args[0] == "+%s"
	case "git":
		return len(args) >= 2 && args[0] == "rev-list" && slices.Contains(args, "--count")
	}
	return false
}

// onlyStdin reports whether redirections only give a command its input or
// discard its errors.
func onlyStdin(redirs []*syntax.Redirect) bool {
	for _, r := range redirs {
		if r.Op != syntax.RdrIn && !(r.N != nil && r.N.Value == "2") {
			return false
		}
	}
	return true
}

// listerDir returns the directory under which every line st writes names
// a file, when st lists file names.
func (s *scope) listerDir(st *syntax.Stmt) (string, bool) {
	if st == nil || st.Negated || st.Background || st.Coprocess {
		return "", false
	}
	for _, r := range st.Redirs {
		if r.N == nil || r.N.Value != "2" {
			return "", false // only stderr may go elsewhere
		}
	}
	switch c := st.Cmd.(type) {
	case *syntax.BinaryCmd:
		if c.Op != syntax.Pipe {
			return "", false
		}
		dir, ok := s.listerDir(c.X)
		return dir, ok && s.keepsLines(c.Y)
	case *syntax.CallExpr:
		words, ok := staticWords(c)
		if !ok {
			return "", false
		}
		return s.lists(words)
	}
	return "", false
}

// staticWords returns a command's words when none has an expansion.
func staticWords(c *syntax.CallExpr) ([]string, bool) {
	if len(c.Assigns) > 0 || len(c.Args) == 0 {
		return nil, false
	}
	out := make([]string, 0, len(c.Args))
	for _, w := range c.Args {
		v, static, _ := wordValue(w)
		if !static {
			return nil, false
		}
		out = append(out, v)
	}
	return out, true
}

// keepsLines reports whether st writes only lines it reads: head, tail,
// sort, uniq, grep with a pattern and options that select lines.
func (s *scope) keepsLines(st *syntax.Stmt) bool {
	if st == nil || len(st.Redirs) > 0 {
		return false
	}
	switch c := st.Cmd.(type) {
	case *syntax.BinaryCmd:
		return c.Op == syntax.Pipe && s.keepsLines(c.X) && s.keepsLines(c.Y)
	case *syntax.CallExpr:
		words, ok := staticWords(c)
		if !ok {
			return false
		}
		var allowed string
		switch words[0] {
		case "head", "tail":
			allowed = "-n -q"
		case "sort":
			allowed = "-u -r -n -V -f -z"
		case "uniq":
			allowed = "-z"
		case "tac", "shuf":
			allowed = ""
		case "grep", "egrep", "fgrep":
			return grepKeeps(words[1:])
		default:
			return false
		}
		ops := 0
		for i := 1; i < len(words); i++ {
			w := words[i]
			switch {
			case w == "-n" && (words[0] == "head" || words[0] == "tail"):
				i++ // head -n N
			case strings.HasPrefix(w, "-") && len(w) > 1:
				if (words[0] == "head" || words[0] == "tail") && (isNumber(w[1:]) || strings.HasPrefix(w, "-n") && isNumber(w[2:])) {
					continue // head -5, head -n5
				}
				if !slices.Contains(strings.Fields(allowed), w) {
					return false
				}
			default:
				ops++
			}
		}
		return ops == 0 // a file operand: it writes that file's lines
	}
	return false
}

// grepKeeps reports whether grep with args writes only lines it reads: a
// pattern, and options that only select lines.
func grepKeeps(args []string) bool {
	pattern := false
	for i := 0; i < len(args); i++ {
		w := args[i]
		switch {
		case w == "-e":
			i++
			pattern = true
		case strings.HasPrefix(w, "-") && len(w) > 1:
			if strings.Trim(w[1:], "viEFwxG") != "" {
				return false
			}
		case pattern:
			return false // a file
		default:
			pattern = true
		}
	}
	return pattern
}

// lists returns the directory under which every line a command with
// these (static) words writes names a file, when it is a lister.
func (s *scope) lists(words []string) (string, bool) {
	here := s.cwd
	if s.lost {
		return "", false
	}
	if here == "" {
		here = "."
	}
	within := func(ops []string) (string, bool) {
		for _, o := range ops {
			if path.IsAbs(o) || strings.HasPrefix(o, "~") || slices.Contains(strings.Split(o, "/"), "..") {
				return "", false
			}
		}
		return here, true
	}
	switch words[0] {
	case "git":
		if len(words) < 2 {
			return "", false
		}
		switch words[1] {
		case "ls-files":
			var ops []string
			for _, w := range words[2:] {
				switch {
				case w == "--" || w == "-z" || w == "--cached" || w == "-c" || w == "--others" || w == "-o" ||
					w == "--modified" || w == "-m" || w == "--deleted" || w == "-d" || w == "--exclude-standard" ||
					w == "--full-name" || w == "--deduplicate" || w == "--recurse-submodules":
				case strings.HasPrefix(w, "-"):
					return "", false
				default:
					ops = append(ops, w)
				}
			}
			return within(ops)
		case "diff":
			names := false
			var ops []string
			for _, w := range words[2:] {
				switch {
				case w == "--name-only":
					names = true
				case w == "--" || w == "--cached" || w == "--staged" || w == "-z" || w == "--relative" ||
					strings.HasPrefix(w, "--diff-filter="):
				case strings.HasPrefix(w, "-"):
					return "", false
				default:
					ops = append(ops, w)
				}
			}
			if !names {
				return "", false
			}
			return within(ops)
		}
	case "find":
		// find DIR [tests] [-print|-print0]: the start points come first.
		var starts []string
		i := 1
		for ; i < len(words); i++ {
			w := words[i]
			if strings.HasPrefix(w, "-") || w == "!" || w == "(" {
				break
			}
			starts = append(starts, w)
		}
		for _, w := range words[i:] {
			switch w {
			case "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-printf",
				"-fls", "-ls", "-L", "-follow":
				return "", false
			}
		}
		if len(starts) == 0 {
			starts = []string{"."}
		}
		if len(starts) != 1 {
			return "", false
		}
		// Every line starts with the start point: a name under it.
		return resolvePath(s.cwd, starts[0]), true
	case "rg":
		// rg --files [PATH...] and rg -l PATTERN [PATH...]
		files, list := false, false
		var ops []string
		for _, w := range words[1:] {
			switch {
			case w == "--files":
				files = true
			case w == "-l" || w == "--files-with-matches":
				list = true
			case w == "--hidden" || w == "-i" || w == "-F" || w == "-w" || w == "--no-ignore" || w == "-S" ||
				strings.HasPrefix(w, "-t") || strings.HasPrefix(w, "--type=") || strings.HasPrefix(w, "-g") || strings.HasPrefix(w, "--glob="):
			case strings.HasPrefix(w, "-"):
				return "", false
			default:
				ops = append(ops, w)
			}
		}
		switch {
		case files:
			return within(ops)
		case list && len(ops) > 0:
			return within(ops[1:])
		}
	}
	return "", false
}
