package email

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	gomail "github.com/wneessen/go-mail"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/notify"
	"github.com/airlock-dev/airlock/visible"
)

// maxSubject bounds a subject's bytes (before encoding): agent names and
// tools are the agent's to choose.
const maxSubject = 200

// message composes the mail of d to the addresses to, and returns it with
// its Message-ID.
func (c *Channel) message(d *notify.Delivery, to []string) (*gomail.Msg, string, error) {
	f := notify.Describe(d, c.maxArgs)
	m := gomail.NewMsg(gomail.WithCharset(gomail.CharsetUTF8), gomail.WithEncoding(gomail.EncodingQP))
	if err := m.FromFormat(c.from.Name, c.from.Address); err != nil {
		return nil, "", fmt.Errorf("from: %w", err)
	}
	if err := m.To(to...); err != nil {
		return nil, "", fmt.Errorf("to: %w", err)
	}
	id := messageID(c.domain, d.Key)
	m.SetMessageIDWithValue(strings.Trim(id, "<>"))
	m.SetDateWithValue(c.now())
	m.Subject(subject(d, &f))
	m.SetUserAgent("Airlock")
	// RFC 3834: no vacation or out-of-office answers to a machine's mail.
	m.SetGenHeader("Auto-Submitted", "auto-generated")
	m.SetGenHeader(gomail.HeaderXAutoResponseSuppress, "All")
	if d.ApprovalID != "" {
		root := threadID(c.domain, d.ApprovalID)
		refs := root
		if d.Kind != airlock.EventApprovalRequested {
			parent := root
			if msgID.MatchString(d.Shown) && d.Shown != id {
				parent = d.Shown
				refs += " " + d.Shown
			}
			m.SetGenHeader(gomail.HeaderInReplyTo, parent)
		}
		m.SetGenHeader(gomail.HeaderReferences, refs)
	}
	m.SetBodyString(gomail.TypeTextPlain, body(d, &f))
	return m, id, nil
}

// messageID is the Message-ID of the mail of the delivery with the
// idempotency key key: the same on every attempt.
func messageID(domain, key string) string {
	return "<" + msgIDPart(key) + "@" + domain + ">"
}

// threadID is the Message-ID every mail about request id refers to
// (References), so that they thread together.
func threadID(domain, id string) string {
	return "<approval-" + msgIDPart(id) + "@" + domain + ">"
}

// msgIDAtom is what may stand on either side of a Message-ID's @ as it
// is: a dot-atom of letters, digits and a few safe symbols.
var msgIDAtom = regexp.MustCompile(`^[A-Za-z0-9_+=-]+(\.[A-Za-z0-9_+=-]+)*$`)

// msgID is a Message-ID this channel wrote.
var msgID = regexp.MustCompile(`^<[A-Za-z0-9_+=.-]+@[A-Za-z0-9_+=.-]+>$`)

// msgIDPart returns s when it can stand in a Message-ID, else a digest of
// it: deterministic either way.
func msgIDPart(s string) string {
	if msgIDAtom.MatchString(s) && len(s) <= 128 {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	return "h" + hex.EncodeToString(sum[:16])
}

// subject is a mail's subject: "[Airlock] agent-1 asks to run deploy (ask,
// destructive)", "[Airlock] approved by bob: agent-1 asks to run deploy
// (ask, destructive)". Everything in it is escaped (no line break can
// reach the header) and it is cut to maxSubject bytes.
func subject(d *notify.Delivery, f *notify.Facts) string {
	s := f.Headline
	if ap := d.Approval; ap != nil {
		s += fmt.Sprintf(" (%s, %s)", ap.Outcome, ap.Tier)
		switch {
		case !f.Pending:
			s = ended(ap) + ": " + s
		case d.Kind == airlock.NoticeReminder:
			s = "Reminder: " + s
		}
	} else if d.Kind == airlock.NoticeTest {
		s = "Test: " + s
	}
	return "[Airlock] " + clip(visible.Escaped(s), maxSubject)
}

// ended says briefly how a request ended: "approved by bob", "expired".
func ended(ap *airlock.Approval) string {
	s := string(ap.Status)
	if ap.ResolvedBy != "" {
		s += " by " + visible.Escaped(ap.ResolvedBy)
	}
	return s
}

// clip cuts s to max bytes on a rune boundary, marking the cut.
func clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// body is a mail's text: what happened and what to do, the inbox link,
// the facts, the arguments, and that a reply does nothing.
func body(d *notify.Delivery, f *notify.Facts) string {
	var b strings.Builder
	line := func(format string, args ...any) {
		fmt.Fprintf(&b, format, args...)
		b.WriteByte('\n')
	}
	ap := d.Approval
	line("%s", f.Headline)
	switch {
	case ap == nil && d.Kind == airlock.NoticeTest:
		line("This is a test of Airlock's email channel %q: its mail reaches you.", d.Channel)
	case ap == nil && d.Kind == airlock.EventDecision:
		line("It ran under a rule that tells the agent's owner; nothing waits for you.")
	case ap == nil:
	case f.Pending && d.Kind == airlock.NoticeReminder:
		line("Reminder: this request still waits for a review, and its deadline is near: %s.", deadline(ap))
	case f.Pending && ap.Outcome == airlock.Ask:
		line("This request waits for a review until %s; the agent waits with it.", deadline(ap))
	case f.Pending:
		line("This proposal waits for a review until %s.", deadline(ap))
	default:
		line("This request has ended: %s.", f.Outcome)
	}
	b.WriteByte('\n')
	if ap != nil {
		switch {
		case d.Link != "" && f.Pending:
			line("Approve or reject it in the inbox:")
			line("%s", d.Link)
		case d.Link != "":
			line("See it in the inbox:")
			line("%s", d.Link)
		default:
			line("Find request %s in the Airlock inbox.", ap.ID)
		}
		b.WriteByte('\n')
	}
	width := 0
	for _, fact := range f.Fields {
		width = max(width, utf8.RuneCountInString(fact.Label))
	}
	for _, fact := range f.Fields {
		line("%-*s  %s", width+1, fact.Label+":", fact.Value)
	}
	if ap != nil {
		b.WriteByte('\n')
		line("Arguments:")
		for l := range strings.SplitSeq(f.Args, "\n") {
			line("  %s", l)
		}
		if f.Clipped {
			line("  […cut at %d bytes: the whole arguments are in the inbox]", len(f.Args))
		}
		if f.Hidden > 0 {
			b.WriteByte('\n')
			if f.Hidden == 1 {
				line("Note: 1 hidden character in the arguments is shown as an escape (a backslash code).")
			} else {
				line("Note: %d hidden characters in the arguments are shown as escapes (backslash codes).", f.Hidden)
			}
			line("Hidden characters can make text read otherwise than it runs.")
		}
	}
	b.WriteString("\n-- \n")
	switch {
	case f.Pending:
		line("Replying to this email does nothing: approve or reject in the inbox.")
	default:
		line("Replying to this email does nothing: Airlock reads no mail.")
	}
	line("Sent by Airlock's email channel %q (%s).", d.Channel, d.Kind)
	return b.String()
}

func deadline(ap *airlock.Approval) string { return ap.Expires.UTC().Format(time.RFC3339) }
