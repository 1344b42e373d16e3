package hook

// Codex CLI (0.169.0) runs a non-managed hook only when config.toml records
// that the user trusted it:
//
//	[hooks.state."/home/u/.codex/hooks.json:pre_tool_use:0:0"]
//	trusted_hash = "sha256:6d4f…"
//	enabled = true
//
// The key is the hooks source file, the event and the hook's position; the
// hash covers the normalized hook, so editing it (command, matcher, timeout…)
// untrusts it. See testdata/hooks/codex/TRUST.md for the derivation.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pelletier/go-toml/v2"
)

// CodexHook is one command handler as written in a Codex hooks config:
// hooks.json ({"hooks":{"PreToolUse":[{"matcher":…,"hooks":[{…}]}]}}) or the
// [hooks] table of config.toml. Optional fields are nil when absent from the
// file: Codex hashes an absent value differently from a written one.
type CodexHook struct {
	// Source is the file the hook is written in, as Codex names it: the
	// absolute, cleaned path with symbolic links resolved
	// (filepath.EvalSymlinks), e.g. /home/u/.codex/hooks.json or
	// /repo/.codex/config.toml.
	Source string
	// Event is the event name as written in the file: PreToolUse,
	// PermissionRequest, PostToolUse, SessionStart, …
	Event string
	// Group is the index of the matcher group in the event's array, Handler
	// the index of the handler in the group's "hooks" array.
	Group, Handler int

	// Matcher is the group's "matcher".
	Matcher *string
	// Command is the handler's "command" (on Windows, its "commandWindows"
	// when present).
	Command string
	// Timeout is the handler's "timeout" in seconds.
	Timeout *uint64
	// Async is the handler's "async".
	Async bool
	// StatusMessage is the handler's "statusMessage".
	StatusMessage *string
	// AdditionalContextLimit is the handler's "additionalContextLimit".
	AdditionalContextLimit *uint64
}

// codexEvents maps the event names of a hooks file to the labels Codex uses
// in trust keys and hashes.
var codexEvents = map[string]string{
	"PreModelRequest":   "pre_model_request",
	"PostModelRequest":  "post_model_request",
	"PreToolUse":        "pre_tool_use",
	"PermissionRequest": "permission_request",
	"PostToolUse":       "post_tool_use",
	"PreCompact":        "pre_compact",
	"PostCompact":       "post_compact",
	"SessionStart":      "session_start",
	"SessionEnd":        "session_end",
	"UserPromptSubmit":  "user_prompt_submit",
	"SubagentStart":     "subagent_start",
	"SubagentStop":      "subagent_stop",
	"Stop":              "stop",
	"Interrupt":         "interrupt",
}

// CodexTrust returns the key of the hook's [hooks.state."key"] table in
// config.toml and the trusted_hash Codex expects there.
func CodexTrust(h CodexHook) (key, hash string, err error) {
	label, ok := codexEvents[h.Event]
	if !ok {
		return "", "", fmt.Errorf("codex hook: unknown event %q", h.Event)
	}
	if h.Source == "" || h.Group < 0 || h.Handler < 0 {
		return "", "", errors.New("codex hook: source and a non-negative position are required")
	}
	if strings.TrimSpace(h.Command) == "" {
		return "", "", errors.New("codex hook: Codex skips an empty command")
	}
	key = h.Source + ":" + label + ":" + strconv.Itoa(h.Group) + ":" + strconv.Itoa(h.Handler)

	// The identity Codex hashes: {"event_name", "matcher"?, "hooks": [handler]},
	// with the handler normalized the way discovery normalizes it.
	var timeout uint64 = 600
	if h.Timeout != nil {
		timeout = *h.Timeout
	}
	switch label {
	case "session_end", "interrupt":
		if h.Timeout == nil {
			timeout = 1
		}
		timeout = min(timeout, 3)
	}
	timeout = max(timeout, 1)

	var b strings.Builder
	b.WriteString(`{"event_name":`)
	if err := codexJSONString(&b, label); err != nil {
		return "", "", err
	}
	b.WriteString(`,"hooks":[{`)
	if h.AdditionalContextLimit != nil && codexEmitsContext(label) {
		b.WriteString(`"additionalContextLimit":` + strconv.FormatUint(*h.AdditionalContextLimit, 10) + ",")
	}
	b.WriteString(`"async":` + strconv.FormatBool(h.Async) + `,"command":`)
	if err := codexJSONString(&b, h.Command); err != nil {
		return "", "", err
	}
	if h.StatusMessage != nil {
		b.WriteString(`,"statusMessage":`)
		if err := codexJSONString(&b, *h.StatusMessage); err != nil {
			return "", "", err
		}
	}
	b.WriteString(`,"timeout":` + strconv.FormatUint(timeout, 10) + `,"type":"command"}]`)
	if h.Matcher != nil && codexMatches(label) {
		b.WriteString(`,"matcher":`)
		if err := codexJSONString(&b, *h.Matcher); err != nil {
			return "", "", err
		}
	}
	b.WriteString("}")
	sum := sha256.Sum256([]byte(b.String()))
	return key, "sha256:" + hex.EncodeToString(sum[:]), nil
}

