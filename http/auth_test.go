package http_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
	"github.com/airlock-dev/airlock/client"
)

// newToken creates a token through the API and returns it with a client
// that uses it.
func newToken(t *testing.T, ts *testServer, role airlock.Role, name, agent string) (airlock.NewToken, *client.Client) {
	t.Helper()
	tok, err := ts.Admin.CreateToken(t.Context(), role, name, agent, 0)
	if err != nil {
		t.Fatalf("create %s token %s%s: %v", role, name, agent, err)
	}
	return tok, airlockClient(ts, tok.Secret)
}

// oneRefusal checks that exactly one access.refused event was appended
// after seq, and nothing else, and returns it.
func oneRefusal(t *testing.T, ts *testServer, seq int64) refusedEvent {
	t.Helper()
	evs := eventsAfter(t, ts, seq)
	rs := refusals(t, ts, seq)
	if len(evs) != 1 || len(rs) != 1 {
		var kinds []string
		for _, e := range evs {
			kinds = append(kinds, e.Kind)
		}
		t.Fatalf("appended %v, want exactly one access.refused", kinds)
	}
	return rs[0]
}

// wantCode checks an error's stable code.
func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := airlock.ErrorCode(err); got != code {
		t.Fatalf("error %v: code %q, want %q", err, got, code)
	}
}

func TestUnauthenticatedIsRefusedAndAudited(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	revoked, _ := newToken(t, ts, airlock.RoleReviewer, "mallory", "")
	if _, err := ts.Admin.RevokeToken(ctx, revoked.Token.ID); err != nil {
		t.Fatal(err)
	}
	expiring, err := ts.Admin.CreateToken(ctx, airlock.RoleAgent, "", "agent-1", time.Nanosecond)
	if err != nil {
		t.Fatal(err)
	}
	unknown, _ := airlock.NewTokenSecret()

	check := []byte(`{"action":{"agent":"agent-1","tool":"deploy","args":{"path":"/work/prod"}}}`)
	for _, auth := range []struct {
		name, header string
		token        *airlock.Token // the token the refusal names, if any
	}{
		{"no token", "", nil},
		{"empty bearer", "Bearer ", nil},
		{"basic auth", "Basic Ym9iOmJvYg==", nil},
		{"bare secret", ts.AgentSecret, nil},
		{"garbage token", "Bearer not-a-token", nil},
		{"unknown token", "Bearer " + unknown, nil},
		{"revoked token", "Bearer " + revoked.Secret, &revoked.Token},
		{"expired token", "Bearer " + expiring.Secret, &expiring.Token},
	} {
		for _, ep := range []struct {
			method, path string
			body         []byte
		}{
			{"GET", "/v1/whoami", nil},
			{"POST", "/v1/check", check},
			{"GET", "/v1/events", nil},
			{"POST", "/v1/tokens", []byte(`{"role":"admin","name":"mallory"}`)},
		} {
			t.Run(auth.name+"/"+ep.method+" "+ep.path, func(t *testing.T) {
				before := takeSnapshot(t, ts)
				hdr := http.Header{}
				if auth.header != "" {
					hdr.Set("Authorization", auth.header)
				}
				ct := ""
				if ep.body != nil {
					ct = "application/json"
				}
				resp := ts.doHeader(t, ep.method, ep.path, "", ct, ep.body, hdr)
				p := resp.problem(t, http.StatusUnauthorized, "unauthenticated")
				if p.Detail == "" {
					t.Error("the problem does not say why")
				}
				r := oneRefusal(t, ts, before.head)
				if got, want := r.Code, "unauthenticated"; got != want {
					t.Errorf("refusal code %q, want %q", got, want)
				}
				if r.Method != ep.method || r.Path != ep.path {
					t.Errorf("refusal of %s %s, want %s %s", r.Method, r.Path, ep.method, ep.path)
				}
				if r.Remote == "" {
					t.Error("the refusal does not say where the request came from")
				}
				if auth.token != nil {
					if got, want := r.TokenID, auth.token.ID; got != want {
						t.Errorf("refusal names token %q, want %q", got, want)
					}
					if got, want := r.Subject, auth.token.Subject(); got != want {
						t.Errorf("refusal names subject %q, want %q", got, want)
					}
				} else if r.TokenID != "" || r.Subject != "" {
					t.Errorf("refusal names token %q subject %q for an unknown token", r.TokenID, r.Subject)
				}
				// The audit log never keeps a secret, not even a wrong one.
				for _, e := range eventsAfter(t, ts, before.head) {
					for _, s := range []string{unknown, revoked.Secret, expiring.Secret, ts.AgentSecret, "not-a-token"} {
						if strings.Contains(string(e.Payload), s) {
							t.Errorf("event %d keeps a secret: %s", e.Seq, e.Payload)
						}
					}
				}
				if got, want := approvalStates(t, ts), before.approvals; !slices.Equal(got, want) {
					t.Errorf("approvals changed: %v, want %v", got, want)
				}
			})
		}
	}

	// The Go client turns it into a refusal: fail closed.
	enf := airlockClient(ts, "garbage").Enforce(ctx, airlocktest.Action("read_file", "a"))
	if enf.Allowed || enf.Code != airlock.CodeDenied {
		t.Errorf("Enforce with a garbage token: allowed %v code %q, want AIRLOCK-DENIED", enf.Allowed, enf.Code)
	}
}

