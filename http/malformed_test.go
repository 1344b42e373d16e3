package http_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
)

// Limits the server applies (http/server.go), restated: a test must notice
// if they move.
const (
	checkBodyLimit = airlock.MaxArgsBytes + 64<<10 // POST /v1/check, /v1/executions, /v1/policy/explain
	smallBodyLimit = 64 << 10                      // every other body
	bodyDepthLimit = airlock.MaxArgsDepth + 8
	// maxProblemBytes bounds a problem's size: it names what was wrong and
	// where, it does not echo a (possibly huge) body back.
	maxProblemBytes = 8 << 10
)

// malformed is one request the server must refuse without writing
// anything.
type malformed struct {
	name         string
	method, path string
	secret       string
	contentType  string // application/json when there is a body and none is given
	body         []byte
	status       int
	mention      []string // what the problem must say: the field, the pointer, the limit
}

// nested returns n opening brackets then n closing ones.
func nested(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

// bodyCases are the malformations every JSON body endpoint must refuse.
// valid is a body the endpoint accepts; field is one of its string fields.
func bodyCases(method, path, secret, valid string, limit int) []malformed {
	at := method + " " + path + ": "
	huge := `{"pad":"` + strings.Repeat("x", limit) + `"}`
	return []malformed{
		{name: at + "truncated JSON", body: []byte(valid[:len(valid)-2]), status: 400, mention: []string{"malformed JSON", "unexpected EOF"}},
		{name: at + "truncated mid-string", body: []byte(valid[:len(valid)/2]), status: 400, mention: []string{"malformed JSON"}},
		{name: at + "empty body", body: []byte{}, status: 400, mention: []string{"body is required"}},
		{name: at + "only whitespace", body: []byte(" \n\t "), status: 400, mention: []string{"empty"}},
		{name: at + "not JSON", body: []byte("hello"), status: 400, mention: []string{"malformed JSON", "invalid character 'h'"}},
		{name: at + "JSON array", body: []byte("[" + valid + "]"), status: 422, mention: []string{"expected object", "body"}},
		{name: at + "JSON null", body: []byte("null"), status: 422, mention: []string{"body"}},
		{name: at + "text/plain", contentType: "text/plain", body: []byte("hello"), status: 415, mention: []string{"content type", "text/plain"}},
		{name: at + "form encoded", contentType: "application/x-www-form-urlencoded", body: []byte("status=approved"), status: 415, mention: []string{"content type"}},
		{name: at + "duplicate key in a nested object", body: []byte(`{"pad":{"a":{"k":1,"k":2}}}`), status: 400,
			mention: []string{"duplicate", `"k"`, "/pad/a"}},
		{name: at + "trailing data", body: []byte(valid + ` {}`), status: 400, mention: []string{"after top-level value"}},
		{name: at + "invalid UTF-8", body: []byte(`{"pad":"` + "\xff\xfe" + `"}`), status: 400, mention: []string{"UTF-8"}},
		{name: at + "nested deeper than the limit", body: []byte(`{"pad":` + nested(bodyDepthLimit+8) + `}`), status: 400,
			mention: []string{fmt.Sprintf("nested deeper than %d", bodyDepthLimit), "/pad/0/0"}},
		{name: at + "over the body limit", body: []byte(huge), status: 413, mention: []string{"too large", fmt.Sprint(limit)}},
	}
}

func TestMalformedRequests(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	admin := ts.Admin.Token

	// Something to point at: a pending request and a live token.
	enf, err := ts.Agent.CheckWait(ctx, airlocktest.Action("deploy", "prod"), 0)
	if err != nil || !enf.Pending {
		t.Fatalf("deploy: %+v %v", enf, err)
	}
	id, hash := enf.Approval.ID, enf.Decision.ActionHash.String()
	tok, err := ts.Admin.CreateToken(ctx, airlock.RoleReviewer, "dave", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	readAction := airlock.Action{Agent: "agent-1", Tool: "read_file", Args: airlock.MustArgs(map[string]any{"path": "/work/a"})}
	readHash, err := readAction.Hash()
	if err != nil {
		t.Fatal(err)
	}
	read := ts.Agent.Enforce(ctx, readAction) // what an execution record names
	if !read.Allowed {
		t.Fatalf("read: %+v", read)
	}

	var cases []malformed
	add := func(method, path, secret string, cs ...malformed) {
		for _, c := range cs {
			c.method, c.path, c.secret = method, path, secret
			if !strings.HasPrefix(c.name, method) {
				c.name = method + " " + path + ": " + c.name
			}
			cases = append(cases, c)
		}
	}
	// The valid body of each endpoint, sent last: the refusals above are
	// about what was wrong, not refusals of everything.
	type control struct{ method, path, secret, body string }
	var controls []control
	both := func(method, path, secret, valid string, limit int, cs ...malformed) {
		controls = append(controls, control{method, path, secret, valid})
		add(method, path, secret, append(bodyCases(method, path, secret, valid, limit), cs...)...)
	}

	// POST /v1/check
	const action = `{"agent":"agent-1","tool":"read_file","args":{"path":"/work/a"}}`
	both("POST", "/v1/check", ts.AgentSecret, `{"action":`+action+`}`, checkBodyLimit,
		malformed{name: "duplicate top-level key", body: []byte(`{"action":` + action + `,"action":{"agent":"agent-1","tool":"delete_file"}}`),
			status: 400, mention: []string{"duplicate", `"action"`}},
		malformed{name: "duplicate key in action", body: []byte(`{"action":{"agent":"agent-1","tool":"read_file","tool":"delete_file"}}`),
			status: 400, mention: []string{"duplicate", `"tool"`, "/action"}},
		malformed{name: "duplicate key in action.args", body: []byte(`{"action":{"agent":"agent-1","tool":"read_file","args":{"path":"/work/a","path":"/etc/passwd"}}}`),
			status: 400, mention: []string{"duplicate", `"path"`, "/action/args"}},
		malformed{name: "duplicate key deep in action.args", body: []byte(`{"action":{"agent":"agent-1","tool":"write_file","args":{"a":[{"b":{"c":1,"c":2}}]}}}`),
			status: 400, mention: []string{"duplicate", `"c"`, "/action/args/a/0/b"}},
		malformed{name: "args nested deeper than the body limit", body: []byte(`{"action":{"agent":"agent-1","tool":"write_file","args":{"a":` + nested(bodyDepthLimit+8) + `}}}`),
			status: 400, mention: []string{fmt.Sprintf("nested deeper than %d", bodyDepthLimit), "/action/args/a/0"}},
		malformed{name: "args nested deeper than the args limit", body: []byte(`{"action":{"agent":"agent-1","tool":"write_file","args":{"a":` + nested(airlock.MaxArgsDepth+2) + `}}}`),
			status: 400, mention: []string{fmt.Sprintf("nesting deeper than %d", airlock.MaxArgsDepth), "/a/0"}},
		malformed{name: "args over the args limit", body: []byte(`{"action":{"agent":"agent-1","tool":"write_file","args":{"s":"` + strings.Repeat("x", airlock.MaxArgsBytes) + `"}}}`),
			status: 400, mention: []string{"args are", fmt.Sprint(airlock.MaxArgsBytes)}},
		malformed{name: "huge body with the limit's worth of args", body: []byte(`{"action":{"agent":"agent-1","tool":"write_file","args":{"s":"` + strings.Repeat("x", checkBodyLimit) + `"}}}`),
			status: 413, mention: []string{"too large"}},
		malformed{name: "action is a string", body: []byte(`{"action":"read_file"}`), status: 422, mention: []string{"body.action", "expected object"}},
		malformed{name: "action is null", body: []byte(`{"action":null}`), status: 422, mention: []string{"body.action", "expected object"}},
		malformed{name: "agent is a number", body: []byte(`{"action":{"agent":5,"tool":"read_file"}}`), status: 422, mention: []string{"body.action.agent", "expected string"}},
		malformed{name: "args is an array", body: []byte(`{"action":{"agent":"agent-1","tool":"read_file","args":["/work/a"]}}`), status: 422, mention: []string{"body.action.args", "expected object"}},
		malformed{name: "args is a string", body: []byte(`{"action":{"agent":"agent-1","tool":"read_file","args":"{}"}}`), status: 422, mention: []string{"body.action.args", "expected object"}},
		malformed{name: "wait is a number", body: []byte(`{"action":` + action + `,"wait":30}`), status: 422, mention: []string{"body.wait", "expected string"}},
		malformed{name: "hints.tier unknown", body: []byte(`{"action":{"agent":"agent-1","tool":"read_file","hints":{"tier":"harmless"}}}`), status: 422, mention: []string{"body.action.hints.tier", "network-egress"}},
		malformed{name: "unknown top-level field", body: []byte(`{"action":` + action + `,"approved":true}`), status: 422, mention: []string{"body.approved", "unexpected property"}},
		malformed{name: "unknown field in action", body: []byte(`{"action":{"agent":"agent-1","tool":"read_file","class":"fs.read"}}`), status: 422, mention: []string{"body.action.class", "unexpected property"}},
		malformed{name: "unknown field in hints", body: []byte(`{"action":{"agent":"agent-1","tool":"read_file","hints":{"lower":true}}}`), status: 422, mention: []string{"body.action.hints.lower", "unexpected property"}},
		malformed{name: "missing action", body: []byte(`{"wait":"1s"}`), status: 422, mention: []string{"required", "action"}},
		malformed{name: "missing agent", body: []byte(`{"action":{"tool":"read_file"}}`), status: 422, mention: []string{"required", "agent", "body.action"}},
		malformed{name: "missing tool", body: []byte(`{"action":{"agent":"agent-1"}}`), status: 422, mention: []string{"required", "tool", "body.action"}},
		malformed{name: "empty agent", body: []byte(`{"action":{"agent":"","tool":"read_file"}}`), status: 400, mention: []string{"no agent"}},
		malformed{name: "empty tool", body: []byte(`{"action":{"agent":"agent-1","tool":""}}`), status: 400, mention: []string{"no tool"}},
		malformed{name: "control character in tool", body: []byte(`{"action":{"agent":"agent-1","tool":"read\u0007file"}}`), status: 400, mention: []string{"tool", "control character"}},
		malformed{name: "inexact number in args", body: []byte(`{"action":{"agent":"agent-1","tool":"write_file","args":{"n":1e400}}}`), status: 400, mention: []string{"1e400"}},
		malformed{name: "bad wait", body: []byte(`{"action":` + action + `,"wait":"soon"}`), status: 400, mention: []string{"wait", `"soon"`}},
		malformed{name: "negative wait", body: []byte(`{"action":` + action + `,"wait":"-1s"}`), status: 400, mention: []string{"wait", `"-1s"`}},
		// A problem names the offending value; it must not echo a large one.
		malformed{name: "unknown field beside large args", body: []byte(`{"action":{"agent":"agent-1","tool":"write_file","args":{"s":"` + strings.Repeat("x", 1<<20) + `"},"class":"fs.read"}}`),
			status: 422, mention: []string{"body.action.class", "unexpected property"}},
		malformed{name: "wrong type with a large value", body: []byte(`{"action":{"agent":[` + strings.Repeat(`"xxxxxxxxxx",`, 50000) + `1],"tool":"write_file"}}`),
			status: 422, mention: []string{"body.action.agent", "expected string"}},
		malformed{name: "missing field in a large object", body: []byte(`{"action":{"agent":"agent-1","args":{"s":"` + strings.Repeat("x", 1<<20) + `"}}}`),
			status: 422, mention: []string{"required", "tool"}},
	)

	// GET /v1/check/{id}
	add("GET", "/v1/check/"+id+"?wait=soon", ts.AgentSecret, malformed{name: "bad wait", status: 400, mention: []string{"wait", `"soon"`}})
	add("GET", "/v1/check/"+id+"?wait=-5s", ts.AgentSecret, malformed{name: "negative wait", status: 400, mention: []string{"wait", `"-5s"`}})
	add("GET", "/v1/check/"+id+"?timeout=1s", ts.AgentSecret, malformed{name: "unknown query parameter", status: 422, mention: []string{"query.timeout", "unknown query parameter"}})

	// POST /v1/executions
	exec := `{"action":` + action + `,"action_hash":"` + readHash.String() + `","decision_seq":` + fmt.Sprint(read.Seq) + `}`
	both("POST", "/v1/executions", ts.AgentSecret, exec, checkBodyLimit,
		malformed{name: "duplicate top-level key", body: []byte(`{"action_hash":"` + readHash.String() + `","action":` + action + `,"action_hash":"` + hash + `"}`),
			status: 400, mention: []string{"duplicate", `"action_hash"`}},
		malformed{name: "duplicate key in action.args", body: []byte(`{"action":{"agent":"agent-1","tool":"read_file","args":{"path":"/work/a","path":"/b"}},"action_hash":"` + readHash.String() + `"}`),
			status: 400, mention: []string{"duplicate", `"path"`, "/action/args"}},
		malformed{name: "action_hash is a number", body: []byte(`{"action":` + action + `,"action_hash":5}`), status: 422, mention: []string{"body.action_hash", "expected string"}},
		malformed{name: "action_hash not hex", body: []byte(`{"action":` + action + `,"action_hash":"xyz"}`), status: 422, mention: []string{"hash", "64 hex digits"}},
		malformed{name: "decision_seq is a string", body: []byte(`{"action":` + action + `,"action_hash":"` + readHash.String() + `","decision_seq":"1"}`), status: 422, mention: []string{"body.decision_seq"}},
		malformed{name: "error is an object", body: []byte(`{"action":` + action + `,"action_hash":"` + readHash.String() + `","error":{}}`), status: 422, mention: []string{"body.error", "expected string"}},
		malformed{name: "bad duration", body: []byte(`{"action":` + action + `,"action_hash":"` + readHash.String() + `","duration":"fast"}`), status: 400, mention: []string{"duration", `"fast"`}},
		malformed{name: "negative duration", body: []byte(`{"action":` + action + `,"action_hash":"` + readHash.String() + `","duration":"-1s"}`), status: 400, mention: []string{"duration", `"-1s"`}},
		malformed{name: "unknown field", body: []byte(`{"action":` + action + `,"action_hash":"` + readHash.String() + `","allowed":true}`), status: 422, mention: []string{"body.allowed", "unexpected property"}},
		malformed{name: "missing action_hash", body: []byte(`{"action":` + action + `}`), status: 422, mention: []string{"required", "action_hash"}},
		malformed{name: "missing action", body: []byte(`{"action_hash":"` + readHash.String() + `"}`), status: 422, mention: []string{"required", "action"}},
		malformed{name: "empty agent", body: []byte(`{"action":{"agent":"","tool":"read_file"},"action_hash":"` + readHash.String() + `"}`), status: 400, mention: []string{"no agent"}},
	)

	// GET /v1/approvals
	for _, c := range []struct {
		query   string
		status  int
		mention []string
	}{
		{"status=bogus", 400, []string{"approval status", `"bogus"`}},
		{"status=pending,approve", 400, []string{"approval status", `"approve"`}},
		{"min_tier=huge", 400, []string{"risk tier", `"huge"`}},
		{"created_before=yesterday", 400, []string{"created_before", `"yesterday"`, "RFC 3339"}},
		{"created_after=2026-13-01T00:00:00Z", 400, []string{"created_after", "RFC 3339"}},
		{"cursor=bogus", 400, []string{"cursor", `"bogus"`}},
		{"action_hash=zz", 400, []string{"hash"}},
		{"limit=1001", 422, []string{"query.limit", "1000"}},
		{"limit=-1", 422, []string{"query.limit", "0"}},
		{"limit=ten", 422, []string{"query.limit", "integer"}},
		{"oldest=maybe", 422, []string{"query.oldest", "boolean"}},
		{"page=2", 422, []string{"query.page", "unknown query parameter"}},
	} {
		add("GET", "/v1/approvals?"+c.query, ts.BobSecret, malformed{name: c.query, status: c.status, mention: c.mention})
	}
	add("GET", "/v1/approvals/"+id+"?verbose=1", ts.BobSecret, malformed{name: "unknown query parameter", status: 422, mention: []string{"query.verbose"}})

	// POST /v1/approvals/{id}/resolution
	resolution := "/v1/approvals/" + id + "/resolution"
	both("POST", resolution, ts.BobSecret, `{"status":"approved","action_hash":"`+hash+`"}`, smallBodyLimit,
		malformed{name: "duplicate status", body: []byte(`{"status":"rejected","action_hash":"` + hash + `","status":"approved"}`),
			status: 400, mention: []string{"duplicate", `"status"`}},
		malformed{name: "status is a number", body: []byte(`{"status":1,"action_hash":"` + hash + `"}`), status: 422, mention: []string{"body.status"}},
		malformed{name: "status not approved or rejected", body: []byte(`{"status":"expired","action_hash":"` + hash + `"}`), status: 422, mention: []string{"body.status", "approved, rejected"}},
		malformed{name: "surface system", body: []byte(`{"status":"approved","action_hash":"` + hash + `","surface":"system"}`), status: 422, mention: []string{"body.surface"}},
		malformed{name: "action_hash not hex", body: []byte(`{"status":"approved","action_hash":"` + strings.Repeat("z", 64) + `"}`), status: 422, mention: []string{"hash", "hex"}},
		malformed{name: "action_hash short", body: []byte(`{"status":"approved","action_hash":"abc"}`), status: 422, mention: []string{"hash", "64 hex digits"}},
		malformed{name: "reason too long", body: []byte(`{"status":"approved","action_hash":"` + hash + `","reason":"` + strings.Repeat("r", 2001) + `"}`), status: 422, mention: []string{"body.reason", "2000"}},
		malformed{name: "reason is an array", body: []byte(`{"status":"approved","action_hash":"` + hash + `","reason":["ok"]}`), status: 422, mention: []string{"body.reason", "expected string"}},
		malformed{name: "unknown field", body: []byte(`{"status":"approved","action_hash":"` + hash + `","grant_ttl":"24h"}`), status: 422, mention: []string{"body.grant_ttl", "unexpected property"}},
		malformed{name: "missing action_hash", body: []byte(`{"status":"approved"}`), status: 422, mention: []string{"required", "action_hash"}},
		malformed{name: "missing status", body: []byte(`{"action_hash":"` + hash + `"}`), status: 422, mention: []string{"required", "status"}},
		malformed{name: "empty object", body: []byte(`{}`), status: 422, mention: []string{"required"}},
	)

	// POST /v1/approvals/{id}/cancel, by the requesting agent
	cancel := "/v1/approvals/" + id + "/cancel"
	both("POST", cancel, ts.AgentSecret, `{"reason":"not needed"}`, smallBodyLimit,
		malformed{name: "duplicate reason", body: []byte(`{"reason":"a","reason":"b"}`), status: 400, mention: []string{"duplicate", `"reason"`}},
		malformed{name: "reason is a number", body: []byte(`{"reason":5}`), status: 422, mention: []string{"body.reason", "expected string"}},
		malformed{name: "reason too long", body: []byte(`{"reason":"` + strings.Repeat("r", 2001) + `"}`), status: 422, mention: []string{"body.reason", "2000"}},
		malformed{name: "unknown field", body: []byte(`{"reason":"x","by":"alice"}`), status: 422, mention: []string{"body.by", "unexpected property"}},
		malformed{name: "surface system", body: []byte(`{"reason":"x","surface":"system"}`), status: 422, mention: []string{"body.surface"}},
		malformed{name: "surface is a number", body: []byte(`{"surface":1}`), status: 422, mention: []string{"body.surface"}},
	)

	// GET /v1/approvals/{id}/wait
	wait := "/v1/approvals/" + id + "/wait"
	add("GET", wait+"?timeout=forever", ts.BobSecret, malformed{name: "bad timeout", status: 400, mention: []string{"timeout", `"forever"`}})
	add("GET", wait+"?timeout=-1s", ts.BobSecret, malformed{name: "negative timeout", status: 400, mention: []string{"timeout", `"-1s"`}})
	add("GET", wait+"?wait=1s", ts.BobSecret, malformed{name: "unknown query parameter", status: 422, mention: []string{"query.wait", "unknown query parameter"}})

	// GET /v1/events and its stream
	for _, c := range []struct {
		query   string
		status  int
		mention []string
	}{
		{"after=-1", 422, []string{"query.after", "0"}},
		{"after=first", 422, []string{"query.after", "integer"}},
		{"since=yesterday", 400, []string{"since", `"yesterday"`, "RFC 3339"}},
		{"limit=5000", 422, []string{"query.limit", "1000"}},
		{"limit=-3", 422, []string{"query.limit"}},
		{"before=-1", 422, []string{"query.before", "0"}},
		{"newest=sometimes", 422, []string{"query.newest", "boolean"}},
		{"until=10", 422, []string{"query.until", "unknown query parameter"}},
	} {
		add("GET", "/v1/events?"+c.query, ts.BobSecret, malformed{name: c.query, status: c.status, mention: c.mention})
	}
	add("GET", "/v1/events/stream?after=-1", ts.BobSecret, malformed{name: "negative after", status: 422, mention: []string{"query.after"}})
	add("GET", "/v1/events/stream?since=1", ts.BobSecret, malformed{name: "unknown query parameter", status: 422, mention: []string{"query.since", "unknown query parameter"}})

	// GET /v1/trust
	add("GET", "/v1/trust?since=last-week", ts.BobSecret, malformed{name: "bad since", status: 400, mention: []string{"since", `"last-week"`, "RFC 3339"}})
	add("GET", "/v1/trust?tier=write", ts.BobSecret, malformed{name: "unknown query parameter", status: 422, mention: []string{"query.tier", "unknown query parameter"}})

	// POST /v1/policy/explain
	both("POST", "/v1/policy/explain", ts.BobSecret, `{"action":{"agent":"agent-1","tool":"deploy","args":{"path":"/work/prod"}}}`, checkBodyLimit,
		malformed{name: "duplicate key in action.args", body: []byte(`{"action":{"agent":"agent-1","tool":"deploy","args":{"path":"a","path":"b"}}}`),
			status: 400, mention: []string{"duplicate", `"path"`, "/action/args"}},
		malformed{name: "duplicate top-level key", body: []byte(`{"action":{"agent":"agent-1","tool":"deploy"},"action":{"agent":"agent-1","tool":"read_file"}}`),
			status: 400, mention: []string{"duplicate", `"action"`}},
		malformed{name: "tool is a bool", body: []byte(`{"action":{"agent":"agent-1","tool":true}}`), status: 422, mention: []string{"body.action.tool", "expected string"}},
		malformed{name: "unknown field", body: []byte(`{"action":{"agent":"agent-1","tool":"deploy"},"policy":"lax"}`), status: 422, mention: []string{"body.policy", "unexpected property"}},
		malformed{name: "missing action", body: []byte(`{}`), status: 422, mention: []string{"required", "action"}},
		malformed{name: "args nested deeper than the args limit", body: []byte(`{"action":{"agent":"agent-1","tool":"deploy","args":{"a":` + nested(airlock.MaxArgsDepth+2) + `}}}`),
			status: 400, mention: []string{fmt.Sprintf("nesting deeper than %d", airlock.MaxArgsDepth)}},
	)

	// POST /v1/tokens
	both("POST", "/v1/tokens", admin, `{"role":"reviewer","name":"erin"}`, smallBodyLimit,
		malformed{name: "duplicate role", body: []byte(`{"role":"reviewer","name":"erin","role":"admin"}`), status: 400, mention: []string{"duplicate", `"role"`}},
		malformed{name: "role is a number", body: []byte(`{"role":2,"name":"erin"}`), status: 422, mention: []string{"body.role"}},
		malformed{name: "unknown role", body: []byte(`{"role":"root","name":"erin"}`), status: 422, mention: []string{"body.role", "agent, reviewer, admin"}},
		malformed{name: "unknown field", body: []byte(`{"role":"reviewer","name":"erin","secret":"airlock_mine"}`), status: 422, mention: []string{"body.secret", "unexpected property"}},
		malformed{name: "missing role", body: []byte(`{"name":"erin"}`), status: 422, mention: []string{"required", "role"}},
		malformed{name: "agent token without an agent", body: []byte(`{"role":"agent"}`), status: 400, mention: []string{"agent"}},
		malformed{name: "reviewer token with an agent", body: []byte(`{"role":"reviewer","name":"erin","agent":"agent-1"}`), status: 400, mention: []string{"agent-1"}},
		malformed{name: "reviewer token without a name", body: []byte(`{"role":"reviewer"}`), status: 400, mention: []string{"name"}},
		malformed{name: "control character in name", body: []byte(`{"role":"reviewer","name":"er\u0000in"}`), status: 400, mention: []string{"name", "control character"}},
		malformed{name: "bad expires_in", body: []byte(`{"role":"reviewer","name":"erin","expires_in":"forever"}`), status: 400, mention: []string{"expires_in", `"forever"`}},
		malformed{name: "negative expires_in", body: []byte(`{"role":"reviewer","name":"erin","expires_in":"-1h"}`), status: 400, mention: []string{"expires_in", `"-1h"`}},
		malformed{name: "expires_in is a number", body: []byte(`{"role":"reviewer","name":"erin","expires_in":3600}`), status: 422, mention: []string{"body.expires_in", "expected string"}},
	)

	// DELETE /v1/tokens/{id}
	add("DELETE", "/v1/tokens/"+tok.Token.ID+"?reason=x", admin, malformed{name: "unknown query parameter", status: 422, mention: []string{"query.reason", "unknown query parameter"}})

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := takeSnapshot(t, ts)
			defer before.unchanged(t, ts)
			ct := c.contentType
			if ct == "" && c.body != nil {
				ct = "application/json"
			}
			resp := ts.do(t, c.method, c.path, c.secret, ct, c.body)
			p := resp.problem(t, c.status, airlock.EINVALID)
			for _, m := range c.mention {
				if !strings.Contains(p.text(), m) {
					t.Errorf("the problem does not say %q: %.500s", m, p.text())
				}
			}
			if got, limit := len(resp.Body), maxProblemBytes; got > limit {
				t.Errorf("the problem is %d bytes (> %d): it echoes the request back: %.300s…", got, limit, resp.Body)
			}
		})
	}

	// The request and the token are as they were.
	if got, err := ts.DB.Approval(ctx, id); err != nil || got.Status != airlock.StatusPending {
		t.Errorf("approval after malformed requests: %s %v, want pending", got.Status, err)
	}
	if _, err := airlockClient(ts, tok.Secret).Whoami(ctx); err != nil {
		t.Errorf("token after malformed requests: %v, want live", err)
	}

	t.Run("controls", func(t *testing.T) {
		for _, c := range controls {
			path := c.path
			if strings.HasSuffix(path, "/cancel") { // the first request is resolved by now
				enf, err := ts.Agent.CheckWait(ctx, airlocktest.Action("deploy", "other"), 0)
				if err != nil {
					t.Fatal(err)
				}
				path = "/v1/approvals/" + enf.Approval.ID + "/cancel"
			}
			for _, ct := range []string{"application/json", "application/json; charset=utf-8", ""} {
				if ct != "application/json" && c.method+" "+c.path != "POST /v1/policy/explain" {
					continue // the other content types once, on an endpoint that writes nothing
				}
				if r := ts.do(t, c.method, path, c.secret, ct, []byte(c.body)); r.Status/100 != 2 {
					t.Errorf("%s %s (%s) with its valid body: %d %.300s", c.method, path, ct, r.Status, r.Body)
				}
			}
		}
	})
}

