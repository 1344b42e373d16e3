package hook

import (
	"encoding/json"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/hook/relay"
)

// Claude is Claude Code's hook protocol (code.claude.com/docs/en/hooks):
// PreToolUse and PermissionRequest are answered with hookSpecificOutput on
// stdout and exit 0; PostToolUse and PostToolUseFailure are recorded.
// Exit 2 blocks with stderr as the reason; any other non-zero exit would
// let the call run, so Airlock never uses one.
type Claude struct{}

func (Claude) Name() string { return "claude-code" }

var (
	claudeEvents = []string{"PreToolUse", "PermissionRequest", "PostToolUse", "PostToolUseFailure"}
	claudeKinds  = map[string]Kind{"PreToolUse": KindPre, "PermissionRequest": KindPermission,
		"PostToolUse": KindPost, "PostToolUseFailure": KindPost}
)

func (c Claude) Parse(b []byte) (Event, error) {
	ev, p, err := parse(c.Name(), b, claudeEvents, claudeKinds)
	if err == nil && ev.Name == "PostToolUseFailure" {
		ev.Failed, ev.Error = true, textOf(p.Error)
		switch {
		case ev.Error == "" && p.IsInterrupt:
			ev.Error = "interrupted"
		case ev.Error == "":
			ev.Error = "the tool failed"
		}
	}
	return ev, err
}

type claudeAnswer struct {
	HookSpecificOutput *claudeSpecific `json:"hookSpecificOutput,omitempty"`
	Decision           string          `json:"decision,omitempty"`
	Reason             string          `json:"reason,omitempty"`
}

type claudeSpecific struct {
	HookEventName            string            `json:"hookEventName"`
	PermissionDecision       string            `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string            `json:"permissionDecisionReason,omitempty"`
	Decision                 *behaviourMessage `json:"decision,omitempty"`
	// UpdatedInput replaces the tool's input before it runs: a reviewer's
	// edit (code.claude.com/docs/en/hooks, PreToolUse decision control).
	UpdatedInput json.RawMessage `json:"updatedInput,omitempty"`
}

// behaviourMessage is a PermissionRequest answer (Claude Code and Codex).
type behaviourMessage struct {
	Behavior string `json:"behavior"`
	Message  string `json:"message,omitempty"`
	// UpdatedInput, with allow, replaces the tool's input (Claude Code).
	UpdatedInput json.RawMessage `json:"updatedInput,omitempty"`
}

// TakeEdit: Claude Code replaces the tool's input with a hook's
// updatedInput, whole (PreToolUse and PermissionRequest alike).
func (Claude) TakeEdit(checked, edited *airlock.Action) error { return nil }

func (c Claude) Answer(ev Event, v Verdict) Reply {
	switch {
	case ev.Kind == KindPost && v.Allow:
		return Reply{}
	case ev.Kind == KindPermission && v.Ask:
		return Reply{} // no decision: Claude Code shows its own dialog
	case ev.Kind == KindPre && v.Ask:
		return Reply{Stdout: marshal(claudeAnswer{HookSpecificOutput: &claudeSpecific{
			HookEventName: "PreToolUse", PermissionDecision: "ask", PermissionDecisionReason: relay.OneLine(v.Reason),
		}})}
	}
	return Reply{Stdout: string(c.Block(ev, v))}
}

func (Claude) Block(ev Event, v Verdict) []byte {
	reason := relay.OneLine(v.Reason)
	switch ev.Kind {
	case KindPermission:
		return permissionAnswer(ev, v)
	case KindPost:
		// The tool ran; what the model reads is that Airlock could not
		// record it, or that Airlock never allowed it.
		return []byte(marshal(claudeAnswer{Decision: "block", Reason: reason}))
	}
	decision := "deny"
	if v.Allow {
		decision = "allow"
	}
	return []byte(marshal(claudeAnswer{HookSpecificOutput: &claudeSpecific{
		HookEventName: "PreToolUse", PermissionDecision: decision, PermissionDecisionReason: reason, UpdatedInput: edited(v),
	}}))
}

// edited is the input an allowing verdict has the host run instead of
// the model's; nil for none.
func edited(v Verdict) json.RawMessage {
	if !v.Allow {
		return nil
	}
	return v.Input
}

// permissionAnswer answers a PermissionRequest (Claude Code and Codex alike).
func permissionAnswer(ev Event, v Verdict) []byte {
	d := &behaviourMessage{Behavior: "deny", Message: relay.OneLine(v.Reason)}
	if v.Allow {
		d = &behaviourMessage{Behavior: "allow", UpdatedInput: v.Input}
	}
	return []byte(marshal(claudeAnswer{HookSpecificOutput: &claudeSpecific{HookEventName: ev.Name, Decision: d}}))
}
