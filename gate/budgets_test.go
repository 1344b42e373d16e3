package gate_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
	"github.com/airlock-dev/airlock/gate"
	"github.com/airlock-dev/airlock/shell"
	"github.com/airlock-dev/airlock/sqlite"
)

// budgetEnforcer is an enforcer over a fresh SQLite store and a policy
// whose rules carry budgets: `npm test` runs twice an hour per agent, and
// payments of up to 100 USD a day in all per agent.
func budgetEnforcer(t *testing.T, grants ...airlock.Grant) (*gate.Enforcer, *sqlite.DB) {
	t.Helper()
	p, err := gate.LoadPolicy("policy.yaml", []byte(`name: budgets
classifiers:
  - {tool: pay, class: payment, tier: spend}
rules:
  - {id: tests, tool: Bash, command: "npm test*", outcome: auto, budget: {uses: 2, per: hour}}
  - id: small-payments
    tool: pay
    outcome: auto
    max_tier: spend
    budget: {sum: args.amount, max: 100, currency: USD, per: day}
`))
	if err != nil {
		t.Fatal(err)
	}
	g, err := gate.New(shell.Analyser{}, p)
	if err != nil {
		t.Fatal(err)
	}
	g.SetGrants(grants, nil)
	db := sqlite.NewDB(filepath.Join(t.TempDir(), "airlock.db"))
	if err := db.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &gate.Enforcer{Gate: g, Store: db}, db
}

func pay(agent string, args map[string]any) airlock.Action {
	return airlock.Action{Agent: agent, Tool: "pay", Args: airlock.MustArgs(args)}
}

// TestRuleBudgetFallsThrough: a rule with a budget lets each agent run
// what it covers until the budget is spent; then the action asks,
// recorded and explained as the budget's doing, and explanations say what
// is left.
func TestRuleBudgetFallsThrough(t *testing.T) {
	e, _ := budgetEnforcer(t)
	ctx := t.Context()
	for i := range 2 {
		enf := e.Check(ctx, bash("coder-1", "npm test"))
		if !enf.Allowed || len(enf.Decision.Budgets) != 1 || enf.Decision.Budgets[0].Key != "rule:budgets/tests@coder-1" {
			t.Fatalf("use %d: allowed %v, budgets %+v", i+1, enf.Allowed, enf.Decision.Budgets)
		}
		if i == 0 {
			d, err := e.Explain(ctx, bash("coder-1", "npm test"))
			if err != nil || len(d.Budgets) != 1 || d.Budgets[0].Remaining() != 1 || !strings.Contains(d.Explain(), "1 use left") {
				t.Fatalf("explain after one use: %v\n%s", err, d.Explain())
			}
		}
	}
	enf := e.Check(ctx, bash("coder-1", "npm test"))
	if enf.Allowed || enf.Decision.Outcome != airlock.Ask || len(enf.Decision.Spent) != 1 ||
		enf.Decision.Spent[0].Key != "rule:budgets/tests@coder-1" || len(enf.Decision.Budgets) != 0 {
		t.Fatalf("the third use: %+v", enf.Decision)
	}
	if x := enf.Decision.Explain(); !strings.Contains(x, "spent:") || !strings.Contains(x, "2 uses per hour") {
		t.Fatalf("the explanation does not name the budget:\n%s", x)
	}
	d, err := e.Explain(ctx, bash("coder-1", "npm test"))
	if err != nil || d.Outcome != airlock.Ask || len(d.Spent) != 1 || d.Spent[0].Remaining() != 0 {
		t.Fatalf("explain once spent: %v %+v", err, d)
	}
	if enf := e.Check(ctx, bash("coder-2", "npm test")); !enf.Allowed {
		t.Fatalf("another agent's account is its own: %+v", enf.Decision)
	}
}

