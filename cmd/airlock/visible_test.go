package main

import (
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
	"github.com/airlock-dev/airlock/visible"
)

// hiddenFamilies are characters that a terminal or a browser draws as
// nothing, or that change how the text around them reads, by family. Each
// must be marked in the terminal exactly as in the inbox.
var hiddenFamilies = []struct {
	family string
	chars  []rune
}{
	{"variation selectors", []rune{0xFE0F, 0xFE00, 0xFE0E, 0x180B, 0x180F, 0xE0100, 0xE01EF}},
	{"private use", []rune{0xE000, 0xF8FF, 0xF0000, 0x10FFFD}},
	{"braille blank", []rune{0x2800}},
	{"hangul fillers", []rune{0x115F, 0x1160, 0x3164, 0xFFA0}},
	{"bidi controls", []rune{0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069, 0x200E, 0x200F, 0x061C}},
	{"zero-width", []rune{0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, 0x180E}},
	{"tag characters", []rune{0xE0001, 0xE0020, 0xE0041, 0xE007F}},
	{"other invisibles", []rune{0x00AD, 0x034F, 0x2061, 0x2064, 0xFFF9, 0x1D173}},
	{"spaces but the plain one", []rune{0x00A0, 0x2009, 0x2028, 0x2029, 0x3000}},
	{"controls", []rune{0x1B, 0x7F, 0x9B, '\r', '\t'}},
	{"non-characters and unassigned", []rune{0xFFFF, 0xFDD0, 0x0378}},
}

// inboxMark is how the inbox marks a run of hidden characters.
const inboxMark = `<span class="hidden-char" title="hidden character, shown escaped">`

// TestTerminalMarksAsTheInbox puts each hidden character into a request
// (its summary, arguments, reason and, where a name may hold it, its
// agent) and checks that `airlock approvals show`, `approvals list` and
// `audit tail` write it as the same escape the inbox marks, never raw, and
// warn of as many hidden characters as the inbox's page does.
func TestTerminalMarksAsTheInbox(t *testing.T) {
	ts := newTestServer(t)
	inbox := signedIn(t, ts.url, ts.secrets["bob"])
	for _, fam := range hiddenFamilies {
		for _, c := range fam.chars {
			t.Run(fmt.Sprintf("%s/%U", fam.family, c), func(t *testing.T) {
				hidden := string(c)
				if visible.Count(hidden, false) != 1 {
					t.Fatalf("package visible does not hide %U", c)
				}
				esc := visible.Escaped(hidden)
				agent := "coder" + hidden + "1"
				if (airlock.Action{Agent: agent, Tool: "t"}).Validate() != nil { // names refuse controls and bidi controls
					agent = "coder-1"
				}
				ap := airlocktest.NewApproval(agent, "echo a"+hidden+"b", airlock.Ask, time.Hour)
				ap.Summary, ap.Detail.Reason = "a"+hidden+"b", "r"+hidden+"s"
				if _, _, err := ts.db.RequestApproval(t.Context(), ap, ap.Requested()); err != nil {
					t.Fatal(err)
				}

				// The arguments as both show them: JSON escapes controls
				// itself, and both read the same JSON (airlock.ReadableArgs).
				readable, _ := airlock.ReadableArgs(ap.Args)
				var command string
				for l := range strings.Lines(readable) {
					if strings.Contains(l, `"command"`) {
						command = visible.Escaped(strings.TrimSpace(l))
					}
				}

				// The inbox: each field marks the escape.
				page := inbox.get(t, "/inbox/approvals/"+ap.ID)
				marked := inboxMark + html.EscapeString(esc) + "</span>"
				for _, want := range []string{"a" + marked + "b", "r" + marked + "s"} {
					if !strings.Contains(page, want) {
						t.Errorf("the inbox does not show %q", want)
					}
				}
				if text := html.UnescapeString(strings.NewReplacer(inboxMark, "", "</span>", "").Replace(page)); !strings.Contains(text, command) {
					t.Errorf("the inbox does not show the argument as %q", command)
				}
				inboxHidden := regexp.MustCompile(`<strong>(\d+) hidden character`).FindStringSubmatch(page)
				if inboxHidden == nil {
					t.Fatal("the inbox gives no count of hidden characters")
				}

				// The terminal: the same escapes, and the same count.
				code, show, stderr := ts.run(t, "bob", "approvals", "show", ap.ID)
				if code != exitOK {
					t.Fatalf("approvals show: exit %d: %s", code, stderr)
				}
				for _, want := range []string{
					"summary:      a" + esc + "b\n", "agent reason: r" + esc + "s", "  " + command + "\n",
					"hidden:       " + inboxHidden[1] + " hidden character",
				} {
					if !strings.Contains(show, want) {
						t.Errorf("approvals show does not show %q:\n%s", want, show)
					}
				}
				_, list, _ := ts.run(t, "bob", "approvals", "list", "--agent", ap.Agent)
				if !strings.Contains(list, "a"+esc+"b") {
					t.Errorf("approvals list does not show %q:\n%s", "a"+esc+"b", list)
				}
				_, tail, _ := ts.run(t, "bob", "audit", "tail", "-n", "1")
				if want := visible.Escaped(ap.Agent); !strings.Contains(tail, " "+want+" ") {
					t.Errorf("audit tail does not show the agent as %q:\n%s", want, tail)
				}
				for name, out := range map[string]string{"approvals show": show, "approvals list": list, "audit tail": tail} {
					if strings.ContainsRune(out, c) && !(c == '\t' && name == "approvals list") {
						t.Errorf("%s writes %U raw", name, c)
					}
				}
			})
		}
	}
}

// inboxSession is a reviewer signed in to the inbox.
type inboxSession struct {
	base string
	c    *http.Client
}

func signedIn(t *testing.T, base, secret string) *inboxSession {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	s := &inboxSession{base: base, c: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	resp, err := s.c.PostForm(base+"/inbox/signin", url.Values{"token": {secret}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("inbox sign-in: %d", resp.StatusCode)
	}
	return s
}

func (s *inboxSession) get(t *testing.T, path string) string {
	t.Helper()
	resp, err := s.c.Get(s.base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v\n%s", path, resp.StatusCode, err, b)
	}
	return string(b)
}
