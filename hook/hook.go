// Package hook translates agent hosts' hook calls into airlock.Actions and
// Airlock's answers back into the host's: Claude Code, Codex and Gemini CLI.
//
// The package decides nothing: the Gate decides, the store records, and
// each host file (claude.go, codex.go, gemini.go) only translates. Every
// failure — a payload it cannot read, an event it does not know, a server
// it cannot reach — is a block in the host's own terms (exit code 2 and a
// one-line reason), never an allow, whatever the host does by default on
// a hook error.
package hook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/hook/relay"
)

// Kind is what a hook event asks of Airlock.
type Kind uint8

const (
	// KindPre comes before a tool runs: Airlock decides whether it may
	// (Claude Code and Codex PreToolUse, Gemini CLI BeforeTool).
	KindPre Kind = iota + 1
	// KindPermission is the host's own approval prompt (PermissionRequest):
	// Airlock answers it instead of whoever is at the terminal.
	KindPermission
	// KindPost comes after the tool ran: Airlock records how it went
	// (PostToolUse, PostToolUseFailure, AfterTool).
	KindPost
)

func (k Kind) String() string {
	switch k {
	case KindPre:
		return "pre"
	case KindPermission:
		return "permission"
	case KindPost:
		return "post"
	}
	return "unknown"
}

// Event is one hook call of a host, translated.
type Event struct {
	// Name is the host's hook_event_name ("PreToolUse", "BeforeTool").
	Name string
	Kind Kind
	// Action is the tool call: tool as the host names it, args the host's
	// tool_input, session, call and working directory. Its Agent is empty:
	// the agent is the token's, never the payload's.
	Action airlock.Action
	// Failed, Error and Duration describe a Post event's execution.
	Failed   bool
	Error    string
	Duration time.Duration
}

// Verdict is Airlock's answer to one event.
type Verdict struct {
	// Allow lets the tool run (Pre, Permission); on a Post event it says the
	// execution was recorded.
	Allow bool
	// Ask hands the call to the host's own prompt (Handler.AskAtHost): the
	// person at the terminal decides, and Airlock records what they did.
	Ask bool
	// Code is the stable refusal code when it may not run.
	Code string
	// Reason is one line for the model and the person at the terminal: what
	// happened, under which rule, and what to do next.
	Reason string
	// Input, with Allow, is the tool input the host runs instead of the
	// model's: a reviewer's edit of the call, which the host took
	// (Host.TakeEdit).
	Input json.RawMessage
}

// Reply is what the hook process prints and how it exits.
type Reply = relay.Reply

// Host is one agent host's hook protocol.
type Host interface {
	// Name is the host's name on the command line: claude-code, codex, gemini.
	Name() string
	// Parse reads one hook payload. Unknown fields are ignored (hosts add
	// some with every release); an unknown event, a missing tool name or a
	// payload that is not JSON is an error.
	Parse(payload []byte) (Event, error)
	// Answer renders the verdict in the host's terms.
	Answer(ev Event, v Verdict) Reply
	// Block renders a verdict that blocks, for a body that cannot carry an
	// exit code (an HTTP hook's answer), as a JSON answer the host obeys.
	Block(ev Event, v Verdict) []byte
	// TakeEdit says whether the host runs a reviewer's edit of a call in
	// place of the call its model made: nil when its answer can carry the
	// edited input (Verdict.Input), else why not, for the model. A call
	// whose approval holds an edit the host cannot take is refused
	// (airlock.CodeEdited), never run as the model made it.
	TakeEdit(checked, edited *airlock.Action) error
}

// Hosts are the hosts Airlock speaks to, by name.
var Hosts = map[string]Host{
	"claude-code": Claude{},
	"codex":       Codex{},
	"gemini":      Gemini{},
}

