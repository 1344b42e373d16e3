package slack

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	slackgo "github.com/slack-go/slack"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/notify"
)

// Slack's limits on Block Kit text, in characters; counted here in bytes,
// which are never fewer.
const (
	maxHeader  = 150
	maxSection = 3000
	maxField   = 2000
	maxFields  = 10
	maxText    = 3000 // the fallback text is kept short too
)

// Labels of notify.Facts that are shown their own way.
const (
	labelDeadline = "Deadline"
	labelReason   = "Agent's reason (its claim)"
	labelRequest  = "Request"
	labelHash     = "Action hash"
)

// buttonValue is what the Approve and Reject buttons carry back: the
// request and the exact action it was shown with.
type buttonValue struct {
	ID   string       `json:"id"`
	Hash airlock.Hash `json:"hash"`
}

// approvalMessage shows the request of d: its facts and, while it is
// pending and buttons is set, Approve and Reject; once settled, its
// outcome. mentions ("<@U1> <@U2>") names the people it is for.
func (c *Channel) approvalMessage(d *notify.Delivery, buttons bool, mentions string) message {
	f := notify.Describe(d, c.maxArgs)
	ap := d.Approval
	blocks := []slackgo.Block{header(f.Headline)}
	var fields []*slackgo.TextBlockObject
	var reason string
	for _, fact := range f.Fields {
		var value string
		switch fact.Label {
		case labelReason:
			reason = fact.Value
			continue
		case labelDeadline:
			value = slackDate(ap.Expires)
		case labelRequest, labelHash:
			value = "`" + clip(fact.Value, maxField/2) + "`" // an ID, hex: no backticks
		default:
			value = clip(fact.Value, maxField-100)
		}
		fields = append(fields, mrkdwn("*"+escape(fact.Label)+"*\n"+value))
	}
	for len(fields) > 0 {
		n := min(len(fields), maxFields)
		blocks = append(blocks, slackgo.NewSectionBlock(nil, fields[:n], nil))
		fields = fields[n:]
	}
	if reason != "" {
		code, _ := codeBlock(reason, 1000)
		blocks = append(blocks, section("*"+escape(labelReason)+"*\n"+code))
	}
	const argsLabel = "*Arguments*\n"
	shown := f.Args
	if f.Clipped {
		shown += "…"
	}
	args, clipped := codeBlock(shown, maxSection-len(argsLabel))
	blocks = append(blocks, section(argsLabel+args))
	var notes []string
	if f.Hidden > 0 {
		notes = append(notes, fmt.Sprintf("⚠ %d hidden %s shown as escapes (like \\u202e): read the arguments as written here", f.Hidden, plural(f.Hidden, "character", "characters")))
	}
	if f.Clipped || clipped {
		if d.Link != "" {
			notes = append(notes, "✂ The arguments are clipped: <"+linkURL(d.Link)+"|open the request in the inbox> to see them whole before you decide")
		} else {
			notes = append(notes, "✂ The arguments are clipped: see them whole with `airlock approvals show "+escape(ap.ID)+"` before you decide")
		}
	}
	if mentions != "" {
		notes = append(notes, "For "+mentions)
	}
	for _, n := range notes {
		blocks = append(blocks, slackgo.NewContextBlock("", mrkdwn(n)))
	}
	var actions []slackgo.BlockElement
	text := f.Headline
	if f.Pending {
		text += ": approve or reject it"
		if buttons && ap.NeedsPasskey() && d.Link != "" {
			// Only the reviewer's own device approves it: in the inbox.
			actions = append(actions, slackgo.NewButtonBlockElement(ActionPasskey, "", plain("Approve with your passkey")).
				WithURL(d.Link).WithStyle(slackgo.StylePrimary))
		}
		if buttons && !ap.NeedsPasskey() {
			_, h := ap.Runs()
			v, _ := json.Marshal(buttonValue{ID: ap.ID, Hash: h})
			actions = append(actions,
				slackgo.NewButtonBlockElement(ActionApprove, string(v), plain("Approve")).WithStyle(slackgo.StylePrimary))
			if ap.Rememberable() {
				actions = append(actions, slackgo.NewButtonBlockElement(ActionApproveRemember, string(v), plain("Approve & remember 7 days")))
			}
			actions = append(actions, slackgo.NewButtonBlockElement(ActionReject, string(v), plain("Reject")).WithStyle(slackgo.StyleDanger))
		}
		if buttons && ap.Outcome == airlock.Ask && d.Link != "" {
			// Editing takes the inbox's editor, and its review of the edit.
			actions = append(actions, slackgo.NewButtonBlockElement(ActionEdit, "", plain("Edit in inbox")).WithURL(d.Link+"#edit"))
		}
	} else {
		line := outcomeLine(ap, f.Outcome)
		blocks = append(blocks, section(line))
		text += ": " + f.Outcome
	}
	if d.Link != "" {
		actions = append(actions, slackgo.NewButtonBlockElement(ActionInbox, "", plain("View in inbox")).WithURL(d.Link))
	}
	if len(actions) > 0 {
		blocks = append(blocks, slackgo.NewActionBlock("", actions...))
	}
	if mentions != "" {
		return message{text: mentions + " " + clip(text, maxText), blocks: blocks}
	}
	return message{text: clip(text, maxText), blocks: blocks}
}

