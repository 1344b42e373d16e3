package gate

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// MaxPolicyBytes bounds a policy document.
const MaxPolicyBytes = 4 << 20

// maxYAMLNodes bounds how many nodes converting test arguments may visit, so
// that aliases cannot expand a small file into a huge value.
const maxYAMLNodes = 100_000

// policyDecoder turns a YAML document into a Policy. It walks the YAML
// syntax tree itself rather than unmarshalling into structs so that every
// problem — an unknown field, a bad value, a condition that does not
// compile — is reported at its exact line and column, with the valid
// alternatives, and so that all problems are reported at once.
type policyDecoder struct {
	file     string
	src      []byte
	anchors  map[string]ast.Node
	problems []Problem
	levels   bool // some outcome was written as L1, L2 or L3
	levelsAt Pos  // the first of them
	budget   int
}

func newPolicyDecoder(file string, src []byte) *policyDecoder {
	return &policyDecoder{file: file, src: src, anchors: map[string]ast.Node{}, budget: maxYAMLNodes}
}

// field is one key a mapping may have and what to do with its value.
type field struct {
	name string
	fn   func(ast.Node)
}

// Names of the fields each part of a policy accepts. They are checked
// against schema/policy.schema.json by a test.
var (
	policyFields     = []string{"version", "name", "description", "layer", "default", "preset", "needs_human", "timeout", "passkey", "floors", "agents", "classifiers", "rules", "tests", "sensitive_paths", "grants"}
	floorFields      = []string{"tiers", "classes"}
	agentFields      = []string{"description", "preset", "owner", "reviewers", "notify", "needs_human", "timeout"}
	classifierFields = []string{"id", "description", "tool", "command", "when", "class", "capability", "tier", "reason"}
	defaultFields    = []string{"outcome", "max_tier"}
	ruleFields       = []string{"id", "description", "agent", "tool", "class", "command", "min_tier", "max_tier", "when", "outcome", "reviewers", "notify", "timeout", "needs_human", "budget", "approvals", "rejections", "escalate", "passkey"}
	testFields       = []string{"name", "action", "expect"}
	actionFields     = []string{"agent", "tool", "args", "cwd", "session_id", "trace_id", "call_id", "requested_by", "hints", "mcp_server"}
	hintFields       = airlock.HintNames
	expectFields     = []string{"outcome", "rule", "source", "class", "tier", "needs_human", "code", "overridden"}
)

func (d *policyDecoder) decode() *Policy {
	p := &Policy{
		name:  strings.TrimSuffix(filepath.Base(d.file), filepath.Ext(d.file)),
		file:  d.file,
		layer: airlock.LayerProject,
	}
	if len(d.src) > MaxPolicyBytes {
		d.problemAt(Pos{}, "policy is %d bytes, more than the limit of %d", len(d.src), MaxPolicyBytes)
		return p
	}
	f, err := parser.ParseBytes(d.src, 0)
	if err != nil {
		d.yamlError(err)
		return p
	}
	var body ast.Node
	for _, doc := range f.Docs {
		if doc.Body == nil {
			continue
		}
		if body != nil {
			d.errorf(doc.Body, "a policy file holds one YAML document; split the layers into files")
			return p
		}
		body = doc.Body
	}
	if body == nil {
		return p // an empty policy: tier defaults alone decide
	}
	ast.Walk(anchorCollector(d.anchors), body)

	var rules, tests []ast.Node
	d.fields(body, "policy", []field{
		{"version", func(n ast.Node) {
			if s, ok := d.scalar(n, "version"); ok && s != "1" {
				d.errorf(n, "version: unsupported policy version %s (this Airlock reads version 1)", s)
			}
		}},
		{"name", func(n ast.Node) { d.str(n, "name", &p.name) }},
		{"description", func(n ast.Node) { d.str(n, "description", &p.description) }},
		{"layer", func(n ast.Node) {
			p.layer = cmp.Or(parseScalar(d, n, "layer", airlock.ParseLayer), airlock.LayerProject)
		}},
		{"default", func(n ast.Node) { d.policyDefault(n, p) }},
		{"preset", func(n ast.Node) { p.preset, p.presetPos = d.preset(n, "preset"), pos(n) }},
		{"needs_human", func(n ast.Node) { d.boolean(n, "needs_human", &p.needsHuman); p.needsHumanPos = pos(n) }},
		{"timeout", func(n ast.Node) { p.timeout = d.duration(n, "timeout") }},
		{"passkey", func(n ast.Node) { p.passkey = d.tier(n, "passkey") }},
		{"floors", func(n ast.Node) { d.floors(n, p) }},
		{"agents", func(n ast.Node) { d.agents(n, p) }},
		{"classifiers", func(n ast.Node) {
			for i, c := range d.seq(n, "classifiers") {
				if cl := d.classifier(c, fmt.Sprintf("classifiers[%d]", i)); cl != nil {
					p.classifiers = append(p.classifiers, cl)
				}
			}
		}},
		{"rules", func(n ast.Node) { rules = d.seq(n, "rules") }},
		{"tests", func(n ast.Node) { tests = d.seq(n, "tests") }},
		{"sensitive_paths", func(n ast.Node) { d.sensitivePaths(n, p) }},
		{"grants", func(n ast.Node) { d.grantLimits(n, p) }},
	})

	ids := map[string]Pos{}
	for i, n := range rules {
		r, ok := d.rule(n, i, p)
		if prev, dup := ids[r.id]; dup {
			d.errorf(n, "rules[%d]: id %q is already used by the rule at line %d", i, r.id, prev.Line)
		}
		ids[r.id] = r.pos
		if !ok {
			continue
		}
		if r.needsHuman {
			p.humanRules = append(p.humanRules, r)
		}
		if r.outcome == 0 {
			p.tagRules = append(p.tagRules, r)
			continue
		}
		r.order = int32(len(p.rules))
		p.rules = append(p.rules, r)
	}
	if p.defaultOutcome == 0 && d.levels {
		p.defaultOutcome, p.defaultSource, p.levelsPos = airlock.Notify, "levels default", d.levelsAt
	}
	if p.defaultOutcome != 0 {
		p.defaultRef = &airlock.DefaultRef{Source: p.defaultSource, Outcome: p.defaultOutcome, Policy: p.name, Layer: p.layer,
			File: d.file, Line: p.defaultPos.Line, Col: p.defaultPos.Col}
	}
	for i, n := range tests {
		if t := d.test(n, i, p); t != nil {
			p.tests = append(p.tests, t)
		}
	}
	return p
}

