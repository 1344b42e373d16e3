package airlock

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// A Budget bounds how much a standing grant or a policy rule lets run
// without a person (docs/POLICY.md, "Budgets"): at most Uses actions, or
// at most Max of an argument's amounts (Sum) added up, within a window.
// Once it is spent, the grant or rule no longer applies and the action
// falls through to what comes next (usually ask), with an explanation
// that names the budget.
type Budget struct {
	// Uses is the most actions it lets run in a window; 0 when it bounds a
	// sum instead.
	Uses int64 `json:"uses,omitempty"`
	// Sum is the argument whose amounts it adds up ("amount",
	// "payment.amount": object members, by dots); "" when it counts uses.
	Sum string `json:"sum,omitempty"`
	// Max is the most the amounts may add up to in a window.
	Max Amount `json:"max,omitzero"`
	// Currency, when set, is the currency of Max: an action whose
	// "currency" argument (beside the amount) names another is not covered.
	Currency string `json:"currency,omitempty"`
	// Per is the window: BudgetPerHour, BudgetPerDay or a duration from
	// a minute to a day ("10m", "12h") are rolling windows ending now;
	// BudgetPerGrant is a grant's whole life.
	Per string `json:"per"`
}

// Budget windows.
const (
	BudgetPerHour  = "hour"
	BudgetPerDay   = "day"
	BudgetPerGrant = "grant"
)

// MaxBudgetWindow is the longest rolling window a budget counts.
const MaxBudgetWindow = 24 * time.Hour

// Window is how far back the budget counts: 0 for a grant's whole life.
func (b *Budget) Window() time.Duration {
	switch b.Per {
	case BudgetPerHour:
		return time.Hour
	case BudgetPerDay:
		return MaxBudgetWindow
	case BudgetPerGrant:
		return 0
	}
	d, _ := time.ParseDuration(b.Per) // Validate made sure it parses
	return d
}

// Limit is the budget's bound in the units a charge counts: uses, or
// micro-units of the amount.
func (b *Budget) Limit() int64 {
	if b.Sum != "" {
		return int64(b.Max)
	}
	return b.Uses
}

// Validate reports whether the budget is well formed; grant says whether it
// belongs to a grant (the only owner a per-grant window has).
func (b *Budget) Validate(grant bool) error {
	switch {
	case b.Uses < 0 || b.Max < 0:
		return Errorf(EINVALID, "budget: a bound cannot be negative")
	case (b.Uses > 0) == (b.Sum != ""):
		return Errorf(EINVALID, "budget: give either uses (a count) or sum and max (an argument's amounts), not both nor neither")
	case b.Sum != "" && b.Max <= 0:
		return Errorf(EINVALID, "budget: sum %q needs a positive max", b.Sum)
	case b.Sum == "" && (b.Max != 0 || b.Currency != ""):
		return Errorf(EINVALID, "budget: max and currency go with sum")
	case b.Sum != "" && !validArgPath(b.Sum):
		return Errorf(EINVALID, "budget: sum %q is not an argument's name (members joined by dots: amount, payment.amount)", b.Sum)
	case len(b.Currency) > 16:
		return Errorf(EINVALID, "budget: currency %q is longer than 16 bytes", b.Currency)
	}
	switch b.Per {
	case BudgetPerHour, BudgetPerDay:
	case BudgetPerGrant:
		if !grant {
			return Errorf(EINVALID, "budget: per grant is a grant's window; a rule's budget is per hour, per day or per a duration (10m)")
		}
	default:
		if d, err := time.ParseDuration(b.Per); err == nil {
			if d < time.Minute || d > MaxBudgetWindow {
				return Errorf(EINVALID, "budget: per %s: a window lasts from a minute to a day", b.Per)
			}
			return nil
		}
		valid := []string{BudgetPerHour, BudgetPerDay}
		if grant {
			valid = append(valid, BudgetPerGrant)
		}
		return Errorf(EINVALID, "budget: per %q%s, or a duration from 1m to 24h", b.Per, DidYouMean(b.Per, valid))
	}
	return nil
}

// validArgPath reports whether p names an argument: non-empty members
// joined by dots, an optional leading "args.".
func validArgPath(p string) bool {
	p = strings.TrimPrefix(p, "args.")
	if p == "" || len(p) > 200 {
		return false
	}
	for m := range strings.SplitSeq(p, ".") {
		if m == "" {
			return false
		}
	}
	return true
}

// String says what the budget allows: "10 uses per day", "500 USD of
// amount per day", "3 uses per grant", "30 uses per 10m".
func (b *Budget) String() string {
	per := " per " + b.Per
	if d, err := time.ParseDuration(b.Per); err == nil {
		per = " per " + FormatDuration(d)
	}
	if b.Sum == "" {
		return strconv.FormatInt(b.Uses, 10) + " uses" + per
	}
	cur := ""
	if b.Currency != "" {
		cur = " " + b.Currency
	}
	return b.Max.String() + cur + " of " + strings.TrimPrefix(b.Sum, "args.") + per
}

