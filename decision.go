package airlock

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Decision is the gate's verdict on one action and everything needed to
// explain it. A refusal is a Decision, not an error.
type Decision struct {
	// Outcome is what the gate does: run, run and notify, ask, suggest,
	// shadow or deny.
	Outcome Outcome `json:"outcome"`
	// Code is the stable refusal code when the action does not run at
	// decision time (deny, suggest, shadow, needs-human, invalid); "" for
	// auto, notify and ask.
	Code string `json:"code,omitempty"`
	// NeedsHuman is set when a needs-human tag applies: the action never runs
	// without a person, whatever the tiers resolved.
	NeedsHuman bool `json:"needs_human,omitempty"`
	// NeedsHumanBy says which tag applied.
	NeedsHumanBy string `json:"needs_human_by,omitempty"`

	Action         Action         `json:"action"`
	Classification Classification `json:"classification"`

	// Rule is the rule that decided, nil when a default did (see Source).
	Rule *RuleRef `json:"rule,omitempty"`
	// Grant is the standing grant that loosened the decision, nil when
	// none did (Source is then "grant").
	Grant *GrantRef `json:"grant,omitempty"`
	// Source is what decided: "rule", "policy default", "levels default",
	// "tier default", "invalid action", "unanalysable shell" or
	// "unanalysable patch".
	Source string `json:"source"`
	// Command is the shell command whose outcome decided (1-based), 0 when
	// the action is not a shell script.
	Command int `json:"command,omitempty"`
	// Overrides lists, in order, every change made to the outcome the rule
	// or default resolved, and why.
	Overrides []Override `json:"overrides,omitempty"`
	// Overridden is set when a preset, floor, layer or safeguard changed the
	// outcome the deciding rule or default gave.
	Overridden bool   `json:"overridden,omitempty"`
	Preset     Preset `json:"preset,omitempty"`
	// ConditionErrors lists rule conditions that failed to evaluate, and
	// whether Airlock applied or skipped the rule (fail closed).
	ConditionErrors []string `json:"condition_errors,omitempty"`
	// Ceilings lists the rules that loosen (auto, notify) and matched the
	// action or one of its commands, and the policies' defaults that loosen,
	// but did not apply because its tier is above their ceiling; resolution
	// went on past them.
	Ceilings []Ceiling `json:"ceilings,omitempty"`
	// Budgets are what running the action takes from the budgets of the
	// grants and rules that let it run: the store takes them with the
	// decision's record, or refuses it and the action is decided again
	// without them (Spent).
	Budgets []BudgetCharge `json:"budgets,omitempty"`
	// Spent lists the budgets found spent, whose grants and rules so did
	// not apply: resolution went on past them.
	Spent []BudgetCharge `json:"spent,omitempty"`

	// Reviewers may resolve the approval request, besides the agent's owner
	// and admins.
	Reviewers []string `json:"reviewers,omitempty"`
	// Owner is the agent's owner, who is told of notify outcomes.
	Owner string `json:"owner,omitempty"`
	// Notify names the channels that carry the decision's notices (a
	// rule's or the agent's `notify:`); empty, the channels' defaults.
	Notify []string `json:"notify,omitempty"`
	// Timeout is how long an approval request may wait before it expires
	// (ask, suggest and needs-human).
	Timeout time.Duration `json:"timeout,omitempty"`
	// Review is what the approval request needs beyond one person's answer:
	// the deciding rule's approvals, rejections, escalation and passkey,
	// and a passkey when a policy requires one for the action's tier.
	Review Review `json:"review,omitzero"`

	// ActionHash binds approvals to exactly this action.
	ActionHash Hash `json:"action_hash"`
	// Commands holds the per-command verdicts of a shell script.
	Commands []CommandDecision `json:"commands,omitempty"`
}

// RuleRef locates a rule in the policy stack.
type RuleRef struct {
	ID     string `json:"id"`
	Policy string `json:"policy"`
	Layer  Layer  `json:"layer"`
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Col    int    `json:"col,omitempty"`
}

// String returns "rule <id> (<layer> <file:line>)".
func (r *RuleRef) String() string {
	if r == nil {
		return "no rule"
	}
	// Built by hand, not with fmt: every decision event and message names
	// its rule.
	var buf [128]byte
	b := append(buf[:0], "rule "...)
	b = append(b, r.ID...)
	b = append(b, " ("...)
	b = append(b, r.Layer.String()...)
	b = append(b, ' ')
	b = r.appendLocation(b)
	return string(append(b, ')'))
}

// Location returns "file:line:col", or the policy's name when it has no file.
func (r *RuleRef) Location() string {
	if r.Line == 0 {
		return r.name()
	}
	var buf [128]byte
	return string(r.appendLocation(buf[:0]))
}

func (r *RuleRef) appendLocation(b []byte) []byte {
	b = append(b, r.name()...)
	if r.Line == 0 {
		return b
	}
	b = append(b, ':')
	b = strconv.AppendInt(b, int64(r.Line), 10)
	b = append(b, ':')
	return strconv.AppendInt(b, int64(r.Col), 10)
}