// policyDefault decodes `default:`: an outcome, or a mapping of the
// outcome and, for one that loosens, how far it reaches (max_tier).
func (d *policyDecoder) policyDefault(n ast.Node, p *Policy) {
	p.defaultSource, p.defaultPos = "policy default", pos(n)
	switch v := d.resolve(n).(type) {
	case nil:
		return // an unknown alias or tag, reported
	case ast.ScalarNode:
		p.defaultOutcome = d.outcome(v, "default")
		return
	}
	var outcome, maxTier ast.Node
	before := len(d.problems)
	d.fields(n, "default", []field{
		{"outcome", func(n ast.Node) { outcome, p.defaultOutcome = n, d.outcome(n, "default.outcome") }},
		{"max_tier", func(n ast.Node) { maxTier, p.defaultMaxTier = n, d.tier(n, "default.max_tier") }},
	})
	switch {
	case len(d.problems) > before:
	case outcome == nil:
		d.errorf(n, "default: a default needs an outcome; write it like `default: {outcome: notify, max_tier: spend}`")
	case maxTier != nil && !p.defaultLoosens():
		d.errorf(maxTier, "default.max_tier: only a default that loosens (auto, notify) has a ceiling, and this one is %s", p.defaultOutcome)
	}
}

func (d *policyDecoder) floors(n ast.Node, p *Policy) {
	d.fields(n, "floors", []field{
		{"tiers", func(n ast.Node) {
			for _, kv := range d.mapping(n, "floors.tiers") {
				name := keyText(kv)
				t, err := airlock.ParseRiskTier(name)
				if err != nil {
					d.errorf(kv.Key, "floors.tiers: %s", airlock.ErrorMessage(err))
					continue
				}
				p.tierFloors[t] = floor{outcome: d.outcome(kv.Value, "floors.tiers."+name), pos: pos(kv.Key)}
			}
		}},
		{"classes", func(n ast.Node) {
			for _, kv := range d.mapping(n, "floors.classes") {
				name := keyText(kv)
				pat, err := compilePattern(name, pos(kv.Key))
				d.check(kv.Key, "floors.classes", err)
				p.classFloors = append(p.classFloors, classFloor{
					class: pat, outcome: d.outcome(kv.Value, "floors.classes."+name), pos: pos(kv.Key),
				})
			}
		}},
	})
}

func (d *policyDecoder) grantLimits(n ast.Node, p *Policy) {
	l := &p.grants
	l.set, l.pos = true, pos(n)
	d.fields(n, "grants", []field{
		{"allow", func(n ast.Node) {
			allow := true
			d.boolean(n, "grants.allow", &allow)
			l.forbid = !allow
		}},
		{"max_tier", func(n ast.Node) { l.maxTier = d.tier(n, "grants.max_tier") }},
		{"except_agents", func(n ast.Node) { l.agents = d.patterns(n, "grants.except_agents", compilePattern) }},
		{"except_tools", func(n ast.Node) { l.tools = d.patterns(n, "grants.except_tools", compilePattern) }},
	})
}

