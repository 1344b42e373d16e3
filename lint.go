package airlock

import (
	"fmt"
	"slices"
	"strings"
)

// Lint returns warnings about a policy that loads but probably does not do
// what its author meant: rules that can never decide because an earlier
// rule of the same step always matches first, conditions that read a shell
// command as text, classes that nothing defines, and rules that loosen
// whose own command patterns name a program that is always above their
// ceiling (sh, which may be nil, classifies those programs).
func (p *Policy) Lint(sh ShellAnalyser) []Problem {
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
	known := map[Class]bool{}
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
			if c.exact() && !known[Class(c.text)] {
				warn(c.pos, "rule %s names class %q, which is neither built in nor defined by a classifier of this policy", r.id, c.text)
			}
		}
	}
	if sh != nil {
		for _, r := range p.rules {
			p.lintCeiling(r, sh, warn)
		}
	}
	return out
}

// lintCeiling warns about a rule that loosens and names, in a command
// pattern, a program whose use is above the rule's ceiling ("rm *" → auto):
// the pattern can never let it run. The program is what the pattern says
// before its first wildcard, run with an argument where the wildcard stands
// for one ("sudo *" is sudo running something).
func (p *Policy) lintCeiling(r *rule, sh ShellAnalyser, warn func(Pos, string, ...any)) {
	if !r.loosens() || r.maxTier == TierPrivileged {
		return
	}
	for _, c := range r.commands {
		fixed := c.text
		if i := strings.IndexAny(fixed, "*?["); i >= 0 {
			fixed = strings.TrimSpace(fixed[:i]) + " x"
		}
		cmds, err := sh.AnalyseScript(fixed, "")
		if err != nil {
			continue
		}
		var low *Command
		for i := range cmds {
			if !cmds[i].Inert && (low == nil || cmds[i].Tier < low.Tier) {
				low = &cmds[i]
			}
		}
		if low == nil {
			continue
		}
		x := &activation{a: &Action{}, v: &view{class: low.Class, tier: low.Tier, cmd: low}}
		if ceiling := r.ceiling(x); low.Tier > ceiling {
			warn(c.pos, "rule %s lets %q %s, but `%s` is %s (%s), above the rule's ceiling %s: the pattern never lets it run; "+
				"to let it, add `max_tier: %s` to the rule (line %d)", r.id, c.text, r.outcome, fixed, low.Tier, low.Class, ceiling, low.Tier, r.pos.Line)
		}
	}
}

// builtinClasses are the classes the catalog and the shell analysis produce.
var builtinClasses = []Class{
	ClassFSRead, ClassFSWrite, ClassFSMkdir, ClassFSCopy, ClassFSMove, ClassFSDelete, ClassFSPermissions,
	ClassProcessExec, ClassProcessKill, ClassNetHTTP, ClassNetConnect, ClassNetSSEWrite, ClassHostCall,
	ClassStoreWrite, ClassMetadataWrite, ClassCheckpointWrite, ClassAgentStateWrite, ClassMCPCall,
	ClassMCPRelease, ClassGitRead, ClassGitWrite, ClassPackageInstall, ClassPackagePublish, ClassSystemAdmin, ClassInfraRead,
	ClassInfraChange, ClassCredentialsRead, ClassShellEnv, ClassShellBuiltin, ClassSpend, ClassUnknown,
	ClassGateConfigure,
}

// shadows reports whether rule a, unconditional, matches every action rule
// b matches, so that b can never be the first hit.
func (a *rule) shadows(b *rule) bool {
	if a.when != nil || a.minTier > b.minTier && b.minTier != 0 || a.minTier != 0 && b.minTier == 0 {
		return false
	}
	// Above a's ceiling b still decides, unless b stops there too.
	if a.loosens() && a.maxTier != TierPrivileged && !(b.loosens() && b.maxTier <= a.maxTier) {
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
	for name, spec := range catalog {
		if spec.kind == kindShell && matchAny(tools, name) {
			return true
		}
	}
	return false
}
