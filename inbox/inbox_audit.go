package inbox

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/airlock-dev/airlock"
)

// The audit log in the inbox: newest first, filtered by agent, trace,
// request or kind, under the chain's verification status.

const (
	auditPageSize = 50
	// inlinePayload is the largest payload the list shows in place; a
	// larger one is shown whole on its event's page. With 50 events to a
	// page, any agent's payloads could otherwise make the page every
	// reviewer reads many megabytes long.
	inlinePayload = 16 << 10
	// chainRecheck is how long a verification stands before a page asks
	// for a new one; chainFirstWait how long a page waits for the first.
	chainRecheck   = 30 * time.Second
	chainFirstWait = 2 * time.Second
	// chainTimeout bounds one verification of the whole log.
	chainTimeout = 5 * time.Minute
)

// chainCheck verifies the whole log in the background, at most one
// verification at a time and at most once per chainRecheck however many
// pages ask; a page shows the last result at once.
type chainCheck struct {
	mu      sync.Mutex
	last    ChainStatus
	running bool
	done    chan struct{} // closed when the running verification ends
}

// ChainStatus is the outcome of the last verification of the audit log.
type ChainStatus struct {
	Report airlock.ChainReport
	// At is when the verification ended; zero before the first.
	At time.Time
	// Err says why the log could not be read, "" when it was.
	Err string
	// Running is set while a new verification is under way.
	Running bool
}

// Verified reports whether the whole chain verified.
func (c *ChainStatus) Verified() bool { return !c.At.IsZero() && c.Err == "" && c.Report.OK() }

// status returns the last verification, starting a new one when it is
// older than chainRecheck, under a context from background (which outlives
// the page that starts it). Before the first result, it waits for it up
// to chainFirstWait.
func (c *chainCheck) status(ctx context.Context, log airlock.AuditLog, background func() (context.Context, context.CancelFunc)) ChainStatus {
	c.mu.Lock()
	if !c.running && (c.last.At.IsZero() || time.Since(c.last.At) >= chainRecheck) {
		c.running, c.done = true, make(chan struct{})
		vctx, cancel := background()
		done := c.done
		go func() {
			defer cancel()
			c.verify(vctx, log, done)
		}()
	}
	st, done := c.last, c.done
	st.Running = c.running
	c.mu.Unlock()
	if st.At.IsZero() && st.Running {
		t := time.NewTimer(chainFirstWait)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
		case <-ctx.Done():
		}
		c.mu.Lock()
		st = c.last
		st.Running = c.running
		c.mu.Unlock()
	}
	return st
}

// verify checks the whole chain and keeps the result.
func (c *chainCheck) verify(ctx context.Context, log airlock.AuditLog, done chan struct{}) {
	rep, err := log.Verify(ctx)
	st := ChainStatus{Report: rep, At: time.Now()}
	if err != nil {
		st.Err = airlock.ErrorMessage(err)
	}
	c.mu.Lock()
	c.last, c.running = st, false
	close(done)
	c.mu.Unlock()
}

// AuditFilter is the audit page's query.
type AuditFilter struct {
	Agent, Trace, Approval, Kind string
	// Before pages back: only events before this sequence number.
	Before int64
}

// Query encodes the filter for a link; with before, for that page.
func (f AuditFilter) Query(before int64) string {
	q := url.Values{}
	for k, v := range map[string]string{"agent": f.Agent, "trace": f.Trace, "approval": f.Approval, "kind": f.Kind} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if before > 0 {
		q.Set("before", strconv.FormatInt(before, 10))
	}
	return q.Encode()
}

// AuditPage is one page of the audit log, newest first.
type AuditPage struct {
	Base
	Filter AuditFilter
	Events []AuditEvent
	// NextBefore continues with older events, 0 on the last page.
	NextBefore int64
	// Head is the log's last sequence number.
	Head  int64
	Chain ChainStatus
	Error string
}

// NextURL is the next (older) page's address, "" on the last page.
func (p *AuditPage) NextURL() string {
	if p.NextBefore == 0 {
		return ""
	}
	return "/inbox/audit?" + p.Filter.Query(p.NextBefore)
}

// Behind counts the events appended since the chain was verified.
func (p *AuditPage) Behind() int64 {
	if p.Chain.Err != "" || p.Head < p.Chain.Report.HeadSeq {
		return 0
	}
	return p.Head - p.Chain.Report.HeadSeq
}

// AuditEvent is an event with its payload made readable.
type AuditEvent struct {
	airlock.Event
	// Payload is the payload indented, with readable strings; "" when it
	// is too large to show in a list (see Size).
	Payload string
	Size    int
}

func auditEvent(e airlock.Event, whole bool) AuditEvent {
	ae := AuditEvent{Event: e, Size: len(e.Payload)}
	if whole || len(e.Payload) <= inlinePayload {
		ae.Payload = prettyArgs(e.Payload)
	}
	return ae
}

func (in *inbox) audit(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p := &AuditPage{Base: baseFor(r, "Audit log"), Filter: AuditFilter{
		Agent: strings.TrimSpace(q.Get("agent")), Trace: strings.TrimSpace(q.Get("trace")),
		Approval: strings.TrimSpace(q.Get("approval")), Kind: strings.TrimSpace(q.Get("kind")),
	}}
	ctx := r.Context()
	// A verification is bounded by chainTimeout and ends when the server
	// drains.
	p.Chain = in.chain.status(ctx, in.host.Store(), func() (context.Context, context.CancelFunc) {
		return in.host.WaitContext(context.Background(), chainTimeout)
	})
	if v := q.Get("before"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			p.Error = "before must be an audit sequence number, not " + strconv.Quote(v) + "."
			in.render(w, http.StatusBadRequest, "audit", p)
			return
		}
		p.Filter.Before = n
	}
	var err error
	if p.Head, err = in.host.Store().Head(ctx); err != nil {
		in.storeFail(w, r, err)
		return
	}
	evs, err := in.host.Store().Events(ctx, airlock.EventFilter{
		Agent: p.Filter.Agent, TraceID: p.Filter.Trace, ApprovalID: p.Filter.Approval, Kind: p.Filter.Kind,
		BeforeSeq: p.Filter.Before, Newest: true, Limit: auditPageSize,
	})
	if err != nil {
		in.storeFail(w, r, err)
		return
	}
	for _, e := range evs {
		p.Events = append(p.Events, auditEvent(e, false))
	}
	if len(evs) == auditPageSize {
		p.NextBefore = evs[len(evs)-1].Seq
	}
	in.render(w, http.StatusOK, "audit", p)
}

// AuditEventPage is one event of the audit log, whole.
type AuditEventPage struct {
	Base
	Event AuditEvent
}

// event shows one event with its whole payload.
func (in *inbox) event(w http.ResponseWriter, r *http.Request) {
	seq, err := strconv.ParseInt(r.PathValue("seq"), 10, 64)
	if err != nil || seq < 1 {
		in.fail(w, r, http.StatusBadRequest, "No such event", "An event is named by its sequence number, a positive integer.")
		return
	}
	evs, err := in.host.Store().Events(r.Context(), airlock.EventFilter{AfterSeq: seq - 1, Limit: 1})
	if err != nil {
		in.storeFail(w, r, err)
		return
	}
	if len(evs) == 0 || evs[0].Seq != seq {
		in.fail(w, r, http.StatusNotFound, "No such event", "The audit log has no event "+strconv.FormatInt(seq, 10)+".")
		return
	}
	in.render(w, http.StatusOK, "event", &AuditEventPage{Base: baseFor(r, "Event "+strconv.FormatInt(seq, 10)), Event: auditEvent(evs[0], true)})
}
