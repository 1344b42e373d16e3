package hook

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/airlock-dev/airlock/hook/relay"
)

// responseFailed reads a tool's result as a host reports it after the call
// and says whether it failed: an error field (Gemini's tool_response.error,
// a Codex error), a non-zero exit code, or a Claude Code interruption.
func responseFailed(raw json.RawMessage) (bool, string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return false, ""
	}
	var r map[string]json.RawMessage
	if json.Unmarshal(raw, &r) != nil {
		return false, ""
	}
	if e := textOf(r["error"]); e != "" {
		return true, e
	}
	for _, k := range []string{"exit_code", "exitCode"} {
		var n json.Number
		if json.Unmarshal(r[k], &n) == nil && n != "" && n != "0" {
			return true, "exited with status " + n.String()
		}
	}
	if b, err := strconv.ParseBool(textOf(r["interrupted"])); err == nil && b {
		return true, "interrupted"
	}
	return false, ""
}

// textOf renders a JSON value as one line of text: a string as itself, an
// object by its message field, anything else as JSON; null and absent are "".
func textOf(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) || bytes.Equal(raw, []byte(`""`)) {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return relay.OneLine(s)
	}
	var o struct {
		Message string `json:"message"`
	}
	if raw[0] == '{' && json.Unmarshal(raw, &o) == nil && o.Message != "" {
		return relay.OneLine(o.Message)
	}
	if bytes.Equal(raw, []byte("false")) || bytes.Equal(raw, []byte("{}")) {
		return ""
	}
	return relay.OneLine(string(raw))
}
