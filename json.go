package airlock

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
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
// reads the tokens once and builds nothing but the names of the objects
// open. Errors: EINVALID.
func CheckJSON(data []byte) error {
	dec := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowDuplicateNames(true))
	var names []map[string]string // per open object: each name folded, and as written
	for {
		if kind, n := dec.StackIndex(dec.StackDepth()); kind == '{' && n%2 == 0 && dec.PeekKind() == '"' {
			raw, err := dec.ReadValue()
			if err != nil {
				return malformedJSON(err)
			}
			name, err := jsontext.AppendUnquote(nil, raw)
			if err != nil {
				return malformedJSON(err)
			}
			top := &names[len(names)-1]
			folded := foldName(string(name))
			if first, seen := (*top)[folded]; seen {
				return duplicateName(string(name), first, dec.StackPointer(), dec.InputOffset()-int64(len(raw)))
			}
			if *top == nil {
				*top = make(map[string]string, 4)
			}
			(*top)[folded] = string(name)
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
				names = append(names, nil)
			}
		case '}':
			names = names[:len(names)-1]
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

// foldName folds a member name so that names a case-insensitive reader
// would take for one fold alike: each rune as encoding/json folds it
// (upper case of its lower case), then the least rune of its Unicode
// case-folding orbit, so that K (U+212A) is K and ſ (U+017F) is S.
func foldName(s string) string {
	ascii := true
	for i := 0; i < len(s) && ascii; i++ {
		ascii = s[i] < utf8.RuneSelf
	}
	if ascii {
		return strings.ToUpper(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		r = unicode.ToUpper(unicode.ToLower(r))
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		b.WriteRune(least)
	}
	return b.String()
}
