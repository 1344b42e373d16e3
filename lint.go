package airlock

import (
	"fmt"
	"slices"
	"strings"
)

// Lint returns warnings about a policy that loads but probably does not do
// what its author meant: rules that can never decide because an earlier
// rule of the same step always matches first, conditions that read a shell
// command as text, and classes that nothing defines.
func (p *Policy) Lint() []Problem {
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
	return out
}

// builtinClasses are the classes the catalog and the shell analysis produce.
var builtinClasses = []Class{
	ClassFSRead, ClassFSWrite, ClassFSMkdir, ClassFSCopy, ClassFSMove, ClassFSDelete, ClassFSPermissions,
	ClassProcessExec, ClassProcessKill, ClassNetHTTP, ClassNetConnect, ClassNetSSEWrite, ClassHostCall,
	ClassStoreWrite, ClassMetadataWrite, ClassCheckpointWrite, ClassAgentStateWrite, ClassMCPCall,
	ClassMCPRelease, ClassGitRead, ClassGitWrite, ClassPackageInstall, ClassPackagePublish, ClassSystemAdmin, ClassInfraRead,
	ClassInfraChange, ClassCredentialsRead, ClassShellEnv, ClassShellBuiltin, ClassSpend, ClassUnknown,
}

// shadows reports whether rule a, unconditional, matches every action rule
// b matches, so that b can never be the first hit.
func (a *rule) shadows(b *rule) bool {
	if a.when != nil || a.minTier > b.minTier && b.minTier != 0 || a.minTier != 0 && b.minTier == 0 {
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
