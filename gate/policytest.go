package gate

import (
	"context"
	"fmt"
	"strings"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/catalog"
)

// PolicyTest is an example action a policy carries with the outcome it must
// get. Tests run whenever a gate takes the policy (NewGate, Replace,
// PushSession) and with RunPolicyTests (`airlock policy test`).
type PolicyTest struct {
	Name   string
	Action airlock.Action
	Expect Expectation
	Pos    Pos
	policy *Policy
}

// Expectation is what a policy test requires of the decision. Zero fields
// are not checked.
type Expectation struct {
	Outcome    airlock.Outcome
	Rule       string // the deciding rule's id
	Source     string // "rule", "policy default", "tier default", ...
	Class      airlock.Class
	Tier       airlock.RiskTier
	NeedsHuman *bool
	Code       *string
	Overridden *bool
}

// TestResult is the outcome of one policy test.
type TestResult struct {
	Test     *PolicyTest
	Policy   *Policy
	Decision airlock.Decision
	// Failures lists what did not match; empty when the test passed.
	Failures []string
}

// Passed reports whether the decision met every expectation.
func (r TestResult) Passed() bool { return len(r.Failures) == 0 }

// String returns "PASS name" or "FAIL name: what differed", located.
func (r TestResult) String() string {
	loc := fmt.Sprintf("%s:%d:%d", r.Policy.file, r.Test.Pos.Line, r.Test.Pos.Col)
	if r.Passed() {
		return fmt.Sprintf("PASS %s (%s)", r.Test.Name, loc)
	}
	return fmt.Sprintf("FAIL %s (%s): %s", r.Test.Name, loc, strings.Join(r.Failures, "; "))
}

// RunPolicyTests runs every policy's tests against the stack from the top
// layer down to that policy, seeing inside shell commands with sh.
func RunPolicyTests(sh catalog.ShellAnalyser, layers ...*Policy) []TestResult {
	var out []TestResult
	for i := range layers {
		out = append(out, runTests(sh, layers[:i+1], i)...)
	}
	return out
}

// runTests runs the tests of s[i] against the stack s.
func runTests(sh catalog.ShellAnalyser, s stack, i int) []TestResult {
	p := s[i]
	out := make([]TestResult, 0, len(p.tests))
	for _, t := range p.tests {
		d := s.decide(context.Background(), sh, &t.Action)
		out = append(out, TestResult{Test: t, Policy: p, Decision: d, Failures: t.Expect.check(d)})
	}
	return out
}

func (e Expectation) check(d airlock.Decision) []string {
	var fails []string
	want := func(what string, got, want any) {
		fails = append(fails, fmt.Sprintf("%s is %v, want %v", what, got, want))
	}
	if e.Outcome != 0 && d.Outcome != e.Outcome {
		want("outcome", d.Outcome, e.Outcome)
	}
	if e.Rule != "" && (d.Rule == nil || d.Rule.ID != e.Rule) {
		want("deciding rule", d.DecidedBy(), e.Rule)
	}
	if e.Source != "" && d.Source != e.Source {
		want("source", d.Source, e.Source)
	}
	if e.Class != "" && d.Classification.Class != e.Class {
		want("class", d.Classification.Class, e.Class)
	}
	if e.Tier != 0 && d.Classification.Tier != e.Tier {
		want("tier", d.Classification.Tier, e.Tier)
	}
	if e.NeedsHuman != nil && d.NeedsHuman != *e.NeedsHuman {
		want("needs_human", d.NeedsHuman, *e.NeedsHuman)
	}
	if e.Code != nil && d.Code != *e.Code {
		want("code", fmt.Sprintf("%q", d.Code), fmt.Sprintf("%q", *e.Code))
	}
	if e.Overridden != nil && d.Overridden != *e.Overridden {
		want("overridden", d.Overridden, *e.Overridden)
	}
	if len(fails) > 0 {
		fails = append(fails, "decision: "+d.String())
	}
	return fails
}

// testFailures turns failed tests into a *PolicyError located at each test,
// or returns nil when all passed.
func testFailures(file string, results []TestResult) error {
	var problems []Problem
	for _, r := range results {
		if r.Passed() {
			continue
		}
		problems = append(problems, Problem{File: r.Policy.file, Line: r.Test.Pos.Line, Col: r.Test.Pos.Col,
			Message: fmt.Sprintf("test %q fails: %s", r.Test.Name, strings.Join(r.Failures, "; "))})
	}
	if problems == nil {
		return nil
	}
	if file == "" {
		file = problems[0].File
	}
	return &PolicyError{File: file, Problems: problems}
}
