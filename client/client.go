package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/hook/relay"
)

// Client talks to an Airlock server. It is an airlock.Guard, like the
// in-process gate.Enforcer, so an agent switches between an embedded gate
// and a server by changing one line:
//
//	var guard airlock.Guard = &gate.Enforcer{Gate: g, Store: db}
//	var guard airlock.Guard = client.New("http://127.0.0.1:8080", token)
type Client struct {
	// URL is the server's base URL.
	URL string
	// Token is the bearer secret.
	Token string
	// HTTPClient sends the requests; nil: a client without an overall
	// timeout, since checks long-poll.
	HTTPClient *http.Client
	// Wait is how long one long-poll request waits before the client asks
	// again (0: 50s, under most proxies' idle limits).
	Wait time.Duration
	// Pending, when set, is called while a check waits for a person: once
	// when the request is queued, then after every long poll.
	Pending func(airlock.Enforcement)

	mu         sync.Mutex
	tokenAgent string // the token's agent, once asked
}

var _ airlock.Checker = (*Client)(nil)

// New returns a client for the server at url with a bearer token.
func New(url, token string) *Client {
	return &Client{URL: strings.TrimRight(url, "/"), Token: token}
}

func (c *Client) wait() time.Duration {
	if c.Wait <= 0 {
		return 50 * time.Second
	}
	return c.Wait
}

// Enforce checks the action with the server and, when it asks, waits —
// across long polls, reconnects and server restarts — until a person
// settles the request or ctx ends. It never fails: an unreachable server is
// a refusal with AIRLOCK-UNAVAILABLE (fail closed).
func (c *Client) Enforce(ctx context.Context, a airlock.Action) airlock.Enforcement {
	wait := c.wait()
	if c.Pending != nil {
		wait = 0 // answer at once, so that the hook hears of the request
	}
	enf, err := c.CheckWait(ctx, a, wait)
	if err == nil && enf.Pending && enf.Approval == nil {
		err = errNoRequest
	}
	if err != nil {
		return refusal(a, err)
	}
	if enf, err = c.AwaitPending(ctx, enf); err != nil {
		return refusal(a, err)
	}
	if enf.Pending && ctx.Err() != nil {
		enf.Pending, enf.Code = false, airlock.CodeCancelled
		enf.Message = fmt.Sprintf("stopped waiting for approval %s: %v", enf.Approval.ID, context.Cause(ctx))
	}
	return enf
}

// errNoRequest is a server that answered pending without naming the
// request.
var errNoRequest = airlock.Errorf(airlock.EINTERNAL, "the server answered pending without naming the request")

// Await waits on the request id that a check left pending until a person
// or the deadline settles it, or ctx ends; then the result is still
// Pending. It is the one loop every adapter waits with (airlock.Checker).
func (c *Client) Await(ctx context.Context, id string) (airlock.Enforcement, error) {
	return c.AwaitPending(ctx, airlock.Enforcement{Pending: true, Approval: &airlock.Approval{ID: id, Status: airlock.StatusPending}})
}

// AwaitPending is Await on the enforcement a check left pending, as it
// stands (its request's deadline, reviewers): Pending, when set, is called
// with it before every long poll, of Wait each, until the request is
// settled or ctx ends (then it returns the request as it stands, still
// Pending). A server that restarts, drains or cannot be reached is asked
// again with back-off: the request survives it, until a minute past its
// deadline.
func (c *Client) AwaitPending(ctx context.Context, enf airlock.Enforcement) (airlock.Enforcement, error) {
	backoff := 100 * time.Millisecond
	for enf.Pending {
		if c.Pending != nil {
			c.Pending(enf)
		}
		start := time.Now()
		next, err := c.Resume(ctx, enf.Approval.ID, c.wait())
		var pause time.Duration
		switch {
		case err == nil && next.Pending && next.Approval == nil:
			return enf, errNoRequest
		case err == nil:
			// A server shutting down answers at once, still pending: do
			// not spin on it. A settled request ends the loop at once.
			enf, backoff = next, 100*time.Millisecond
			pause = min(time.Second, c.wait()/2) - time.Since(start)
		case ctx.Err() != nil:
			return enf, nil
		case !retryable(err):
			return enf, err
		case !enf.Approval.Expires.IsZero() && time.Now().After(enf.Approval.Expires.Add(time.Minute)):
			// The server has been away past the request's deadline: the
			// request has expired (or could no longer be collected).
			return enf, err
		default:
			pause, backoff = backoff, min(2*backoff, 5*time.Second)
		}
		if !enf.Pending || pause <= 0 {
			continue
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return enf, nil
		case <-t.C:
		}
	}
	return enf, nil
}

