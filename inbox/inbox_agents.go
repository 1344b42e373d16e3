package inbox

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/gate"
)

// The agents pages: how far each agent is trusted per class — the share of
// its requests people approved and how long they took to decide, drawn on
// the server as small inline SVG charts (the pages need no script, and the
// CSP allows no inline style) — and the policy in force for the agent.

const (
	agentsPageSize = 50 // agent cards per page
	cardClasses    = 6  // classes on an agent's card, the most frequent; its page has all
	// chartWidth is a chart's width in SVG units, its viewBox's in the
	// templates.
	chartWidth = 1000
)

// TrustPeriod is a window of trust records the pages offer.
type TrustPeriod struct {
	// Value is the period in a query ("7d"), "" for all time.
	Value string
	Label string
	span  time.Duration
}

var trustPeriods = []TrustPeriod{
	{"", "all time", 0},
	{"24h", "the last 24 hours", 24 * time.Hour},
	{"7d", "the last 7 days", 7 * 24 * time.Hour},
	{"30d", "the last 30 days", 30 * 24 * time.Hour},
}

func periodOf(v string) (TrustPeriod, error) {
	for _, p := range trustPeriods {
		if p.Value == v {
			return p, nil
		}
	}
	return TrustPeriod{}, airlock.Errorf(airlock.EINVALID, "unknown period %q: use 24h, 7d or 30d, or nothing for all time", v)
}

// since returns when the period ending at now began, zero for all time.
func (p TrustPeriod) since(now time.Time) time.Time {
	if p.span == 0 {
		return time.Time{}
	}
	return now.Add(-p.span)
}

// AgentsFilter is the agents page's query.
type AgentsFilter struct {
	// Search is part of an agent's name, in any case.
	Search string
	Class  string
	Period string
	// After continues the list after this agent.
	After string
}

func agentsFilterFrom(r *http.Request) AgentsFilter {
	q := r.URL.Query()
	return AgentsFilter{Search: strings.TrimSpace(q.Get("q")), Class: strings.TrimSpace(q.Get("class")),
		Period: q.Get("period"), After: q.Get("after")}
}

// Query encodes the filter for a link; with after, for the page after
// that agent.
func (f AgentsFilter) Query(after string) string {
	q := url.Values{}
	for k, v := range map[string]string{"q": f.Search, "class": f.Class, "period": f.Period, "after": after} {
		if v != "" {
			q.Set(k, v)
		}
	}
	return q.Encode()
}

// store translates the filter for TrustSummaries; the search is applied
// to the agents it returns.
func (f AgentsFilter) store(now time.Time) (airlock.TrustFilter, error) {
	if len(f.Search) > maxSearch || len(f.Class) > maxSearch {
		return airlock.TrustFilter{}, airlock.Errorf(airlock.EINVALID, "the search and the class may hold at most %d bytes", maxSearch)
	}
	p, err := periodOf(f.Period)
	if err != nil {
		return airlock.TrustFilter{}, err
	}
	return airlock.TrustFilter{Class: airlock.Class(f.Class), Since: p.since(now)}, nil
}

// AgentsPage lists the agents that have trust records, one card each.
type AgentsPage struct {
	Base
	Filter  AgentsFilter
	Periods []TrustPeriod
	Cards   []AgentCard
	// Matched counts the agents the filter matched; Cards holds one page of
	// them, the First (1-based) on.
	Matched, First int
	// NextAfter continues the list, "" on the last page.
	NextAfter string
	// Longest is the longest median time to decision on the page: the time
	// bars are drawn to its scale.
	Longest time.Duration
	Error   string
}

// Last is the position of the last card among the matched agents.
func (p *AgentsPage) Last() int { return p.First + len(p.Cards) - 1 }

// Cut reports whether the page shows only some of the matched agents.
func (p *AgentsPage) Cut() bool { return len(p.Cards) < p.Matched }

// Scale is the time bars' full width as text.
func (p *AgentsPage) Scale() string { return decisionTime(p.Longest) }

// FirstURL is the first page's address.
func (p *AgentsPage) FirstURL() string { return "/inbox/agents?" + p.Filter.Query("") }

// NextURL is the next page's address, "" on the last page.
func (p *AgentsPage) NextURL() string {
	if p.NextAfter == "" {
		return ""
	}
	return "/inbox/agents?" + p.Filter.Query(p.NextAfter)
}

