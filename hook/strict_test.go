package hook_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/hook"
)

// TestAmbiguousPayloadsRefused: a payload whose keys repeat, or differ only
// in case (as encoding/json folds them: K the Kelvin sign is k), anywhere —
// the event's name, the tool's name, its input at any depth — could be
// decided on one reading while the host runs another; so could one with
// invalid UTF-8. Each is refused, and every host blocks the call.
func TestAmbiguousPayloadsRefused(t *testing.T) {
	for _, c := range []struct {
		host, file string
		mention    []string
	}{
		{"claude-code", "claude/pretooluse-args-differing-in-case.json", []string{`"PATH"`, "/tool_input/PATH"}},
		{"claude-code", "claude/pretooluse-tool-name-differing-in-case.json", []string{`"TOOL_NAME"`, "/TOOL_NAME"}},
		{"codex", "codex/pretooluse-event-name-kelvin-sign.json", []string{`"hook_event_name"`}},
		{"codex", "codex/pretooluse-tool-input-twice.json", []string{`"tool_input"`, "/tool_input"}},
		{"gemini", "gemini/beforetool-deep-keys-differing-in-case.json", []string{`"readonly"`, "/tool_input/options/0/readonly"}},
		{"gemini", "gemini/beforetool-invalid-utf8.json", []string{"UTF-8"}},
	} {
		t.Run(c.file, func(t *testing.T) {
			payload, err := os.ReadFile(filepath.Join("..", "testdata", "hooks", c.file))
			if err != nil {
				t.Fatal(err)
			}
			host, err := hook.Lookup(c.host)
			if err != nil {
				t.Fatal(err)
			}
			ev, err := host.Parse(payload)
			if err == nil {
				t.Fatalf("read as %s %s %s, want it refused", ev.Name, ev.Action.Tool, ev.Action.Args)
			}
			if airlock.ErrorCode(err) != airlock.EINVALID {
				t.Errorf("error %v, want code %s", err, airlock.EINVALID)
			}
			for _, m := range c.mention {
				if !strings.Contains(airlock.ErrorMessage(err), m) {
					t.Errorf("the error %q does not say %s", airlock.ErrorMessage(err), m)
				}
			}
			if r := hook.Fail(err); r.Exit != 2 || !strings.Contains(r.Stderr, airlock.CodeInvalid) {
				t.Errorf("the reply %+v does not block", r)
			}
		})
	}
}
