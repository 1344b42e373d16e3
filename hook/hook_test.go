package hook_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/hook"
)

// TestFail: whatever could not be answered blocks with exit 2 and one line
// naming the refusal code — relay writes Airlock's codes out, so this
// holds them to the root package's.
func TestFail(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{airlock.Errorf(airlock.EINVALID, "bad"), airlock.CodeInvalid + ": bad"},
		{airlock.Errorf(airlock.EUNAUTHORIZED, "no"), airlock.CodeDenied + ": no"},
		{airlock.Errorf(airlock.EUNAVAILABLE, "down"), airlock.CodeUnavailable + ": down"},
		{airlock.Errorf(airlock.EINTERNAL, "bug"), airlock.CodeUnavailable + ": bug"},
		{airlock.Errorf(airlock.CodePending, "wait"), airlock.CodePending + ": wait"},
		{errors.New("secret detail"), airlock.CodeUnavailable + ": Internal error."},
	} {
		r := hook.Fail(c.err)
		if want := "Airlock blocked this call: " + c.want; r.Exit != 2 || r.Stdout != "" || r.Stderr != want {
			t.Errorf("Fail(%v) = %+v, want exit 2 and %q", c.err, r, want)
		}
	}
}

// TestOwned: install, uninstall and doctor know Airlock's hooks — airlock
// hook <host> by any path, airlock-hook <host> by any path, quoted or
// not — and leave every other command alone.
func TestOwned(t *testing.T) {
	for _, c := range []struct {
		host, command string
		ours          bool
	}{
		{"claude-code", "/usr/local/bin/airlock hook claude-code", true},
		{"claude-code", "airlock hook claude-code --timeout 5m0s", true},
		{"claude-code", "'/opt/my tools/airlock' hook claude-code", true},
		{"claude-code", "/usr/local/bin/airlock-hook claude-code", true},
		{"codex", "airlock-hook codex --token-file /home/a/t", true},
		{"gemini", "'/opt/my tools/airlock-hook' gemini --timeout 1m0s", true},
		{"gemini", `"/opt/my tools/airlock-hook" gemini`, true},
		{"claude-code", `C:\tools\airlock-hook.exe claude-code`, true},
		{"claude-code", "airlock-hook codex", false},
		{"claude-code", "airlock hook codex", false},
		{"claude-code", "notairlock-hook claude-code", false},
		{"claude-code", "airlock-hooks claude-code", false},
		{"claude-code", "./mine.sh claude-code", false},
		{"claude-code", "airlock-hook claude-code-beta", false},
	} {
		host, err := hook.Lookup(c.host)
		if err != nil {
			t.Fatal(err)
		}
		ev := hook.SettingsOf(host).Events[0]
		text, _ := json.Marshal(map[string]any{"hooks": map[string]any{ev: []any{
			map[string]any{"matcher": "*", "hooks": []any{map[string]any{"type": "command", "command": c.command}}}}}})
		found, err := hook.Installed(host, text)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(found[ev]) == 1; got != c.ours {
			t.Errorf("%s %q: Airlock's = %t, want %t", c.host, c.command, got, c.ours)
		}
	}
}
