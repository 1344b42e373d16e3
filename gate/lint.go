package gate

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/catalog"
)

// Lint returns warnings about a policy that loads but probably does not do
// what its author meant, in file order: rules that can never decide
// because an earlier rule of the same step always matches first,
// conditions that read a shell command as text, classes that nothing
// defines, rules that loosen whose own command patterns name a program
// that is always above their ceiling (sh, which may be nil, classifies
// those programs), and the paths that loosen everything without saying how
// far — a default (a levels-style policy's L2 too), a rule for every action
// of an agent, the autonomous preset — which stop at network-egress.
func (p *Policy) Lint(sh catalog.ShellAnalyser) []Problem {
	var out []Problem
	warn := func(pos Pos, format string, args ...any) {
		out = append(out, Problem{File: p.file, Line: pos.Line, Col: pos.Col, Message: "warning: " + fmt.Sprintf(format, args...)})
	}
	for i, b := range p.rules {
		for _, a := range p.rules[:i] {
			if a.step() == b.step() && a.shadows(b) {
				warn(b.pos, "rule %s can never decide: rule %s (line %d) comes first in the same step (%s) and matches everything it matches",
					b.id, a.id, a.pos.Line, stepNames[a.step()])
				break
			}
		}
	}
	known := map[airlock.Class]bool{}
	for _, c := range builtinClasses {
		known[c] = true
	}
	for _, c := range p.classifiers {
		known[c.class] = true
	}
	for _, r := range append(slices.Clone(p.rules), p.tagRules...) {
		if r.when != nil && strings.Contains(r.when.src, "args.command") && matchesShellTool(r.tools) {
			warn(r.when.pos, "rule %s reads args.command as text: \"git status && rm -rf /\" starts with \"git status\" too; "+
				"use command: patterns, which must match every command of the parsed script", r.id)
		}
		for _, c := range r.classes {
			if c.exact() && !known[airlock.Class(c.text)] {
				warn(c.pos, "rule %s names class %q, which is neither built in nor defined by a classifier of this policy", r.id, c.text)
			}
		}
	}
	if sh != nil {
		for _, r := range p.rules {
			p.lintCeiling(r, sh, warn)
		}
	}
	p.lintDefault(warn)
	for _, r := range p.rules {
		lintEveryAction(r, warn)
	}
	p.lintAutonomous(warn)
	slices.SortStableFunc(out, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col))
	})
	return out
}

// lintDefault warns about a default that loosens without saying how far it
// reaches. It stops at network-egress, which a default written before
// ceilings held for defaults, or the L2 a levels-style policy implies,
// probably did not mean; stating max_tier, even network-egress, says it
// did.
func (p *Policy) lintDefault(warn func(Pos, string, ...any)) {
	if !p.defaultLoosens() || p.defaultMaxTier != 0 {
		return
	}
	const rest = "but only up to network-egress: a spend, destructive or privileged action no rule matches (git push --force, rm -rf, sudo) " +
		"is not let run by it and goes to the next layer or the tier default (ask). To keep that, say so: " +
		"`default: {outcome: %s, max_tier: network-egress}`; to let it reach further, write the highest tier you mean as max_tier"
	if p.defaultSource == "levels default" {
		warn(p.levelsPos, "this policy writes outcomes as levels (L1-L3), so an action no rule matches gets the levels default L2 (notify), "+
			rest+"; to ask instead, `default: L3`", "L2")
		return
	}
	warn(p.defaultPos, "the policy default %s applies where no rule matches, "+rest, p.defaultOutcome, p.defaultOutcome)
}

// everyAction reports whether a rule loosens every action of the agents it
// names (or of every agent) without saying how far: it names no tool, class
// or command, no max_tier and no min_tier above the default ceiling.
func (r *rule) everyAction() bool {
	return r.loosens() && r.maxTier == 0 && !r.explicit() && r.minTier <= DefaultCeiling
}

