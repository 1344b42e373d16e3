package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/gate"
	airlockhttp "github.com/airlock-dev/airlock/http"
	"github.com/airlock-dev/airlock/schema"
	"github.com/airlock-dev/airlock/shell"
	"github.com/airlock-dev/airlock/visible"
)

func newPolicyCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "Check, test and explain policies",
		Long: `Policies are YAML files (see docs/POLICY.md). Several files form a stack,
given from the top layer down: organisation, project, agent, then session.
Given no files, explain, effective and show ask the server about the stack
in force there (--server, $AIRLOCK_TOKEN; see 'airlock --help').`,
		Example: `  airlock policy lint policy.yaml
  airlock policy test org.yaml project.yaml
  airlock policy explain policy.yaml --agent coder-1 --tool Bash --args '{"command":"make deploy"}'
  airlock policy explain --agent coder-1 --tool Bash --args '{"command":"make deploy"}'
  airlock policy effective --agent coder-1
  airlock policy show
  airlock policy show org.yaml project.yaml --table`,
	}
	cmd.AddCommand(newPolicyLintCmd(), newPolicyTestCmd(), newPolicyExplainCmd(), newPolicyEffectiveCmd(), newPolicyShowCmd(), newPolicySchemaCmd(), newPolicyBacktestCmd())
	return cmd
}

func newPolicyLintCmd() *cobra.Command {
	var strict bool
	cmd := &cobra.Command{
		Use:   "lint FILE...",
		Short: "Report every problem in policy files, with file:line:col",
		Long: `Lint parses and compiles each policy and reports every problem: YAML syntax,
unknown fields (with the valid ones), bad values, conditions that do not
compile, layers out of order. It also warns about rules that can never
decide, conditions that read a shell command as text, command patterns a
rule's ceiling never lets run, and defaults (a levels-style policy's L2
too), rules for every action of an agent and autonomous presets that
loosen without saying how far (max_tier): they stop at network-egress. It
does not run the policies' tests (see 'airlock policy test').`,
		Example: `  airlock policy lint policy.yaml
  airlock policy lint org.yaml project.yaml --strict`,
		Args: argsAtLeast(1, "at least one policy file"),
		RunE: func(cmd *cobra.Command, files []string) error {
			out := cmd.OutOrStdout()
			layers, failed := parseFiles(out, files)
			warnings := 0
			for _, p := range layers {
				for _, w := range p.Lint(shell.Analyser{}) {
					fmt.Fprintln(out, w)
					warnings++
				}
			}
			if !failed {
				if err := gate.ValidateStack(layers...); err != nil {
					fmt.Fprintf(out, "%s\n", airlock.ErrorMessage(err))
					failed = true
				}
			}
			switch {
			case failed:
				return checkFailed(nil)
			case warnings > 0 && strict:
				return checkFailed(fmt.Errorf("%d warning(s), and --strict is set", warnings))
			}
			fmt.Fprintf(out, "ok: %d policy file(s), %d warning(s)\n", len(files), warnings)
			return nil
		},
	}
	cmd.Flags().BoolVar(&strict, "strict", false, "fail on warnings too")
	return cmd
}

func newPolicyTestCmd() *cobra.Command {
	var verbose bool
	cmd := &cobra.Command{
		Use:   "test FILE...",
		Short: "Run the tests policies carry",
		Long: `Test runs every example action of each policy's tests: section against the
stack from the top layer down to that policy, and reports each failure with
its location and what differed.`,
		Example: `  airlock policy test policy.yaml
  airlock policy test org.yaml project.yaml -v`,
		Args: argsAtLeast(1, "at least one policy file"),
		RunE: func(cmd *cobra.Command, files []string) error {
			out := cmd.OutOrStdout()
			layers, failed := parseFiles(out, files)
			if failed {
				return checkFailed(nil)
			}
			if err := gate.ValidateStack(layers...); err != nil {
				return checkFailed(errors.New(airlock.ErrorMessage(err)))
			}
			results := gate.RunPolicyTests(shell.Analyser{}, layers...)
			fails := 0
			for _, r := range results {
				if !r.Passed() {
					fails++
				}
				if verbose || !r.Passed() {
					fmt.Fprintln(out, r)
				}
			}
			if fails > 0 {
				fmt.Fprintf(out, "FAIL: %d of %d test(s) failed\n", fails, len(results))
				return checkFailed(nil)
			}
			fmt.Fprintf(out, "ok: %d test(s) passed\n", len(results))
			return nil
		},
	}
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "list passing tests too")
	return cmd
}

