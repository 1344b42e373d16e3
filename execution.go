package airlock

import (
	"encoding/json"
	"strings"
	"time"
)

// Execution is one run of an allowed action as its action.executed event
// records it: whether it ran, how long it took, and, when its executor
// kept it (the MCP gateway running an approved request now), what it
// returned.
type Execution struct {
	// Seq is the action.executed event's sequence number.
	Seq  int64     `json:"seq"`
	Time time.Time `json:"time"`
	// Status is "ok" or "failed"; Error says why it failed.
	Status   string   `json:"status"`
	Error    string   `json:"error,omitempty"`
	Duration Duration `json:"duration"`
	// Result is what the action returned (a JSON value, or its text as a
	// JSON string when it was not JSON or longer than MaxResultBytes).
	Result json.RawMessage `json:"result,omitempty"`
}

// Executions reads the executions that events record, in their order;
// other events are skipped.
func Executions(events []Event) []Execution {
	var out []Execution
	for _, e := range events {
		if e.Kind != EventActionExecuted {
			continue
		}
		var p ActionExecuted
		if json.Unmarshal(e.Payload, &p) != nil {
			continue
		}
		out = append(out, Execution{Seq: e.Seq, Time: e.Time, Status: p.Status, Error: p.Error, Duration: p.Duration,
			Result: p.Result})
	}
	return out
}

// ResultText is what the action returned, for a person: an MCP tool
// result's text content (other content as [image], [resource] …), else
// the result as indented JSON; "" when nothing was kept.
func (x Execution) ResultText() string {
	if len(x.Result) == 0 {
		return ""
	}
	var r struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	if json.Unmarshal(x.Result, &r) == nil && len(r.Content) > 0 {
		parts := make([]string, 0, len(r.Content))
		for _, c := range r.Content {
			if c.Type == "text" {
				parts = append(parts, c.Text)
			} else {
				parts = append(parts, "["+c.Type+"]")
			}
		}
		return strings.Join(parts, "\n")
	}
	text, _ := ReadableArgs(x.Result)
	return text
}

// ActionExecuted is the payload of an action.executed event: how the
// action a decision allowed went, once it ran.
type ActionExecuted struct {
	DecisionSeq int64           `json:"decision_seq,omitempty"`
	ActionHash  Hash            `json:"action_hash"`
	Status      string          `json:"status"`
	Error       string          `json:"error,omitempty"`
	Duration    Duration        `json:"duration"`
	Consent     string          `json:"consent,omitempty"`
	Result      json.RawMessage `json:"result,omitempty"`
}
