package gate

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/gobwas/glob"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/sensitive"
)

// Default deadlines of approval requests when no rule, agent or policy sets
// one. A blocking ask holds a caller, so it is short; a queued proposal
// waits for a person's day.
const (
	DefaultAskTimeout   = 15 * time.Minute
	DefaultQueueTimeout = 24 * time.Hour
)

// Policy is one parsed and compiled policy document: one layer of the stack.
// It is immutable once loaded and safe for concurrent use.
type Policy struct {
	name        string
	file        string
	description string
	layer       airlock.Layer

	defaultOutcome airlock.Outcome  // 0: no default; the layer has no opinion when no rule matches
	defaultSource  string           // "policy default" or "levels default"
	defaultPos     Pos              // zero for a levels default, which no line writes
	defaultMaxTier airlock.RiskTier // the ceiling the default states (max_tier), 0 for DefaultCeiling
	defaultRef     *airlock.DefaultRef
	levelsPos      Pos // where a levels default comes from: the first outcome written as a level
	preset         airlock.Preset
	presetPos      Pos
	needsHuman     bool
	needsHumanPos  Pos
	timeout        time.Duration
	passkey        airlock.RiskTier // approvals of this tier and above need a passkey; 0 for none

	tierFloors  [airlock.TierPrivileged + 1]floor // by tier; a zero outcome is no floor
	classFloors []classFloor
	agents      []*agentPolicy
	classifiers []*classifier
	rules       []*rule
	tagRules    []*rule // rules that only tag needs_human
	humanRules  []*rule // every rule that tags needs_human, in file order
	tests       []*PolicyTest

	grants         grantLimits          // grants:, what standing grants may loosen
	sensitivePaths []sensitive.Entry    // sensitive_paths, in file order
	sensitive      *sensitive.Catalogue // the built-in catalogue and sensitivePaths; nil when none

	index ruleIndex
}

// Pos is a position in a policy file (1-based).
type Pos struct {
	Line int `json:"line"`
	Col  int `json:"col"`
}

type floor struct {
	outcome airlock.Outcome
	pos     Pos
}

type classFloor struct {
	class   pattern
	outcome airlock.Outcome
	pos     Pos
}

type agentPolicy struct {
	pattern    pattern
	preset     airlock.Preset
	presetPos  Pos
	owner      string
	reviewers  []string
	notify     []string // channels for the agent's notices
	notifyPos  Pos
	needsHuman bool
	timeout    time.Duration
	pos        Pos
}

// classifier is a policy-defined classification: it extends the catalog
// with new tools or raises the tier of known ones.
type classifier struct {
	id         string
	tools      []pattern
	commands   []pattern
	when       *condition
	class      airlock.Class
	capability airlock.Capability
	tier       airlock.RiskTier
	reason     string
	pos        Pos
	ref        string // "classifier <id> (file:line)"
}

// rule is one entry of a policy's rules.
type rule struct {
	id          string
	description string
	agents      []pattern
	tools       []pattern
	classes     []pattern
	commands    []pattern
	minTier     airlock.RiskTier
	maxTier     airlock.RiskTier // the ceiling of a rule that loosens, when set (see ceiling)
	when        *condition
	outcome     airlock.Outcome // 0 for a rule that only tags needs_human
	reviewers   []string
	notify      []string // channels for the notices of what it decides
	notifyPos   Pos
	timeout     time.Duration
	needsHuman  bool
	budget      *airlock.Budget // bounds what the rule lets run, per agent; nil for none
	review      airlock.Review  // what its requests need beyond one person's answer
	pos         Pos
	order       int32 // position among the policy's outcome rules
	ref         *airlock.RuleRef
}

// DefaultCeiling is the highest tier a rule that loosens (auto, notify)
// reaches unless it says otherwise: a wildcard written for reads, writes or
// network calls never auto-allows spending, destruction or privilege.
const DefaultCeiling = airlock.TierNetworkEgress

// loosens reports whether the rule lets actions run without a person.
func (r *rule) loosens() bool { return r.outcome.Runs() }

// defaultLoosens reports whether the policy's default lets actions run
// without a person: then it keeps to a ceiling, as a rule that loosens
// does (docs/POLICY.md: the same ceiling holds for every path that loosens).
func (p *Policy) defaultLoosens() bool { return p.defaultOutcome.Runs() }

// defaultCeiling is the highest tier the policy's default reaches when it
// loosens: its max_tier, else DefaultCeiling. A default names no class,
// tier or tool, so nothing else raises it.
func (p *Policy) defaultCeiling() airlock.RiskTier { return cmp.Or(p.defaultMaxTier, DefaultCeiling) }