func newPolicyExplainCmd() *cobra.Command {
	var (
		af     actionFlags
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "explain [FILE...] --agent AGENT --tool TOOL [--args JSON]",
		Short: "Decide one action against a policy and explain why",
		Long: `Explain loads the policies (checking their tests), decides the action
and prints the outcome, the classification (every command of a shell
script), the rule that decided with its file:line, every override and why,
and the action hash. Policies with layer: session are pushed for --session.

Given no files, it asks the server to decide the action against the policy
in force there. Nothing is recorded and nothing runs, either way.`,
		Example: `  airlock policy explain policy.yaml --agent coder-1 --tool Bash --args '{"command":"git status && rm -rf /"}'
  airlock policy explain org.yaml project.yaml --agent bot --tool write_file --args '{"path":"/etc/hosts"}' --json
  airlock policy explain --agent coder-1 --tool Bash --args '{"command":"make deploy"}'`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, files []string) error {
			a, err := af.action("policy explain")
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if len(files) == 0 {
				c, err := newClient(cmd)
				if err != nil {
					return err
				}
				e, err := c.Explain(cmd.Context(), a)
				if err != nil {
					return serverInvalid(c, err)
				}
				if asJSON {
					return writeJSON(out, e.Decision)
				}
				fmt.Fprint(out, visible.EscapedLines(e.Explanation))
				return nil
			}
			g, err := loadGate(files, a.SessionID)
			if err != nil {
				return checkFailed(err)
			}
			d := g.Decide(cmd.Context(), a)
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(d)
			}
			fmt.Fprint(out, d.Explain())
			return nil
		},
	}
	f := cmd.Flags()
	af.register(f, "the session ID (session policies are pushed for it)")
	f.BoolVar(&asJSON, "json", false, "print the decision as JSON")
	return cmd
}

func newPolicyEffectiveCmd() *cobra.Command {
	var (
		agent  string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "effective [FILE...] --agent AGENT",
		Short: "Print everything the policy can apply to one agent",
		Long: `Effective prints what the policy stack can do to one agent's actions,
before it attempts any: the preset, owner, reviewers, needs-human tag and
deadlines that apply to it, then layer by layer from the organisation down
the layer's default, the agent's entry, the rules that can match the agent
in the order the gate tries them (conditional ones marked), the
needs-human tags, the floors and the classifiers, each with its
file:line:col.

Given no files, it asks the server about the stack in force there; an
agent token may leave out --agent for its own agent. Policies a running
session pushes for itself are not shown.`,
		Example: `  airlock policy effective org.yaml project.yaml --agent ci-bot
  airlock policy effective --agent ci-bot
  airlock policy effective --agent ci-bot --json`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, files []string) error {
			ep, err := effectivePolicy(cmd, files, agent)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return writeJSON(out, ep)
			}
			fmt.Fprint(out, visible.EscapedLines(ep.Explain()))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&agent, "agent", "", "the agent")
	f.BoolVar(&asJSON, "json", false, "print the effective policy as JSON")
	return cmd
}

// effectivePolicy reads the agent's effective policy from the files, or
// from the server when there are none.
func effectivePolicy(cmd *cobra.Command, files []string, agent string) (gate.EffectivePolicy, error) {
	if len(files) == 0 {
		c, err := newClient(cmd)
		if err != nil {
			return gate.EffectivePolicy{}, err
		}
		ep, err := airlockhttp.EffectivePolicy(cmd.Context(), c, agent)
		if err != nil {
			return ep, serverInvalid(c, err)
		}
		return ep, nil
	}
	if agent == "" {
		return gate.EffectivePolicy{}, usageError("policy effective: --agent is required with policy files")
	}
	g, sessions, err := loadLayers(files)
	if err != nil {
		return gate.EffectivePolicy{}, checkFailed(err)
	}
	for _, p := range sessions {
		fmt.Fprintf(cmd.ErrOrStderr(), "note: %s is a session policy, not shown: a running session pushes it for itself\n", p)
	}
	return g.EffectivePolicy(agent), nil
}

