package gate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/gate"
	"github.com/airlock-dev/airlock/shell"
)

const effectiveOrg = `name: acme
layer: organisation
timeout: 2h
floors:
  tiers:
    destructive: ask
  classes:
    "net.*": notify
agents:
  "ci-*":
    preset: conservative
    reviewers: [rita]
rules:
  - id: ci-deploys
    agent: ci-*
    tool: deploy
    outcome: ask
    timeout: 5m
  - id: no-prod
    tool: mcp__deploy__*
    when: args.env == "prod"
    outcome: deny
`

// The project's rules are written least specific first: the effective
// policy lists them in the order the gate tries them.
const effectiveProject = `name: webapp
default: auto
classifiers:
  - id: terraform
    tool: terraform_apply
    class: infra.apply
    tier: destructive
agents:
  ci-bot:
    owner: carol
rules:
  - id: reads
    class: fs.read
    outcome: auto
  - id: dev-writes
    agent: dev
    tool: write_file
    outcome: auto
  - id: ci-anything
    agent: ci-bot
    outcome: notify
  - id: ci-writes
    agent: "ci-*"
    tool: write_file
    outcome: auto
  - id: ci-money
    agent: ci-*
    tool: wire_money
    needs_human: true
`

// newGate loads the policies, given as file name and text, top layer
// first.
func newGate(t *testing.T, files ...string) *gate.Gate {
	t.Helper()
	var layers []*gate.Policy
	for i := 0; i < len(files); i += 2 {
		p, err := gate.LoadPolicy(files[i], []byte(files[i+1]))
		if err != nil {
			t.Fatal(err)
		}
		layers = append(layers, p)
	}
	g, err := gate.New(shell.Analyser{}, layers...)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func effectiveGate(t *testing.T) *gate.Gate {
	t.Helper()
	return newGate(t, "org.yaml", effectiveOrg, "project.yaml", effectiveProject)
}

// outline writes the layers of an effective policy one line per entry.
func outline(ep gate.EffectivePolicy) []string {
	var out []string
	for _, l := range ep.Layers {
		def := "none"
		if l.Default != 0 {
			def = fmt.Sprintf("%s up to %v at %s", l.Default, l.DefaultCeiling, l.DefaultAt)
		}
		out = append(out, fmt.Sprintf("%s %s (%s): default %s, %d excluded", l.Layer, l.Policy, l.File, def, l.Excluded))
		if a := l.Agent; a != nil {
			out = append(out, fmt.Sprintf("  agent %s at %s: preset %q owner %q", a.Pattern, a.At, a.Preset, a.Owner))
		}
		for _, c := range l.Classifiers {
			out = append(out, fmt.Sprintf("  classifier %s at %s: %s → %s (%s)", c.ID, c.At, c.Tools, c.Class, c.Tier))
		}
		for _, f := range l.Floors {
			what := "class " + f.Class
			if f.Tier != 0 {
				what = "tier " + f.Tier.String() + " and above"
			}
			out = append(out, fmt.Sprintf("  floor %s at %s: %s", what, f.At, f.Outcome))
		}
		for _, r := range l.Rules {
			out = append(out, fmt.Sprintf("  rule %s (%s) at %s: %s%s", r.ID, r.Step, r.At, r.Outcome, when(r)))
		}
		for _, r := range l.Tags {
			out = append(out, fmt.Sprintf("  tag %s at %s: needs-human %t%s", r.ID, r.At, r.NeedsHuman, when(r)))
		}
	}
	return out
}

func when(r gate.EffectiveRule) string {
	if !r.Conditional() {
		return ""
	}
	return " when " + r.Condition
}

func TestEffectivePolicyLayers(t *testing.T) {
	g := effectiveGate(t)
	for _, tc := range []struct {
		agent string
		want  []string
	}{
		{"ci-bot", []string{
			"organisation acme (org.yaml): default none, 0 excluded",
			`  agent ci-* at org.yaml:10:3: preset "conservative" owner ""`,
			"  floor tier destructive and above at org.yaml:6:5: ask",
			"  floor class net.* at org.yaml:8:5: notify",
			"  rule ci-deploys (agent × tool) at org.yaml:14:5: ask",
			`  rule no-prod (tool) at org.yaml:19:5: deny when args.env == "prod"`,
			"project webapp (project.yaml): default auto up to network-egress at project.yaml:2:10, 1 excluded",
			`  agent ci-bot at project.yaml:9:3: preset "" owner "carol"`,
			"  classifier terraform at project.yaml:4:5: [terraform_apply] → infra.apply (destructive)",
			"  rule ci-writes (agent × tool) at project.yaml:22:5: auto",
			"  rule ci-anything (agent) at project.yaml:19:5: notify",
			"  rule reads (class) at project.yaml:12:5: auto",
			"  tag ci-money at project.yaml:26:5: needs-human true",
		}},
		{"dev", []string{
			"organisation acme (org.yaml): default none, 1 excluded",
			"  floor tier destructive and above at org.yaml:6:5: ask",
			"  floor class net.* at org.yaml:8:5: notify",
			`  rule no-prod (tool) at org.yaml:19:5: deny when args.env == "prod"`,
			"project webapp (project.yaml): default auto up to network-egress at project.yaml:2:10, 3 excluded",
			"  classifier terraform at project.yaml:4:5: [terraform_apply] → infra.apply (destructive)",
			"  rule dev-writes (agent × tool) at project.yaml:15:5: auto",
			"  rule reads (class) at project.yaml:12:5: auto",
		}},
	} {
		t.Run(tc.agent, func(t *testing.T) {
			got := outline(g.EffectivePolicy(tc.agent))
			if !slices.Equal(got, tc.want) {
				t.Fatalf("effective policy of %s:\n%s\nwant:\n%s", tc.agent, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// What the layers together say about the agent is what Decide applies.
func TestEffectivePolicyAgentSettings(t *testing.T) {
	g := effectiveGate(t)
	ci := g.EffectivePolicy("ci-bot")
	got := fmt.Sprintf("%s from %q, owner %q, reviewers %v, needs-human %q, timeouts %s %s",
		ci.Preset, ci.PresetFrom, ci.Owner, ci.Reviewers, ci.NeedsHumanBy, ci.AskTimeout, ci.QueueTimeout)
	want := `conservative from "agent ci-* in organisation policy acme", owner "carol", reviewers [rita], needs-human "", timeouts 2h0m0s 2h0m0s`
	if got != want {
		t.Errorf("ci-bot:\n got %s\nwant %s", got, want)
	}
	d := g.Decide(context.Background(), airlock.Action{Agent: "ci-bot", Tool: "write_file", Args: airlock.MustArgs(map[string]any{"path": "x"})})
	if d.Preset != ci.Preset || d.Owner != ci.Owner || !slices.Equal(d.Reviewers, ci.Reviewers) || d.Timeout != ci.AskTimeout {
		t.Errorf("the decision applies preset %s, owner %q, reviewers %v, timeout %s; the effective policy says %s, %q, %v, %s",
			d.Preset, d.Owner, d.Reviewers, d.Timeout, ci.Preset, ci.Owner, ci.Reviewers, ci.AskTimeout)
	}

	dev := g.EffectivePolicy("dev")
	if dev.Preset != airlock.PresetNone || dev.PresetFrom != "" || dev.Owner != "" || len(dev.Reviewers) != 0 {
		t.Errorf("dev gets another agent's settings: %+v", dev)
	}

	tagged := newGate(t, "human.yaml", "agents:\n  ops:\n    needs_human: true\n    timeout: 30m\n")
	ops := tagged.EffectivePolicy("ops")
	if want := "agent ops in project policy human (human.yaml:2)"; ops.NeedsHumanBy != want {
		t.Errorf("needs-human by %q, want %q", ops.NeedsHumanBy, want)
	}
	if ops.AskTimeout != 30*time.Minute || ops.QueueTimeout != 30*time.Minute {
		t.Errorf("timeouts %s %s, want the agent's 30m", ops.AskTimeout, ops.QueueTimeout)
	}
	if other := tagged.EffectivePolicy("other"); other.NeedsHumanBy != "" || other.AskTimeout != gate.DefaultAskTimeout || other.QueueTimeout != gate.DefaultQueueTimeout {
		t.Errorf("an agent without an entry: needs-human %q, timeouts %s %s", other.NeedsHumanBy, other.AskTimeout, other.QueueTimeout)
	}
}

// Whatever rule decides an action of the agent is among the rules its
// effective policy lists for that layer.
func TestEffectivePolicyHoldsTheDecidingRule(t *testing.T) {
	g := effectiveGate(t)
	for _, a := range []airlock.Action{
		{Agent: "ci-bot", Tool: "write_file", Args: airlock.MustArgs(map[string]any{"path": "x"})},
		{Agent: "ci-bot", Tool: "deploy"},
		{Agent: "ci-bot", Tool: "Bash", Args: airlock.MustArgs(map[string]any{"command": "make"})},
		{Agent: "ci-7", Tool: "mcp__deploy__release", Args: airlock.MustArgs(map[string]any{"env": "prod"})},
		{Agent: "dev", Tool: "write_file", Args: airlock.MustArgs(map[string]any{"path": "x"})},
		{Agent: "dev", Tool: "Read", Args: airlock.MustArgs(map[string]any{"file_path": "x"})},
	} {
		d := g.Decide(context.Background(), a)
		if d.Rule == nil {
			t.Fatalf("%s: no rule decided (%s); the test needs one", a.Tool, d.Source)
		}
		ep := g.EffectivePolicy(a.Agent)
		i := slices.IndexFunc(ep.Layers, func(l gate.EffectiveLayer) bool { return l.Layer == d.Rule.Layer })
		if i < 0 || !slices.ContainsFunc(ep.Layers[i].Rules, func(r gate.EffectiveRule) bool {
			return r.ID == d.Rule.ID && r.At.String() == d.Rule.Location()
		}) {
			t.Errorf("%s %s is decided by %s, which the effective policy does not list", a.Agent, a.Tool, d.Rule)
		}
	}
}

func TestEffectivePolicySharesNothing(t *testing.T) {
	g := effectiveGate(t)
	ep := g.EffectivePolicy("ci-bot")
	ep.Layers[0].Agent.Reviewers[0] = "mallory"
	ep.Reviewers[0] = "mallory"
	d := g.Decide(context.Background(), airlock.Action{Agent: "ci-bot", Tool: "deploy"})
	if slices.Contains(d.Reviewers, "mallory") {
		t.Fatalf("changing the effective policy changed the gate: reviewers %v", d.Reviewers)
	}
}

// The wire form a client reads back is the same effective policy, with
// enumerations by name, positions as file, line and column, and durations
// in nanoseconds.
func TestEffectivePolicyJSON(t *testing.T) {
	ep := effectiveGate(t).EffectivePolicy("ci-bot")
	b, err := json.Marshal(ep)
	if err != nil {
		t.Fatal(err)
	}
	var back gate.EffectivePolicy
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if got, want := outline(back), outline(ep); !slices.Equal(got, want) {
		t.Errorf("read back:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if back.Preset != ep.Preset || back.PresetFrom != ep.PresetFrom || back.Owner != ep.Owner ||
		!slices.Equal(back.Reviewers, ep.Reviewers) || back.AskTimeout != ep.AskTimeout || back.QueueTimeout != ep.QueueTimeout {
		t.Errorf("read back %+v, want %+v", back, ep)
	}
	for _, want := range []string{
		`"agent":"ci-bot","preset":"conservative"`,
		`"ask_timeout":7200000000000`,
		`"layer":"organisation"`,
		`{"id":"ci-deploys","at":{"file":"org.yaml","line":14,"col":5},"step":"agent × tool","agents":["ci-*"],"tools":["deploy"],"outcome":"ask","timeout":300000000000}`,
		`"condition":"args.env == \"prod\""`,
		`{"tier":"destructive","outcome":"ask","at":{"file":"org.yaml","line":6,"col":5}}`,
		`"tags":[{"id":"ci-money"`,
		`"needs_human":true`,
		`"default":"auto","default_source":"policy default","default_at":{"file":"project.yaml","line":2,"col":10},"default_ceiling":"network-egress"`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the JSON lacks %s:\n%s", want, b)
		}
	}
	org, _, _ := strings.Cut(string(b), `"policy":"webapp"`)
	if strings.Contains(string(b), `"min_tier"`) || strings.Contains(org, `"default`) {
		t.Errorf("the JSON carries unset fields (min_tier, or a default for the organisation layer): %s", b)
	}
}

// The text form lists what the web page shows, in the same order.
func TestEffectivePolicyExplain(t *testing.T) {
	text := effectiveGate(t).EffectivePolicy("ci-bot").Explain()
	for _, want := range []string{
		"preset:       conservative, from agent ci-* in organisation policy acme: write-tier and riskier actions always ask",
		"owner:        carol\n",
		"reviewers:    rita, the reviewers of the deciding rule, the owner and admins\n",
		"organisation layer: acme (org.yaml)\n",
		"  agent entry:  ci-* (org.yaml:10:3) · preset conservative · reviewers rita\n",
		"     1. ask: rule ci-deploys [agent × tool] agent ci-* · tool deploy · deadline 5m0s (org.yaml:14:5)\n",
		"     2. deny: rule no-prod [tool] tool mcp__deploy__* (org.yaml:19:5)\n        conditional: when args.env == \"prod\"\n",
		"    destructive and above: at least ask (org.yaml:6:5)\n",
		"  default:      auto · up to network-egress (policy default, project.yaml:2:10)\n",
		"     1. auto: rule ci-writes [agent × tool] agent ci-* · tool write_file · up to network-egress (project.yaml:22:5)\n" +
			"     2. notify: rule ci-anything [agent] agent ci-bot · up to network-egress (project.yaml:19:5)\n" +
			"     3. auto: rule reads [class] class fs.read · up to network-egress (project.yaml:12:5)\n",
		"     1. tag + needs-human: rule ci-money [agent × tool] agent ci-* · tool wire_money (project.yaml:26:5)\n",
		"  1 more rule(s) of this policy name other agents only.\n",
		"    terraform: tool terraform_apply → class infra.apply, destructive (project.yaml:4:5)\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the explanation lacks %q:\n%s", want, text)
		}
	}
	if strings.Index(text, "organisation layer") > strings.Index(text, "project layer") {
		t.Errorf("layers out of order:\n%s", text)
	}

	g, err := gate.New(shell.Analyser{})
	if err != nil {
		t.Fatal(err)
	}
	if text := g.EffectivePolicy("x").Explain(); !strings.Contains(text, "No policy is loaded") {
		t.Errorf("without policies:\n%s", text)
	}
}

// What the policy in force can do to one agent, before it attempts
// anything: here, a rule for the agent's team and a conditional rule for
// everyone, in the order the gate tries them.
func ExampleGate_EffectivePolicy() {
	p, err := gate.LoadPolicy("team.yaml", []byte(`
rules:
  - id: big-refunds
    tool: refund
    when: args.amount > 100
    outcome: ask
  - id: ci-writes
    agent: ci-*
    class: fs.write
    outcome: auto
`))
	if err != nil {
		panic(err)
	}
	g, err := gate.New(shell.Analyser{}, p)
	if err != nil {
		panic(err)
	}
	for _, l := range g.EffectivePolicy("ci-bot").Layers {
		for _, r := range l.Rules {
			fmt.Printf("%s %s (%s): %s", r.At, r.ID, r.Step, r.Outcome)
			if r.Conditional() {
				fmt.Printf(" when %s", r.Condition)
			}
			fmt.Println()
		}
	}
	// Output:
	// team.yaml:7:5 ci-writes (agent × class): auto
	// team.yaml:3:5 big-refunds (tool): ask when args.amount > 100
}

// reachPolicy has a rule for each kind of action the gate's ceiling treats
// apart.
const reachPolicy = `name: reach
classifiers:
  - {id: trust-fs-reads, tool: "mcp__fs__*", when: hints.read_only, class: mcp.read, tier: read}
  - {id: payments, tool: "pay_*", class: spend, tier: spend}
rules:
  - {id: deploy, tool: deploy_prod, outcome: auto}
  - {id: reads, tool: Read, outcome: auto}
  - {id: mixed, tool: [Glob, wire_money], outcome: notify}
  - {id: deletes, class: fs.delete, outcome: auto}
  - {id: fs-reads, class: mcp.read, outcome: auto}
  - {id: pay, tool: "pay_*", outcome: auto, max_tier: spend}
  - {id: scripts, command: "./build.sh *", outcome: auto}
`

// TestEffectiveReachIsTheGates checks each reach the effective policy
// labels a rule with against what the gate decides at the tier extremes:
// an action of that kind at the labelled tier is decided by the rule, and
// one tier above it is not. The label once said network-egress for an
// unknown tool a rule names exactly, which the gate lets run whatever its
// tier; and a class a classifier defines once reached any tier its hints
// raised it to (a tool whose server says it reads and destroys).
func TestEffectiveReachIsTheGates(t *testing.T) {
	g := newGate(t, "reach.yaml", reachPolicy)
	// An action of each kind of each rule, by the kind as Reach names it.
	actions := map[string]airlock.Action{
		"deploy privileged for tool deploy_prod (unknown, named exactly)": {Tool: "deploy_prod"},
		"reads network-egress otherwise":                                  {Tool: "Read", Args: airlock.MustArgs(map[string]any{"file_path": "README.md"})},
		"mixed privileged for tool wire_money (unknown, named exactly)":   {Tool: "wire_money", Args: airlock.MustArgs(map[string]any{"amount": 5})},
		"mixed network-egress otherwise":                                  {Tool: "Glob", Args: airlock.MustArgs(map[string]any{"pattern": "*.go"})},
		"deletes destructive for class fs.delete":                         {Tool: "delete_file", Args: airlock.MustArgs(map[string]any{"path": "tmp/x"})},
		"fs-reads network-egress for class mcp.read":                      {Tool: "mcp__fs__read_text_file", Hints: &airlock.Hints{ReadOnly: true}},
		"pay spend otherwise":                                             {Tool: "pay_invoice"},
		"scripts network-egress otherwise":                                {Tool: "Bash", Args: airlock.MustArgs(map[string]any{"command": "./build.sh --fast"})},
	}
	ep := g.EffectivePolicy("coder-1")
	seen := 0
	for _, r := range ep.Layers[0].Rules {
		if r.ID == "deploy" && r.ReachText() != "up to privileged" {
			t.Errorf("rule deploy: %q, want up to privileged", r.ReachText())
		}
		for _, reach := range r.Reach {
			key := r.ID + " " + reach.String()
			a, ok := actions[key]
			if !ok {
				t.Errorf("no action to try %q (rule %s is labelled %q)", key, r.ID, r.ReachText())
				continue
			}
			seen++
			a.Agent = "coder-1"
			for _, tier := range []airlock.RiskTier{reach.Tier, reach.Tier + 1} {
				if !tier.Valid() {
					continue // nothing is above privileged
				}
				at := a
				h := airlock.Hints{Tier: tier}
				if a.Hints != nil {
					h.ReadOnly = a.Hints.ReadOnly
				}
				at.Hints = &h
				d := g.Decide(context.Background(), at)
				if d.Classification.Tier != tier {
					t.Fatalf("%s: the action tried is %s, not %s: %s", key, d.Classification.Tier, tier, d)
				}
				byRule := d.Rule != nil && d.Rule.ID == r.ID && d.Outcome == r.Outcome
				if want := tier == reach.Tier; byRule != want {
					t.Errorf("%s: labelled %q, but at tier %s the gate decides %s", key, r.ReachText(), tier, d)
				}
			}
		}
	}
	if seen != len(actions) {
		t.Errorf("tried %d kinds, want the %d the table has", seen, len(actions))
	}
}

// TestClassifierClassKeepsItsTier: a rule that names a class a classifier
// defines reaches that classifier's tier, not one the action's hints raise
// it to: an MCP server that says its tool both only reads and destroys
// does not get it run by a rule for reads.
func TestClassifierClassKeepsItsTier(t *testing.T) {
	g := newGate(t, "reach.yaml", reachPolicy)
	read := airlock.Action{Agent: "coder-1", Tool: "mcp__fs__read_text_file", Hints: &airlock.Hints{ReadOnly: true}}
	if d := g.Decide(context.Background(), read); d.Outcome != airlock.Auto || d.Rule == nil || d.Rule.ID != "fs-reads" {
		t.Fatalf("a read the classifier trusts: %s, want auto by fs-reads", d)
	}
	both := read
	both.Hints = &airlock.Hints{ReadOnly: true, Tier: airlock.TierDestructive}
	if d := g.Decide(context.Background(), both); d.Outcome.Runs() {
		t.Fatalf("a read that also says it destroys: %s, want a person", d)
	}
}
