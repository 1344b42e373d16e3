package http

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
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/airlock-dev/airlock"
)

// The reviewer's web inbox: server-rendered pages (html/template, parsed
// once at start-up), htmx and its SSE extension vendored under web/assets,
// no external requests.

//go:embed web/*.html web/assets/*.js web/assets/*.css
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

// inbox serves the web inbox for one Server.
type inbox struct {
	s        *Server
	pages    map[string]*template.Template
	assets   map[string]inboxAsset // by name
	sessions sessions
	csrf     *http.CrossOriginProtection
}

type inboxAsset struct {
	hash, contentType string
	body              []byte
}

// mountInbox adds the inbox's routes to mux. Every inbox route is on this
// screen; those that change state are POST-only and refuse cross-origin
// requests.
func (s *Server) mountInbox(mux *http.ServeMux) {
	in := newInbox(s)
	post := func(h http.HandlerFunc) http.Handler { return in.csrf.Handler(h) }

	mux.HandleFunc("GET /inbox/signin", in.signinForm)
	mux.Handle("POST /inbox/signin", post(in.signin))
	mux.Handle("POST /inbox/signout", post(in.signout))

	mux.HandleFunc("GET /inbox", in.withSession(in.list))
	mux.HandleFunc("GET /inbox/{$}", in.withSession(in.list))
	mux.HandleFunc("GET /inbox/list", in.withSession(in.listRows))
	mux.HandleFunc("GET /inbox/events", in.withSession(in.events))
	mux.HandleFunc("GET /inbox/approvals/{id}", in.withSession(in.detail))
	mux.Handle("POST /inbox/approvals/{id}/approve", post(in.withSession(in.resolve(airlock.StatusApproved))))
	mux.Handle("POST /inbox/approvals/{id}/reject", post(in.withSession(in.resolve(airlock.StatusRejected))))

	mux.HandleFunc("GET /inbox/assets/{hash}/{name}", in.asset)
}

// newInbox parses the templates and hashes the assets; a broken template
// is a build error, so it panics at start-up rather than at the first page.
func newInbox(s *Server) *inbox {
	in := &inbox{s: s, pages: map[string]*template.Template{}, assets: map[string]inboxAsset{}, csrf: http.NewCrossOriginProtection()}
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
		"vis":      func(s string) []Segment { return visible(s, false) },
		"visLines": func(s string) []Segment { return visible(s, true) },
		"rfc3339":  func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
		"since":    func(t time.Time) string { return shortDur(time.Since(t)) },
		"left":     timeLeft,
	}
	base := template.Must(template.New("").Funcs(funcs).ParseFS(webFS, "web/layout.html", "web/parts.html"))
	for _, page := range []string{"signin", "inbox", "detail", "error"} {
		in.pages[page] = template.Must(template.Must(base.Clone()).ParseFS(webFS, "web/"+page+".html"))
	}
	in.csrf.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secure(w)
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
}

func baseFor(r *http.Request, title string) Base {
	b := Base{Title: title}
	if si := sessionFrom(r.Context()); si != nil {
		b.Who, b.Role = si.token.Name, si.token.Role
	}
	return b
}

// render executes a page into a buffer first, so that a template error is
// a clean 500 and not half a page.
func (in *inbox) render(w http.ResponseWriter, status int, page string, data any) {
	in.execute(w, status, page, "layout", data)
}