// TestUnknownIDs: a well-formed request for what does not exist is 404
// not_found, and writes nothing.
func TestUnknownIDs(t *testing.T) {
	ts := newTestServer(t)
	const nope = "01900000-0000-7000-8000-000000000000"
	hash := strings.Repeat("ab", 32)
	for _, c := range []struct {
		method, path, secret, body string
	}{
		{"GET", "/v1/check/" + nope, ts.AgentSecret, ""},
		{"GET", "/v1/check/not-an-id", ts.AgentSecret, ""},
		{"GET", "/v1/approvals/" + nope, ts.BobSecret, ""},
		{"POST", "/v1/approvals/" + nope + "/resolution", ts.BobSecret, `{"status":"approved","action_hash":"` + hash + `"}`},
		{"POST", "/v1/approvals/" + nope + "/cancel", ts.AgentSecret, `{}`},
		{"GET", "/v1/approvals/" + nope + "/wait?timeout=1s", ts.BobSecret, ""},
		{"DELETE", "/v1/tokens/" + nope, ts.Admin.Token, ""},
	} {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			before := takeSnapshot(t, ts)
			defer before.unchanged(t, ts)
			var body []byte
			ct := ""
			if c.body != "" {
				body, ct = []byte(c.body), "application/json"
			}
			resp := ts.do(t, c.method, c.path, c.secret, ct, body)
			p := resp.problem(t, http.StatusNotFound, airlock.ENOTFOUND)
			if p.Detail == "" {
				t.Error("the problem has no detail")
			}
		})
	}
}

