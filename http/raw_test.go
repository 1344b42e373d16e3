package http_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/client"
)

// rawResponse is an answer read whole, for tests that look at bytes,
// statuses and headers rather than through the Go client.
type rawResponse struct {
	Status int
	Header http.Header
	Body   []byte
}

// problemBody is a problem+json answer as a client reads it.
type problemBody struct {
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
	Code   string `json:"code"`
	Errors []struct {
		Message  string `json:"message"`
		Location string `json:"location"`
		Value    any    `json:"value"`
	} `json:"errors"`
}

// text is everything a problem says, for checking that it names what was
// wrong and where.
func (p problemBody) text() string {
	var b strings.Builder
	b.WriteString(p.Detail)
	for _, e := range p.Errors {
		b.WriteString(" | " + e.Message + " @ " + e.Location)
	}
	return b.String()
}

// do sends one request with the bearer secret (none when empty) and reads
// the whole answer.
func (ts *testServer) do(t *testing.T, method, path, secret, contentType string, body []byte) rawResponse {
	t.Helper()
	return ts.doHeader(t, method, path, secret, contentType, body, nil)
}

func (ts *testServer) doHeader(t *testing.T, method, path, secret, contentType string, body []byte, hdr http.Header) rawResponse {
	t.Helper()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, ts.URL+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if secret != "" {
		req.Header.Set("Authorization", "Bearer "+secret)
	}
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read answer: %v", method, path, err)
	}
	return rawResponse{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// problem checks that the answer is problem+json with the status and code,
// and returns it.
func (r rawResponse) problem(t *testing.T, status int, code string) problemBody {
	t.Helper()
	if got, want := r.Status, status; got != want {
		t.Fatalf("status %d, want %d; body %.600s", got, want, r.Body)
	}
	if got, want := r.Header.Get("Content-Type"), "application/problem+json"; !strings.HasPrefix(got, want) {
		t.Errorf("Content-Type %q, want %q", got, want)
	}
	var p problemBody
	if err := json.Unmarshal(r.Body, &p); err != nil {
		t.Fatalf("answer is not JSON: %v; body %.600s", err, r.Body)
	}
	if got, want := p.Code, code; got != want {
		t.Errorf("code %q, want %q; body %.600s", got, want, r.Body)
	}
	if got, want := p.Status, status; got != want {
		t.Errorf("problem status %d, want %d", got, want)
	}
	return p
}

// decode reads a 2xx JSON answer into v.
func (r rawResponse) decode(t *testing.T, v any) {
	t.Helper()
	if r.Status/100 != 2 {
		t.Fatalf("status %d, want 2xx; body %.600s", r.Status, r.Body)
	}
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %.300s: %v", r.Body, err)
	}
}

// allEvents returns the whole audit log.
func allEvents(t *testing.T, ts *testServer) []airlock.Event {
	t.Helper()
	var all []airlock.Event
	after := int64(0)
	for {
		evs, err := ts.DB.Events(context.Background(), airlock.EventFilter{AfterSeq: after, Limit: airlock.MaxPageSize})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, evs...)
		if len(evs) < airlock.MaxPageSize {
			return all
		}
		after = evs[len(evs)-1].Seq
	}
}

// eventsAfter returns the events after seq.
func eventsAfter(t *testing.T, ts *testServer, seq int64) []airlock.Event {
	t.Helper()
	var out []airlock.Event
	for _, e := range allEvents(t, ts) {
		if e.Seq > seq {
			out = append(out, e)
		}
	}
	return out
}

// headSeq is the sequence number of the last event, 0 when there is none.
func headSeq(t *testing.T, ts *testServer) int64 {
	t.Helper()
	evs := allEvents(t, ts)
	if len(evs) == 0 {
		return 0
	}
	return evs[len(evs)-1].Seq
}

