package inbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/gate"
)

// The reviewer's web inbox: server-rendered pages (html/template, parsed
// once at start-up), htmx and its SSE extension vendored under web/assets,
// no external requests.

//go:embed web/*.html web/assets/*.js web/assets/*.css web/assets/*.svg
var webFS embed.FS

const (
	inboxPageSize = 50
	maxReasonLen  = 2000
	// largeArgs is the size above which the arguments start collapsed (in a
	// <details>); they are never cut.
	largeArgs      = 4 << 10
	largeArgsLines = 60
)

// inboxCSP allows only this server's own scripts, styles and connections,
// and no framing (an approve button must not be clickjacked).
const inboxCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// inbox serves the web inbox for one server (its Host).
type inbox struct {
	host     Host
	pages    map[string]*template.Template
	assets   map[string]inboxAsset // by name
	sessions sessions
	csrf     *http.CrossOriginProtection
	chain    chainCheck
}

type inboxAsset struct {
	hash, contentType string
	body              []byte
}

// Mount adds the inbox's routes to mux, served for host. Every inbox route
// is on this screen; those that change state are POST-only and refuse
// cross-origin requests.
func Mount(mux *http.ServeMux, host Host) {
	in := newInbox(host)
	post := func(h http.HandlerFunc) http.Handler { return in.csrf.Handler(h) }

	// A person who opens the server's address lands on the inbox.
	mux.Handle("GET /{$}", http.RedirectHandler("/inbox", http.StatusSeeOther))
	mux.HandleFunc("GET /inbox/signin", in.signinForm)
	mux.Handle("POST /inbox/signin", post(in.signin))
	mux.Handle("POST /inbox/signout", post(in.signout))
	mux.HandleFunc("GET /inbox/sso", in.ssoStart)
	mux.HandleFunc("GET /inbox/sso/callback", in.ssoCallback)

	for _, l := range []listView{inboxView, historyView} {
		mux.HandleFunc("GET "+l.path, in.withSession(in.lister(l, false)))
		mux.HandleFunc("GET "+l.path+"/list", in.withSession(in.lister(l, true)))
	}
	mux.HandleFunc("GET /inbox/{$}", in.withSession(in.lister(inboxView, false)))
	mux.HandleFunc("GET /inbox/next", in.withSession(in.next))
	mux.HandleFunc("GET /inbox/events", in.withSession(in.events))
	mux.HandleFunc("GET /inbox/session", in.withSession(in.session))
	mux.HandleFunc("GET /inbox/approvals/{id}", in.withSession(in.detail))
	mux.HandleFunc("GET /inbox/approvals/{id}/decide", in.withSession(in.decide))
	mux.Handle("POST /inbox/approvals/{id}/edit", post(in.withSession(in.edit)))
	mux.Handle("POST /inbox/approvals/{id}/passkey", post(in.withSession(in.approvalPasskey)))
	mux.HandleFunc("GET /inbox/passkeys", in.withSession(in.passkeys))
	mux.Handle("POST /inbox/passkeys/begin", post(in.withSession(in.passkeyBegin)))
	mux.Handle("POST /inbox/passkeys/finish", post(in.withSession(in.passkeyFinish)))
	mux.Handle("POST /inbox/passkeys/remove", post(in.withSession(in.passkeyRemove)))
	mux.Handle("POST /inbox/approvals/{id}/approve", post(in.withSession(in.resolve(airlock.StatusApproved))))
	mux.Handle("POST /inbox/approvals/{id}/reject", post(in.withSession(in.resolve(airlock.StatusRejected))))
	mux.Handle("POST /inbox/batch/approve", post(in.withSession(in.batchApprove)))

	mux.HandleFunc("GET /inbox/audit", in.withSession(in.audit))
	mux.HandleFunc("GET /inbox/audit/{seq}", in.withSession(in.event))

	mux.HandleFunc("GET /inbox/agents", in.withSession(in.agents))
	mux.HandleFunc("GET /inbox/agents/{agent}", in.withSession(in.agent))

	mux.HandleFunc("GET /inbox/grants", in.withSession(in.grants))
	mux.Handle("POST /inbox/grants/{id}/revoke", post(in.withSession(in.revokeGrant)))
	mux.HandleFunc("GET /inbox/proposals", in.withSession(in.proposals))
	mux.Handle("POST /inbox/proposals/ratify", post(in.withSession(in.settleProposal(true))))
	mux.Handle("POST /inbox/proposals/dismiss", post(in.withSession(in.settleProposal(false))))
	mux.HandleFunc("GET /inbox/notifications", in.withSession(in.notifications))
	mux.Handle("POST /inbox/notifications/{id}/retry", post(in.withSession(in.retryNotification)))

	mux.HandleFunc("GET /inbox/assets/{hash}/{name}", in.asset)
}

// newInbox parses the templates and hashes the assets; a broken template
// is a build error, so it panics at start-up rather than at the first page.
func newInbox(host Host) *inbox {
	in := &inbox{host: host, pages: map[string]*template.Template{}, assets: map[string]inboxAsset{}, csrf: http.NewCrossOriginProtection()}
	names, err := fs.Glob(webFS, "web/assets/*")
	if err != nil {
		panic(err)
	}
	for _, name := range names {
		b, err := webFS.ReadFile(name)
		if err != nil {
			panic(err)
		}
		sum := sha256.Sum256(b)
		ct := "application/octet-stream"
		switch path.Ext(name) {
		case ".js":
			ct = "text/javascript; charset=utf-8"
		case ".css":
			ct = "text/css; charset=utf-8"
		case ".svg":
			ct = "image/svg+xml"
		}
		in.assets[path.Base(name)] = inboxAsset{hash: hex.EncodeToString(sum[:8]), contentType: ct, body: b}
	}
	funcs := template.FuncMap{
		"asset": func(name string) (string, error) {
			a, ok := in.assets[name]
			if !ok {
				return "", fmt.Errorf("no asset %q", name)
			}
			return "/inbox/assets/" + a.hash + "/" + name, nil
		},
		"show":         func(s string) template.HTML { return show(s, false) },
		"showLines":    func(s string) template.HTML { return show(s, true) },
		"rfc3339":      func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
		"since":        func(t time.Time) string { return shortDur(time.Since(t)) },
		"left":         timeLeft,
		"inc":          func(i int) int { return i + 1 },
		"roundDur":     roundDur,
		"roundD":       func(d airlock.Duration) string { return roundDur(time.Duration(d)) },
		"settledBy":    settledBy,
		"className":    className,
		"credentialID": CredentialID,
	}
	base := template.Must(template.New("").Funcs(funcs).ParseFS(webFS, "web/layout.html", "web/parts.html"))
	for _, page := range []string{"signin", "inbox", "detail", "edit", "passkeys", "error", "agents", "agent", "audit", "event", "batch", "notifications", "proposals", "grants"} {
		in.pages[page] = template.Must(template.Must(base.Clone()).ParseFS(webFS, "web/"+page+".html"))
	}
	in.csrf.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secure(w)
		// Audited like a caller without a token, at a bounded rate: the
		// sender is another site, whoever's browser carried it.
		in.host.Refuse(in.host.RequestContext(r), nil, "", airlock.EUNAUTHORIZED, fmt.Sprintf(
			"cross-origin %s to the inbox refused (Origin %q, Sec-Fetch-Site %q)", r.Method, r.Header.Get("Origin"), r.Header.Get("Sec-Fetch-Site")))
		in.fail(w, r, http.StatusForbidden, "Cross-origin request refused",
			"This form was sent from another site. Open the inbox directly and try again.")
	}))
	return in
}

