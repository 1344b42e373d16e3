// Package visible shows text that agents or people wrote so that nothing
// in it can hide, for the web inbox, the chat channels and the CLI alike.
//
// In names, arguments, paths and reasons, a character that is invisible,
// or that changes how the text around it reads, is written as an escape
// (\u202e, \x1b, \t) that a surface marks.
package visible

import (
	"fmt"
	"iter"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Segment is a run of text; Mark is set when it stands for characters
// made visible, written as escapes.
type Segment struct {
	Text string
	Mark bool
}

// Hidden reports whether r would be invisible or would change how the text
// around it reads: control and format characters (bidi overrides,
// zero-width joiners), every space but the plain one, default-ignorable
// code points (Hangul fillers, the combining grapheme joiner), variation
// selectors (which can carry bytes invisibly), private-use, unassigned
// and non-characters, the blank Braille pattern, and invalid bytes.
func Hidden(r rune, keepLines bool) bool {
	if r < utf8.RuneSelf {
		return (r < 0x20 && !(r == '\n' && keepLines)) || r == 0x7f
	}
	return r == utf8.RuneError || r == '\u2800' ||
		!unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S) ||
		unicode.In(r, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector)
}

// Segments yields s as plain runs and escapes of what would be hidden;
// consecutive escapes come as one segment.
func Segments(s string, keepLines bool) iter.Seq[Segment] {
	return func(yield func(Segment) bool) {
		plain := 0
		var esc strings.Builder
		for i := 0; i < len(s); {
			r, size := utf8.DecodeRuneInString(s[i:])
			// A literal U+FFFD is visible; only an invalid byte is not.
			if !Hidden(r, keepLines) || (r == utf8.RuneError && size > 1) {
				i += size
				continue
			}
			if i > plain && !yield(Segment{Text: s[plain:i]}) {
				return
			}
			esc.Reset()
			for i < len(s) {
				r, size = utf8.DecodeRuneInString(s[i:])
				if !Hidden(r, keepLines) || (r == utf8.RuneError && size > 1) {
					break
				}
				writeEscape(&esc, r, s[i])
				i += size
			}
			plain = i
			if !yield(Segment{Text: esc.String(), Mark: true}) {
				return
			}
		}
		if len(s) > plain {
			yield(Segment{Text: s[plain:]})
		}
	}
}

// writeEscape writes the escape of the hidden rune r, whose first byte is
// first (for an invalid byte, r is utf8.RuneError).
func writeEscape(b *strings.Builder, r rune, first byte) {
	switch {
	case r == '\n':
		b.WriteString(`\n`)
	case r == '\t':
		b.WriteString(`\t`)
	case r == '\r':
		b.WriteString(`\r`)
	case r == utf8.RuneError:
		fmt.Fprintf(b, `\x%02x`, first)
	case r > 0xffff:
		hi, lo := utf16.EncodeRune(r)
		fmt.Fprintf(b, `\u%04x\u%04x`, hi, lo)
	default:
		fmt.Fprintf(b, `\u%04x`, r)
	}
}

// Escaped writes s with what would be hidden as escapes, for text that
// cannot carry markup (a page's title, a chat message).
func Escaped(s string) string {
	var b strings.Builder
	for seg := range Segments(s, false) {
		b.WriteString(seg.Text)
	}
	return b.String()
}

// EscapedLines is Escaped for text laid out in lines (arguments, an
// explanation, in a terminal): its line breaks stay as they are.
func EscapedLines(s string) string {
	var b strings.Builder
	for seg := range Segments(s, true) {
		b.WriteString(seg.Text)
	}
	return b.String()
}

// Count counts the characters of s that Segments writes as escapes.
func Count(s string, keepLines bool) int {
	n := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if Hidden(r, keepLines) && !(r == utf8.RuneError && size > 1) {
			n++
		}
		i += size
	}
	return n
}
