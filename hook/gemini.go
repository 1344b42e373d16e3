package hook

import (
	"encoding/json"
	"regexp"

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
	Decision string `json:"decision"`
	Reason   string `json:"reason,omitempty"`
}

func (g Gemini) Answer(ev Event, v Verdict) Reply {
	if ev.Kind == KindPost && v.Allow {
		return Reply{}
	}
	return Reply{Stdout: string(g.Block(ev, v))}
}

func (Gemini) Block(ev Event, v Verdict) []byte {
	if v.Allow && ev.Kind != KindPost {
		return []byte(marshal(geminiAnswer{Decision: "allow", Reason: relay.OneLine(v.Reason)}))
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
