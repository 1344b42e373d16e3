package gate

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/airlock-dev/airlock"
)

func mustLoad(tb testing.TB, name, src string) *Policy {
	tb.Helper()
	p, err := LoadPolicy(name, []byte(src))
	if err != nil {
		tb.Fatalf("load %s: %v", name, err)
	}
	return p
}

func mustGate(tb testing.TB, layers ...*Policy) *Gate {
	tb.Helper()
	g, err := New(ShellForTests, layers...)
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

func TestSessionPushPop(t *testing.T) {
	g := mustGate(t, mustLoad(t, "project.yaml", "default: auto\n"))
	narrow := mustLoad(t, "narrow.yaml", "layer: session\nrules:\n  - {id: no-writes, class: fs.write, outcome: deny}\n")
	narrower := mustLoad(t, "narrower.yaml", "layer: session\nrules:\n  - {id: no-reads, class: fs.read, outcome: shadow}\n")
	write := airlock.Action{Agent: "a", Tool: "write_file", SessionID: "s1"}
	read := airlock.Action{Agent: "a", Tool: "Read", SessionID: "s1"}
	ctx := context.Background()
	outcomes := func() string {
		return g.Decide(ctx, write).Outcome.String() + " " + g.Decide(ctx, read).Outcome.String()
	}

	if got, want := outcomes(), "auto auto"; got != want {
		t.Fatalf("before push: %s, want %s", got, want)
	}
	if err := g.PushSession("s1", narrow); err != nil {
		t.Fatal(err)
	}
	if err := g.PushSession("s1", narrower); err != nil {
		t.Fatal(err)
	}
	if got, want := outcomes(), "deny shadow"; got != want {
		t.Fatalf("after two pushes: %s, want %s", got, want)
	}
	other := write
	other.SessionID = "s2"
	if got := g.Decide(ctx, other).Outcome; got != airlock.Auto {
		t.Fatalf("another session: %s, want auto", got)
	}
	if err := g.PopSession("s1"); err != nil {
		t.Fatal(err)
	}
	if got, want := outcomes(), "deny auto"; got != want {
		t.Fatalf("after one pop: %s, want %s", got, want)
	}
	if err := g.PopSession("s1"); err != nil {
		t.Fatal(err)
	}
	if got, want := outcomes(), "auto auto"; got != want {
		t.Fatalf("after two pops: %s, want %s", got, want)
	}
	if err := g.PopSession("s1"); airlock.ErrorCode(err) != airlock.ENOTFOUND {
		t.Fatalf("pop of an empty session = %v, want %s", err, airlock.ENOTFOUND)
	}
	if err := g.PushSession("s1", mustLoad(t, "p.yaml", "default: ask\n")); airlock.ErrorCode(err) != airlock.EINVALID {
		t.Fatalf("push of a project policy = %v, want %s", err, airlock.EINVALID)
	}
	failing, err := LoadPolicy("f.yaml", []byte(`layer: session
tests:
  - {name: writes run, action: {agent: a, tool: write_file}, expect: deny}
`))
	if err != nil {
		t.Fatal(err)
	}
	if err := g.PushSession("s1", failing); err == nil || !strings.Contains(err.Error(), `test "writes run" fails`) {
		t.Fatalf("push of a policy whose test fails = %v", err)
	}
	if got, want := outcomes(), "auto auto"; got != want {
		t.Fatalf("a refused push changed the stack: %s, want %s", got, want)
	}
}

func TestNewGateRejectsSessionLayer(t *testing.T) {
	_, err := New(ShellForTests, mustLoad(t, "s.yaml", "layer: session\n"))
	if airlock.ErrorCode(err) != airlock.EINVALID {
		t.Fatalf("NewGate(session policy) = %v, want %s", err, airlock.EINVALID)
	}
}

func TestInvalidActionIsDenied(t *testing.T) {
	g := mustGate(t, mustLoad(t, "p.yaml", "default: auto\n"))
	d := g.Decide(context.Background(), airlock.Action{Agent: "a", Tool: "write_file", Args: []byte(`{"path":"a","path":"/etc/passwd"}`)})
	if d.Outcome != airlock.Deny || d.Code != airlock.CodeInvalid {
		t.Fatalf("decision = %s, want deny with %s", d, airlock.CodeInvalid)
	}
	if !strings.Contains(d.Classification.Reason, "duplicate") {
		t.Fatalf("reason %q does not say what was wrong", d.Classification.Reason)
	}
	if !d.ActionHash.IsZero() {
		t.Fatal("an invalid action got a hash")
	}
}

// The gate is used from many goroutines while sessions push and pop.
func TestGateConcurrentUse(t *testing.T) {
	g := mustGate(t, mustLoad(t, "p.yaml", "default: auto\n"))
	narrow := mustLoad(t, "n.yaml", "layer: session\ndefault: deny\n")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			session := fmt.Sprintf("s%d", i%2)
			for range 200 {
				d := g.Decide(context.Background(), airlock.Action{Agent: "a", Tool: "Read", SessionID: session})
				if d.Outcome != airlock.Auto && d.Outcome != airlock.Deny {
					t.Errorf("unexpected outcome %s", d.Outcome)
					return
				}
			}
		})
	}
	for range 100 {
		if err := g.PushSession("s0", narrow); err != nil {
			t.Fatal(err)
		}
		if err := g.PopSession("s0"); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
}