func (d *policyDecoder) agents(n ast.Node, p *Policy) {
	for _, kv := range d.mapping(n, "agents") {
		name := keyText(kv)
		where := "agents." + name
		pat, err := compilePattern(name, pos(kv.Key))
		d.check(kv.Key, where, err)
		a := &agentPolicy{pattern: pat, pos: pos(kv.Key)}
		d.fields(kv.Value, where, []field{
			{"description", func(n ast.Node) { d.str(n, where+".description", new(string)) }},
			{"preset", func(n ast.Node) { a.preset, a.presetPos = d.preset(n, where+".preset"), pos(n) }},
			{"owner", func(n ast.Node) { d.str(n, where+".owner", &a.owner) }},
			{"reviewers", func(n ast.Node) { a.reviewers = d.strings(n, where+".reviewers") }},
			{"notify", func(n ast.Node) { a.notify, a.notifyPos = d.strings(n, where+".notify"), pos(n) }},
			{"needs_human", func(n ast.Node) { d.boolean(n, where+".needs_human", &a.needsHuman) }},
			{"timeout", func(n ast.Node) { a.timeout = d.duration(n, where+".timeout") }},
		})
		p.agents = append(p.agents, a)
	}
}

func (d *policyDecoder) classifier(n ast.Node, where string) *classifier {
	c := &classifier{pos: pos(n)}
	before := len(d.problems)
	var hasClass, hasTier bool
	d.fields(n, where, []field{
		{"id", func(n ast.Node) { d.str(n, where+".id", &c.id) }},
		{"description", func(n ast.Node) { d.str(n, where+".description", new(string)) }},
		{"tool", func(n ast.Node) { c.tools = d.patterns(n, where+".tool", compilePattern) }},
		{"command", func(n ast.Node) { c.commands = d.patterns(n, where+".command", compileCommandPattern) }},
		{"when", func(n ast.Node) { c.when = d.condition(n, where+".when") }},
		{"class", func(n ast.Node) {
			var s string
			d.str(n, where+".class", &s)
			c.class, hasClass = airlock.Class(s), s != ""
		}},
		{"capability", func(n ast.Node) {
			var s string
			d.str(n, where+".capability", &s)
			c.capability = airlock.Capability(s)
		}},
		{"tier", func(n ast.Node) { c.tier, hasTier = d.tier(n, where+".tier"), true }},
		{"reason", func(n ast.Node) { d.str(n, where+".reason", &c.reason) }},
	})
	switch {
	case len(c.tools) == 0 && len(c.commands) == 0:
		d.errorf(n, "%s: a classifier needs tool or command (which actions does it classify?)", where)
	case !hasClass:
		d.errorf(n, "%s: a classifier needs a class", where)
	case !hasTier:
		d.errorf(n, "%s: a classifier needs a tier (%s)", where, tierList())
	}
	if c.capability == "" {
		c.capability = airlock.Capability(c.class)
	}
	if c.id == "" {
		c.id = fmt.Sprintf("#%d", c.pos.Line)
	}
	c.ref = fmt.Sprintf("classifier %s (%s:%d)", c.id, d.file, c.pos.Line)
	if len(d.problems) > before {
		return nil
	}
	return c
}

