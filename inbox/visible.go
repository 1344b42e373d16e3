package inbox

import (
	"html/template"
	"strings"

	"github.com/airlock-dev/airlock/visible"
)

// Text that agents or people wrote is shown so that nothing in it can
// hide (package visible), its escapes marked, and everything HTML-escaped.

// maxMarks bounds the marked (highlighted) escapes of one value. Past it
// the escapes are still written, as plain text: a value made of hidden
// characters cannot multiply the size of a page with markup.
const maxMarks = 256

// show renders s as HTML text, escaped, with what would be hidden shown
// as escapes, the first maxMarks runs of them marked. It builds the markup
// in Go rather than in a template: a page shows many values, and a
// template call per value costs more than the value. Only for text
// content, never inside an attribute.
func show(s string, keepLines bool) template.HTML {
	var b strings.Builder
	marks := 0
	for seg := range visible.Segments(s, keepLines) {
		if !seg.Mark {
			if b.Len() == 0 && len(seg.Text) == len(s) {
				return template.HTML(template.HTMLEscapeString(s))
			}
			template.HTMLEscape(&b, []byte(seg.Text))
			continue
		}
		if marks == maxMarks {
			template.HTMLEscape(&b, []byte(seg.Text))
			continue
		}
		marks++
		b.WriteString(`<span class="hidden-char" title="hidden character, shown escaped">`)
		template.HTMLEscape(&b, []byte(seg.Text))
		b.WriteString(`</span>`)
	}
	return template.HTML(b.String())
}

// escaped writes s with what would be hidden as escapes (visible.Escaped).
func escaped(s string) string { return visible.Escaped(s) }
