package metrics_test

import (
	"context"
	"io"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
	"github.com/airlock-dev/airlock/metrics"
	"github.com/airlock-dev/airlock/sqlite"
)

// TestBudgetRemaining: /metrics reports what each budget a record took
// from has left, in uses or in its currency, a spent one at 0.
func TestBudgetRemaining(t *testing.T) {
	db := sqlite.NewDB(filepath.Join(t.TempDir(), "airlock.db"))
	if err := db.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	m := metrics.New(db)
	store := m.Instrument(db)
	uses := airlock.BudgetCharge{Key: "grant:g1", Budget: airlock.Budget{Uses: 2, Per: airlock.BudgetPerGrant}, Cost: 1}
	pay := airlock.BudgetCharge{Key: "rule:p/pay@bot", Budget: airlock.Budget{Sum: "amount", Max: 100_000_000, Currency: "USD", Per: airlock.BudgetPerDay}, Cost: 12_500_000}
	for _, c := range []airlock.BudgetCharge{uses, pay, uses, uses} {
		store.Append(t.Context(), airlocktest.ChargedRecord("bot", c)) // the third use of two is refused
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`airlock_budget_remaining{budget="grant:g1",per="grant",unit="uses"} 0`,
		`airlock_budget_remaining{budget="rule:p/pay@bot",per="day",unit="USD"} 87.5`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("no %s in:\n%s", want, grep(string(body), "airlock_budget"))
		}
	}
}

func grep(text, prefix string) string {
	var out []string
	for l := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
