package main

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/gate"
	airlockhttp "github.com/airlock-dev/airlock/http"
	"github.com/airlock-dev/airlock/policywatch"
	"github.com/airlock-dev/airlock/shell"
	"github.com/airlock-dev/airlock/visible"
)

func newPolicyShowCmd() *cobra.Command {
	var (
		asJSON, table bool
		configPath    string
	)
	cmd := &cobra.Command{
		Use:   "show [FILE...]",
		Short: "Print the policy stack in force: every layer's rules, defaults, floors and ceilings",
		Long: `Show prints the policy stack from the top layer down (organisation,
project, agent), each policy as its file writes it, with which layer it
is, its file and the SHA-256 of the file as loaded: its default, preset,
agents, classifiers, floors, sensitive paths and every rule, each rule
with its file:line:col and, for one that loosens (auto, notify), how far
it reaches, asked of the ceiling the gate decides by. The output is YAML;
--table prints one row per rule, default, floor and classifier instead,
and --json the stack as data (GET /v1/policy).

Given no files, it shows the stack in force on the server (--server,
$AIRLOCK_TOKEN); with the server's starter policy, that is the starter.
Given files, or --config with the configuration 'airlock serve' reads,
it shows the stack those files make (the built-in starter policy for a
configuration without policies), loaded and tested as the server would.

When the policy files on the server's disk are not the ones in force (their
last reload was refused: a file that does not load, failing tests), it says
so after the stack, with the full SHA-256 of each file on disk and in force
and every error, and exits 0: the stack shown is the one deciding.`,
		Example: `  airlock policy show
  airlock policy show --table
  airlock policy show --json
  airlock policy show org.yaml project.yaml
  airlock policy show --config airlock.yaml`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, files []string) error {
			if asJSON && table {
				return usageError("policy show: --json and --table are two formats; give one")
			}
			stack, from, err := policyStack(cmd, files, configPath)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			switch {
			case asJSON:
				return writeJSON(out, stack)
			case table:
				return writePolicyTable(out, stack)
			}
			writePolicyYAML(out, stack, from)
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&asJSON, "json", false, "print the stack as JSON")
	f.BoolVar(&table, "table", false, "print one row per rule, default, floor and classifier")
	f.StringVarP(&configPath, "config", "c", "", "show the stack of this configuration's policies (the starter without any)")
	return cmd
}

// policyStack reads the stack from the files, the configuration's files,
// or the server; from says which, for people.
func policyStack(cmd *cobra.Command, files []string, configPath string) (airlockhttp.PolicyStack, string, error) {
	var none airlockhttp.PolicyStack
	switch {
	case len(files) > 0 && configPath != "":
		return none, "", usageError("policy show: give policy files or --config, not both")
	case configPath != "":
		cfg, err := LoadConfig(configPath)
		if err != nil {
			return none, "", checkFailed(err)
		}
		if len(cfg.Policies) == 0 {
			p := gate.StarterPolicy()
			g, err := gate.New(shell.Analyser{}, p)
			if err != nil {
				return none, "", checkFailed(err)
			}
			src := airlock.PolicySource{Name: p.Name(), File: p.File(), Layer: p.Layer(), SHA256: policywatch.Hash(gate.StarterPolicySource)}
			return airlockhttp.NewPolicyStack(g, []airlock.PolicySource{src}),
				"of " + configPath + ", which names no policy file: the built-in starter policy", nil
		}
		files = cfg.Policies
		st, _, err := filesStack(cmd, files)
		return st, "of the policy files " + configPath + " names", err
	case len(files) > 0:
		st, _, err := filesStack(cmd, files)
		return st, "of the policy files given", err
	}
	c, err := newClient(cmd)
	if err != nil {
		return none, "", err
	}
	st, err := airlockhttp.Policy(cmd.Context(), c)
	if err != nil {
		return none, "", serverFailed(c, err)
	}
	if st.Layers == nil {
		st.Layers = []airlockhttp.PolicyLayer{}
	}
	return st, "in force on the server at " + c.URL, nil
}

