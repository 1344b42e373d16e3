package airlock

import (
	"fmt"
	"unicode/utf8"
)

// ClipText cuts s to at most n bytes on a rune boundary, saying how much
// it cut: for what an agent sent, kept in a record or shown to a person.
func ClipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (%d bytes more)", len(s)-cut)
}
