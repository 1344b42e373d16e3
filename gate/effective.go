package gate

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/catalog"
)

// EffectivePolicy is everything the stack in force can apply to one agent's
// actions: what the layers together say about the agent, then, layer by
// layer from the organisation down, the agent's entry, the classifiers,
// the floors and the rules that can match the agent, in the order the gate
// tries them. It is read from the compiled policies, with the functions
// Decide uses, so it shows what Airlock does rather than what a file says.
//
// Which rule decides an action still depends on the action: its tool, its
// class and tier, and, for a rule with a condition, its arguments, which
// cannot be known in advance (see EffectiveRule.Conditional). Session
// policies are not included: a running session pushes them for itself.
type EffectivePolicy struct {
	Agent string `json:"agent"`
	// Preset is the preset that applies to the agent — each layer's is its
	// entry's, else the policy-wide one, and the strictest layer's wins —
	// and PresetFrom says where it is set; PresetNone when no layer sets
	// one.
	Preset     airlock.Preset `json:"preset,omitzero"`
	PresetFrom string         `json:"preset_from,omitempty"`
	// Owner is told of notify outcomes and may resolve the agent's
	// requests; the lowest layer's entry that names one wins.
	Owner string `json:"owner,omitempty"`
	// Reviewers may resolve any of the agent's requests, besides the
	// reviewers of the rule that decided it, the owner and admins.
	Reviewers []string `json:"reviewers,omitempty"`
	// NeedsHumanBy names what tags every action of the agent needs-human —
	// a whole policy or the agent's entry — and is "" when nothing does.
	NeedsHumanBy string `json:"needs_human_by,omitempty"`
	// AskTimeout and QueueTimeout are how long the agent's blocking and
	// queued (suggest, needs-human) requests wait when the deciding rule
	// sets no timeout.
	AskTimeout   time.Duration `json:"ask_timeout"`
	QueueTimeout time.Duration `json:"queue_timeout"`
	// Layers are the policies of the stack, top layer first.
	Layers []EffectiveLayer `json:"layers"`
}

// EffectiveLayer is what one policy of the stack can apply to an agent.
type EffectiveLayer struct {
	Policy      string        `json:"policy"`
	Layer       airlock.Layer `json:"layer"`
	File        string        `json:"file,omitempty"`
	Description string        `json:"description,omitempty"`
	// Default is the policy's outcome when none of its rules match; 0 when
	// the layer then has no opinion. DefaultSource is "policy default" or,
	// for a policy written in levels (L1-L3), "levels default".
	Default       airlock.Outcome `json:"default,omitzero"`
	DefaultSource string          `json:"default_source,omitempty"`
	DefaultAt     Position        `json:"default_at,omitzero"`
	// DefaultCeiling is the highest tier a default that loosens (auto,
	// notify) reaches: its max_tier, else DefaultCeiling; above it the
	// default does not apply. 0 for a default that does not loosen.
	DefaultCeiling airlock.RiskTier `json:"default_ceiling,omitzero"`
	// Preset is the policy-wide preset, which a preset on the agent's
	// entry replaces.
	Preset airlock.Preset `json:"preset,omitzero"`
	// NeedsHuman is set when the whole policy is tagged needs-human.
	NeedsHuman   bool     `json:"needs_human,omitempty"`
	NeedsHumanAt Position `json:"needs_human_at,omitzero"`
	// Timeout is the policy-wide deadline of approval requests.
	Timeout time.Duration `json:"timeout,omitempty"`
	// Agent is the policy's entry for the agent — its exact name first,
	// else the first glob that matches — nil when no entry matches.
	Agent *AgentEntry `json:"agent,omitempty"`
	// Classifiers extend or raise the classification of every agent's
	// actions, in file order.
	Classifiers []EffectiveClassifier `json:"classifiers,omitempty"`
	// Floors hold for every agent: tier floors from the lowest tier, then
	// class floors in file order.
	Floors []EffectiveFloor `json:"floors,omitempty"`
	// Rules are the rules with an outcome that can match the agent, in the
	// order the layer tries them: by resolution step, most specific first,
	// then in file order. The first that matches an action gives the
	// layer's opinion.
	Rules []EffectiveRule `json:"rules,omitempty"`
	// Tags are the rules that only tag actions needs-human, in file order.
	Tags []EffectiveRule `json:"tags,omitempty"`
	// Excluded counts the rules whose agent patterns exclude the agent.
	Excluded int `json:"excluded,omitempty"`
}

