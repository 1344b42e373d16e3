package shell

import (
	"errors"
	"strings"
)

// A sed script can do more than edit text: GNU sed's e command and the e
// flag of s run commands, w and W (and the w flag of s) write files, r and R
// read them. sedScript finds them, so that sed is classified by what its
// script does (GTFOBins: sed -n '1e sh', sed -n 'w ~/.bashrc').

// sedOps is what a sed script does beyond editing the text it reads.
type sedOps struct {
	commands []string // e COMMAND: shell commands it runs
	input    bool     // e alone, or the e flag of s: runs the text it reads as a command
	writes   []string // files it writes (w, W, s///w)
	reads    []string // files it reads (r, R)
}

var errSedSyntax = errors.New("sed script does not parse")

// sedScript parses a sed script (GNU syntax) and returns what it does.
func sedScript(script string) (sedOps, error) {
	p := sedParser{s: script}
	for {
		p.skip(" \t\n;")
		if p.done() {
			return p.ops, nil
		}
		if err := p.command(); err != nil {
			return sedOps{}, err
		}
	}
}

type sedParser struct {
	s   string
	i   int
	ops sedOps
}

func (p *sedParser) done() bool { return p.i >= len(p.s) }

func (p *sedParser) peek() byte {
	if p.done() {
		return 0
	}
	return p.s[p.i]
}

func (p *sedParser) skip(chars string) {
	for !p.done() && strings.IndexByte(chars, p.s[p.i]) >= 0 {
		p.i++
	}
}

// rest returns the rest of the line: a file name or a command, which may
// hold semicolons.
func (p *sedParser) rest() string {
	p.skip(" \t")
	end := strings.IndexByte(p.s[p.i:], '\n')
	if end < 0 {
		end = len(p.s) - p.i
	}
	v := p.s[p.i : p.i+end]
	p.i += end
	return v
}

// word returns a label or number: up to a semicolon, a space or the end of
// the line.
func (p *sedParser) word() string {
	p.skip(" \t")
	start := p.i
	for !p.done() && strings.IndexByte(";\n}", p.s[p.i]) < 0 {
		p.i++
	}
	return strings.TrimSpace(p.s[start:p.i])
}

// delimited reads text up to an unescaped delim (the delimiter itself
// consumed).
func (p *sedParser) delimited(delim byte) (string, error) {
	start := p.i
	for !p.done() {
		switch c := p.s[p.i]; {
		case c == '\\':
			p.i += 2
		case c == delim:
			p.i++
			return p.s[start : p.i-1], nil
		case c == '\n' && delim != '\n':
			return "", errSedSyntax
		default:
			p.i++
		}
	}
	return "", errSedSyntax
}

// regex reads a regular expression up to an unescaped delim: unlike
// other text, a bracket expression may hold the delimiter ("/[/]/").
func (p *sedParser) regex(delim byte) error {
	for !p.done() {
		switch c := p.s[p.i]; {
		case c == '\\':
			p.i += 2
		case c == '[':
			if err := p.bracket(); err != nil {
				return err
			}
		case c == delim:
			p.i++
			return nil
		case c == '\n':
			return errSedSyntax
		default:
			p.i++
		}
	}
	return errSedSyntax
}

// bracket skips a bracket expression: "]" first is a member, and so are the
// "]" of [:class:], [.coll.] and [=equiv=].
func (p *sedParser) bracket() error {
	p.i++ // [
	if p.peek() == '^' {
		p.i++
	}
	if p.peek() == ']' {
		p.i++
	}
	for !p.done() {
		switch c := p.s[p.i]; {
		case c == ']':
			p.i++
			return nil
		case c == '\n':
			return errSedSyntax
		case c == '[' && p.i+1 < len(p.s) && strings.IndexByte(":.=", p.s[p.i+1]) >= 0:
			end := strings.Index(p.s[p.i+2:], string(p.s[p.i+1])+"]")
			if end < 0 {
				return errSedSyntax
			}
			p.i += 2 + end + 2
		default:
			p.i++
		}
	}
	return errSedSyntax
}

// address skips one address: a line number, $, first~step, /regex/ or
// \cregexc, with the I and M flags of a regex.
func (p *sedParser) address() error {
	switch c := p.peek(); {
	case c == '/' || c == '\\':
		p.i++
		delim := byte('/')
		if c == '\\' {
			if p.done() {
				return errSedSyntax
			}
			delim = p.s[p.i]
			p.i++
		}
		if err := p.regex(delim); err != nil {
			return err
		}
		p.skip("IM")
	case c == '$':
		p.i++
	case c >= '0' && c <= '9', c == '+', c == '~':
		p.i++
		p.skip("0123456789~")
	}
	return nil
}

func (p *sedParser) command() error {
	if err := p.address(); err != nil {
		return err
	}
	p.skip(" \t")
	if p.peek() == ',' {
		p.i++
		p.skip(" \t")
		if err := p.address(); err != nil {
			return err
		}
	}
	p.skip(" \t")
	for p.peek() == '!' {
		p.i++
		p.skip(" \t")
	}
	if p.done() {
		return errSedSyntax
	}
	cmd := p.s[p.i]
	p.i++
	switch cmd {
	case '{', '}', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
	case 'l', 'L', 'q', 'Q', ':', 'b', 't', 'T', 'v':
		p.word()
	case '#':
		p.rest()
	case 'a', 'i', 'c':
		p.text()
	case 'e':
		if c := strings.TrimSpace(p.rest()); c != "" {
			p.ops.commands = append(p.ops.commands, c)
		} else {
			p.ops.input = true
		}
	case 'r', 'R':
		p.ops.reads = append(p.ops.reads, p.rest())
	case 'w', 'W':
		p.ops.writes = append(p.ops.writes, p.rest())
	case 's':
		return p.substitute()
	case 'y':
		if p.done() {
			return errSedSyntax
		}
		delim := p.s[p.i]
		p.i++
		for range 2 {
			if _, err := p.delimited(delim); err != nil {
				return err
			}
		}
	default:
		return errSedSyntax
	}
	return nil
}

// text skips the text of a, i and c: the rest of the line, and the lines a
// trailing backslash continues.
func (p *sedParser) text() {
	for {
		line := p.rest()
		if !strings.HasSuffix(line, "\\") || p.done() {
			return
		}
		p.i++ // the newline
	}
}

// substitute parses s/regex/replacement/flags.
func (p *sedParser) substitute() error {
	if p.done() {
		return errSedSyntax
	}
	delim := p.s[p.i]
	p.i++
	if err := p.regex(delim); err != nil {
		return err
	}
	if _, err := p.delimited(delim); err != nil {
		return err
	}
	for !p.done() {
		switch c := p.s[p.i]; {
		case c == 'e':
			p.ops.input = true
			p.i++
		case c == 'w':
			p.i++
			p.ops.writes = append(p.ops.writes, p.rest())
			return nil
		case strings.IndexByte("gpiImM0123456789", c) >= 0:
			p.i++
		default:
			return nil
		}
	}
	return nil
}