func TestAgentCannotActAsAnotherAgent(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	other := airlocktest.Action("deploy", "prod")
	other.Agent = "agent-2"
	h, err := other.Hash()
	if err != nil {
		t.Fatal(err)
	}
	body := func(v map[string]any) []byte { return mustJSON(t, v) }
	for _, c := range []struct {
		name, method, path string
		body               []byte
	}{
		{"check", "POST", "/v1/check", body(map[string]any{"action": other})},
		{"check and wait", "POST", "/v1/check", body(map[string]any{"action": other, "wait": "10s"})},
		{"record execution", "POST", "/v1/executions", body(map[string]any{"action": other, "action_hash": h})},
		{"explain", "POST", "/v1/policy/explain", body(map[string]any{"action": other})},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := takeSnapshot(t, ts)
			resp := ts.do(t, c.method, c.path, ts.AgentSecret, "application/json", c.body)
			p := resp.problem(t, http.StatusForbidden, airlock.EUNAUTHORIZED)
			if !strings.Contains(p.Detail, "agent-2") {
				t.Errorf("the problem does not name the agent: %q", p.Detail)
			}
			r := oneRefusal(t, ts, before.head)
			if r.Code != airlock.EUNAUTHORIZED || r.Subject != "agent:agent-1" || r.TokenID == "" || r.Agent != "agent-1" || r.Target != "agent-2" || r.Path != c.path {
				t.Errorf("refusal %+v, want unauthorized by agent:agent-1 for agent-2 at %s", r, c.path)
			}
			if got, want := approvalStates(t, ts), before.approvals; !slices.Equal(got, want) {
				t.Errorf("approvals changed: %v, want %v", got, want)
			}
		})
	}

	// Through the client: an error for Check, a refusal for Enforce.
	_, err = ts.Agent.CheckWait(ctx, other, 0)
	wantCode(t, err, airlock.EUNAUTHORIZED)
	if enf := ts.Agent.Enforce(ctx, other); enf.Allowed || enf.Code != airlock.CodeDenied {
		t.Errorf("Enforce as agent-2: allowed %v code %q, want AIRLOCK-DENIED", enf.Allowed, enf.Code)
	}
	if n := len(pendingFor(t, ts, "deploy")); n != 0 {
		t.Errorf("%d requests queued for agent-2 by agent-1's token", n)
	}

	// An admin may check for any agent.
	enf, err := ts.Admin.CheckWait(ctx, other, 0)
	if err != nil || !enf.Pending || enf.Approval.Agent != "agent-2" {
		t.Fatalf("admin checking for agent-2: %+v %v", enf, err)
	}
}