// defaultAboveCeiling reports whether the policy's default does not apply
// to the activation's view because the view is above its ceiling.
func (p *Policy) defaultAboveCeiling(x *activation) bool {
	return p.defaultLoosens() && x.v.tier > p.defaultCeiling()
}

// ceiling is the highest tier the rule reaches for the activation's view,
// when it loosens: its max_tier; else the default ceiling, raised to its
// min_tier and to the tier of a class it names exactly (class: fs.delete
// names destructive actions, class: fs.write only writes, not a write under
// /etc that is privileged). A class a policy classifier defines carries the
// tier the classifier gives it, and an unknown tool or command, privileged
// for want of knowing better, is reached by a rule that names it exactly
// (the only rule that may allow it).
func (r *rule) ceiling(x *activation) airlock.RiskTier {
	v := x.v
	if r.maxTier != 0 {
		return r.maxTier
	}
	if v.class == airlock.ClassUnknown && r.namesExactly(x.a.Tool, v.cmd) {
		return airlock.TierPrivileged
	}
	c := max(DefaultCeiling, r.minTier)
	if slices.ContainsFunc(r.classes, func(p pattern) bool { return p.exact() && p.text == string(v.class) }) {
		natural, builtin := v.class.Tier()
		if !builtin {
			// The classifier's tier, not one the action's hints raised:
			// a server that says its tool both reads and destroys does
			// not take a rule for its reads past what they are.
			natural = cmp.Or(v.classed, v.tier)
		}
		c = max(c, natural)
	}
	return c
}

// statedCeiling is the ceiling a rule that loosens states for the actions
// of the built-in classes it names, 0 for a rule that does not loosen.
func (r *rule) statedCeiling() airlock.RiskTier {
	if !r.loosens() {
		return 0
	}
	if r.maxTier != 0 {
		return r.maxTier
	}
	c := max(DefaultCeiling, r.minTier)
	for _, p := range r.classes {
		if t, ok := airlock.Class(p.text).Tier(); ok && p.exact() {
			c = max(c, t)
		}
	}
	return c
}

// aboveCeiling reports whether a rule that matches the activation's view
// does not apply because the view is above its ceiling.
func (r *rule) aboveCeiling(x *activation) bool {
	return r.loosens() && x.v.tier > r.ceiling(x)
}

// Name returns the policy's name: its `name:` field, else its file name.
func (p *Policy) Name() string { return p.name }

// Description returns the policy's `description:`.
func (p *Policy) Description() string { return p.description }

// ChannelRef is a notification channel a policy names (`notify:`), where
// it names it.
type ChannelRef struct {
	Name string
	At   Position
}

// Channels returns the notification channels the policy's agents and rules
// name, in the order they appear: a server checks them against its
// configured channels, since notices sent to a channel that does not exist
// would reach nobody.
func (p *Policy) Channels() []ChannelRef {
	var out []ChannelRef
	for _, a := range p.agents {
		for _, c := range a.notify {
			out = append(out, ChannelRef{Name: c, At: p.at(a.notifyPos)})
		}
	}
	for _, r := range p.rules {
		for _, c := range r.notify {
			out = append(out, ChannelRef{Name: c, At: p.at(r.notifyPos)})
		}
	}
	return out
}

// File returns the file the policy was loaded from, if any.
func (p *Policy) File() string { return p.file }

// Layer returns the policy's layer.
func (p *Policy) Layer() airlock.Layer { return p.layer }

// Tests returns the example actions the policy carries.
func (p *Policy) Tests() []*PolicyTest { return p.tests }

// String returns "<layer> policy <name>".
func (p *Policy) String() string { return fmt.Sprintf("%s policy %s", p.layer, p.name) }

// pattern matches names: exact text, or a glob (`*`, `?`, `[a-z]`, `{a,b}`)
// in which `*` matches any run of characters, separators included.
type pattern struct {
	text string
	glob *glob.Pattern // nil for an exact pattern
	pos  Pos
	// bare is set on command patterns ending in " *": the same pattern
	// without that suffix, so that "git status *" matches "git status".
	bare *pattern
}

// isGlob reports whether s has glob syntax.
func isGlob(s string) bool { return strings.ContainsAny(s, "*?[{\\") }