// codexMatches reports whether Codex keeps a matcher for the event; for the
// others it drops it (from the hash too).
func codexMatches(label string) bool {
	switch label {
	case "pre_model_request", "post_model_request", "user_prompt_submit", "stop", "interrupt":
		return false
	}
	return true
}

// codexEmitsContext reports whether the event can return additionalContext;
// for the others Codex ignores additionalContextLimit (and drops it from the
// hash).
func codexEmitsContext(label string) bool {
	switch label {
	case "pre_tool_use", "post_tool_use", "session_start", "user_prompt_submit", "subagent_start":
		return true
	}
	return false
}

// codexJSONString writes s as serde_json does: only '"', '\\' and control
// characters are escaped; everything else is raw UTF-8 (encoding/json would
// also escape <, >, &, U+2028 and U+2029).
func codexJSONString(b *strings.Builder, s string) error {
	if !utf8.ValidString(s) {
		return errors.New("codex hook: text is not valid UTF-8")
	}
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return nil
}

// TrustCodexHook returns config, the text of a Codex config.toml, with the
// table [hooks.state."key"] holding trusted_hash = hash and enabled = true.
// The table's other keys and comments, and the rest of the file, are kept
// byte for byte; a missing table is appended at the end. It fails, leaving
// the file to the user, when the entry is spelled in a form it does not edit
// (dotted keys or an inline table) or when the result would not be valid
// TOML.
func TrustCodexHook(config []byte, key, hash string) ([]byte, error) {
	if err := codexParse(config); err != nil {
		return nil, fmt.Errorf("codex config.toml: %w", err)
	}
	lines := codexLines(config)
	start, end := codexStateTable(lines, key)
	var out []byte
	if start < 0 {
		if state, ok := codexStates(config)[key]; ok && state != nil {
			return nil, fmt.Errorf("codex config.toml: hooks.state.%q is not written as its own table; edit it by hand", key)
		}
		out = append(out, config...)
		if len(out) > 0 && !bytes.HasSuffix(out, []byte("\n")) {
			out = append(out, '\n')
		}
		if len(bytes.TrimSpace(out)) > 0 {
			out = append(out, '\n')
		}
		out = append(out, "[hooks.state."+codexTOMLString(key)+"]\n"...)
		out = append(out, "trusted_hash = "+codexTOMLString(hash)+"\n"...)
		out = append(out, "enabled = true\n"...)
	} else {
		body := []string{lines[start], "trusted_hash = " + codexTOMLString(hash) + "\n", "enabled = true\n"}
		for _, l := range lines[start+1 : end] {
			switch codexLineKey(l) {
			case "trusted_hash", "enabled":
				continue
			}
			body = append(body, l)
		}
		if !strings.HasSuffix(lines[start], "\n") {
			body[0] += "\n"
		}
		for _, l := range lines[:start] {
			out = append(out, l...)
		}
		for _, l := range body {
			out = append(out, l...)
		}
		for _, l := range lines[end:] {
			out = append(out, l...)
		}
	}
	if err := codexParse(out); err != nil {
		return nil, fmt.Errorf("codex config.toml: trusting %q would break the file: %w", key, err)
	}
	if s := codexStates(out)[key]; s == nil || s["trusted_hash"] != hash || s["enabled"] != true {
		return nil, fmt.Errorf("codex config.toml: could not record trust for %q", key)
	}
	return out, nil
}

