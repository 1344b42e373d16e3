package hook

import (
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/airlock-dev/airlock"

	"github.com/airlock-dev/airlock/hook/relay"
)

// Gemini is Gemini CLI's hook protocol (geminicli.com/docs/hooks/reference):
// BeforeTool is answered with {"decision": "allow"|"deny", "reason": …} on
// stdout and exit 0; AfterTool is recorded. Exit 2 blocks with stderr as
// the reason; any other non-zero exit is only a warning, so Airlock never
// uses one.
type Gemini struct{}

func (Gemini) Name() string { return "gemini" }

var (
	geminiEvents = []string{"BeforeTool", "AfterTool"}
	geminiKinds  = map[string]Kind{"BeforeTool": KindPre, "AfterTool": KindPost}
)

func (g Gemini) Parse(b []byte) (Event, error) {
	ev, p, err := parse(g.Name(), b, geminiEvents, geminiKinds)
	if err == nil && ev.Kind == KindPost && !ev.Failed && p.ToolName == "run_shell_command" {
		ev.Failed, ev.Error = shellFailed(p.ToolResponse)
	}
	return ev, err
}

type geminiAnswer struct {
	Decision           string          `json:"decision"`
	Reason             string          `json:"reason,omitempty"`
	HookSpecificOutput *geminiSpecific `json:"hookSpecificOutput,omitempty"`
}

// geminiSpecific carries BeforeTool's tool_input: "an object that merges
// with and overrides the model's arguments before execution"
// (geminicli.com/docs/hooks/reference, BeforeTool; Gemini CLI assigns its
// members over the model's, Object.assign).
type geminiSpecific struct {
	ToolInput json.RawMessage `json:"tool_input"`
}

// TakeEdit: Gemini CLI merges a hook's tool_input over the model's
// arguments, member by member, so an edit can change or add an argument
// but not remove one: the model's would stay.
func (Gemini) TakeEdit(checked, edited *airlock.Action) error {
	was, err := airlock.DecodeArgs(checked.Args)
	if err != nil {
		return err
	}
	now, err := airlock.DecodeArgs(edited.Args)
	if err != nil {
		return err
	}
	var gone []string
	for k := range was {
		if _, ok := now[k]; !ok {
			gone = append(gone, strconv.Quote(k))
		}
	}
	if len(gone) > 0 {
		slices.Sort(gone)
		return airlock.Errorf(airlock.ENOTIMPL, "Gemini CLI merges a hook's tool_input into the model's arguments, and the edit removes %s", strings.Join(gone, ", "))
	}
	return nil
}

func (g Gemini) Answer(ev Event, v Verdict) Reply {
	if ev.Kind == KindPost && v.Allow {
		return Reply{}
	}
	return Reply{Stdout: string(g.Block(ev, v))}
}

func (Gemini) Block(ev Event, v Verdict) []byte {
	if v.Allow && ev.Kind != KindPost {
		a := geminiAnswer{Decision: "allow", Reason: relay.OneLine(v.Reason)}
		if v.Input != nil {
			a.HookSpecificOutput = &geminiSpecific{ToolInput: v.Input}
		}
		return []byte(marshal(a))
	}
	return []byte(marshal(geminiAnswer{Decision: "deny", Reason: relay.OneLine(v.Reason)}))
}

// exitCode is how Gemini CLI's shell tool reports a command's status in
// the text it gives the model ("Exit Code: 2"); AfterTool has no field
// for it.
var exitCode = regexp.MustCompile(`(?m)^Exit Code: ([0-9]+)\s*$`)

func shellFailed(raw json.RawMessage) (bool, string) {
	var r struct {
		LLMContent json.RawMessage `json:"llmContent"`
	}
	if json.Unmarshal(raw, &r) != nil {
		return false, ""
	}
	var text string
	if json.Unmarshal(r.LLMContent, &text) != nil {
		return false, ""
	}
	// The command's own output comes first: the tool's line is the last.
	if m := exitCode.FindAllStringSubmatch(text, -1); m != nil && m[len(m)-1][1] != "0" {
		return true, "exited with status " + m[len(m)-1][1]
	}
	return false, ""
}
