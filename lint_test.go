package airlock

import (
	"strings"
	"testing"
)

func TestLintCeiling(t *testing.T) {
	p := mustLoad(t, "p.yaml", `rules:
  - id: loose
    tool: Bash
    command: ["cat *", "rm *", "sudo *", "git push *", "echo *"]
    outcome: auto
  - {id: cleanup, tool: Bash, command: "rm -rf build*", outcome: auto, max_tier: destructive}
  - {id: asks, tool: Bash, command: "rm *", outcome: ask}
  - {id: notify-deletes, class: fs.delete, command: "rm *", outcome: notify}
`)
	var got []string
	for _, w := range p.Lint(ShellForTests) {
		got = append(got, w.String())
	}
	want := []string{
		"p.yaml:4:24: warning: rule loose lets \"rm *\" auto, but `rm x` is destructive (fs.delete), above the rule's ceiling network-egress: " +
			"the pattern never lets it run; to let it, add `max_tier: destructive` to the rule (line 2)",
		"p.yaml:4:32: warning: rule loose lets \"sudo *\" auto, but `sudo x` is privileged (system.admin), above the rule's ceiling network-egress: " +
			"the pattern never lets it run; to let it, add `max_tier: privileged` to the rule (line 2)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("lint:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if w := p.Lint(nil); len(w) != 0 {
		t.Fatalf("without an analyser: %v", w)
	}
}