// filesStack loads policy files as a stack, running their tests, each with
// the hash of its bytes; session policies are left out, with a note.
func filesStack(cmd *cobra.Command, files []string) (airlockhttp.PolicyStack, *gate.Gate, error) {
	g, sessions, err := loadLayers(files)
	if err != nil {
		return airlockhttp.PolicyStack{}, nil, checkFailed(err)
	}
	for _, p := range sessions {
		fmt.Fprintf(cmd.ErrOrStderr(), "note: %s is a session policy, not shown: a running session pushes it for itself\n", p)
	}
	var sources []airlock.PolicySource
	for _, p := range g.Layers() {
		src := airlock.PolicySource{Name: p.Name(), File: p.File(), Layer: p.Layer()}
		if b, err := os.ReadFile(p.File()); err == nil {
			src.SHA256 = policywatch.Hash(b)
		}
		sources = append(sources, src)
	}
	return airlockhttp.NewPolicyStack(g, sources), g, nil
}

// writePolicyYAML writes the stack as YAML whose layers read as their
// files write them, with where each entry is and how far it reaches as
// comments; the output stays YAML, the stale notice included.
func writePolicyYAML(out io.Writer, st airlockhttp.PolicyStack, from string) {
	w := &yamlWriter{out: out}
	w.comment("The policy stack %s, from the top layer down.", from)
	w.comment("Each layer gives the first rule of its own that matches (in the order of its step:")
	w.comment("agent × tool, agent × class, agent, tool, class, then tier or condition), else its default;")
	w.comment("the strictest layer wins; floors only raise; needs-human always holds. A rule or a default")
	w.comment("that loosens (auto, notify) reaches only up to the tier its comment says. Where no layer")
	w.comment("has an opinion, reads run and everything else asks.")
	if len(st.Layers) == 0 {
		w.comment("No policy: the risk-tier defaults alone decide.")
		w.line(0, "layers: []", "")
	} else {
		w.line(0, "layers:", "")
	}
	for _, l := range st.Layers {
		writeLayerYAML(w, l)
	}
	if st.Stale != nil {
		var b strings.Builder
		writeStalePolicy(&b, st.Stale)
		for _, s := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
			w.comment("%s", s)
		}
	}
}

