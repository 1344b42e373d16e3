package main

import (
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	airlockhttp "github.com/airlock-dev/airlock/http"
	"github.com/airlock-dev/airlock/postgres/pgtest"
)

// TestServeOnPostgres: two servers (replicas) on one PostgreSQL database.
// A check waits on A while a reviewer approves on B; A's check returns,
// allowed; the audit log, verified through either, is one chain.
func TestServeOnPostgres(t *testing.T) {
	dsn, schema := pgtest.NewSchema(t)
	onPostgres := func(c *Config) {
		c.Store = StoreConfig{Driver: "postgres", DSN: Secret(dsn), Schema: schema}
	}
	a, admin := startMainWith(t, t.TempDir(), onPostgres)
	b, _, err := runMainWith(t, t.TempDir(), "127.0.0.1:0", onPostgres)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if a.DB != nil || b.DB != nil {
		t.Fatal("a SQLite store was opened")
	}
	ea := &e2e{main: a, url: a.URL(), admin: admin}
	agent := ea.token(t, "--role", "agent", "--agent", "coder-1")
	bob := ea.token(t, "--role", "reviewer", "--name", "bob")

	done := make(chan airlock.Enforcement, 1)
	go func() { done <- airlockhttp.NewClient(a.URL(), agent).Enforce(t.Context(), action("deploy", "prod")) }()
	var ap airlock.Approval
	deadline := time.Now().Add(30 * time.Second)
	for ap.ID == "" && time.Now().Before(deadline) {
		page, err := airlockhttp.NewClient(b.URL(), bob).Approvals(t.Context(), airlock.ApprovalFilter{Status: []airlock.ApprovalStatus{airlock.StatusPending}})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Approvals) > 0 {
			ap = page.Approvals[0]
		}
		time.Sleep(10 * time.Millisecond)
	}
	if ap.ID == "" {
		t.Fatal("replica B never saw the request queued on A")
	}
	eb := &e2e{main: b, url: b.URL(), admin: admin}
	eb.cli(t, bob, 0, "approvals", "approve", ap.ID, "--hash", ap.ActionHash.String())
	select {
	case enf := <-done:
		if !enf.Allowed || enf.Approval == nil || enf.Approval.ID != ap.ID {
			t.Fatalf("the check waiting on A: %+v", enf)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the approval on B did not release the check waiting on A")
	}
	for _, e := range []*e2e{ea, eb} {
		if out := e.cli(t, admin, 0, "audit", "verify"); !strings.Contains(out, "ok") {
			t.Errorf("audit verify through %s:\n%s", e.url, out)
		}
	}
}
