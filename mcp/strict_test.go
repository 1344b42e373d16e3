package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/gate"
	"github.com/airlock-dev/airlock/mcp"
	"github.com/airlock-dev/airlock/mcp/mcptest"
	"github.com/airlock-dev/airlock/shell"
	"github.com/airlock-dev/airlock/sqlite"
)

// rawClient is a client that writes JSON-RPC lines itself: what an
// attacker's client can send, byte for byte.
type rawClient struct {
	t     *testing.T
	in    io.Writer
	lines *bufio.Scanner
}

// rawSession serves one stdio session of g to a raw client, initialized.
func rawSession(t *testing.T, g *mcp.Gateway) *rawClient {
	t.Helper()
	toGateway, in := io.Pipe()
	out, fromGateway := io.Pipe()
	go func() {
		_ = g.ServeStdio(context.WithoutCancel(t.Context()), toGateway, fromGateway)
		fromGateway.Close()
	}()
	t.Cleanup(func() { in.Close() })
	lines := bufio.NewScanner(out)
	lines.Buffer(nil, 1<<20)
	c := &rawClient{t: t, in: in, lines: lines}
	if m := c.call(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

func (c *rawClient) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

// call sends a request and returns the response with its ID, skipping the
// notifications in between.
func (c *rawClient) call(line string) map[string]any {
	c.t.Helper()
	var req struct {
		ID any `json:"id"`
	}
	if err := json.Unmarshal([]byte(line), &req); err != nil {
		// A line that is no JSON on purpose: its answer has no ID.
		req.ID = nil
	}
	c.send(line)
	for c.lines.Scan() {
		var m map[string]any
		if err := json.Unmarshal(c.lines.Bytes(), &m); err != nil {
			c.t.Fatalf("the answer to %s is not JSON: %s", line, c.lines.Bytes())
		}
		if _, isCall := m["method"]; isCall {
			continue
		}
		if m["id"] == req.ID {
			return m
		}
	}
	c.t.Fatalf("no answer to %s: %v", line, c.lines.Err())
	return nil
}

// rpcError is a response's error code and message.
func rpcError(m map[string]any) (float64, string) {
	e, _ := m["error"].(map[string]any)
	code, _ := e["code"].(float64)
	msg, _ := e["message"].(string)
	return code, msg
}

// decisions counts the decisions recorded for agent laptop.
func decisions(t *testing.T, e *gate.Enforcer) int {
	t.Helper()
	evs, err := e.Store.Events(t.Context(), airlock.EventFilter{Kind: airlock.EventDecision, Agent: "laptop", Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return len(evs)
}

// TestAmbiguousParamsRefused: params whose keys repeat, or differ only in
// case — as encoding/json folds it (ASCII, K the Kelvin sign, ſ the long s),
// at any depth, spelled with escapes — are ambiguous: the gateway would
// decide on one reading and the server run another (encoding/json matches
// keys case-insensitively and the last wins; the server's decoder may
// take the first, or match exactly). They are refused with invalid params,
// nothing is decided and nothing is forwarded; so are params with invalid
// UTF-8 or a lone surrogate. The same call spelled once runs.
func TestAmbiguousParamsRefused(t *testing.T) {
	e, _ := newEnforcer(t)
	srv, forwarded := recordingServerSpec(t, "test")
	c := rawSession(t, newGateway(t, e, srv))
	dir := t.TempDir()
	path := func(name string) string {
		b, _ := json.Marshal(filepath.Join(dir, name))
		return string(b)
	}
	// The tool list is read once, so that the cases below are each the
	// only thing that might be forwarded.
	if m := c.call(`{"jsonrpc":"2.0","id":0,"method":"tools/list"}`); m["result"] == nil {
		t.Fatalf("tools/list: %v", m)
	}
	for i, tc := range []struct {
		name, method, params string
		mention              []string
	}{
		{"name and NAME", "tools/call", `{"name":"touch","NAME":"hello","arguments":{"path":` + path("a") + `,"name":"x"}}`,
			[]string{`"NAME"`, `"name"`, "/NAME"}},
		{"arguments and Arguments", "tools/call", `{"name":"touch","arguments":{"path":` + path("b") + `},"Arguments":{"path":` + path("c") + `}}`,
			[]string{`"Arguments"`, "/Arguments"}},
		{"arguments twice", "tools/call", `{"name":"touch","arguments":{"path":` + path("d") + `},"arguments":{"path":` + path("e") + `}}`,
			[]string{`"arguments"`, "/arguments"}},
		{"path and PATH in the arguments", "tools/call", `{"name":"touch","arguments":{"path":` + path("f") + `,"PATH":` + path("g") + `}}`,
			[]string{`"PATH"`, "/arguments/PATH"}},
		{"deep in the arguments", "tools/call", `{"name":"touch","arguments":{"path":` + path("h") + `,"opts":[{"mode":1,"Mode":2}]}}`,
			[]string{`"Mode"`, "/arguments/opts/0/Mode"}},
		{"a long s", "tools/call", `{"name":"touch","arguments":{"path":` + path("i") + `},"argumentſ":{"path":` + path("j") + `}}`,
			[]string{`"argument\u017f"`}},
		{"the Kelvin sign", "tools/call", `{"name":"touch","arguments":{"path":` + path("k") + `,"mas\u212a":1,"mask":2}}`,
			[]string{`"mask"`}},
		{"an escaped name", "tools/call", `{"name":"touch","\u006eame":"hello","arguments":{"path":` + path("l") + `}}`,
			[]string{`"name"`}},
		{"invalid UTF-8", "tools/call", `{"name":"touch","arguments":{"path":` + path("m") + `,"note":"` + "\xff" + `"}}`,
			[]string{"UTF-8"}},
		{"a lone surrogate", "tools/call", `{"name":"touch","arguments":{"path":` + path("n") + `,"\ud800":1,"\ud801":2}}`,
			[]string{"surrogate"}},
		{"uri and URI", "resources/read", `{"uri":"file://` + filepath.Join(dir, "ok.txt") + `","URI":"file:///etc/shadow"}`,
			[]string{`"URI"`, "/URI"}},
		{"prompt name and Name", "prompts/get", `{"name":"greeting","Name":"other","arguments":{"who":"x"}}`,
			[]string{`"Name"`, "/Name"}},
		{"prompt arguments twice", "prompts/get", `{"name":"greeting","arguments":{"who":"x"},"arguments":{"who":"y"}}`,
			[]string{`"arguments"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := decisions(t, e)
			sent := len(forwarded(tc.method))
			m := c.call(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, i+1, tc.method, tc.params))
			code, msg := rpcError(m)
			if code != -32602 {
				t.Errorf("answered %v, want invalid params (-32602)", m)
			}
			for _, w := range tc.mention {
				if !strings.Contains(msg, w) {
					t.Errorf("the error %q does not say %s", msg, w)
				}
			}
			if got := decisions(t, e); got != before {
				t.Errorf("%d decisions recorded, want none", got-before)
			}
			if got := forwarded(tc.method); len(got) != sent {
				t.Errorf("forwarded to the server: %s", got[sent:])
			}
		})
	}
	entries, _ := os.ReadDir(dir)
	for _, f := range entries {
		t.Errorf("the server wrote %s", f.Name())
	}
	// Spelled once, the call runs.
	m := c.call(`{"jsonrpc":"2.0","id":"ok","method":"tools/call","params":{"name":"touch","arguments":{"path":` + path("ok") + `}}}`)
	if m["result"] == nil {
		t.Fatalf("the unambiguous call: %v", m)
	}
	if _, err := os.Stat(filepath.Join(dir, "ok")); err != nil {
		t.Errorf("the unambiguous call did not run: %v", err)
	}
}

// TestAmbiguousMessagesRefused: a message whose own members repeat or
// differ only in case ("method" and "METHOD", "params" twice) is refused
// as an invalid request, whatever its params: nothing is decided, nothing
// forwarded, and the session goes on.
func TestAmbiguousMessagesRefused(t *testing.T) {
	e, _ := newEnforcer(t)
	srv, forwarded := recordingServerSpec(t, "test")
	c := rawSession(t, newGateway(t, e, srv))
	dir := t.TempDir()
	touch, _ := json.Marshal(map[string]any{"name": "touch", "arguments": map[string]any{"path": filepath.Join(dir, "x")}})
	hello := `{"name":"hello","arguments":{"name":"a"}}`
	for i, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping","METHOD":"tools/call","params":` + string(touch) + `}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":` + hello + `,"params":` + string(touch) + `}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","Params":` + hello + `,"params":` + string(touch) + `}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","method":"tools/call","params":` + string(touch) + `}`,
	} {
		m := c.call(line)
		if code, msg := rpcError(m); code != -32600 || m["id"] != float64(i+1) || !strings.Contains(msg, "duplicate member") {
			t.Errorf("%s: answered %v, want an invalid request naming the duplicate", line, m)
		}
	}
	if decisions(t, e) != 0 || len(forwarded("tools/call")) != 0 {
		t.Errorf("decided %d, forwarded %v", decisions(t, e), forwarded("tools/call"))
	}
	if m := c.call(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":` + hello + `}`); m["result"] == nil {
		t.Errorf("after the ambiguous messages, hello: %v", m)
	}
}

// TestForwardedAsDecided: the server gets the params the gateway decided
// on, re-encoded — the tool's name, the arguments byte for byte as hashed
// (RFC 8785: keys sorted, escapes resolved, no white space) and the
// progress token — never the client's bytes: not its key order, escapes,
// white space, nor members the gateway did not read.
func TestForwardedAsDecided(t *testing.T) {
	e, db := newEnforcer(t)
	srv, forwarded := recordingServerSpec(t, "test")
	c := rawSession(t, newGateway(t, e, srv))
	quoted, _ := json.Marshal(filepath.Join(t.TempDir(), "odd"))
	params := `{ "_meta" : { "progressToken" : "p-1", "other/key": {"x": 1} },
		"arguments":{ "z": [ 1.5e3 , true ], "\u0070ath" : ` + string(quoted) + `, "a": "\u00e9\t<&>" },
		"extra": {"ignored": true}, "name":"e\u0063ho" }`
	line := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + strings.ReplaceAll(params, "\n", "") + `}`
	m := c.call(line)
	if m["result"] == nil {
		t.Fatalf("the call: %v", m)
	}
	got := forwarded("tools/call")
	if len(got) != 1 {
		t.Fatalf("forwarded %d calls: %v", len(got), got)
	}
	wantArgs := `{"a":"é\t<&>","path":` + string(quoted) + `,"z":[1500,true]}`
	want := `{"_meta":{"progressToken":"p-1"},"arguments":` + wantArgs + `,"name":"echo"}`
	if canonical(t, got[0]) != want {
		t.Errorf("forwarded params:\n%s\nwant (as a value):\n%s", got[0], want)
	}
	var p map[string]json.RawMessage
	if err := json.Unmarshal([]byte(got[0]), &p); err != nil {
		t.Fatal(err)
	}
	if string(p["arguments"]) != wantArgs {
		t.Errorf("forwarded arguments %s, want byte for byte %s", p["arguments"], wantArgs)
	}
	// What the decision bound is what ran.
	evs, err := db.Events(t.Context(), airlock.EventFilter{Kind: airlock.EventDecision, Agent: "laptop", Limit: 10})
	if err != nil || len(evs) != 1 {
		t.Fatalf("decisions: %v %v", evs, err)
	}
	var d struct {
		Action     airlock.Action `json:"action"`
		ActionHash airlock.Hash   `json:"action_hash"`
	}
	if err := json.Unmarshal(evs[0].Payload, &d); err != nil {
		t.Fatal(err)
	}
	if d.Action.Tool != "mcp__test__echo" || canonical(t, string(d.Action.Args)) != wantArgs {
		t.Errorf("decided %s %s, want mcp__test__echo %s", d.Action.Tool, d.Action.Args, wantArgs)
	}
	ran := d.Action
	ran.Args = p["arguments"]
	if h, err := ran.Hash(); err != nil || h != d.ActionHash {
		t.Errorf("the forwarded call hashes to %v (%v), the decision to %v", h, err, d.ActionHash)
	}
}

// canonical is a JSON text in RFC 8785 form.
func canonical(t *testing.T, s string) string {
	t.Helper()
	v := jsontext.Value(s)
	if err := v.Canonicalize(); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return string(v)
}

// newStarterEnforcer is an embedded Airlock with the starter policy.
func newStarterEnforcer(t testing.TB) (*gate.Enforcer, *sqlite.DB) {
	t.Helper()
	e, db := newEnforcer(t)
	gate, err := gate.New(shell.Analyser{}, gate.StarterPolicy())
	if err != nil {
		t.Fatal(err)
	}
	e.Gate = gate
	return e, db
}

// decisionsOf returns the decision events of tool, oldest first.
func decisionsOf(t *testing.T, db *sqlite.DB, tool string) []airlock.Event {
	t.Helper()
	evs, err := db.Events(t.Context(), airlock.EventFilter{Kind: airlock.EventDecision, Agent: "laptop", Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var out []airlock.Event
	for _, ev := range evs {
		if strings.Contains(string(ev.Payload), `"tool":"`+tool+`"`) {
			out = append(out, ev)
		}
	}
	return out
}

// TestResourceReadDecided: resources/read is decided and recorded like a
// tool call, as mcp__<server>__resources/read with the URI as its
// argument. Under the starter policy a file:// URI is judged like a path:
// an ordinary file is a read and runs, a secret — however the URI spells
// it — never reaches the server without a person; a URI that is not a
// local file asks.
func TestResourceReadDecided(t *testing.T) {
	e, db := newStarterEnforcer(t)
	srv, forwarded := recordingServerSpec(t, "test")
	cs := connect(t, newGateway(t, e, srv), nil)
	ctx := t.Context()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("airlock-marker\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "keys"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "keys", "id_rsa"), []byte("PRIVATE KEY\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	uri := "file://" + filepath.Join(dir, "notes.txt")
	r, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
	if err != nil || len(r.Contents) != 1 || r.Contents[0].Text != "airlock-marker\n" {
		t.Fatalf("reading %s: %v %v", uri, asJSON(t, r), err)
	}
	evs := decisionsOf(t, db, "mcp__test__resources/read")
	if len(evs) != 1 || evs[0].Outcome != "auto" || !strings.Contains(string(evs[0].Payload), `"class":"mcp.resource.read"`) ||
		!strings.Contains(string(evs[0].Payload), `"tier":"read"`) || !strings.Contains(string(evs[0].Payload), `"args":{"uri":"`+uri+`"}`) {
		t.Fatalf("the read's decision: %v", evs)
	}
	ran, err := db.Events(ctx, airlock.EventFilter{Kind: airlock.EventActionExecuted, Agent: "laptop", Limit: 10})
	if err != nil || len(ran) != 1 || ran[0].Outcome != "ok" {
		t.Errorf("the read's execution record: %v %v", ran, err)
	}
	if got := forwarded("resources/read"); len(got) != 1 || canonical(t, got[0]) != `{"uri":"`+uri+`"}` {
		t.Errorf("forwarded %v", got)
	}

	for _, secret := range []string{
		"file://" + filepath.Join(dir, "keys", "id_rsa"),
		"file://" + filepath.Join(dir, "keys", "id_%72sa"),
		"file://localhost" + filepath.Join(dir, "notes.txt", "..", "keys", "id_rsa"),
		"file://" + filepath.Join(dir, "keys") + "/./id_rsa",
	} {
		_, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: secret})
		if err == nil || !strings.Contains(err.Error(), airlock.CodeNeedsHuman) || !strings.Contains(err.Error(), "airlock approvals approve") {
			t.Errorf("reading %s: %v, want %s and how to approve it", secret, err, airlock.CodeNeedsHuman)
		}
	}
	if got := forwarded("resources/read"); len(got) != 1 {
		t.Errorf("a secret's read was forwarded: %v", got[1:])
	}

	// Not a local file: a person decides.
	for _, other := range []string{"https://example.com/notes", "ui://widget/1", "file://fileserver/share/notes.txt"} {
		done := make(chan error, 1)
		go func() {
			_, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: other})
			done <- err
		}()
		ap := pendingWith(t, db, "mcp__test__resources/read", other)
		if ap.Class != "mcp.resource.read" || ap.Tier < airlock.TierWrite || !strings.Contains(string(ap.Action.Args), other) {
			t.Errorf("%s: request of class %s, tier %s, args %s", other, ap.Class, ap.Tier, ap.Action.Args)
		}
		resolve(t, db, ap, airlock.StatusRejected)
		if err := <-done; err == nil || !strings.Contains(err.Error(), airlock.CodeRejected) {
			t.Errorf("%s rejected: %v", other, err)
		}
	}
	if got := forwarded("resources/read"); len(got) != 1 {
		t.Errorf("a rejected read was forwarded: %v", got[1:])
	}
}

// TestPromptGetDecided: prompts/get runs the server's code with the
// client's arguments: it is decided like a tool call, as
// mcp__<server>__prompts/get with the prompt's name and arguments, held
// while a person decides under the starter policy, forwarded as decided
// once approved, and recorded.
func TestPromptGetDecided(t *testing.T) {
	e, db := newStarterEnforcer(t)
	srv, forwarded := recordingServerSpec(t, "test")
	cs := connect(t, newGateway(t, e, srv), nil)
	ctx := t.Context()
	type answer struct {
		r   *sdk.GetPromptResult
		err error
	}
	done := make(chan answer, 1)
	go func() {
		r, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "greeting", Arguments: map[string]string{"who": "Lyon"}})
		done <- answer{r, err}
	}()
	ap := pending(t, db, "mcp__test__prompts/get")
	if ap.Class != "mcp.prompt.get" || string(ap.Action.Args) != `{"arguments":{"who":"Lyon"},"name":"greeting"}` {
		t.Errorf("the request: class %s, args %s", ap.Class, ap.Action.Args)
	}
	if got := forwarded("prompts/get"); len(got) != 0 {
		t.Fatalf("forwarded before a person decided: %v", got)
	}
	resolve(t, db, ap, airlock.StatusApproved)
	a := <-done
	if a.err != nil || len(a.r.Messages) != 1 || !strings.Contains(asJSON(t, a.r), "Say hello to Lyon") {
		t.Fatalf("the approved prompt: %v %v", asJSON(t, a.r), a.err)
	}
	if got := forwarded("prompts/get"); len(got) != 1 || canonical(t, got[0]) != `{"arguments":{"who":"Lyon"},"name":"greeting"}` {
		t.Errorf("forwarded %v", got)
	}
	ran, err := db.Events(ctx, airlock.EventFilter{Kind: airlock.EventActionExecuted, Agent: "laptop", Limit: 10})
	if err != nil || len(ran) != 1 || ran[0].ApprovalID != ap.ID {
		t.Errorf("the prompt's execution record: %v %v", ran, err)
	}
}

// pendingWith waits for the pending request of tool whose arguments hold
// text.
func pendingWith(t *testing.T, db *sqlite.DB, tool, text string) airlock.Approval {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		page, err := db.FindApprovals(t.Context(), airlock.ApprovalFilter{Status: []airlock.ApprovalStatus{airlock.StatusPending}, Tool: tool})
		if err != nil {
			t.Fatal(err)
		}
		for _, ap := range page.Approvals {
			if strings.Contains(string(ap.Action.Args), text) {
				return ap
			}
		}
	}
	t.Fatalf("no pending request for %s with %s", tool, text)
	return airlock.Approval{}
}

// TestTaskForwarded: a tool of the reference server that must run as a
// task (execution.taskSupport "required", MCP 2025-11-25) still runs
// through the gateway: the client's task request says how the answer
// comes, not what runs, and goes on with the decided params.
func TestTaskForwarded(t *testing.T) {
	bin := mcptest.Bin(t, "mcp-server-everything")
	e, db := newEnforcer(t)
	c := rawSession(t, newGateway(t, e, mcp.Server{Name: "everything", Command: bin}))
	m := c.call(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"simulate-research-query","arguments":{"topic":"airlocks"},"task":{"ttl":60000}}}`)
	res, _ := json.Marshal(m["result"])
	if !strings.Contains(string(res), `"taskId"`) {
		t.Fatalf("the task-augmented call: %v", m)
	}
	if evs := decisionsOf(t, db, "mcp__everything__simulate-research-query"); len(evs) != 1 || !strings.Contains(string(evs[0].Payload), `"args":{"topic":"airlocks"}`) {
		t.Errorf("its decision: %v", evs)
	}
	m = c.call(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"simulate-research-query","arguments":{"topic":"airlocks"},"task":"soon"}}`)
	if code, msg := rpcError(m); code != -32602 || !strings.Contains(msg, "task") {
		t.Errorf("a task that is not an object: %v", m)
	}
}