// retryable reports whether a failed resume may succeed later.
func retryable(err error) bool {
	switch airlock.ErrorCode(err) {
	case airlock.EUNAVAILABLE, airlock.EINTERNAL:
		return true
	}
	return false
}

// refusal is the enforcement of an action the server could not check.
func refusal(a airlock.Action, err error) airlock.Enforcement {
	enf := airlock.Enforcement{Decision: airlock.Decision{Action: a}, Err: err, Message: airlock.ErrorMessage(err)}
	switch airlock.ErrorCode(err) {
	case airlock.EINVALID:
		enf.Code = airlock.CodeInvalid
	case airlock.EUNAUTHENTICATED, airlock.EUNAUTHORIZED:
		enf.Code = airlock.CodeDenied
	default:
		enf.Code = airlock.CodeUnavailable
		enf.Message = "Airlock could not be asked, so the action does not run: " + enf.Message
	}
	return enf
}

// Run enforces the action and calls fn only if it is allowed, then records
// with the server that it ran or failed. It returns a *airlock.Refusal when
// the action was refused.
func (c *Client) Run(ctx context.Context, a airlock.Action, fn func(context.Context, airlock.Action) error) (airlock.Enforcement, error) {
	enf := c.Enforce(ctx, a)
	if !enf.Allowed {
		return enf, &airlock.Refusal{Enforcement: enf}
	}
	start := time.Now()
	runErr := fn(ctx, enf.ToRun())
	if err := c.Ran(ctx, enf, time.Since(start), runErr); err != nil {
		return enf, errors.Join(runErr, err)
	}
	return enf, runErr
}

// Ran records with the server that an allowed action ran (runErr nil) or
// failed, linked to its decision: for a caller that runs the action
// itself after a Check, as Run does after Enforce. Errors: EUNAVAILABLE.
func (c *Client) Ran(ctx context.Context, enf airlock.Enforcement, took time.Duration, runErr error) error {
	return c.RanWith(ctx, enf, took, nil, runErr)
}

// RanWith is Ran with what the action returned, kept in the record for a
// person to read (gate.Enforcer.RanWith).
func (c *Client) RanWith(ctx context.Context, enf airlock.Enforcement, took time.Duration, result json.RawMessage, runErr error) error {
	// The action as the server checked it (it may have filled in who asked
	// for it), so that its hash is the one decided; or a reviewer's edit
	// of it, which is what ran.
	a, h := enf.ToRun(), enf.Decision.ActionHash
	if enf.Edit != nil {
		h = enf.Edit.ActionHash
	}
	body := map[string]any{"action": a, "action_hash": h, "duration": took.String()}
	if enf.Seq > 0 {
		body["decision_seq"] = enf.Seq
	}
	if enf.Approval != nil {
		body["approval_id"] = enf.Approval.ID
	}
	if runErr != nil {
		body["error"] = runErr.Error()
	}
	if len(result) > 0 {
		body["result"] = result
	}
	if err := c.do(context.WithoutCancel(ctx), "POST", "/v1/executions", nil, body, nil); err != nil {
		return airlock.Errorf(airlock.EUNAVAILABLE, "%s ran but its result could not be recorded: %s", a.Tool, airlock.ErrorMessage(err))
	}
	return nil
}

// Check decides and records a without waiting for a person
// (airlock.Checker): an ask comes back Pending, its request queued or
// joined. An action without an agent is the token's agent's. It never
// fails: a server that cannot be asked is a refusal.
func (c *Client) Check(ctx context.Context, a airlock.Action) airlock.Enforcement {
	if a.Agent == "" {
		agent, err := c.agent(ctx)
		if err != nil {
			return refusal(a, err)
		}
		a.Agent = agent
	}
	enf, err := c.CheckWait(ctx, a, 0)
	if err == nil && enf.Pending && enf.Approval == nil {
		err = errNoRequest
	}
	if err != nil {
		return refusal(a, err)
	}
	return enf
}