// AgentEntry is a policy's `agents:` entry, as compiled.
type AgentEntry struct {
	// Pattern is the entry's key: the agent's name or a glob.
	Pattern    string         `json:"pattern"`
	Preset     airlock.Preset `json:"preset,omitzero"`
	Owner      string         `json:"owner,omitempty"`
	Reviewers  []string       `json:"reviewers,omitempty"`
	Notify     []string       `json:"notify,omitempty"`
	NeedsHuman bool           `json:"needs_human,omitempty"`
	Timeout    time.Duration  `json:"timeout,omitempty"`
	At         Position       `json:"at"`
}

// EffectiveClassifier is a policy-defined classification.
type EffectiveClassifier struct {
	ID string `json:"id"`
	// Tools and Commands are the patterns it classifies, as written.
	Tools    []string `json:"tools,omitempty"`
	Commands []string `json:"commands,omitempty"`
	// Condition is its `when:` expression, "" for none.
	Condition  string             `json:"condition,omitempty"`
	Class      airlock.Class      `json:"class,omitempty"`
	Capability airlock.Capability `json:"capability,omitempty"`
	Tier       airlock.RiskTier   `json:"tier,omitzero"`
	Reason     string             `json:"reason,omitempty"`
	At         Position           `json:"at"`
}

// EffectiveFloor is the least outcome a tier, or a class, gets.
type EffectiveFloor struct {
	// Tier is the lowest tier a tier floor covers (it covers every tier
	// above as well); 0 for a class floor.
	Tier airlock.RiskTier `json:"tier,omitzero"`
	// Class is a class floor's pattern, "" for a tier floor.
	Class   string          `json:"class,omitempty"`
	Outcome airlock.Outcome `json:"outcome"`
	At      Position        `json:"at"`
}

// EffectiveRule is one rule as compiled: what it matches, as written, and
// what it decides.
type EffectiveRule struct {
	ID          string   `json:"id"`
	Description string   `json:"description,omitempty"`
	At          Position `json:"at"`
	// Step names the rule's resolution step: "agent × tool", "agent ×
	// class", "agent", "tool", "class" or "tier or condition".
	Step string `json:"step"`
	// Agents, Tools, Classes and Commands are the rule's patterns as
	// written; an empty list matches anything.
	Agents   []string `json:"agents,omitempty"`
	Tools    []string `json:"tools,omitempty"`
	Classes  []string `json:"classes,omitempty"`
	Commands []string `json:"commands,omitempty"`
	// MinTier is the least tier the rule matches, 0 for any.
	MinTier airlock.RiskTier `json:"min_tier,omitzero"`
	// MaxTier is the ceiling the rule states (max_tier), 0 when it states
	// none.
	MaxTier airlock.RiskTier `json:"max_tier,omitzero"`
	// Ceiling is the highest tier a rule that loosens (auto, notify)
	// reaches, for any action it matches; 0 for a rule that does not
	// loosen. Reach says how far for each kind of action it treats apart.
	Ceiling airlock.RiskTier `json:"ceiling,omitzero"`
	// Reach is how far a rule that loosens reaches, asked of the ceiling
	// the gate decides by (see Reach).
	Reach []Reach `json:"reach,omitempty"`
	// Condition is the rule's `when:` expression as written, "" for none.
	Condition string `json:"condition,omitempty"`
	// Outcome is what the rule decides, 0 for a rule that only tags
	// actions needs-human.
	Outcome    airlock.Outcome `json:"outcome,omitzero"`
	NeedsHuman bool            `json:"needs_human,omitempty"`
	Reviewers  []string        `json:"reviewers,omitempty"`
	Notify     []string        `json:"notify,omitempty"`
	Timeout    time.Duration   `json:"timeout,omitempty"`
	// Budget is the rule's budget, nil for none: for one agent, as its
	// account of it (its key names the agent; what it has used is the
	// reader's to fill, Store.BudgetUsed); in a stack's listing, keyless.
	Budget *airlock.BudgetCharge `json:"budget,omitempty"`
}