// editing is a checker that allows another action than the one it is
// asked about — as an approval of edited arguments would.
type editing struct{ *gate.Enforcer }

func (c editing) Check(ctx context.Context, a airlock.Action) airlock.Enforcement {
	enf := c.Enforcer.Check(ctx, a)
	enf.Decision.Action.Args = json.RawMessage(`{"path":"/elsewhere"}`)
	return enf
}

// TestOtherActionNeverForwarded: when what Airlock allowed is not the call
// the gateway holds — its arguments differ — the call is refused, never
// forwarded in the allowed action's place nor as it came.
func TestOtherActionNeverForwarded(t *testing.T) {
	e, _ := newEnforcer(t)
	srv, forwarded := recordingServerSpec(t, "test")
	g := newGateway(t, e, srv)
	g.Checker = editing{e}
	c := rawSession(t, g)
	path, _ := json.Marshal(filepath.Join(t.TempDir(), "x"))
	m := c.call(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"touch","arguments":{"path":` + string(path) + `}}}`)
	if res, _ := json.Marshal(m["result"]); !strings.Contains(string(res), airlock.CodeDenied) || !strings.Contains(string(res), "other than this call") {
		t.Errorf("the call: %v", m)
	}
	m = c.call(`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"file:///tmp/x"}}`)
	if code, msg := rpcError(m); code != -32010 || !strings.Contains(msg, "other than this call") {
		t.Errorf("the read: %v", m)
	}
	if got := append(forwarded("tools/call"), forwarded("resources/read")...); len(got) != 0 {
		t.Errorf("forwarded %v", got)
	}
}