// agent is the token's agent, asked of the server once.
func (c *Client) agent(ctx context.Context) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tokenAgent != "" {
		return c.tokenAgent, nil
	}
	t, err := c.Whoami(ctx)
	if err != nil {
		return "", err
	}
	if t.Role != airlock.RoleAgent {
		return "", airlock.Errorf(airlock.EUNAUTHORIZED, "%s is not an agent token", t.Subject())
	}
	c.tokenAgent = t.Agent
	return t.Agent, nil
}

// CheckWait asks the server once, waiting up to wait for an ask to be
// settled; a result still Pending carries the request to Resume or Await.
func (c *Client) CheckWait(ctx context.Context, a airlock.Action, wait time.Duration) (airlock.Enforcement, error) {
	body := map[string]any{"action": a}
	if wait > 0 {
		body["wait"] = wait.String()
	}
	var enf airlock.Enforcement
	err := c.do(ctx, "POST", "/v1/check", nil, body, &enf)
	return enf, err
}

// Resume waits, up to wait, on the request a check left pending.
func (c *Client) Resume(ctx context.Context, id string, wait time.Duration) (airlock.Enforcement, error) {
	var enf airlock.Enforcement
	err := c.do(ctx, "GET", "/v1/check/"+url.PathEscape(id), url.Values{"wait": {wait.String()}}, nil, &enf)
	return enf, err
}

// Approvals returns a page of requests.
func (c *Client) Approvals(ctx context.Context, f airlock.ApprovalFilter) (airlock.ApprovalPage, error) {
	q := url.Values{}
	set(q, "agent", f.Agent)
	set(q, "class", f.Class)
	set(q, "tool", f.Tool)
	set(q, "cursor", f.Cursor)
	set(q, "search", f.Search)
	set(q, "id_prefix", f.IDPrefix)
	if len(f.Status) > 0 {
		s := make([]string, len(f.Status))
		for i, st := range f.Status {
			s[i] = string(st)
		}
		q.Set("status", strings.Join(s, ","))
	}
	if f.MinTier != 0 {
		q.Set("min_tier", f.MinTier.String())
	}
	if !f.CreatedBefore.IsZero() {
		q.Set("created_before", f.CreatedBefore.UTC().Format(time.RFC3339Nano))
	}
	if !f.CreatedAfter.IsZero() {
		q.Set("created_after", f.CreatedAfter.UTC().Format(time.RFC3339Nano))
	}
	if !f.ActionHash.IsZero() {
		q.Set("action_hash", f.ActionHash.String())
	}
	if f.Oldest {
		q.Set("oldest", "true")
	}
	if f.ByDeadline {
		q.Set("by_deadline", "true")
	}
	if f.BySettled {
		q.Set("by_settled", "true")
	}
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	var page airlock.ApprovalPage
	err := c.do(ctx, "GET", "/v1/approvals", q, nil, &page)
	return page, err
}

// Approval returns one request.
func (c *Client) Approval(ctx context.Context, id string) (airlock.Approval, error) {
	d, err := c.ApprovalRuns(ctx, id)
	return d.Approval, err
}

// ApprovalRuns is the request with its ID and the runs of its action
// that kept a result (an approved proposal the MCP gateway ran now).
func (c *Client) ApprovalRuns(ctx context.Context, id string) (airlock.ApprovalWithRuns, error) {
	var d airlock.ApprovalWithRuns
	err := c.do(ctx, "GET", "/v1/approvals/"+url.PathEscape(id), nil, nil, &d)
	return d, err
}

// Resolve approves or rejects a request as the token's person; h is the
// action hash the reviewer saw.
func (c *Client) Resolve(ctx context.Context, id string, status airlock.ApprovalStatus, h airlock.Hash, reason string, s airlock.Surface) (airlock.Approval, error) {
	return c.ResolveWith(ctx, airlock.Resolution{ApprovalID: id, Status: status, ActionHash: h, Reason: reason, Surface: s})
}

// ResolveWith resolves a request as the token's person, as r says (its
// Reviewer is the token's, whatever r holds): RunNow asks an executor to
// run an approved proposal now; an Edit's Args approve the reviewer's edit
// of the action, which the server decides (the rest of Edit is the
// server's to fill in).
func (c *Client) ResolveWith(ctx context.Context, r airlock.Resolution) (airlock.Approval, error) {
	body := map[string]any{"status": r.Status, "action_hash": r.ActionHash}
	if r.Edit != nil {
		body["args"] = r.Edit.Args
	}
	if r.Reason != "" {
		body["reason"] = r.Reason
	}
	if r.Surface != "" {
		body["surface"] = r.Surface
	}
	if r.RunNow {
		body["run_now"] = true
	}
	var ap airlock.Approval
	err := c.do(ctx, "POST", "/v1/approvals/"+url.PathEscape(r.ApprovalID)+"/resolution", nil, body, &ap)
	return ap, err
}

