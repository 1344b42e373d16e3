package airlock_test

import (
	"testing"

	"github.com/airlock-dev/airlock"
)

func TestParseBudget(t *testing.T) {
	for _, c := range []struct {
		in   string
		want airlock.Budget
	}{
		{"10", airlock.Budget{Uses: 10, Per: "grant"}},
		{"10/day", airlock.Budget{Uses: 10, Per: "day"}},
		{" 3 / hour ", airlock.Budget{Uses: 3, Per: "hour"}},
		{"amount<=500/day", airlock.Budget{Sum: "amount", Max: 500_000_000, Per: "day"}},
		{"payment.amount<=12.5 EUR/grant", airlock.Budget{Sum: "payment.amount", Max: 12_500_000, Currency: "EUR", Per: "grant"}},
	} {
		got, err := airlock.ParseBudget(c.in)
		if err != nil || *got != c.want {
			t.Errorf("ParseBudget(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"", "0", "-1/day", "10/week", "ten", "amount<=/day", "amount<=-5/day", "amount<=1e3/day",
		"<=5/day", "a..b<=5/day", "amount<=5 USD extra/day"} {
		if b, err := airlock.ParseBudget(in); err == nil {
			t.Errorf("ParseBudget(%q) = %+v, want an error", in, b)
		}
	}
}

func TestAmount(t *testing.T) {
	for _, c := range []struct {
		in   string
		want airlock.Amount
		out  string
	}{
		{"0", 0, "0"},
		{"500", 500_000_000, "500"},
		{"12.50", 12_500_000, "12.5"},
		{"0.000001", 1, "0.000001"},
		{"0.0000001", 1, "0.000001"}, // rounded up
		{"1.0000000", 1_000_000, "1"},
	} {
		got, err := airlock.ParseAmount(c.in)
		if err != nil || got != c.want || got.String() != c.out {
			t.Errorf("ParseAmount(%q) = %d (%s), %v; want %d (%s)", c.in, got, got, err, c.want, c.out)
		}
	}
	for _, in := range []string{"", "-1", "+1", "1e3", "1.", ".5", "1,000", " 1", "0x10", "99999999999999999999"} {
		if _, err := airlock.ParseAmount(in); err == nil {
			t.Errorf("ParseAmount(%q) accepted", in)
		}
	}
}