// rule decodes one rule; it returns false (and a rule with its id and
// position, for the duplicate check) when the rule has problems.
func (d *policyDecoder) rule(n ast.Node, i int, p *Policy) (*rule, bool) {
	where := fmt.Sprintf("rules[%d]", i)
	r := &rule{pos: pos(n), id: fmt.Sprintf("#%d", i+1)}
	before := len(d.problems)
	var maxTier, budget, review ast.Node
	d.fields(n, where, []field{
		{"id", func(n ast.Node) { d.str(n, where+".id", &r.id) }},
		{"description", func(n ast.Node) { d.str(n, where+".description", &r.description) }},
		{"agent", func(n ast.Node) { r.agents = d.patterns(n, where+".agent", compilePattern) }},
		{"tool", func(n ast.Node) { r.tools = d.patterns(n, where+".tool", compilePattern) }},
		{"class", func(n ast.Node) { r.classes = d.patterns(n, where+".class", compilePattern) }},
		{"command", func(n ast.Node) { r.commands = d.patterns(n, where+".command", compileCommandPattern) }},
		{"min_tier", func(n ast.Node) { r.minTier = d.tier(n, where+".min_tier") }},
		{"max_tier", func(n ast.Node) { maxTier = n; r.maxTier = d.tier(n, where+".max_tier") }},
		{"when", func(n ast.Node) { r.when = d.condition(n, where+".when") }},
		{"outcome", func(n ast.Node) { r.outcome = d.ruleOutcome(n, where+".outcome") }},
		{"reviewers", func(n ast.Node) { r.reviewers = d.strings(n, where+".reviewers") }},
		{"notify", func(n ast.Node) { r.notify, r.notifyPos = d.strings(n, where+".notify"), pos(n) }},
		{"timeout", func(n ast.Node) { r.timeout = d.duration(n, where+".timeout") }},
		{"needs_human", func(n ast.Node) { d.boolean(n, where+".needs_human", &r.needsHuman) }},
		{"budget", func(n ast.Node) { budget = n; r.budget = d.ruleBudget(n, where+".budget") }},
		{"approvals", func(n ast.Node) { review = n; r.review.Approvals = d.quorum(n, where+".approvals") }},
		{"rejections", func(n ast.Node) { review = n; r.review.Rejections = d.quorum(n, where+".rejections") }},
		{"escalate", func(n ast.Node) { review = n; r.review.Escalate = d.escalate(n, where+".escalate") }},
		{"passkey", func(n ast.Node) { review = n; d.boolean(n, where+".passkey", &r.review.Passkey) }},
	})
	if len(d.problems) > before {
		return r, false
	}
	if budget != nil && !r.loosens() {
		d.errorf(budget, "%s.budget: only a rule that loosens (auto, notify) has a budget: it bounds what runs without a person", where)
		return r, false
	}
	if budget != nil && strings.HasPrefix(r.id, "#") {
		d.errorf(budget, "%s.budget: a rule with a budget needs an id, which names its budget's account (the rule's position would change with every edit above it)", where)
		return r, false
	}
	if review != nil && r.outcome != airlock.Ask && r.outcome != airlock.Suggest && !r.needsHuman {
		d.errorf(review, "%s: approvals, rejections, escalate and passkey are for a rule that asks a person (ask, suggest or needs_human: true), and its outcome is %s", where, r.outcome)
		return r, false
	}
	if err := r.review.Validate(r.timeout); err != nil {
		d.errorf(review, "%s.%s", where, airlock.ErrorMessage(err))
		return r, false
	}
	if r.outcome == 0 && !r.needsHuman {
		d.errorf(n, "%s: a rule needs an outcome or needs_human: true, or it does nothing", where)
		return r, false
	}
	if maxTier != nil && !r.loosens() {
		what := "its outcome is " + r.outcome.String()
		if r.outcome == 0 {
			what = "it only tags needs_human"
		}
		d.errorf(maxTier, "%s.max_tier: only a rule that loosens (auto, notify) has a ceiling, and %s", where, what)
		return r, false
	}
	if maxTier != nil && r.minTier > r.maxTier {
		d.errorf(maxTier, "%s.max_tier: %s is below min_tier %s: the rule could never apply", where, r.maxTier, r.minTier)
		return r, false
	}
	r.ref = &airlock.RuleRef{ID: r.id, Policy: p.name, Layer: p.layer, File: d.file, Line: r.pos.Line, Col: r.pos.Col}
	return r, true
}

// quorum decodes a rule's approvals or rejections: how many distinct
// people, from 1 to airlock.MaxQuorum.
func (d *policyDecoder) quorum(n ast.Node, where string) int {
	s, _ := d.scalar(n, where)
	v, err := strconv.Atoi(s)
	if err != nil || v < 1 || v > airlock.MaxQuorum {
		d.errorf(n, "%s: %q is not a number of people from 1 to %d", where, s, airlock.MaxQuorum)
		return 0
	}
	return v
}

// escalate decodes a rule's escalation steps: [{after: 10m, to: [oncall]}, …].
func (d *policyDecoder) escalate(n ast.Node, where string) []airlock.Escalation {
	var out []airlock.Escalation
	for i, sn := range d.seq(n, where) {
		at := fmt.Sprintf("%s[%d]", where, i)
		var step airlock.Escalation
		var hasAfter, hasTo bool
		d.fields(sn, at, []field{
			{"after", func(n ast.Node) { hasAfter = true; step.After = airlock.Duration(d.duration(n, at+".after")) }},
			{"to", func(n ast.Node) { hasTo = true; step.To = d.strings(n, at+".to") }},
		})
		switch {
		case !hasAfter:
			d.errorf(sn, "%s: a step needs after (how long nobody answered: 10m)", at)
		case !hasTo:
			d.errorf(sn, "%s: a step needs to (the reviewers it adds: [oncall] or [group:sre])", at)
		}
		out = append(out, step)
	}
	return out
}

