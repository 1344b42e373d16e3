package sqlite_test

// Benchmarks for issue 26's budget goal: a decision that takes from a
// budget, made durable through Enforcer.Enforce on a real SQLite file,
// costs at most 1.2× a plain auto decision. Each pairs, in one run and on
// one store, the plain decision of BenchmarkStoreEnforceAuto with the same
// decision taken by a rule with a budget, by a grant with no budget and by
// the grant with a budget, in rotating order, so that all four see the
// same disk at the same moments:
//
//	go test -run '^$' -bench EnforceBudget -benchtime 3s -count 3 ./sqlite
//
// Figures and goals are in docs/BENCHMARKS.md, "Budgets (issue 26)".

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/gate"
	"github.com/airlock-dev/airlock/shell"
)

// benchBudgetUses is a budget that never runs out in a benchmark: every
// decision takes a use, and the account's window keeps every one.
const benchBudgetUses = 1_000_000_000

// benchBudgetPolicy is benchPolicy whose rule carries a budget.
var benchBudgetPolicy = strings.Replace(benchPolicy, "name: bench\n", "name: bench-budget\n", 1) +
	"    budget: {uses: " + strconv.Itoa(benchBudgetUses) + ", per: day}\n"

// benchGrantPolicy is benchPolicy whose writes ask, but for a standing
// grant (benchGrant).
var benchGrantPolicy = strings.Replace(strings.Replace(benchPolicy, "name: bench\n", "name: bench-grant\n", 1),
	"outcome: auto", "outcome: ask", 1)

// benchGrant lets coder-1 write under the workspace, within budget when
// it is not nil.
func benchGrant(budget *airlock.Budget) airlock.Grant {
	return airlock.Grant{ID: "0193a5b0-0000-7000-8000-000000000026", Agent: "coder-1", Tool: "write_file",
		Pattern: airlock.GrantPattern{Kind: airlock.PatternPath, Path: "/home/dev/app"},
		Outcome: airlock.Auto, MaxTier: airlock.TierWrite, GrantedBy: "alice",
		Expires: time.Now().Add(24 * time.Hour), Budget: budget}
}

// budgetVariant is one way of deciding benchAction auto, with its enforcer
// over the shared store.
type budgetVariant struct {
	name string
	e    *gate.Enforcer
	// charge is the budget the variant's decisions take from; nil for
	// none.
	charge *airlock.BudgetCharge
}

// Budget variants, by their index in openBudgetVariants' answer.
const (
	variantAuto        = iota // benchPolicy's rule: the plain auto decision
	variantBudget             // the same rule with a budget of uses per day
	variantGrant              // a grant with no budget, the rule asking
	variantGrantBudget        // the grant with a budget of uses for its life
)

// openBudgetVariants opens a fresh store with openBenchEnforcer and an
// enforcer over it per variant, each deciding benchAction auto. It checks
// that each variant decides as it should and takes from its budget.
func openBudgetVariants(b *testing.B) (vs []budgetVariant, commits *atomic.Int64) {
	b.Helper()
	auto, commits, _ := openBenchEnforcer(b)
	vs = []budgetVariant{{name: "auto", e: auto}}
	for _, v := range []struct {
		name, policy string
		grants       []airlock.Grant
	}{
		{"budget", benchBudgetPolicy, nil},
		{"grant", benchGrantPolicy, []airlock.Grant{benchGrant(nil)}},
		{"grant-budget", benchGrantPolicy, []airlock.Grant{benchGrant(&airlock.Budget{Uses: benchBudgetUses, Per: airlock.BudgetPerGrant})}},
	} {
		p, err := gate.LoadPolicy(v.name+".yaml", []byte(v.policy))
		if err != nil {
			b.Fatal(err)
		}
		g, err := gate.New(shell.Analyser{}, p)
		if err != nil {
			b.Fatal(err)
		}
		g.SetGrants(v.grants, nil)
		vs = append(vs, budgetVariant{name: v.name, e: &gate.Enforcer{Gate: g, Store: auto.Store}})
	}
	ctx := context.Background()
	for k := range vs {
		v := &vs[k]
		enf := v.e.Enforce(ctx, benchAction(0))
		d := &enf.Decision
		budgeted := k == variantBudget || k == variantGrantBudget
		switch {
		case !enf.Allowed || enf.Label != airlock.LabelAuto || enf.Seq == 0:
			b.Fatalf("%s: the bench action is not recorded as auto: %+v", v.name, enf)
		case budgeted != (len(d.Budgets) == 1) || len(d.Budgets) > 1:
			b.Fatalf("%s: the decision takes from budgets %+v", v.name, d.Budgets)
		case (k >= variantGrant) != (d.Grant != nil):
			b.Fatalf("%s: decided by %s", v.name, d.DecidedBy())
		}
		if budgeted {
			v.charge = &d.Budgets[0]
			if used := windowUses(b, v); used != 1 {
				b.Fatalf("%s: the store counts %d uses of %s after one decision", v.name, used, v.charge.Key)
			}
		}
	}
	return vs, commits
}