// name is the rule's file, or its policy's name when it has no file.
func (r *RuleRef) name() string {
	if r.File == "" {
		return r.Policy
	}
	return r.File
}

// Override records one change to a resolved outcome.
type Override struct {
	From Outcome `json:"from"`
	To   Outcome `json:"to"`
	// Kind is "layer", "floor", "preset", "unknown-tool", "needs-human" or
	// "unanalysable".
	Kind   string `json:"kind"`
	Reason string `json:"reason"`
}

// Ceiling records a rule or a policy's default that loosens (auto, notify)
// and stopped at its ceiling: the highest tier it reaches (DefaultCeiling
// unless it says otherwise with max_tier, or, for a rule, a min_tier or a
// class it names) is below the tier of what it matched.
type Ceiling struct {
	// Rule is the rule that stopped; nil when a default did.
	Rule *RuleRef `json:"rule,omitempty"`
	// Default is the policy's default that stopped; nil when a rule did.
	Default *DefaultRef `json:"default,omitempty"`
	Ceiling RiskTier    `json:"ceiling"`
	Tier    RiskTier    `json:"tier"`
	Class   Class       `json:"class"`
	// Command is the shell command the rule matched (1-based), 0 for the
	// action itself; Text is that command.
	Command int    `json:"command,omitempty"`
	Text    string `json:"text,omitempty"`
}

// String explains the ceiling in one sentence, with the line that would
// let the rule or the default reach further.
func (c Ceiling) String() string {
	what := "the action"
	if c.Text != "" {
		what = fmt.Sprintf("command %d (%s)", c.Command, c.Text)
	}
	if c.Default != nil {
		outcome := c.Default.Outcome.String()
		if c.Default.Source == "levels default" {
			outcome = "L2"
		}
		return fmt.Sprintf("%s applies where no rule matches, but reaches only %s, and %s is %s (%s); "+
			"to let it decide such actions, write `default: {outcome: %s, max_tier: %s}`",
			c.Default, c.Ceiling, what, c.Tier, c.Class, outcome, c.Tier)
	}
	return fmt.Sprintf("%s matched %s but reaches only %s, and %s is %s (%s); to let it decide such actions, add `max_tier: %s` to it",
		c.Rule, what, c.Ceiling, what, c.Tier, c.Class, c.Tier)
}

// DefaultRef locates a policy's default in the stack.
type DefaultRef struct {
	// Source is "policy default", or "levels default" for the L2 (notify)
	// a levels-style policy gives what no rule matches.
	Source  string  `json:"source"`
	Outcome Outcome `json:"outcome"`
	Policy  string  `json:"policy"`
	Layer   Layer   `json:"layer"`
	File    string  `json:"file,omitempty"`
	// Line and Col are where `default:` is written; 0 for a levels default.
	Line int `json:"line,omitempty"`
	Col  int `json:"col,omitempty"`
}

// String returns "the <source> (<outcome>) of <layer> policy <name>
// (<file:line:col>)".
func (r *DefaultRef) String() string {
	where := cmp.Or(r.File, r.Policy)
	if r.Line != 0 {
		where = fmt.Sprintf("%s:%d:%d", where, r.Line, r.Col)
	}
	return fmt.Sprintf("the %s (%s) of %s policy %s (%s)", r.Source, r.Outcome, r.Layer, r.Policy, where)
}

// CommandDecision is the verdict on one command of a shell script.
type CommandDecision struct {
	Command
	// Outcome is zero for a command with no effect to judge (echo, cd).
	Outcome Outcome  `json:"outcome,omitzero"`
	Rule    *RuleRef `json:"rule,omitempty"`
	Source  string   `json:"source"`
}

// Runs reports whether the action may run now without a person.
func (d Decision) Runs() bool { return d.Outcome.Runs() && d.Code == "" }

// String returns the decision on one line, e.g.
//
//	ask: coder-1 Bash fs.delete (destructive) by tier default [a1b2c3d4e5f6]
func (d Decision) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s %s %s (%s) by %s", d.Outcome, d.Action.Agent, d.Action.Tool,
		d.Classification.Class, d.Classification.Tier, d.DecidedBy())
	if d.NeedsHuman {
		b.WriteString(", needs-human")
	}
	if d.Overridden {
		b.WriteString(", overridden")
	}
	if d.Code != "" {
		fmt.Fprintf(&b, ", %s", d.Code)
	}
	if !d.ActionHash.IsZero() {
		fmt.Fprintf(&b, " [%s]", d.ActionHash.String()[:12])
	}
	return b.String()
}

// DecidedBy names what decided: the grant, the rule, or the default.
func (d Decision) DecidedBy() string {
	switch {
	case d.Grant != nil:
		return d.Grant.String()
	case d.Rule != nil:
		return d.Rule.String()
	}
	return d.Source
}

// A GrantRef names the standing grant that decided, as an explanation and
// an audit record say it.
type GrantRef struct {
	ID        string    `json:"id"`
	GrantedBy string    `json:"granted_by"`
	Approval  string    `json:"approval,omitempty"`
	Expires   time.Time `json:"expires"`
}