// ruleBudget decodes a rule's budget: {uses: N, per: hour|day} or {sum: ARG,
// max: AMOUNT, currency: CUR, per: hour|day}.
func (d *policyDecoder) ruleBudget(n ast.Node, where string) *airlock.Budget {
	b := &airlock.Budget{}
	before := len(d.problems)
	d.fields(n, where, []field{
		{"uses", func(n ast.Node) {
			s, _ := d.scalar(n, where+".uses")
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil || v <= 0 {
				d.errorf(n, "%s.uses: %q is not a positive whole number", where, s)
			}
			b.Uses = v
		}},
		{"sum", func(n ast.Node) { d.str(n, where+".sum", &b.Sum) }},
		{"max", func(n ast.Node) {
			s, _ := d.scalar(n, where+".max")
			v, err := airlock.ParseAmount(s)
			if err != nil {
				d.errorf(n, "%s.max: %v", where, err)
			}
			b.Max = v
		}},
		{"currency", func(n ast.Node) { d.str(n, where+".currency", &b.Currency) }},
		{"per", func(n ast.Node) { d.str(n, where+".per", &b.Per) }},
	})
	if len(d.problems) > before {
		return nil
	}
	if err := b.Validate(false); err != nil {
		d.errorf(n, "%s: %s", where, strings.TrimPrefix(airlock.ErrorMessage(err), "budget: "))
		return nil
	}
	return b
}

func (d *policyDecoder) test(n ast.Node, i int, p *Policy) *PolicyTest {
	where := fmt.Sprintf("tests[%d]", i)
	t := &PolicyTest{Pos: pos(n), policy: p}
	before := len(d.problems)
	var hasAction, hasExpect bool
	d.fields(n, where, []field{
		{"name", func(n ast.Node) { d.str(n, where+".name", &t.Name) }},
		{"action", func(n ast.Node) { hasAction = true; t.Action = d.action(n, where+".action") }},
		{"expect", func(n ast.Node) { hasExpect = true; t.Expect = d.expect(n, where+".expect") }},
	})
	if t.Name == "" {
		t.Name = where
	}
	switch {
	case !hasAction:
		d.errorf(n, "%s: a test needs an action", where)
	case !hasExpect:
		d.errorf(n, "%s: a test needs expect (an outcome, or a mapping of outcome, rule, class, tier, ...)", where)
	}
	if len(d.problems) > before {
		return nil
	}
	return t
}

func (d *policyDecoder) action(n ast.Node, where string) airlock.Action {
	var a airlock.Action
	d.fields(n, where, []field{
		{"agent", func(n ast.Node) { d.str(n, where+".agent", &a.Agent) }},
		{"tool", func(n ast.Node) { d.str(n, where+".tool", &a.Tool) }},
		{"args", func(n ast.Node) {
			v, ok := d.value(n)
			if !ok {
				return
			}
			if _, isMap := v.(map[string]any); !isMap && v != nil {
				d.errorf(n, "%s.args: must be a mapping", where)
				return
			}
			b, err := json.Marshal(v)
			if err != nil {
				d.errorf(n, "%s.args: %v", where, err)
				return
			}
			a.Args = b
		}},
		{"cwd", func(n ast.Node) { d.str(n, where+".cwd", &a.Cwd) }},
		{"session_id", func(n ast.Node) { d.str(n, where+".session_id", &a.SessionID) }},
		{"trace_id", func(n ast.Node) { d.str(n, where+".trace_id", &a.TraceID) }},
		{"call_id", func(n ast.Node) { d.str(n, where+".call_id", &a.CallID) }},
		{"requested_by", func(n ast.Node) { d.str(n, where+".requested_by", &a.RequestedBy) }},
		{"mcp_server", func(n ast.Node) { d.str(n, where+".mcp_server", &a.MCPServer) }},
		{"hints", func(n ast.Node) {
			h := &airlock.Hints{}
			d.fields(n, where+".hints", []field{
				{"tier", func(n ast.Node) { h.Tier = d.tier(n, where+".hints.tier") }},
				{"needs_human", func(n ast.Node) { d.boolean(n, where+".hints.needs_human", &h.NeedsHuman) }},
				{"read_only", func(n ast.Node) { d.boolean(n, where+".hints.read_only", &h.ReadOnly) }},
				{"reason", func(n ast.Node) { d.str(n, where+".hints.reason", &h.Reason) }},
			})
			a.Hints = h
		}},
	})
	if err := a.Validate(); err != nil {
		d.errorf(n, "%s: %s", where, airlock.ErrorMessage(err))
	}
	return a
}

