package bench

// Side-by-side comparison of Airlock, OPA and cedar-go on one "tier-lookup"
// policy:
//
//   - the built-in catalog classifies each tool into a risk tier (MCP tools,
//     mcp__<server>__<tool>, are write; unknown tools are privileged);
//   - tiers map to outcomes: read → auto, write → notify, network-egress →
//     ask, spend → ask, destructive → ask, privileged → deny;
//   - two agent × tool exceptions: intern may not delete_file (deny), crawler
//     may WebFetch without asking (auto).
//
// The three engines are fed the same airlock.Action values. Airlock decides
// with Gate.Resolve (classification + resolution, no action hash). OPA and
// Cedar get an input built per call from the action's agent and tool, as an
// application embedding them would build it; the tool → tier table they use
// is generated from catalog.Catalog(), so all three classify identically.
//
// Shell and exec tools (class process.exec) are out of scope: Airlock parses
// their scripts, which neither OPA nor Cedar can do, so no input uses them.

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/cedar-policy/cedar-go"
	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/catalog"
	"github.com/airlock-dev/airlock/gate"
	"github.com/airlock-dev/airlock/shell"
)

// --- the policy, three times -------------------------------------------------

// airlockPolicy is the tier-lookup policy in Airlock's YAML. The exceptions
// are agent × tool rules, which Airlock's resolution order puts before any
// rule that matches by tier alone. The min_tier rules all sit in the last
// resolution step, where the first match in file order wins, so they are
// written strictest first: together they are an exact tier → outcome table.
const airlockPolicy = `
name: tier-lookup
rules:
  - {id: intern-no-delete, agent: intern, tool: delete_file, outcome: deny}
  - {id: crawler-fetch, agent: crawler, tool: WebFetch, outcome: auto}
  - {id: privileged, min_tier: privileged, outcome: deny}
  - {id: destructive, min_tier: destructive, outcome: ask}
  - {id: spend, min_tier: spend, outcome: ask}
  - {id: egress, min_tier: network-egress, outcome: ask}
  - {id: write, min_tier: write, outcome: notify}
  - {id: read, min_tier: read, outcome: auto}
tests:
  - {name: intern cannot delete, action: {agent: intern, tool: delete_file}, expect: deny}
  - {name: crawler fetches, action: {agent: crawler, tool: WebFetch}, expect: auto}
  - {name: others ask to fetch, action: {agent: coder, tool: WebFetch}, expect: ask}
  - {name: unknown tools are denied, action: {agent: coder, tool: frobnicate}, expect: deny}
`

// tierOutcomes is the tier → outcome table the Rego and Cedar policies are
// written from (Airlock's is the min_tier rules above).
var tierOutcomes = []struct{ tier, outcome string }{
	{"read", "auto"},
	{"write", "notify"},
	{"network-egress", "ask"},
	{"spend", "ask"},
	{"destructive", "ask"},
	{"privileged", "deny"},
}

// catalogTiers is the built-in catalog as a tool → tier-name table, the
// data OPA and Cedar are given.
func catalogTiers() map[string]string {
	m := map[string]string{}
	for _, e := range catalog.Catalog() {
		m[e.Tool] = e.Tier.String()
	}
	return m
}

// regoPolicy returns the policy in Rego (v1 syntax), with the catalog as a
// literal object, as a Rego author would ship it.
func regoPolicy() string {
	var sb strings.Builder
	sb.WriteString(`package airlock

# The built-in catalog: tool → risk tier.
tiers := {
`)
	tiers := catalogTiers()
	for _, tool := range slices.Sorted(maps.Keys(tiers)) {
		fmt.Fprintf(&sb, "\t%q: %q,\n", tool, tiers[tool])
	}
	sb.WriteString("}\n\ntier_outcomes := {\n")
	for _, t := range tierOutcomes {
		fmt.Fprintf(&sb, "\t%q: %q,\n", t.tier, t.outcome)
	}
	sb.WriteString(`}

# mcp__<server>__<tool>, both parts non-empty.
is_mcp if {
	startswith(input.tool, "mcp__")
	rest := substring(input.tool, 5, -1)
	i := indexof(rest, "__")
	i > 0
	count(rest) > i + 2
}

# A catalog tool has its tier, an MCP tool is a write, anything else is
# unknown and privileged.
tier := t if {
	t := tiers[input.tool]
} else := "write" if {
	is_mcp
} else := "privileged"

# Agent × tool exceptions first, then the tier table.
outcome := "deny" if {
	input.agent == "intern"
	input.tool == "delete_file"
} else := "auto" if {
	input.agent == "crawler"
	input.tool == "WebFetch"
} else := o if {
	o := tier_outcomes[tier]
}
`)
	return sb.String()
}