// Cancel withdraws a pending request; s says where (api when "").
func (c *Client) Cancel(ctx context.Context, id, reason string, s airlock.Surface) (airlock.Approval, error) {
	body := map[string]any{}
	if reason != "" {
		body["reason"] = reason
	}
	if s != "" {
		body["surface"] = s
	}
	var ap airlock.Approval
	err := c.do(ctx, "POST", "/v1/approvals/"+url.PathEscape(id)+"/cancel", nil, body, &ap)
	return ap, err
}

// ReleaseTools checks an MCP server's tool listing against the definitions
// pinned for agent (the token's agent when ""): which tools may be offered,
// and the requests that would release the others.
func (c *Client) ReleaseTools(ctx context.Context, agent, server string, tools []airlock.ToolDefinition) ([]airlock.ToolRelease, error) {
	var out struct {
		Tools []airlock.ToolRelease `json:"tools"`
	}
	body := map[string]any{"server": server, "tools": tools}
	if agent != "" {
		body["agent"] = agent
	}
	err := c.do(ctx, "POST", "/v1/mcp/tools", nil, body, &out)
	return out.Tools, err
}

// WaitApproval waits until the request is settled or ctx ends, one long
// poll of Wait at a time, asking again while the server cannot be reached,
// and returns it as it stands.
func (c *Client) WaitApproval(ctx context.Context, id string) (airlock.Approval, error) {
	for {
		var ap airlock.Approval
		err := c.do(ctx, "GET", "/v1/approvals/"+url.PathEscape(id)+"/wait", url.Values{"timeout": {c.wait().String()}}, nil, &ap)
		switch {
		case err == nil && ap.Status != airlock.StatusPending:
			return ap, nil
		case ctx.Err() != nil:
			return ap, ctx.Err()
		case err != nil && airlock.ErrorCode(err) != airlock.EUNAVAILABLE:
			return ap, err
		case err != nil:
			t := time.NewTimer(time.Second)
			select {
			case <-ctx.Done():
			case <-t.C:
			}
			t.Stop()
		}
	}
}