// --- properties over random policies ----------------------------------------

var (
	propAgents  = []string{"a1", "a2", "a*", "b"}
	propTools   = []string{"write_file", "Read", "delete_file", "WebFetch", "mcp__x__y", "custom", "cust*", "Bash", "exec"}
	propClasses = []string{"fs.write", "fs.read", "fs.delete", "net.http", "mcp.call", "unknown", "fs.*", "git.read"}
	propTiers   = []string{"read", "write", "network-egress", "spend", "destructive", "privileged"}
	propOutcome = []string{"auto", "notify", "ask", "suggest", "shadow", "deny", "L1", "L2", "L3"}
	propWhen    = []string{`has(args.path) && args.path.startsWith("/etc")`, `args.path == "x"`, `tier == "destructive"`}
	propCmds    = []string{"git status *", "ls *", "rm *", "curl *"}
)

// randomPolicy writes a random but valid policy of the given layer.
func randomPolicy(r *rand.Rand, layer string, rules int) string {
	pick := func(list []string) string { return list[r.IntN(len(list))] }
	var b strings.Builder
	fmt.Fprintf(&b, "layer: %s\n", layer)
	if r.IntN(3) == 0 {
		fmt.Fprintf(&b, "default: %s\n", pick(propOutcome))
	}
	if r.IntN(4) == 0 {
		fmt.Fprintf(&b, "preset: %s\n", pick([]string{"conservative", "standard", "autonomous"}))
	}
	if r.IntN(4) == 0 {
		fmt.Fprintf(&b, "floors:\n  tiers: {%s: %s}\n  classes: {%q: %s}\n", pick(propTiers), pick(propOutcome), pick(propClasses), pick(propOutcome))
	}
	if r.IntN(5) == 0 {
		fmt.Fprintf(&b, "agents:\n  %q: {preset: %s, needs_human: %v}\n", pick(propAgents),
			pick([]string{"conservative", "standard", "autonomous"}), r.IntN(4) == 0)
	}
	b.WriteString("rules:\n")
	for range rules {
		b.WriteString("  - {")
		var fields []string
		if r.IntN(2) == 0 {
			fields = append(fields, fmt.Sprintf("agent: %q", pick(propAgents)))
		}
		if r.IntN(2) == 0 {
			fields = append(fields, fmt.Sprintf("tool: %q", pick(propTools)))
		}
		if r.IntN(3) == 0 {
			fields = append(fields, fmt.Sprintf("class: %q", pick(propClasses)))
		}
		if r.IntN(5) == 0 {
			fields = append(fields, fmt.Sprintf("command: %q", pick(propCmds)))
		}
		if r.IntN(4) == 0 {
			fields = append(fields, "min_tier: "+pick(propTiers))
		}
		if r.IntN(4) == 0 {
			fields = append(fields, fmt.Sprintf("when: %q", pick(propWhen)))
		}
		human := r.IntN(8) == 0
		if human {
			fields = append(fields, "needs_human: true")
		}
		if !human || r.IntN(2) == 0 {
			fields = append(fields, "outcome: "+pick(propOutcome))
		}
		b.WriteString(strings.Join(fields, ", "))
		b.WriteString("}\n")
	}
	return b.String()
}

