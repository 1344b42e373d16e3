package http_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
	airlockhttp "github.com/airlock-dev/airlock/http"
	"github.com/airlock-dev/airlock/sqlite"
)

// testServer is a server over a fresh SQLite store with one token per role:
// agent-1's agent token, bob the reviewer, and an admin.
type testServer struct {
	*airlockhttp.Server
	URL                    string
	DB                     *sqlite.DB
	Agent, Bob, Admin      *airlockhttp.Client
	AgentSecret, BobSecret string
}

func newTestServer(t *testing.T) *testServer {
	t.Helper()
	db := sqlite.NewDB(filepath.Join(t.TempDir(), "airlock.db"))
	if err := db.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s := &airlockhttp.Server{Enforcer: &airlock.Enforcer{Gate: airlocktest.NewGate(t), Store: db}}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	t.Cleanup(s.Drain)
	ts := &testServer{Server: s, URL: hs.URL, DB: db}
	mk := func(tok airlock.Token) string {
		secret, h := airlock.NewTokenSecret()
		tok.ID = tok.Subject()
		if _, err := db.CreateToken(context.Background(), tok, h); err != nil {
			t.Fatal(err)
		}
		return secret
	}
	ts.AgentSecret = mk(airlock.Token{Role: airlock.RoleAgent, Name: "agent-1", Agent: "agent-1"})
	ts.BobSecret = mk(airlock.Token{Role: airlock.RoleReviewer, Name: "bob"})
	ts.Agent = airlockhttp.NewClient(hs.URL, ts.AgentSecret)
	ts.Bob = airlockhttp.NewClient(hs.URL, ts.BobSecret)
	ts.Admin = airlockhttp.NewClient(hs.URL, mk(airlock.Token{Role: airlock.RoleAdmin, Name: "root"}))
	return ts
}

func TestSmoke(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	enf := ts.Agent.Enforce(ctx, airlocktest.Action("read_file", "a"))
	if !enf.Allowed {
		t.Fatalf("auto: %+v", enf)
	}
	enf, err := ts.Agent.Check(ctx, airlocktest.Action("deploy", "prod"), 0)
	if err != nil || !enf.Pending {
		t.Fatalf("ask: %+v %v", enf, err)
	}
	if _, err := ts.Bob.Resolve(ctx, enf.Approval.ID, airlock.StatusApproved, enf.Decision.ActionHash, "ok", ""); err != nil {
		t.Fatal(err)
	}
	got, err := ts.Agent.Resume(ctx, enf.Approval.ID, 0)
	if err != nil || !got.Allowed {
		t.Fatalf("resume: %+v %v", got, err)
	}
}
