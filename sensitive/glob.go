package sensitive

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Names are compared as a case-insensitive file system compares them:
// macOS's and Windows' ignore case (with Unicode's folding: the Kelvin sign
// is a k), and HFS+ also ignores a few invisible code points (git's
// CVE-2014-9390 hid ".git" behind them). Patterns are matched the same way.

// ignorable reports whether HFS+ ignores r in a name.
func ignorable(r rune) bool {
	switch {
	case r >= 0x200b && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x206a && r <= 0x206f, r == 0xfeff:
		return true
	}
	return false
}

// canon returns the representative of r's case-folding orbit (the
// smallest rune in it, lower-cased when that is an ASCII letter), so that
// two runes a case-insensitive file system takes for one have the same
// canon.
func canon(r rune) rune {
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		return r
	}
	m := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		m = min(m, f)
	}
	if 'A' <= m && m <= 'Z' {
		m += 'a' - 'A'
	}
	return m
}

// fold returns s as the key an index holds it under: canonical runes,
// ignorable ones dropped.
func fold(s string) string {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		if !ignorable(r) {
			out = append(out, canon(r))
		}
	}
	return string(out)
}

// isMeta reports whether c makes a name a pattern.
func isMeta(c byte) bool { return c == '*' || c == '?' || c == '[' }

func hasMeta(s string) bool {
	for i := 0; i < len(s); i++ {
		if isMeta(s[i]) {
			return true
		}
	}
	return false
}

// next returns the next rune of s from i that a name comparison sees, and
// where the one after it starts; ok is false at the end of s.
func next(s string, i int) (r rune, j int, ok bool) {
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			return canon(rune(c)), i + 1, true
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		if !ignorable(r) {
			return canon(r), i, true
		}
	}
	return 0, i, false
}

// foldEqual reports whether name and lit are the same name to a
// case-insensitive file system; lit is folded already.
func foldEqual(name, lit string) bool {
	if len(name) == len(lit) {
		i := 0
		for ; i < len(name); i++ {
			c := name[i]
			if c >= utf8.RuneSelf {
				break
			}
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != lit[i] {
				return false
			}
		}
		if i == len(name) {
			return true
		}
	}
	i, j := 0, 0
	for {
		a, ni, aok := next(name, i)
		b, nj, bok := next(lit, j)
		if !aok || !bok {
			return aok == bok
		}
		if a != b {
			return false
		}
		i, j = ni, nj
	}
}

// classMatch reports whether r is in the class that starts at pattern[i]
// (just after "["), and where the class ends. ok is false when the class
// is not closed, in which case "[" is a literal character.
func classMatch(pattern string, i int, r rune) (match bool, end int, ok bool) {
	negate := false
	if i < len(pattern) && (pattern[i] == '!' || pattern[i] == '^') {
		negate, i = true, i+1
	}
	first := true
	for i < len(pattern) {
		if pattern[i] == ']' && !first {
			return match != negate, i + 1, true
		}
		first = false
		lo, j, _ := next(pattern, i)
		i = j
		hi := lo
		if i+1 < len(pattern) && pattern[i] == '-' && pattern[i+1] != ']' {
			hi, i, _ = next(pattern, i+1)
		}
		if lo <= r && r <= hi {
			match = true
		}
	}
	return false, 0, false
}