// Cost measures what the action whose decoded arguments are args costs the
// budget: 1 use, or the amount of its Sum argument in micro-units. It
// fails, so that the budget covers nothing, when the amount is missing,
// not a plain non-negative decimal (a JSON number, or a string of digits
// with an optional fraction), or in another currency than the budget's.
func (b *Budget) Cost(args map[string]any) (int64, error) {
	if b.Sum == "" {
		return 1, nil
	}
	path := strings.Split(strings.TrimPrefix(b.Sum, "args."), ".")
	parent := args
	for _, m := range path[:len(path)-1] {
		next, ok := parent[m].(map[string]any)
		if !ok {
			return 0, fmt.Errorf("the action has no argument %s", b.Sum)
		}
		parent = next
	}
	v, ok := parent[path[len(path)-1]]
	if !ok {
		return 0, fmt.Errorf("the action has no argument %s", b.Sum)
	}
	amt, err := amountOf(v)
	if err != nil {
		return 0, fmt.Errorf("argument %s: %v", b.Sum, err)
	}
	if b.Currency != "" {
		if c, ok := parent["currency"]; ok {
			s, _ := c.(string)
			if !strings.EqualFold(strings.TrimSpace(s), b.Currency) {
				return 0, fmt.Errorf("the amount is in %v, the budget in %s", c, b.Currency)
			}
		}
	}
	return int64(amt), nil
}

// amountOf reads an argument's amount exactly, rounded up to a micro-unit.
func amountOf(v any) (Amount, error) {
	switch n := v.(type) {
	case int64:
		if n < 0 {
			return 0, fmt.Errorf("%d is negative", n)
		}
		return ParseAmount(strconv.FormatInt(n, 10))
	case float64:
		if n < 0 || math.IsNaN(n) || math.IsInf(n, 0) {
			return 0, fmt.Errorf("%v is not a non-negative amount", n)
		}
		return ParseAmount(strconv.FormatFloat(n, 'f', -1, 64))
	case string:
		return ParseAmount(n)
	}
	return 0, fmt.Errorf("%v is not a number", v)
}

// An Amount is a non-negative decimal amount in micro-units (millionths):
// exact, never a float.
type Amount int64

// amountScale is the number of micro-units in one unit.
const amountScale = 1_000_000

// ParseAmount reads a plain decimal ("500", "12.5"), rounding a fraction
// finer than a micro-unit up. Signs, exponents, spaces and separators are
// refused.
func ParseAmount(s string) (Amount, error) {
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" || !digits(whole) || strings.Contains(s, ".") && (frac == "" || !digits(frac)) {
		return 0, fmt.Errorf("%q is not a plain non-negative decimal", s)
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || w > math.MaxInt64/amountScale-1 {
		return 0, fmt.Errorf("%q is too large", s)
	}
	var f int64
	for i := range 6 {
		f *= 10
		if i < len(frac) {
			f += int64(frac[i] - '0')
		}
	}
	if len(frac) > 6 && strings.Trim(frac[6:], "0") != "" {
		f++ // round up: a budget never undercounts
	}
	return Amount(w*amountScale + f), nil
}

func digits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// String writes the amount as a plain decimal, without trailing zeros.
func (a Amount) String() string {
	s := strconv.FormatInt(int64(a)/amountScale, 10)
	if f := int64(a) % amountScale; f != 0 {
		s += strings.TrimRight(fmt.Sprintf(".%06d", f), "0")
	}
	return s
}

// MarshalJSON writes the amount as a JSON number.
func (a Amount) MarshalJSON() ([]byte, error) { return []byte(a.String()), nil }

// UnmarshalJSON reads a JSON number or a string holding a plain decimal.
func (a *Amount) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	v, err := ParseAmount(s)
	if err != nil {
		return Errorf(EINVALID, "amount %s", err)
	}
	*a = v
	return nil
}

// A BudgetCharge is what running one decided action takes from one
// budget. A decision that runs carries its charges (Decision.Budgets);
// the store consumes them with the decision's record, atomically, or
// refuses the record with a *BudgetSpent.
type BudgetCharge struct {
	// Key identifies the budget's account: "grant:<id>", or
	// "rule:<policy>/<rule>@<agent>" (a rule's budget is each agent's).
	Key string `json:"key"`
	// Budget is the budget as its grant or rule states it.
	Budget Budget `json:"budget"`
	// Cost is what this action takes (1, or micro-units of the amount).
	Cost int64 `json:"cost"`
	// Used is what the window had used when it was read, and Read when:
	// set by an explanation (Enforcer.Explain), not by a decision.
	Used int64     `json:"used,omitempty"`
	Read time.Time `json:"read,omitzero"`
}