// AgentCard is one agent's figures on the agents page.
type AgentCard struct {
	Agent string
	// URL is the agent's page, over the same period.
	URL string
	// Records counts the agent's trust records, every class.
	Records int64
	// Classes are the agent's most frequent classes, at most cardClasses.
	Classes []ClassTrust
	// More counts the classes the card leaves out.
	More int
}

// ClassCount counts the agent's classes, on the card or not.
func (c *AgentCard) ClassCount() int { return len(c.Classes) + c.More }

// ClassTrust is an agent's trust record for one class, with its charts.
type ClassTrust struct {
	airlock.TrustSummary
	// Counts of the trust records by outcome.
	Success, Denied, Timeout, Failure int64
	// RateBar shows the requests people approved, rejected or let expire,
	// when there are some; TimeBar the median time they took to decide,
	// when they did; OutcomeBar how the recorded decisions ended.
	RateBar, TimeBar, OutcomeBar BarChart
}

// Decided counts the requests a person decided or let expire.
func (c *ClassTrust) Decided() int64 { return c.Approved + c.Rejected + c.Expired }

// Percent is the approval rate in whole percent, "" when no person decided.
func (c *ClassTrust) Percent() string {
	if c.Decided() == 0 {
		return ""
	}
	return percent(c.Rate())
}

// Median is the median time to decision as text, "" when nobody decided.
func (c *ClassTrust) Median() string {
	if c.Approved+c.Rejected == 0 {
		return ""
	}
	return decisionTime(c.MedianDecision)
}

// BarChart is a chart of one row: parts side by side over a track,
// measured in thousandths of its width. Label is its text equivalent.
type BarChart struct {
	Label string
	Parts []BarSegment
}

// BarSegment is a part of a BarChart; Kind names its colour (the class
// bar-<kind>).
type BarSegment struct {
	Kind     string
	X, Width int
}

// share is one count of a stacked bar.
type share struct {
	kind string
	n    int64
}

// stacked lays the shares side by side in proportion to their sum. Each
// edge is rounded on its own, so the parts always fill the width exactly.
func stacked(label string, shares ...share) BarChart {
	b := BarChart{Label: label}
	var total int64
	for _, s := range shares {
		total += s.n
	}
	if total == 0 {
		return b
	}
	var sum int64
	for _, s := range shares {
		x := int((sum*chartWidth + total/2) / total)
		sum += s.n
		if end := int((sum*chartWidth + total/2) / total); end > x {
			b.Parts = append(b.Parts, BarSegment{Kind: s.kind, X: x, Width: end - x})
		}
	}
	return b
}

// timeBar draws d to the scale of longest, the longest time charted with
// it; a time too short to see at that scale still shows.
func timeBar(label string, d, longest time.Duration) BarChart {
	w := 4
	if longest > 0 {
		w = max(w, int(math.Round(float64(d)/float64(longest)*chartWidth)))
	}
	return BarChart{Label: label, Parts: []BarSegment{{Kind: "time", Width: w}}}
}

// classTrust makes the charts of a summary, its time bar to the scale of
// longest. A class no person decided has no rate or time to chart.
func classTrust(s airlock.TrustSummary, longest time.Duration) ClassTrust {
	c := ClassTrust{TrustSummary: s, Success: s.Counts[airlock.TrustSuccess], Denied: s.Counts[airlock.TrustDenied],
		Timeout: s.Counts[airlock.TrustTimeout], Failure: s.Counts[airlock.TrustFailure]}
	if c.Decided() > 0 {
		c.RateBar = stacked(fmt.Sprintf("Approval rate %s: %d approved, %d rejected, %d expired", c.Percent(), c.Approved, c.Rejected, c.Expired),
			share{"approved", c.Approved}, share{"rejected", c.Rejected}, share{"expired", c.Expired})
	}
	if m := c.Median(); m != "" {
		n := c.Approved + c.Rejected
		c.TimeBar = timeBar(fmt.Sprintf("Median time to decision %s, over %d decision%s", m, n, plural(n)), c.MedianDecision, longest)
	}
	c.OutcomeBar = stacked(fmt.Sprintf("%d recorded outcomes: %d succeeded, %d denied, %d timed out, %d failed",
		c.Total, c.Success, c.Denied, c.Timeout, c.Failure),
		share{"success", c.Success}, share{"denied", c.Denied}, share{"timeout", c.Timeout}, share{"failure", c.Failure})
	return c
}

// classTrusts charts summaries to one time scale, which it returns.
func classTrusts(sums []airlock.TrustSummary) ([]ClassTrust, time.Duration) {
	var longest time.Duration
	for _, s := range sums {
		longest = max(longest, s.MedianDecision)
	}
	out := make([]ClassTrust, len(sums))
	for i, s := range sums {
		out[i] = classTrust(s, longest)
	}
	return out, longest
}