// RunNow calls fn with each of agent's requests ("" for the token's) that
// a person approved to run now: those approved in the last
// airlock.RunNowWindow, then each as it is approved (the event stream),
// until ctx ends. It waits for a server that is not up yet.
func (c *Client) RunNow(ctx context.Context, agent string, fn func(airlock.Approval)) error {
	for agent == "" {
		a, err := c.agent(ctx)
		if err == nil {
			agent = a
			break
		}
		t := time.NewTimer(5 * time.Second) // the server is not up yet
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	page, err := c.Events(ctx, airlock.EventFilter{Agent: agent, Limit: 1})
	if err != nil {
		return err
	}
	earlier, err := airlock.ApprovedToRun(ctx, c.Approvals, agent)
	if err != nil {
		return err
	}
	for _, ap := range earlier {
		fn(ap)
	}
	return c.StreamEvents(ctx, max(page.Head, 1), airlock.EventApprovalResolved, agent, func(e airlock.Event) error {
		if id, ok := airlock.RunNowRequest(e); ok {
			if ap, err := c.Approval(ctx, id); err == nil {
				fn(ap)
			}
		}
		return nil
	})
}

// Events returns a page of the audit log.
func (c *Client) Events(ctx context.Context, f airlock.EventFilter) (airlock.EventPage, error) {
	q := url.Values{}
	if f.AfterSeq > 0 {
		q.Set("after", strconv.FormatInt(f.AfterSeq, 10))
	}
	if !f.Since.IsZero() {
		q.Set("since", f.Since.UTC().Format(time.RFC3339Nano))
	}
	set(q, "kind", f.Kind)
	set(q, "agent", f.Agent)
	set(q, "trace", f.TraceID)
	set(q, "approval", f.ApprovalID)
	if f.BeforeSeq > 0 {
		q.Set("before", strconv.FormatInt(f.BeforeSeq, 10))
	}
	if f.Newest {
		q.Set("newest", "true")
	}
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	var page airlock.EventPage
	err := c.do(ctx, "GET", "/v1/events", q, nil, &page)
	return page, err
}

// StreamEvents calls fn with every new event after after (0: from now) of
// the given kind prefix and agent ("" for all), reconnecting with
// Last-Event-ID when the stream breaks, until ctx ends or fn fails.
func (c *Client) StreamEvents(ctx context.Context, after int64, kind, agent string, fn func(airlock.Event) error) error {
	last := after
	if last == 0 {
		// Pin "from now" to a sequence number, so that a reconnect
		// resumes there rather than at a later head.
		page, err := c.Events(ctx, airlock.EventFilter{Agent: agent, Limit: 1})
		if err != nil {
			return err
		}
		last = page.Head
	}
	backoff := 100 * time.Millisecond
	for {
		err := c.streamOnce(ctx, last, kind, agent, func(e airlock.Event) error {
			last = e.Seq
			backoff = 100 * time.Millisecond
			return fn(e)
		})
		var stop *stopStream
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.As(err, &stop):
			return stop.err
		case err != nil && !retryable(err):
			return err
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// stopStream carries fn's error out of a stream: no reconnect.
type stopStream struct{ err error }

func (s *stopStream) Error() string { return s.err.Error() }

func (c *Client) streamOnce(ctx context.Context, after int64, kind, agent string, fn func(airlock.Event) error) error {
	q := url.Values{}
	set(q, "kind", kind)
	set(q, "agent", agent)
	req, err := c.request(ctx, "GET", "/v1/events/stream", q, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Last-Event-ID", strconv.FormatInt(after, 10))
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return airlock.Errorf(airlock.EUNAVAILABLE, "stream events: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return readProblem(resp)
	}
	sc := bufio.NewScanner(resp.Body)
	// An event carries an action's arguments (up to MaxArgsBytes), which
	// JSON escaping can grow up to six times.
	sc.Buffer(make([]byte, 64<<10), 8*airlock.MaxArgsBytes)
	var data []byte
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case len(line) == 0 && len(data) > 0:
			var e airlock.Event
			if err := json.Unmarshal(data, &e); err != nil {
				return airlock.Errorf(airlock.EINTERNAL, "stream events: bad event: %v", err)
			}
			data = data[:0]
			if err := fn(e); err != nil {
				return &stopStream{err}
			}
		case bytes.HasPrefix(line, []byte("data:")):
			data = append(data, bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))...)
		}
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		// Reconnecting would meet the same event again: give up.
		return airlock.Errorf(airlock.EINVALID, "stream events: an event after seq %d is larger than %d bytes", after, 8*airlock.MaxArgsBytes)
	} else if err != nil {
		return airlock.Errorf(airlock.EUNAVAILABLE, "stream events: %v", err)
	}
	return airlock.Errorf(airlock.EUNAVAILABLE, "stream events: the server closed the stream")
}

// Verify checks the server's audit chain.
func (c *Client) Verify(ctx context.Context) (airlock.ChainReport, error) {
	var r airlock.ChainReport
	err := c.do(ctx, "GET", "/v1/audit/verify", nil, nil, &r)
	return r, err
}

// Trust returns trust aggregates per agent × class.
func (c *Client) Trust(ctx context.Context, f airlock.TrustFilter) ([]airlock.TrustSummary, error) {
	q := url.Values{}
	set(q, "agent", f.Agent)
	set(q, "class", string(f.Class))
	if !f.Since.IsZero() {
		q.Set("since", f.Since.UTC().Format(time.RFC3339Nano))
	}
	var page airlock.TrustPage
	err := c.do(ctx, "GET", "/v1/trust", q, nil, &page)
	return page.Trust, err
}

// ApprovalGroups returns the pending requests grouped by agent, tool and
// shape, for batch review (of agent, when set).
func (c *Client) ApprovalGroups(ctx context.Context, agent string) (airlock.ApprovalGroups, error) {
	q := url.Values{}
	set(q, "agent", agent)
	var gs airlock.ApprovalGroups
	err := c.do(ctx, "GET", "/v1/approvals/groups", q, nil, &gs)
	return gs, err
}

