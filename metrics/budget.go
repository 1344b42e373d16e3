package metrics

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/prometheus/client_golang/prometheus"
)

// maxBudgets bounds how many budgets' accounts the metrics follow: the
// most recently charged or found spent.
const maxBudgets = 1000

// budgets follows the budgets' accounts that decisions' records took from
// (whether or not the store found them spent), and reports at each scrape what each has left in its window.
type budgets struct {
	store     airlock.BudgetStore
	remaining *prometheus.Desc

	mu   sync.Mutex
	seen map[string]seenBudget // by key
	tick uint64                // counts the charges seen, to age them
}

// seenBudget is a budget followed, and when it was last charged.
type seenBudget struct {
	budget airlock.Budget
	last   uint64
}

func newBudgets(store airlock.BudgetStore) *budgets {
	return &budgets{store: store, seen: map[string]seenBudget{},
		remaining: prometheus.NewDesc("airlock_budget_remaining",
			"What a budget has left in its window (uses, or the amount in its currency), for the budgets decisions took from (or found spent) since the server started (the 1000 most recent).",
			[]string{"budget", "per", "unit"}, nil)}
}

// saw notes the budgets of charges: a map write each, on an append's path;
// past maxBudgets followed, the least recently charged is forgotten.
func (b *budgets) saw(charges []airlock.BudgetCharge) {
	if len(charges) == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range charges {
		b.tick++
		b.seen[c.Key] = seenBudget{budget: c.Budget, last: b.tick}
	}
	for len(b.seen) > maxBudgets {
		oldest, at := "", uint64(math.MaxUint64)
		for k, s := range b.seen {
			if s.last < at {
				oldest, at = k, s.last
			}
		}
		delete(b.seen, oldest)
	}
}

func (b *budgets) Describe(ch chan<- *prometheus.Desc) { ch <- b.remaining }

func (b *budgets) Collect(ch chan<- prometheus.Metric) {
	b.mu.Lock()
	charges := make([]airlock.BudgetCharge, 0, len(b.seen))
	for k, s := range b.seen {
		charges = append(charges, airlock.BudgetCharge{Key: k, Budget: s.budget})
	}
	b.mu.Unlock()
	if len(charges) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	used, err := b.store.BudgetUsed(ctx, charges)
	if err != nil {
		return // the store cannot say: no figure rather than a wrong one
	}
	for i := range charges {
		c := &charges[i]
		c.Used = used[i]
		left, unit := float64(c.Remaining()), "uses"
		if c.Budget.Sum != "" {
			left, unit = float64(c.Remaining())/1e6, c.Budget.Currency
			if unit == "" {
				unit = "amount"
			}
		}
		ch <- prometheus.MustNewConstMetric(b.remaining, prometheus.GaugeValue, left, c.Key, c.Budget.Per, unit)
	}
}