func (d *policyDecoder) expect(n ast.Node, where string) Expectation {
	var e Expectation
	if s, ok := d.resolve(n).(ast.ScalarNode); ok && s != nil {
		e.Outcome = d.outcome(n, where)
		return e
	}
	d.fields(n, where, []field{
		{"outcome", func(n ast.Node) { e.Outcome = d.outcome(n, where+".outcome") }},
		{"rule", func(n ast.Node) { d.str(n, where+".rule", &e.Rule) }},
		{"source", func(n ast.Node) { d.str(n, where+".source", &e.Source) }},
		{"class", func(n ast.Node) {
			var s string
			d.str(n, where+".class", &s)
			e.Class = airlock.Class(s)
		}},
		{"tier", func(n ast.Node) { e.Tier = d.tier(n, where+".tier") }},
		{"needs_human", func(n ast.Node) { e.NeedsHuman = new(bool); d.boolean(n, where+".needs_human", e.NeedsHuman) }},
		{"code", func(n ast.Node) { e.Code = new(string); d.str(n, where+".code", e.Code) }},
		{"overridden", func(n ast.Node) { e.Overridden = new(bool); d.boolean(n, where+".overridden", e.Overridden) }},
	})
	return e
}

// --- values ---------------------------------------------------------------

// parseScalar decodes a scalar with parse, reporting its error at the node.
func parseScalar[T any](d *policyDecoder, n ast.Node, where string, parse func(string) (T, error)) T {
	var zero T
	s, ok := d.scalar(n, where)
	if !ok {
		return zero
	}
	v, err := parse(s)
	d.check(n, where, err)
	return v
}

func (d *policyDecoder) outcome(n ast.Node, where string) airlock.Outcome {
	return parseScalar(d, n, where, airlock.ParseOutcome)
}

// ruleOutcome decodes a rule's outcome; a rule written in levels (L1-L3)
// makes the policy levels-style.
func (d *policyDecoder) ruleOutcome(n ast.Node, where string) airlock.Outcome {
	if s, ok := d.scalar(n, where); ok && (s == "L1" || s == "L2" || s == "L3") && !d.levels {
		d.levels, d.levelsAt = true, pos(n)
	}
	return d.outcome(n, where)
}

func (d *policyDecoder) tier(n ast.Node, where string) airlock.RiskTier {
	return parseScalar(d, n, where, airlock.ParseRiskTier)
}

func (d *policyDecoder) preset(n ast.Node, where string) airlock.Preset {
	return parseScalar(d, n, where, airlock.ParsePreset)
}

func (d *policyDecoder) duration(n ast.Node, where string) time.Duration {
	s, ok := d.scalar(n, where)
	if !ok {
		return 0
	}
	v, err := time.ParseDuration(s)
	if err != nil || v <= 0 {
		d.errorf(n, "%s: %q is not a positive duration; write it like 90s, 10m or 2h", where, s)
		return 0
	}
	return v
}

func (d *policyDecoder) boolean(n ast.Node, where string, dst *bool) {
	b, ok := d.resolve(n).(*ast.BoolNode)
	if !ok {
		d.errorf(n, "%s: expected true or false", where)
		return
	}
	*dst = b.Value
}

func (d *policyDecoder) str(n ast.Node, where string, dst *string) {
	if s, ok := d.scalar(n, where); ok {
		*dst = s
	}
}

// strings accepts one string or a list of them.
func (d *policyDecoder) strings(n ast.Node, where string) []string {
	if _, ok := d.resolve(n).(*ast.SequenceNode); !ok {
		if s, ok := d.scalar(n, where); ok {
			return []string{s}
		}
		return nil
	}
	var out []string
	for i, e := range d.seq(n, where) {
		if s, ok := d.scalar(e, fmt.Sprintf("%s[%d]", where, i)); ok {
			out = append(out, s)
		}
	}
	return out
}

// patterns accepts one pattern or a list of them, each located where it is
// written.
func (d *policyDecoder) patterns(n ast.Node, where string, compile func(string, Pos) (pattern, error)) []pattern {
	nodes := []ast.Node{n}
	if _, ok := d.resolve(n).(*ast.SequenceNode); ok {
		nodes = d.seq(n, where)
	}
	if len(nodes) == 0 {
		d.errorf(n, "%s: needs at least one name or pattern", where)
	}
	var out []pattern
	for i, e := range nodes {
		at := where
		if e != n {
			at = fmt.Sprintf("%s[%d]", where, i)
		}
		s, ok := d.scalar(e, at)
		if !ok {
			continue
		}
		p, err := compile(s, pos(e))
		if err != nil {
			d.errorf(e, "%s: %v", where, err)
			continue
		}
		out = append(out, p)
	}
	return out
}

// condition compiles a CEL expression and reports its errors at their place
// in the file.
func (d *policyDecoder) condition(n ast.Node, where string) *condition {
	src, ok := d.scalar(n, where)
	if !ok {
		return nil
	}
	c, issues := compileCondition(src)
	for _, is := range issues {
		p := d.exprPos(n, is.line, is.col)
		d.problems = append(d.problems, Problem{File: d.file, Line: p.Line, Col: p.Col,
			Message: fmt.Sprintf("%s: %s", where, is.msg)})
	}
	if c != nil {
		c.pos = pos(n)
	}
	return c
}

