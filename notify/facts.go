package notify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/visible"
)

// Facts is what a person needs to judge a request, as plain text with
// hidden characters written as escapes (package visible), for channels
// that render text: chat messages, cards, mail.
type Facts struct {
	// Headline says what happened in one line: "coder-1 asks to run Bash".
	Headline string
	// Fields are the request's facts in reading order.
	Fields []Fact
	// Args are the arguments, indented JSON, escaped, cut to the size the
	// caller allowed; Clipped is set when they were cut (the whole is
	// behind the inbox link); Hidden counts the characters written as
	// escapes in the whole arguments.
	Args    string
	Clipped bool
	Hidden  int
	// Pending is set while the request can still be resolved.
	Pending bool
	// Outcome says how it ended, "" while pending: "approved by bob: looks right".
	Outcome string
}

// Fact is one labelled value.
type Fact struct{ Label, Value string }

// Describe returns the facts of d's request (or of the notice alone when it
// has none), its arguments cut to maxArgs bytes.
func Describe(d *Delivery, maxArgs int) Facts {
	f := Facts{Headline: visible.Escaped(d.Subject)}
	ap := d.Approval
	if ap == nil {
		f.Fields = append(f.Fields, Fact{"Agent", visible.Escaped(d.Agent)})
		return f
	}
	verb := "asks to run"
	if ap.Outcome != airlock.Ask {
		verb = "proposes to run"
	}
	f.Headline = fmt.Sprintf("%s %s %s", visible.Escaped(ap.Agent), verb, visible.Escaped(ap.Tool))
	f.Pending = ap.Status == airlock.StatusPending
	f.Fields = []Fact{
		{"Agent", visible.Escaped(ap.Agent)},
		{"Tool", visible.Escaped(ap.Tool)},
		{"Class", visible.Escaped(ap.Class)},
		{"Risk tier", ap.Tier.String()},
		{"Decision", ap.Outcome.String()},
	}
	if ap.RequestedBy != "" {
		f.Fields = append(f.Fields, Fact{"Requested by", visible.Escaped(ap.RequestedBy)})
	}
	if ap.Detail.Rule != "" {
		f.Fields = append(f.Fields, Fact{"Rule", visible.Escaped(ap.Detail.Rule)})
	}
	if ap.Detail.Reason != "" {
		f.Fields = append(f.Fields, Fact{"Agent's reason (its claim)", visible.Escaped(ap.Detail.Reason)})
	}
	f.Fields = append(f.Fields, Fact{"Deadline", ap.Expires.UTC().Format(time.RFC3339)},
		Fact{"Request", ap.ID}, Fact{"Action hash", ap.ActionHash.String()})
	f.Args, f.Clipped, f.Hidden = args(ap.Args, maxArgs)
	if !f.Pending {
		f.Outcome = outcome(ap)
	}
	return f
}

// args indents raw, writes what would be hidden as escapes, and cuts the
// result to max bytes on a rune boundary.
func args(raw json.RawMessage, max int) (string, bool, int) {
	if len(raw) == 0 {
		return "{}", false, 0
	}
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		b.Reset()
		b.Write(raw)
	}
	// JSON escapes control characters already; what is left hidden is
	// what JSON writes raw (bidi overrides, zero-width characters).
	s := b.String()
	hidden := visible.Count(s, true)
	var out strings.Builder
	for seg := range visible.Segments(s, true) {
		out.WriteString(seg.Text)
	}
	t := out.String()
	if max <= 0 || len(t) <= max {
		return t, false, hidden
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(t[cut]) {
		cut--
	}
	return t[:cut], true, hidden
}

// outcome says how a settled request ended.
func outcome(ap *airlock.Approval) string {
	s := string(ap.Status)
	if ap.ResolvedBy != "" {
		s += " by " + visible.Escaped(ap.ResolvedBy)
	}
	if ap.Surface != "" && ap.Surface != airlock.SurfaceSystem {
		s += " (" + string(ap.Surface) + ")"
	}
	if ap.Reason != "" {
		s += ": " + visible.Escaped(ap.Reason)
	}
	return s
}