// UntrustCodexHook returns config without the table [hooks.state."key"]
// (its header and the lines up to the next table); removed says whether it
// was there. Like TrustCodexHook it keeps everything else and refuses forms
// it does not edit.
func UntrustCodexHook(config []byte, key string) (out []byte, removed bool, err error) {
	if err := codexParse(config); err != nil {
		return nil, false, fmt.Errorf("codex config.toml: %w", err)
	}
	lines := codexLines(config)
	start, end := codexStateTable(lines, key)
	if start < 0 {
		if _, ok := codexStates(config)[key]; ok {
			return nil, false, fmt.Errorf("codex config.toml: hooks.state.%q is not written as its own table; edit it by hand", key)
		}
		return config, false, nil
	}
	// Keep the comments and blank lines that end the removed table: they
	// introduce what follows.
	for end > start+1 && codexLineKey(lines[end-1]) == "" {
		end--
	}
	// Do not leave two blank lines where the table was, nor one at the end.
	blank := func(l string) bool { return strings.TrimSpace(l) == "" }
	for end < len(lines) && blank(lines[end]) && (start == 0 || blank(lines[start-1])) {
		end++
	}
	if end == len(lines) {
		for start > 0 && blank(lines[start-1]) {
			start--
		}
	}
	for _, l := range lines[:start] {
		out = append(out, l...)
	}
	for _, l := range lines[end:] {
		out = append(out, l...)
	}
	if err := codexParse(out); err != nil {
		return nil, false, fmt.Errorf("codex config.toml: untrusting %q would break the file: %w", key, err)
	}
	if _, ok := codexStates(out)[key]; ok {
		return nil, false, fmt.Errorf("codex config.toml: could not remove trust for %q", key)
	}
	return out, true, nil
}

func codexParse(config []byte) error {
	var v map[string]any
	return toml.Unmarshal(config, &v)
}

// codexStates decodes hooks.state; config must parse.
func codexStates(config []byte) map[string]map[string]any {
	var v struct {
		Hooks struct {
			State map[string]map[string]any `toml:"state"`
		} `toml:"hooks"`
	}
	if toml.Unmarshal(config, &v) != nil {
		return nil
	}
	return v.Hooks.State
}

// codexLines splits text into lines that keep their "\n".
func codexLines(config []byte) []string {
	var lines []string
	for s := string(config); s != ""; {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines = append(lines, s[:i+1])
		s = s[i+1:]
	}
	return lines
}

// codexStateTable finds the header line of [hooks.state."key"] and the line
// where the next table starts. Lines inside multi-line strings are skipped.
func codexStateTable(lines []string, key string) (start, end int) {
	start = -1
	inString := ""
	for i, l := range lines {
		if inString != "" {
			if strings.Count(l, inString)%2 == 1 {
				inString = ""
			}
			continue
		}
		for _, q := range []string{`"""`, `'''`} {
			if strings.Count(l, q)%2 == 1 {
				inString = q
			}
		}
		t := strings.TrimSpace(l)
		if !strings.HasPrefix(t, "[") || inString != "" {
			continue
		}
		path, ok := codexHeader(t)
		if !ok {
			continue // a line of a multi-line array
		}
		if start >= 0 {
			return start, i
		}
		if len(path) == 3 && path[0] == "hooks" && path[1] == "state" && path[2] == key {
			start = i
		}
	}
	if start < 0 {
		return -1, -1
	}
	return start, len(lines)
}

// codexHeader parses a table header line "[a."b".'c'] # comment" into its
// key path; an array-of-tables header "[[…]]" is a header with no path.
func codexHeader(t string) ([]string, bool) {
	var v map[string]any
	if toml.Unmarshal([]byte(t), &v) != nil {
		return nil, false
	}
	if strings.HasPrefix(t, "[[") {
		return nil, true
	}
	var path []string
	for len(v) == 1 {
		for k, sub := range v {
			path = append(path, k)
			v, _ = sub.(map[string]any)
		}
	}
	return path, len(path) > 0
}

// codexLineKey returns the bare key a "key = value" line assigns ("" for
// blank lines, comments and anything else).
func codexLineKey(l string) string {
	t := strings.TrimSpace(l)
	i := strings.IndexByte(t, '=')
	if i <= 0 || strings.HasPrefix(t, "#") {
		return ""
	}
	return strings.Trim(strings.TrimSpace(t[:i]), `"'`)
}

// codexTOMLString quotes s as a TOML basic string.
func codexTOMLString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