// globMatch reports whether name matches pattern (*, ?, [...]), ignoring
// case. With cover, pattern is asked whether it matches every name that
// name, itself a pattern, may stand for: its ? and classes do not match
// the pattern characters of name, only its * does.
func globMatch(pattern, name string, cover bool) bool {
	if isASCII(pattern) && isASCII(name) {
		return globASCII(pattern, name, cover)
	}
	px, nx := 0, 0
	starPx, starNx := -1, -1
	for {
		if px < len(pattern) {
			switch c := pattern[px]; c {
			case '*':
				starPx, starNx = px, nx
				px++
				continue
			case '?':
				if r, j, ok := next(name, nx); ok && !(cover && r < utf8.RuneSelf && (isMeta(byte(r)) || r == ']')) {
					px, nx = px+1, j
					continue
				}
			case '[':
				if r, j, ok := next(name, nx); ok {
					if m, end, closed := classMatch(pattern, px+1, r); closed {
						if m && !(cover && r < utf8.RuneSelf && (isMeta(byte(r)) || r == ']')) {
							px, nx = end, j
							continue
						}
						break
					}
				}
				fallthrough
			default:
				a, j, aok := next(pattern, px)
				b, k, bok := next(name, nx)
				if aok && bok && a == b {
					px, nx = j, k
					continue
				}
				if !aok && !bok {
					return true
				}
			}
		} else if _, _, ok := next(name, nx); !ok {
			return true
		}
		if starPx < 0 {
			return false
		}
		_, j, ok := next(name, starNx)
		if !ok {
			return false
		}
		starNx = j
		px, nx = starPx+1, starNx
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// globASCII is globMatch for an ASCII pattern and name.
func globASCII(pattern, name string, cover bool) bool {
	px, nx := 0, 0
	starPx, starNx := -1, -1
	for px < len(pattern) || nx < len(name) {
		if px < len(pattern) {
			switch c := pattern[px]; c {
			case '*':
				starPx, starNx = px, nx
				px++
				continue
			case '?':
				if nx < len(name) && !(cover && (isMeta(name[nx]) || name[nx] == ']')) {
					px, nx = px+1, nx+1
					continue
				}
			case '[':
				if nx < len(name) {
					r := rune(lower(name[nx]))
					if m, end, closed := classMatch(pattern, px+1, r); closed {
						if m && !(cover && (isMeta(name[nx]) || name[nx] == ']')) {
							px, nx = end, nx+1
							continue
						}
						break
					}
				}
				fallthrough
			default:
				if nx < len(name) && lower(pattern[px]) == lower(name[nx]) {
					px, nx = px+1, nx+1
					continue
				}
			}
		}
		if starPx < 0 || starNx >= len(name) {
			return false
		}
		starNx++
		px, nx = starPx+1, starNx
	}
	return true
}

// A token is one position of a pattern: a rune, any rune (?), a class, or
// any string (*).
type token struct {
	kind  byte // 'r', '?', '[', '*'
	r     rune
	class string // the class's text after "[", for kind '['
}

// tokens splits a pattern into tokens (an unclosed "[" is a rune).
func tokens(p string, out []token) []token {
	for i := 0; i < len(p); {
		switch p[i] {
		case '*':
			out = append(out, token{kind: '*'})
			i++
			continue
		case '?':
			out = append(out, token{kind: '?'})
			i++
			continue
		case '[':
			if _, end, ok := classMatch(p, i+1, 0); ok {
				out = append(out, token{kind: '[', class: p[i+1 : end]})
				i = end
				continue
			}
		}
		r, j, ok := next(p, i)
		if !ok {
			break
		}
		out = append(out, token{kind: 'r', r: r})
		i = j
	}
	return out
}

// accepts reports whether token t matches r.
func (t token) accepts(r rune) bool {
	switch t.kind {
	case 'r':
		return t.r == r
	case '[':
		m, _, _ := classMatch("["+t.class, 1, r)
		return m
	}
	return true
}

// compatible reports whether some rune matches both a and b (neither a
// star), other than a dot when notDot.
func compatible(a, b token, notDot bool) bool {
	switch {
	case a.kind == 'r':
		return b.accepts(a.r) && !(notDot && a.r == '.')
	case b.kind == 'r':
		return a.accepts(b.r) && !(notDot && b.r == '.')
	}
	// Two classes or wildcards: try the ASCII runes, and give the benefit of
	// the doubt (they may meet) beyond them.
	for r := rune(1); r < utf8.RuneSelf; r++ {
		if (notDot && r == '.') || r == '/' {
			continue
		}
		if a.accepts(canon(r)) && b.accepts(canon(r)) {
			return true
		}
	}
	return a.kind == '[' && hasNonASCII(a.class) || b.kind == '[' && hasNonASCII(b.class) || a.kind == '?' && b.kind == '?'
}

func hasNonASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return true
		}
	}
	return false
}

// maxIntersect bounds the patterns intersect compares; longer ones are
// taken to meet.
const maxIntersect = 256

// intersect reports whether some name matches both a shell pattern (in)
// and a catalogue pattern (pat). A name the shell expands from a pattern
// that does not start with a dot does not start with one either.
func intersect(in, pat string) bool {
	if !hasMeta(pat) {
		if in != "" && in[0] != '.' && pat != "" && pat[0] == '.' {
			return false
		}
		return globMatch(in, pat, false)
	}
	// (Names are short: their tokens and states fit on the stack.)
	var abuf, bbuf [32]token
	a, b := tokens(in, abuf[:0]), tokens(pat, bbuf[:0])
	if len(a) > maxIntersect || len(b) > maxIntersect {
		return true
	}
	notDot := len(in) == 0 || in[0] != '.'
	// The product of the two patterns' automata, searched from (0, 0): a
	// star may be left (epsilon), and a rune moves every side that is not
	// a star. The state's last bit says whether a rune was read yet.
	w := len(b) + 1
	var seenBuf [2048]bool
	var seen []bool
	if n := 2 * (len(a) + 1) * w; n <= len(seenBuf) {
		seen = seenBuf[:n]
	} else {
		seen = make([]bool, n)
	}
	var stackBuf [64]int
	stack := append(stackBuf[:0], 0)
	seen[0] = true
	push := func(i, j, started int) {
		if s := (i*w+j)*2 + started; !seen[s] {
			seen[s] = true
			stack = append(stack, s)
		}
	}
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		started := s & 1
		i, j := (s/2)/w, (s/2)%w
		if i == len(a) && j == len(b) {
			return true
		}
		aStar := i < len(a) && a[i].kind == '*'
		bStar := j < len(b) && b[j].kind == '*'
		if aStar {
			push(i+1, j, started)
		}
		if bStar {
			push(i, j+1, started)
		}
		if aStar && bStar {
			push(i, j, 1) // both stars read a rune (not a dot) together
			continue
		}
		if !(i < len(a) || aStar) || !(j < len(b) || bStar) {
			continue
		}
		ta, tb := token{kind: '?'}, token{kind: '?'}
		ni, nj := i, j
		if !aStar {
			ta, ni = a[i], i+1
		}
		if !bStar {
			tb, nj = b[j], j+1
		}
		if compatible(ta, tb, notDot && started == 0) {
			push(ni, nj, 1)
		}
	}
	return false
}

// saysEnough reports whether a shell pattern names something in
// particular (".env*", "id_*"), rather than whatever is there ("*",
// "[a-z]*"): only such a pattern counts against names that may be
// anywhere. One that starts with a dot does: the shell's * skips hidden
// files, and ".*" or ".[!.]*" asks for them, where .env and .npmrc live.
func saysEnough(in string) bool {
	if strings.HasPrefix(in, ".") {
		return true
	}
	lits := 0
	for i := 0; i < len(in); i++ {
		switch in[i] {
		case '[':
			return false
		case '*', '?':
		default:
			lits++
		}
	}
	return lits >= 2
}
