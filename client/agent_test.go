package client_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestAgentLinksLittle: a Go agent that talks to a server
// (examples/agent: the root and this package) links at most 20 packages
// outside the standard library, and nothing of the engine, the stores or
// the server: an agent's binary carries no policy parser, no CEL, no SQL
// driver and no metrics.
func TestAgentLinksLittle(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}",
		"github.com/airlock-dev/airlock/examples/agent").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) > 20 {
		t.Errorf("the 10-line agent links %d non-standard packages, want at most 20:\n%s", len(deps), strings.Join(deps, "\n"))
	}
	for _, d := range deps {
		for _, heavy := range []string{"/gate", "/checkpoint", "/http", "/sqlite", "/postgres", "/hook", "cel.dev/", "yaml", "prometheus", "huma", "modernc.org/", "jackc/"} {
			if strings.Contains(d, heavy) && d != "github.com/airlock-dev/airlock/hook/relay" {
				t.Errorf("the 10-line agent links %s", d)
			}
		}
	}
}