// cedarPolicy is the policy in Cedar.
//
// Cedar answers allow or deny; Airlock has six outcomes. The encoding: one
// action, Action::"call"; the tool is the resource, an entity Tool::"<name>"
// whose attribute `tier` the application fills from the catalog (Cedar has
// no dynamic table lookup, so classification is the application's job);
// every permit policy carries an @outcome annotation. A request that Cedar
// denies — a forbid matched, or no permit did — is "deny". A request Cedar
// allows takes the strictest @outcome among the permit policies that
// allowed it (Diagnostic.Reasons). This needs one authorization per action,
// unlike the alternative of one Cedar action per outcome level
// (Action::"auto", Action::"notify", ...) asked in turn until one is
// permitted, which costs up to five authorizations per action.
//
// Cedar has no "most specific rule wins": when it combines policies, deny
// wins, and among our permits the strictest outcome wins. So an exception
// that tightens (intern × delete_file) is a forbid, and an exception that
// loosens (crawler × WebFetch) must be carved out of the tier policy with
// `unless` — the one place where the Cedar text differs in shape from the
// Airlock and Rego ones.
const cedarPolicy = `
@id("intern-no-delete")
forbid (principal == Agent::"intern", action == Action::"call", resource == Tool::"delete_file");

@id("crawler-fetch")
@outcome("auto")
permit (principal == Agent::"crawler", action == Action::"call", resource == Tool::"WebFetch");

@id("privileged")
forbid (principal, action == Action::"call", resource)
when { resource.tier == "privileged" };

@id("destructive")
@outcome("ask")
permit (principal, action == Action::"call", resource)
when { resource.tier == "destructive" };

@id("spend")
@outcome("ask")
permit (principal, action == Action::"call", resource)
when { resource.tier == "spend" };

@id("egress")
@outcome("ask")
permit (principal, action == Action::"call", resource)
when { resource.tier == "network-egress" }
unless { principal == Agent::"crawler" && resource == Tool::"WebFetch" };

@id("write")
@outcome("notify")
permit (principal, action == Action::"call", resource)
when { resource.tier == "write" };

@id("read")
@outcome("auto")
permit (principal, action == Action::"call", resource)
when { resource.tier == "read" };
`

// --- the engines ---------------------------------------------------------------

// engine decides an action's outcome name ("auto", "ask", ...).
type engine interface {
	decide(ctx context.Context, a airlock.Action) (string, error)
}

type airlockEngine struct{ g *gate.Gate }

func newAirlock() (*airlockEngine, error) {
	p, err := gate.LoadPolicy("tier-lookup.yaml", []byte(airlockPolicy))
	if err != nil {
		return nil, err
	}
	g, err := gate.New(shell.Analyser{}, p)
	if err != nil {
		return nil, err
	}
	return &airlockEngine{g}, nil
}

func (e *airlockEngine) decide(ctx context.Context, a airlock.Action) (string, error) {
	return e.g.Resolve(ctx, a).Outcome.String(), nil
}

type opaEngine struct{ pq rego.PreparedEvalQuery }

func newOPA(module string) (*opaEngine, error) {
	pq, err := rego.New(
		rego.Query("data.airlock.outcome"),
		rego.Module("airlock.rego", module),
	).PrepareForEval(context.Background())
	if err != nil {
		return nil, err
	}
	return &opaEngine{pq}, nil
}

func (e *opaEngine) decide(ctx context.Context, a airlock.Action) (string, error) {
	rs, err := e.pq.Eval(ctx, rego.EvalInput(map[string]any{"agent": a.Agent, "tool": a.Tool}))
	if err != nil {
		return "", err
	}
	if len(rs) != 1 || len(rs[0].Expressions) != 1 {
		return "", fmt.Errorf("opa: no outcome for %s/%s", a.Agent, a.Tool)
	}
	s, ok := rs[0].Expressions[0].Value.(string)
	if !ok {
		return "", fmt.Errorf("opa: outcome is %T", rs[0].Expressions[0].Value)
	}
	return s, nil
}

