package airlock

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// MaxJSONDepth bounds the nesting of a JSON document an adapter reads
// whole — an API request's body, a hook payload, an MCP request's params:
// an action's arguments (MaxArgsDepth) and the few levels around them.
const MaxJSONDepth = MaxArgsDepth + 8

// CheckJSON reports whether data is one JSON value that every JSON reader
// reads alike, so that what Airlock decides on is what the program that
// acts on it reads. JSON readers disagree on objects whose member names
// repeat (most keep the last, some the first, some refuse) and on names
// that differ only in case (encoding/json matches them to one field,
// folding Unicode case: K, the Kelvin sign, is k and ſ, the long s, is s;
// a case-sensitive reader sees two members). So CheckJSON refuses, at any
// depth:
//   - a member name that repeats, or that differs from another of its
//     object only in case, escapes resolved ("\u0070ath" is "path");
//   - invalid UTF-8, and escapes of lone surrogates (which some readers
//     replace with U+FFFD, so that two names become one);
//   - an empty document, data after the value, nesting deeper than
//     MaxJSONDepth.
//
// The error says what and where: the JSON pointer and the byte offset. It
// reads the tokens once and keeps nothing but the folded names of the
// objects open. Errors: EINVALID.
func CheckJSON(data []byte) error {
	c := jsonCheckers.Get().(*jsonChecker)
	defer jsonCheckers.Put(c)
	c.r.Reset(data)
	c.dec.Reset(&c.r, jsontext.AllowDuplicateNames(true))
	err := c.check(data)
	c.r.Reset(nil)
	for i, m := range c.names {
		if len(m) > 256 { // a big object's map is not kept for the next check
			c.names[i] = nil
		}
	}
	return err
}

// jsonChecker is a pooled CheckJSON: its decoder, and the names of each
// level of objects, kept between uses so that a check allocates little.
type jsonChecker struct {
	r      bytes.Reader
	dec    *jsontext.Decoder
	names  []map[string]int64 // per open object: each name folded, and where it was written
	depth  int                // objects open
	folded []byte
	name   []byte
}

var jsonCheckers = sync.Pool{New: func() any {
	c := &jsonChecker{}
	c.dec = jsontext.NewDecoder(&c.r)
	return c
}}

func (c *jsonChecker) check(data []byte) error {
	dec := c.dec
	c.depth = 0
	for {
		if kind, n := dec.StackIndex(dec.StackDepth()); kind == '{' && n%2 == 0 && dec.PeekKind() == '"' {
			raw, err := dec.ReadValue()
			if err != nil {
				return malformedJSON(err)
			}
			at := dec.InputOffset() - int64(len(raw))
			name := raw[1 : len(raw)-1]
			if bytes.IndexByte(name, '\\') >= 0 {
				if c.name, err = jsontext.AppendUnquote(c.name[:0], raw); err != nil {
					return malformedJSON(err)
				}
				name = c.name
			}
			c.folded = appendFolded(c.folded[:0], name)
			names := c.names[c.depth-1]
			if first, seen := names[string(c.folded)]; seen {
				return duplicateName(string(name), nameAt(data, first), dec.StackPointer(), at)
			}
			names[string(c.folded)] = at
			continue
		}
		tok, err := dec.ReadToken()
		if err == io.EOF {
			return Errorf(EINVALID, "malformed JSON: the document is empty")
		}
		if err != nil {
			return malformedJSON(err)
		}
		switch tok.Kind() {
		case '{', '[':
			if dec.StackDepth() > MaxJSONDepth {
				return Errorf(EINVALID, "JSON nested deeper than %d levels at %s", MaxJSONDepth, pointerText(dec.StackPointer()))
			}
			if tok.Kind() == '{' {
				if c.depth == len(c.names) {
					c.names = append(c.names, nil)
				}
				if c.names[c.depth] == nil {
					c.names[c.depth] = make(map[string]int64, 8)
				}
				clear(c.names[c.depth])
				c.depth++
			}
		case '}':
			c.depth--
		}
		if dec.StackDepth() == 0 {
			end := dec.InputOffset()
			if _, err := dec.ReadToken(); err != io.EOF {
				return Errorf(EINVALID, "malformed JSON: data after top-level value at byte offset %d", end)
			}
			return nil
		}
	}
}

// nameAt is the member name written at offset at of data, unquoted.
func nameAt(data []byte, at int64) string {
	v, err := jsontext.NewDecoder(bytes.NewReader(data[at:])).ReadValue()
	if err != nil {
		return ""
	}
	name, _ := jsontext.AppendUnquote(nil, v)
	return string(name)
}

// duplicateName is the error for a member name that repeats, or differs
// from an earlier one only in case.
func duplicateName(name, first string, at jsontext.Pointer, offset int64) error {
	if name == first {
		return Errorf(EINVALID, "duplicate member %+q at %s (byte offset %d): JSON readers differ on which one counts",
			name, pointerText(at), offset)
	}
	return Errorf(EINVALID, "duplicate member %+q at %s (byte offset %d): it differs from %+q only in case, and JSON readers differ on whether it is the same member",
		name, pointerText(at), offset, first)
}

// malformedJSON makes a decoder's error readable; the decoder names the
// byte offset and the JSON pointer.
func malformedJSON(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return Errorf(EINVALID, "malformed JSON: unexpected EOF")
	}
	return Errorf(EINVALID, "malformed JSON: %s", strings.TrimPrefix(err.Error(), "jsontext: "))
}

// pointerText is a JSON pointer as a person reads it: "/" for the whole
// document, and quoted with escapes when it holds anything but printable
// ASCII — a name that differs only in a look-alike letter must look
// different.
func pointerText(p jsontext.Pointer) string {
	s := string(p)
	if s == "" {
		return "/"
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x7f {
			return strconv.QuoteToASCII(s)
		}
	}
	return s
}

// appendFolded appends a member name folded so that names a
// case-insensitive reader would take for one fold alike: each rune as
// encoding/json folds it (upper case of its lower case), then the least
// rune of its Unicode case-folding orbit, so that K (U+212A) is K and ſ
// (U+017F) is S.
func appendFolded(b, name []byte) []byte {
	for i := 0; i < len(name); {
		if c := name[i]; c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			b = append(b, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(name[i:])
		i += n
		r = unicode.ToUpper(unicode.ToLower(r))
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		b = utf8.AppendRune(b, least)
	}
	return b
}
