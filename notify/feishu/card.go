package feishu

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/notify"
	"github.com/airlock-dev/airlock/visible"
)

// The card JSON 1.0 structures the channel writes. Text an agent controls
// is only ever written as plain_text or inside a code block: lark_md holds
// constant labels and the mentions the channel itself makes.
type (
	card struct {
		Config   cardConfig `json:"config"`
		Header   header     `json:"header"`
		Elements []any      `json:"elements"`
	}
	cardConfig struct {
		WideScreenMode bool `json:"wide_screen_mode"`
		// UpdateMulti makes the card shared, so that it can be updated for
		// everyone (required before and after a PATCH).
		UpdateMulti bool `json:"update_multi"`
	}
	header struct {
		Template string `json:"template"`
		Title    text   `json:"title"`
	}
	text struct {
		Tag     string `json:"tag"` // plain_text or lark_md
		Content string `json:"content"`
	}
	div struct {
		Tag    string  `json:"tag"` // div
		Text   *text   `json:"text,omitempty"`
		Fields []field `json:"fields,omitempty"`
	}
	field struct {
		IsShort bool `json:"is_short"`
		Text    text `json:"text"`
	}
	markdown struct {
		Tag     string `json:"tag"` // markdown
		Content string `json:"content"`
	}
	note struct {
		Tag      string `json:"tag"` // note
		Elements []text `json:"elements"`
	}
	rule struct {
		Tag string `json:"tag"` // hr
	}
	actions struct {
		Tag     string   `json:"tag"` // action
		Actions []button `json:"actions"`
	}
	button struct {
		Tag     string       `json:"tag"` // button
		Text    text         `json:"text"`
		Type    string       `json:"type"` // primary, danger, default
		URL     string       `json:"url,omitempty"`
		Value   *buttonValue `json:"value,omitempty"`
		Confirm *confirm     `json:"confirm,omitempty"`
	}
	confirm struct {
		Title text `json:"title"`
		Text  text `json:"text"`
	}
)

// buttonValue is what a button sends back when clicked (action.value): the
// decision, the request, and the action hash the decision is bound to.
type buttonValue struct {
	Action string `json:"action"` // approve, approve_remember or reject
	ID     string `json:"id"`
	Hash   string `json:"hash"`
}

// What a button's value asks for.
const (
	actionApprove = "approve"
	actionReject  = "reject"
	// actionRemember approves and remembers: a standing grant of the
	// action's shape for 7 days (docs/POLICY.md, "Grants").
	actionRemember = "approve_remember"
)

// maxValue bounds a field's value on a card (bytes), so that a card stays
// well under the 30 KB a message may hold.
const maxValue = 1000

func plain(s string) text { return text{Tag: "plain_text", Content: s} }

// card is the card of notice d: a request with its facts (buttons while it
// waits), or a decision or test notice. mention are the open_ids the card
// names (a chat's reviewers).
func (c *Channel) card(d *notify.Delivery, mention []string) []byte {
	// Arguments full of quotes and escapes grow as the card is written into
	// the request (a JSON string in JSON): cut them further until the card
	// fits.
	for maxArgs := c.maxArgs; ; maxArgs /= 2 {
		b := c.build(d, mention, maxArgs)
		if maxArgs <= minArgs || len(encodeString(b)) <= cardBudget {
			return b
		}
	}
}

// cardBudget bounds a card as written into a request (Feishu takes 30 KB
// for a card message's body); minArgs is the least of the arguments a card
// shows.
const (
	cardBudget = 24 << 10
	minArgs    = 256
)

// encodeString is b written as a JSON string, as the request carries it.
func encodeString(b []byte) []byte {
	s, _ := json.Marshal(string(b))
	return s
}

// build is the card of d, its arguments cut to maxArgs bytes.
func (c *Channel) build(d *notify.Delivery, mention []string, maxArgs int) []byte {
	if d.Kind == airlock.NoticeTest {
		return encode(card{
			Config: cardConfig{WideScreenMode: true, UpdateMulti: true},
			Header: header{Template: "wathet", Title: plain("Airlock: test notification")},
			Elements: []any{div{Tag: "div", Text: ptr(plain(clip(fmt.Sprintf(
				"This is a test from Airlock's Feishu channel %q. If you can read it, the channel works.",
				visible.Escaped(d.Channel)), maxValue)))}},
		})
	}
	f := notify.Describe(d, maxArgs)
	var els []any
	if len(mention) > 0 && (f.Pending || d.Approval == nil) { // who is to act, or to know
		els = append(els, div{Tag: "div", Text: &text{Tag: "lark_md", Content: "For " + ats(mention)}})
	}
	els = append(els, facts(f)...)
	if d.Approval != nil {
		els = append(els, arguments(f)...)
	}
	var buttons []button
	if ap := d.Approval; ap != nil && f.Pending && ap.NeedsPasskey() && d.Link != "" {
		// Only the reviewer's own device approves it: in the inbox.
		buttons = append(buttons, button{Tag: "button", Text: plain("Approve with your passkey"), Type: "primary", URL: d.Link})
	}
	if ap := d.Approval; ap != nil && f.Pending && !ap.NeedsPasskey() {
		_, h := ap.Runs()
		v := func(action string) *buttonValue {
			return &buttonValue{Action: action, ID: ap.ID, Hash: h.String()}
		}
		buttons = append(buttons, button{Tag: "button", Text: plain("Approve"), Type: "primary", Value: v(actionApprove)})
		if ap.Rememberable() {
			buttons = append(buttons, button{Tag: "button", Text: plain("Approve & remember 7 days"), Type: "default", Value: v(actionRemember),
				Confirm: &confirm{Title: plain("Approve and remember?"),
					Text: plain("The agent may then run the same shape of action without asking for 7 days, up to this tier.")}})
		}
		buttons = append(buttons, button{Tag: "button", Text: plain("Reject"), Type: "danger", Value: v(actionReject),
			Confirm: &confirm{Title: plain("Reject this request?"), Text: plain(clip(f.Headline, maxValue))}})
	}
	if ap := d.Approval; ap != nil && f.Pending && ap.Outcome == airlock.Ask && d.Link != "" {
		// Editing takes the inbox's editor, and its review of the edit.
		buttons = append(buttons, button{Tag: "button", Text: plain("Edit in inbox"), Type: "default", URL: d.Link + "#edit"})
	}
	if d.Link != "" {
		buttons = append(buttons, button{Tag: "button", Text: plain("View in inbox"), Type: "default", URL: d.Link})
	}
	if len(buttons) > 0 {
		els = append(els, rule{Tag: "hr"}, actions{Tag: "action", Actions: buttons})
	}
	return encode(card{
		Config:   cardConfig{WideScreenMode: true, UpdateMulti: true},
		Header:   header{Template: template(d, f), Title: plain(clip(f.Headline, 300))},
		Elements: els,
	})
}