func randomActions(r *rand.Rand, n int) []airlock.Action {
	scripts := []string{"git status", "git status && rm -rf /", "ls | grep x", "curl -s x | sh", "echo hi > out", "eval \"$X\"", "echo 'oops"}
	var out []airlock.Action
	for range n {
		a := airlock.Action{Agent: []string{"a1", "a2", "b", "ax"}[r.IntN(4)], Tool: propTools[r.IntN(len(propTools))]}
		a.Tool = strings.ReplaceAll(a.Tool, "*", "tom")
		switch a.Tool {
		case "Bash":
			a.Args = airlock.MustArgs(map[string]any{"command": scripts[r.IntN(len(scripts))]})
		case "exec":
			a.Args = airlock.MustArgs(map[string]any{"argv": []string{"rm", "-rf", "x"}})
		default:
			a.Args = airlock.MustArgs(map[string]any{"path": []string{"/etc/x", "x", "y"}[r.IntN(3)]})
		}
		if r.IntN(6) == 0 {
			a.Hints = &airlock.Hints{Tier: airlock.RiskTier(1 + r.IntN(6)), NeedsHuman: r.IntN(4) == 0}
		}
		out = append(out, a)
	}
	return out
}

func loadRandom(t *testing.T, name, src string) *Policy {
	t.Helper()
	p, err := LoadPolicy(name, []byte(src))
	if err != nil {
		t.Fatalf("random policy does not load: %v\n%s", err, src)
	}
	return p
}

// Adding a lower layer never loosens a decision some layer made, adding a
// floor never loosens any decision, and neither drops a needs-human tag.
// (Where no layer has an opinion, the risk-tier default stands in; a new
// layer with an opinion may then decide either way: that is not loosening
// anything a policy said.)
func TestPropertyLayersOnlyTighten(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	ctx := context.Background()
	layerNames := []string{"organisation", "project", "agent"}
	for i := range 300 {
		base := []*Policy{loadRandom(t, "org.yaml", randomPolicy(r, "organisation", 1+r.IntN(8)))}
		if r.IntN(2) == 0 {
			base = append(base, loadRandom(t, "project.yaml", randomPolicy(r, "project", 1+r.IntN(8))))
		}
		last := base[len(base)-1].layer
		extraLayer := layerNames[int(last)-1+r.IntN(len(layerNames)-int(last)+1)]
		extra := loadRandom(t, "extra.yaml", randomPolicy(r, extraLayer, r.IntN(8)))
		floor := loadRandom(t, "floor.yaml", fmt.Sprintf("layer: agent\nfloors:\n  tiers: {%s: %s}\n",
			propTiers[r.IntN(len(propTiers))], propOutcome[r.IntN(len(propOutcome))]))
		before := stack(base)
		for j, after := range []stack{append(stack{}, append(base, floor)...), append(stack{}, append(base, extra)...)} {
			for _, a := range randomActions(r, 20) {
				d1, d2 := before.decide(ctx, ShellForTests, &a), after.decide(ctx, ShellForTests, &a)
				if j == 1 && fromTierDefault(d1) {
					continue
				}
				if d2.Outcome < d1.Outcome || d1.NeedsHuman && !d2.NeedsHuman {
					t.Fatalf("case %d: a layer loosened %s %s:\nbefore: %s\nafter:  %s\n--- before\n%s\n--- added\n%s",
						i, a.Agent, a.Tool, d1.Explain(), d2.Explain(), policiesText(base), policiesText(after[len(base):]))
				}
			}
		}
	}
}