// TestDuplicateKeysDifferingInCase: encoding/json matches member names
// case-insensitively, so {"tool":…,"Tool":…} sets one field twice and the
// last wins. A strict reader must refuse it like any other duplicate;
// otherwise what a case-sensitive reader (a log, a proxy, a reviewer's
// tool) sees differs from what the server acts on.
func TestDuplicateKeysDifferingInCase(t *testing.T) {
	ts := newTestServer(t)
	enf, err := ts.Agent.CheckWait(t.Context(), airlocktest.Action("deploy", "prod"), 0)
	if err != nil || !enf.Pending {
		t.Fatalf("deploy: %+v %v", enf, err)
	}
	hash := enf.Decision.ActionHash.String()
	for _, c := range []struct {
		name, path, secret, body string
	}{
		{"tool in action", "/v1/check", ts.AgentSecret, `{"action":{"agent":"agent-1","tool":"read_file","Tool":"delete_file"}}`},
		{"action at the top", "/v1/check", ts.AgentSecret, `{"action":{"agent":"agent-1","tool":"read_file"},"ACTION":{"agent":"agent-1","tool":"delete_file"}}`},
		{"status of a resolution", "/v1/approvals/" + enf.Approval.ID + "/resolution", ts.BobSecret,
			`{"status":"rejected","action_hash":"` + hash + `","Status":"approved"}`},
		// encoding/json folds more than ASCII: ſ (the long s) is s, K (the
		// Kelvin sign) is k.
		{"args and argſ", "/v1/check", ts.AgentSecret, `{"action":{"agent":"agent-1","tool":"read_file","args":{"path":"/work/a"},"argſ":{"path":"/etc/shadow"}}}`},
		{"a Kelvin sign in args", "/v1/check", ts.AgentSecret, `{"action":{"agent":"agent-1","tool":"read_file","args":{"path":"/work/a","mask":1,"mas\u212a":2}}}`},
		{"deep in args", "/v1/check", ts.AgentSecret, `{"action":{"agent":"agent-1","tool":"read_file","args":{"path":"/work/a","o":[{"x":{"Mode":1,"mode":2}}]}}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := takeSnapshot(t, ts)
			defer before.unchanged(t, ts)
			resp := ts.do(t, "POST", c.path, c.secret, "application/json", []byte(c.body))
			resp.problem(t, http.StatusBadRequest, airlock.EINVALID)
		})
	}
}

// A Last-Event-ID that is not a sequence number is refused, or ignored as
// if absent (only new events); it must not replay the audit log from its
// start.
func TestStreamMalformedLastEventID(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	for i := range 3 {
		ts.Agent.Enforce(ctx, airlocktest.Action("read_file", fmt.Sprint(i)))
	}
	for _, id := range []string{"abc", "-3", "1.5", "0x10"} {
		t.Run(fmt.Sprintf("%q", id), func(t *testing.T) {
			head := headSeq(t, ts)
			sctx, stop := context.WithCancel(ctx)
			defer stop()
			req, err := http.NewRequestWithContext(sctx, "GET", ts.URL+"/v1/events/stream", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+ts.BobSecret)
			req.Header.Set("Accept", "text/event-stream")
			req.Header.Set("Last-Event-ID", id)
			// The server may hold its headers until the first event: ask in
			// the background.
			refused := make(chan rawResponse, 1)
			ids := make(chan int64, 64)
			go func() {
				defer close(ids)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					return
				}
				defer resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b, _ := io.ReadAll(resp.Body)
					refused <- rawResponse{Status: resp.StatusCode, Header: resp.Header, Body: b}
					return
				}
				sc := bufio.NewScanner(resp.Body)
				for sc.Scan() {
					if v, ok := strings.CutPrefix(sc.Text(), "id:"); ok {
						n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
						ids <- n
					}
				}
			}()
			var opened bool
			waitFor(t, "the stream to open or be refused", func() bool {
				select {
				case r := <-refused:
					r.problem(t, http.StatusUnprocessableEntity, airlock.EINVALID)
					return true
				default:
				}
				v, _ := metric(ts.metrics(t), "airlock_event_streams")
				opened = v == 1
				return opened
			})
			if !opened {
				return
			}
			enf := ts.Agent.Enforce(ctx, airlocktest.Action("read_file", "new"))
			select {
			case got := <-ids:
				if got <= head {
					t.Errorf("Last-Event-ID %q: the stream replays old event %d (head was %d), want only new ones (first: %d)", id, got, head, enf.Seq)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("nothing streamed")
			}
			stop()
			waitStreams(t, ts, 0)
		})
	}
}