func writeLayerYAML(w *yamlWriter, l airlockhttp.PolicyLayer) {
	w.line(1, "- name: "+scalar(l.Name), "")
	const in = 2
	w.field(in, "layer", l.Layer.String(), "")
	w.field(in, "file", l.File, "")
	w.field(in, "sha256", l.SHA256, "")
	w.field(in, "description", l.Description, "")
	switch {
	case l.Default == 0:
		w.line(in, "# default: none — where no rule matches, this layer has no opinion", "")
	case l.DefaultSource == "levels default":
		w.line(in, "default: "+l.Default.String(), "the levels default: this policy writes outcomes as L1-L3"+reachComment(l.DefaultCeiling)+" ("+l.DefaultAt.String()+")")
	case l.DefaultMaxTier != 0:
		w.line(in, fmt.Sprintf("default: {outcome: %s, max_tier: %s}", l.Default, l.DefaultMaxTier), l.DefaultAt.String())
	default:
		w.line(in, "default: "+l.Default.String(), strings.TrimPrefix(reachComment(l.DefaultCeiling)+" ("+l.DefaultAt.String()+")", "; "))
	}
	if l.Preset != airlock.PresetNone {
		w.field(in, "preset", l.Preset.String(), "")
	}
	if l.NeedsHuman {
		w.line(in, "needs_human: true", l.NeedsHumanAt.String())
	}
	if l.Timeout > 0 {
		w.line(in, "timeout: "+duration(l.Timeout), "")
	}
	if len(l.Floors) > 0 {
		w.line(in, "floors:", "")
		var tiers, classes []gate.EffectiveFloor
		for _, f := range l.Floors {
			if f.Tier != 0 {
				tiers = append(tiers, f)
			} else {
				classes = append(classes, f)
			}
		}
		if len(tiers) > 0 {
			w.line(in+1, "tiers:", "")
			for _, f := range tiers {
				w.field(in+2, f.Tier.String(), f.Outcome.String(), f.Tier.String()+" and above: at least "+f.Outcome.String()+" ("+f.At.String()+")")
			}
		}
		if len(classes) > 0 {
			w.line(in+1, "classes:", "")
			for _, f := range classes {
				w.line(in+2, scalar(f.Class)+": "+f.Outcome.String(), f.At.String())
			}
		}
	}
	if len(l.Agents) > 0 {
		w.line(in, "agents:", "")
		for _, a := range l.Agents {
			w.line(in+1, scalar(a.Pattern)+":", a.At.String())
			if a.Preset != airlock.PresetNone {
				w.field(in+2, "preset", a.Preset.String(), "")
			}
			w.field(in+2, "owner", a.Owner, "")
			w.list(in+2, "reviewers", a.Reviewers)
			w.list(in+2, "notify", a.Notify)
			if a.NeedsHuman {
				w.line(in+2, "needs_human: true", "")
			}
			if a.Timeout > 0 {
				w.line(in+2, "timeout: "+duration(a.Timeout), "")
			}
		}
	}
	if len(l.Classifiers) > 0 {
		w.line(in, "classifiers:", "")
		for _, c := range l.Classifiers {
			w.line(in+1, "- id: "+scalar(c.ID), c.At.String())
			w.list(in+2, "tool", c.Tools)
			w.list(in+2, "command", c.Commands)
			w.field(in+2, "when", c.Condition, "")
			w.field(in+2, "class", string(c.Class), "")
			if string(c.Capability) != string(c.Class) {
				w.field(in+2, "capability", string(c.Capability), "")
			}
			w.field(in+2, "tier", c.Tier.String(), "")
			w.field(in+2, "reason", c.Reason, "")
		}
	}
	if len(l.SensitivePaths) > 0 {
		w.line(in, "sensitive_paths:", "")
		keys := make([]string, 0, len(l.SensitivePaths))
		for k := range l.SensitivePaths {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			w.list(in+1, k, l.SensitivePaths[k])
		}
	}
	if len(l.Rules) > 0 {
		w.line(in, "rules:", "")
	} else {
		w.line(in, "rules: []", "")
	}
	for _, r := range l.Rules {
		w.line(in+1, "- id: "+scalar(r.ID), r.At.String()+" · step "+r.Step)
		w.field(in+2, "description", r.Description, "")
		w.list(in+2, "agent", r.Agents)
		w.list(in+2, "tool", r.Tools)
		w.list(in+2, "class", r.Classes)
		w.list(in+2, "command", r.Commands)
		if r.MinTier != 0 {
			w.field(in+2, "min_tier", r.MinTier.String(), "")
		}
		if r.MaxTier != 0 {
			w.field(in+2, "max_tier", r.MaxTier.String(), "")
		}
		w.field(in+2, "when", r.Condition, "")
		if r.Outcome != 0 {
			w.field(in+2, "outcome", r.Outcome.String(), r.ReachText())
		}
		w.list(in+2, "reviewers", r.Reviewers)
		w.list(in+2, "notify", r.Notify)
		if r.Timeout > 0 {
			w.line(in+2, "timeout: "+duration(r.Timeout), "")
		}
		if r.NeedsHuman {
			w.line(in+2, "needs_human: true", "")
		}
		if b := r.Budget; b != nil {
			note := "each agent's own account"
			if b.Key != "" {
				note = "the agent's account: " + b.Key
			}
			w.line(in+2, "budget: "+budgetYAML(&b.Budget), note)
		}
	}
	if l.Tests > 0 {
		w.line(in, fmt.Sprintf("# and %d test(s): airlock policy test runs them", l.Tests), "")
	}
}

// reachComment is "; up to TIER" for a ceiling, "" for none.
func reachComment(t airlock.RiskTier) string {
	if t == 0 {
		return ""
	}
	return "; up to " + t.String()
}

// yamlWriter writes YAML line by line, each value quoted where YAML would
// read it otherwise and every comment made visible.
type yamlWriter struct{ out io.Writer }

func (w *yamlWriter) comment(format string, args ...any) {
	fmt.Fprintf(w.out, "# %s\n", visible.Escaped(fmt.Sprintf(format, args...)))
}

func (w *yamlWriter) line(indent int, text, comment string) {
	s := strings.Repeat("  ", indent) + text
	if comment != "" {
		s = fmt.Sprintf("%-40s # %s", s, visible.Escaped(comment))
	}
	fmt.Fprintln(w.out, s)
}

// field writes "key: value" unless value is empty.
func (w *yamlWriter) field(indent int, key, value, comment string) {
	if value != "" {
		w.line(indent, key+": "+scalar(value), comment)
	}
}

// list writes "key: value" for one value, "key: [a, b]" for more, nothing
// for none.
func (w *yamlWriter) list(indent int, key string, values []string) {
	switch len(values) {
	case 0:
	case 1:
		w.line(indent, key+": "+scalar(values[0]), "")
	default:
		quoted := make([]string, len(values))
		for i, v := range values {
			quoted[i] = flowScalar(v)
		}
		w.line(indent, key+": ["+strings.Join(quoted, ", ")+"]", "")
	}
}

// plainScalar matches text YAML reads back as the same string unquoted.
var plainScalar = regexp.MustCompile(`^[A-Za-z_./~][A-Za-z0-9_./~ ×*@+=()-]*$`)