// approvalStates lists every request as "id status", oldest first.
func approvalStates(t *testing.T, ts *testServer) []string {
	t.Helper()
	var out []string
	f := airlock.ApprovalFilter{Oldest: true, Limit: airlock.MaxPageSize}
	for {
		page, err := ts.DB.FindApprovals(context.Background(), f)
		if err != nil {
			t.Fatal(err)
		}
		for _, ap := range page.Approvals {
			out = append(out, ap.ID+" "+string(ap.Status)+" "+ap.ResolvedBy)
		}
		if page.NextCursor == "" {
			return out
		}
		f.Cursor = page.NextCursor
	}
}

// snapshot is what a refused request must not change: the audit log and
// the approval requests.
type snapshot struct {
	head      int64
	approvals []string
}

func takeSnapshot(t *testing.T, ts *testServer) snapshot {
	t.Helper()
	return snapshot{head: headSeq(t, ts), approvals: approvalStates(t, ts)}
}

// unchanged fails the test if anything was written since s.
func (s snapshot) unchanged(t *testing.T, ts *testServer) {
	t.Helper()
	if evs := eventsAfter(t, ts, s.head); len(evs) > 0 {
		var kinds []string
		for _, e := range evs {
			kinds = append(kinds, e.Kind+"("+e.Outcome+")")
		}
		t.Errorf("the request appended %d events: %v", len(evs), kinds)
	}
	if got := approvalStates(t, ts); !slices.Equal(got, s.approvals) {
		t.Errorf("approvals changed:\n got %v\nwant %v", got, s.approvals)
	}
}

// refusals returns the access.refused events after seq, decoded.
func refusals(t *testing.T, ts *testServer, seq int64) []refusedEvent {
	t.Helper()
	var out []refusedEvent
	for _, e := range eventsAfter(t, ts, seq) {
		if e.Kind != airlock.EventAccessRefused {
			continue
		}
		var r refusedEvent
		if err := json.Unmarshal(e.Payload, &r.AccessRefused); err != nil {
			t.Fatal(err)
		}
		r.Agent, r.Outcome, r.Approval = e.Agent, e.Outcome, e.ApprovalID
		out = append(out, r)
	}
	return out
}

type refusedEvent struct {
	airlock.AccessRefused
	// Agent, Outcome and Approval are the event's headers.
	Agent, Outcome, Approval string
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// pendingFor returns the pending requests for tool, newest first.
func pendingFor(t *testing.T, ts *testServer, tool string) []airlock.Approval {
	t.Helper()
	page, err := ts.DB.FindApprovals(context.Background(), airlock.ApprovalFilter{
		Status: []airlock.ApprovalStatus{airlock.StatusPending}, Tool: tool, Limit: airlock.MaxPageSize})
	if err != nil {
		t.Fatal(err)
	}
	return page.Approvals
}

// mustJSON marshals v.
func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// airlockClient is a Go client with this bearer secret.
func airlockClient(ts *testServer, secret string) *client.Client {
	return client.New(ts.URL, secret)
}

// metrics returns the server's metrics in the Prometheus text format.
func (ts *testServer) metrics(t *testing.T) string {
	t.Helper()
	r := ts.do(t, "GET", "/metrics", "", "", nil)
	if r.Status != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", r.Status, r.Body)
	}
	return string(r.Body)
}

// metric returns the value of one series, written as in the exposition
// format (`name{label="v",...}`), and whether it is there.
func metric(text, series string) (float64, bool) {
	for _, line := range strings.Split(text, "\n") {
		v, ok := strings.CutPrefix(line, series+" ")
		if !ok {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		return f, err == nil
	}
	return 0, false
}

// waitStreams waits until n event streams are open (and past their start).
func waitStreams(t *testing.T, ts *testServer, n int) {
	t.Helper()
	waitFor(t, strconv.Itoa(n)+" open event streams", func() bool {
		v, _ := metric(ts.metrics(t), "airlock_event_streams")
		return int(v) == n
	})
}
