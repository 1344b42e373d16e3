package gate

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/catalog"
)

// Gate decides what happens to every action an agent attempts. It holds a
// stack of policies (organisation → project → agent) and, per session, the
// narrower policies a session pushed. Decide is pure: it reads no storage,
// makes no network call, and is safe for concurrent use.
type Gate struct {
	shell  catalog.ShellAnalyser
	mu     sync.Mutex // serialises changes to the stack
	state  atomic.Pointer[gateState]
	grants atomic.Pointer[grantSet] // nil: none
}

// gateState is an immutable snapshot of the stack, swapped atomically so
// that Decide never takes a lock.
type gateState struct {
	layers   stack
	sessions map[string]stack // the whole stack per session that pushed policies
}

// stack is a list of policies from the top layer down.
type stack []*Policy

// NewGate returns a gate deciding by the given policies, from the top layer
// (organisation) down, that sees inside shell commands with sh (package
// shell; nil denies every shell command). It refuses a stack out of layer
// order, and runs every policy's tests against the stack down to that
// policy: a lower layer can only tighten, so an upper layer's test that
// expects a refusal must still hold.
func New(sh catalog.ShellAnalyser, layers ...*Policy) (*Gate, error) {
	if err := ValidateStack(layers...); err != nil {
		return nil, err
	}
	if err := testFailures("", RunPolicyTests(sh, layers...)); err != nil {
		return nil, err
	}
	g := &Gate{shell: sh}
	g.state.Store(&gateState{layers: slices.Clone(layers), sessions: map[string]stack{}})
	return g, nil
}

// ValidateStack reports whether policies can stack in this order: from the
// organisation down, with no session policy (those are pushed per session).
// It does not run their tests.
func ValidateStack(layers ...*Policy) error {
	for i, p := range layers {
		if p.layer == airlock.LayerSession {
			return airlock.Errorf(airlock.EINVALID, "%s is a session policy: push it with PushSession", p)
		}
		if i > 0 && p.layer < layers[i-1].layer {
			return airlock.Errorf(airlock.EINVALID, "%s cannot come after %s: layers stack organisation → project → agent → session",
				p, layers[i-1])
		}
	}
	return nil
}

// Layers returns the policies of the stack, top layer first.
func (g *Gate) Layers() []*Policy { return slices.Clone(g.state.Load().layers) }

// Replace swaps the whole stack for new layers, atomically: a decision in
// flight sees either the old stack or the new one, never a mix. The new
// stack is checked as NewGate checks it; when it fails, nothing changes.
// Session policies stay pushed, on top of the new stack.
func (g *Gate) Replace(layers ...*Policy) error {
	if err := ValidateStack(layers...); err != nil {
		return err
	}
	if err := testFailures("", RunPolicyTests(g.shell, layers...)); err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	old := g.state.Load()
	next := &gateState{layers: slices.Clone(layers), sessions: make(map[string]stack, len(old.sessions))}
	for id, s := range old.sessions {
		next.sessions[id] = append(slices.Clone(next.layers), s[len(old.layers):]...)
	}
	g.state.Store(next)
	return nil
}