// scalar returns s as a YAML scalar: plain where that reads back as s,
// else double-quoted (JSON's quoting, which YAML reads, escapes every
// control character).
func scalar(s string) string {
	switch strings.ToLower(s) {
	case "true", "false", "yes", "no", "on", "off", "null", "y", "n", "~":
		return strconv.Quote(s)
	}
	if plainScalar.MatchString(s) && !strings.HasSuffix(s, " ") && !strings.Contains(s, " #") {
		return s
	}
	return quoteJSON(s)
}

// flowScalar is scalar inside [ ]: there a comma or a bracket ends it.
func flowScalar(s string) string {
	if q := scalar(s); q == s && !strings.ContainsAny(s, ",[]{}") {
		return q
	}
	return quoteJSON(s)
}

func quoteJSON(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u2028' || r == '\u2029':
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return visible.Escaped(b.String())
}

// budgetYAML writes a rule's budget as a policy does: {uses: 20, per:
// hour}, {sum: amount, max: 500, currency: USD, per: day}.
func budgetYAML(b *airlock.Budget) string {
	if b.Sum == "" {
		return fmt.Sprintf("{uses: %d, per: %s}", b.Uses, b.Per)
	}
	cur := ""
	if b.Currency != "" {
		cur = ", currency: " + b.Currency
	}
	return fmt.Sprintf("{sum: %s, max: %s%s, per: %s}", b.Sum, b.Max, cur, b.Per)
}

// duration writes a duration as a policy does: 15m, 2h30m, 90s.
func duration(d time.Duration) string { return airlock.FormatDuration(d) }

// writePolicyTable writes the stack's files, then one row per default,
// floor, classifier and rule of each layer, in the order the file writes
// them.
func writePolicyTable(out io.Writer, st airlockhttp.PolicyStack) error {
	if len(st.Layers) == 0 {
		fmt.Fprintln(out, "no policy: the server decides by the risk-tier defaults alone")
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "LAYER\tNAME\tFILE\tSHA256\tDESCRIPTION")
	for _, l := range st.Layers {
		sum := l.SHA256
		if len(sum) > 12 {
			sum = sum[:12]
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", l.Layer, visible.Escaped(l.Name), visible.Escaped(cmp.Or(l.File, "-")),
			visible.Escaped(cmp.Or(sum, "-")), visible.Escaped(cmp.Or(l.Description, "-")))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out)
	tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "LAYER\tPOLICY\tENTRY\tMATCHES\tOUTCOME\tREACH\tAT")
	row := func(l airlockhttp.PolicyLayer, entry, matches, outcome, reach string, at gate.Position) {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", l.Layer, visible.Escaped(l.Name), visible.Escaped(entry),
			visible.Escaped(matches), visible.Escaped(outcome), visible.Escaped(cmp.Or(reach, "-")), visible.Escaped(at.String()))
	}
	for _, l := range st.Layers {
		if l.Default != 0 {
			reach := ""
			if l.DefaultCeiling != 0 {
				reach = "up to " + l.DefaultCeiling.String()
			}
			row(l, l.DefaultSource, "what no rule matches", l.Default.String(), reach, l.DefaultAt)
		}
		if l.NeedsHuman {
			row(l, "needs_human", "every action", "needs-human", "", l.NeedsHumanAt)
		}
		for _, f := range l.Floors {
			what := "class " + f.Class
			if f.Tier != 0 {
				what = f.Tier.String() + " and above"
			}
			row(l, "floor", what, "at least "+f.Outcome.String(), "", f.At)
		}
		for _, c := range l.Classifiers {
			m := gate.MatchText(nil, c.Tools, nil, c.Commands, 0)
			if c.Condition != "" {
				m += " · when " + c.Condition
			}
			row(l, "classifier "+c.ID, m, fmt.Sprintf("class %s, %s", c.Class, c.Tier), "", c.At)
		}
		for _, r := range l.Rules {
			m := gate.MatchText(r.Agents, r.Tools, r.Classes, r.Commands, r.MinTier)
			if r.Condition != "" {
				m += " · when " + r.Condition
			}
			outcome := "tag"
			if r.Outcome != 0 {
				outcome = r.Outcome.String()
			}
			if r.NeedsHuman {
				outcome += " + needs-human"
			}
			row(l, "rule "+r.ID, m, outcome, r.ReachText(), r.At)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if st.Stale != nil {
		writeStalePolicy(out, st.Stale)
	}
	return nil
}