// exprPos maps a position inside a scalar (line 1-based, column 0-based) to
// the file: quoted scalars start one column after the quote, block scalars
// on the line after their indicator.
func (d *policyDecoder) exprPos(n ast.Node, line, col int) Pos {
	n = d.resolve(n)
	start := pos(n)
	if line < 1 {
		return start
	}
	switch tk := n.GetToken(); tk.Type {
	case token.DoubleQuoteType, token.SingleQuoteType:
		if line == 1 {
			return Pos{start.Line, start.Col + 1 + col}
		}
		return Pos{start.Line + line - 1, col + 1}
	case token.LiteralType, token.FoldedType:
		l := start.Line + line
		return Pos{l, d.indent(l) + col + 1}
	}
	if line == 1 {
		return Pos{start.Line, start.Col + col}
	}
	return Pos{start.Line + line - 1, col + 1}
}

// indent returns the indentation of a 1-based line of the source.
func (d *policyDecoder) indent(line int) int {
	lines := strings.SplitN(string(d.src), "\n", line+1)
	if line-1 >= len(lines) {
		return 0
	}
	s := lines[line-1]
	return len(s) - len(strings.TrimLeft(s, " "))
}

// value converts a YAML node to plain Go values (for test arguments).
func (d *policyDecoder) value(n ast.Node) (any, bool) {
	d.budget--
	if d.budget < 0 {
		d.errorf(n, "value too large (aliases expand to more than %d nodes)", maxYAMLNodes)
		return nil, false
	}
	switch v := d.resolve(n).(type) {
	case nil:
		return nil, false
	case *ast.NullNode:
		return nil, true
	case *ast.MappingNode, *ast.MappingValueNode:
		m := map[string]any{}
		for _, kv := range d.mapping(v, "value") {
			x, ok := d.value(kv.Value)
			if !ok {
				return nil, false
			}
			m[keyText(kv)] = x
		}
		return m, true
	case *ast.SequenceNode:
		s := make([]any, 0, len(v.Values))
		for _, e := range v.Values {
			x, ok := d.value(e)
			if !ok {
				return nil, false
			}
			s = append(s, x)
		}
		return s, true
	case ast.ScalarNode:
		var x any
		if err := yaml.NodeToValue(v, &x); err != nil {
			d.errorf(v, "%v", err)
			return nil, false
		}
		return x, true
	}
	d.errorf(n, "unsupported YAML value")
	return nil, false
}

// --- structure --------------------------------------------------------------

// fields walks a mapping, calling each known key's function and reporting
// unknown keys with the valid ones.
func (d *policyDecoder) fields(n ast.Node, where string, fs []field) {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.name
	}
	for _, kv := range d.mapping(n, where) {
		key := keyText(kv)
		if key == "<<" {
			d.errorf(kv.Key, "%s: merge keys (<<) are not supported; repeat the fields", where)
			continue
		}
		found := false
		for _, f := range fs {
			if f.name == key {
				f.fn(kv.Value)
				found = true
				break
			}
		}
		if !found {
			d.errorf(kv.Key, "unknown field %q in %s%s", key, where, airlock.DidYouMean(key, names))
		}
	}
}

func (d *policyDecoder) mapping(n ast.Node, where string) []*ast.MappingValueNode {
	switch v := d.resolve(n).(type) {
	case *ast.MappingNode:
		return v.Values
	case *ast.MappingValueNode:
		return []*ast.MappingValueNode{v}
	case *ast.NullNode, nil:
		return nil
	default:
		d.errorf(n, "%s: expected a mapping (key: value), got %s", where, describe(v))
		return nil
	}
}

func (d *policyDecoder) seq(n ast.Node, where string) []ast.Node {
	switch v := d.resolve(n).(type) {
	case *ast.SequenceNode:
		return v.Values
	case *ast.NullNode, nil:
		return nil
	default:
		d.errorf(n, "%s: expected a list, got %s", where, describe(v))
		return nil
	}
}

func (d *policyDecoder) scalar(n ast.Node, where string) (string, bool) {
	switch v := d.resolve(n).(type) {
	case *ast.StringNode:
		return v.Value, true
	case *ast.LiteralNode:
		return v.Value.Value, true
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
		return v.GetToken().Value, true
	case nil:
		return "", false
	case *ast.MappingNode:
		if len(v.Values) == 1 && !v.IsFlowStyle {
			// [group:sre] in a flow sequence reads as a mapping: say how
			// to write what was meant.
			kv := v.Values[0]
			d.errorf(n, "%s: expected a single value, got a mapping (%s: %s); a name with a colon inside [ ] is quoted: \"%s:%s\"",
				where, kv.Key, kv.Value, kv.Key, kv.Value)
			return "", false
		}
		d.errorf(n, "%s: expected a single value, got %s", where, describe(v))
		return "", false
	default:
		d.errorf(n, "%s: expected a single value, got %s", where, describe(v))
		return "", false
	}
}