// Remaining is what the window had left when it was read.
func (c *BudgetCharge) Remaining() int64 { return max(0, c.Budget.Limit()-c.Used) }

// String says what the charge takes and, once read, what is left: "1 of
// 10 uses per day (rule:… ) — 7 left".
func (c *BudgetCharge) String() string {
	s := "budget " + c.Key + " (" + c.Budget.String() + ")"
	if c.Read.IsZero() {
		return s
	}
	return s + ": " + c.units(c.Remaining()) + " left"
}

// units writes n in the budget's units.
func (c *BudgetCharge) units(n int64) string {
	if c.Budget.Sum == "" {
		if n == 1 {
			return "1 use"
		}
		return strconv.FormatInt(n, 10) + " uses"
	}
	return Amount(n).String()
}

// BudgetSpent is a store's refusal to record a decision because one of its
// charges would overspend a budget: nothing of the record was written.
// Its chain holds an *Error of code ECONFLICT.
type BudgetSpent struct {
	Charge BudgetCharge
	// Used is what the budget's window had used.
	Used int64
}

func (e *BudgetSpent) Error() string { return e.message() }

// Unwrap makes it an ECONFLICT (a refusal made before anything was
// written).
func (e *BudgetSpent) Unwrap() error { return &Error{Code: ECONFLICT, Message: e.message()} }

func (e *BudgetSpent) message() string {
	c := &e.Charge
	return fmt.Sprintf("budget %s is spent: %s of %s used, this action needs %s", c.Key,
		c.units(e.Used), c.Budget.String(), c.units(c.Cost))
}

// Spends reports whether charges, taken in order from windows that had
// used what used returns, overspend one of them: the first it would
// overspend, as a *BudgetSpent. Charges to the same key add up. It is the
// one rule both stores apply under their write lock.
func Spends(charges []BudgetCharge, used func(c *BudgetCharge) (int64, error)) error {
	taken := map[string]int64{}
	for i := range charges {
		c := &charges[i]
		u, ok := taken[c.Key]
		if !ok {
			var err error
			if u, err = used(c); err != nil {
				return err
			}
		}
		if c.Cost > c.Budget.Limit()-u {
			return &BudgetSpent{Charge: *c, Used: u}
		}
		taken[c.Key] = u + c.Cost
	}
	return nil
}

// AsBudgetSpent returns the *BudgetSpent in err's chain, or nil.
func AsBudgetSpent(err error) *BudgetSpent {
	var s *BudgetSpent
	if errors.As(err, &s) {
		return s
	}
	return nil
}

// validateCharges validates a record's charges: each has a key, a valid
// budget and a cost within it.
func validateCharges(cs []BudgetCharge) error {
	for i := range cs {
		c := &cs[i]
		switch {
		case c.Key == "" || len(c.Key) > 1000:
			return Errorf(EINVALID, "budget charge %d has no key, or one longer than 1000 bytes", i)
		case c.Cost < 0:
			return Errorf(EINVALID, "budget charge %s costs %d: a cost cannot be negative", c.Key, c.Cost)
		}
		if err := c.Budget.Validate(true); err != nil {
			return Errorf(EINVALID, "budget charge %s: %s", c.Key, ErrorMessage(err))
		}
	}
	return nil
}

// ParseBudget reads a grant's budget as a person writes it on a command
// line: "10" (uses, for the grant's life), "10/day", "10/hour",
// "amount<=500/day", "amount<=500 USD/day", "payment.amount<=12.5
// EUR/grant".
func ParseBudget(s string) (*Budget, error) {
	bound, per, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		per = BudgetPerGrant
	}
	b := &Budget{Per: strings.TrimSpace(per)}
	if arg, limit, ok := strings.Cut(bound, "<="); ok {
		b.Sum = strings.TrimSpace(arg)
		fields := strings.Fields(limit)
		if len(fields) == 0 || len(fields) > 2 {
			return nil, Errorf(EINVALID, "budget %q: after <= comes an amount and, optionally, its currency (amount<=500 USD/day)", s)
		}
		var err error
		if b.Max, err = ParseAmount(fields[0]); err != nil {
			return nil, Errorf(EINVALID, "budget %q: %v", s, err)
		}
		if len(fields) == 2 {
			b.Currency = fields[1]
		}
	} else {
		n, err := strconv.ParseInt(strings.TrimSpace(bound), 10, 64)
		if err != nil || n <= 0 {
			return nil, Errorf(EINVALID, "budget %q: want a number of uses (10/day) or an argument's bound (amount<=500 USD/day)", s)
		}
		b.Uses = n
	}
	if err := b.Validate(true); err != nil {
		return nil, Errorf(EINVALID, "budget %q: %s", s, strings.TrimPrefix(ErrorMessage(err), "budget: "))
	}
	return b, nil
}

// FormatDuration writes d without zero units, as a policy does: 10m,
// 1h30m, 24h, 90s.
func FormatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