// String returns "grant G by alice from approval A, expires T".
func (r *GrantRef) String() string {
	s := "grant " + r.ID + " by " + r.GrantedBy
	if r.Approval != "" {
		s += " from approval " + r.Approval
	}
	return s + ", expires " + r.Expires.UTC().Format(time.RFC3339)
}

// Explain returns the full explanation: what was attempted, how Airlock
// classified it, which rule decided, every override and why, and what
// happens next.
func (d Decision) Explain() string {
	var b strings.Builder
	line := func(label, format string, args ...any) {
		fmt.Fprintf(&b, "%-12s %s\n", label+":", fmt.Sprintf(format, args...))
	}
	line("outcome", "%s — %s", d.Outcome, d.effect())
	if d.Code != "" {
		line("code", "%s", d.Code)
	}
	line("action", "agent %s, tool %s", d.Action.Agent, d.Action.Tool)
	if h := d.Action.Hints; h != nil && *h != (Hints{}) {
		line("hints", "%s", h)
	}
	if !d.ActionHash.IsZero() {
		line("hash", "sha256:%s", d.ActionHash)
	}
	c := d.Classification
	line("class", "%s (capability %s)", c.Class, c.Capability)
	line("risk tier", "%s", c.Tier)
	if c.Reason != "" || c.Source != "" {
		line("classified", "%s", strings.TrimPrefix(strings.Join(nonEmpty(c.Source, c.Reason), ": "), ": "))
	}
	if c.Opaque != "" {
		line("unanalysed", "%s", c.Opaque)
	}
	if len(d.Commands) > 0 {
		b.WriteString("commands:\n")
		for i, cd := range d.Commands {
			mark := " "
			if i+1 == d.Command {
				mark = "*"
			}
			verdict := cd.Outcome.String()
			if cd.Inert {
				verdict = "inert"
			}
			fmt.Fprintf(&b, "  %s%2d. %-40s %s (%s) → %s", mark, i+1, cd.Text, cd.Class, cd.Tier, verdict)
			if !cd.Inert {
				if cd.Rule != nil {
					fmt.Fprintf(&b, " by %s", cd.Rule)
				} else {
					fmt.Fprintf(&b, " by %s", cd.Source)
				}
			}
			if len(cd.Via) > 0 {
				fmt.Fprintf(&b, " via %s", strings.Join(cd.Via, ", "))
			}
			if cd.Reason != "" {
				fmt.Fprintf(&b, "; %s", cd.Reason)
			}
			b.WriteString("\n")
		}
	}
	if d.Command > 0 {
		line("decided by", "command %d: %s", d.Command, d.DecidedBy())
	} else {
		line("decided by", "%s", d.DecidedBy())
	}
	if d.Preset != PresetNone {
		line("preset", "%s", d.Preset)
	}
	if d.NeedsHuman {
		line("needs-human", "%s", d.NeedsHumanBy)
	}
	for i, o := range d.Overrides {
		label := ""
		if i == 0 {
			label = "overrides:"
		}
		fmt.Fprintf(&b, "%-12s %s → %s (%s): %s\n", label, o.From, o.To, o.Kind, o.Reason)
	}
	for _, e := range d.ConditionErrors {
		line("condition", "%s", e)
	}
	for _, c := range d.Ceilings {
		line("ceiling", "%s", c)
	}
	for _, c := range d.Spent {
		line("spent", "budget %s (%s) is spent: what it bounds did not apply", c.Key, c.Budget.String())
	}
	for _, c := range d.Budgets {
		line("budget", "running it takes %s from %s", c.units(c.Cost), c.String())
	}
	if len(d.Reviewers) > 0 {
		line("reviewers", "%s", strings.Join(d.Reviewers, ", "))
	}
	if d.Owner != "" {
		line("owner", "%s", d.Owner)
	}
	if d.Timeout > 0 && (d.Outcome == Ask || d.Outcome == Suggest) {
		line("timeout", "%s", d.Timeout)
	}
	if rv := d.Review; !rv.IsZero() {
		line("review", "%s", rv.String())
	}
	return b.String()
}

// effect says in words what the outcome does.
func (d Decision) effect() string {
	switch {
	case d.NeedsHuman && d.Outcome == Suggest:
		return "refused: needs a person; a non-blocking approval request is queued, and once approved this exact action may run once"
	case d.Code == CodeInvalid:
		return "refused: the action is malformed"
	}
	switch d.Outcome {
	case Auto:
		return "runs"
	case Notify:
		return "runs; the agent's owner is told afterwards"
	case Ask:
		return "waits for a person to approve (runs) or reject; refused if the deadline passes"
	case Suggest:
		return "skipped now; queued as a proposal, and once approved this exact action may run once"
	case Shadow:
		return "skipped; recorded as what would have happened"
	case Deny:
		return "refused"
	}
	return "unknown"
}

func nonEmpty(s ...string) []string {
	out := s[:0:0]
	for _, v := range s {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}

// Explanation is how the policy in force decides an action.
type Explanation struct {
	Decision Decision `json:"decision"`
	// Summary is the decision in one line; Explanation in full.
	Summary     string `json:"summary"`
	Explanation string `json:"explanation"`
}
