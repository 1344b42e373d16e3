package shell

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// arg is one word of a command.
type arg struct {
	val    string // the value, when static
	text   string // as shown in airlock.Command.Text ("" for the extra words of a brace expansion)
	static bool   // the value is known before the script runs
	glob   bool   // has unquoted pattern characters the shell may expand
	subst  bool   // a process substitution <( ) standing for a file
	extra  bool   // a second or later word of a brace expansion
	// path stands for a dynamic word in path checks: find -exec's "{}" is a
	// file under find's start path, which under says.
	path  string
	under bool
	// from says where a dynamic word's value comes from ("the environment
	// ($X), which may hold a secret"); secret: it may be a secret; lenient:
	// a function's argument seen where the function is defined (see
	// scope.lenient), which a call checks.
	from    string
	secret  bool
	lenient bool
	// spread: at run time the word may be no field or several (an
	// unquoted expansion only known then, "$@" of unknown arguments), so
	// the words after it may land anywhere.
	spread bool
}

// pathValue is the path a word names, for path checks, if known.
func (a arg) pathValue() (string, bool) {
	switch {
	case a.static && a.val != "":
		return a.val, true
	case !a.static && a.path != "":
		return a.path, true
	}
	return "", false
}

// knownPath is pathValue for a word whose only expansion may be $HOME
// ("@$HOME/.ssh/id_rsa" names "@~/.ssh/id_rsa"; see known).
func (a *arg) knownPath() (string, bool) {
	switch {
	case a.static && a.val != "":
		return a.val, true
	case a.static:
		return "", false
	case a.path != "":
		return a.path, true
	}
	return known(*a).pathValue()
}

// literal is a word given literally (argv, or built by a rule).
func literal(v string) arg {
	return arg{val: v, text: quote(v), static: true}
}

// quote quotes v for bash only when it needs quoting.
func quote(v string) string {
	q, err := syntax.Quote(v, syntax.LangBash)
	if err != nil {
		return strconv.Quote(v) // only NUL bytes cannot be quoted
	}
	return q
}

func litValue(p syntax.WordPart) string {
	if lit, ok := p.(*syntax.Lit); ok {
		return lit.Value
	}
	return ""
}

// maxBraceWords bounds brace expansion; a word that expands to more is
// treated as dynamic.
const maxBraceWords = 64

// hasBraces reports whether w may hold a brace expansion: a "{" and a ","
// or ".." in its unquoted text ("{}" alone is find's placeholder).
func hasBraces(w *syntax.Word) bool {
	open, sep := false, false
	for _, p := range w.Parts {
		if lit, ok := p.(*syntax.Lit); ok {
			open = open || strings.ContainsRune(lit.Value, '{')
			sep = sep || strings.ContainsRune(lit.Value, ',') || strings.Contains(lit.Value, "..")
		}
	}
	return open && sep
}

// wordValue returns the value of a word whose value does not depend on
// run time: literals and quotes, not parameters or substitutions. Unquoted
// pattern characters stay in the value and set glob.
func wordValue(w *syntax.Word) (val string, static, glob bool) {
	if w == nil {
		return "", false, false
	}
	if len(w.Parts) == 1 {
		if lit, ok := w.Parts[0].(*syntax.Lit); ok && !strings.ContainsRune(lit.Value, '\\') {
			return lit.Value, true, hasGlob(lit.Value)
		}
	}
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			glob = glob || hasGlob(p.Value)
			unescape(&b, p.Value, "")
		case *syntax.SglQuoted:
			if p.Dollar {
				ansiC(&b, p.Value)
			} else {
				b.WriteString(p.Value)
			}
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok {
					return "", false, false
				}
				unescape(&b, lit.Value, "$`\"\\\n")
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

// hasGlob reports unescaped pattern characters in an unquoted literal; a
// "[" counts only with a "]" after it ("[" alone is the test command).
func hasGlob(lit string) bool {
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

// unescape writes s without its backslash escapes. escapable lists the
// characters a backslash escapes ("" means every character, as unquoted); a
// backslash-newline disappears.
func unescape(b *strings.Builder, s, escapable string) {
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

// ansiC decodes the escapes of a $'...' string.
func ansiC(b *strings.Builder, s string) {
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
			n, used := parseDigits(s[i+1:], 16, digits)
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
			n, used := parseDigits(s[i:], 8, 3)
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

// parseDigits reads up to max digits of base from the start of s.
func parseDigits(s string, base, max int) (n, used int) {
	for used < max && used < len(s) {
		d := digit(s[used])
		if d < 0 || d >= base {
			break
		}
		n = n*base + d
		used++
	}
	return n, used
}

func digit(c byte) int {
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

// staticPrefix is the start of a word as written, unquoted, up to its
// first expansion other than $HOME; complete when that is the whole word.
func staticPrefix(text string) (prefix string, complete bool) {
	var b strings.Builder
	quote := byte(0)
	for i := 0; i < len(text); i++ {
		ch := text[i]
		switch {
		case quote == '\'':
			if ch == '\'' {
				quote = 0
			} else {
				b.WriteByte(ch)
			}
		case strings.HasPrefix(text[i:], "${HOME}"):
			b.WriteByte('~') // $HOME is the home directory, as "~"
			i += len("${HOME}") - 1
		case strings.HasPrefix(text[i:], "$HOME") && !syntaxValidName("HOME"+text[i+5:min(i+6, len(text))]):
			b.WriteByte('~')
			i += len("$HOME") - 1
		case ch == '$' || ch == '`':
			return b.String(), false
		case ch == '\\' && i+1 < len(text):
			i++
			b.WriteByte(text[i])
		case ch == '"':
			if quote == '"' {
				quote = 0
			} else {
				quote = '"'
			}
		case ch == '\'':
			quote = '\''
		default:
			b.WriteByte(ch)
		}
	}
	return b.String(), quote == 0
}

// known returns a word whose only expansion is $HOME as a static word
// ("--output=$HOME/.bashrc" is "--output=~/.bashrc").
func known(a arg) arg {
	if a.static || a.subst || a.path != "" || !strings.Contains(a.text, "$") {
		return a // a placeholder (find's {}) keeps the path it stands for
	}
	if v, ok := staticPrefix(a.text); ok {
		return arg{val: v, text: a.text, static: true, glob: a.glob}
	}
	return a
}