// lintEveryAction warns about a rule that lets every action of an agent
// run without saying how far it reaches: an agent-wide rule stops at
// network-egress, which its author, trusting the agent, may not expect.
func lintEveryAction(r *rule, warn func(Pos, string, ...any)) {
	if !r.everyAction() {
		return
	}
	who := "every agent"
	if constrains(r.agents) {
		who = "agent " + strings.Join(texts(r.agents), ", ")
	}
	warn(r.pos, "rule %s lets every action of %s run (%s), but only up to network-egress: its spend, destructive and privileged actions "+
		"are not let run by it. To keep that, say so: add `max_tier: network-egress` to the rule; to let it reach further, "+
		"add the highest tier you mean (`max_tier: privileged` for everything)", r.id, who, r.outcome)
}

// lintAutonomous warns about an autonomous preset whose agents a default or
// an every-action rule lets run without saying how far, while nothing in
// the policy reaches above network-egress for them: whoever wrote
// "autonomous" may expect it to lift the ceilings, and it lifts none.
func (p *Policy) lintAutonomous(warn func(Pos, string, ...any)) {
	const msg = "preset autonomous lets the rules alone decide for %s, but lifts no ceiling: the default or the rules that let all %s " +
		"actions run stop at network-egress, and nothing in this policy reaches above it, so %s spend, destructive and privileged actions " +
		"are not let run by this policy. If that is what you mean, say `max_tier: network-egress` on them; else the highest tier you mean"
	if p.preset == airlock.PresetAutonomous && p.loosensUnstated(p.withoutOwnPreset) && !p.reachesAbove(p.withoutOwnPreset) {
		warn(p.presetPos, msg, "every agent without its own preset", "their", "their")
	}
	for _, e := range p.agents {
		may := func(r *rule) bool { return mayMatch(r.agents, e.pattern) }
		if e.preset == airlock.PresetAutonomous && p.loosensUnstated(may) && !p.reachesAbove(may) {
			warn(e.presetPos, msg, "agent "+e.pattern.text, "its", "its")
		}
	}
}

// loosensUnstated reports whether the default, or an every-action rule for
// which match holds, loosens without saying how far.
func (p *Policy) loosensUnstated(match func(*rule) bool) bool {
	if p.defaultLoosens() && p.defaultMaxTier == 0 {
		return true
	}
	return slices.ContainsFunc(p.rules, func(r *rule) bool { return r.everyAction() && match(r) })
}

// reachesAbove reports whether the default, or a rule that loosens and for
// which match holds, reaches above the default ceiling.
func (p *Policy) reachesAbove(match func(*rule) bool) bool {
	if p.defaultLoosens() && p.defaultCeiling() > DefaultCeiling {
		return true
	}
	return slices.ContainsFunc(p.rules, func(r *rule) bool { return r.loosens() && match(r) && p.reach(r) > DefaultCeiling })
}

// reach is the highest tier a rule that loosens states it reaches, raised
// to the tier this policy's classifiers give a class it names exactly.
func (p *Policy) reach(r *rule) airlock.RiskTier {
	c := r.statedCeiling()
	if r.maxTier != 0 {
		return c
	}
	for _, pc := range r.classes {
		for _, cl := range p.classifiers {
			if pc.exact() && string(cl.class) == pc.text {
				c = max(c, cl.tier)
			}
		}
	}
	return c
}

// withoutOwnPreset reports whether a rule may match an agent that the
// policy-wide preset covers: one without an entry that sets its own.
func (p *Policy) withoutOwnPreset(r *rule) bool {
	if !constrains(r.agents) {
		return true
	}
	return slices.ContainsFunc(r.agents, func(a pattern) bool {
		e := p.agentEntry(a.text)
		return !a.exact() || e == nil || e.preset == airlock.PresetNone
	})
}

// mayMatch reports whether patterns ps may match an agent that pattern e
// matches; two globs are assumed to overlap.
func mayMatch(ps []pattern, e pattern) bool {
	if !constrains(ps) {
		return true
	}
	return slices.ContainsFunc(ps, func(a pattern) bool {
		switch {
		case a.exact() && e.exact():
			return a.text == e.text
		case e.exact():
			return a.match(e.text)
		case a.exact():
			return e.match(a.text)
		}
		return true
	})
}