// sortTrust orders summaries by agent, then class. The store orders them
// too, but its collation need not be Go's, which the After cursor uses.
func sortTrust(sums []airlock.TrustSummary) {
	slices.SortStableFunc(sums, func(a, b airlock.TrustSummary) int {
		return cmp.Or(strings.Compare(a.Agent, b.Agent), strings.Compare(string(a.Class), string(b.Class)))
	})
}

// byAgent groups the summaries by agent, in agent order.
func byAgent(sums []airlock.TrustSummary) [][]airlock.TrustSummary {
	sortTrust(sums)
	var groups [][]airlock.TrustSummary
	for i := 0; i < len(sums); {
		j := i + 1
		for j < len(sums) && sums[j].Agent == sums[i].Agent {
			j++
		}
		groups = append(groups, sums[i:j])
		i = j
	}
	return groups
}

// recordCount counts the trust records of summaries.
func recordCount(sums []airlock.TrustSummary) int64 {
	var n int64
	for _, s := range sums {
		n += s.Total
	}
	return n
}

// list makes the cards of one page of the agents the search matches.
func (p *AgentsPage) list(sums []airlock.TrustSummary) {
	groups := byAgent(sums)
	if q := strings.ToLower(p.Filter.Search); q != "" {
		groups = slices.DeleteFunc(groups, func(g []airlock.TrustSummary) bool {
			return !strings.Contains(strings.ToLower(g[0].Agent), q)
		})
	}
	p.Matched = len(groups)
	start := len(groups)
	if i := slices.IndexFunc(groups, func(g []airlock.TrustSummary) bool { return g[0].Agent > p.Filter.After }); i >= 0 {
		start = i
	}
	page := groups[start:min(start+agentsPageSize, len(groups))]
	p.First = start + 1
	if start+len(page) < len(groups) {
		p.NextAfter = page[len(page)-1][0].Agent
	}
	p.Cards, p.Longest = agentCards(page, p.Filter.Period)
}

// agentCards makes a card per agent with its most frequent classes over
// period, and draws every card's time bars to one scale, which it returns.
func agentCards(groups [][]airlock.TrustSummary, period string) ([]AgentCard, time.Duration) {
	out := make([]AgentCard, len(groups))
	var shown []airlock.TrustSummary
	for i, g := range groups {
		g = slices.Clone(g)
		slices.SortStableFunc(g, func(a, b airlock.TrustSummary) int { return cmp.Compare(b.Total, a.Total) })
		out[i] = AgentCard{Agent: g[0].Agent, URL: agentURL(g[0].Agent, period), Records: recordCount(g), More: max(len(g)-cardClasses, 0)}
		shown = append(shown, g[:min(len(g), cardClasses)]...)
	}
	charts, longest := classTrusts(shown)
	for i := range out {
		n := min(len(groups[i]), cardClasses)
		out[i].Classes, charts = charts[:n], charts[n:]
	}
	return out, longest
}

// agents lists every agent with trust records, one card each.
func (in *inbox) agents(w http.ResponseWriter, r *http.Request) {
	p := &AgentsPage{Base: baseFor(r, "Agents"), Filter: agentsFilterFrom(r), Periods: trustPeriods}
	f, err := p.Filter.store(time.Now())
	if err != nil {
		p.Error = airlock.ErrorMessage(err)
		in.render(w, http.StatusBadRequest, "agents", p)
		return
	}
	sums, err := in.host.Store().TrustSummaries(r.Context(), f)
	if err != nil {
		in.storeFail(w, r, err)
		return
	}
	p.list(sums)
	in.render(w, http.StatusOK, "agents", p)
}

// AgentPage is one agent: its trust per class and the policy in force for
// it.
type AgentPage struct {
	Base
	Agent   string
	Period  TrustPeriod
	Periods []TrustPeriod
	// Classes are the agent's trust records per class, by class.
	Classes []ClassTrust
	Records int64
	// Longest is the longest median time to decision: the time bars are
	// drawn to its scale.
	Longest time.Duration
	Policy  gate.EffectivePolicy
	Error   string
	// Signals are the rubber-stamp signals of the agent's requests in the
	// period (Signals.Agents holds the agent's, Signals.Reviewers those of
	// the people who settled them); nil when they could not be read.
	Signals *airlock.ReviewSignals
}