type cedarEngine struct {
	ps       *cedar.PolicySet
	outcomes map[cedar.PolicyID]airlock.Outcome // from the @outcome annotations
	tiers    map[string]string
}

var (
	cedarCall = cedar.NewEntityUID("Action", "call")
	noContext = cedar.NewRecord(nil)
)

func newCedar(src string) (*cedarEngine, error) {
	list, err := cedar.NewPolicyListFromBytes("tier-lookup.cedar", []byte(src))
	if err != nil {
		return nil, err
	}
	e := &cedarEngine{ps: cedar.NewPolicySet(), outcomes: map[cedar.PolicyID]airlock.Outcome{}, tiers: catalogTiers()}
	for i, p := range list {
		ann := p.Annotations()
		id := cedar.PolicyID(cmp.Or(string(ann["id"]), fmt.Sprintf("policy%d", i)))
		if !e.ps.Add(id, p) {
			return nil, fmt.Errorf("cedar: duplicate policy id %s", id)
		}
		if o, ok := ann["outcome"]; ok {
			out, err := airlock.ParseOutcome(string(o))
			if err != nil {
				return nil, fmt.Errorf("cedar: policy %s: %v", id, err)
			}
			e.outcomes[id] = out
		}
	}
	return e, nil
}

// tierOf is the application-side classification Cedar needs: the catalog,
// then MCP tools, then unknown.
func (e *cedarEngine) tierOf(tool string) string {
	if t, ok := e.tiers[tool]; ok {
		return t
	}
	if rest, ok := strings.CutPrefix(tool, "mcp__"); ok {
		if server, name, ok := strings.Cut(rest, "__"); ok && server != "" && name != "" {
			return "write"
		}
	}
	return "privileged"
}

// decide builds the entities and the request for the action, as a user
// must on every call, and authorizes it once.
func (e *cedarEngine) decide(_ context.Context, a airlock.Action) (string, error) {
	principal := cedar.NewEntityUID("Agent", cedar.String(a.Agent))
	resource := cedar.NewEntityUID("Tool", cedar.String(a.Tool))
	entities := cedar.EntityMap{
		principal: {UID: principal},
		resource: {UID: resource, Attributes: cedar.NewRecord(cedar.RecordMap{
			"tier": cedar.String(e.tierOf(a.Tool)),
		})},
	}
	req := cedar.Request{Principal: principal, Action: cedarCall, Resource: resource, Context: noContext}
	decision, diag := e.ps.IsAuthorized(entities, req)
	if len(diag.Errors) > 0 {
		return "", fmt.Errorf("cedar: %v", diag.Errors)
	}
	if decision == cedar.Deny {
		return "deny", nil
	}
	var o airlock.Outcome
	for _, r := range diag.Reasons {
		o = max(o, e.outcomes[r.PolicyID])
	}
	if !o.Valid() {
		return "", fmt.Errorf("cedar: allowed by %v, none with an @outcome", diag.Reasons)
	}
	return o.String(), nil
}

// --- the inputs ------------------------------------------------------------------

// input is one action and the outcome the policy gives it.
type input struct {
	a    airlock.Action
	want string
}

func act(agent, tool, args string) airlock.Action {
	a := airlock.Action{Agent: agent, Tool: tool, Cwd: "/home/dev/app", SessionID: "sess-1", CallID: "call-1"}
	if args != "" {
		a.Args = json.RawMessage(args)
	}
	return a
}