// A needs-human decision never runs, whatever the tiers say.
func TestPropertyNeedsHumanNeverRuns(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	ctx := context.Background()
	for range 300 {
		src := randomPolicy(r, "project", 1+r.IntN(10))
		if r.IntN(3) == 0 {
			src += "needs_human: true\n"
		}
		s := stack{loadRandom(t, "p.yaml", src)}
		for _, a := range randomActions(r, 20) {
			d := s.decide(ctx, ShellForTests, &a)
			if d.NeedsHuman && (d.Outcome.Runs() || d.Outcome == airlock.Ask || d.Runs()) {
				t.Fatalf("needs-human decision %s\n%s", d, src)
			}
			if d.NeedsHuman && d.Outcome == airlock.Suggest && d.Code != airlock.CodeNeedsHuman {
				t.Fatalf("needs-human refusal with code %q", d.Code)
			}
		}
	}
}

// The rule index finds exactly what a scan of every rule in resolution
// order finds.
func TestIndexMatchesLinearScan(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 17))
	ctx := context.Background()
	for range 200 {
		p := loadRandom(t, "p.yaml", randomPolicy(r, "project", 1+r.IntN(40)))
		for _, a := range randomActions(r, 30) {
			if err := a.Validate(); err != nil {
				t.Fatal(err)
			}
			x := activation{a: &a}
			c := stack{p}.classify(ctx, ShellForTests, &x)
			x.v = &view{class: c.Class, capability: c.Capability, tier: c.Tier, index: -1}
			got, _ := p.resolve(ctx, &x, &notes{})
			want := linearResolve(ctx, p, &x)
			if got != want {
				t.Fatalf("index found %v, a linear scan %v, for %s %s", ruleID(got), ruleID(want), a.Agent, a.Tool)
			}
		}
	}
}

// fromTierDefault reports whether any part of a decision fell back to the
// risk-tier default because no layer had an opinion.
func fromTierDefault(d airlock.Decision) bool {
	if d.Source == "tier default" {
		return true
	}
	for _, c := range d.Commands {
		if c.Source == "tier default" {
			return true
		}
	}
	return false
}

func linearResolve(ctx context.Context, p *Policy, x *activation) *rule {
	var errs []string
	for step := range numSteps {
		for _, r := range p.rules {
			if r.step() == step && r.matches(ctx, x, &errs) && !r.aboveCeiling(x) {
				return r
			}
		}
	}
	return nil
}

func ruleID(r *rule) string {
	if r == nil {
		return "no rule"
	}
	return r.id
}

func policiesText(ps []*Policy) string {
	var names []string
	for _, p := range ps {
		names = append(names, fmt.Sprintf("%s: %d rules, default %v, preset %v", p, len(p.rules), p.defaultOutcome, p.preset))
	}
	return strings.Join(names, "\n")
}

func TestReplace(t *testing.T) {
	g := mustGate(t, mustLoad(t, "v1.yaml", "default: auto\n"))
	if err := g.PushSession("s1", mustLoad(t, "narrow.yaml", "layer: session\nrules:\n  - {id: no-reads, class: fs.read, outcome: shadow}\n")); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	write := airlock.Action{Agent: "a", Tool: "write_file"}
	read := airlock.Action{Agent: "a", Tool: "Read", SessionID: "s1"}

	if err := g.Replace(mustLoad(t, "v2.yaml", "default: deny\n")); err != nil {
		t.Fatal(err)
	}
	if got := g.Decide(ctx, write).Outcome; got != airlock.Deny {
		t.Fatalf("after Replace: %s, want the new stack's deny", got)
	}
	if got := g.Decide(ctx, read).Outcome; got != airlock.Deny {
		t.Fatalf("session on the new stack: %s, want deny (new base, stricter than the session's shadow)", got)
	}
	if len(g.Layers()) != 1 || g.Layers()[0].Name() != "v2" {
		t.Fatalf("layers %v", g.Layers())
	}

	// A stack whose tests fail changes nothing.
	failing := mustParse(t, "bad.yaml", "default: auto\ntests:\n  - {name: t, action: {agent: a, tool: write_file}, expect: deny}\n")
	if err := g.Replace(failing); err == nil {
		t.Fatal("Replace accepted a stack whose tests fail")
	}
	if got := g.Decide(ctx, write).Outcome; got != airlock.Deny {
		t.Fatalf("after a refused Replace: %s, want the previous stack's deny", got)
	}
}

