package hook

import (
	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/hook/relay"
)

// Codex is OpenAI Codex CLI's hook protocol (developers.openai.com/codex/hooks):
// PreToolUse may only block — with exit 2 and the reason on stderr, since
// Codex runs the call on any other failure —, PermissionRequest answers
// Codex's own approval prompt, PostToolUse is recorded.
type Codex struct{}

func (Codex) Name() string { return "codex" }

var (
	codexHookEvents = []string{"PreToolUse", "PermissionRequest", "PostToolUse"}
	codexKinds      = map[string]Kind{"PreToolUse": KindPre, "PermissionRequest": KindPermission, "PostToolUse": KindPost}
)

func (c Codex) Parse(b []byte) (Event, error) {
	ev, _, err := parse(c.Name(), b, codexHookEvents, codexKinds)
	return ev, err
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
	return Reply{Exit: 2, Stdout: string(c.Block(ev, v)), Stderr: relay.OneLine(v.Reason)}
}

// TakeEdit: Codex's hooks can allow or block a call, not change its
// input.
func (Codex) TakeEdit(checked, edited *airlock.Action) error {
	return airlock.Errorf(airlock.ENOTIMPL, "Codex's hooks cannot change a tool call's input")
}

func (Codex) Block(ev Event, v Verdict) []byte {
	reason := relay.OneLine(v.Reason)
	switch ev.Kind {
	case KindPermission:
		return permissionAnswer(ev, v)
	case KindPost:
		return []byte(marshal(claudeAnswer{Decision: "block", Reason: reason}))
	}
	return []byte(marshal(claudeAnswer{HookSpecificOutput: &claudeSpecific{
		HookEventName: "PreToolUse", PermissionDecision: "deny", PermissionDecisionReason: reason,
	}}))
}
