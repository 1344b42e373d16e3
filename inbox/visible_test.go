package inbox

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/airlock-dev/airlock/visible"
)

func TestShow(t *testing.T) {
	const mark = `<span class="hidden-char" title="hidden character, shown escaped">`
	for _, tc := range []struct {
		name, in  string
		keepLines bool
		want      string
	}{
		{"plain", "deploy prod", false, "deploy prod"},
		{"html escaped", `<script>alert("x")</script>`, false, `&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;`},
		{"bidi override", "invoice\u202efdp.exe", false, "invoice" + mark + `\u202e</span>fdp.exe`},
		{"bidi isolates and marks", "\u2066\u200f\u061c", false, mark + `\u2066\u200f\u061c</span>`},
		{"zero-width run is one mark", "a\u200b\u200c\u200db", false, "a" + mark + `\u200b\u200c\u200d</span>b`},
		{"variation selector", "a\ufe00b", false, "a" + mark + `\ufe00</span>b`},
		{"supplementary variation selector", "a\U000E0100b", false, "a" + mark + `\udb40\udd00</span>b`},
		{"tag character", "a\U000E0041b", false, "a" + mark + `\udb40\udc41</span>b`},
		{"hangul filler", "a\u3164b", false, "a" + mark + `\u3164</span>b`},
		{"combining grapheme joiner", "a\u034fb", false, "a" + mark + `\u034f</span>b`},
		{"private use", "a\ue000b", false, "a" + mark + `\ue000</span>b`},
		{"unassigned", "a\u0378b", false, "a" + mark + `\u0378</span>b`},
		{"non-character", "a\uffffb", false, "a" + mark + `\uffff</span>b`},
		{"blank braille", "a\u2800b", false, "a" + mark + `\u2800</span>b`},
		{"no-break space", "a\u00a0b", false, "a" + mark + `\u00a0</span>b`},
		{"ideographic space", "a\u3000b", false, "a" + mark + `\u3000</span>b`},
		{"controls", "a\x1b[31m\x7f", false, "a" + mark + `\u001b</span>[31m` + mark + `\u007f</span>`},
		{"tab and newline", "a\tb\nc", false, "a" + mark + `\t</span>b` + mark + `\n</span>c`},
		{"newline kept", "a\nb\r\n", true, "a\nb" + mark + `\r</span>` + "\n"},
		{"invalid byte", "a\xffb", false, "a" + mark + `\xff</span>b`},
		{"literal replacement character is visible", "a\ufffdb", false, "a\ufffdb"},
		{"letters, marks and symbols stay", "Grüße e\u0301 日本 שלום ✓ 1²", false, "Grüße e\u0301 日本 שלום ✓ 1²"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(show(tc.in, tc.keepLines)); got != tc.want {
				t.Errorf("show(%+q) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
}

// TestShowHidesNothing checks every code point: what show writes holds no
// character that would be hidden, and no raw markup.
func TestShowHidesNothing(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		in := "a" + string(r) + "<b>"
		out := string(show(in, false))
		rest := strings.NewReplacer(`<span class="hidden-char" title="hidden character, shown escaped">`, "", `</span>`, "").Replace(out)
		if strings.ContainsAny(rest, "<>") {
			t.Fatalf("show(%+q) = %q: raw markup", in, out)
		}
		for _, c := range rest {
			if visible.Hidden(c, false) && c != utf8.RuneError {
				t.Fatalf("show(%+q) = %+q: %U is written raw", in, out, c)
			}
		}
	}
}

// TestShowBoundsMarkup checks that a value made of hidden characters
// cannot multiply a page's size: past maxMarks the escapes are plain.
func TestShowBoundsMarkup(t *testing.T) {
	const n = 10 * maxMarks
	in := strings.Repeat("a\u200b", n)
	out := string(show(in, false))
	if got := strings.Count(out, `<span class="hidden-char"`); got != maxMarks {
		t.Errorf("%d marked escapes, want %d", got, maxMarks)
	}
	if got := strings.Count(out, `\u200b`); got != n {
		t.Errorf("%d escapes written, want %d: every hidden character is shown", got, n)
	}
	// Each "a\u200b" (4 bytes) becomes "a\u200b" as text (7 bytes), plus
	// the bounded markup.
	if limit := 7*n + maxMarks*80; len(out) > limit {
		t.Errorf("%d bytes of HTML for %d of input, want at most %d", len(out), len(in), limit)
	}
	if got, want := visible.Count(in, false), n; got != want {
		t.Errorf("visible.Count = %d, want %d", got, want)
	}
}

func TestEscaped(t *testing.T) {
	got, want := escaped("coder\u202e-1\t<x>"), `coder\u202e-1\t<x>`
	if got != want {
		t.Errorf("escaped = %q, want %q", got, want)
	}
}