// Reach is how far a rule that loosens reaches for one kind of action it
// may match: the highest tier at which the gate lets it apply. An action
// above it gets its outcome from what comes next (another rule, the
// default, the tier default). The kinds are those the gate's ceiling
// treats apart: an unknown tool or command the rule names exactly (only
// such a rule lets it run, and it reaches it whatever its tier), a class it
// names exactly (a built-in class's own tier, a classifier's class the tier
// it is given), and every other action it matches.
type Reach struct {
	// Tool, Command or Class names the kind; all empty: every other action
	// the rule matches.
	Tool    string        `json:"tool,omitempty"`
	Command string        `json:"command,omitempty"`
	Class   airlock.Class `json:"class,omitempty"`
	// Unknown is set when the tool or command is one no classifier knows.
	Unknown bool             `json:"unknown,omitempty"`
	Tier    airlock.RiskTier `json:"tier"`
}

// String returns "tier", or "tier for tool X (unknown, named exactly)".
func (r Reach) String() string {
	what := ""
	switch {
	case r.Tool != "":
		what = "tool " + r.Tool
	case r.Command != "":
		what = "command " + r.Command
	case r.Class != "":
		what = "class " + string(r.Class)
	default:
		return r.Tier.String() + " otherwise"
	}
	if r.Unknown {
		what += " (unknown, named exactly)"
	}
	return r.Tier.String() + " for " + what
}

// ReachText says how far a rule reaches, "" for one that does not loosen:
// "up to network-egress", or, where kinds of action differ, "up to
// privileged for tool deploy (unknown, named exactly), network-egress
// otherwise".
func (r *EffectiveRule) ReachText() string {
	if len(r.Reach) == 0 {
		if r.Ceiling == 0 {
			return ""
		}
		return "up to " + r.Ceiling.String()
	}
	same := true
	for _, x := range r.Reach {
		same = same && x.Tier == r.Reach[0].Tier
	}
	if same {
		return "up to " + r.Reach[0].Tier.String()
	}
	parts := make([]string, len(r.Reach))
	for i, x := range r.Reach {
		parts[i] = x.String()
	}
	return "up to " + strings.Join(parts, ", ")
}