// inputs covers every tier the catalog produces (read, write,
// network-egress, destructive; privileged through unknown tools; no catalog
// tool is spend), MCP tools, and both exceptions with the agents and tools
// next to them. The arguments are realistic and harmless: no path in them
// is a credential or a system path, which would raise Airlock's tier (OPA
// and Cedar see only the agent and the tool).
var inputs = []input{
	{act("coder", "read_file", `{"path":"README.md"}`), "auto"},
	{act("coder", "Grep", `{"pattern":"TODO","path":"internal"}`), "auto"},
	{act("coder", "git.status", `{}`), "auto"},
	{act("coder", "TodoWrite", `{"todos":[{"content":"write tests","status":"pending"}]}`), "auto"},
	{act("intern", "read_file", `{"path":"docs/guide.md"}`), "auto"},
	{act("crawler", "Read", `{"file_path":"notes.txt"}`), "auto"},
	{act("coder", "write_file", `{"path":"out/report.txt","content":"done\n"}`), "notify"},
	{act("coder", "Edit", `{"file_path":"main.go","old_string":"foo","new_string":"bar"}`), "notify"},
	{act("coder", "git.commit", `{"message":"fix the parser"}`), "notify"},
	{act("intern", "mkdir", `{"path":"build"}`), "notify"},
	{act("coder", "mcp__github__create_issue", `{"title":"flaky test","body":"see CI"}`), "notify"},
	{act("coder", "WebFetch", `{"url":"https://example.com/docs","prompt":"summarise"}`), "ask"},
	{act("crawler", "WebFetch", `{"url":"https://example.com/docs","prompt":"summarise"}`), "auto"},
	{act("crawler", "WebSearch", `{"query":"golang benchmarks"}`), "ask"},
	{act("intern", "WebFetch", `{"url":"https://example.com"}`), "ask"},
	{act("coder", "git.push", `{"remote":"origin","branch":"main"}`), "ask"},
	{act("crawler", "sse.send", `{"event":"progress"}`), "ask"},
	{act("coder", "delete_file", `{"path":"tmp/scratch.txt"}`), "ask"},
	{act("intern", "delete_file", `{"path":"tmp/scratch.txt"}`), "deny"},
	{act("crawler", "delete_file", `{"path":"tmp/scratch.txt"}`), "ask"},
	{act("intern", "store.delete", `{"key":"cache"}`), "ask"},
	{act("coder", "process.kill", `{"pid":4242}`), "ask"},
	{act("coder", "frobnicate", `{"level":3}`), "deny"},
	{act("crawler", "mcp__github", `{}`), "deny"}, // not an MCP tool name: unknown
	{act("intern", "mcp____x", ``), "deny"},       // empty server: unknown
}

// --- correctness --------------------------------------------------------------------

func engines(t testing.TB) []struct {
	name string
	e    engine
} {
	t.Helper()
	al, err := newAirlock()
	if err != nil {
		t.Fatal(err)
	}
	op, err := newOPA(regoPolicy())
	if err != nil {
		t.Fatal(err)
	}
	ce, err := newCedar(cedarPolicy)
	if err != nil {
		t.Fatal(err)
	}
	return []struct {
		name string
		e    engine
	}{{"airlock", al}, {"opa", op}, {"cedar", ce}}
}

// mismatches returns, for every input, every engine whose answer is not the
// expected one.
func mismatches(ctx context.Context, name string, e engine, in []input) []string {
	var out []string
	for _, c := range in {
		got, err := e.decide(ctx, c.a)
		if err != nil || got != c.want {
			out = append(out, fmt.Sprintf("%s: agent %s, tool %s: got %q (err %v), want %q",
				name, c.a.Agent, c.a.Tool, got, err, c.want))
		}
	}
	return out
}

// TestSameAnswers checks that the three engines give the expected outcome,
// hence the same one, for every input.
func TestSameAnswers(t *testing.T) {
	ctx := context.Background()
	if len(inputs) < 15 {
		t.Fatalf("only %d inputs", len(inputs))
	}
	for _, en := range engines(t) {
		for _, m := range mismatches(ctx, en.name, en.e, inputs) {
			t.Error(m)
		}
	}
}

// TestSameAnswersCatalog sweeps every non-shell catalog tool for a plain
// agent and both excepted agents: the three engines must agree (Airlock is
// the reference here).
func TestSameAnswersCatalog(t *testing.T) {
	ctx := context.Background()
	ens := engines(t)
	n := 0
	for _, entry := range catalog.Catalog() {
		if entry.Class == airlock.ClassProcessExec || entry.Tool == "apply_patch" {
			// Airlock parses these (scripts, patches); see the top of the file.
			continue
		}
		for _, agent := range []string{"coder", "intern", "crawler"} {
			a := act(agent, entry.Tool, "")
			want, _ := ens[0].e.decide(ctx, a)
			for _, en := range ens[1:] {
				n++
				if got, err := en.e.decide(ctx, a); err != nil || got != want {
					t.Errorf("%s/%s: airlock %s, %s %q (err %v)", agent, entry.Tool, want, en.name, got, err)
				}
			}
		}
	}
	if n < 100 {
		t.Fatalf("only %d comparisons", n)
	}
}