func mustParse(tb testing.TB, name, src string) *Policy {
	tb.Helper()
	p, err := LoadPolicy(name, []byte(src))
	if err != nil {
		tb.Fatalf("parse %s: %v", name, err)
	}
	return p
}

func TestDecisionOfHarmlessCommandMarshals(t *testing.T) {
	g := mustGate(t, mustLoad(t, "p.yaml", "default: ask\n"))
	d := g.Decide(context.Background(), airlock.Action{Agent: "a", Tool: "Bash", Args: airlock.MustArgs(map[string]any{"command": "echo hi > f.txt && cd /tmp"})})
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatalf("a decision on a script with echo and cd does not marshal: %v", err)
	}
	var back airlock.Decision
	if err := json.Unmarshal(b, &back); err != nil || back.Outcome != d.Outcome || len(back.Commands) != len(d.Commands) {
		t.Fatalf("round trip: %v; %+v", err, back)
	}
}

func TestClipText(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"abcdef", 3, "abc… (3 bytes more)"},
		{"ééé", 3, "é… (4 bytes more)"}, // never cuts a rune
	} {
		if got := airlock.ClipText(c.in, c.n); got != c.want {
			t.Errorf("airlock.ClipText(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

// A rule that stopped at its ceiling is named in the explanation, with the
// line that would let it reach further.
func TestCeilingExplained(t *testing.T) {
	g := mustGate(t, mustLoad(t, "p.yaml", "rules:\n  - {id: look, tool: Bash, command: \"cat *\", outcome: auto}\n"))
	d := g.Decide(context.Background(), airlock.Action{Agent: "a", Tool: "Bash", Args: airlock.MustArgs(map[string]any{"command": "cat ~/.aws/credentials"})})
	if d.Outcome != airlock.Ask || len(d.Ceilings) != 1 {
		t.Fatalf("decision %s with ceilings %v, want ask and one ceiling", d, d.Ceilings)
	}
	want := "ceiling:     rule look (project p.yaml:2:5) matched command 1 (cat ~/.aws/credentials) but reaches only network-egress, " +
		"and command 1 (cat ~/.aws/credentials) is privileged (credentials.read); to let it decide such actions, add `max_tier: privileged` to it"
	if !strings.Contains(d.Explain(), want) {
		t.Fatalf("explanation lacks\n%s\n%s", want, d.Explain())
	}
}

func TestMaxTierErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"rules:\n  - {id: r, tool: x, outcome: ask, max_tier: privileged}\n", "p.yaml:2:46: rules[0].max_tier: only a rule that loosens (auto, notify) has a ceiling, and its outcome is ask"},
		{"rules:\n  - {id: r, tool: x, needs_human: true, max_tier: spend}\n", "only a rule that loosens (auto, notify) has a ceiling, and it only tags needs_human"},
		{"rules:\n  - {id: r, tool: x, outcome: auto, min_tier: destructive, max_tier: spend}\n", "rules[0].max_tier: spend is below min_tier destructive: the rule could never apply"},
	} {
		_, err := LoadPolicy("p.yaml", []byte(tc.src))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("LoadPolicy(%q) = %v, want %q", tc.src, err, tc.want)
		}
	}
}

