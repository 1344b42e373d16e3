package hosttest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// codexKeyVar names the environment variable holding the dummy API key.
const codexKeyVar = "AIRLOCK_HOSTTEST_API_KEY"

// RunCodex runs one turn of Codex (`codex exec --json`) in opts.Dir against a
// scripted OpenAI Responses API. It writes CODEX_HOME/config.toml (the model
// provider, opts.Dir marked trusted, then opts.CodexConfig); the caller
// writes the hooks (CODEX_HOME/hooks.json or opts.Dir/.codex/hooks.json).
func RunCodex(ctx context.Context, opts Options) (*Turn, error) {
	if err := check(&opts); err != nil {
		return nil, err
	}
	codexHome := filepath.Join(opts.Home, ".codex")
	for _, kv := range opts.Env {
		if v, ok := strings.CutPrefix(kv, "CODEX_HOME="); ok {
			codexHome = v
		}
	}
	m := newModel(func(m *model, w http.ResponseWriter, r *http.Request, body []byte) {
		codexAnswer(m, opts.Calls, w, r, body)
	})
	defer m.srv.Close()

	if err := os.MkdirAll(codexHome, 0o755); err != nil {
		return nil, fmt.Errorf("hosttest: %w", err)
	}
	config := fmt.Sprintf(`model = "gpt-5"
model_provider = "hosttest"

[model_providers.hosttest]
name = "hosttest"
base_url = %s
wire_api = "responses"
env_key = %q
request_max_retries = 0
stream_max_retries = 0
stream_idle_timeout_ms = 60000

[projects.%s]
trust_level = "trusted"
`, strconv.Quote(m.srv.URL+"/v1"), codexKeyVar, strconv.Quote(opts.Dir))
	config += "\n" + opts.CodexConfig
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o644); err != nil {
		return nil, fmt.Errorf("hosttest: %w", err)
	}

	env := append(baseEnv(opts.Home), "CODEX_HOME="+codexHome, codexKeyVar+"=dummy", "RUST_LOG=error")
	env = append(env, opts.Env...)
	args := []string{"exec", "--json", "--skip-git-repo-check"}
	if opts.TrustHooks {
		args = append(args, "--dangerously-bypass-hook-trust")
	}
	args = append(args, opts.ExtraArgs...)
	args = append(args, opts.Prompt)
	turn := &Turn{}
	err := run(ctx, Bin(Codex), args, opts.Dir, env, opts.Stdin, turn)
	m.fill(turn)
	return turn, err
}

type codexItem struct {
	Type   string          `json:"type"`
	CallID string          `json:"call_id"`
	Name   string          `json:"name"`
	Output json.RawMessage `json:"output"`
}

// codexOutput flattens a function_call_output's output: a string or a list
// of content items with text.
func codexOutput(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var items []struct {
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &items)
	var parts []string
	for _, it := range items {
		parts = append(parts, it.Text)
	}
	return joinText(parts)
}

func codexAnswer(m *model, calls []Call, w http.ResponseWriter, r *http.Request, body []byte) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/responses" {
		http.NotFound(w, r)
		return
	}
	var req struct {
		Input []json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var results []Result
	for _, raw := range req.Input {
		var it codexItem
		if json.Unmarshal(raw, &it) != nil || (it.Type != "function_call_output" && it.Type != "custom_tool_call_output") {
			continue
		}
		res := Result{CallID: it.CallID, Output: codexOutput(it.Output), Raw: raw}
		if n := len(results); n < len(calls) {
			res.Tool = calls[n].Tool
		}
		results = append(results, res)
	}
	m.saw(results)
	step := len(results)

	var item map[string]any
	if step < len(calls) {
		c := calls[step]
		item = map[string]any{"type": "function_call", "id": callID("fc_hosttest_", step),
			"call_id": callID("call_hosttest_", step), "name": c.Tool, "arguments": string(inputJSON(c)), "status": "completed"}
	} else {
		item = map[string]any{"type": "message", "id": "msg_hosttest", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": FinalText, "annotations": []any{}}}}
	}
	id := fmt.Sprintf("resp_hosttest_%d", step+1)
	startSSE(w)
	sse(w, "response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": id}})
	sse(w, "response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})
	sse(w, "response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	sse(w, "response.completed", map[string]any{"type": "response.completed", "response": map[string]any{
		"id": id,
		"usage": map[string]any{"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": 5, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 15},
	}})
}