func compilePattern(s string, pos Pos) (pattern, error) {
	p := pattern{text: s, pos: pos}
	if !isGlob(s) {
		return p, nil
	}
	g, err := glob.Compile(s)
	if err != nil {
		return p, fmt.Errorf("bad pattern %q: %v", s, err)
	}
	p.glob = g
	return p, nil
}

func (p pattern) exact() bool { return p.glob == nil }

// any reports whether p matches everything.
func (p pattern) any() bool { return p.text == "*" || p.text == "**" }

func (p pattern) match(s string) bool {
	if p.glob == nil {
		return p.text == s
	}
	return p.glob.Match(s)
}

// compileCommandPattern compiles a pattern for shell commands' text. A
// pattern ending in " *" also matches the command without arguments: "git
// status *" matches "git status" and "git status -s" but not "git statusx".
func compileCommandPattern(s string, pos Pos) (pattern, error) {
	p, err := compilePattern(s, pos)
	if err != nil {
		return p, err
	}
	if prefix, ok := strings.CutSuffix(s, " *"); ok && prefix != "" {
		bare, err := compilePattern(prefix, pos)
		if err != nil {
			return p, err
		}
		p.bare = &bare
	}
	return p, nil
}

func (p pattern) matchCommand(text string) bool {
	return p.match(text) || p.bare != nil && p.bare.match(text)
}

func matchAny(ps []pattern, s string) bool {
	if len(ps) == 0 {
		return true
	}
	for _, p := range ps {
		if p.match(s) {
			return true
		}
	}
	return false
}

// constrains reports whether a list of patterns restricts anything.
func constrains(ps []pattern) bool {
	for _, p := range ps {
		if !p.any() {
			return true
		}
	}
	return false
}

// Steps of the resolution order (docs/POLICY.md, the resolution order), most specific first.
const (
	stepAgentTool  = iota // a rule for this agent and this tool (or command)
	stepAgentClass        // a rule for this agent and this class
	stepAgent             // a rule for this agent, any action
	stepTool              // a rule for this tool (or command)
	stepClass             // a rule for this class
	stepOther             // a rule matching only by tier or condition
	numSteps
)

var stepNames = [numSteps]string{
	"agent × tool", "agent × class", "agent", "tool", "class", "tier or condition",
}

func (r *rule) step() int {
	agent := constrains(r.agents)
	tool := constrains(r.tools) || constrains(r.commands)
	class := constrains(r.classes)
	switch {
	case agent && tool:
		return stepAgentTool
	case agent && class:
		return stepAgentClass
	case agent:
		return stepAgent
	case tool:
		return stepTool
	case class:
		return stepClass
	}
	return stepOther
}

// explicit reports whether the rule names what the action is (its tool, its
// class or its command) rather than allowing an agent or a tier wholesale.
// The standard preset lets only explicit rules auto-allow dangerous actions.
func (r *rule) explicit() bool {
	return constrains(r.tools) || constrains(r.classes) || constrains(r.commands)
}

// namesExactly reports whether the rule names the unknown thing exactly,
// with a pattern that is not a glob: the tool, or, for a command of a shell
// script, the command itself (trusting the shell tool is not naming an
// unknown command it runs). Only such a rule may auto-allow it.
func (r *rule) namesExactly(tool string, cmd *airlock.Command) bool {
	if cmd != nil {
		return slices.ContainsFunc(r.commands, func(p pattern) bool { return p.exact() && p.text == cmd.Text })
	}
	return slices.ContainsFunc(r.tools, func(p pattern) bool { return p.exact() && p.text == tool })
}

// key2 indexes rules by up to two exact names without building strings.
type key2 struct{ a, b string }

// stepIndex finds the candidate rules of one resolution step: rules whose
// names are all exact are found by map lookup, the rest (globs) are checked
// one by one. Both lists are in policy order, so merging them preserves
// "first hit wins".
type stepIndex struct {
	exact map[key2][]int32
	other []int32
}

type ruleIndex [numSteps]stepIndex

// maxIndexKeys bounds the cross product of exact names one rule is indexed
// under; a rule with more goes to the checked-one-by-one list.
const maxIndexKeys = 64

func (p *Policy) buildIndex() {
	for i := range p.index {
		p.index[i].exact = make(map[key2][]int32)
	}
	for _, r := range p.rules {
		s := r.step()
		idx := &p.index[s]
		keys, ok := r.indexKeys(s)
		if !ok {
			idx.other = append(idx.other, r.order)
			continue
		}
		for _, k := range keys {
			idx.exact[k] = append(idx.exact[k], r.order)
		}
	}
}

