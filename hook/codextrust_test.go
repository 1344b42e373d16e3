package hook

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func ptr[T any](v T) *T { return &v }

// The golden hashes were reported as currentHash by the real Codex 0.169.0
// (`codex app-server`, JSON-RPC hooks/list, npm @openai/codex@0.169.0) for
// hooks.json files written with exactly these handlers, in a scratch
// CODEX_HOME; the key's path part is whatever Source is.
func TestCodexTrustGolden(t *testing.T) {
	weird := "a\"b\\c\n\t<>&é\u2028\u0001 \u007f"
	tests := []struct {
		name string
		hook CodexHook
		key  string
		hash string
	}{
		{"PreToolUse Bash", CodexHook{Source: "/tmp/cx/home/hooks.json", Event: "PreToolUse", Matcher: ptr("Bash"), Command: "airlock hook codex"},
			"/tmp/cx/home/hooks.json:pre_tool_use:0:0", "sha256:6d4fcb020127ac3e16487bde74398e2f83e10b81f6aeb658f2725aefe22e0313"},
		// The same hook in config.toml's [hooks] table hashes the same; only the key differs.
		{"PreToolUse Bash in config.toml", CodexHook{Source: "/tmp/cx/h4/config.toml", Event: "PreToolUse", Matcher: ptr("Bash"), Command: "airlock hook codex"},
			"/tmp/cx/h4/config.toml:pre_tool_use:0:0", "sha256:6d4fcb020127ac3e16487bde74398e2f83e10b81f6aeb658f2725aefe22e0313"},
		{"PermissionRequest timeout", CodexHook{Source: "/tmp/cx/home/hooks.json", Event: "PermissionRequest", Command: "airlock hook codex", Timeout: ptr[uint64](30)},
			"/tmp/cx/home/hooks.json:permission_request:0:0", "sha256:e656e4a040997ca7682abb3066506c88b23457c0a498366a2acda1553d34e1dd"},
		{"statusMessage", CodexHook{Source: "/tmp/cx/home/hooks.json", Event: "PermissionRequest", Handler: 1, Command: "echo hi", StatusMessage: ptr("checking")},
			"/tmp/cx/home/hooks.json:permission_request:0:1", "sha256:cccca2ead6fdafa4513db3e5881f1e18e2088845358efd75d1b843291a7aee1a"},
		{"escapes and timeout 0", CodexHook{Source: "/tmp/cx/home2/hooks.json", Event: "PreToolUse", Matcher: ptr("*"), Command: weird, Timeout: ptr[uint64](0)},
			"/tmp/cx/home2/hooks.json:pre_tool_use:0:0", "sha256:db7a07d9ae51ee96ce7401145b165be3448ea747026f2ee1b3e84890f577aae2"},
		{"empty matcher, async, additionalContextLimit", CodexHook{Source: "/tmp/cx/home2/hooks.json", Event: "PreToolUse", Group: 1, Matcher: ptr(""), Command: "y", Async: true, AdditionalContextLimit: ptr[uint64](100)},
			"/tmp/cx/home2/hooks.json:pre_tool_use:1:0", "sha256:f344a2311c5c7a8c45cd6d87995a675e59d753f66076abe5f822587df631e323"},
		{"no matcher", CodexHook{Source: "/tmp/cx/home2/hooks.json", Event: "PreToolUse", Group: 2, Command: "z"},
			"/tmp/cx/home2/hooks.json:pre_tool_use:2:0", "sha256:558b98a7bd06d94ba543ba81dec81d40988d04456b9c364b07098b6f22f5a089"},
		{"empty statusMessage", CodexHook{Source: "/tmp/cx/home2/hooks.json", Event: "PreToolUse", Group: 3, Matcher: ptr("^(Bash|apply_patch)$"), Command: "w", StatusMessage: ptr("")},
			"/tmp/cx/home2/hooks.json:pre_tool_use:3:0", "sha256:39f772d83190a1894bcb65d916528fbf22d26c898b20dc291b736cbbdd8331e5"},
		{"large timeout", CodexHook{Source: "/tmp/cx/home3/hooks.json", Event: "PreToolUse", Handler: 3, Matcher: ptr("Bash"), Command: "x", Timeout: ptr[uint64](100000)},
			"/tmp/cx/home3/hooks.json:pre_tool_use:0:3", "sha256:d345ff267c0186ab808345269642f98da60ce49f3f3da67e9ae71dc41b4c92de"},
		{"PostToolUse", CodexHook{Source: "/tmp/cx/home2/hooks.json", Event: "PostToolUse", Matcher: ptr("*"), Command: "x"},
			"/tmp/cx/home2/hooks.json:post_tool_use:0:0", "sha256:28e36e3220a6e921775fbb6ab4aa9f312e72273ff05b209ba81727e383c55e42"},
		{"PostToolUse timeout 100", CodexHook{Source: "/tmp/cx/home3/hooks.json", Event: "PostToolUse", Handler: 1, Matcher: ptr("Bash"), Command: "x", Timeout: ptr[uint64](100)},
			"/tmp/cx/home3/hooks.json:post_tool_use:0:1", "sha256:11636ad3cf10e38fad029aedfcadca38c780d30668e36d2c87821005bec50da2"},
		{"PermissionRequest ignores additionalContextLimit", CodexHook{Source: "/tmp/cx/h4/hooks.json", Event: "PermissionRequest", Command: "x", AdditionalContextLimit: ptr[uint64](7)},
			"/tmp/cx/h4/hooks.json:permission_request:0:0", "sha256:9da8d62e1a9154b121421ef470d3931a088bf09f77e425a9479a171f780456f3"},
		{"Stop drops matcher", CodexHook{Source: "/tmp/cx/home2/hooks.json", Event: "Stop", Matcher: ptr("*"), Command: "x"},
			"/tmp/cx/home2/hooks.json:stop:0:0", "sha256:6f14477468be127a92604ce05b51030268ccd6077fa7a807515589cfcfc7fd17"},
		{"UserPromptSubmit drops matcher", CodexHook{Source: "/tmp/cx/home2/hooks.json", Event: "UserPromptSubmit", Matcher: ptr("*"), Command: "x"},
			"/tmp/cx/home2/hooks.json:user_prompt_submit:0:0", "sha256:9f83d2c9d1b48d3700283cd1d70b9fc7ad739f3245049d933978e90187ee8a84"},
		{"PreModelRequest drops matcher", CodexHook{Source: "/tmp/cx/home3/hooks.json", Event: "PreModelRequest", Matcher: ptr("Bash"), Command: "x", Timeout: ptr[uint64](5)},
			"/tmp/cx/home3/hooks.json:pre_model_request:0:0", "sha256:defc33e908eb36957dd169398277295eb3ec89bc8f4f814a56abf63836f473ec"},
		{"Interrupt default timeout 1", CodexHook{Source: "/tmp/cx/home2/hooks.json", Event: "Interrupt", Matcher: ptr("*"), Command: "x"},
			"/tmp/cx/home2/hooks.json:interrupt:0:0", "sha256:62ff3f22d466214a78ee1c476871d1929af10e332f3b32e22b856433017c72fe"},
		{"SessionEnd clamps to 3", CodexHook{Source: "/tmp/cx/home3/hooks.json", Event: "SessionEnd", Matcher: ptr("Bash"), Command: "x", Timeout: ptr[uint64](5)},
			"/tmp/cx/home3/hooks.json:session_end:0:0", "sha256:12230cea43421304e9f91b438b91e280ea5aa57c1d33e27d20ff6cf3b4a1e59f"},
		{"SessionEnd timeout 0", CodexHook{Source: "/tmp/cx/h4/hooks.json", Event: "SessionEnd", Command: "x", Timeout: ptr[uint64](0)},
			"/tmp/cx/h4/hooks.json:session_end:0:0", "sha256:f3041eae9d0be5faed5367060d633bb905ed83825e2f4d9c7bc7f5ef19fe4bc7"},
		{"SessionEnd timeout 2", CodexHook{Source: "/tmp/cx/h4/hooks.json", Event: "SessionEnd", Handler: 1, Command: "x", Timeout: ptr[uint64](2)},
			"/tmp/cx/h4/hooks.json:session_end:0:1", "sha256:3ced4c28664694cfa2c555f972196962bf7eab06d8fa69f1836ce22690440de3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key, hash, err := CodexTrust(tt.hook)
			if err != nil {
				t.Fatal(err)
			}
			if key != tt.key || hash != tt.hash {
				t.Errorf("CodexTrust = %q, %q; want %q, %q", key, hash, tt.key, tt.hash)
			}
		})
	}
}