// reach asks the gate's own ceiling (rule.aboveCeiling) how far the rule
// reaches for each kind of action it may match, with the stack's
// classification of the tools and commands it names exactly.
func (s stack) reach(sh catalog.ShellAnalyser, r *rule) []Reach {
	if !r.loosens() {
		return nil
	}
	highest := func(x *activation) airlock.RiskTier {
		for t := airlock.TierPrivileged; t > airlock.TierRead; t-- {
			x.v.tier = t
			if !r.aboveCeiling(x) {
				return t
			}
		}
		return airlock.TierRead
	}
	var out []Reach
	other := true
	if len(r.commands) == 0 && constrains(r.tools) {
		unknown := 0
		for _, p := range r.tools {
			if !p.exact() {
				continue
			}
			a := &airlock.Action{Agent: "-", Tool: p.text, Args: []byte("{}")}
			if c := s.classify(context.Background(), sh, &activation{a: a}); c.Class != airlock.ClassUnknown || c.Opaque != "" || len(c.Commands) > 0 {
				continue
			}
			out = append(out, Reach{Tool: p.text, Unknown: true, Tier: highest(&activation{a: a, v: &view{class: airlock.ClassUnknown, index: -1}})})
			unknown++
		}
		other = unknown < len(r.tools)
	}
	if sh != nil && constrains(r.commands) {
		unknown := 0
		for _, p := range r.commands {
			if !p.exact() {
				continue
			}
			a := &airlock.Action{Agent: "-", Tool: "Bash", Args: airlock.MustArgs(map[string]string{"command": p.text})}
			c := s.classify(context.Background(), sh, &activation{a: a})
			if len(c.Commands) != 1 || c.Commands[0].Class != airlock.ClassUnknown || c.Commands[0].Text != p.text {
				continue
			}
			cmd := c.Commands[0]
			out = append(out, Reach{Command: p.text, Unknown: true, Tier: highest(&activation{a: a, v: &view{class: airlock.ClassUnknown, cmd: &cmd}})})
			unknown++
		}
		other = other && unknown < len(r.commands)
	}
	exactClasses := 0
	for _, p := range r.classes {
		if !p.exact() {
			continue
		}
		exactClasses++
		v := &view{class: airlock.Class(p.text), index: -1, classed: s.classifiedTier(airlock.Class(p.text))}
		out = append(out, Reach{Class: airlock.Class(p.text), Tier: highest(&activation{a: &airlock.Action{}, v: v})})
	}
	if len(r.classes) > 0 && exactClasses == len(r.classes) {
		other = false
	}
	if other || len(out) == 0 {
		out = append(out, Reach{Tier: highest(&activation{a: &airlock.Action{}, v: &view{index: -1}})})
	}
	return out
}

// classifiedTier is the highest tier the stack's classifiers give class,
// 0 when none defines it.
func (s stack) classifiedTier(class airlock.Class) airlock.RiskTier {
	var t airlock.RiskTier
	for _, p := range s {
		for _, cl := range p.classifiers {
			if cl.class == class {
				t = max(t, cl.tier)
			}
		}
	}
	return t
}

// Conditional reports whether the rule has a condition, which depends on
// each action's arguments and so cannot be known for the agent in advance.
func (r *EffectiveRule) Conditional() bool { return r.Condition != "" }

// Position is a place in a policy file.
type Position struct {
	File string `json:"file"`
	Pos
}