func (in *inbox) execute(w http.ResponseWriter, status int, page, name string, data any) {
	var buf bytes.Buffer
	if err := in.pages[page].ExecuteTemplate(&buf, name, data); err != nil {
		in.s.logger().Error("inbox: render", "page", page, "err", err)
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
	Status  string // "" for pending, "any" for every status
	Oldest  bool
	Cursor  string
}

// Query encodes the filter for a link; with cursor, for that page.
func (f InboxFilter) Query(cursor string) string {
	q := url.Values{}
	for k, v := range map[string]string{"agent": f.Agent, "class": f.Class, "min_tier": f.MinTier, "status": f.Status, "cursor": cursor} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if f.Oldest {
		q.Set("oldest", "1")
	}
	return q.Encode()
}

// store translates the filter for FindApprovals.
func (f InboxFilter) store() (airlock.ApprovalFilter, error) {
	af := airlock.ApprovalFilter{Agent: f.Agent, Class: f.Class, Oldest: f.Oldest, Cursor: f.Cursor, Limit: inboxPageSize}
	switch f.Status {
	case "":
		af.Status = []airlock.ApprovalStatus{airlock.StatusPending}
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

func filterFrom(r *http.Request) InboxFilter {
	q := r.URL.Query()
	oldest, _ := strconv.ParseBool(q.Get("oldest"))
	return InboxFilter{
		Agent: strings.TrimSpace(q.Get("agent")), Class: strings.TrimSpace(q.Get("class")),
		MinTier: q.Get("min_tier"), Status: q.Get("status"), Oldest: oldest, Cursor: q.Get("cursor"),
	}
}

// InboxPage is the list of requests.
type InboxPage struct {
	Base
	Filter    InboxFilter
	Approvals []airlock.Approval
	// NextCursor continues the listing, "" on the last page.
	NextCursor string
	// After is the audit log's head when the page was read: the live
	// stream starts there, so that no change in between is missed.
	After    int64
	Error    string
	Tiers    []airlock.RiskTier
	Statuses []airlock.ApprovalStatus
}

// ListURL is where the list region re-fetches itself.
func (p *InboxPage) ListURL() string { return "/inbox/list?" + p.Filter.Query(p.Filter.Cursor) }

// NextURL is the next page's address, "" on the last page.
func (p *InboxPage) NextURL() string {
	if p.NextCursor == "" {
		return ""
	}
	return "/inbox?" + p.Filter.Query(p.NextCursor)
}

// EventsURL is the live stream's address.
func (p *InboxPage) EventsURL() string {
	return "/inbox/events?after=" + strconv.FormatInt(p.After, 10)
}

func (in *inbox) inboxPage(r *http.Request) (*InboxPage, int) {
	p := &InboxPage{Base: baseFor(r, "Inbox"), Filter: filterFrom(r), Tiers: airlock.Tiers(),
		Statuses: []airlock.ApprovalStatus{airlock.StatusPending, airlock.StatusApproved, airlock.StatusRejected, airlock.StatusExpired, airlock.StatusCancelled}}
	f, err := p.Filter.store()
	if err != nil {
		p.Error = airlock.ErrorMessage(err)
		return p, http.StatusBadRequest
	}
	ctx := r.Context()
	// The head first: a change after it reaches the stream.
	if p.After, err = in.s.store().Head(ctx); err != nil {
		return in.storeError(p, err)
	}
	page, err := in.s.store().FindApprovals(ctx, f)
	if err != nil {
		return in.storeError(p, err)
	}
	p.Approvals, p.NextCursor = page.Approvals, page.NextCursor
	return p, http.StatusOK
}

func (in *inbox) storeError(p *InboxPage, err error) (*InboxPage, int) {
	if code := airlock.ErrorCode(err); code == airlock.EINVALID {
		p.Error = airlock.ErrorMessage(err)
		return p, http.StatusBadRequest
	}
	in.s.logger().Error("inbox: list approvals", "err", err)
	p.Error = "The requests cannot be read now; retry in a moment."
	return p, http.StatusServiceUnavailable
}

func (in *inbox) list(w http.ResponseWriter, r *http.Request) {
	p, status := in.inboxPage(r)
	in.render(w, status, "inbox", p)
}

// listRows is the list region alone, which the page re-fetches live.
func (in *inbox) listRows(w http.ResponseWriter, r *http.Request) {
	p, status := in.inboxPage(r)
	in.execute(w, status, "inbox", "rows", p)
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
	// Trust is the agent's record for this class, nil when it has none.
	Trust *airlock.TrustSummary
	// CannotResolve says why the signed-in person may not resolve it.
	CannotResolve string
}

// Pending reports whether the request still waits for a person.
func (p *DetailPage) Pending() bool {
	return p.Approval.Status == airlock.StatusPending && time.Now().Before(p.Approval.Expires)
}

// ApprovalRate is the trust record's approval rate in percent.
func (p *DetailPage) ApprovalRate() string {
	if p.Trust == nil {
		return ""
	}
	return strconv.FormatFloat(p.Trust.Rate()*100, 'f', 0, 64) + "%"
}

func (in *inbox) detail(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	ap, err := in.s.store().Approval(ctx, r.PathValue("id"))
	if err != nil {
		in.storeFail(w, r, err)
		return
	}
	p := &DetailPage{Base: baseFor(r, "Request "+ap.ID), Approval: ap}
	p.Args = prettyArgs(ap.Args)
	p.ArgsBytes, p.ArgsLines = len(p.Args), strings.Count(p.Args, "\n")+1
	p.Large = p.ArgsBytes > largeArgs || p.ArgsLines > largeArgsLines
	class := airlock.Class(strings.TrimSuffix(ap.Class, airlock.NeedsHumanSuffix))
	sums, err := in.s.store().TrustSummaries(ctx, airlock.TrustFilter{Agent: ap.Agent, Class: class})
	if err != nil {
		in.storeFail(w, r, err)
		return
	}
	for i := range sums {
		if sums[i].Agent == ap.Agent && sums[i].Class == class {
			p.Trust = &sums[i]
		}
	}
	if err := ap.Authorize(principalFrom(ctx).Reviewer()); err != nil {
		p.CannotResolve = airlock.ErrorMessage(err)
	}
	in.render(w, http.StatusOK, "detail", p)
}

// storeFail answers a store error with its page.
func (in *inbox) storeFail(w http.ResponseWriter, r *http.Request, err error) {
	switch airlock.ErrorCode(err) {
	case airlock.ENOTFOUND:
		in.fail(w, r, http.StatusNotFound, "No such request", airlock.ErrorMessage(err))
	case airlock.EINVALID:
		in.fail(w, r, http.StatusBadRequest, "Invalid request", airlock.ErrorMessage(err))
	default:
		in.s.logger().Error("inbox", "path", r.URL.Path, "err", err)
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
		reason := strings.TrimSpace(r.PostForm.Get("reason"))
		switch {
		case status == airlock.StatusRejected && reason == "":
			bad("A rejection needs a reason: the agent and its owner read it.")
			return
		case len(reason) > maxReasonLen || !utf8.ValidString(reason):
			bad(fmt.Sprintf("The reason must be valid text of at most %d bytes.", maxReasonLen))
			return
		}
		t := principalFrom(ctx)
		ap, err := in.s.store().ResolveApproval(ctx, airlock.Resolution{
			ApprovalID: id, Status: status, ActionHash: h, Reviewer: t.Reviewer(), Reason: reason, Surface: airlock.SurfaceWeb,
		})
		code := airlock.ErrorCode(err)
		switch code {
		case "":
			in.s.metrics.resolved(&ap)
			http.Redirect(w, r, "/inbox", http.StatusSeeOther)
			return
		case airlock.EUNAUTHORIZED:
			in.s.refuse(ctx, t, ap.Agent, code, airlock.ErrorMessage(err))
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
			in.s.refuse(ctx, t, ap.Agent, code, airlock.ErrorMessage(err))
		}
		cur, lerr := in.s.store().Approval(context.WithoutCancel(ctx), id)
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
		after, err = in.s.store().Head(ctx)
	}
	if err != nil || after < 0 {
		http.Error(w, "after must be an audit sequence number", http.StatusBadRequest)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	if _, err := io.WriteString(w, ": airlock inbox\nretry: 2000\n\n"); err != nil {
		return
	}
	rc.Flush()
	ctx, cancel := in.s.waitContext(ctx, 1<<62)
	defer cancel()
	var buf bytes.Buffer
	for ctx.Err() == nil {
		ss, ok := in.sessions.get(si.id, time.Now(), false)
		if !ok || in.checkToken(ctx, &ss) == tokenDead {
			return
		}
		evs, err := in.s.store().Events(ctx, airlock.EventFilter{AfterSeq: after, Limit: airlock.MaxPageSize})
		if err != nil {
			if ctx.Err() == nil {
				in.s.logger().Warn("inbox event stream", "err", err)
			}
			return
		}
		buf.Reset()
		sent := false
		for _, e := range evs {
			after = e.Seq
			if !strings.HasPrefix(e.Kind, "approval.") {
				continue
			}
			fmt.Fprintf(&buf, "event: approval\nid: %d\ndata: %s\n\n", e.Seq, sseData(e.ApprovalID))
			sent = true
		}
		if len(evs) > 0 && !sent {
			// Nothing to show, but a reconnect resumes after these.
			fmt.Fprintf(&buf, "id: %d\n\n", after)
		}
		if buf.Len() > 0 {
			if _, err := w.Write(buf.Bytes()); err != nil {
				return
			}
			rc.Flush()
		}
		if len(evs) == airlock.MaxPageSize {
			continue
		}
		wctx, wcancel := context.WithTimeout(ctx, heartbeat)
		err = in.s.store().WaitEvents(wctx, after)
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

// sseData keeps an ID on one line of an event's data.
func sseData(id string) string {
	if strings.ContainsAny(id, "\r\n") {
		return "changed"
	}
	return id
}

// Segment is a run of text; Mark is set when it stands for characters
// made visible (control, format and bidi characters, odd spaces, invalid
// bytes), written as escapes.
type Segment struct {
	Text string
	Mark bool
}

// hidden reports whether r would be invisible or would change how the text
// around it reads.
func hidden(r rune, keepLines bool) bool {
	switch {
	case r == ' ', r == '\n' && keepLines:
		return false
	}
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.IsSpace(r) || r == utf8.RuneError ||
		unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r)
}

// visible splits s into plain runs and escapes (\u202e, \x1b, \t) for
// what would be hidden; html/template escapes the rest.
func visible(s string, keepLines bool) []Segment {
	var out []Segment
	plain := 0
	flush := func(i int) {
		if i > plain {
			out = append(out, Segment{Text: s[plain:i]})
		}
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !hidden(r, keepLines) || (r == utf8.RuneError && size > 1) {
			i += size
			continue
		}
		flush(i)
		var esc string
		switch {
		case r == '\n':
			esc = `\n`
		case r == '\t':
			esc = `\t`
		case r == '\r':
			esc = `\r`
		case r == utf8.RuneError:
			esc = fmt.Sprintf(`\x%02x`, s[i])
		case r > 0xffff:
			hi, lo := utf16.EncodeRune(r)
			esc = fmt.Sprintf(`\u%04x\u%04x`, hi, lo)
		default:
			esc = fmt.Sprintf(`\u%04x`, r)
		}
		if n := len(out); n > 0 && out[n-1].Mark && plain == i {
			out[n-1].Text += esc
		} else {
			out = append(out, Segment{Text: esc, Mark: true})
		}
		i += size
		plain = i
	}
	flush(len(s))
	return out
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

func timeLeft(t time.Time) string {
	d := time.Until(t)
	if d <= 0 {
		return "expired"
	}
	return shortDur(d) + " left"
}
