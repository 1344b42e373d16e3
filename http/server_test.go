package http_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/gate"
	airlockhttp "github.com/airlock-dev/airlock/http"
	"github.com/airlock-dev/airlock/sqlite"
)

// testServer is a server over a fresh SQLite store with one token per role:
// agent-1's agent token, bob the reviewer, and an admin.
type testServer struct {
	*airlockhttp.Server
	URL                    string
	DB                     *sqlite.DB
	Agent, Bob, Admin      *client.Client
	AgentSecret, BobSecret string
}

// startServer runs the API over a fresh SQLite store and the airlocktest
// policy, behind httptest, for tests and benchmarks alike.
func startServer(tb testing.TB) (*airlockhttp.Server, *httptest.Server, *sqlite.DB) {
	tb.Helper()
	db := sqlite.NewDB(filepath.Join(tb.TempDir(), "airlock.db"))
	if err := db.Open(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	s := &airlockhttp.Server{Enforcer: &gate.Enforcer{Gate: airlocktest.NewGate(tb), Store: db}}
	hs := httptest.NewServer(s.Handler())
	tb.Cleanup(hs.Close)
	tb.Cleanup(s.Drain)
	return s, hs, db
}

// makeToken stores a token (its ID its subject) and returns its secret.
func makeToken(tb testing.TB, db *sqlite.DB, tok airlock.Token) string {
	tb.Helper()
	secret, h := airlock.NewTokenSecret()
	tok.ID = tok.Subject()
	if _, err := db.CreateToken(context.Background(), tok, h); err != nil {
		tb.Fatal(err)
	}
	return secret
}

func newTestServer(t *testing.T) *testServer {
	t.Helper()
	s, hs, db := startServer(t)
	ts := &testServer{Server: s, URL: hs.URL, DB: db}
	mk := func(tok airlock.Token) string { return makeToken(t, db, tok) }
	ts.AgentSecret = mk(airlock.Token{Role: airlock.RoleAgent, Name: "agent-1", Agent: "agent-1"})
	ts.BobSecret = mk(airlock.Token{Role: airlock.RoleReviewer, Name: "bob"})
	ts.Agent = client.New(hs.URL, ts.AgentSecret)
	ts.Bob = client.New(hs.URL, ts.BobSecret)
	ts.Admin = client.New(hs.URL, mk(airlock.Token{Role: airlock.RoleAdmin, Name: "root"}))
	return ts
}

func TestSmoke(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	enf := ts.Agent.Enforce(ctx, airlocktest.Action("read_file", "a"))
	if !enf.Allowed {
		t.Fatalf("auto: %+v", enf)
	}
	enf, err := ts.Agent.CheckWait(ctx, airlocktest.Action("deploy", "prod"), 0)
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