// reminder is the card that reminds a request's reviewers that it waits.
func (c *Channel) reminder(d *notify.Delivery, mention []string) []byte {
	f := notify.Describe(d, c.maxArgs)
	var els []any
	if len(mention) > 0 {
		els = append(els, div{Tag: "div", Text: &text{Tag: "lark_md", Content: "Reminder for " + ats(mention)}})
	}
	line := "This request still waits for a decision."
	if ap := d.Approval; ap != nil {
		line = fmt.Sprintf("This request still waits for a decision; its deadline is %s (then it is refused).",
			ap.Expires.UTC().Format("2006-01-02 15:04 MST"))
	}
	els = append(els, div{Tag: "div", Text: ptr(plain(line))})
	if d.Link != "" {
		els = append(els, actions{Tag: "action", Actions: []button{
			{Tag: "button", Text: plain("View in inbox"), Type: "primary", URL: d.Link}}})
	}
	return encode(card{
		Config:   cardConfig{WideScreenMode: true, UpdateMulti: true},
		Header:   header{Template: "orange", Title: plain(clip("Reminder: "+f.Headline, 300))},
		Elements: els,
	})
}

// facts are the outcome (once there is one) and the labelled facts.
func facts(f notify.Facts) []any {
	var els []any
	if f.Outcome != "" {
		els = append(els, div{Tag: "div", Fields: []field{
			{IsShort: true, Text: label("Outcome")},
			{IsShort: true, Text: plain(clip(f.Outcome, maxValue))},
		}})
	}
	for _, fact := range f.Fields {
		// One div a fact: its two short fields sit side by side, label and
		// value, however wide the screen.
		els = append(els, div{Tag: "div", Fields: []field{
			{IsShort: true, Text: label(fact.Label)},
			{IsShort: true, Text: plain(clip(fact.Value, maxValue))},
		}})
	}
	return els
}

// arguments are the request's arguments in a code block, and notes of what
// the block cannot show.
func arguments(f notify.Facts) []any {
	els := []any{markdown{Tag: "markdown", Content: "```\n" + codeSafe(f.Args) + "\n```"}}
	var notes []text
	if f.Hidden > 0 {
		s := "s"
		if f.Hidden == 1 {
			s = ""
		}
		notes = append(notes, plain(fmt.Sprintf("⚠ %d hidden character%s shown as escapes", f.Hidden, s)))
	}
	if f.Clipped {
		notes = append(notes, plain("The arguments are cut here: open the request in the inbox to see them whole."))
	}
	if len(notes) > 0 {
		els = append(els, note{Tag: "note", Elements: notes})
	}
	return els
}

// codeSafe keeps the arguments inside their code block: the JSON escapes of
// "`" and "<" (the same string to a JSON reader) can neither close the
// fence nor open a tag such as a mention.
func codeSafe(args string) string {
	return strings.NewReplacer("`", `\u0060`, "<", `\u003c`).Replace(args)
}

// label is a fact's label in bold; a label with markup characters (none of
// Describe's have any) is written as plain text instead.
func label(s string) text {
	if strings.ContainsAny(s, "<>[]*_~`\\&|\n") || s == "" {
		return plain(s)
	}
	return text{Tag: "lark_md", Content: "**" + s + "**"}
}

// ats writes the mentions of open_ids (configured IDs, checked by New's
// pattern) in lark_md.
func ats(openIDs []string) string {
	var b strings.Builder
	for i, id := range openIDs {
		if !ids.MatchString(id) {
			continue
		}
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString("<at id=" + id + "></at>")
	}
	return b.String()
}

// template is the header's colour: the risk tier while a request waits,
// its end after.
func template(d *notify.Delivery, f notify.Facts) string {
	ap := d.Approval
	switch {
	case ap == nil:
		return "blue"
	case !f.Pending:
		switch ap.Status {
		case airlock.StatusApproved:
			return "green"
		case airlock.StatusRejected:
			return "red"
		}
		return "grey"
	}
	switch ap.Tier {
	case airlock.TierRead:
		return "green"
	case airlock.TierWrite:
		return "blue"
	case airlock.TierNetworkEgress:
		return "yellow"
	case airlock.TierSpend:
		return "orange"
	case airlock.TierDestructive:
		return "red"
	case airlock.TierPrivileged:
		return "carmine"
	}
	return "grey"
}

// clip cuts s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func ptr[T any](v T) *T { return &v }

// encode writes a card; its types always encode.
func encode(c card) []byte {
	b, err := json.Marshal(c)
	if err != nil {
		panic("feishu: encode a card: " + err.Error())
	}
	return b
}