func TestAgentCannotResolve(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	for _, tool := range []string{"deploy", "propose", "wire_money"} {
		t.Run(tool, func(t *testing.T) {
			enf, err := ts.Agent.CheckWait(ctx, airlocktest.Action(tool, "x"), 0)
			if err != nil || enf.Approval == nil {
				t.Fatalf("check %s: %+v %v", tool, enf, err)
			}
			id := enf.Approval.ID
			before := takeSnapshot(t, ts)
			_, err = ts.Agent.Resolve(ctx, id, airlock.StatusApproved, enf.Decision.ActionHash, "self-service", "")
			wantCode(t, err, airlock.EUNAUTHORIZED)
			r := oneRefusal(t, ts, before.head)
			if r.Subject != "agent:agent-1" || r.TokenID != "agent:agent-1" || r.Code != airlock.EUNAUTHORIZED || r.Agent != "agent-1" {
				t.Errorf("refusal %+v, want unauthorized, subject agent:agent-1", r)
			}
			if !strings.Contains(r.Path, id) {
				t.Errorf("refusal path %q does not name the request %s", r.Path, id)
			}
			ap, err := ts.DB.Approval(ctx, id)
			if err != nil || ap.Status != airlock.StatusPending {
				t.Errorf("after the agent's attempt: %s %v, want pending", ap.Status, err)
			}
		})
	}
}