// lintCeiling warns about a rule that loosens and names, in a command
// pattern, a program whose use is above the rule's ceiling ("rm *" → auto):
// the pattern can never let it run. The program is what the pattern says
// before its first wildcard, run with an argument where the wildcard stands
// for one ("sudo *" is sudo running something).
func (p *Policy) lintCeiling(r *rule, sh catalog.ShellAnalyser, warn func(Pos, string, ...any)) {
	if !r.loosens() || r.maxTier == airlock.TierPrivileged {
		return
	}
	for _, c := range r.commands {
		fixed := c.text
		if i := strings.IndexAny(fixed, "*?["); i >= 0 {
			fixed = strings.TrimSpace(fixed[:i]) + " x"
		}
		cmds, err := sh.AnalyseScript(fixed, "", nil)
		if err != nil {
			continue
		}
		var low *airlock.Command
		for i := range cmds {
			if !cmds[i].Inert && (low == nil || cmds[i].Tier < low.Tier) {
				low = &cmds[i]
			}
		}
		if low == nil {
			continue
		}
		x := &activation{a: &airlock.Action{}, v: &view{class: low.Class, tier: low.Tier, cmd: low}}
		if ceiling := r.ceiling(x); low.Tier > ceiling {
			warn(c.pos, "rule %s lets %q %s, but `%s` is %s (%s), above the rule's ceiling %s: the pattern never lets it run; "+
				"to let it, add `max_tier: %s` to the rule (line %d)", r.id, c.text, r.outcome, fixed, low.Tier, low.Class, ceiling, low.Tier, r.pos.Line)
		}
	}
}

// builtinClasses are the classes the catalog and the shell analysis produce.
var builtinClasses = []airlock.Class{
	airlock.ClassFSRead, airlock.ClassFSWrite, airlock.ClassFSMkdir, airlock.ClassFSCopy, airlock.ClassFSMove, airlock.ClassFSDelete, airlock.ClassFSPermissions,
	airlock.ClassProcessExec, airlock.ClassProcessKill, airlock.ClassNetHTTP, airlock.ClassNetConnect, airlock.ClassNetSSEWrite, airlock.ClassHostCall,
	airlock.ClassStoreWrite, airlock.ClassMetadataWrite, airlock.ClassCheckpointWrite, airlock.ClassAgentStateWrite, airlock.ClassMCPCall,
	airlock.ClassMCPRelease, airlock.ClassGitRead, airlock.ClassGitWrite, airlock.ClassPackageInstall, airlock.ClassPackagePublish, airlock.ClassSystemAdmin, airlock.ClassInfraRead,
	airlock.ClassInfraChange, airlock.ClassCredentialsRead, airlock.ClassShellEnv, airlock.ClassShellBuiltin, airlock.ClassSpend, airlock.ClassUnknown,
	airlock.ClassGateConfigure,
}

// shadows reports whether rule a, unconditional, matches every action rule
// b matches, so that b can never be the first hit.
func (a *rule) shadows(b *rule) bool {
	if a.when != nil || a.minTier > b.minTier && b.minTier != 0 || a.minTier != 0 && b.minTier == 0 {
		return false
	}
	// Above a's ceiling b still decides, unless b stops there too.
	if a.loosens() && a.maxTier != airlock.TierPrivileged && !(b.loosens() && b.maxTier <= a.maxTier) {
		return false
	}
	return covers(a.agents, b.agents) && covers(a.tools, b.tools) && covers(a.classes, b.classes) && covers(a.commands, b.commands)
}

// covers reports whether patterns a match everything patterns b match.
func covers(a, b []pattern) bool {
	if !constrains(a) {
		return true
	}
	if !constrains(b) {
		return false
	}
	for _, pb := range b {
		if !slices.ContainsFunc(a, func(pa pattern) bool {
			return pa.text == pb.text || pb.exact() && pa.match(pb.text)
		}) {
			return false
		}
	}
	return true
}

func matchesShellTool(tools []pattern) bool {
	for _, name := range catalog.ShellTools() {
		if matchAny(tools, name) {
			return true
		}
	}
	return false
}