// TestSameAnswersCanFail makes sure the comparison catches a policy that
// differs: a Rego policy with write → ask, a Cedar policy without the
// crawler exception and an Airlock policy without the intern exception must
// each be caught.
func TestSameAnswersCanFail(t *testing.T) {
	ctx := context.Background()
	badRego, err := newOPA(strings.Replace(regoPolicy(), `"write": "notify"`, `"write": "ask"`, 1))
	if err != nil {
		t.Fatal(err)
	}
	badCedar, err := newCedar(strings.Replace(cedarPolicy,
		`unless { principal == Agent::"crawler" && resource == Tool::"WebFetch" }`, ``, 1))
	if err != nil {
		t.Fatal(err)
	}
	p, err := gate.LoadPolicy("bad.yaml", []byte(`
rules:
  - {id: crawler-fetch, agent: crawler, tool: WebFetch, outcome: auto}
  - {id: privileged, min_tier: privileged, outcome: deny}
  - {id: egress, min_tier: network-egress, outcome: ask}
  - {id: write, min_tier: write, outcome: notify}
  - {id: read, min_tier: read, outcome: auto}
`))
	if err != nil {
		t.Fatal(err)
	}
	g, err := gate.New(shell.Analyser{}, p)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct {
		name string
		e    engine
	}{{"opa", badRego}, {"cedar", badCedar}, {"airlock", &airlockEngine{g}}} {
		if len(mismatches(ctx, bad.name, bad.e, inputs)) == 0 {
			t.Errorf("a wrong %s policy went unnoticed", bad.name)
		}
	}
}

// --- benchmarks -----------------------------------------------------------------------

// BenchmarkCompare decides the same inputs, cycling through them, with each
// engine. Every answer is checked, at the same (negligible) cost for all.
func BenchmarkCompare(b *testing.B) {
	ctx := context.Background()
	ens := engines(b)
	al := ens[0].e.(*airlockEngine)
	wants := make([]airlock.Outcome, len(inputs))
	for i, c := range inputs {
		o, err := airlock.ParseOutcome(c.want)
		if err != nil {
			b.Fatal(err)
		}
		wants[i] = o
	}

	// Airlock is called directly rather than through the engine interface,
	// so that it is measured without turning the outcome into a string.
	b.Run("airlock", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if d := al.g.Resolve(ctx, inputs[i].a); d.Outcome != wants[i] {
				b.Fatalf("%s/%s: %s", inputs[i].a.Agent, inputs[i].a.Tool, d.Outcome)
			}
			if i++; i == len(inputs) {
				i = 0
			}
		}
	})
	for _, en := range ens[1:] {
		b.Run(en.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if got, err := en.e.decide(ctx, inputs[i].a); err != nil || got != inputs[i].want {
					b.Fatalf("%s/%s: %q %v", inputs[i].a.Agent, inputs[i].a.Tool, got, err)
				}
				if i++; i == len(inputs) {
					i = 0
				}
			}
		})
	}
}

// BenchmarkAirlockWithoutArgs is BenchmarkCompare/airlock on the same agents
// and tools with no arguments: the difference is what validating the
// arguments and checking their paths (credentials, system paths) costs,
// work that neither OPA nor Cedar does here.
func BenchmarkAirlockWithoutArgs(b *testing.B) {
	ctx := context.Background()
	al, err := newAirlock()
	if err != nil {
		b.Fatal(err)
	}
	bare := make([]airlock.Action, len(inputs))
	wants := make([]airlock.Outcome, len(inputs))
	for i, c := range inputs {
		bare[i] = c.a
		bare[i].Args = nil
		if wants[i], err = airlock.ParseOutcome(c.want); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if d := al.g.Resolve(ctx, bare[i]); d.Outcome != wants[i] {
			b.Fatalf("%s/%s: %s", bare[i].Agent, bare[i].Tool, d.Outcome)
		}
		if i++; i == len(bare) {
			i = 0
		}
	}
}