// ReviewSignals returns the rubber-stamp signals of the requests created
// since then (30 days ago when zero), of agent when set.
func (c *Client) ReviewSignals(ctx context.Context, agent string, since time.Time) (airlock.ReviewSignals, error) {
	q := url.Values{}
	set(q, "agent", agent)
	if !since.IsZero() {
		q.Set("since", since.UTC().Format(time.RFC3339Nano))
	}
	var sig airlock.ReviewSignals
	err := c.do(ctx, "GET", "/v1/trust/reviews", q, nil, &sig)
	return sig, err
}

// Remember grants an approved request's shape for ttl (0: the server's
// default, 7 days): a standing grant (approve and remember). shape, when
// not nil, is the reviewer's own instead of the narrowest; it must cover
// the approved action. budget, when not nil, bounds what the grant lets
// run.
func (c *Client) Remember(ctx context.Context, approvalID string, shape *airlock.GrantPattern, budget *airlock.Budget, ttl time.Duration, reason string) (airlock.Grant, error) {
	body := map[string]any{"reason": reason}
	if shape != nil {
		body["shape"] = shape
	}
	if budget != nil {
		body["budget"] = budget
	}
	if ttl > 0 {
		body["ttl"] = ttl.String()
	}
	var g airlock.Grant
	err := c.do(ctx, "POST", "/v1/approvals/"+url.PathEscape(approvalID)+"/remember", nil, body, &g)
	return g, err
}

