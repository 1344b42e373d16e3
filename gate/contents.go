package gate

import (
	"cmp"
	"slices"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/catalog"
)

// PolicyContents is what one policy of the stack holds, as compiled, in the
// terms its file writes it: the default and its reach, the preset, the
// agents' entries, the classifiers, the floors and every rule in file order
// with how far it reaches. It is read with the functions Decide uses, like
// EffectivePolicy, but for every agent at once.
type PolicyContents struct {
	Name        string        `json:"name"`
	File        string        `json:"file"`
	Layer       airlock.Layer `json:"layer"`
	Description string        `json:"description,omitempty"`
	// Default is the policy's outcome when none of its rules match; 0 when
	// the layer then has no opinion. DefaultSource is "policy default" or
	// "levels default" (a policy written in L1-L3, whose default no line
	// writes).
	Default       airlock.Outcome `json:"default,omitzero"`
	DefaultSource string          `json:"default_source,omitempty"`
	DefaultAt     Position        `json:"default_at,omitzero"`
	// DefaultMaxTier is the ceiling the default states (max_tier), 0 for
	// none; DefaultCeiling how far a default that loosens reaches.
	DefaultMaxTier airlock.RiskTier `json:"default_max_tier,omitzero"`
	DefaultCeiling airlock.RiskTier `json:"default_ceiling,omitzero"`
	// Preset is the policy-wide preset.
	Preset       airlock.Preset `json:"preset,omitzero"`
	NeedsHuman   bool           `json:"needs_human,omitempty"`
	NeedsHumanAt Position       `json:"needs_human_at,omitzero"`
	Timeout      time.Duration  `json:"timeout,omitempty"`
	// Agents are the policy's agents: entries, in file order.
	Agents      []AgentEntry          `json:"agents,omitempty"`
	Classifiers []EffectiveClassifier `json:"classifiers,omitempty"`
	// Floors: tier floors from the lowest tier, then class floors.
	Floors []EffectiveFloor `json:"floors,omitempty"`
	// Rules are every rule in file order, those that only tag actions
	// needs-human (Outcome 0) among them. Step says when in the layer's
	// resolution order a rule is tried.
	Rules []EffectiveRule `json:"rules,omitempty"`
	// SensitivePaths are the paths the policy adds to the catalogue of
	// secrets and the gate's configuration, by kind as its file writes
	// them (secrets, gate_config, runs_later).
	SensitivePaths map[string][]string `json:"sensitive_paths,omitempty"`
	// Tests counts the example actions the policy carries.
	Tests int `json:"tests,omitempty"`
}

// Contents returns what each policy of the stack in force holds, top layer
// first (as Layers). The result shares nothing with the policies.
func (g *Gate) Contents() []PolicyContents {
	s := g.state.Load().layers
	out := make([]PolicyContents, len(s))
	for i, p := range s {
		out[i] = s.contents(g.shell, p)
	}
	return out
}

func (s stack) contents(sh catalog.ShellAnalyser, p *Policy) PolicyContents {
	c := PolicyContents{
		Name: p.name, File: p.file, Layer: p.layer, Description: p.description,
		Default: p.defaultOutcome, DefaultSource: p.defaultSource, DefaultMaxTier: p.defaultMaxTier,
		Preset: p.preset, NeedsHuman: p.needsHuman, Timeout: p.timeout, Tests: len(p.tests),
	}
	if p.defaultOutcome != 0 {
		c.DefaultAt = p.at(cmp.Or(p.defaultPos, p.levelsPos)) // a levels default: the first level written
	}
	if p.defaultLoosens() {
		c.DefaultCeiling = p.defaultCeiling()
	}
	if p.needsHuman {
		c.NeedsHumanAt = p.at(p.needsHumanPos)
	}
	for _, e := range p.agents {
		c.Agents = append(c.Agents, AgentEntry{Pattern: e.pattern.text, Preset: e.preset, Owner: e.owner,
			Reviewers: slices.Clone(e.reviewers), Notify: slices.Clone(e.notify), NeedsHuman: e.needsHuman,
			Timeout: e.timeout, At: p.at(e.pos)})
	}
	for _, cl := range p.classifiers {
		c.Classifiers = append(c.Classifiers, EffectiveClassifier{ID: cl.id, Tools: texts(cl.tools), Commands: texts(cl.commands),
			Condition: cl.when.source(), Class: cl.class, Capability: cl.capability, Tier: cl.tier, Reason: cl.reason, At: p.at(cl.pos)})
	}
	c.Floors = p.effectiveFloors()
	rules := append(slices.Clone(p.rules), p.tagRules...)
	slices.SortStableFunc(rules, func(a, b *rule) int {
		return cmp.Or(cmp.Compare(a.pos.Line, b.pos.Line), cmp.Compare(a.pos.Col, b.pos.Col))
	})
	for _, r := range rules {
		c.Rules = append(c.Rules, s.effectiveRule(sh, p, r))
	}
	for _, e := range p.sensitivePaths {
		for _, f := range sensitivePathFields {
			if f.kind == e.Kind {
				if c.SensitivePaths == nil {
					c.SensitivePaths = map[string][]string{}
				}
				c.SensitivePaths[f.name] = append(c.SensitivePaths[f.name], e.Pattern)
			}
		}
	}
	return c
}