// secure sets the headers every inbox response carries.
func secure(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", inboxCSP)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
}

// Base is what every page's layout needs.
type Base struct {
	Title string
	// Who is the signed-in person, "" on the sign-in page.
	Who  string
	Role airlock.Role
	// Section is the navigation entry the page belongs to.
	Section string
}

func baseFor(r *http.Request, title string) Base {
	b := Base{Title: title, Section: sectionOf(r.URL.Path)}
	if si := sessionFrom(r.Context()); si != nil {
		b.Who, b.Role = si.token.Name, si.token.Role
	}
	return b
}

// sectionOf names the navigation entry of an inbox path.
func sectionOf(p string) string {
	for _, s := range []string{"history", "audit", "agents", "grants", "proposals", "notifications", "passkeys"} {
		if p == "/inbox/"+s || strings.HasPrefix(p, "/inbox/"+s+"/") {
			return s
		}
	}
	return "inbox"
}

// render executes a page into a buffer first, so that a template error is
// a clean 500 and not half a page.
func (in *inbox) render(w http.ResponseWriter, status int, page string, data any) {
	in.execute(w, status, page, "layout", data)
}

func (in *inbox) execute(w http.ResponseWriter, status int, page, name string, data any) {
	var buf bytes.Buffer
	if err := in.pages[page].ExecuteTemplate(&buf, name, data); err != nil {
		in.host.Logger().Error("inbox: render", "page", page, "err", err)
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// ErrorPage explains a refusal or a failure. For a resolution that came
// too late or for another action, it says what the request holds now.
type ErrorPage struct {
	Base
	Status  int
	Heading string
	Message string
	// ApprovalID links back to the request, when there is one.
	ApprovalID string
	// ShownHash and CurrentHash name both hashes of a mismatch.
	ShownHash, CurrentHash string
	// Settled is the request as someone else settled it.
	Settled *airlock.Approval
}

func (in *inbox) fail(w http.ResponseWriter, r *http.Request, status int, heading, msg string) {
	in.render(w, status, "error", &ErrorPage{Base: baseFor(r, heading), Status: status, Heading: heading, Message: msg})
}

// asset serves an embedded file under its content hash, cached for a
// year: a new build has new hashes.
func (in *inbox) asset(w http.ResponseWriter, r *http.Request) {
	a, ok := in.assets[r.PathValue("name")]
	if !ok || a.hash != r.PathValue("hash") {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", a.contentType)
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("X-Content-Type-Options", "nosniff")
	w.Write(a.body)
}

// InboxFilter is the inbox's query, as the form and the links carry it.
type InboxFilter struct {
	Agent   string
	Class   string
	MinTier string // "" for any
	// Status is "" for pending, "settled" for every settled status, "any"
	// for every status, or one status.
	Status string
	// Search looks in the request's ID, agent, tool, class, trace and
	// summary.
	Search string
	// Order is "" or "newest" (newest first), "urgent" (the first deadline
	// first), "oldest", or "settled" (settled requests only, the last
	// settled first).
	Order  string
	Cursor string
}

// orderOption is an order as the form offers it.
type orderOption struct{ Value, Label string }

// The orders of the inbox and of the history.
var (
	inboxOrders   = []orderOption{{"", "newest first"}, {"urgent", "most urgent first"}, {"oldest", "oldest first"}}
	historyOrders = []orderOption{{"settled", "last settled first"}, {"newest", "newest request first"}, {"oldest", "oldest request first"}}
)

// settled are the statuses of a request that no longer waits.
var settled = []airlock.ApprovalStatus{airlock.StatusApproved, airlock.StatusRejected, airlock.StatusExpired, airlock.StatusCancelled}

// settledOnly reports whether the status filter leaves pending requests out.
func settledOnly(status string) bool {
	return status == "settled" || slices.Contains(settled, airlock.ApprovalStatus(status))
}

// Query encodes the filter for a link; with cursor, for that page.
func (f InboxFilter) Query(cursor string) string {
	q := url.Values{}
	for k, v := range map[string]string{"agent": f.Agent, "class": f.Class, "min_tier": f.MinTier, "status": f.Status,
		"q": f.Search, "order": f.Order, "cursor": cursor} {
		if v != "" {
			q.Set(k, v)
		}
	}
	return q.Encode()
}

// store translates the filter for FindApprovals.
func (f InboxFilter) store() (airlock.ApprovalFilter, error) {
	af := airlock.ApprovalFilter{Agent: f.Agent, Class: f.Class, Search: f.Search, Cursor: f.Cursor, Limit: inboxPageSize}
	switch f.Order {
	case "", "newest":
	case "urgent":
		af.ByDeadline = true
	case "oldest":
		af.Oldest = true
	case "settled":
		af.BySettled = true
	default:
		return af, airlock.Errorf(airlock.EINVALID, "unknown order %q: use newest, urgent, oldest or settled", f.Order)
	}
	switch f.Status {
	case "":
		af.Status = []airlock.ApprovalStatus{airlock.StatusPending}
	case "settled":
		af.Status = settled
	case "any":
	default:
		st, err := airlock.ParseApprovalStatus(f.Status)
		if err != nil {
			return af, err
		}
		af.Status = []airlock.ApprovalStatus{st}
	}
	if f.MinTier != "" {
		t, err := airlock.ParseRiskTier(f.MinTier)
		if err != nil {
			return af, err
		}
		af.MinTier = t
	}
	return af, nil
}

// maxSearch bounds the search text.
const maxSearch = 200

func filterFrom(r *http.Request) InboxFilter {
	q := r.URL.Query()
	f := InboxFilter{
		Agent: strings.TrimSpace(q.Get("agent")), Class: strings.TrimSpace(q.Get("class")), MinTier: q.Get("min_tier"),
		Status: q.Get("status"), Search: strings.TrimSpace(q.Get("q")), Order: q.Get("order"), Cursor: q.Get("cursor"),
	}
	return f
}

// InboxPage is a list of requests: the inbox (pending) or the history
// (settled).
type InboxPage struct {
	Base
	// Path is the page's own address: /inbox or /inbox/history.
	Path    string
	Heading string
	Filter  InboxFilter
	Rows    []InboxRow
	// NextCursor continues the listing, "" on the last page.
	NextCursor string
	// After is the audit log's head when the page was read: the live
	// stream starts there, so that no change in between is missed.
	After    int64
	Error    string
	Tiers    []airlock.RiskTier
	Statuses []airlock.ApprovalStatus
	Orders   []orderOption
	// Done is the request the person just settled from its page, shown
	// in a note above the list; nil otherwise.
	Done *airlock.Approval
	// Granted is the standing grant made with it (approve and remember).
	Granted *airlock.Grant

	filtered bool
}

// FilterActive reports whether the address sets a filter, an order or a
// page: the filters then start open on a small screen.
func (p *InboxPage) FilterActive() bool { return p.filtered }

// InboxRow is one request in a list, ready to show: text already escaped
// (with hidden characters marked) and times already written, because a
// template call per value costs more than the value and a page shows 50
// rows.
type InboxRow struct {
	ID                                  string
	Agent, Tool, Class, Summary, Reason template.HTML
	// By says who settled the request (settledBy).
	By         template.HTML
	Tier       airlock.RiskTier
	NeedsHuman bool
	IsGrant    bool
	// Pending is set for a request that waits; Foreign for a pending one
	// the signed-in person may not decide. (Fields, not comparisons in the
	// template: a template function call per row costs more than the row.)
	Pending, Foreign bool
	Status           airlock.ApprovalStatus
	// Created, Expires and ResolvedAt are RFC 3339 ("" for none); Waiting
	// and Left are how long it has waited and may still wait.
	Created, Expires, ResolvedAt string
	Waiting, Left                string
	// Identical counts the requests on this page (this one included) that
	// would have the same effect; Batch is set when there are more than
	// one, which can be approved together.
	Identical int
	Batch     bool
}

func newRow(ap *airlock.Approval, rev airlock.Reviewer, now time.Time) InboxRow {
	row := InboxRow{
		ID: ap.ID, Agent: show(ap.Agent, false), Tool: show(ap.Tool, false), Class: show(className(ap.Class), false),
		Summary: show(ap.Summary, false), Reason: show(ap.Reason, false),
		Tier: ap.Tier, NeedsHuman: ap.NeedsHuman, IsGrant: ap.IsGrant(), Status: ap.Status,
		Created: rfc3339(ap.Created), Expires: rfc3339(ap.Expires), ResolvedAt: rfc3339(ap.ResolvedAt),
		Waiting: shortDur(now.Sub(ap.Created)), Left: timeLeft(ap.Expires),
	}
	if row.Pending = ap.Status == airlock.StatusPending; row.Pending {
		row.Foreign = ap.Authorize(rev) != nil
	} else {
		row.By = settledBy(*ap)
	}
	return row
}

// settler says who settled a request: "bob via cli", or "the system"
// for an expiry or a resolution no person made.
func settler(ap *airlock.Approval) string {
	if ap.ResolvedBy == "" {
		return "the system"
	}
	if ap.Surface != "" && ap.Surface != airlock.SurfaceSystem {
		return ap.ResolvedBy + " via " + string(ap.Surface)
	}
	return ap.ResolvedBy
}

// settledBy is settler as HTML text, for the pages.
func settledBy(ap airlock.Approval) template.HTML { return show(settler(&ap), false) }

// className is a request's class without its needs-human suffix, which
// the page shows as a badge.
func className(class string) string { return strings.TrimSuffix(class, airlock.NeedsHumanSuffix) }

// rfc3339 writes t in UTC, "" for the zero time.
func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// ListURL is where the list region re-fetches itself.
func (p *InboxPage) ListURL() string { return p.Path + "/list?" + p.Filter.Query(p.Filter.Cursor) }

// NextURL is the next page's address, "" on the last page.
func (p *InboxPage) NextURL() string {
	if p.NextCursor == "" {
		return ""
	}
	return p.Path + "?" + p.Filter.Query(p.NextCursor)
}

// EventsURL is the live stream's address.
func (p *InboxPage) EventsURL() string {
	return "/inbox/events?after=" + strconv.FormatInt(p.After, 10)
}

// listView is one of the lists of requests: where it is, its heading, the
// status it shows unless the filter names one ("" for pending), the orders
// it offers and the one it lists settled requests in unless the filter
// names one.
type listView struct {
	path, heading, status string
	orders                []orderOption
	settledOrder          string
}

var (
	inboxView   = listView{"/inbox", "Requests", "", inboxOrders, ""}
	historyView = listView{"/inbox/history", "History", "settled", historyOrders, "settled"}
)

// listPage reads one page of requests for the list v.
func (in *inbox) listPage(r *http.Request, v listView) (*InboxPage, int) {
	p := &InboxPage{Base: baseFor(r, v.heading), Path: v.path, Heading: v.heading, Filter: filterFrom(r), Tiers: airlock.Tiers(),
		Statuses: append([]airlock.ApprovalStatus{airlock.StatusPending}, settled...), Orders: v.orders}
	p.filtered = p.Filter != (InboxFilter{})
	if p.Filter.Status == "" {
		p.Filter.Status = v.status
	}
	if p.Filter.Order == "" {
		p.Filter.Order = v.settledOrder
	}
	if p.Filter.Order == "settled" && !settledOnly(p.Filter.Status) {
		// Pending requests have not been settled: with them, newest
		// first, whatever order the form kept selected.
		p.Filter.Order = "newest"
	}
	if utf8.RuneCountInString(p.Filter.Search) > maxSearch {
		p.Error = fmt.Sprintf("The search may hold at most %d characters.", maxSearch)
		return p, http.StatusBadRequest
	}
	f, err := p.Filter.store()
	if err != nil {
		p.Error = airlock.ErrorMessage(err)
		return p, http.StatusBadRequest
	}
	ctx := r.Context()
	// The head first: a change after it reaches the stream.
	if p.After, err = in.host.Store().Head(ctx); err != nil {
		return in.storeError(p, err)
	}
	page, err := in.host.Store().FindApprovals(ctx, f)
	if err != nil {
		return in.storeError(p, err)
	}
	p.Rows, p.NextCursor = rowsOf(page.Approvals, principalFrom(ctx).Reviewer()), page.NextCursor
	return p, http.StatusOK
}

// rowsOf prepares the rows of a list and counts, for each request, the
// requests of the page with the same effect that the reviewer may approve
// together.
func rowsOf(aps []airlock.Approval, rev airlock.Reviewer) []InboxRow {
	now := time.Now()
	rows := make([]InboxRow, len(aps))
	count := map[effect]int{}
	ok := make([]bool, len(aps))
	for i := range aps {
		rows[i] = newRow(&aps[i], rev, now)
		// newRow authorised the reviewer (Foreign): only the rest is left.
		if ok[i] = rows[i].Pending && !rows[i].Foreign && batchableNow(&aps[i], now) == ""; ok[i] {
			count[effectOf(&aps[i])]++
		}
	}
	for i := range rows {
		if ok[i] {
			rows[i].Identical = count[effectOf(&aps[i])]
			rows[i].Batch = rows[i].Identical > 1
		}
	}
	return rows
}

func (in *inbox) storeError(p *InboxPage, err error) (*InboxPage, int) {
	if code := airlock.ErrorCode(err); code == airlock.EINVALID {
		p.Error = airlock.ErrorMessage(err)
		return p, http.StatusBadRequest
	}
	in.host.Logger().Error("inbox: list approvals", "err", err)
	p.Error = "The requests cannot be read now; retry in a moment."
	return p, http.StatusServiceUnavailable
}

// lister serves the list v: the whole page, or with fragment only the
// list region, which the page re-fetches live.
func (in *inbox) lister(v listView, fragment bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p, status := in.listPage(r, v)
		if fragment {
			// htmx swaps only successful answers: the error is shown in
			// the list rather than leave it stale without a word.
			in.execute(w, http.StatusOK, "inbox", "rows", p)
			return
		}
		// After a resolution the page says what was settled: read from
		// the store, never echoed from the address.
		if id := r.URL.Query().Get("done"); id != "" && status == http.StatusOK {
			if ap, err := in.host.Store().Approval(r.Context(), id); err == nil && ap.Status != airlock.StatusPending {
				p.Done = &ap
				if gid := r.URL.Query().Get("grant"); gid != "" {
					if g, err := in.host.Store().Grant(r.Context(), gid); err == nil && g.Approval == ap.ID {
						p.Granted = &g
					}
				}
			}
		}
		in.render(w, status, "inbox", p)
	}
}

// next opens the most urgent pending request the signed-in person may
// decide, or the inbox when there is none among the inboxPageSize most
// urgent.
func (in *inbox) next(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	page, err := in.host.Store().FindApprovals(ctx, airlock.ApprovalFilter{
		Status: []airlock.ApprovalStatus{airlock.StatusPending}, ByDeadline: true, Limit: inboxPageSize})
	if err != nil {
		in.storeFail(w, r, err)
		return
	}
	rev, now := principalFrom(ctx).Reviewer(), time.Now()
	to := "/inbox"
	for i := range page.Approvals {
		ap := &page.Approvals[i]
		// Past its deadline, a request waits only for the sweeper.
		if now.Before(ap.Expires) && ap.Authorize(rev) == nil {
			to = "/inbox/approvals/" + url.PathEscape(ap.ID)
			break
		}
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// DetailPage is one request, everything a reviewer approves.
type DetailPage struct {
	Base
	Approval airlock.Approval
	// Args is the arguments pretty-printed, whole.
	Args      string
	ArgsBytes int
	ArgsLines int
	// Large arguments start collapsed.
	Large bool
	// Hidden counts, per field the agent sent, the characters shown as
	// escapes (control, format, bidi, invisible); HiddenTotal sums them.
	Hidden      []airlock.HiddenCount
	HiddenTotal int
	// Deciders are the people who may resolve the request besides admins:
	// the rule's reviewers, then the agent's owner, each once.
	Deciders []Decider
	// Trust is the agent's record for this class, nil when it has none.
	Trust *airlock.TrustSummary
	// CannotResolve says why the signed-in person may not resolve it.
	CannotResolve string
	// Remember is the standing grant "approve and remember" would make,
	// for the person to see before confirming; nil when it is not offered
	// (not an ask, needs-human, above network-egress, or the policy keeps
	// grants out).
	Remember *airlock.Grant
	// Shapes are the shapes the person may remember instead: the exact
	// action (narrower), one step wider; each what it would cover.
	Shapes []RememberShape
	// Runs are what the request's action returned when an executor ran it
	// (run now), from its execution records, oldest first.
	Runs []RunResult
	// Notices are where the request's notices went (reviewers told, its
	// end told), newest first.
	Notices []airlock.Notification
	// ToolChange is, for the release of an MCP tool's definition (class
	// mcp.release), the change a person releases: the server, the tool, and
	// the definition's lines, each marked as removed, added or kept.
	ToolChange *ToolChange
	// Commands are the shell commands Airlock found in the action, each
	// with its classification and outcome, as the decision recorded them.
	Commands []airlock.CommandNote
	// Timeline is the request's events in the audit log, oldest first;
	// MoreEvents is set when there are more than it shows.
	Timeline   []airlock.Event
	MoreEvents bool
	// Identical are the other pending requests with the same low-risk
	// effect, which may be approved together with this one.
	Identical []airlock.Approval
	// SameShape are the other pending requests of the same shape (agent,
	// tool, a command's program and subcommand, a directory) that are not
	// identical, which may be approved together with this one; Shape says
	// what the shape is.
	SameShape []airlock.Approval
	Shape     string
	// After is the audit log's head when the page was read.
	After int64
	// OOB is set when the page is the decision region re-fetched live:
	// the status and the timeline come with it, swapped out of band.
	OOB bool
}

// Decider is a person who may resolve a request.
type Decider struct {
	Name  string
	Owner bool
}

// maxTimeline bounds the events a request's page lists.
const maxTimeline = 100

// Pending reports whether the request still waits for a person.
func (p *DetailPage) Pending() bool {
	return p.Approval.Status == airlock.StatusPending && time.Now().Before(p.Approval.Expires)
}

// Waited says how long the request waited before it was settled, "" for
// a pending one.
func (p *DetailPage) Waited() string {
	ap := &p.Approval
	if ap.Status == airlock.StatusPending || ap.ResolvedAt.IsZero() {
		return ""
	}
	return shortDur(ap.ResolvedAt.Sub(ap.Created))
}

// MarksBounded reports whether a field holds more hidden characters than
// a value highlights (maxMarks runs); the rest are plain escapes.
func (p *DetailPage) MarksBounded() bool {
	for _, h := range p.Hidden {
		if h.N > maxMarks {
			return true
		}
	}
	return false
}

// ApproveLabel is the approve button's text: a destructive or privileged
// action says so on the button itself.
// CanRunNow reports whether the request is a proposal an executor could
// run now once approved: a call of an MCP tool, which the MCP gateway
// holds.
func (p *DetailPage) CanRunNow() bool {
	return p.Approval.Outcome != airlock.Ask && strings.HasPrefix(p.Approval.Tool, "mcp__")
}

func (p *DetailPage) ApproveLabel() string {
	if p.Approval.Tier >= airlock.TierDestructive {
		return "Approve this " + p.Approval.Tier.String() + " action"
	}
	return "Approve"
}

// PersonDecided counts the agent's requests of this class that a person
// decided or let expire.
func (p *DetailPage) PersonDecided() int64 {
	if p.Trust == nil {
		return 0
	}
	return p.Trust.Approved + p.Trust.Rejected + p.Trust.Expired
}

// ApprovalRate is the trust record's approval rate in percent, "-" when no
// request went to a person.
func (p *DetailPage) ApprovalRate() string {
	if p.PersonDecided() == 0 {
		return "-"
	}
	return strconv.FormatFloat(p.Trust.Rate()*100, 'f', 0, 64) + "%"
}

// TriggerIDs are the requests whose changes re-fetch the decision region:
// this one, and those it may be approved with.
func (p *DetailPage) TriggerIDs() []string {
	ids := []string{p.Approval.ID}
	for i := range p.Identical {
		ids = append(ids, p.Identical[i].ID)
	}
	return ids
}

func (in *inbox) detail(w http.ResponseWriter, r *http.Request) {
	p, err := in.detailPage(r, true)
	if err != nil {
		in.storeFail(w, r, err)
		return
	}
	in.render(w, http.StatusOK, "detail", p)
}

// decide is the detail page's decision region, which the page re-fetches
// when the request (or one it may be approved with) changes: a reviewer
// looking at a request someone else settles sees who settled it, and how,
// at once. The request's status and its audit events come along, out of
// band, so that no part of the page says otherwise.
func (in *inbox) decide(w http.ResponseWriter, r *http.Request) {
	p, err := in.detailPage(r, false)
	if err != nil {
		in.storeFail(w, r, err)
		return
	}
	p.OOB = true
	in.execute(w, http.StatusOK, "detail", "live", p)
}

// detailPage reads what the detail page shows of the request named in the
// path: with whole, everything; without, what its live regions show.
func (in *inbox) detailPage(r *http.Request, whole bool) (*DetailPage, error) {
	ctx := r.Context()
	// The head first: a change after it reaches the page's live region.
	head, err := in.host.Store().Head(ctx)
	if err != nil {
		return nil, err
	}
	ap, err := in.host.Store().Approval(ctx, r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	rev := principalFrom(ctx).Reviewer()
	p := &DetailPage{Base: baseFor(r, clipTitle(ap.Summary)), Approval: ap, After: head}
	if err := ap.Authorize(rev); err != nil {
		p.CannotResolve = airlock.ErrorMessage(err)
	} else if v := ap.VoteOf(rev.Name); v != nil && ap.Status == airlock.StatusPending {
		p.CannotResolve = fmt.Sprintf("You %s this request at %s; %s.", v.Status, v.At.UTC().Format(time.RFC3339), stillNeeded(&ap))
	}
	if p.Pending() && p.CannotResolve == "" {
		if p.Identical, err = in.identical(ctx, &ap, rev); err != nil {
			return nil, err
		}
		if p.SameShape, p.Shape, err = in.sameShape(ctx, &ap, rev, p.Identical); err != nil {
			return nil, err
		}
	}
	if p.Pending() && p.CannotResolve == "" && ap.Rememberable() {
		approved := ap
		approved.Status = airlock.StatusApproved
		if g, err := in.host.Gate().Remember(ctx, approved, nil, rev.Name, "", rememberTTL, time.Now()); err == nil {
			p.Remember = &g
			p.Shapes = in.rememberShapes(ctx, approved, &g, rev.Name)
		}
	}
	evs, err := in.host.Store().Events(ctx, airlock.EventFilter{ApprovalID: ap.ID, Limit: maxTimeline + 1})
	if err != nil {
		return nil, err
	}
	if len(evs) > maxTimeline {
		evs, p.MoreEvents = evs[:maxTimeline], true
	}
	p.Timeline = evs
	if !whole {
		return p, nil
	}
	p.Args = prettyArgs(ap.Args)
	p.ArgsBytes, p.ArgsLines = len(p.Args), strings.Count(p.Args, "\n")+1
	p.Large = p.ArgsBytes > largeArgs || p.ArgsLines > largeArgsLines
	p.Hidden, p.HiddenTotal = ap.Hidden()
	for _, name := range ap.Reviewers {
		if name != ap.Owner && !slices.ContainsFunc(p.Deciders, func(d Decider) bool { return d.Name == name }) {
			p.Deciders = append(p.Deciders, Decider{Name: name})
		}
	}
	if ap.Owner != "" {
		p.Deciders = append(p.Deciders, Decider{Name: ap.Owner, Owner: true})
	}
	sums, err := in.host.Store().TrustSummaries(ctx, airlock.TrustFilter{Agent: ap.Agent, Class: airlock.Class(className(ap.Class))})
	if err != nil {
		return nil, err
	}
	for i := range sums {
		if sums[i].Agent == ap.Agent && sums[i].Class == airlock.Class(className(ap.Class)) {
			p.Trust = &sums[i]
		}
	}
	p.Commands = commandsOf(evs)
	p.ToolChange = toolChangeOf(ap)
	p.Runs = runsOf(evs)
	if p.Notices, err = in.host.Store().Notifications(ctx, airlock.NotificationFilter{ApprovalID: ap.ID, Limit: maxTimeline}); err != nil {
		return nil, err
	}
	return p, nil
}

// clipTitle makes a page title of s: hidden characters escaped, at most
// 80 characters.
func clipTitle(s string) string {
	t := escaped(s)
	if utf8.RuneCountInString(t) <= 80 {
		return t
	}
	r := []rune(t)
	return string(r[:79]) + "…"
}

// EventsURL is the live stream the page's decision region listens to.
func (p *DetailPage) EventsURL() string {
	return "/inbox/events?after=" + strconv.FormatInt(p.After, 10)
}

// commandsOf returns the shell commands of the request's decision event.
func commandsOf(evs []airlock.Event) []airlock.CommandNote {
	for _, e := range evs {
		if e.Kind != airlock.EventDecision {
			continue
		}
		var d airlock.DecisionPayload
		if json.Unmarshal(e.Payload, &d) == nil {
			return d.Commands
		}
	}
	return nil
}

// session answers 204 while the session lives. An open page asks when its
// live stream fails, to tell a session that ended (401) from a server that
// does not answer.
func (in *inbox) session(w http.ResponseWriter, r *http.Request) {
	w.WriteHeader(http.StatusNoContent)
}

// storeFail answers a store error with its page.
func (in *inbox) storeFail(w http.ResponseWriter, r *http.Request, err error) {
	switch airlock.ErrorCode(err) {
	case airlock.ENOTFOUND:
		in.fail(w, r, http.StatusNotFound, "No such request", airlock.ErrorMessage(err))
	case airlock.EINVALID:
		in.fail(w, r, http.StatusBadRequest, "Invalid request", airlock.ErrorMessage(err))
	default:
		in.host.Logger().Error("inbox", "path", r.URL.Path, "err", err)
		in.fail(w, r, http.StatusServiceUnavailable, "Airlock cannot answer now", "The store did not answer. Retry in a moment.")
	}
}

// resolve approves or rejects a request as the session's person. The form
// echoes the action hash the page showed, so the resolution applies to
// exactly that action.
func (in *inbox) resolve(status airlock.ApprovalStatus) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		id := r.PathValue("id")
		r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
		if err := r.ParseForm(); err != nil {
			in.fail(w, r, http.StatusBadRequest, "The form could not be read", err.Error())
			return
		}
		bad := func(msg string) {
			in.render(w, http.StatusBadRequest, "error", &ErrorPage{Base: baseFor(r, "Not sent"), Status: http.StatusBadRequest,
				Heading: "Not sent", Message: msg, ApprovalID: id})
		}
		h, err := airlock.ParseHash(r.PostForm.Get("action_hash"))
		if err != nil {
			bad("The form must carry the action hash it showed: " + airlock.ErrorMessage(err))
			return
		}
		reason, problem := formReason(r, status)
		if problem != "" {
			bad(problem)
			return
		}
		t := principalFrom(ctx)
		remember := status == airlock.StatusApproved && r.PostForm.Get("remember") == "1"
		shapeName := r.PostForm.Get("remember_shape")
		// An edit reviewed on its page comes with its arguments: the
		// enforcer decides it again as it approves it.
		var args json.RawMessage
		if a := strings.TrimSpace(r.PostForm.Get("args")); a != "" && status == airlock.StatusApproved {
			args, remember = json.RawMessage(a), false
		}
		var signed *airlock.PasskeyAssertion
		if status == airlock.StatusApproved {
			var err error
			if signed, err = in.passkeyAssertion(r); err != nil {
				in.host.Refuse(ctx, t, "approval "+id, airlock.EUNAUTHORIZED, airlock.ErrorMessage(err))
				in.render(w, http.StatusForbidden, "error", &ErrorPage{Base: baseFor(r, "Passkey not accepted"), Status: http.StatusForbidden,
					Heading: "Your passkey did not approve it", Message: airlock.ErrorMessage(err), ApprovalID: id})
				return
			}
		}
		ap, err := in.enforcer().Resolve(ctx, airlock.Resolution{
			ApprovalID: id, Status: status, ActionHash: h, Reviewer: t.Reviewer(), Reason: reason, Surface: airlock.SurfaceWeb,
			RunNow: status == airlock.StatusApproved && r.PostForm.Get("run_now") == "1", Passkey: signed,
		}, args)
		code := airlock.ErrorCode(err)
		switch code {
		case "":
			in.host.Metrics().Resolved(&ap)
			next := "/inbox?done=" + url.QueryEscape(ap.ID)
			if remember {
				g, err := in.remember(ctx, ap, t, reason, shapeName)
				if err != nil {
					in.render(w, http.StatusConflict, "error", &ErrorPage{Base: baseFor(r, "Approved, not remembered"),
						Status: http.StatusConflict, Heading: "Approved, but not remembered", ApprovalID: id,
						Message: "The request is approved; the grant was not made: " + airlock.ErrorMessage(err)})
					return
				}
				next += "&grant=" + url.QueryEscape(g.ID)
			}
			http.Redirect(w, r, next, http.StatusSeeOther)
			return
		case airlock.EUNAUTHORIZED:
			in.host.RefuseApproval(ctx, t, &ap, code, airlock.ErrorMessage(err))
			in.render(w, http.StatusForbidden, "error", &ErrorPage{Base: baseFor(r, "Not yours to resolve"), Status: http.StatusForbidden,
				Heading: "Not yours to resolve", Message: airlock.ErrorMessage(err), ApprovalID: id})
			return
		case airlock.CodeHashMismatch, airlock.ECONFLICT:
		default:
			in.storeFail(w, r, err)
			return
		}
		// Another action, or too late: say what the request holds now.
		if code == airlock.CodeHashMismatch {
			in.host.RefuseApproval(ctx, t, &ap, code, airlock.ErrorMessage(err))
		}
		cur, lerr := in.host.Store().Approval(context.WithoutCancel(ctx), id)
		if lerr != nil {
			cur = ap
		}
		p := &ErrorPage{Base: baseFor(r, "Not applied"), Status: http.StatusConflict, Heading: "Not applied",
			Message: airlock.ErrorMessage(err), ApprovalID: id}
		if code == airlock.CodeHashMismatch {
			p.Heading = "This request holds a different action"
			p.ShownHash, p.CurrentHash = "sha256:"+h.String(), "sha256:"+cur.ActionHash.String()
		} else if cur.Status != airlock.StatusPending {
			p.Heading = "Already " + string(cur.Status)
			p.Settled = &cur
		} else {
			p.Heading = "Too late: the request's deadline passed"
		}
		p.Title = p.Heading
		in.render(w, http.StatusConflict, "error", p)
	}
}

// rememberTTL is how long the inbox's "approve and remember" grants last.
const rememberTTL = airlock.DefaultRememberTTL

// RememberShape is one shape "approve and remember" may grant instead of
// the narrowest: its form value, and the grant it would make.
type RememberShape struct {
	Name  string // exact or wider
	Label string
	Grant airlock.Grant
}

// rememberShapes are the other shapes the person may remember ap as, each
// one the gate accepts: the exact action, when the narrowest is not it;
// one step wider (a command's words less the last, a directory's parent).
func (in *inbox) rememberShapes(ctx context.Context, ap airlock.Approval, narrowest *airlock.Grant, by string) []RememberShape {
	var out []RememberShape
	for _, c := range []struct {
		name, label string
		shape       *airlock.GrantPattern
	}{
		{"exact", "Only this exact action", exactShape(&ap, &narrowest.Pattern)},
		{"wider", "One step wider", widerShape(&narrowest.Pattern)},
	} {
		if c.shape == nil {
			continue
		}
		if g, err := in.host.Gate().Remember(ctx, ap, c.shape, by, "", rememberTTL, time.Now()); err == nil {
			out = append(out, RememberShape{Name: c.name, Label: c.label, Grant: g})
		}
	}
	return out
}

// exactShape is the exact action's shape, nil when p is it already.
func exactShape(ap *airlock.Approval, p *airlock.GrantPattern) *airlock.GrantPattern {
	if p.Kind == airlock.PatternExact {
		return nil
	}
	return &airlock.GrantPattern{Kind: airlock.PatternExact, Hash: ap.ActionHash}
}

// widerShape is p one step wider, nil when there is none: a command's
// words less the last (one word at least), a directory's parent (not /).
func widerShape(p *airlock.GrantPattern) *airlock.GrantPattern {
	switch {
	case p.Kind == airlock.PatternCommand && len(p.Command) > 1:
		return &airlock.GrantPattern{Kind: airlock.PatternCommand, Command: p.Command[:len(p.Command)-1]}
	case p.Kind == airlock.PatternPath && path.Dir(p.Path) != "/" && path.Dir(p.Path) != p.Path:
		return &airlock.GrantPattern{Kind: airlock.PatternPath, Path: path.Dir(p.Path)}
	}
	return nil
}

// remember makes the standing grant of the request t just approved: the
// shape the detail page showed, by the store's clock.
func (in *inbox) remember(ctx context.Context, ap airlock.Approval, t *airlock.Token, reason, shapeName string) (airlock.Grant, error) {
	var shape *airlock.GrantPattern
	if shapeName != "" && shapeName != "narrowest" {
		// The shapes offered, computed again from the request: the form
		// names one, it does not carry it.
		narrowest, err := in.host.Gate().Remember(ctx, ap, nil, t.Reviewer().Name, "", rememberTTL, time.Now())
		if err != nil {
			return narrowest, err
		}
		for _, o := range in.rememberShapes(ctx, ap, &narrowest, t.Reviewer().Name) {
			if o.Name == shapeName {
				shape = &o.Grant.Pattern
			}
		}
		if shape == nil {
			return airlock.Grant{}, airlock.Errorf(airlock.EINVALID, "no shape %q is offered for this request", shapeName)
		}
	}
	return in.enforcer().RememberApproved(ctx, ap, shape, nil, t.Reviewer().Name, reason, rememberTTL)
}

// events streams an "approval" event (data: the request's ID, id: the
// audit sequence number) for every change to a request, until the client
// leaves, the server drains, or the session ends.
func (in *inbox) events(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	si := sessionFrom(ctx)
	var after int64
	var err error
	switch v := r.Header.Get("Last-Event-ID"); {
	case v != "":
		after, err = strconv.ParseInt(v, 10, 64)
	case r.URL.Query().Get("after") != "":
		after, err = strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
	default:
		after, err = in.host.Store().Head(ctx)
	}
	if err != nil || after < 0 {
		http.Error(w, "after must be an audit sequence number", http.StatusBadRequest)
		return
	}
	ended, opening := in.sessions.openStream(si.id)
	if opening == streamEnded {
		http.Error(w, "signed out: sign in again at /inbox/signin", http.StatusUnauthorized)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	if opening == streamTooMany {
		// An answer the page's EventSource does not retry: the closing
		// event (the pages' sse-close), which the page reports.
		fmt.Fprintf(w, "event: %s\ndata: too many live pages (%d) in this session\n\n", streamClosed, MaxStreams)
		return
	}
	defer in.sessions.closeStream(si.id)
	if in.sessions.watch() {
		go in.watchStreams()
	}
	if _, err := io.WriteString(w, ": airlock inbox\nretry: 2000\n\n"); err != nil {
		return
	}
	rc.Flush()
	ctx, cancel := in.host.WaitContext(ctx, 1<<62)
	defer cancel()
	// Signing out here, or the token found revoked, ends the stream at
	// once; a session ended on another replica, at the next round of
	// watchStreams (SessionCheckEvery) or the stream's next wake-up,
	// whichever comes first.
	go func() {
		select {
		case <-ended:
			cancel()
		case <-ctx.Done():
		}
	}()
	// A stream that ends with its session is closed for good, with the
	// event the pages' sse-close names (they ask /inbox/session why); one
	// that merely ends (the server drains, a network hiccup) is retried.
	over := false
	defer func() {
		select {
		case <-ended:
			over = true
		default:
		}
		if over {
			fmt.Fprintf(w, "event: %s\ndata: signed out\n\n", streamClosed)
			rc.Flush()
		}
	}()
	var buf bytes.Buffer
	for ctx.Err() == nil {
		ss, state := in.sessions.get(ctx, in.host.Store(), in.host.Logger(), si.id, time.Now(), false)
		if state == sessionGone {
			over = true
			return
		}
		if state == sessionLive {
			if _, ts := in.checkToken(ctx, ss.secret); ts == tokenDead {
				in.sessions.endToken(ss.token.ID)
				over = true
				return
			}
		}
		// Only the approval events are read (their payloads may be large
		// and the others are not shown), up to the head read first, so
		// that the stream moves past the rest.
		head, err := in.host.Store().Head(ctx)
		var evs []airlock.Event
		if err == nil {
			evs, err = in.host.Store().Events(ctx, airlock.EventFilter{AfterSeq: after, BeforeSeq: head + 1,
				KindPrefix: "approval.", Limit: airlock.MaxPageSize})
		}
		if err != nil {
			if ctx.Err() == nil {
				in.host.Logger().Warn("inbox event stream", "err", err)
			}
			return
		}
		buf.Reset()
		if after > head {
			// The page read a log that is no longer there (restored from
			// a backup): start again at the head, and have the page read
			// what there is now.
			after = head
			fmt.Fprintf(&buf, "event: approval\nid: %d\ndata: changed\n\nevent: reset\ndata: changed\n\n", head)
		}
		for _, e := range evs {
			after = e.Seq
			// Every list listens to "approval"; a request's own page to
			// "approval-<ID>".
			id := sseData(e.ApprovalID)
			fmt.Fprintf(&buf, "event: approval\nid: %d\ndata: %s\n\nevent: approval-%s\ndata: %s\n\n", e.Seq, id, id, id)
		}
		if len(evs) == airlock.MaxPageSize {
			if _, err := w.Write(buf.Bytes()); err != nil {
				return
			}
			continue
		}
		if head > after {
			// Nothing more to show up to the head, but a reconnect
			// resumes after it.
			after = head
			fmt.Fprintf(&buf, "id: %d\n\n", after)
		}
		if buf.Len() > 0 {
			if _, err := w.Write(buf.Bytes()); err != nil {
				return
			}
			rc.Flush()
		}
		wctx, wcancel := context.WithTimeout(ctx, heartbeat)
		err = in.host.Store().WaitEvents(wctx, after)
		wcancel()
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil {
				return
			}
			rc.Flush()
		} else if err != nil {
			return
		}
	}
}

// streamClosed is the event that ends a page's stream for good: the pages
// name it in their sse-close.
const streamClosed = "airlock-closed"

// sseData keeps an ID on one line of an event's data.
func sseData(id string) string {
	if strings.ContainsAny(id, "\r\n") {
		return "changed"
	}
	return id
}

// prettyArgs indents the arguments as the same JSON value with their
// strings readable: \u escapes become the characters they stand for (a
// reviewer reads "<script>", not "\u003cscript\u003e"), and hidden ones are
// made visible when rendered.
func prettyArgs(args json.RawMessage) string {
	if len(args) == 0 {
		return "(none)"
	}
	text, _ := airlock.ReadableArgs(args)
	return text
}

// shortDur writes a duration as the inbox script does: 1h2m3s, 4m5s, 6s.
func shortDur(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int64(d / time.Second)
	h, m, sec := s/3600, s%3600/60, s%60
	var b strings.Builder
	if h > 0 {
		fmt.Fprintf(&b, "%dh", h)
	}
	if h > 0 || m > 0 {
		fmt.Fprintf(&b, "%dm", m)
	}
	fmt.Fprintf(&b, "%ds", sec)
	return b.String()
}

// roundDur writes a duration to a precision a person reads: 357ms, 4.2s,
// 3m12s.
func roundDur(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

func timeLeft(t time.Time) string {
	d := time.Until(t)
	if d <= 0 {
		return "expired"
	}
	return shortDur(d) + " left"
}

// ToolChange is an MCP tool's definition a release request would let in.
type ToolChange struct {
	Server, Tool string
	// Changed is set when an earlier definition was pinned; else the tool
	// is new and Lines are its whole definition.
	Changed bool
	Lines   []DiffLine
}

// DiffLine is one line of a definition's diff: Mark is "-" (only in the
// pinned definition), "+" (only in the new one) or " " (in both).
type DiffLine struct{ Mark, Text string }

// toolChangeOf reads the change of a tool release request, nil for any
// other request.
func toolChangeOf(ap airlock.Approval) *ToolChange {
	if ap.Tool != airlock.ToolReleaseTool {
		return nil
	}
	var a struct {
		Server     string          `json:"server"`
		Tool       string          `json:"tool"`
		Change     string          `json:"change"`
		Diff       string          `json:"diff"`
		Definition json.RawMessage `json:"definition"`
	}
	if json.Unmarshal(ap.Args, &a) != nil {
		return nil
	}
	c := &ToolChange{Server: a.Server, Tool: a.Tool, Changed: a.Change == "changed"}
	diff := a.Diff
	if !c.Changed {
		diff = gate.DefinitionDiff(json.RawMessage(`{}`), a.Definition)
	}
	for _, line := range strings.Split(strings.TrimSuffix(diff, "\n"), "\n") {
		if line == "" {
			continue
		}
		c.Lines = append(c.Lines, DiffLine{Mark: line[:1], Text: line[1:]})
	}
	return c
}

// RunResult is one execution of a request's action with what it returned.
type RunResult struct {
	Seq    int64
	Time   time.Time
	Status string // ok or failed
	Error  string
	// Text is what the tool said (an MCP result's text content), or the
	// result as JSON.
	Text string
}

// runsOf reads the execution records that kept a result.
func runsOf(evs []airlock.Event) []RunResult {
	var out []RunResult
	for _, x := range airlock.Executions(evs) {
		if len(x.Result) == 0 {
			continue
		}
		out = append(out, RunResult{Seq: x.Seq, Time: x.Time, Status: x.Status, Error: x.Error, Text: x.ResultText()})
	}
	return out
}
