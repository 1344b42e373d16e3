package hosttest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
)

// RunClaude runs one turn of Claude Code (`claude -p`) in opts.Dir against a
// scripted Anthropic Messages API. The hooks are read from the settings the
// caller wrote, e.g. opts.Dir/.claude/settings.json.
func RunClaude(ctx context.Context, opts Options) (*Turn, error) {
	if err := check(&opts); err != nil {
		return nil, err
	}
	if err := claudeTrust(opts.Home, opts.Dir); err != nil {
		return nil, err
	}
	m := newModel(func(m *model, w http.ResponseWriter, r *http.Request, body []byte) {
		claudeAnswer(m, opts.Calls, w, r, body)
	})
	defer m.srv.Close()

	env := append(baseEnv(opts.Home),
		"ANTHROPIC_BASE_URL="+m.srv.URL,
		"ANTHROPIC_API_KEY=dummy",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
	)
	env = append(env, opts.Env...)
	args := append([]string{"-p", opts.Prompt, "--output-format", "json"}, opts.ExtraArgs...)
	turn := &Turn{}
	err := run(ctx, Bin(Claude), args, opts.Dir, env, opts.Stdin, turn)
	m.fill(turn)
	return turn, err
}

// claudeTrust marks dir as a trusted workspace in home/.claude.json, as
// accepting the trust dialog once would; Claude Code ignores a workspace's
// permission rules until then. An existing file is kept and extended.
func claudeTrust(home, dir string) error {
	path := filepath.Join(home, ".claude.json")
	state := map[string]any{}
	if b, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(b, &state); err != nil {
			return fmt.Errorf("hosttest: %s: %w", path, err)
		}
	}
	projects, _ := state["projects"].(map[string]any)
	if projects == nil {
		projects = map[string]any{}
	}
	dirs := []string{dir}
	if real, err := filepath.EvalSymlinks(dir); err == nil && real != dir {
		dirs = append(dirs, real)
	}
	for _, d := range dirs {
		p, _ := projects[d].(map[string]any)
		if p == nil {
			p = map[string]any{}
		}
		p["hasTrustDialogAccepted"] = true
		projects[d] = p
	}
	state["projects"] = projects
	state["hasCompletedOnboarding"] = true
	b, err := json.MarshalIndent(state, "", "  ")
	if err != nil {
		return fmt.Errorf("hosttest: %w", err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("hosttest: %w", err)
	}
	return nil
}

type claudeRequest struct {
	Stream   bool `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

type claudeBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	ToolUseID string          `json:"tool_use_id"`
	IsError   bool            `json:"is_error"`
	Content   json.RawMessage `json:"content"`
}

// claudeResults returns the tool results in a request, in order.
func claudeResults(req claudeRequest, calls []Call) []Result {
	var results []Result
	for _, msg := range req.Messages {
		var raws []json.RawMessage
		if json.Unmarshal(msg.Content, &raws) != nil {
			continue // a plain string
		}
		for _, raw := range raws {
			var b claudeBlock
			if json.Unmarshal(raw, &b) != nil || b.Type != "tool_result" {
				continue
			}
			res := Result{CallID: b.ToolUseID, IsError: b.IsError, Raw: raw, Output: claudeText(b.Content)}
			if n := len(results); n < len(calls) {
				res.Tool = calls[n].Tool
			}
			results = append(results, res)
		}
	}
	return results
}

// claudeText flattens a tool_result's content: a string or text blocks.
func claudeText(content json.RawMessage) string {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s
	}
	var blocks []claudeBlock
	json.Unmarshal(content, &blocks)
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return joinText(parts)
}

func claudeAnswer(m *model, calls []Call, w http.ResponseWriter, r *http.Request, body []byte) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		http.NotFound(w, r)
		return
	}
	var req claudeRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	results := claudeResults(req, calls)
	m.saw(results)
	step := len(results)

	usage := map[string]any{"input_tokens": 10, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	var block map[string]any
	var delta map[string]any
	stop := "end_turn"
	if step < len(calls) {
		c := calls[step]
		block = map[string]any{"type": "tool_use", "id": callID("toolu_hosttest_", step), "name": c.Tool, "input": map[string]any{}}
		delta = map[string]any{"type": "input_json_delta", "partial_json": string(inputJSON(c))}
		stop = "tool_use"
	} else {
		block = map[string]any{"type": "text", "text": ""}
		delta = map[string]any{"type": "text_delta", "text": FinalText}
	}
	msg := map[string]any{
		"id": "msg_hosttest", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage,
	}
	if !req.Stream {
		full := map[string]any{}
		for k, v := range block {
			full[k] = v
		}
		if step < len(calls) {
			full["input"] = json.RawMessage(inputJSON(calls[step]))
		} else {
			full["text"] = FinalText
		}
		msg["content"] = []any{full}
		msg["stop_reason"] = stop
		writeJSON(w, msg)
		return
	}
	startSSE(w)
	sse(w, "message_start", map[string]any{"type": "message_start", "message": msg})
	sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": block})
	sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": delta})
	sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	sse(w, "message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 5}})
	sse(w, "message_stop", map[string]any{"type": "message_stop"})
}
