package gate

import (
	"context"
	"fmt"

	"github.com/airlock-dev/airlock"
)

// ruleCharge is what the view of the action x decides takes from the
// budget of rule r, a rule of policy p: a rule's budget is each agent's
// account. It fails when the budget cannot measure the action (its amount
// is missing, not a plain decimal, or in another currency).
func ruleCharge(x *activation, r *rule) (airlock.BudgetCharge, error) {
	c := airlock.BudgetCharge{Key: ruleBudgetKey(r, x.a.Agent), Budget: *r.budget}
	var err error
	c.Cost, err = r.budget.Cost(x.argsMap())
	return c, err
}

// ruleBudgetKey is the key of agent's account of rule r's budget.
func ruleBudgetKey(r *rule, agent string) string {
	return "rule:" + r.ref.Policy + "/" + r.id + "@" + agent
}

// grantCharge is what the action x decides takes from grant gr's budget.
func grantCharge(x *activation, gr *airlock.Grant) (airlock.BudgetCharge, error) {
	c := airlock.BudgetCharge{Key: gr.BudgetKey(), Budget: *gr.Budget}
	var err error
	c.Cost, err = gr.Budget.Cost(x.argsMap())
	return c, err
}

// budgetApplies reports whether a budget lets its rule or grant apply to
// the view x decides: it can measure the action, and was not found spent.
// It notes in n why not.
func budgetApplies(x *activation, c airlock.BudgetCharge, err error, what string, n *notes) bool {
	if err != nil {
		n.errs = append(n.errs, fmt.Sprintf("%s: its budget (%s) cannot measure the action: %v; skipped (fail closed)", what, c.Budget.String(), err))
		return false
	}
	if s, ok := x.spent[c.Key]; ok {
		n.spent = append(n.spent, s)
		return false
	}
	return true
}

// DecideSpent is Decide with some budgets known spent (each, as a store
// refused it or an explanation read it): the grants and rules they bound
// do not apply, resolution goes on past them, and the decision lists them
// (Decision.Spent). The enforcer decides again this way when the store
// refuses a decision's charges.
func (g *Gate) DecideSpent(ctx context.Context, a airlock.Action, spent []airlock.BudgetCharge) airlock.Decision {
	h, err := a.Hash()
	if err != nil {
		return invalid(&a, err)
	}
	var m map[string]airlock.BudgetCharge
	if len(spent) > 0 {
		m = make(map[string]airlock.BudgetCharge, len(spent))
		for _, c := range spent {
			m[c.Key] = c
		}
	}
	d := g.state.Load().stackFor(a.SessionID).decideSpent(ctx, g.shell, &a, g.grants.Load(), m)
	d.ActionHash = h
	return d
}