// writeStalePolicy says that the policy files on the server's disk are not
// the stack in force, with the hashes of both and the refusal's errors.
func writeStalePolicy(out io.Writer, st *airlockhttp.StalePolicy) {
	fmt.Fprintf(out, "\nSTALE: the policy files on disk are not the ones in force.\n"+
		"Their reload was refused at %s (%s); the stack above still decides.\n",
		st.Refused.UTC().Format(time.RFC3339), visible.Escaped(st.Reason))
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	for _, f := range st.OnDisk {
		sum := f.SHA256
		if sum == "" {
			sum = "(unreadable)"
		}
		fmt.Fprintf(tw, "  on disk:\t%s\tsha256 %s\n", visible.Escaped(f.File), visible.Escaped(sum))
	}
	for _, f := range st.InForce {
		fmt.Fprintf(tw, "  in force:\t%s\tsha256 %s\n", visible.Escaped(f.File), visible.Escaped(f.SHA256))
	}
	tw.Flush()
	fmt.Fprintf(out, "%d error(s):\n", len(st.Errors))
	for _, e := range st.Errors {
		fmt.Fprintf(out, "  %s\n", visible.Escaped(e))
	}
}

func newPolicySchemaCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "schema",
		Short: "Print the JSON Schema of policy files",
		Long: `Schema prints the JSON Schema (draft 2020-12) of policy files, for editors.
With yaml-language-server, start a policy with:
  # yaml-language-server: $schema=./policy.schema.json`,
		Example: `  airlock policy schema > policy.schema.json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := cmd.OutOrStdout().Write(schema.Policy)
			return err
		},
	}
}

// parseFiles parses every file, printing every problem of every file. It
// reports failed when any file did not parse.
func parseFiles(out io.Writer, files []string) (layers []*gate.Policy, failed bool) {
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			fmt.Fprintf(out, "%s: %v\n", file, err)
			failed = true
			continue
		}
		p, err := gate.LoadPolicy(file, src)
		if err != nil {
			fmt.Fprintln(out, policyErrorText(err))
			failed = true
			continue
		}
		layers = append(layers, p)
	}
	return layers, failed
}

// loadGate loads policy files as a stack, running their tests, and pushes
// the session-layer ones for session.
func loadGate(files []string, session string) (*gate.Gate, error) {
	g, sessions, err := loadLayers(files)
	if err != nil {
		return nil, err
	}
	if len(sessions) > 0 && session == "" {
		return nil, fmt.Errorf("%s is a session policy: give --session to decide for that session", sessions[0])
	}
	for _, p := range sessions {
		if err := g.PushSession(session, p); err != nil {
			return nil, errors.New(policyErrorText(err))
		}
	}
	return g, nil
}

// loadLayers loads the policy files into a gate, and returns the session
// policies among them apart.
func loadLayers(files []string) (*gate.Gate, []*gate.Policy, error) {
	var layers, sessions []*gate.Policy
	for _, file := range files {
		p, err := gate.LoadPolicyFile(file)
		if err != nil {
			return nil, nil, errors.New(policyErrorText(err))
		}
		if p.Layer() == airlock.LayerSession {
			sessions = append(sessions, p)
		} else {
			layers = append(layers, p)
		}
	}
	g, err := gate.New(shell.Analyser{}, layers...)
	if err != nil {
		return nil, nil, errors.New(policyErrorText(err))
	}
	return g, sessions, nil
}

// policyErrorText is what a person reads of a policy error: located lines
// for policy problems, the message for the rest.
func policyErrorText(err error) string {
	var pe *gate.PolicyError
	if errors.As(err, &pe) {
		return pe.Error()
	}
	return strings.TrimSpace(airlock.ErrorMessage(err))
}
