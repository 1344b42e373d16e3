package visible_test

import (
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/visible"
)

func TestEscaped(t *testing.T) {
	for in, want := range map[string]string{
		"coder\u202e-1\t<x>": `coder\u202e-1\t<x>`,
		"rm -rf /\u200b":     `rm -rf /\u200b`,
		"a\xffb":             `a\xffb`,
		"Grüße 日本":           "Grüße 日本",
	} {
		if got := visible.Escaped(in); got != want {
			t.Errorf("Escaped(%+q) = %q, want %q", in, got, want)
		}
	}
}

func TestSegmentsMarkEscapes(t *testing.T) {
	var marked, plain []string
	for seg := range visible.Segments("a\u202e\u200bb\nc", true) {
		if seg.Mark {
			marked = append(marked, seg.Text)
		} else {
			plain = append(plain, seg.Text)
		}
	}
	if strings.Join(marked, "|") != `\u202e\u200b` || strings.Join(plain, "|") != "a|b\nc" {
		t.Errorf("marked %q, plain %q", marked, plain)
	}
	if n := visible.Count("a\u202e\u200bb\nc", false); n != 3 {
		t.Errorf("Count = %d, want 3 (the newline counts when lines are not kept)", n)
	}
}

func TestEscapedLines(t *testing.T) {
	for in, want := range map[string]string{
		"two\nlines\tand a tab\r\n":  "two\nlines\\tand a tab\\r\n",
		"a\ufe0f\ue000\u2800\u115fb": `a\ufe0f\ue000\u2800\u115fb`,
		"\x1b[31mred":                `\u001b[31mred`,
	} {
		if got := visible.EscapedLines(in); got != want {
			t.Errorf("EscapedLines(%+q) = %q, want %q", in, got, want)
		}
	}
}
