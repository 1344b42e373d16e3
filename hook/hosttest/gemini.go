package hosttest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// RunGemini runs one turn of Gemini CLI (`gemini -p … --approval-mode yolo`)
// in opts.Dir against a scripted Gemini API. The hooks are read from the
// settings the caller wrote, e.g. opts.Dir/.gemini/settings.json.
func RunGemini(ctx context.Context, opts Options) (*Turn, error) {
	if err := check(&opts); err != nil {
		return nil, err
	}
	if err := geminiAuth(opts.Home); err != nil {
		return nil, err
	}
	m := newModel(func(m *model, w http.ResponseWriter, r *http.Request, body []byte) {
		geminiAnswer(m, opts.Calls, w, r, body)
	})
	defer m.srv.Close()

	env := append(baseEnv(opts.Home),
		"GEMINI_API_KEY=dummy",
		"GOOGLE_GEMINI_BASE_URL="+m.srv.URL,
		"GEMINI_CLI_TRUST_WORKSPACE=true",
		"GEMINI_CLI_NO_RELAUNCH=true",
	)
	env = append(env, opts.Env...)
	args := append([]string{"-p", opts.Prompt, "--output-format", "json", "--approval-mode", "yolo"}, opts.ExtraArgs...)
	turn := &Turn{}
	err := run(ctx, Bin(Gemini), args, opts.Dir, env, opts.Stdin, turn)
	m.fill(turn)
	return turn, err
}

// geminiAuth selects the API-key auth in home/.gemini/settings.json: with
// GOOGLE_GEMINI_BASE_URL set and no auth chosen, Gemini CLI picks the
// "gateway" auth, which non-interactive mode refuses ("Invalid auth method
// selected."). An existing file is kept and extended.
func geminiAuth(home string) error {
	path := filepath.Join(home, ".gemini", "settings.json")
	settings := map[string]any{}
	if b, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(b, &settings); err != nil {
			return fmt.Errorf("hosttest: %s: %w", path, err)
		}
	}
	security, _ := settings["security"].(map[string]any)
	if security == nil {
		security = map[string]any{}
	}
	auth, _ := security["auth"].(map[string]any)
	if auth == nil {
		auth = map[string]any{}
	}
	auth["selectedType"] = "gemini-api-key"
	security["auth"] = auth
	settings["security"] = security
	b, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		return fmt.Errorf("hosttest: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("hosttest: %w", err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("hosttest: %w", err)
	}
	return nil
}

type geminiPart struct {
	Text             string          `json:"text"`
	FunctionCall     json.RawMessage `json:"functionCall"`
	FunctionResponse *struct {
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse"`
}

// geminiOutput flattens a functionResponse's response: {"output": "…"} or
// {"error": "…"} as Gemini CLI sends it, else the JSON itself.
func geminiOutput(raw json.RawMessage) (string, bool) {
	var r struct {
		Output *string `json:"output"`
		Error  *string `json:"error"`
	}
	json.Unmarshal(raw, &r)
	switch {
	case r.Error != nil:
		return *r.Error, true
	case r.Output != nil:
		return *r.Output, false
	}
	return string(raw), false
}

func geminiAnswer(m *model, calls []Call, w http.ResponseWriter, r *http.Request, body []byte) {
	if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/v1beta/models/") {
		http.NotFound(w, r)
		return
	}
	usage := map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}
	_, method, _ := strings.Cut(r.URL.Path, ":")
	switch method {
	case "countTokens":
		writeJSON(w, map[string]any{"totalTokens": 10})
		return
	case "generateContent":
		// The model router and the other side questions Gemini CLI asks
		// with a JSON schema; one object answers all of them.
		text := `{"complexity_reasoning":"scripted","complexity_score":50,"reasoning":"scripted","next_speaker":"user"}`
		writeJSON(w, map[string]any{"candidates": []any{map[string]any{
			"content":      map[string]any{"role": "model", "parts": []any{map[string]any{"text": text}}},
			"finishReason": "STOP", "index": 0}}, "usageMetadata": usage})
		return
	case "streamGenerateContent":
	default:
		http.NotFound(w, r)
		return
	}
	var req struct {
		Contents []struct {
			Role  string            `json:"role"`
			Parts []json.RawMessage `json:"parts"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var results []Result
	for _, c := range req.Contents {
		for _, raw := range c.Parts {
			var p geminiPart
			if json.Unmarshal(raw, &p) != nil || p.FunctionResponse == nil {
				continue
			}
			out, isErr := geminiOutput(p.FunctionResponse.Response)
			res := Result{Tool: p.FunctionResponse.Name, CallID: p.FunctionResponse.ID, Output: out, IsError: isErr, Raw: raw}
			results = append(results, res)
		}
	}
	m.saw(results)
	step := len(results)

	var part map[string]any
	if step < len(calls) {
		c := calls[step]
		part = map[string]any{"functionCall": map[string]any{"name": c.Tool, "args": json.RawMessage(inputJSON(c))}}
	} else {
		part = map[string]any{"text": FinalText}
	}
	startSSE(w)
	sse(w, "", map[string]any{"candidates": []any{map[string]any{
		"content":      map[string]any{"role": "model", "parts": []any{part}},
		"finishReason": "STOP", "index": 0}}, "usageMetadata": usage})
}