// Grants lists standing grants, newest first: those covering agent when
// set, those in force now when live.
func (c *Client) Grants(ctx context.Context, agent string, live bool, limit int) ([]airlock.Grant, error) {
	q := url.Values{}
	set(q, "agent", agent)
	if live {
		q.Set("live", "true")
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var l airlock.GrantList
	err := c.do(ctx, "GET", "/v1/grants", q, nil, &l)
	return l.Grants, err
}

// Proposals lists the grants proposed from the record (of agent, when
// set), the strongest first, with their evidence.
func (c *Client) Proposals(ctx context.Context, agent string) ([]airlock.Proposal, error) {
	q := url.Values{}
	set(q, "agent", agent)
	var l airlock.ProposalList
	err := c.do(ctx, "GET", "/v1/grants/proposals", q, nil, &l)
	return l.Proposals, err
}

// Ratify makes the grant a current proposal describes (its agent, tool
// and shape), for ttl (0: 7 days).
func (c *Client) Ratify(ctx context.Context, agent, tool string, shape airlock.GrantPattern, ttl time.Duration, reason string) (airlock.Grant, error) {
	body := map[string]any{"agent": agent, "tool": tool, "shape": shape, "reason": reason}
	if ttl > 0 {
		body["ttl"] = ttl.String()
	}
	var g airlock.Grant
	err := c.do(ctx, "POST", "/v1/grants/proposals/ratify", nil, body, &g)
	return g, err
}

// Dismiss dismisses a current proposal: it is not proposed again until an
// approval it did not rest on comes to count for it.
func (c *Client) Dismiss(ctx context.Context, agent, tool string, shape airlock.GrantPattern, reason string) (airlock.ProposalDismissal, error) {
	var d airlock.ProposalDismissal
	err := c.do(ctx, "POST", "/v1/grants/proposals/dismiss", nil, map[string]any{"agent": agent, "tool": tool, "shape": shape, "reason": reason}, &d)
	return d, err
}

// Grant returns one standing grant.
func (c *Client) Grant(ctx context.Context, id string) (airlock.Grant, error) {
	var g airlock.Grant
	err := c.do(ctx, "GET", "/v1/grants/"+url.PathEscape(id), nil, nil, &g)
	return g, err
}

// RevokeGrant ends a standing grant at once.
func (c *Client) RevokeGrant(ctx context.Context, id, reason string) (airlock.Grant, error) {
	var g airlock.Grant
	err := c.do(ctx, "POST", "/v1/grants/"+url.PathEscape(id)+"/revoke", nil, map[string]any{"reason": reason}, &g)
	return g, err
}

// Explain decides the action against the live policy; nothing is recorded.
func (c *Client) Explain(ctx context.Context, a airlock.Action) (airlock.Explanation, error) {
	var e airlock.Explanation
	err := c.do(ctx, "POST", "/v1/policy/explain", nil, map[string]any{"action": a}, &e)
	return e, err
}

// EnrolPasskey lets reviewer register a passkey, once, with the code in
// the result (admin): shown once, valid expiresIn (0: the server's 1h).
func (c *Client) EnrolPasskey(ctx context.Context, reviewer string, expiresIn time.Duration) (airlock.NewPasskeyEnrolment, error) {
	body := map[string]any{}
	if expiresIn > 0 {
		body["expires_in"] = expiresIn.String()
	}
	var e airlock.NewPasskeyEnrolment
	err := c.do(ctx, "POST", "/v1/reviewers/"+url.PathEscape(reviewer)+"/passkey-enrolments", nil, body, &e)
	return e, err
}

// CreateToken creates a token; its secret is in the result, once.
func (c *Client) CreateToken(ctx context.Context, role airlock.Role, name, agent string, expiresIn time.Duration) (airlock.NewToken, error) {
	body := map[string]any{"role": role}
	if name != "" {
		body["name"] = name
	}
	if agent != "" {
		body["agent"] = agent
	}
	if expiresIn > 0 {
		body["expires_in"] = expiresIn.String()
	}
	var t airlock.NewToken
	err := c.do(ctx, "POST", "/v1/tokens", nil, body, &t)
	return t, err
}

// Tokens lists the tokens.
func (c *Client) Tokens(ctx context.Context) ([]airlock.Token, error) {
	var l airlock.TokenList
	err := c.do(ctx, "GET", "/v1/tokens", nil, nil, &l)
	return l.Tokens, err
}

// RevokeToken revokes a token.
func (c *Client) RevokeToken(ctx context.Context, id string) (airlock.Token, error) {
	var t airlock.Token
	err := c.do(ctx, "DELETE", "/v1/tokens/"+url.PathEscape(id), nil, nil, &t)
	return t, err
}

// Notifications returns a page of deliveries, newest first, and the
// before ID of the next page (0 on the last).
func (c *Client) Notifications(ctx context.Context, f airlock.NotificationFilter) ([]airlock.Notification, int64, error) {
	q := url.Values{}
	for k, v := range map[string]string{"status": string(f.Status), "channel": f.Channel, "kind": f.Kind, "approval_id": f.ApprovalID} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if f.BeforeID > 0 {
		q.Set("before", strconv.FormatInt(f.BeforeID, 10))
	}
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	var l airlock.NotificationList
	err := c.do(ctx, "GET", "/v1/notifications", q, nil, &l)
	return l.Notifications, l.Next, err
}

// Notification returns one delivery.
func (c *Client) Notification(ctx context.Context, id int64) (airlock.Notification, error) {
	var n airlock.Notification
	err := c.do(ctx, "GET", "/v1/notifications/"+strconv.FormatInt(id, 10), nil, nil, &n)
	return n, err
}

// RetryNotification sends a failed or dead delivery again (admins).
func (c *Client) RetryNotification(ctx context.Context, id int64) (airlock.Notification, error) {
	var n airlock.Notification
	err := c.do(ctx, "POST", "/v1/notifications/"+strconv.FormatInt(id, 10)+"/retry", nil, struct{}{}, &n)
	return n, err
}

// TestNotification queues a test message through channel (admins) and
// returns its delivery.
func (c *Client) TestNotification(ctx context.Context, channel string) (airlock.Notification, error) {
	var n airlock.Notification
	err := c.do(ctx, "POST", "/v1/notifications/test", nil, map[string]string{"channel": channel}, &n)
	return n, err
}

// Whoami returns the token's identity.
func (c *Client) Whoami(ctx context.Context) (airlock.Token, error) {
	var t airlock.Token
	err := c.do(ctx, "GET", "/v1/whoami", nil, nil, &t)
	return t, err
}

func set(q url.Values, k, v string) {
	if v != "" {
		q.Set(k, v)
	}
}

func (c *Client) httpClient() *http.Client {
	if c.HTTPClient == nil {
		return http.DefaultClient
	}
	return c.HTTPClient
}

func (c *Client) request(ctx context.Context, method, path string, q url.Values, body any) (*http.Request, error) {
	u := strings.TrimRight(c.URL, "/") + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, airlock.Errorf(airlock.EINVALID, "encode request: %v", err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, r)
	if err != nil {
		return nil, airlock.Errorf(airlock.EINVALID, "bad server URL %q: %v", c.URL, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	return req, nil
}

// do sends one request and decodes the answer into out; a problem+json
// answer becomes an *airlock.Error with the server's code.
func (c *Client) do(ctx context.Context, method, path string, q url.Values, body, out any) error {
	req, err := c.request(ctx, method, path, q, body)
	if err != nil {
		return err
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return airlock.Errorf(airlock.EUNAVAILABLE, "%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return readProblem(resp)
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return airlock.Errorf(airlock.EUNAVAILABLE, "%s %s: read answer: %v", method, path, err)
	}
	return nil
}

// Do sends one request to the API, path with the query q and body as
// JSON, and decodes the answer into out. The typed methods above cover the
// vocabulary's routes; package http offers the routes whose answers are a
// heavier package's types (the policy stack, checkpoints) over Do.
func (c *Client) Do(ctx context.Context, method, path string, q url.Values, body, out any) error {
	return c.do(ctx, method, path, q, body, out)
}

// readProblem turns an error response into an *airlock.Error.
func readProblem(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	code, msg, ok := relay.ParseProblem(b)
	if !ok {
		return airlock.Errorf(airlock.CodeOfStatus(resp.StatusCode), "server answered %s: %s", resp.Status, strings.TrimSpace(string(b)))
	}
	return &airlock.Error{Code: code, Message: msg}
}

// LastEvents returns the last n events that f selects and match keeps
// (nil: every one), oldest first, with the sequence number of the last
// event f selects (0 for none), from which a follower streams on. The API
// pages forward only: it finds the last event in about 2·log2(seq)
// one-event requests, then reads windows backwards from it.
func (c *Client) LastEvents(ctx context.Context, f airlock.EventFilter, match func(airlock.Event) bool, n int) ([]airlock.Event, int64, error) {
	if match == nil {
		match = func(airlock.Event) bool { return true }
	}
	last, err := c.lastEventSeq(ctx, f)
	if err != nil {
		return nil, 0, err
	}
	evs, err := c.lastEvents(ctx, f, match, last, n)
	return evs, last, err
}

// lastEventSeq finds the sequence number of the last event f selects, 0
// when none does. The API pages forward only, so it searches: each probe
// asks for one event after a sequence number, about 2·log2(seq) requests.
func (c *Client) lastEventSeq(ctx context.Context, f airlock.EventFilter) (int64, error) {
	f.Limit = 1
	probe := func(after int64) (int64, bool, error) {
		f.AfterSeq = after
		page, err := c.Events(ctx, f)
		if err != nil || len(page.Events) == 0 {
			return 0, false, err
		}
		return page.Events[0].Seq, true, nil
	}
	lo, ok, err := probe(0)
	if err != nil || !ok {
		return 0, err
	}
	// Gallop up to a bound with no event after it, then bisect: lo is
	// always an event's seq, and no event lies after hi.
	var hi int64
	for step := int64(1); ; step *= 2 {
		s, ok, err := probe(lo + step)
		if err != nil {
			return 0, err
		}
		if !ok {
			hi = lo + step
			break
		}
		lo = s
	}
	for hi > lo {
		mid := lo + (hi-lo)/2
		s, ok, err := probe(mid)
		switch {
		case err != nil:
			return 0, err
		case ok:
			lo = s
		default:
			hi = mid
		}
	}
	return lo, nil
}

// lastEvents returns the last n events up to seq last that f and match
// select, oldest first. It reads windows backwards from last, each four
// times wider than the one before, until it has n events or reaches the
// start of the log.
func (c *Client) lastEvents(ctx context.Context, f airlock.EventFilter, match func(airlock.Event) bool, last int64, n int) ([]airlock.Event, error) {
	if n == 0 || last == 0 {
		return nil, nil
	}
	var got []airlock.Event // oldest first
	hi, width := last, int64(n)
	for hi > 0 && len(got) < n {
		lo := max(0, hi-width)
		var window []airlock.Event
		f.AfterSeq, f.Limit = lo, airlock.MaxPageSize
		for {
			page, err := c.Events(ctx, f)
			if err != nil {
				return nil, err
			}
			done := len(page.Events) == 0 || page.NextAfter == 0
			for _, e := range page.Events {
				if e.Seq > hi {
					done = true
					break
				}
				if match(e) {
					window = append(window, e)
				}
			}
			if done {
				break
			}
			f.AfterSeq = page.NextAfter
		}
		got = append(window, got...)
		hi, width = lo, width*4
	}
	if len(got) > n {
		got = got[len(got)-n:]
	}
	return got, nil
}
