package airlocktest

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
)

// ChargedRecord is the record of one decision of agent that takes charges
// from their budgets.
func ChargedRecord(agent string, charges ...airlock.BudgetCharge) airlock.Record {
	return airlock.Record{Events: []airlock.Event{Event(airlock.EventDecision, agent)}, Charges: charges}
}

// RaceBudget has n goroutines append, at once, records that each take
// one use of charge's budget, stores[i%len(stores)] the i-th's: it
// returns how many were recorded. Every other one must be refused with a
// *BudgetSpent naming the budget.
func RaceBudget(t testing.TB, stores []airlock.Store, c airlock.BudgetCharge, n int) int {
	t.Helper()
	var wins atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			<-start
			_, err := stores[i%len(stores)].Append(t.Context(), ChargedRecord("racer", c))
			switch s := airlock.AsBudgetSpent(err); {
			case err == nil:
				wins.Add(1)
			case s == nil || s.Charge.Key != c.Key || airlock.ErrorCode(err) != airlock.ECONFLICT:
				errs <- err
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a racer got %v, want a *BudgetSpent of %s (ECONFLICT)", err, c.Key)
	}
	return int(wins.Load())
}

// testBudgets: a record's charges are taken with it, or the whole record
// is refused, nothing written, with a *BudgetSpent naming the budget;
// charges of one record to one budget add up; 50 racing records for a
// budget of 10 uses give exactly 10; a rolling window frees what left it;
// a sum budget adds amounts; a grant keeps its budget; old uses are
// pruned.
func testBudgets(t *testing.T, s airlock.Store, clock *Clock) {
	uses := airlock.BudgetCharge{Key: "rule:p/deploys@bot", Budget: airlock.Budget{Uses: 3, Per: airlock.BudgetPerHour}, Cost: 1}
	for i := range 3 {
		if _, err := s.Append(ctx(t), ChargedRecord("bot", uses)); err != nil {
			t.Fatalf("use %d of 3: %v", i+1, err)
		}
	}
	head, _ := s.Head(ctx(t))
	_, err := s.Append(ctx(t), ChargedRecord("bot", uses))
	spent := airlock.AsBudgetSpent(err)
	if spent == nil || spent.Used != 3 || airlock.ErrorCode(err) != airlock.ECONFLICT {
		t.Fatalf("a 4th use of 3 per hour: %v, want a *BudgetSpent with 3 used", err)
	}
	if h, _ := s.Head(ctx(t)); h != head {
		t.Fatalf("a refused record wrote events: head %d → %d", head, h)
	}
	if used, err := s.BudgetUsed(ctx(t), []airlock.BudgetCharge{uses}); err != nil || used[0] != 3 {
		t.Fatalf("BudgetUsed = %v, %v; want [3]", used, err)
	}
	// Another agent's account, another rule's, are their own.
	other := uses
	other.Key = "rule:p/deploys@other"
	if _, err := s.Append(ctx(t), ChargedRecord("other", other)); err != nil {
		t.Fatalf("another account: %v", err)
	}
	// A record whose second charge overspends writes nothing, the first's
	// use included.
	fresh := airlock.BudgetCharge{Key: "grant:fresh", Budget: airlock.Budget{Uses: 5, Per: airlock.BudgetPerDay}, Cost: 1}
	if _, err := s.Append(ctx(t), ChargedRecord("bot", fresh, uses)); airlock.AsBudgetSpent(err) == nil {
		t.Fatalf("a record with one spent charge: %v, want refused", err)
	}
	if used, _ := s.BudgetUsed(ctx(t), []airlock.BudgetCharge{fresh}); used[0] != 0 {
		t.Fatalf("the refused record's other charge was taken: %d used", used[0])
	}
	// Two charges of one record to one budget add up: 4 of 5 left is not
	// enough for 2 + 3.
	two := fresh
	two.Cost = 2
	three := fresh
	three.Cost = 3
	if _, err := s.Append(ctx(t), ChargedRecord("bot", fresh, two, three)); airlock.AsBudgetSpent(err) == nil {
		t.Fatalf("1+2+3 uses of a budget of 5 in one record: %v, want refused", err)
	}
	if _, err := s.Append(ctx(t), ChargedRecord("bot", two, three)); err != nil {
		t.Fatalf("2+3 uses of a budget of 5: %v", err)
	}

	// The window rolls: an hour on, the first uses have left it.
	clock.Advance(61 * time.Minute)
	if _, err := s.Append(ctx(t), ChargedRecord("bot", uses)); err != nil {
		t.Fatalf("after the window rolled: %v", err)
	}

	// A sum: amounts in micro-units add up to the max and no further.
	sum := airlock.BudgetCharge{Key: "rule:p/pay@bot", Budget: airlock.Budget{Sum: "amount", Max: 100_000_000, Currency: "USD", Per: airlock.BudgetPerDay}}
	for _, cost := range []int64{60_000_000, 39_500_000} {
		c := sum
		c.Cost = cost
		if _, err := s.Append(ctx(t), ChargedRecord("bot", c)); err != nil {
			t.Fatalf("spend %d of 100 USD: %v", cost, err)
		}
	}
	over := sum
	over.Cost = 500_001
	if _, err := s.Append(ctx(t), ChargedRecord("bot", over)); airlock.AsBudgetSpent(err) == nil {
		t.Fatalf("0.500001 over 0.5 left: %v, want refused", err)
	}
	over.Cost = 500_000
	if _, err := s.Append(ctx(t), ChargedRecord("bot", over)); err != nil {
		t.Fatalf("exactly what is left: %v", err)
	}

	// Malformed charges are refused before anything is written.
	bad := uses
	bad.Cost = -1
	if _, err := s.Append(ctx(t), ChargedRecord("bot", bad)); airlock.ErrorCode(err) != airlock.EINVALID {
		t.Fatalf("a negative cost: %v, want EINVALID", err)
	}

	// 50 racing records for the last 10 uses: exactly 10 are recorded.
	race := airlock.BudgetCharge{Key: "grant:race", Budget: airlock.Budget{Uses: 10, Per: airlock.BudgetPerGrant}, Cost: 1}
	if got := RaceBudget(t, []airlock.Store{s}, race, 50); got != 10 {
		t.Fatalf("50 racing uses of a budget of 10: %d recorded", got)
	}

	// A new request takes its record's charges; joining it takes none; a
	// spent one refuses a new request, writing nothing.
	asks := airlock.BudgetCharge{Key: "asks:bot", Budget: airlock.Budget{Uses: 2, Per: "10m"}, Cost: 1}
	for i, command := range []string{"make a", "make a", "make b"} {
		rec := airlock.Record{Events: []airlock.Event{Event(airlock.EventDecision, "bot")}, Charges: []airlock.BudgetCharge{asks}}
		if _, joined, err := s.RequestApproval(ctx(t), NewApproval("bot", command, airlock.Ask, time.Hour), rec); err != nil || joined != (i == 1) {
			t.Fatalf("request %d (%s): joined %v, %v", i+1, command, joined, err)
		}
	}
	head, _ = s.Head(ctx(t))
	rec := airlock.Record{Events: []airlock.Event{Event(airlock.EventDecision, "bot")}, Charges: []airlock.BudgetCharge{asks}}
	if _, _, err := s.RequestApproval(ctx(t), NewApproval("bot", "make c", airlock.Ask, time.Hour), rec); airlock.AsBudgetSpent(err) == nil {
		t.Fatalf("a third new request of 2 per 10m: %v, want a *BudgetSpent", err)
	}
	if h, _ := s.Head(ctx(t)); h != head {
		t.Fatalf("a refused request wrote events: head %d → %d", head, h)
	}
	if page, _ := s.FindApprovals(ctx(t), airlock.ApprovalFilter{Agent: "bot"}); len(page.Approvals) != 2 {
		t.Fatalf("%d requests of bot, want 2", len(page.Approvals))
	}

	// A grant keeps its budget.
	g := newGrant("coder-1", clock.Now(), time.Hour)
	g.Budget = &airlock.Budget{Uses: 10, Per: airlock.BudgetPerGrant}
	if _, err := s.CreateGrant(ctx(t), g); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Grant(ctx(t), g.ID); err != nil || got.Budget == nil || *got.Budget != *g.Budget {
		t.Fatalf("grant read back with budget %+v, %v; want %+v", got.Budget, err, g.Budget)
	}

	// Pruning: a rule's uses older than a day go, a live grant's stay, an
	// expired grant's go.
	gc := airlock.BudgetCharge{Key: g.BudgetKey(), Budget: *g.Budget, Cost: 1}
	if _, err := s.Append(ctx(t), ChargedRecord("coder-1", gc)); err != nil {
		t.Fatal(err)
	}
	clock.Advance(30 * time.Minute)
	if _, err := s.PruneBudgets(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if used, _ := s.BudgetUsed(ctx(t), []airlock.BudgetCharge{gc, fresh}); used[0] != 1 || used[1] != 5 {
		t.Fatalf("pruned too much: %v used, want [1 5]", used)
	}
	clock.Advance(24 * time.Hour)
	n, err := s.PruneBudgets(ctx(t))
	if err != nil || n == 0 {
		t.Fatalf("prune after a day: %d, %v", n, err)
	}
	if used, _ := s.BudgetUsed(ctx(t), []airlock.BudgetCharge{gc, race}); used[0] != 0 || used[1] != 10 {
		t.Fatalf("after the grant expired: %v used, want [0 10] (grant:race names no grant in the store, so it stays)", used)
	}
}

// A Checker checks actions without blocking (gate.Enforcer, a client).
type Checker interface {
	Check(ctx context.Context, a airlock.Action) airlock.Enforcement
}

// RaceChecks runs n checks of a at once, the i-th with checkers[i%len]: it
// returns how many ran by a standing grant and how many ask, naming the
// spent budget. Any other result fails t.
func RaceChecks(t testing.TB, checkers []Checker, a airlock.Action, n int) (ran, asked int) {
	t.Helper()
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			enf := checkers[i%len(checkers)].Check(context.Background(), a)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case enf.Allowed && enf.Decision.Grant != nil:
				ran++
			case enf.Decision.Outcome == airlock.Ask && len(enf.Decision.Spent) == 1:
				asked++
			default:
				t.Errorf("a check got %s: %s", enf.Decision.Outcome, enf.Message)
			}
		})
	}
	close(start)
	wg.Wait()
	return ran, asked
}