// noticeMessage shows a notice of no request: a decision that ran, a test.
func (c *Channel) noticeMessage(d *notify.Delivery, mentions string) message {
	if d.Kind == airlock.NoticeTest {
		text := "🔔 Airlock test notification through channel *" + clip(d.Channel, 200) + "*: Slack delivery works."
		if d.Subject != "" {
			text += "\n" + clip(d.Subject, 1000)
		}
		if mentions != "" {
			text = mentions + " " + text
		}
		return message{text: text, blocks: []slackgo.Block{section(text)}}
	}
	f := notify.Describe(d, c.maxArgs)
	blocks := []slackgo.Block{header(f.Headline)}
	var fields []*slackgo.TextBlockObject
	for _, fact := range f.Fields {
		fields = append(fields, mrkdwn("*"+escape(fact.Label)+"*\n"+clip(fact.Value, maxField-100)))
	}
	if len(fields) > 0 {
		blocks = append(blocks, slackgo.NewSectionBlock(nil, fields[:min(len(fields), maxFields)], nil))
	}
	text := clip(f.Headline, maxText)
	if mentions != "" {
		blocks = append(blocks, slackgo.NewContextBlock("", mrkdwn("For "+mentions)))
		text = mentions + " " + text
	}
	if d.Link != "" {
		blocks = append(blocks, slackgo.NewActionBlock("",
			slackgo.NewButtonBlockElement(ActionInbox, "", plain("View in inbox")).WithURL(d.Link)))
	}
	return message{text: text, blocks: blocks}
}

// outcomeLine says how a settled request ended, like "✅ approved by bob
// (slack): looks right"; outcome is notify.Facts.Outcome.
func outcomeLine(ap *airlock.Approval, outcome string) string {
	mark := map[airlock.ApprovalStatus]string{
		airlock.StatusApproved: "✅", airlock.StatusRejected: "❌", airlock.StatusExpired: "⌛", airlock.StatusCancelled: "🚫",
	}[ap.Status]
	if mark == "" {
		mark = "•"
	}
	return mark + " " + clip(outcome, maxSection-100)
}

// slackDate shows t in each reader's own time zone, with t in UTC for
// clients that cannot.
func slackDate(t time.Time) string {
	return fmt.Sprintf("<!date^%d^{date_short_pretty} {time}|%s>", t.Unix(), t.UTC().Format(time.RFC3339))
}

// header is a header block: plain text, which Slack shows as written.
func header(s string) *slackgo.HeaderBlock {
	if s == "" {
		s = "Airlock"
	}
	if utf8.RuneCountInString(s) > maxHeader {
		s = string([]rune(s)[:maxHeader-1]) + "…"
	}
	return slackgo.NewHeaderBlock(plain(s))
}

func section(text string) *slackgo.SectionBlock {
	return slackgo.NewSectionBlock(mrkdwn(text), nil, nil)
}

// mrkdwn is a mrkdwn text object whose plain text Slack leaves alone (no
// automatic links to URLs or channel names): what is live in it was
// written so on purpose.
func mrkdwn(text string) *slackgo.TextBlockObject {
	return slackgo.NewTextBlockObject(slackgo.MarkdownType, text, false, true)
}

func plain(text string) *slackgo.TextBlockObject {
	return slackgo.NewTextBlockObject(slackgo.PlainTextType, text, false, false)
}

// escape writes Slack's control characters &, < and > as the entities
// Slack asks for, so that text from agents and people cannot form a
// mention (<!channel>), a link or a date.
func escape(s string) string {
	s, _ = escapeClip(s, -1)
	return s
}

// clip escapes s and cuts it to at most max bytes, "…" included.
func clip(s string, max int) string {
	s, _ = escapeClip(s, max)
	return s
}

// escaper writes Slack's control characters as entities.
var escaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// escapeClip escapes s (escape) and, when the result is longer than max
// bytes (max < 0: no limit), cuts it on a character boundary, never inside
// an entity, ending in "…"; it reports whether it cut.
func escapeClip(s string, max int) (string, bool) {
	full := escaper.Replace(s)
	if max < 0 || len(full) <= max {
		return full, false
	}
	var b strings.Builder
	for _, r := range s {
		piece := escaper.Replace(string(r))
		if b.Len()+len(piece) > max-len("…") {
			break
		}
		b.WriteString(piece)
	}
	b.WriteString("…")
	return b.String(), true
}

// codeBlock puts s in a ``` block of at most max bytes, escaped, cut with
// "…" when longer (reported). Two backticks in a row are written as the
// JSON escape \u0060 so that nothing in s can close the block early.
func codeBlock(s string, max int) (string, bool) {
	const open, close = "```\n", "\n```"
	s = strings.ReplaceAll(s, "``", "`\\u0060")
	body, clipped := escapeClip(s, max-len(open)-len(close))
	return open + body + close, clipped
}

// linkURL makes a URL safe inside <url|text>: its | and > would end it.
func linkURL(u string) string {
	return strings.NewReplacer("|", "%7C", ">", "%3E", "<", "%3C", "&", "&amp;").Replace(u)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