// HostNames lists the hosts' names, sorted.
func HostNames() []string {
	names := make([]string, 0, len(Hosts))
	for n := range Hosts {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Lookup returns the host called name; "claude" is Claude Code.
func Lookup(name string) (Host, error) {
	if name == "claude" {
		name = "claude-code"
	}
	if h, ok := Hosts[name]; ok {
		return h, nil
	}
	return nil, airlock.Errorf(airlock.EINVALID, "unknown host %q: Airlock speaks to %s", name, strings.Join(HostNames(), ", "))
}

// Fail is the reply to a hook call Airlock could not answer: a block with a
// one-line reason, in every host's terms (exit 2, the reason on stderr).
func Fail(err error) Reply {
	return relay.Blocked(airlock.ErrorCode(err), airlock.ErrorMessage(err))
}

// reasonOf is an error as the reason of a block: the refusal code it
// blocks with, and its message.
func reasonOf(err error) string {
	return relay.Refusal(airlock.ErrorCode(err)) + ": " + airlock.ErrorMessage(err)
}

// payload is what every host sends with a tool event, and after the call
// what it says of the result.
type payload struct {
	SessionID     string          `json:"session_id"`
	Cwd           string          `json:"cwd"`
	HookEventName string          `json:"hook_event_name"`
	ToolName      string          `json:"tool_name"`
	ToolInput     json.RawMessage `json:"tool_input"`
	ToolUseID     string          `json:"tool_use_id"`
	ToolResponse  json.RawMessage `json:"tool_response"`
	DurationMS    *float64        `json:"duration_ms"`
	// Error and IsInterrupt are Claude Code's PostToolUseFailure.
	Error       json.RawMessage `json:"error"`
	IsInterrupt bool            `json:"is_interrupt"`
}

// parse reads a payload of host whose events are kinds (in the order
// errors list them): the event, its action and, after the call, how the
// call went by the result the host reports.
func parse(host string, b []byte, events []string, kinds map[string]Kind) (Event, *payload, error) {
	var p payload
	if err := decode(b, &p); err != nil {
		return Event{}, nil, err
	}
	kind, ok := kinds[p.HookEventName]
	if !ok {
		return Event{}, nil, unknownEvent(host, p.HookEventName, events)
	}
	ev := Event{Name: p.HookEventName, Kind: kind}
	if kind == KindPost {
		ev.Failed, ev.Error = responseFailed(p.ToolResponse)
	}
	if p.DurationMS != nil && *p.DurationMS >= 0 {
		ev.Duration = time.Duration(*p.DurationMS * float64(time.Millisecond))
	}
	a, err := p.action(host)
	ev.Action = a
	return ev, &p, err
}

// MaxPayload is the largest payload a hook reads.
const MaxPayload = relay.MaxPayload

// relay.MaxPayload is written out so that relay imports nothing of
// Airlock's; this fails to compile if it no longer holds a tool's
// arguments four times over and a result.
var _ [MaxPayload - (4*airlock.MaxArgsBytes + 1<<20)]struct{}

// decode reads a payload once, strictly, to fail closed: one JSON object,
// nothing after it, members by their exact names, string fields that are
// strings. A payload JSON readers could read two ways — a member name
// repeated or differing from another only in case, anywhere in it (the
// event's name, the tool's, its input at any depth), or invalid UTF-8 — is
// refused (airlock.CheckJSON): Airlock would decide on one reading while
// the host runs another.
func decode(b []byte, v any) error {
	if len(b) > MaxPayload {
		return airlock.Errorf(airlock.EINVALID, "the hook payload is %d bytes, more than %d", len(b), MaxPayload)
	}
	if err := airlock.CheckJSON(b); err != nil {
		return airlock.Errorf(airlock.EINVALID, "the hook payload: %s", airlock.ErrorMessage(err))
	}
	if err := jsonv2.Unmarshal(b, v); err != nil {
		return airlock.Errorf(airlock.EINVALID, "the hook payload is not the JSON object a host sends: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

// action builds the action of a tool event. tool_input becomes args; input
// that is not a JSON object (a bare patch, a string) is kept whole as
// {"input": …}, so that nothing the tool receives escapes classification.
func (p *payload) action(host string) (airlock.Action, error) {
	if p.ToolName == "" {
		return airlock.Action{}, airlock.Errorf(airlock.EINVALID, "the %s %s payload has no tool_name", host, p.HookEventName)
	}
	args := bytes.TrimSpace(p.ToolInput)
	switch {
	case len(args) == 0 || bytes.Equal(args, []byte("null")):
		return airlock.Action{}, airlock.Errorf(airlock.EINVALID, "the %s %s payload for %s has no tool_input", host, p.HookEventName, p.ToolName)
	case args[0] != '{':
		wrapped, err := json.Marshal(map[string]json.RawMessage{"input": args})
		if err != nil {
			return airlock.Action{}, airlock.Errorf(airlock.EINVALID, "tool_input: %v", err)
		}
		args = wrapped
	}
	return airlock.Action{
		Tool: p.ToolName, Args: args,
		// The session is the trace: a PostToolUse finds its decision there.
		TraceID: p.SessionID, SessionID: p.SessionID, CallID: p.ToolUseID, Cwd: p.Cwd,
	}, nil
}

// unknownEvent is the error for an event a host file does not handle.
func unknownEvent(host, name string, known []string) error {
	if name == "" {
		return airlock.Errorf(airlock.EINVALID, "the %s payload has no hook_event_name", host)
	}
	return airlock.Errorf(airlock.EINVALID, "%s event %q is not one Airlock answers (it answers %s): install the hook only on those",
		host, name, strings.Join(known, ", "))
}

// marshal renders a host answer; the values are plain structs and strings.
func marshal(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("hook: encode answer: %v", err))
	}
	return buf.String()
}