// TestSumBudget: a sum budget adds the amounts of what ran, refuses what
// would go past it, and covers nothing it cannot measure exactly: no
// amount, a negative one, one in another currency, a number written
// otherwise than as a plain decimal.
func TestSumBudget(t *testing.T) {
	e, _ := budgetEnforcer(t)
	ctx := t.Context()
	for _, c := range []struct {
		name string
		args map[string]any
		runs bool
	}{
		{"60 of 100", map[string]any{"amount": 60, "to": "acme"}, true},
		{"50 more would pass 100", map[string]any{"amount": 50, "to": "acme"}, false},
		{"39.99 fits", map[string]any{"amount": 39.99, "currency": "usd"}, true},
		{"as a plain decimal string", map[string]any{"amount": "0.01"}, true},
		{"nothing is left", map[string]any{"amount": "0.000001"}, false},
	} {
		enf := e.Check(ctx, pay("buyer", c.args))
		if enf.Allowed != c.runs {
			t.Fatalf("%s: allowed %v, want %v: %s", c.name, enf.Allowed, c.runs, enf.Decision.Explain())
		}
	}
	for _, c := range []struct {
		name string
		args map[string]any
	}{
		{"no amount", map[string]any{"to": "acme"}},
		{"a negative amount (a refund would grow the budget)", map[string]any{"amount": -5}},
		{"another currency", map[string]any{"amount": 1, "currency": "EUR"}},
		{"an amount with an exponent", map[string]any{"amount": "1e1"}},
		{"an amount with a sign", map[string]any{"amount": "+1"}},
		{"an amount that is not a number", map[string]any{"amount": true}},
		{"an amount as an object", map[string]any{"amount": map[string]any{"value": 1}}},
	} {
		enf := e.Check(ctx, pay("measured", c.args))
		if enf.Allowed || len(enf.Decision.ConditionErrors) == 0 || !strings.Contains(enf.Decision.ConditionErrors[0], "cannot measure") {
			t.Fatalf("%s: allowed %v, condition errors %q", c.name, enf.Allowed, enf.Decision.ConditionErrors)
		}
	}
	// A sub-micro-unit fraction is rounded up: the budget never
	// undercounts.
	if enf := e.Check(ctx, pay("rounding", map[string]any{"amount": "99.9999991"})); !enf.Allowed {
		t.Fatalf("99.9999991 of 100: %s", enf.Decision.Explain())
	}
	if enf := e.Check(ctx, pay("rounding", map[string]any{"amount": "0.000001"})); enf.Allowed {
		t.Fatal("99.9999991 was counted as 99.999999: a micro-unit too few")
	}
}

// TestGrantBudgetRace: 50 concurrent checks against a grant with a budget
// of 10 uses: exactly 10 run, as decided by the grant, and the other 40
// ask, naming the spent budget.
func TestGrantBudgetRace(t *testing.T) {
	now := time.Now()
	gr := commandGrant("coder-1", []string{"make"}, now)
	gr.Budget = &airlock.Budget{Uses: 10, Per: airlock.BudgetPerGrant}
	e, db := budgetEnforcer(t, gr)
	ran, asked := airlocktest.RaceChecks(t, []airlocktest.Checker{e}, bash("coder-1", "make build"), 50)
	if ran != 10 || asked != 40 {
		t.Fatalf("50 racing checks against a budget of 10: %d ran, %d asked", ran, asked)
	}
	if used, err := db.BudgetUsed(t.Context(), []airlock.BudgetCharge{{Key: gr.BudgetKey(), Budget: *gr.Budget}}); err != nil || used[0] != 10 {
		t.Fatalf("the store counts %v used (%v)", used, err)
	}
}

// TestAskLimit: past the ask limit an agent's new asks are parked as
// proposals with CodeAskLimited, which a reviewer may approve so that the
// retried action runs once; joining a pending request takes nothing from
// the limit, and another agent has its own.
func TestAskLimit(t *testing.T) {
	e, db := budgetEnforcer(t)
	e.AskLimit = &airlock.Budget{Uses: 2, Per: "10m"}
	ctx := t.Context()
	for i, command := range []string{"make a", "make b", "make a"} {
		if enf := e.Check(ctx, bash("flood", command)); !enf.Pending {
			t.Fatalf("ask %d (%s): %s, want pending", i+1, command, enf.Message)
		}
	}
	parked := e.Check(ctx, bash("flood", "make c"))
	if parked.Pending || parked.Allowed || parked.Code != airlock.CodeAskLimited || parked.Decision.Outcome != airlock.Suggest ||
		parked.Approval == nil || !strings.Contains(parked.Message, "asked too often (2 uses per 10m)") {
		t.Fatalf("the third new ask of 2 per 10m: %+v", parked)
	}
	if enf := e.Check(ctx, bash("calm", "make c")); !enf.Pending {
		t.Fatalf("another agent's ask: %s", enf.Message)
	}
	if _, err := db.ResolveApproval(ctx, airlock.Resolution{ApprovalID: parked.Approval.ID, Status: airlock.StatusApproved,
		ActionHash: parked.Approval.ActionHash, Reviewer: airlock.Reviewer{Name: "alice", Admin: true}, Surface: airlock.SurfaceCLI}); err != nil {
		t.Fatal(err)
	}
	if enf := e.Check(ctx, bash("flood", "make c")); !enf.Allowed {
		t.Fatalf("the parked ask, approved and retried: %s", enf.Message)
	}
}
