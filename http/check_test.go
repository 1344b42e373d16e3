package http_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock"
	airlockhttp "github.com/airlock-dev/airlock/http"
	"github.com/airlock-dev/airlock/sqlite"
)

// TestQuickCheckAsHuma sends the same requests to POST /v1/check of two
// servers over fresh stores, one taking plainly valid checks past huma
// (the quick path), one sending all through huma, and wants the same
// answers — status, content type, body — and the same audit records: the
// quick path changes the cost of a check, nothing it says or records.
func TestQuickCheckAsHuma(t *testing.T) {
	type server struct {
		url, agent, admin string
		db                *sqlite.DB
	}
	start := func(quick bool) server {
		s, _, db := startServer(t)
		s2 := &airlockhttp.Server{Enforcer: s.Enforcer}
		s2.SetQuickCheck(quick)
		hs := httptest.NewServer(s2.Handler())
		t.Cleanup(hs.Close)
		t.Cleanup(s2.Drain)
		return server{url: hs.URL, db: db,
			agent: makeToken(t, db, airlock.Token{Role: airlock.RoleAgent, Name: "agent-1", Agent: "agent-1"}),
			admin: makeToken(t, db, airlock.Token{Role: airlock.RoleAdmin, Name: "root"})}
	}
	quick, slow := start(true), start(false)

	const read = `{"action":{"agent":"agent-1","tool":"read_file","args":{"path":"/work/a"}}}`
	big := `{"action":{"agent":"agent-1","tool":"read_file","args":{"path":"` + strings.Repeat("x", airlock.MaxArgsBytes+64<<10) + `"}}}`
	cases := []struct {
		name, query, contentType, accept, body string
		admin                                  bool
	}{
		{name: "auto", body: read},
		{name: "auto again", body: read},
		{name: "spaces", body: " {\n \"action\" : { \"agent\":\"agent-1\", \"tool\":\"read_file\", \"args\" : {\"path\":\"/dev/null\"} } } \n"},
		{name: "escapes", body: `{"action":{"agent":"agent-1","tool":"read_file","args":{"path":"/work/\"q\"\\\u00e9<&>"}}}`},
		{name: "all fields", body: `{"action":{"agent":"agent-1","tool":"read_file","args":{"path":"/work/b"},"trace_id":"t","session_id":"s","call_id":"c","requested_by":"carol","cwd":"/work","hints":{"tier":"write","needs_human":false,"read_only":true,"reason":"r"},"mcp_server":"filesystem"},"wait":""}`},
		{name: "ask", body: `{"action":{"agent":"agent-1","tool":"deploy","args":{"path":"/work/p"}}}`},
		{name: "ask waits", body: `{"action":{"agent":"agent-1","tool":"deploy","args":{"path":"/work/q"}},"wait":"1ms"}`},
		{name: "needs human", body: `{"action":{"agent":"agent-1","tool":"read_file","args":{"path":"/work/h"},"hints":{"needs_human":true}}}`},
		{name: "no args", body: `{"action":{"agent":"agent-1","tool":"read_file"}}`},
		{name: "admin", admin: true, body: read},
		{name: "admin for another agent", admin: true, body: `{"action":{"agent":"agent-2","tool":"read_file","args":{"path":"/work/a"}}}`},
		{name: "another agent", body: `{"action":{"agent":"agent-2","tool":"read_file","args":{"path":"/work/a"}}}`},
		{name: "bad wait", body: `{"action":{"agent":"agent-1","tool":"read_file","args":{"path":"/work/a"}},"wait":"soon"}`},
		{name: "bad args", body: `{"action":{"agent":"agent-1","tool":"read_file","args":{"path":1e400}}}`},
		{name: "long number", body: `{"action":{"agent":"agent-1","tool":"read_file","args":{"n":` + strings.Repeat("9", 400) + `}}}`},
		{name: "numbers", body: `{"action":{"agent":"agent-1","tool":"read_file","args":{"n":-1.5,"m":[0,12,true,false]}}}`},
		{name: "bad tool", body: `{"action":{"agent":"agent-1","tool":"read file<>","args":{}}}`},
		{name: "null agent", body: `{"action":{"agent":null,"tool":"read_file"}}`},
		{name: "null args", body: `{"action":{"agent":"agent-1","tool":"read_file","args":null}}`},
		{name: "null in args", body: `{"action":{"agent":"agent-1","tool":"read_file","args":{"path":null}}}`},
		{name: "null action", body: `{"action":null}`},
		{name: "null wait", body: `{"action":{"agent":"agent-1","tool":"read_file"},"wait":null}`},
		{name: "no agent", body: `{"action":{"tool":"read_file"}}`},
		{name: "empty agent", body: `{"action":{"agent":"","tool":"read_file"}}`},
		{name: "no action", body: `{}`},
		{name: "unknown member", body: `{"action":{"agent":"agent-1","tool":"read_file","path":"/a"}}`},
		{name: "unknown top member", body: `{"action":{"agent":"agent-1","tool":"read_file"},"$schema":"x"}`},
		{name: "case", body: `{"action":{"Agent":"agent-1","tool":"read_file"}}`},
		{name: "duplicate", body: `{"action":{"agent":"agent-1","agent":"agent-2","tool":"read_file"}}`},
		{name: "folded duplicate", body: `{"action":{"agent":"agent-1","tool":"read_file","args":{"path":"/a","PATH":"/b"}}}`},
		{name: "trailing", body: read + `{}`},
		{name: "args array", body: `{"action":{"agent":"agent-1","tool":"read_file","args":["/a"]}}`},
		{name: "args string", body: `{"action":{"agent":"agent-1","tool":"read_file","args":"/a"}}`},
		{name: "number tool", body: `{"action":{"agent":"agent-1","tool":7}}`},
		{name: "unknown tier", body: `{"action":{"agent":"agent-1","tool":"read_file","hints":{"tier":"scary"}}}`},
		{name: "empty tier", body: `{"action":{"agent":"agent-1","tool":"read_file","hints":{"tier":""}}}`},
		{name: "unknown hint", body: `{"action":{"agent":"agent-1","tool":"read_file","hints":{"loud":true}}}`},
		{name: "wait number", body: `{"action":{"agent":"agent-1","tool":"read_file"},"wait":30}`},
		{name: "not an object", body: `[]`},
		{name: "empty", body: ``},
		{name: "malformed", body: `{"action":`},
		{name: "bad utf-8", body: "{\"action\":{\"agent\":\"agent-1\",\"tool\":\"read_file\",\"args\":{\"p\":\"\xff\"}}}"},
		{name: "too large", body: big},
		{name: "query", query: "?wait=1s", body: read},
		{name: "text", contentType: "text/plain", body: read},
		{name: "json charset", contentType: "application/json; charset=utf-8", body: read},
		{name: "accept any", accept: "*/*", body: read},
		{name: "accept json", accept: "application/json", body: read},
		{name: "accept html", accept: "text/html", body: read},
	}
	volatile := regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\d{4}-\d\d-\d\dT[0-9:.]+Z|Date: .*|Content-Length: .*|127\.0\.0\.1:\d+`)
	send := func(srv server, c int) string {
		tc := cases[c]
		req, err := http.NewRequest(http.MethodPost, srv.url+"/v1/check"+tc.query, strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+map[bool]string{false: srv.agent, true: srv.admin}[tc.admin])
		if tc.contentType != "" {
			req.Header.Set("Content-Type", tc.contentType)
		}
		if tc.accept != "" {
			req.Header.Set("Accept", tc.accept)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		var head bytes.Buffer
		resp.Header.Write(&head)
		return volatile.ReplaceAllString(fmt.Sprintf("%d\n%s\n%s", resp.StatusCode, head.Bytes(), body), "…")
	}
	for i, tc := range cases {
		got, want := send(quick, i), send(slow, i)
		if got != want {
			t.Errorf("%s: quick path answered\n%s\nhuma\n%s", tc.name, got, want)
		}
	}
	records := func(srv server) string {
		evs, err := srv.db.Events(t.Context(), airlock.EventFilter{Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, ev := range evs {
			fmt.Fprintf(&b, "%d %s %s %s\n", ev.Seq, ev.Kind, ev.Agent, volatile.ReplaceAllString(string(ev.Payload), "…"))
		}
		return b.String()
	}
	if got, want := records(quick), records(slow); got != want {
		t.Errorf("audit records: quick path\n%s\nhuma\n%s", got, want)
	}
}
