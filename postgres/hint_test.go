package postgres

import (
	"crypto/sha256"
	"testing"
)

func TestHeadNotice(t *testing.T) {
	h := chainHead{seq: 42, hash: sha256.Sum256([]byte("head")), ok: true}
	w := headNotice(h)
	if got, ok := parseHeadNotice(w); !ok || got != h {
		t.Fatalf("parseHeadNotice(%q) = %v, %v; want %v", w, got, ok, h)
	}
	for _, bad := range []string{
		"", "h:", "h:42", "h:42:", "h:0:" + w[5:], "h:-1:" + w[5:], "h:x:" + w[5:], w[:len(w)-2], w + "00", w[:len(w)-1] + "g",
		"a:" + w[2:], "e", "d",
	} {
		if got, ok := parseHeadNotice(bad); ok {
			t.Errorf("parseHeadNotice(%q) = %v, want no head", bad, got)
		}
	}
}