// resolve follows anchors, aliases and standard tags to the node they stand
// for. It returns nil (after reporting) for an unknown alias or tag.
func (d *policyDecoder) resolve(n ast.Node) ast.Node {
	for i := 0; i < 64; i++ {
		switch v := n.(type) {
		case *ast.AnchorNode:
			n = v.Value
		case *ast.AliasNode:
			name := v.Value.GetToken().Value
			target, ok := d.anchors[name]
			if !ok {
				d.errorf(v, "unknown alias *%s", name)
				return nil
			}
			n = target
		case *ast.TagNode:
			switch tag := v.Start.Value; tag {
			case "!!str", "!!int", "!!float", "!!bool", "!!null", "!!map", "!!seq":
				n = v.Value
			default:
				d.errorf(v, "unsupported tag %s", tag)
				return nil
			}
		default:
			return n
		}
	}
	d.errorf(n, "aliases nest too deeply")
	return nil
}

type anchorCollector map[string]ast.Node

func (c anchorCollector) Visit(n ast.Node) ast.Visitor {
	if a, ok := n.(*ast.AnchorNode); ok {
		c[a.Name.GetToken().Value] = a.Value
	}
	return c
}

func keyText(kv *ast.MappingValueNode) string {
	if kv.Key == nil {
		return ""
	}
	if s, ok := kv.Key.(*ast.StringNode); ok {
		return s.Value
	}
	return kv.Key.GetToken().Value
}

func describe(n ast.Node) string {
	switch n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.NullNode:
		return "nothing (null)"
	}
	return "a " + strings.ToLower(n.Type().String())
}

// pos returns where a node starts; a block mapping starts at its first key.
func pos(n ast.Node) Pos {
	switch v := n.(type) {
	case nil:
		return Pos{}
	case *ast.MappingNode:
		if !v.IsFlowStyle && len(v.Values) > 0 {
			return pos(v.Values[0])
		}
	case *ast.MappingValueNode:
		return pos(v.Key)
	}
	tk := n.GetToken()
	if tk == nil || tk.Position == nil {
		return Pos{}
	}
	return Pos{Line: tk.Position.Line, Col: tk.Position.Column}
}

// --- problems ---------------------------------------------------------------

func (d *policyDecoder) errorf(n ast.Node, format string, args ...any) {
	d.problemAt(pos(n), format, args...)
}

func (d *policyDecoder) problemAt(p Pos, format string, args ...any) {
	d.problems = append(d.problems, Problem{File: d.file, Line: p.Line, Col: p.Col, Message: fmt.Sprintf(format, args...)})
}

func (d *policyDecoder) check(n ast.Node, where string, err error) {
	if err != nil {
		d.errorf(n, "%s: %s", where, airlock.ErrorMessage(err))
	}
}

// yamlError converts a YAML syntax error into a located problem.
func (d *policyDecoder) yamlError(err error) {
	var ye yaml.Error
	if errors.As(err, &ye) && ye.GetToken() != nil && ye.GetToken().Position != nil {
		p := ye.GetToken().Position
		d.problemAt(Pos{p.Line, p.Column}, "%s", ye.GetMessage())
		return
	}
	msg := err.Error()
	if line, col, rest, ok := parseBracketPos(msg); ok {
		d.problemAt(Pos{line, col}, "%s", rest)
		return
	}
	d.problemAt(Pos{}, "%s", msg)
}

// parseBracketPos reads the "[line:col] message" prefix goccy puts on errors.
func parseBracketPos(msg string) (line, col int, rest string, ok bool) {
	if !strings.HasPrefix(msg, "[") {
		return 0, 0, "", false
	}
	end := strings.IndexByte(msg, ']')
	if end < 0 {
		return 0, 0, "", false
	}
	l, c, found := strings.Cut(msg[1:end], ":")
	if !found {
		return 0, 0, "", false
	}
	line, err1 := strconv.Atoi(l)
	col, err2 := strconv.Atoi(c)
	if err1 != nil || err2 != nil {
		return 0, 0, "", false
	}
	rest = strings.TrimSpace(msg[end+1:])
	if i := strings.IndexByte(rest, '\n'); i >= 0 {
		rest = rest[:i]
	}
	return line, col, rest, true
}

// tierList lists the risk tiers' names, lowest first, for an error.
func tierList() string {
	var names []string
	for _, t := range airlock.Tiers() {
		names = append(names, t.String())
	}
	return strings.Join(names, ", ")
}
