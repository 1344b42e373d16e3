package metrics

import (
	"context"
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

	mu    sync.Mutex
	seen  map[string]airlock.BudgetCharge // by key; Cost unused
	order []string                        // keys, least recently seen first
}

func newBudgets(store airlock.BudgetStore) *budgets {
	return &budgets{store: store, seen: map[string]airlock.BudgetCharge{},
		remaining: prometheus.NewDesc("airlock_budget_remaining",
			"What a budget has left in its window (uses, or the amount in its currency), for the budgets decisions took from (or found spent) since the server started (the 1000 most recent).",
			[]string{"budget", "per", "unit"}, nil)}
}

// saw notes the budgets of charges.
func (b *budgets) saw(charges []airlock.BudgetCharge) {
	if len(charges) == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range charges {
		if _, ok := b.seen[c.Key]; ok {
			for i, k := range b.order {
				if k == c.Key {
					b.order = append(b.order[:i], b.order[i+1:]...)
					break
				}
			}
		} else if len(b.order) == maxBudgets {
			delete(b.seen, b.order[0])
			b.order = b.order[1:]
		}
		b.seen[c.Key] = airlock.BudgetCharge{Key: c.Key, Budget: c.Budget}
		b.order = append(b.order, c.Key)
	}
}

func (b *budgets) Describe(ch chan<- *prometheus.Desc) { ch <- b.remaining }

func (b *budgets) Collect(ch chan<- prometheus.Metric) {
	b.mu.Lock()
	charges := make([]airlock.BudgetCharge, 0, len(b.order))
	for _, k := range b.order {
		charges = append(charges, b.seen[k])
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
