package hook

import (
	"encoding/json"
	"time"
)

// Codex is OpenAI Codex CLI's hook protocol (developers.openai.com/codex/hooks):
// PreToolUse may only block — with exit 2 and the reason on stderr, since
// Codex runs the call on any other failure —, PermissionRequest answers
// Codex's own approval prompt, PostToolUse is recorded.
type Codex struct{}

func (Codex) Name() string { return "codex" }

var codexHookEvents = []string{"PreToolUse", "PermissionRequest", "PostToolUse"}

type codexPayload struct {
	payload
	ToolResponse json.RawMessage `json:"tool_response"`
	DurationMS   *float64        `json:"duration_ms"`
}

func (c Codex) Parse(b []byte) (Event, error) {
	var p codexPayload
	if err := decode(b, &p); err != nil {
		return Event{}, err
	}
	ev := Event{Name: p.HookEventName}
	switch p.HookEventName {
	case "PreToolUse":
		ev.Kind = KindPre
	case "PermissionRequest":
		ev.Kind = KindPermission
	case "PostToolUse":
		ev.Kind = KindPost
		ev.Failed, ev.Error = responseFailed(p.ToolResponse)
		if p.DurationMS != nil && *p.DurationMS >= 0 {
			ev.Duration = time.Duration(*p.DurationMS * float64(time.Millisecond))
		}
	default:
		return Event{}, unknownEvent(c.Name(), p.HookEventName, codexHookEvents)
	}
	a, err := p.action(c.Name())
	ev.Action = a
	return ev, err
}

type codexAnswer struct {
	HookSpecificOutput *claudeSpecific `json:"hookSpecificOutput,omitempty"`
	Decision           string          `json:"decision,omitempty"`
	Reason             string          `json:"reason,omitempty"`
}

func (c Codex) Answer(ev Event, v Verdict) Reply {
	switch {
	case ev.Kind == KindPermission:
		return Reply{Stdout: string(c.Block(ev, v))}
	case v.Allow:
		// PreToolUse cannot allow, only not object: Codex's own approval
		// policy then applies, and its prompt is Airlock's again
		// (PermissionRequest).
		return Reply{}
	}
	// Exit 2 is the one answer every Codex release reads as a block; the
	// JSON deny says the same to one that reads stdout first.
	return Reply{Exit: 2, Stdout: string(c.Block(ev, v)), Stderr: oneLine(v.Reason)}
}

func (Codex) Block(ev Event, v Verdict) []byte {
	reason := oneLine(v.Reason)
	switch ev.Kind {
	case KindPermission:
		d := &behaviourMessage{Behavior: "deny", Message: reason}
		if v.Allow {
			d = &behaviourMessage{Behavior: "allow"}
		}
		return []byte(marshal(codexAnswer{HookSpecificOutput: &claudeSpecific{HookEventName: ev.Name, Decision: d}}))
	case KindPost:
		return []byte(marshal(codexAnswer{Decision: "block", Reason: reason}))
	}
	return []byte(marshal(codexAnswer{HookSpecificOutput: &claudeSpecific{
		HookEventName: "PreToolUse", PermissionDecision: "deny", PermissionDecisionReason: reason,
	}}))
}