// A default that stopped at its ceiling is named in the explanation, with
// the line that would let it reach further: for a levels-style policy, the
// L2 it gives where no rule matches.
func TestDefaultCeilingExplained(t *testing.T) {
	g := mustGate(t, mustLoad(t, "p.yaml", "rules:\n  - {id: email, tool: send_email, outcome: L1}\n"))
	d := g.Decide(context.Background(), airlock.Action{Agent: "a", Tool: "Bash", Args: airlock.MustArgs(map[string]any{"command": "git push --force"})})
	if d.Outcome != airlock.Ask || d.Source != "tier default" || len(d.Ceilings) != 1 {
		t.Fatalf("decision %s with ceilings %v, want ask by the tier default and one ceiling", d, d.Ceilings)
	}
	want := "ceiling:     the levels default (notify) of project policy p (p.yaml) applies where no rule matches, but reaches only network-egress, " +
		"and command 1 (git push --force) is destructive (git.write); to let it decide such actions, write `default: {outcome: L2, max_tier: destructive}`"
	if !strings.Contains(d.Explain(), want) {
		t.Fatalf("explanation lacks\n%s\n%s", want, d.Explain())
	}

	g = mustGate(t, mustLoad(t, "q.yaml", "name: webapp\ndefault: {outcome: auto, max_tier: spend}\n"))
	d = g.Decide(context.Background(), airlock.Action{Agent: "a", Tool: "delete_file", Args: airlock.MustArgs(map[string]any{"path": "x"})})
	want = "ceiling:     the policy default (auto) of project policy webapp (q.yaml:2:10) applies where no rule matches, but reaches only spend, " +
		"and the action is destructive (fs.delete); to let it decide such actions, write `default: {outcome: auto, max_tier: destructive}`"
	if d.Outcome != airlock.Ask || !strings.Contains(d.Explain(), want) {
		t.Fatalf("explanation lacks\n%s\n%s", want, d.Explain())
	}
	b, err := json.Marshal(d.Ceilings)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `[{"default":{"source":"policy default","outcome":"auto","policy":"webapp","layer":"project","file":"q.yaml","line":2,"col":10},`+
		`"ceiling":"spend","tier":"destructive","class":"fs.delete"}]`; got != want {
		t.Fatalf("ceilings as JSON:\n%s\nwant\n%s", got, want)
	}
}

func TestDefaultErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"default: {outcome: ask, max_tier: privileged}\n", "p.yaml:1:35: default.max_tier: only a default that loosens (auto, notify) has a ceiling, and this one is ask"},
		{"default:\n  max_tier: spend\n", "p.yaml:2:3: default: a default needs an outcome; write it like `default: {outcome: notify, max_tier: spend}`"},
		{"default: {outcome: notify, max_tier: huge}\n", "p.yaml:1:38: default.max_tier: unknown risk tier \"huge\""},
		{"default: {outcome: notify, ceiling: spend}\n", "p.yaml:1:28: unknown field \"ceiling\" in default (valid: max_tier, outcome)"},
		{"default: {outcome: nofity}\n", "p.yaml:1:20: default.outcome: unknown outcome \"nofity\""},
		{"default: [auto]\n", "p.yaml:1:10: default: expected a mapping (key: value), got a list"},
		{"default: *nope\n", "p.yaml:1:10: unknown alias *nope"},
		{"d: &d {outcome: auto, max_tier: spend}\ndefault: *d\n", "unknown field \"d\" in policy"},
	} {
		_, err := LoadPolicy("p.yaml", []byte(tc.src))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("LoadPolicy(%q) = %v, want %q", tc.src, err, tc.want)
		}
	}
	// The scalar form still holds, in every spelling of an outcome.
	for _, src := range []string{"default: auto\n", "default: L2\n", "default: HITL Ask\n", "default: {outcome: L2}\n", "default:\n  outcome: notify\n  max_tier: privileged\n"} {
		if _, err := LoadPolicy("p.yaml", []byte(src)); err != nil {
			t.Errorf("LoadPolicy(%q) = %v", src, err)
		}
	}
}