// reportBudgetRatios reports, from each variant's figure (a p50, or the
// median of paired ratios), the ratios the goal reads: the budgeted rule's
// and the budgeted grant's to the plain auto decision's (x-auto-budget,
// x-auto-grant-budget), and the budgeted grant's to the same grant's with
// no budget (x-grant-grant-budget), what its budget alone adds.
func reportBudgetRatios(b *testing.B, ratio func(k, base int) float64) {
	b.ReportMetric(ratio(variantBudget, variantAuto), "x-auto-budget")
	b.ReportMetric(ratio(variantGrantBudget, variantAuto), "x-auto-grant-budget")
	b.ReportMetric(ratio(variantGrantBudget, variantGrant), "x-grant-grant-budget")
}

// windowUses is what the variant's budget window holds now: its uses.
func windowUses(b *testing.B, v *budgetVariant) int64 {
	used, err := v.e.Store.BudgetUsed(context.Background(), []airlock.BudgetCharge{*v.charge})
	if err != nil {
		b.Fatal(err)
	}
	return used[0]
}

// reportWindows reports how many uses each budgeted variant's window held
// at the end, as <variant>-window-uses.
func reportWindows(b *testing.B, vs []budgetVariant) {
	for i := range vs {
		if vs[i].charge != nil {
			b.ReportMetric(float64(windowUses(b, &vs[i])), vs[i].name+"-window-uses")
		}
	}
}

// BenchmarkStoreEnforceBudgetPaired is one caller: each op is benchAction
// decided auto and made durable four times on one store — by a rule with
// no budget (auto), by the same rule with a budget of uses per day
// (budget), by a grant with no budget (grant) and by the grant with a
// budget of uses for its life (grant-budget) — in an order that rotates
// every op. Every budgeted decision writes a use, so the windows grow as
// the benchmark runs (<variant>-window-uses: what they held at the end).
// Goal: a budgeted decision's p50 at most 1.2× the plain auto decision's
// (x-auto-budget, x-auto-grant-budget).
func BenchmarkStoreEnforceBudgetPaired(b *testing.B) {
	vs, _ := openBudgetVariants(b)
	ctx := context.Background()
	a := benchAction(1)
	lat := make([][]time.Duration, len(vs))
	for k := range lat {
		lat[k] = make([]time.Duration, b.N)
	}
	b.ResetTimer()
	for i := range b.N {
		for j := range vs {
			k := (i + j) % len(vs)
			t0 := time.Now()
			enf := vs[k].e.Enforce(ctx, a)
			lat[k][i] = time.Since(t0)
			if !enf.Allowed {
				b.Fatalf("%s: refused: %+v", vs[k].name, enf)
			}
		}
	}
	b.StopTimer()
	p50 := make([]float64, len(vs))
	for k := range vs {
		p50[k] = reportLatency(b, lat[k], vs[k].name+"-")
	}
	reportBudgetRatios(b, func(k, base int) float64 { return p50[k] / p50[base] })
	reportWindows(b, vs)
}

// BenchmarkStoreEnforceBudget64Paired is 64 concurrent callers: turns of
// one round of the callers' decisions (enforceConcurrently, 20 per caller)
// per variant of BenchmarkStoreEnforceBudgetPaired, in an order that
// rotates every turn, on one store. <variant>-decisions/s is each
// variant's rate over its rounds, <variant>-batch its decisions per
// commit. The ratios are medians over the turns of a round's time to the
// base variant's round in the same turn: the machine's speed drifts, a
// turn's rounds see it alike. Goal: at most 1.2 (x-auto-budget,
// x-auto-grant-budget).
func BenchmarkStoreEnforceBudget64Paired(b *testing.B) {
	vs, commits := openBudgetVariants(b)
	const round = 20 * enforceCallers
	lat := make([]time.Duration, round)
	elapsed := make([]time.Duration, len(vs))
	committed := make([]int64, len(vs))
	var turns [][]time.Duration // each turn's round time per variant
	b.ResetTimer()
	for turn, done := 0, 0; done < b.N; turn++ {
		n := min(round, b.N-done)
		t := make([]time.Duration, len(vs))
		for j := range vs {
			k := (turn + j) % len(vs)
			before := commits.Load()
			t[k] = enforceConcurrently(b, vs[k].e, lat[:n])
			elapsed[k] += t[k]
			committed[k] += commits.Load() - before
		}
		turns = append(turns, t)
		done += n
	}
	b.StopTimer()
	for k := range vs {
		b.ReportMetric(float64(b.N)/elapsed[k].Seconds(), vs[k].name+"-decisions/s")
		if committed[k] > 0 {
			b.ReportMetric(float64(b.N)/float64(committed[k]), vs[k].name+"-batch")
		}
	}
	reportBudgetRatios(b, func(k, base int) float64 {
		rs := make([]float64, len(turns))
		for i, t := range turns {
			rs[i] = t[k].Seconds() / t[base].Seconds()
		}
		slices.Sort(rs)
		return rs[len(rs)/2]
	})
	reportWindows(b, vs)
}
