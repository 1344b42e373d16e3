package gate

import (
	"context"
	"fmt"
	"slices"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/catalog"
)

// classify computes an action's classification: the built-in catalog (and
// sh's analysis of shell commands), then the policy classifiers of every
// layer. The most
// restrictive classification wins; a classifier may replace a generic one
// (an MCP call, an unknown tool, an unknown program) outright.
func (s stack) classify(ctx context.Context, sh catalog.ShellAnalyser, x *activation) airlock.Classification {
	c := catalog.Classify(sh, x.a, x.decodedArgs(), s.catalogue())
	if c.Opaque != "" || !s.hasClassifiers() {
		return c
	}
	defer func() { x.v = nil }()
	if len(c.Commands) > 0 {
		changed := false
		for i := range c.Commands {
			cmd := &c.Commands[i]
			if cmd.Inert {
				continue
			}
			x.v = &view{class: cmd.Class, capability: cmd.Capability, tier: cmd.Tier, cmd: cmd, index: i}
			if cl := s.classifierFor(ctx, x, cmd.Generic); cl != nil {
				cmd.Class, cmd.Capability, cmd.Tier, cmd.Generic = cl.class, cl.capability, cl.tier, false
				cmd.Reason = cl.describe()
				changed = true
			}
		}
		if changed {
			catalog.Aggregate(&c)
		}
		return c
	}
	x.v = &view{class: c.Class, capability: c.Capability, tier: c.Tier, index: -1}
	if cl := s.classifierFor(ctx, x, c.Generic); cl != nil {
		c.Class, c.Capability, c.Tier, c.Generic = cl.class, cl.capability, cl.tier, false
		c.Source, c.Reason = cl.ref, cl.describe()
	}
	return c
}

func (s stack) hasClassifiers() bool {
	return slices.ContainsFunc(s, func(p *Policy) bool { return len(p.classifiers) > 0 })
}

// classifierFor returns the classifier that wins for the activation's view,
// or nil when the current classification stands. Among classifiers the
// highest tier wins, a lower layer or a later classifier on ties; against a
// specific built-in classification a classifier must be at least as strict.
func (s stack) classifierFor(ctx context.Context, x *activation, generic bool) *classifier {
	v := x.v
	var best *classifier
	for _, p := range s {
		for _, cl := range p.classifiers {
			if !cl.applies(ctx, x) {
				continue
			}
			switch {
			case best == nil && (generic || cl.tier >= v.tier):
				best = cl
			case best != nil && cl.tier >= best.tier:
				best = cl
			}
		}
	}
	return best
}

// applies reports whether a classifier matches the view. A condition that
// fails to evaluate applies the classifier only if that raises the tier.
func (cl *classifier) applies(ctx context.Context, x *activation) bool {
	if !matchAny(cl.tools, x.a.Tool) {
		return false
	}
	if len(cl.commands) > 0 {
		if x.v.cmd == nil || !slices.ContainsFunc(cl.commands, func(p pattern) bool { return p.matchCommand(x.v.cmd.Text) }) {
			return false
		}
	}
	if cl.when == nil {
		return true
	}
	ok, err := cl.when.eval(ctx, x)
	if err != nil {
		return cl.tier > x.v.tier
	}
	return ok
}

func (cl *classifier) describe() string {
	if cl.reason != "" {
		return cl.reason
	}
	return fmt.Sprintf("classified by %s", cl.ref)
}