func TestAgentSeesOnlyItsOwn(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	_, agent2 := newToken(t, ts, airlock.RoleAgent, "", "agent-2")
	a2 := airlocktest.Action("deploy", "two")
	a2.Agent = "agent-2"
	enf2, err := agent2.CheckWait(ctx, a2, 0)
	if err != nil || !enf2.Pending {
		t.Fatalf("agent-2 deploy: %+v %v", enf2, err)
	}
	r2 := airlocktest.Action("read_file", "two")
	r2.Agent = "agent-2"
	if enf := agent2.Enforce(ctx, r2); !enf.Allowed {
		t.Fatalf("agent-2 read: %+v", enf)
	}
	enf1, err := ts.Agent.CheckWait(ctx, airlocktest.Action("deploy", "one"), 0)
	if err != nil || !enf1.Pending {
		t.Fatalf("agent-1 deploy: %+v %v", enf1, err)
	}
	if enf := ts.Agent.Enforce(ctx, airlocktest.Action("read_file", "one")); !enf.Allowed {
		t.Fatalf("agent-1 read: %+v", enf)
	}
	id2 := enf2.Approval.ID

	// Another agent's request does not exist, as far as agent-1 can tell;
	// the attempt is audited.
	for _, c := range []struct {
		name, method, path string
		body               []byte
		status             int
		code               string
	}{
		{"get", "GET", "/v1/approvals/" + id2, nil, 404, airlock.ENOTFOUND},
		{"wait", "GET", "/v1/approvals/" + id2 + "/wait?timeout=10s", nil, 404, airlock.ENOTFOUND},
		{"cancel", "POST", "/v1/approvals/" + id2 + "/cancel", []byte(`{"reason":"mine now"}`), 404, airlock.ENOTFOUND},
		{"resume", "GET", "/v1/check/" + id2, nil, 404, airlock.ENOTFOUND},
		{"list with agent=agent-2", "GET", "/v1/approvals?agent=agent-2", nil, 403, airlock.EUNAUTHORIZED},
		{"events with agent=agent-2", "GET", "/v1/events?agent=agent-2", nil, 403, airlock.EUNAUTHORIZED},
		{"trust with agent=agent-2", "GET", "/v1/trust?agent=agent-2", nil, 403, airlock.EUNAUTHORIZED},
		{"effective policy of agent-2", "GET", "/v1/policy/effective?agent=agent-2", nil, 403, airlock.EUNAUTHORIZED},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := takeSnapshot(t, ts)
			ct := ""
			if c.body != nil {
				ct = "application/json"
			}
			resp := ts.do(t, c.method, c.path, ts.AgentSecret, ct, c.body)
			resp.problem(t, c.status, c.code)
			if c.status == 404 && strings.Contains(string(resp.Body), "deploy") {
				t.Errorf("the 404 leaks the request: %s", resp.Body)
			}
			r := oneRefusal(t, ts, before.head)
			// Filed under the caller's own agent: agent-2 learns nothing.
			if r.Subject != "agent:agent-1" || r.Code != airlock.EUNAUTHORIZED || r.Agent != "agent-1" || r.Target != "agent-2" {
				t.Errorf("refusal %+v, want unauthorized by agent:agent-1 reaching for agent-2", r)
			}
			if r.Action != "" {
				t.Errorf("refusal %+v repeats agent-2's action in agent-1's log", r)
			}
			if got, want := approvalStates(t, ts), before.approvals; !slices.Equal(got, want) {
				t.Errorf("approvals changed: %v, want %v", got, want)
			}
		})
	}

	// Without a filter, an agent's listings hold its own records only.
	page, err := ts.Agent.Approvals(ctx, airlock.ApprovalFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Approvals) != 1 || page.Approvals[0].ID != enf1.Approval.ID {
		t.Errorf("agent-1 lists %d requests, want only its own %s", len(page.Approvals), enf1.Approval.ID)
	}
	evs, err := ts.Agent.Events(ctx, airlock.EventFilter{Limit: airlock.MaxPageSize})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs.Events) == 0 {
		t.Error("agent-1 sees none of its own events")
	}
	for _, e := range evs.Events {
		if e.Agent != "agent-1" {
			t.Errorf("agent-1 sees event %d (%s) of agent %q", e.Seq, e.Kind, e.Agent)
		}
	}
	sums, err := ts.Agent.Trust(ctx, airlock.TrustFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(sums) == 0 {
		t.Error("agent-1 sees none of its own trust records")
	}
	for _, s := range sums {
		if s.Agent != "agent-1" {
			t.Errorf("agent-1 sees trust of agent %q", s.Agent)
		}
	}

	// A reviewer sees both agents.
	page, err = ts.Bob.Approvals(ctx, airlock.ApprovalFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(page.Approvals), 2; got != want {
		t.Errorf("bob lists %d requests, want %d", got, want)
	}
	sums, err = ts.Bob.Trust(ctx, airlock.TrustFilter{})
	if err != nil {
		t.Fatal(err)
	}
	agents := map[string]bool{}
	for _, s := range sums {
		agents[s.Agent] = true
	}
	if !agents["agent-1"] || !agents["agent-2"] {
		t.Errorf("bob sees trust of %v, want agent-1 and agent-2", agents)
	}

	// An agent may not stream another agent's events; its own stream
	// carries its own only.
	if err := ts.Agent.StreamEvents(ctx, 0, "", "agent-2", func(airlock.Event) error { return nil }); airlock.ErrorCode(err) != airlock.EUNAUTHORIZED {
		t.Fatalf("agent-1 streaming agent-2's events: %v, want unauthorized", err)
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	got := make(chan airlock.Event, 16)
	go ts.Agent.StreamEvents(sctx, 0, "", "", func(e airlock.Event) error {
		got <- e
		return nil
	})
	waitStreams(t, ts, 1)
	agent2.Enforce(ctx, r2)
	mine := ts.Agent.Enforce(ctx, airlocktest.Action("read_file", "one"))
	select {
	case e := <-got:
		if e.Agent != "agent-1" || e.Seq != mine.Seq {
			t.Errorf("agent-1's stream sent event %d of %q, want its own decision %d", e.Seq, e.Agent, mine.Seq)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("agent-1's stream sent nothing")
	}

	// agent-2's request is untouched.
	ap, err := ts.DB.Approval(ctx, id2)
	if err != nil || ap.Status != airlock.StatusPending {
		t.Errorf("agent-2's request: %s %v, want pending", ap.Status, err)
	}
}

func TestOnlyAdminsManageTokens(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	victim, _ := newToken(t, ts, airlock.RoleAgent, "", "agent-9")
	for _, who := range []struct {
		name    string
		c       *client.Client
		subject string
	}{
		{"reviewer", ts.Bob, "reviewer:bob"},
		{"agent", ts.Agent, "agent:agent-1"},
	} {
		for _, op := range []struct {
			name string
			do   func() error
		}{
			{"create", func() error {
				_, err := who.c.CreateToken(ctx, airlock.RoleAdmin, "bob2", "", 0)
				return err
			}},
			{"list", func() error { _, err := who.c.Tokens(ctx); return err }},
			{"revoke", func() error { _, err := who.c.RevokeToken(ctx, victim.Token.ID); return err }},
		} {
			t.Run(who.name+"/"+op.name, func(t *testing.T) {
				before := takeSnapshot(t, ts)
				wantCode(t, op.do(), airlock.EUNAUTHORIZED)
				r := oneRefusal(t, ts, before.head)
				if r.Subject != who.subject || r.Code != airlock.EUNAUTHORIZED {
					t.Errorf("refusal %+v, want unauthorized by %s", r, who.subject)
				}
			})
		}
	}
	toks, err := ts.Admin.Tokens(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range toks {
		if tok.Name == "bob2" {
			t.Errorf("a token was created: %+v", tok)
		}
		if tok.ID == victim.Token.ID && !tok.Revoked.IsZero() {
			t.Errorf("the token was revoked: %+v", tok)
		}
	}
}

// deployFor returns a deploy action that nobody in particular requested.
func deployFor(path, requestedBy string) airlock.Action {
	a := airlocktest.Action("deploy", path)
	a.RequestedBy = requestedBy
	return a
}

func TestReviewerNotListedCannotResolve(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	_, carol := newToken(t, ts, airlock.RoleReviewer, "carol", "")
	enf, err := ts.Agent.CheckWait(ctx, deployFor("prod", ""), 0)
	if err != nil || !enf.Pending {
		t.Fatalf("deploy: %+v %v", enf, err)
	}
	id, h := enf.Approval.ID, enf.Decision.ActionHash

	for _, st := range []airlock.ApprovalStatus{airlock.StatusApproved, airlock.StatusRejected} {
		before := takeSnapshot(t, ts)
		_, err := carol.Resolve(ctx, id, st, h, "looks fine", "")
		wantCode(t, err, airlock.EUNAUTHORIZED)
		if msg := airlock.ErrorMessage(err); !strings.Contains(msg, "bob") {
			t.Errorf("the refusal does not say who may: %q", msg)
		}
		r := oneRefusal(t, ts, before.head)
		if r.Subject != "reviewer:carol" || r.Code != airlock.EUNAUTHORIZED || r.Agent != "agent-1" {
			t.Errorf("refusal %+v, want unauthorized by reviewer:carol on agent-1's request", r)
		}
		// It names the request and the action she was refused on.
		if r.ApprovalID != id || r.Approval != id || r.Action != enf.Approval.Summary {
			t.Errorf("refusal %+v, want it to name approval %s and its action %q", r, id, enf.Approval.Summary)
		}
	}
	// Nor may she withdraw it.
	before := takeSnapshot(t, ts)
	_, err = carol.Cancel(ctx, id, "", "")
	wantCode(t, err, airlock.EUNAUTHORIZED)
	if r := oneRefusal(t, ts, before.head); r.Subject != "reviewer:carol" || r.Approval != id || r.Action == "" {
		t.Errorf("refusal %+v, want by reviewer:carol on approval %s", r, id)
	}
	if ap, _ := ts.DB.Approval(ctx, id); ap.Status != airlock.StatusPending {
		t.Fatalf("after carol: %s, want pending", ap.Status)
	}

	// bob is listed.
	ap, err := ts.Bob.Resolve(ctx, id, airlock.StatusApproved, h, "ok", "")
	if err != nil || ap.Status != airlock.StatusApproved || ap.ResolvedBy != "bob" {
		t.Fatalf("bob: %+v %v", ap, err)
	}
}

func TestResolutionWithTheWrongHash(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	enf, err := ts.Agent.CheckWait(ctx, airlocktest.Action("deploy", "prod"), 0)
	if err != nil || !enf.Pending {
		t.Fatalf("deploy: %+v %v", enf, err)
	}
	id := enf.Approval.ID
	wrong, err := airlocktest.Action("deploy", "staging").Hash()
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []airlock.ApprovalStatus{airlock.StatusApproved, airlock.StatusRejected} {
		before := takeSnapshot(t, ts)
		resp := ts.do(t, "POST", "/v1/approvals/"+id+"/resolution", ts.BobSecret, "application/json",
			mustJSON(t, map[string]any{"status": st, "action_hash": wrong}))
		p := resp.problem(t, http.StatusConflict, airlock.CodeHashMismatch)
		if !strings.Contains(p.Detail, enf.Decision.ActionHash.String()) {
			t.Errorf("the problem does not name the request's hash: %q", p.Detail)
		}
		r := oneRefusal(t, ts, before.head)
		if r.Code != airlock.CodeHashMismatch || r.Subject != "reviewer:bob" || r.Agent != "agent-1" {
			t.Errorf("refusal %+v, want AIRLOCK-HASH-MISMATCH by reviewer:bob", r)
		}
		if ap, _ := ts.DB.Approval(ctx, id); ap.Status != airlock.StatusPending {
			t.Fatalf("after a mismatched %s: %s, want pending", st, ap.Status)
		}
	}
	_, err = ts.Bob.Resolve(ctx, id, airlock.StatusApproved, wrong, "", "")
	wantCode(t, err, airlock.CodeHashMismatch)
	if enf, err := ts.Agent.Resume(ctx, id, 0); err != nil || !enf.Pending {
		t.Errorf("resume after mismatches: %+v %v, want pending", enf, err)
	}
}

func TestReviewerIdentityComesFromTheToken(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	enf, err := ts.Agent.CheckWait(ctx, airlocktest.Action("deploy", "prod"), 0)
	if err != nil || !enf.Pending {
		t.Fatalf("deploy: %+v %v", enf, err)
	}
	id, h := enf.Approval.ID, enf.Decision.ActionHash.String()
	_, dave := newToken(t, ts, airlock.RoleReviewer, "dave", "")

	// The body cannot name the reviewer: such fields are unknown.
	for _, field := range []string{"reviewer", "resolved_by", "by", "admin"} {
		before := takeSnapshot(t, ts)
		body := `{"status":"approved","action_hash":"` + h + `","` + field + `":"bob"}`
		if field == "admin" {
			body = `{"status":"approved","action_hash":"` + h + `","admin":true}`
		}
		resp := ts.do(t, "POST", "/v1/approvals/"+id+"/resolution", dave.Token, "application/json", []byte(body))
		p := resp.problem(t, http.StatusUnprocessableEntity, airlock.EINVALID)
		if !strings.Contains(p.text(), "body."+field) {
			t.Errorf("the problem does not name %s: %s", field, p.text())
		}
		before.unchanged(t, ts)
	}

	// bob's token resolves as bob, whatever else is said.
	ap, err := ts.Bob.Resolve(ctx, id, airlock.StatusApproved, enf.Decision.ActionHash, "I am alice", airlock.SurfaceCLI)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ap.ResolvedBy, "bob"; got != want {
		t.Errorf("resolved by %q, want %q", got, want)
	}
	if got, want := ap.Surface, airlock.SurfaceCLI; got != want {
		t.Errorf("surface %q, want %q", got, want)
	}
	evs, err := ts.Bob.Events(ctx, airlock.EventFilter{Kind: airlock.EventApprovalResolved})
	if err != nil || len(evs.Events) != 1 {
		t.Fatalf("approval.resolved events: %+v %v", evs, err)
	}
	if p := string(evs.Events[0].Payload); !strings.Contains(p, `"by":"bob"`) {
		t.Errorf("approval.resolved payload %s, want by bob", p)
	}
	// Exactly one resolution: a second is a conflict.
	_, err = ts.Admin.Resolve(ctx, id, airlock.StatusRejected, enf.Decision.ActionHash, "", "")
	wantCode(t, err, airlock.ECONFLICT)
}

func TestRequesterCannotApprove(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	enf, err := ts.Agent.CheckWait(ctx, deployFor("prod", "bob"), 0)
	if err != nil || !enf.Pending {
		t.Fatalf("deploy: %+v %v", enf, err)
	}
	id, h := enf.Approval.ID, enf.Decision.ActionHash
	before := takeSnapshot(t, ts)
	_, err = ts.Bob.Resolve(ctx, id, airlock.StatusApproved, h, "", "")
	wantCode(t, err, airlock.EUNAUTHORIZED)
	if msg := airlock.ErrorMessage(err); !strings.Contains(msg, "requested") {
		t.Errorf("the refusal does not say why: %q", msg)
	}
	r := oneRefusal(t, ts, before.head)
	if r.Subject != "reviewer:bob" || r.Code != airlock.EUNAUTHORIZED {
		t.Errorf("refusal %+v, want unauthorized by reviewer:bob", r)
	}
	if ap, _ := ts.DB.Approval(ctx, id); ap.Status != airlock.StatusPending {
		t.Fatalf("after bob: %s, want pending", ap.Status)
	}
	// An admin, who did not request it, may.
	ap, err := ts.Admin.Resolve(ctx, id, airlock.StatusApproved, h, "", "")
	if err != nil || ap.ResolvedBy != "root" {
		t.Fatalf("admin: %+v %v", ap, err)
	}
}
