package inbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/visible"
)

// RunHash is the hash of the action that runs once the request is
// approved: a reviewer's edit, or the request's own. A resolution echoes
// it.
func (p *DetailPage) RunHash() airlock.Hash {
	_, h := p.Approval.Runs()
	return h
}

// EditedArgs is a reviewer's edit of the arguments, pretty-printed; ""
// when nobody edited them.
func (p *DetailPage) EditedArgs() string {
	if p.Approval.Edit == nil {
		return ""
	}
	return prettyArgs(p.Approval.Edit.Args)
}

// RunArgs are the arguments of the action that runs, pretty-printed for
// an editor: what a reviewer starts an edit from (editableArgs).
func (p *DetailPage) RunArgs() string {
	a, _ := p.Approval.Runs()
	return editableArgs(a.Args)
}

// editableArgs is arguments indented for a person to edit, every hidden
// character (control, format, bidirectional, invisible: package visible)
// written as a JSON \u escape: the same JSON value, none of it hidden in
// the editor, and an edit that keeps it keeps the character.
func editableArgs(args json.RawMessage) string {
	var buf bytes.Buffer
	if len(args) == 0 {
		return "{}"
	}
	if err := json.Indent(&buf, args, "", "  "); err != nil {
		return string(args)
	}
	var b strings.Builder
	inString := false
	for i, r := range buf.String() {
		switch {
		case r == '"' && (i == 0 || !escapedAt(buf.Bytes(), i)):
			inString = !inString
		case inString && visible.Hidden(r, false):
			for _, u := range utf16.Encode([]rune{r}) {
				fmt.Fprintf(&b, "\\u%04x", u)
			}
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// escapedAt reports whether the byte at i is escaped by the backslashes
// before it (an odd number of them).
func escapedAt(b []byte, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && b[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}

// maxEditBytes bounds the arguments the page offers to edit: the edit
// comes back in a form, and a form body is at most maxBodyBytes.
const maxEditBytes = maxBodyBytes / 2

// EditTooLarge reports whether the arguments are too large to edit in the
// page (the CLI's --args edits them).
func (p *DetailPage) EditTooLarge() bool {
	a, _ := p.Approval.Runs()
	return len(a.Args) > maxEditBytes
}

// EditRows is the editor's height: the arguments' lines and one, at most
// 30.
func (p *DetailPage) EditRows() int { return min(strings.Count(p.RunArgs(), "\n")+2, 30) }

// Editable reports whether the signed-in person may edit the action
// before approving it: an ask they may resolve.
func (p *DetailPage) Editable() bool {
	return p.Approval.Outcome == airlock.Ask && p.CannotResolve == ""
}

// VoteLine is one person's answer to a request shown on its page.
type VoteLine struct {
	airlock.Vote
	// Counts is set for an approval of the action that runs now, and a
	// rejection; an approval of the action before an edit no longer counts.
	Counts bool
}

// Votes are the answers given so far, in order.
func (p *DetailPage) Votes() []VoteLine {
	_, h := p.Approval.Runs()
	out := make([]VoteLine, len(p.Approval.Votes))
	for i, v := range p.Approval.Votes {
		out[i] = VoteLine{Vote: v, Counts: v.Status == airlock.StatusRejected || v.ActionHash == h}
	}
	return out
}

// EscalationStep is one step of a request's escalation as its page shows
// it: due at At, taken or not yet.
type EscalationStep struct {
	airlock.Escalation
	At    time.Time
	Taken bool
}

// Escalations are the request's escalation steps, in order.
func (p *DetailPage) Escalations() []EscalationStep {
	ap := &p.Approval
	out := make([]EscalationStep, len(ap.Review.Escalate))
	for i, s := range ap.Review.Escalate {
		out[i] = EscalationStep{Escalation: s, At: ap.Created.Add(time.Duration(s.After)), Taken: i < ap.Escalated}
	}
	return out
}

// EditPage shows a reviewer their edit of a request before they approve
// it: what changed, and how the policy decides the edited action.
type EditPage struct {
	Base
	Approval airlock.Approval
	// ShownHash is the hash of the action the reviewer edited (the one
	// that runs now); the approval echoes it.
	ShownHash airlock.Hash
	Edit      *airlock.Edit
	// Args is the edited arguments as sent (compact JSON), for the
	// approval's form; Pretty the same, for reading.
	Args, Pretty string
	// Changes are the diff's operations, for reading.
	Changes []Change
	// Explain is the gate's explanation of the edited action's decision.
	Explain string
	// Refused says why the edit cannot be approved (the policy refuses the
	// edited action, or it needs other reviewers), "" when it can.
	Refused string
}

// NeedsPasskey reports whether approving the edit needs the reviewer's
// passkey: the request's review, or the edited action's.
func (p *EditPage) NeedsPasskey() bool {
	next := p.Approval
	next.Edit = p.Edit
	return next.NeedsPasskey()
}

// Change is one operation of an edit's diff (RFC 6902).
type Change struct {
	Op, Path    string
	From, Value string
}

// changesOf reads a diff for a person: each operation, its path and value.
func changesOf(diff, from json.RawMessage) []Change {
	var ops []struct {
		Op    string          `json:"op"`
		Path  string          `json:"path"`
		Value json.RawMessage `json:"value"`
	}
	if json.Unmarshal(diff, &ops) != nil {
		return nil
	}
	out := make([]Change, len(ops))
	for i, o := range ops {
		c := Change{Op: o.Op, Path: o.Path}
		if o.Op != "remove" {
			c.Value = compactJSON(o.Value)
		}
		if o.Op != "add" {
			c.From = valueAt(from, o.Path)
		}
		out[i] = c
	}
	return out
}

// valueAt is the JSON value at an RFC 6901 pointer of doc, "" when there
// is none.
func valueAt(doc json.RawMessage, pointer string) string {
	var v any
	if json.Unmarshal(doc, &v) != nil {
		return ""
	}
	var toks []string
	if pointer != "" {
		toks = strings.Split(pointer[1:], "/")
	}
	for _, tok := range toks {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		switch x := v.(type) {
		case map[string]any:
			v = x[tok]
		case []any:
			var i int
			if _, err := fmt.Sscan(tok, &i); err != nil || i < 0 || i >= len(x) {
				return ""
			}
			v = x[i]
		default:
			return ""
		}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func compactJSON(b json.RawMessage) string {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return string(b)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// edit shows the reviewer's edit of a request for them to review: the
// diff, and the edited action as the policy decides it. Nothing is
// recorded until they approve it.
func (in *inbox) edit(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	id := r.PathValue("id")
	r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
	if err := r.ParseForm(); err != nil {
		in.fail(w, r, http.StatusBadRequest, "The form could not be read", err.Error())
		return
	}
	h, err := airlock.ParseHash(r.PostForm.Get("action_hash"))
	if err != nil {
		in.fail(w, r, http.StatusBadRequest, "Not sent", "The form must carry the action hash it showed: "+airlock.ErrorMessage(err))
		return
	}
	ap, err := in.host.Store().Approval(ctx, id)
	if err != nil {
		in.storeFail(w, r, err)
		return
	}
	if _, now := ap.Runs(); now != h {
		in.fail(w, r, http.StatusConflict, "This request holds a different action",
			fmt.Sprintf("You edited the action with hash sha256:%s; the request now runs sha256:%s. Reload it and review what it holds.", h, now))
		return
	}
	rev := principalFrom(ctx).Reviewer()
	if err := ap.Authorize(rev); err != nil {
		in.fail(w, r, http.StatusForbidden, "Not yours to edit", airlock.ErrorMessage(err))
		return
	}
	raw := strings.TrimSpace(r.PostForm.Get("args"))
	edit, d, err := in.enforcer().DecideEdit(ctx, &ap, json.RawMessage(raw))
	if err != nil {
		in.fail(w, r, http.StatusBadRequest, "This edit cannot be approved", airlock.ErrorMessage(err))
		return
	}
	p := &EditPage{Base: baseFor(r, "Edit: "+clipTitle(ap.Summary)), Approval: ap, ShownHash: h, Edit: edit,
		Args: compactJSON(edit.Args), Pretty: prettyArgs(edit.Args), Changes: changesOf(edit.Diff, ap.Args), Explain: d.Explain()}
	switch {
	case edit.Decision.Refuses():
		p.Refused = fmt.Sprintf("The policy refuses the edited action (%s by %s): an edit cannot turn a request into what the policy refuses.",
			edit.Decision.Outcome, edit.Decision.Rule)
	case ap.Outcome != airlock.Ask:
		p.Refused = "This request is a proposal: its agent is not waiting to receive an edit. Approve it as it is, or reject it."
	default:
		next := ap
		next.Edit = edit
		if err := next.Authorize(rev); err != nil {
			p.Refused = airlock.ErrorMessage(err)
		}
	}
	in.render(w, http.StatusOK, "edit", p)
}

// stillNeeded says what a pending request still needs.
func stillNeeded(ap *airlock.Approval) string {
	if n := ap.Remaining(); n > 0 {
		return fmt.Sprintf("it needs %d more approval(s) from other reviewers", n)
	}
	return "it waits for the others"
}
