package gate

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

// A default, a rule for every action of an agent (or of every agent) and
// the autonomous preset that loosen without saying how far: each stops at
// network-egress, which its author, writing before ceilings held for them
// or expecting "autonomous" to mean everything, probably did not expect.
func TestLintLooseningWithoutMaxTier(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"levels default", `rules:
  - {id: email, tool: send_email, outcome: L1}
  - {id: deletes, tool: delete_file, outcome: L3}
`, []string{
			"p.yaml:2:44: warning: this policy writes outcomes as levels (L1-L3), so an action no rule matches gets the levels default L2 (notify), " +
				"but only up to network-egress: a spend, destructive or privileged action no rule matches (git push --force, rm -rf, sudo) is not let run by it " +
				"and goes to the next layer or the tier default (ask). To keep that, say so: `default: {outcome: L2, max_tier: network-egress}`; " +
				"to let it reach further, write the highest tier you mean as max_tier; to ask instead, `default: L3`",
		}},
		{"policy default", "default: auto\n", []string{
			"p.yaml:1:10: warning: the policy default auto applies where no rule matches, but only up to network-egress: a spend, destructive or privileged " +
				"action no rule matches (git push --force, rm -rf, sudo) is not let run by it and goes to the next layer or the tier default (ask). " +
				"To keep that, say so: `default: {outcome: auto, max_tier: network-egress}`; to let it reach further, write the highest tier you mean as max_tier",
		}},
		{"stated", "default: {outcome: notify, max_tier: network-egress}\n", nil},
		{"stated higher", "default: {outcome: auto, max_tier: privileged}\nrules:\n  - {tool: x, outcome: L1}\n", nil},
		{"asks", "default: ask\nrules:\n  - {id: all, agent: bot, outcome: ask}\n", nil},
		{"agent-wide rules", `rules:
  - {id: trust-bot, agent: bot, outcome: auto}
  - {id: trust-all, agent: "*", when: "agent != 'x'", outcome: notify}
  - {id: trust-ops, agent: ops, min_tier: destructive, outcome: notify}
  - {id: trust-root, agent: root, outcome: auto, max_tier: network-egress}
  - {id: bot-writes, agent: bot, tool: write_file, outcome: auto}
`, []string{
			"p.yaml:2:5: warning: rule trust-bot lets every action of agent bot run (auto), but only up to network-egress: its spend, destructive and " +
				"privileged actions are not let run by it. To keep that, say so: add `max_tier: network-egress` to the rule; to let it reach further, " +
				"add the highest tier you mean (`max_tier: privileged` for everything)",
			"p.yaml:3:5: warning: rule trust-all lets every action of every agent run (notify), but only up to network-egress: its spend, destructive and " +
				"privileged actions are not let run by it. To keep that, say so: add `max_tier: network-egress` to the rule; to let it reach further, " +
				"add the highest tier you mean (`max_tier: privileged` for everything)",
		}},
		{"autonomous", `preset: autonomous
agents:
  free: {preset: autonomous}
  trusted: {preset: autonomous}
  reviewed: {preset: standard}
  stated: {preset: autonomous}
rules:
  - {id: free-all, agent: [free, reviewed], outcome: auto}
  - {id: trusted-all, agent: trusted, outcome: auto}
  - {id: trusted-deletes, agent: trusted, class: fs.delete, outcome: notify}
  - {id: stated-all, agent: stated, outcome: auto, max_tier: network-egress}
  - {id: web, tool: WebFetch, outcome: auto}
`, []string{
			"p.yaml:3:18: warning: preset autonomous lets the rules alone decide for agent free, but lifts no ceiling: the default or the rules that " +
				"let all its actions run stop at network-egress, and nothing in this policy reaches above it, so its spend, destructive and privileged " +
				"actions are not let run by this policy. If that is what you mean, say `max_tier: network-egress` on them; else the highest tier you mean",
			"p.yaml:8:5: warning: rule free-all lets every action of agent free, reviewed run (auto), but only up to network-egress: its spend, destructive and " +
				"privileged actions are not let run by it. To keep that, say so: add `max_tier: network-egress` to the rule; to let it reach further, " +
				"add the highest tier you mean (`max_tier: privileged` for everything)",
			"p.yaml:9:5: warning: rule trusted-all lets every action of agent trusted run (auto), but only up to network-egress: its spend, destructive and " +
				"privileged actions are not let run by it. To keep that, say so: add `max_tier: network-egress` to the rule; to let it reach further, " +
				"add the highest tier you mean (`max_tier: privileged` for everything)",
		}},
		{"autonomous with a default", "preset: autonomous\ndefault: auto\n", []string{
			"p.yaml:1:9: warning: preset autonomous lets the rules alone decide for every agent without its own preset, but lifts no ceiling: " +
				"the default or the rules that let all their actions run stop at network-egress, and nothing in this policy reaches above it, " +
				"so their spend, destructive and privileged actions are not let run by this policy. If that is what you mean, say `max_tier: network-egress` " +
				"on them; else the highest tier you mean",
			"p.yaml:2:10: warning: the policy default auto applies where no rule matches, but only up to network-egress: a spend, destructive or privileged " +
				"action no rule matches (git push --force, rm -rf, sudo) is not let run by it and goes to the next layer or the tier default (ask). " +
				"To keep that, say so: `default: {outcome: auto, max_tier: network-egress}`; to let it reach further, write the highest tier you mean as max_tier",
		}},
		{"autonomous, said", "preset: autonomous\ndefault: {outcome: auto, max_tier: destructive}\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, w := range mustLoad(t, "p.yaml", tc.src).Lint(ShellForTests) {
				got = append(got, w.String())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("lint:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