// Reviewed is the agent's own review figures in the period.
func (p *AgentPage) Reviewed() *airlock.ReviewStats {
	if p.Signals == nil || len(p.Signals.Agents) == 0 {
		return nil
	}
	return &p.Signals.Agents[0]
}

// ReadHint says how long a request takes to read, as the signals count it.
func (p *AgentPage) ReadHint() string {
	return fmt.Sprintf("%s, and %s per character of its summary and arguments, at most %s",
		airlock.MinReadBase, airlock.ReadPerByte, airlock.MaxReadTime)
}

// Scale is the time bars' full width as text.
func (p *AgentPage) Scale() string { return decisionTime(p.Longest) }

// PresetMeaning says what the agent's preset does.
func (p *AgentPage) PresetMeaning() string { return p.Policy.Preset.Meaning() }

// PeriodURL is the agent's page over period v.
func (p *AgentPage) PeriodURL(v string) string { return agentURL(p.Agent, v) }

// RequestsURL lists the agent's pending requests.
func (p *AgentPage) RequestsURL() string { return "/inbox?" + url.Values{"agent": {p.Agent}}.Encode() }

// AuditURL lists the agent's events in the audit log.
func (p *AgentPage) AuditURL() string {
	return "/inbox/audit?" + url.Values{"agent": {p.Agent}}.Encode()
}

// agent shows one agent's trust per class and its effective policy. An
// agent without trust records has a page too: its policy applies already.
func (in *inbox) agent(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("agent")
	p := &AgentPage{Base: baseFor(r, "Agent "+escaped(name)), Agent: name, Periods: trustPeriods,
		Policy: in.host.Gate().EffectivePolicy(name)}
	var err error
	if p.Period, err = periodOf(r.URL.Query().Get("period")); err != nil {
		p.Error = airlock.ErrorMessage(err)
		in.render(w, http.StatusBadRequest, "agent", p)
		return
	}
	sums, err := in.host.Store().TrustSummaries(r.Context(), airlock.TrustFilter{Agent: name, Since: p.Period.since(time.Now())})
	if err != nil {
		in.storeFail(w, r, err)
		return
	}
	sums = slices.DeleteFunc(sums, func(s airlock.TrustSummary) bool { return s.Agent != name })
	sortTrust(sums)
	p.Classes, p.Longest = classTrusts(sums)
	p.Records = recordCount(sums)
	since := p.Period.since(time.Now())
	if since.IsZero() {
		since = time.Now().Add(-30 * 24 * time.Hour) // "all time": the signals read the last 30 days
	}
	if sig, err := gate.ReviewSignals(r.Context(), in.host.Store(), since, name); err == nil {
		p.Signals = &sig
	}
	in.readBudgets(r.Context(), &p.Policy)
	in.render(w, http.StatusOK, "agent", p)
}

// readBudgets fills in what the agent's accounts of the rules' budgets
// have used now; left unread when the store cannot say.
func (in *inbox) readBudgets(ctx context.Context, ep *gate.EffectivePolicy) {
	var charges []*airlock.BudgetCharge
	for i := range ep.Layers {
		for j := range ep.Layers[i].Rules {
			if b := ep.Layers[i].Rules[j].Budget; b != nil {
				charges = append(charges, b)
			}
		}
	}
	if len(charges) == 0 {
		return
	}
	list := make([]airlock.BudgetCharge, len(charges))
	for i, c := range charges {
		list[i] = *c
	}
	used, err := in.host.Store().BudgetUsed(ctx, list)
	if err != nil {
		return
	}
	now := time.Now()
	for i, c := range charges {
		c.Used, c.Read = used[i], now
	}
}

// agentURL is an agent's page over period, "" for all time.
func agentURL(agent, period string) string {
	u := "/inbox/agents/" + url.PathEscape(agent)
	if period == "" {
		return u
	}
	return u + "?" + url.Values{"period": {period}}.Encode()
}

func plural(n int64) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// percent writes a rate in whole percent, never rounded to 0% or 100%
// when it is not: 199 of 200 approved is 99%.
func percent(rate float64) string {
	p := math.Round(rate * 100)
	switch {
	case p == 100 && rate < 1:
		p = 99
	case p == 0 && rate > 0:
		p = 1
	}
	return strconv.FormatFloat(p, 'f', 0, 64) + "%"
}

// decisionTime writes a time to decision to the second, as the inbox
// writes durations; below a second it says so rather than "0s".
func decisionTime(d time.Duration) string {
	if d > 0 && d < time.Second {
		return "under 1s"
	}
	return shortDur(d.Round(time.Second))
}