// indexKeys returns the exact keys a rule is found under for its step, or
// false when a glob (or too many names) requires checking it every time.
func (r *rule) indexKeys(step int) ([]key2, bool) {
	var first, second []pattern
	switch step {
	case stepAgentTool:
		first, second = r.agents, r.tools
		if len(r.tools) == 0 { // an agent × command rule
			return nil, false
		}
	case stepAgentClass:
		first, second = r.agents, r.classes
	case stepAgent:
		first = r.agents
	case stepTool:
		first = r.tools
		if len(r.tools) == 0 {
			return nil, false
		}
	case stepClass:
		first = r.classes
	default:
		return nil, false
	}
	for _, ps := range [][]pattern{first, second} {
		for _, p := range ps {
			if !p.exact() {
				return nil, false
			}
		}
	}
	if len(first)*max(1, len(second)) > maxIndexKeys {
		return nil, false
	}
	var keys []key2
	for _, a := range first {
		if len(second) == 0 {
			keys = append(keys, key2{a.text, ""})
			continue
		}
		for _, b := range second {
			keys = append(keys, key2{a.text, b.text})
		}
	}
	return keys, true
}

// lookupKey returns the key an action has at a step.
func lookupKey(step int, agent, tool string, class airlock.Class) key2 {
	switch step {
	case stepAgentTool:
		return key2{agent, tool}
	case stepAgentClass:
		return key2{agent, string(class)}
	case stepAgent:
		return key2{agent, ""}
	case stepTool:
		return key2{tool, ""}
	case stepClass:
		return key2{string(class), ""}
	}
	return key2{}
}

// LoadPolicyFile reads, parses and compiles the policy in path. See
// LoadPolicy.
func LoadPolicyFile(path string) (*Policy, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, airlock.Errorf(airlock.EINVALID, "read policy: %v", err)
	}
	return LoadPolicy(path, src)
}

// LoadPolicy parses and compiles a policy document. name is used in
// positions (usually the file name). Any problem — YAML syntax, an unknown
// field, a bad value, a CEL condition that does not compile — is returned
// as a *PolicyError listing every problem with its file:line:col.
//
// The tests a policy carries are decisions, so they run where the policy
// meets a stack and a shell analyser: when a gate takes it (NewGate,
// Replace, PushSession; a failing test refuses the stack, located at the
// test) and with RunPolicyTests.
func LoadPolicy(name string, src []byte) (*Policy, error) {
	d := newPolicyDecoder(name, src)
	p := d.decode()
	if len(d.problems) > 0 {
		slices.SortStableFunc(d.problems, func(a, b Problem) int {
			return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col))
		})
		return nil, &PolicyError{File: name, Problems: d.problems}
	}
	p.buildIndex()
	return p, nil
}

// PolicyError reports every problem found in a policy document.
type PolicyError struct {
	File     string
	Problems []Problem
}

// Problem is one error in a policy, located in its file.
type Problem struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Col     int    `json:"col"`
	Message string `json:"message"`
}

// String returns "file:line:col: message".
func (p Problem) String() string {
	if p.Line == 0 {
		return fmt.Sprintf("%s: %s", p.File, p.Message)
	}
	return fmt.Sprintf("%s:%d:%d: %s", p.File, p.Line, p.Col, p.Message)
}

// Error lists the problems, one per line.
func (e *PolicyError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Unwrap lets ErrorCode report EINVALID for policy errors.
func (e *PolicyError) Unwrap() error {
	return airlock.Errorf(airlock.EINVALID, "policy %s has %d problem(s)", e.File, len(e.Problems))
}

// grantLimits is what a policy lets standing grants loosen (grants:).
type grantLimits struct {
	set     bool // the policy has a grants: section
	forbid  bool // allow: false
	maxTier airlock.RiskTier
	agents  []pattern // except_agents
	tools   []pattern // except_tools
	pos     Pos
}

// allows reports whether the policy lets gr loosen a view of tier t of
// the action of agent with tool, and says why not.
func (l *grantLimits) allows(tool, agent string, t airlock.RiskTier) (bool, string) {
	switch {
	case !l.set:
		return true, ""
	case l.forbid:
		return false, "allows no grant"
	case l.maxTier != 0 && t > l.maxTier:
		return false, "allows no grant above " + l.maxTier.String()
	case len(l.agents) > 0 && matchAny(l.agents, agent):
		return false, "allows no grant for agent " + agent
	case len(l.tools) > 0 && matchAny(l.tools, tool):
		return false, "allows no grant for tool " + tool
	}
	return true, ""
}