// PushSession adds a session-layer policy for one session: it applies, on
// top of the stack, to actions with that session ID until popped. It can
// only tighten. Its tests run against the whole stack first.
func (g *Gate) PushSession(sessionID string, p *Policy) error {
	if sessionID == "" {
		return airlock.Errorf(airlock.EINVALID, "push session policy: no session ID")
	}
	if p.layer != airlock.LayerSession {
		return airlock.Errorf(airlock.EINVALID, "%s is not a session policy: declare `layer: session` in it", p)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	old := g.state.Load()
	base := old.sessions[sessionID]
	if base == nil {
		base = old.layers
	}
	s := append(slices.Clone(base), p)
	if err := testFailures("", runTests(g.shell, s, len(s)-1)); err != nil {
		return err
	}
	next := &gateState{layers: old.layers, sessions: make(map[string]stack, len(old.sessions)+1)}
	for k, v := range old.sessions {
		next.sessions[k] = v
	}
	next.sessions[sessionID] = s
	g.state.Store(next)
	return nil
}

// PopSession removes the policy a session pushed last. It returns ENOTFOUND
// when the session has none.
func (g *Gate) PopSession(sessionID string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	old := g.state.Load()
	s, ok := old.sessions[sessionID]
	if !ok {
		return airlock.Errorf(airlock.ENOTFOUND, "session %q has no pushed policy", sessionID)
	}
	next := &gateState{layers: old.layers, sessions: make(map[string]stack, len(old.sessions))}
	for k, v := range old.sessions {
		next.sessions[k] = v
	}
	if s = s[:len(s)-1]; len(s) == len(old.layers) {
		delete(next.sessions, sessionID)
	} else {
		next.sessions[sessionID] = s
	}
	g.state.Store(next)
	return nil
}

func (st *gateState) stackFor(sessionID string) stack {
	if sessionID != "" {
		if s, ok := st.sessions[sessionID]; ok {
			return s
		}
	}
	return st.layers
}

// Decide classifies the action, resolves its outcome through the policy
// stack and returns the decision with the action hash. It never fails: a
// malformed action is denied with CodeInvalid.
func (g *Gate) Decide(ctx context.Context, a airlock.Action) airlock.Decision {
	h, err := a.Hash() // validates the action as it hashes it
	if err != nil {
		return invalid(&a, err)
	}
	d := g.state.Load().stackFor(a.SessionID).decideValid(ctx, g.shell, &a, g.grants.Load())
	d.ActionHash = h
	return d
}

// Resolve is Decide without the action hash, for callers that only need
// the outcome (dry runs, bulk policy tests, benchmarks of the engine).
func (g *Gate) Resolve(ctx context.Context, a airlock.Action) airlock.Decision {
	if err := a.Validate(); err != nil {
		return invalid(&a, err)
	}
	return g.state.Load().stackFor(a.SessionID).decideValid(ctx, g.shell, &a, g.grants.Load())
}

// view is one thing to decide about an action: the action itself, or one
// command of its shell script. A script's outcome is the strictest of its
// commands' outcomes.
type view struct {
	class      airlock.Class
	capability airlock.Capability
	tier       airlock.RiskTier
	// classed is the tier the classification gave, before the action's
	// hints raised tier: what a class a policy classifier defines carries.
	classed airlock.RiskTier
	cmd     *airlock.Command // nil unless the view is a shell command
	index   int              // the command's index, -1 for the action itself
}

// verdict is the outcome of one view and how it came about.
type verdict struct {
	outcome   airlock.Outcome
	resolved  airlock.Outcome // the outcome the layers resolved, before floors, presets and safeguards
	floor     airlock.Outcome // the highest floor that applies (0: none)
	rule      *rule
	grant     *airlock.GrantRef     // the standing grant that loosened it
	charge    *airlock.BudgetCharge // what it takes from its rule's or grant's budget, if it runs
	source    string
	overrides []airlock.Override
}

// agentInfo is what the stack says about the acting agent.
type agentInfo struct {
	preset       airlock.Preset
	presetPolicy *Policy      // where the preset comes from
	presetEntry  *agentPolicy // nil for a policy-wide preset
	owner        string
	reviewers    []string
	notify       []string
	timeout      time.Duration
	needsHumanBy string
}

// decide validates the action and decides it.
func (s stack) decide(ctx context.Context, sh catalog.ShellAnalyser, a *airlock.Action) airlock.Decision {
	if err := a.Validate(); err != nil {
		return invalid(a, err)
	}
	return s.decideValid(ctx, sh, a, nil)
}

// invalid is the decision on a malformed action: denied, with the reason.
func invalid(a *airlock.Action, err error) airlock.Decision {
	return airlock.Decision{
		Action: *a, Outcome: airlock.Deny, Code: airlock.CodeInvalid, Source: "invalid action",
		Classification: airlock.Classification{Class: airlock.ClassUnknown, Capability: airlock.CapUnknown, Tier: airlock.TierPrivileged,
			Source: "invalid action", Reason: airlock.ErrorMessage(err)},
	}
}

// decideValid decides an action already validated: classify it, decide
// each of its views, keep the strictest, then apply what no tier can
// override (an unanalysable script, needs-human).
func (s stack) decideValid(ctx context.Context, sh catalog.ShellAnalyser, a *airlock.Action, grants *grantSet) airlock.Decision {
	return s.decideSpent(ctx, sh, a, grants, nil)
}

// decideSpent is decideValid with the budgets of spent known spent.
func (s stack) decideSpent(ctx context.Context, sh catalog.ShellAnalyser, a *airlock.Action, grants *grantSet, spent map[string]airlock.BudgetCharge) airlock.Decision {
	d := airlock.Decision{Action: *a}
	x := activation{a: a, grants: grants, spent: spent}
	d.Classification = s.classify(ctx, sh, &x)
	vs := viewsOf(&d.Classification, a.Hints)
	ag := s.agent(a.Agent)
	d.Preset = ag.preset

	// Needs-human and an unanalysable script are what no grant loosens:
	// known before the views are decided, they keep grants out.
	var humanRule *rule
	d.NeedsHumanBy, humanRule = s.needsHuman(ctx, &x, vs, ag)
	d.NeedsHuman = d.NeedsHumanBy != ""
	if d.NeedsHuman || d.Classification.Opaque != "" {
		x.grants = nil
	}
	var n notes
	win, best, charges := s.decideViews(ctx, &x, vs, &ag, &d, &n)
	d.Outcome, d.Source, d.Overrides, d.Grant = win.outcome, win.source, win.overrides, win.grant
	if win.rule != nil {
		d.Rule = win.rule.ref
	}
	if vs[best].cmd != nil {
		d.Command = vs[best].index + 1
	}
	if op := d.Classification.Opaque; op != "" {
		what, source := "the shell command could not be analysed", "unanalysable shell"
		if d.Classification.Source == "patch" {
			what, source = "the patch could not be read", "unanalysable patch"
		}
		d.Overrides = append(d.Overrides, airlock.Override{From: d.Outcome, To: airlock.Deny, Kind: "unanalysable",
			Reason: fmt.Sprintf("%s (%s), so the strictest outcome applies", what, op)})
		d.Outcome, d.Source = airlock.Deny, source
	}

	d.Code = d.Outcome.Code()
	if d.NeedsHuman && d.Outcome < airlock.Shadow {
		if d.Outcome < airlock.Suggest {
			d.Overrides = append(d.Overrides, airlock.Override{From: d.Outcome, To: airlock.Suggest, Kind: "needs-human",
				Reason: fmt.Sprintf("tagged needs-human by %s: it never runs without a person, so it is refused and a request is queued", d.NeedsHumanBy)})
			d.Outcome = airlock.Suggest
		}
		d.Code = airlock.CodeNeedsHuman
	}
	d.Overridden = d.Outcome != win.resolved

	d.Owner = ag.owner
	d.Reviewers = reviewers(win.rule, humanRule, ag.reviewers)
	d.Notify = notifyChannels(win.rule, humanRule, ag.notify)
	d.Timeout = timeoutFor(d.Outcome, win.rule, humanRule, ag, s)
	d.Review = reviewFor(&d, win.rule, humanRule, s)
	if len(n.errs) > 0 {
		slices.Sort(n.errs)
		d.ConditionErrors = slices.Compact(n.errs)
	}
	d.Ceilings = n.ceilings
	d.Spent = n.spent
	if d.Runs() {
		d.Budgets = charges
	}
	return d
}

// viewsOf returns what to decide about: each command of a shell script
// that has an effect; in a script of shell built-ins only (echo, cd), each
// of them, so that a rule naming one (command: "echo *") can decide; else
// the action itself. Hints raise every view's tier.
func viewsOf(c *airlock.Classification, h *airlock.Hints) []view {
	var vs []view
	for _, inert := range []bool{false, true} {
		for i := range c.Commands {
			if cmd := &c.Commands[i]; cmd.Inert == inert {
				vs = append(vs, view{class: cmd.Class, capability: cmd.Capability, tier: cmd.Tier, cmd: cmd, index: i})
			}
		}
		if len(vs) > 0 {
			break
		}
	}
	if len(vs) == 0 {
		vs = []view{{class: c.Class, capability: c.Capability, tier: c.Tier, index: -1}}
	}
	for i := range vs {
		vs[i].classed = vs[i].tier
	}
	if h != nil && h.Tier > 0 {
		for i := range vs {
			vs[i].tier = max(vs[i].tier, h.Tier)
		}
		if h.Tier > c.Tier {
			c.Tier = h.Tier
			c.Reason = joinReason(c.Reason, "tier raised by the agent's hint")
		}
	}
	return vs
}

// decideViews resolves every view, records each shell command's verdict in
// d.Commands, and returns the strictest verdict, its view's index (the
// first on ties), and the budget charges of the views' verdicts: what
// running the action takes, if it runs.
func (s stack) decideViews(ctx context.Context, x *activation, vs []view, ag *agentInfo, d *airlock.Decision, n *notes) (verdict, int, []airlock.BudgetCharge) {
	if cmds := d.Classification.Commands; len(cmds) > 0 {
		d.Commands = make([]airlock.CommandDecision, len(cmds))
		for i, cmd := range cmds {
			d.Commands[i] = airlock.CommandDecision{Command: cmd, Source: "inert"}
		}
	}
	var win verdict
	var charges []airlock.BudgetCharge
	best := -1
	for i := range vs {
		x.v = &vs[i]
		v := s.resolveView(ctx, x, ag, n)
		if v.outcome == airlock.Ask {
			if gr, c := x.grants.cover(x, &vs[i], n); gr != nil {
				if ok, why := s.allowGrant(x.a, &vs[i]); ok {
					v = granted(v, gr, c)
				} else {
					v.overrides = append(v.overrides, airlock.Override{From: v.outcome, To: v.outcome, Kind: "grant",
						Reason: "grant " + gr.ID + " covers it, but " + why})
				}
			}
		}
		if vs[i].cmd != nil {
			cd := &d.Commands[vs[i].index]
			cd.Outcome, cd.Source = v.outcome, v.source
			if v.rule != nil {
				cd.Rule = v.rule.ref
			}
		}
		if v.charge != nil && v.outcome.Runs() {
			charges = append(charges, *v.charge)
		}
		if best < 0 || v.outcome > win.outcome {
			best, win = i, v
		}
	}
	return win, best, charges
}

// resolveView resolves one view. Every layer gives its opinion (its first
// matching rule, else its default, else none), adjusted by the agent's
// preset and the unknown-tool safeguard; the strictest opinion wins, so a
// lower layer can only tighten. Floors then raise the result. Every step
// only raises, which is what makes adding a layer or a floor never loosen a
// decision.
func (s stack) resolveView(ctx context.Context, x *activation, ag *agentInfo, n *notes) verdict {
	v := x.v
	var opinions [4]verdict
	ops := opinions[:0]
	var layers [4]*Policy
	from := layers[:0]
	for _, p := range s {
		r, ok := p.resolve(ctx, x, n)
		if !ok {
			continue
		}
		op := verdict{outcome: p.defaultOutcome, rule: r, source: p.defaultSource}
		if r != nil {
			op.outcome, op.source = r.outcome, "rule"
			if r.budget != nil {
				c, _ := ruleCharge(x, r) // resolve made sure it measures
				op.charge = &c
			}
		}
		ops, from = append(ops, op), append(from, p)
	}
	if len(ops) == 0 {
		ops, from = append(ops, verdict{outcome: tierDefault(v.tier), source: "tier default"}), append(from, nil)
	}
	win := 0
	for i := range ops {
		ops[i].resolved = ops[i].outcome
		adjust(&ops[i], x, ag)
		if ops[i].outcome > ops[win].outcome {
			win = i
		}
	}
	best := ops[win]
	for i, op := range ops {
		switch {
		case i == win || op.outcome == best.outcome:
		case i < win:
			best.overrides = append(best.overrides, airlock.Override{From: op.outcome, To: best.outcome, Kind: "layer",
				Reason: fmt.Sprintf("%s gave %s; %s (%s layer) is stricter", opinionName(op.rule, op.source, from[i]), op.outcome,
					opinionName(best.rule, best.source, from[win]), from[win].layer)})
		default:
			best.overrides = append(best.overrides, airlock.Override{From: op.outcome, To: best.outcome, Kind: "layer",
				Reason: fmt.Sprintf("%s gave %s, but a lower layer can only tighten: %s holds", opinionName(op.rule, op.source, from[i]),
					op.outcome, opinionName(best.rule, best.source, from[win]))})
		}
	}
	raise := func(to airlock.Outcome, reason string) {
		best.floor = max(best.floor, to)
		if to > best.outcome {
			best.overrides = append(best.overrides, airlock.Override{From: best.outcome, To: to, Kind: "floor", Reason: reason})
			best.outcome = to
		}
	}
	for _, p := range s {
		for t := airlock.TierRead; t <= v.tier; t++ {
			if f := p.tierFloors[t]; f.outcome != 0 {
				raise(f.outcome, fmt.Sprintf("%s sets a floor: %s actions and above are at least %s (%s:%d)",
					p, t, f.outcome, p.file, f.pos.Line))
			}
		}
		for _, f := range p.classFloors {
			if f.class.match(string(v.class)) {
				raise(f.outcome, fmt.Sprintf("%s sets a floor: class %s is at least %s (%s:%d)",
					p, f.class.text, f.outcome, p.file, f.pos.Line))
			}
		}
	}
	return best
}

// adjust applies to one layer's opinion the agent's preset and the
// unknown-tool safeguard: both only raise.
func adjust(op *verdict, x *activation, ag *agentInfo) {
	if op.outcome >= airlock.Ask {
		return // both raise to ask at most
	}
	v := x.v
	raise := func(kind, reason string) {
		if op.outcome < airlock.Ask {
			op.overrides = append(op.overrides, airlock.Override{From: op.outcome, To: airlock.Ask, Kind: kind, Reason: reason})
			op.outcome = airlock.Ask
		}
	}
	if v.tier >= airlock.TierWrite {
		switch ag.preset {
		case airlock.PresetConservative:
			raise("preset", fmt.Sprintf("preset conservative (%s): every %s action asks, even though %s said %s",
				ag.presetFrom(), v.tier, opinionName(op.rule, op.source, nil), op.outcome))
		case airlock.PresetStandard:
			if op.rule == nil || !op.rule.explicit() {
				raise("preset", fmt.Sprintf("preset standard (%s): %s actions ask unless a rule names the tool, class or command, and %s does not",
					ag.presetFrom(), v.tier, opinionName(op.rule, op.source, nil)))
			}
		}
	}
	if v.class == airlock.ClassUnknown && op.outcome < airlock.Ask && (op.rule == nil || !op.rule.namesExactly(x.a.Tool, v.cmd)) {
		what := "tool " + x.a.Tool
		if v.cmd != nil {
			what = "command " + v.cmd.Text
		}
		raise("unknown-tool", fmt.Sprintf("%s is unknown: it is never auto-allowed unless a rule names it exactly", what))
	}
}

// opinionName names where an opinion came from, for an override's reason.
func opinionName(r *rule, source string, p *Policy) string {
	if r != nil {
		return r.ref.String()
	}
	if p != nil {
		return fmt.Sprintf("the default of %s", p)
	}
	return "the " + source
}

// tierDefault is the last step of resolution: reads run, the rest asks.
func tierDefault(t airlock.RiskTier) airlock.Outcome {
	if t == airlock.TierRead {
		return airlock.Auto
	}
	return airlock.Ask
}

// notes collects, while a decision resolves, what its explanation reports
// besides the verdict.
type notes struct {
	errs     []string               // conditions that failed to evaluate, budgets that could not measure
	ceilings []airlock.Ceiling      // rules that stopped at their ceiling
	spent    []airlock.BudgetCharge // budgets found spent
}

// resolve finds the first rule of this policy that applies to the view, in
// resolution order: a rule that matches a view above its ceiling does not
// apply (n records it), and resolution goes on. It returns (nil, true) when
// only the policy's default applies and (nil, false) when the policy has no
// opinion: it has no default, or its default loosens and the view is above
// the default's ceiling (n records that too).
func (p *Policy) resolve(ctx context.Context, x *activation, n *notes) (*rule, bool) {
	for step := range numSteps {
		idx := &p.index[step]
		var exact []int32
		if step != stepOther && len(idx.exact) > 0 {
			exact = idx.exact[lookupKey(step, x.a.Agent, x.a.Tool, x.v.class)]
		}
		other := idx.other
		for len(exact) > 0 || len(other) > 0 {
			var i int32
			if len(other) == 0 || len(exact) > 0 && exact[0] < other[0] {
				i, exact = exact[0], exact[1:]
			} else {
				i, other = other[0], other[1:]
			}
			r := p.rules[i]
			if !r.matches(ctx, x, &n.errs) {
				continue
			}
			if r.aboveCeiling(x) {
				n.ceiling(airlock.Ceiling{Rule: r.ref, Ceiling: r.ceiling(x)}, x)
				continue
			}
			if r.budget != nil {
				if c, err := ruleCharge(x, r); !budgetApplies(x, c, err, r.ref.String(), n) {
					continue
				}
			}
			return r, true
		}
	}
	if p.defaultOutcome == 0 {
		return nil, false
	}
	// A default that loosens keeps to its ceiling like a rule: above it the
	// layer has no opinion, as if it had no default, and what comes next
	// decides (another layer, else the tier default).
	if p.defaultAboveCeiling(x) {
		n.ceiling(airlock.Ceiling{Default: p.defaultRef, Ceiling: p.defaultCeiling()}, x)
		return nil, false
	}
	return nil, true
}

// ceiling records that a rule or a default (c) stopped at its ceiling for
// the activation's view, once.
func (n *notes) ceiling(c airlock.Ceiling, x *activation) {
	v := x.v
	c.Tier, c.Class, c.Command = v.tier, v.class, v.index+1
	if v.cmd != nil {
		c.Text = v.cmd.Text
	}
	if !slices.Contains(n.ceilings, c) {
		n.ceilings = append(n.ceilings, c)
	}
}

// matches reports whether the rule matches the activation's view. A
// condition that fails to evaluate fails closed: a restrictive rule (ask or
// stricter, or a needs-human tag) applies, a permissive one does not.
func (r *rule) matches(ctx context.Context, x *activation, errs *[]string) bool {
	v := x.v
	if !matchAny(r.agents, x.a.Agent) || !matchAny(r.tools, x.a.Tool) || !matchAny(r.classes, string(v.class)) {
		return false
	}
	if len(r.commands) > 0 {
		if v.cmd == nil || !slices.ContainsFunc(r.commands, func(p pattern) bool { return p.matchCommand(v.cmd.Text) }) {
			return false
		}
	}
	if r.minTier != 0 && v.tier < r.minTier {
		return false
	}
	if r.when == nil {
		return true
	}
	ok, err := r.when.eval(ctx, x)
	if err != nil {
		restrictive := r.outcome == 0 || r.outcome >= airlock.Ask
		verb := "skipped it because it is permissive"
		if restrictive {
			verb = "applied it because it is restrictive"
		}
		*errs = append(*errs, fmt.Sprintf("the condition of %s failed (%v); Airlock %s", r.ref, err, verb))
		return restrictive
	}
	return ok
}

// agent gathers what every layer says about an agent: the strictest preset,
// the most specific owner and timeout, all reviewers.
func (s stack) agent(name string) agentInfo {
	var ag agentInfo
	for _, p := range s {
		preset, entry := p.preset, (*agentPolicy)(nil)
		if e := p.agentEntry(name); e != nil {
			if e.preset != airlock.PresetNone {
				preset, entry = e.preset, e
			}
			if e.owner != "" {
				ag.owner = e.owner
			}
			if e.timeout > 0 {
				ag.timeout = e.timeout
			}
			if len(e.notify) > 0 {
				ag.notify = e.notify
			}
			ag.reviewers = append(ag.reviewers, e.reviewers...)
			if e.needsHuman && ag.needsHumanBy == "" {
				ag.needsHumanBy = fmt.Sprintf("agent %s in %s (%s:%d)", e.pattern.text, p, p.file, e.pos.Line)
			}
		}
		if preset > ag.preset {
			ag.preset, ag.presetPolicy, ag.presetEntry = preset, p, entry
		}
	}
	return ag
}

// presetFrom says where the agent's preset is set, for explanations.
func (ag *agentInfo) presetFrom() string {
	if ag.presetEntry != nil {
		return fmt.Sprintf("agent %s in %s", ag.presetEntry.pattern.text, ag.presetPolicy)
	}
	return ag.presetPolicy.String()
}

// agentEntry returns the policy's entry for an agent: an exact key first,
// else the first glob that matches.
func (p *Policy) agentEntry(name string) *agentPolicy {
	var glob *agentPolicy
	for _, e := range p.agents {
		if e.pattern.exact() {
			if e.pattern.text == name {
				return e
			}
		} else if glob == nil && e.pattern.match(name) {
			glob = e
		}
	}
	return glob
}

// needsHuman reports what, if anything, tags the action needs-human: the
// agent's hint, a policy, the agent's entry, or a rule matching any view.
func (s stack) needsHuman(ctx context.Context, x *activation, vs []view, ag agentInfo) (string, *rule) {
	if x.a.Hints != nil && x.a.Hints.NeedsHuman {
		return "the agent's hint (hints.needs_human)", nil
	}
	for _, p := range s {
		if p.needsHuman {
			return fmt.Sprintf("%s (%s:%d)", p, p.file, p.needsHumanPos.Line), nil
		}
	}
	if ag.needsHumanBy != "" {
		return ag.needsHumanBy, nil
	}
	var errs []string // a failing condition on a tag counts as a match (fail closed)
	for _, p := range s {
		for _, r := range p.humanRules {
			for i := range vs {
				x.v = &vs[i]
				if r.matches(ctx, x, &errs) {
					return r.ref.String(), r
				}
			}
		}
	}
	return "", nil
}

func reviewers(win, human *rule, agent []string) []string {
	var out []string
	for _, r := range []*rule{win, human} {
		if r != nil {
			out = append(out, r.reviewers...)
		}
	}
	out = append(out, agent...)
	slices.Sort(out)
	return slices.Compact(out)
}

// notifyChannels picks the channels of a decision's notices: the deciding
// rule's, else the needs-human rule's, else the agent's (the most specific
// layer's); none, the channels' defaults.
func notifyChannels(win, human *rule, agent []string) []string {
	for _, r := range []*rule{win, human} {
		if r != nil && len(r.notify) > 0 {
			return slices.Clone(r.notify)
		}
	}
	return slices.Clone(agent)
}

// reviewFor picks what an approval request needs beyond one person's
// answer: the deciding rule's review, else the needs-human rule's; and a
// passkey when a policy of the stack requires one at the action's tier.
func reviewFor(d *airlock.Decision, win, human *rule, s stack) airlock.Review {
	if d.Outcome != airlock.Ask && d.Outcome != airlock.Suggest {
		return airlock.Review{}
	}
	var rv airlock.Review
	for _, r := range []*rule{win, human} {
		if r != nil && !r.review.IsZero() {
			rv = r.review
			break
		}
	}
	rv.Escalate = slices.Clone(rv.Escalate)
	for _, p := range s {
		if p.passkey != 0 && d.Classification.Tier >= p.passkey {
			rv.Passkey = true
		}
	}
	return rv
}

// timeoutFor picks an approval request's deadline: the deciding rule's, the
// needs-human rule's, the agent's, the lowest policy's, or the default.
func timeoutFor(o airlock.Outcome, win, human *rule, ag agentInfo, s stack) time.Duration {
	if o != airlock.Ask && o != airlock.Suggest {
		return 0
	}
	for _, r := range []*rule{win, human} {
		if r != nil && r.timeout > 0 {
			return r.timeout
		}
	}
	if ag.timeout > 0 {
		return ag.timeout
	}
	for i := len(s) - 1; i >= 0; i-- {
		if s[i].timeout > 0 {
			return s[i].timeout
		}
	}
	if o == airlock.Ask {
		return DefaultAskTimeout
	}
	return DefaultQueueTimeout
}

func joinReason(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// allowGrant reports whether every policy of the stack lets a standing
// grant loosen the view, and, when one does not, which and why.
func (s stack) allowGrant(a *airlock.Action, v *view) (bool, string) {
	for _, p := range s {
		if ok, why := p.grants.allows(a.Tool, a.Agent, v.tier); !ok {
			return false, fmt.Sprintf("%s %s (%s:%d)", p, why, p.file, p.grants.pos.Line)
		}
	}
	return true, ""
}

// Shell is the shell analyser the gate sees inside commands with, for a
// gate built beside it (a back-test's).
func (g *Gate) Shell() catalog.ShellAnalyser { return g.shell }