func TestCodexTrustErrors(t *testing.T) {
	for _, h := range []CodexHook{
		{Source: "/x/hooks.json", Event: "BeforeTool", Command: "x"},
		{Source: "/x/hooks.json", Event: "PreToolUse", Command: "  "},
		{Source: "", Event: "PreToolUse", Command: "x"},
		{Source: "/x/hooks.json", Event: "PreToolUse", Group: -1, Command: "x"},
		{Source: "/x/hooks.json", Event: "PreToolUse", Command: "\xff"},
	} {
		if _, _, err := CodexTrust(h); err == nil {
			t.Errorf("CodexTrust(%+v) succeeded", h)
		}
	}
}

const codexKey = "/home/u/.codex/hooks.json:pre_tool_use:0:0"

func TestTrustCodexHook(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"empty file", "", `[hooks.state."/home/u/.codex/hooks.json:pre_tool_use:0:0"]
trusted_hash = "sha256:new"
enabled = true
`},
		{"appends, keeping comments and order", `# my settings
model = "o3" # inline

[projects."/repo"]
trust_level = "trusted"`, `# my settings
model = "o3" # inline

[projects."/repo"]
trust_level = "trusted"

[hooks.state."/home/u/.codex/hooks.json:pre_tool_use:0:0"]
trusted_hash = "sha256:new"
enabled = true
`},
		{"replaces in place", `[hooks.state."/home/u/.codex/hooks.json:pre_tool_use:0:0"] # airlock
# keep me
trusted_hash = "sha256:old"
enabled = false

[hooks.state."/home/u/.codex/hooks.json:stop:0:0"]
trusted_hash = "sha256:other"
`, `[hooks.state."/home/u/.codex/hooks.json:pre_tool_use:0:0"] # airlock
trusted_hash = "sha256:new"
enabled = true
# keep me

[hooks.state."/home/u/.codex/hooks.json:stop:0:0"]
trusted_hash = "sha256:other"
`},
		{"literal-quoted header, multi-line string", `s = """
[hooks.state."/home/u/.codex/hooks.json:pre_tool_use:0:0"]
"""
[ hooks . state . '/home/u/.codex/hooks.json:pre_tool_use:0:0' ]
trusted_hash = 'sha256:old'
[[x]]
a = 1
`, `s = """
[hooks.state."/home/u/.codex/hooks.json:pre_tool_use:0:0"]
"""
[ hooks . state . '/home/u/.codex/hooks.json:pre_tool_use:0:0' ]
trusted_hash = "sha256:new"
enabled = true
[[x]]
a = 1
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := TrustCodexHook([]byte(tt.in), codexKey, "sha256:new")
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
	for _, bad := range []string{
		"[hooks\n",
		"[hooks]\nstate.\"" + codexKey + "\".trusted_hash = \"x\"\n",
		"[hooks.state]\n\"" + codexKey + "\" = { trusted_hash = \"x\" }\n",
		"hooks = { x = 1 }\n",
	} {
		if got, err := TrustCodexHook([]byte(bad), codexKey, "sha256:new"); err == nil {
			t.Errorf("TrustCodexHook(%q) = %q, want an error", bad, got)
		}
	}
}

func TestUntrustCodexHook(t *testing.T) {
	in := `model = "o3"

[hooks.state."/home/u/.codex/hooks.json:pre_tool_use:0:0"]
trusted_hash = "sha256:x"
enabled = true

# the next one
[hooks.state."/home/u/.codex/hooks.json:stop:0:0"]
trusted_hash = "sha256:other"
`
	want := `model = "o3"

# the next one
[hooks.state."/home/u/.codex/hooks.json:stop:0:0"]
trusted_hash = "sha256:other"
`
	got, removed, err := UntrustCodexHook([]byte(in), codexKey)
	if err != nil || !removed || string(got) != want {
		t.Fatalf("UntrustCodexHook = %q, %v, %v; want %q", got, removed, err, want)
	}
	got, removed, err = UntrustCodexHook([]byte(want), codexKey)
	if err != nil || removed || string(got) != want {
		t.Fatalf("second UntrustCodexHook = %q, %v, %v", got, removed, err)
	}
	trusted, err := TrustCodexHook([]byte(want), codexKey, "sha256:y")
	if err != nil {
		t.Fatal(err)
	}
	back, _, err := UntrustCodexHook(trusted, codexKey)
	if err != nil || strings.TrimRight(string(back), "\n") != strings.TrimRight(want, "\n") {
		t.Fatalf("trust then untrust = %q, %v", back, err)
	}
}

// codexBinary returns the Codex CLI that hook/testdata/hosts pins, skipping
// the test when it is not installed (failing on CI).
func codexBinary(t *testing.T) string {
	t.Helper()
	bin, err := filepath.Abs("testdata/hosts/node_modules/.bin/codex")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Codex CLI missing (%v): cd hook/testdata/hosts && npm ci", err)
		}
		t.Skipf("Codex CLI missing: cd hook/testdata/hosts && npm ci")
	}
	return bin
}

type codexListedHook struct {
	Key         string `json:"key"`
	CurrentHash string `json:"currentHash"`
	TrustStatus string `json:"trustStatus"`
	Enabled     bool   `json:"enabled"`
}

// codexHooksList runs `codex app-server` with CODEX_HOME=home and returns
// what JSON-RPC hooks/list reports for cwd.
func codexHooksList(t *testing.T, bin, home, cwd string) []codexListedHook {
	t.Helper()
	cmd := exec.Command(bin, "app-server")
	cmd.Dir = cwd
	cmd.Env = append(os.Environ(), "CODEX_HOME="+home)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.WaitDelay = 5 * time.Second
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		in.Close()
		cmd.Process.Kill()
		cmd.Wait()
	}()
	timer := time.AfterFunc(30*time.Second, func() { cmd.Process.Kill() })
	defer timer.Stop()
	for _, msg := range []string{
		`{"id":1,"method":"initialize","params":{"clientInfo":{"name":"airlock-test","version":"0"}}}`,
		`{"method":"initialized"}`,
		`{"id":2,"method":"hooks/list","params":{"cwds":[` + strconvQuote(cwd) + `]}}`,
	} {
		if _, err := in.Write([]byte(msg + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var resp struct {
			ID     *int            `json:"id"`
			Error  json.RawMessage `json:"error"`
			Result struct {
				Data []struct {
					Hooks    []codexListedHook `json:"hooks"`
					Warnings []string          `json:"warnings"`
					Errors   json.RawMessage   `json:"errors"`
				} `json:"data"`
			} `json:"result"`
		}
		if err := json.Unmarshal(sc.Bytes(), &resp); err != nil || resp.ID == nil || *resp.ID != 2 {
			continue
		}
		if resp.Error != nil || len(resp.Result.Data) != 1 {
			t.Fatalf("hooks/list: %s", sc.Bytes())
		}
		return resp.Result.Data[0].Hooks
	}
	t.Fatalf("codex app-server gave no hooks/list answer: %v\n%s", sc.Err(), stderr.Bytes())
	return nil
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestCodexTrustLive proves against the real Codex that the key and hash
// are the ones it computes, that the entry TrustCodexHook writes makes it
// trust the hook, that editing the hook's command untrusts it, and that
// UntrustCodexHook undoes the trust.
func TestCodexTrustLive(t *testing.T) {
	bin := codexBinary(t)
	home, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cwd := t.TempDir()
	hooksPath := filepath.Join(home, "hooks.json")
	configPath := filepath.Join(home, "config.toml")
	writeHooks := func(command string) {
		t.Helper()
		hooks := `{"hooks":{"PreToolUse":[{"matcher":"^(Bash|apply_patch|mcp__.*)$","hooks":[` +
			`{"type":"command","command":"echo other"},` +
			`{"type":"command","command":` + strconvQuote(command) + `,"timeout":30,"statusMessage":"Airlock"}]}]}}`
		if err := os.WriteFile(hooksPath, []byte(hooks), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	const userConfig = "# the user's own settings\nmodel = \"o3\"\n\n[projects.\"/nowhere\"]\ntrust_level = \"untrusted\"\n"
	if err := os.WriteFile(configPath, []byte(userConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	command := "/usr/local/bin/airlock hook codex --policy 'a b'"
	writeHooks(command)
	ours := CodexHook{Source: hooksPath, Event: "PreToolUse", Handler: 1, Matcher: ptr("^(Bash|apply_patch|mcp__.*)$"),
		Command: command, Timeout: ptr[uint64](30), StatusMessage: ptr("Airlock")}
	key, hash, err := CodexTrust(ours)
	if err != nil {
		t.Fatal(err)
	}
	find := func(hooks []codexListedHook) codexListedHook {
		t.Helper()
		for _, h := range hooks {
			if h.Key == key {
				return h
			}
		}
		t.Fatalf("hooks/list has no %q: %+v", key, hooks)
		return codexListedHook{}
	}

	got := find(codexHooksList(t, bin, home, cwd))
	if got.CurrentHash != hash || got.TrustStatus != "untrusted" {
		t.Fatalf("before trust: %+v; want hash %s, untrusted", got, hash)
	}

	config, _ := os.ReadFile(configPath)
	trusted, err := TrustCodexHook(config, key, hash)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(trusted, []byte(userConfig)) {
		t.Fatalf("the user's settings were disturbed:\n%s", trusted)
	}
	if err := os.WriteFile(configPath, trusted, 0o600); err != nil {
		t.Fatal(err)
	}
	hooks := codexHooksList(t, bin, home, cwd)
	if got := find(hooks); got.TrustStatus != "trusted" || !got.Enabled {
		t.Fatalf("after trust: %+v", got)
	}
	for _, h := range hooks {
		if h.Key != key && h.TrustStatus != "untrusted" {
			t.Errorf("trusting ours changed %+v", h)
		}
	}

	writeHooks(command + " --edited")
	if got := find(codexHooksList(t, bin, home, cwd)); got.TrustStatus != "modified" {
		t.Fatalf("after editing the command: %+v; want modified", got)
	}
	writeHooks(command)
	if got := find(codexHooksList(t, bin, home, cwd)); got.TrustStatus != "trusted" {
		t.Fatalf("after restoring the command: %+v; want trusted", got)
	}

	untrusted, removed, err := UntrustCodexHook(trusted, key)
	if err != nil || !removed {
		t.Fatalf("UntrustCodexHook: %v, %v", removed, err)
	}
	if err := os.WriteFile(configPath, untrusted, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := find(codexHooksList(t, bin, home, cwd)); got.TrustStatus != "untrusted" {
		t.Fatalf("after untrust: %+v", got)
	}
}