// String returns "file:line:col", or the file alone when the place is not
// known.
func (p Position) String() string {
	if p.Line == 0 {
		return p.File
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// EffectivePolicy returns what the stack in force can apply to the agent's
// actions. An agent the policies do not name still gets the rules, floors
// and defaults that hold for every agent. The result shares nothing with
// the policies: changing it changes no decision.
func (g *Gate) EffectivePolicy(agent string) EffectivePolicy {
	return g.state.Load().layers.effective(g.shell, agent)
}

func (s stack) effective(sh catalog.ShellAnalyser, agent string) EffectivePolicy {
	ag := s.agent(agent)
	ep := EffectivePolicy{
		Agent:        agent,
		Preset:       ag.preset,
		Owner:        ag.owner,
		Reviewers:    reviewers(nil, nil, ag.reviewers),
		AskTimeout:   timeoutFor(airlock.Ask, nil, nil, ag, s),
		QueueTimeout: timeoutFor(airlock.Suggest, nil, nil, ag, s),
	}
	if ag.preset != airlock.PresetNone {
		ep.PresetFrom = ag.presetFrom()
	}
	// With no view to match, only the tags on a whole policy or on the
	// agent's entry can answer: those that hold for every action.
	ep.NeedsHumanBy, _ = s.needsHuman(context.Background(), &activation{a: &airlock.Action{Agent: agent}}, nil, ag)
	for _, p := range s {
		ep.Layers = append(ep.Layers, s.effectiveLayer(sh, p, agent))
	}
	return ep
}

func (s stack) effectiveLayer(sh catalog.ShellAnalyser, p *Policy, agent string) EffectiveLayer {
	l := EffectiveLayer{
		Policy: p.name, Layer: p.layer, File: p.file, Description: p.description,
		Default: p.defaultOutcome, DefaultSource: p.defaultSource,
		Preset: p.preset, NeedsHuman: p.needsHuman, Timeout: p.timeout,
	}
	if p.defaultOutcome != 0 {
		l.DefaultAt = p.at(p.defaultPos)
	}
	if p.defaultLoosens() {
		l.DefaultCeiling = p.defaultCeiling()
	}
	if p.needsHuman {
		l.NeedsHumanAt = p.at(p.needsHumanPos)
	}
	if e := p.agentEntry(agent); e != nil {
		l.Agent = &AgentEntry{Pattern: e.pattern.text, Preset: e.preset, Owner: e.owner, Reviewers: slices.Clone(e.reviewers),
			Notify: slices.Clone(e.notify), NeedsHuman: e.needsHuman, Timeout: e.timeout, At: p.at(e.pos)}
	}
	for _, c := range p.classifiers {
		l.Classifiers = append(l.Classifiers, EffectiveClassifier{ID: c.id, Tools: texts(c.tools), Commands: texts(c.commands),
			Condition: c.when.source(), Class: c.class, Capability: c.capability, Tier: c.tier, Reason: c.reason, At: p.at(c.pos)})
	}
	l.Floors = p.effectiveFloors()
	// The order resolve tries them in: by step, then in file order.
	rules := slices.Clone(p.rules)
	slices.SortStableFunc(rules, func(a, b *rule) int { return cmp.Compare(a.step(), b.step()) })
	l.Rules = s.effectiveRules(sh, p, rules, agent, &l.Excluded)
	l.Tags = s.effectiveRules(sh, p, p.tagRules, agent, &l.Excluded)
	return l
}

// effectiveRules returns the rules whose agent patterns match the agent,
// and counts the others in excluded.
func (s stack) effectiveRules(sh catalog.ShellAnalyser, p *Policy, rules []*rule, agent string, excluded *int) []EffectiveRule {
	var out []EffectiveRule
	for _, r := range rules {
		if !matchAny(r.agents, agent) {
			*excluded++
			continue
		}
		er := s.effectiveRule(sh, p, r)
		if er.Budget != nil {
			er.Budget.Key = ruleBudgetKey(r, agent)
		}
		out = append(out, er)
	}
	return out
}

func (p *Policy) effectiveFloors() []EffectiveFloor {
	var fs []EffectiveFloor
	for t, f := range p.tierFloors {
		if f.outcome != 0 {
			fs = append(fs, EffectiveFloor{Tier: airlock.RiskTier(t), Outcome: f.outcome, At: p.at(f.pos)})
		}
	}
	for _, f := range p.classFloors {
		fs = append(fs, EffectiveFloor{Class: f.class.text, Outcome: f.outcome, At: p.at(f.pos)})
	}
	return fs
}

func (s stack) effectiveRule(sh catalog.ShellAnalyser, p *Policy, r *rule) EffectiveRule {
	er := EffectiveRule{
		ID: r.id, Description: r.description, At: p.at(r.pos), Step: stepNames[r.step()],
		Agents: texts(r.agents), Tools: texts(r.tools), Classes: texts(r.classes), Commands: texts(r.commands),
		MinTier: r.minTier, MaxTier: r.maxTier, Reach: s.reach(sh, r), Condition: r.when.source(),
		Outcome: r.outcome, NeedsHuman: r.needsHuman, Reviewers: slices.Clone(r.reviewers), Notify: slices.Clone(r.notify),
		Timeout: r.timeout,
	}
	for _, x := range er.Reach {
		er.Ceiling = max(er.Ceiling, x.Tier)
	}
	if r.budget != nil {
		er.Budget = &airlock.BudgetCharge{Budget: *r.budget} // each agent's account: effectiveRules names it
	}
	return er
}

// at places pos in the policy's file, or under its name when it has none,
// as rule references do.
func (p *Policy) at(pos Pos) Position {
	return Position{File: cmp.Or(p.file, p.name), Pos: pos}
}

// source returns the condition as written, "" for no condition.
func (c *condition) source() string {
	if c == nil {
		return ""
	}
	return c.src
}

// texts returns the patterns as written.
func texts(ps []pattern) []string {
	if len(ps) == 0 {
		return nil
	}
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.text
	}
	return out
}

// Explain returns the effective policy as text for people: what holds for
// the agent, then layer by layer its default, the agent's entry, the rules
// in the order the gate tries them, the needs-human tags, the floors and
// the classifiers, each with its file:line:col.
func (ep EffectivePolicy) Explain() string {
	var b strings.Builder
	line := func(indent, label, format string, args ...any) {
		fmt.Fprintf(&b, "%s%-13s %s\n", indent, label+":", fmt.Sprintf(format, args...))
	}
	line("", "agent", "%s", ep.Agent)
	if ep.Preset != airlock.PresetNone {
		line("", "preset", "%s, from %s: %s", ep.Preset, ep.PresetFrom, ep.Preset.Meaning())
	} else {
		line("", "preset", "none: %s", ep.Preset.Meaning())
	}
	line("", "owner", "%s", cmp.Or(ep.Owner, "-"))
	may := "the reviewers of the deciding rule"
	if len(ep.Reviewers) > 0 {
		may = strings.Join(ep.Reviewers, ", ") + ", " + may
	}
	if ep.Owner != "" {
		may += ", the owner"
	}
	line("", "reviewers", "%s and admins", may)
	if ep.NeedsHumanBy != "" {
		line("", "needs-human", "every action, tagged by %s", ep.NeedsHumanBy)
	} else {
		line("", "needs-human", "only where a rule below tags it")
	}
	line("", "deadlines", "%s for a blocking request, %s for a queued one, unless the deciding rule sets its own",
		ep.AskTimeout, ep.QueueTimeout)
	if len(ep.Layers) == 0 {
		b.WriteString("\nNo policy is loaded: reads run and everything else asks.\n")
		return b.String()
	}
	b.WriteString("\nEach layer tries its rules in the order listed; the first that matches gives its opinion, else its\n" +
		"default. A rule or a default that loosens reaches only \"up to\" its tier: above it, it does not apply.\n" +
		"The strictest layer wins; the preset and floors only raise it; needs-human always holds.\n" +
		"Where no layer has an opinion, reads run and everything else asks. A conditional rule depends on\n" +
		"each action's arguments. Policies a running session pushes for itself are not shown.\n")
	for _, l := range ep.Layers {
		l.explain(&b, line)
	}
	return b.String()
}

func (l *EffectiveLayer) explain(b *strings.Builder, line func(indent, label, format string, args ...any)) {
	fmt.Fprintf(b, "\n%s layer: %s", l.Layer, l.Policy)
	if l.File != "" && l.File != l.Policy {
		fmt.Fprintf(b, " (%s)", l.File)
	}
	b.WriteString("\n")
	const in = "  "
	if l.Description != "" {
		line(in, "description", "%s", l.Description)
	}
	if l.Default != 0 {
		reach := ""
		if l.DefaultCeiling != 0 {
			reach = " · up to " + l.DefaultCeiling.String()
		}
		line(in, "default", "%s%s (%s, %s)", l.Default, reach, l.DefaultSource, l.DefaultAt)
	} else {
		line(in, "default", "none: where no rule below matches, this layer has no opinion")
	}
	if l.Preset != airlock.PresetNone {
		line(in, "preset", "%s, for every agent without its own", l.Preset)
	}
	if l.NeedsHuman {
		line(in, "needs-human", "every action (%s)", l.NeedsHumanAt)
	}
	if l.Timeout > 0 {
		line(in, "deadline", "%s", l.Timeout)
	}
	if e := l.Agent; e != nil {
		parts := []string{e.Pattern + " (" + e.At.String() + ")"}
		if e.Preset != airlock.PresetNone {
			parts = append(parts, "preset "+e.Preset.String())
		}
		if e.Owner != "" {
			parts = append(parts, "owner "+e.Owner)
		}
		if len(e.Reviewers) > 0 {
			parts = append(parts, "reviewers "+strings.Join(e.Reviewers, ", "))
		}
		if e.NeedsHuman {
			parts = append(parts, "needs-human")
		}
		if e.Timeout > 0 {
			parts = append(parts, "deadline "+e.Timeout.String())
		}
		line(in, "agent entry", "%s", strings.Join(parts, " · "))
	}
	if len(l.Rules) == 0 {
		b.WriteString(in + "No rule of this layer can match this agent.\n")
	} else {
		b.WriteString(in + "rules, in the order this layer tries them:\n")
		explainRules(b, l.Rules)
	}
	if len(l.Tags) > 0 {
		b.WriteString(in + "needs-human tags:\n")
		explainRules(b, l.Tags)
	}
	if l.Excluded > 0 {
		fmt.Fprintf(b, "%s%d more rule(s) of this policy name other agents only.\n", in, l.Excluded)
	}
	if len(l.Floors) > 0 {
		b.WriteString(in + "floors, for every agent:\n")
		for _, f := range l.Floors {
			what := "class " + f.Class
			if f.Tier != 0 {
				what = f.Tier.String() + " and above"
			}
			fmt.Fprintf(b, "%s  %s: at least %s (%s)\n", in, what, f.Outcome, f.At)
		}
	}
	if len(l.Classifiers) > 0 {
		b.WriteString(in + "classifiers, for every agent:\n")
		for _, c := range l.Classifiers {
			fmt.Fprintf(b, "%s  %s: %s → class %s, %s", in, c.ID, MatchText(nil, c.Tools, nil, c.Commands, 0), c.Class, c.Tier)
			if c.Condition != "" {
				fmt.Fprintf(b, ", conditional: when %s", c.Condition)
			}
			if c.Reason != "" {
				fmt.Fprintf(b, "; %s", c.Reason)
			}
			fmt.Fprintf(b, " (%s)\n", c.At)
		}
	}
}

// explainRules lists rules, numbered, one or two lines each.
func explainRules(b *strings.Builder, rules []EffectiveRule) {
	for i, r := range rules {
		verdict := "tag"
		if r.Outcome != 0 {
			verdict = r.Outcome.String()
		}
		if r.NeedsHuman {
			verdict += " + needs-human"
		}
		fmt.Fprintf(b, "    %2d. %s: rule %s [%s] %s", i+1, verdict, r.ID, r.Step,
			MatchText(r.Agents, r.Tools, r.Classes, r.Commands, r.MinTier))
		if reach := r.ReachText(); reach != "" {
			fmt.Fprintf(b, " · %s", reach)
		}
		if len(r.Reviewers) > 0 {
			fmt.Fprintf(b, " · reviewers %s", strings.Join(r.Reviewers, ", "))
		}
		if r.Timeout > 0 {
			fmt.Fprintf(b, " · deadline %s", r.Timeout)
		}
		if r.Budget != nil {
			fmt.Fprintf(b, " · budget %s", r.Budget.Budget.String())
		}
		fmt.Fprintf(b, " (%s)\n", r.At)
		if r.Conditional() {
			fmt.Fprintf(b, "        conditional: when %s\n", r.Condition)
		}
		if r.Description != "" {
			fmt.Fprintf(b, "        %s\n", r.Description)
		}
	}
}

// MatchText says, for a person, what a rule's or classifier's patterns
// match ("tool Bash · command git status *"), "every action" for none.
func MatchText(agents, tools, classes, commands []string, minTier airlock.RiskTier) string {
	var parts []string
	for _, m := range []struct {
		what string
		pats []string
	}{{"agent", agents}, {"tool", tools}, {"class", classes}, {"command", commands}} {
		if len(m.pats) > 0 {
			parts = append(parts, m.what+" "+strings.Join(m.pats, ", "))
		}
	}
	if minTier != 0 {
		parts = append(parts, minTier.String()+" or above")
	}
	if len(parts) == 0 {
		return "every action"
	}
	return strings.Join(parts, " · ")
}
