package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/client"
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
	go func() { done <- client.New(a.URL(), agent).Enforce(t.Context(), action("deploy", "prod")) }()
	var ap airlock.Approval
	deadline := time.Now().Add(30 * time.Second)
	for ap.ID == "" && time.Now().Before(deadline) {
		page, err := client.New(b.URL(), bob).Approvals(t.Context(), airlock.ApprovalFilter{Status: []airlock.ApprovalStatus{airlock.StatusPending}})
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
	// Each replica's /metrics carries its store's.
	resp, err := http.Get(a.URL() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, series := range []string{`airlock_store_batches_total{path="sealed"}`, `airlock_store_head_moved_total`,
		`airlock_store_clock_offset_seconds`, `airlock_store_pool_connections{state="max"}`} {
		if !strings.Contains(string(body), "\n"+series+" ") {
			t.Errorf("/metrics has no %s", series)
		}
	}
}

// TestServeOnPostgresDown: the database out of reach mid-run (the
// connections cut, new ones refused). Every check refuses with
// AIRLOCK-UNAVAILABLE, /readyz fails, and no request is half-written; once
// the database is back the server decides and records again, on one
// unbroken chain.
func TestServeOnPostgresDown(t *testing.T) {
	dsn, schema := pgtest.NewSchema(t)
	proxy, through := pgtest.NewProxy(t, dsn)
	m, admin := startMainWith(t, t.TempDir(), func(c *Config) {
		c.Store = StoreConfig{Driver: "postgres", DSN: Secret(through), Schema: schema}
	})
	e := &e2e{main: m, url: m.URL(), admin: admin}
	agent := client.New(m.URL(), e.token(t, "--role", "agent", "--agent", "coder-1"))
	ready := func() int {
		resp, err := http.Get(m.URL() + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if enf := agent.Enforce(t.Context(), action("read_file", "before")); !enf.Allowed {
		t.Fatalf("before: %+v", enf)
	}

	proxy.Cut()
	for _, a := range []airlock.Action{action("read_file", "during"), action("deploy", "during")} {
		enf, err := agent.CheckWait(t.Context(), a, 0)
		if err == nil && (enf.Allowed || enf.Pending || enf.Code != airlock.CodeUnavailable) {
			t.Errorf("%s with the database down: %+v, want refused with %s", a.Tool, enf, airlock.CodeUnavailable)
		}
		if err != nil && airlock.ErrorCode(err) != airlock.EUNAVAILABLE && !strings.Contains(err.Error(), airlock.CodeUnavailable) {
			t.Errorf("%s with the database down: %v, want unavailable", a.Tool, err)
		}
	}
	if got := ready(); got != http.StatusServiceUnavailable {
		t.Errorf("/readyz with the database down: %d, want 503", got)
	}

	proxy.Restore()
	deadline := time.Now().Add(30 * time.Second)
	for ready() != http.StatusOK && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if got := ready(); got != http.StatusOK {
		t.Fatalf("/readyz once the database is back: %d", got)
	}
	if enf := agent.Enforce(t.Context(), action("read_file", "after")); !enf.Allowed {
		t.Fatalf("after: %+v", enf)
	}
	page, err := client.New(m.URL(), admin).Approvals(t.Context(), airlock.ApprovalFilter{Tool: "deploy"})
	if err != nil || len(page.Approvals) != 0 {
		t.Fatalf("requests after the outage %+v, %v: the refused ask left one behind", page.Approvals, err)
	}
	if out := e.cli(t, admin, 0, "audit", "verify"); !strings.Contains(out, "ok") {
		t.Errorf("audit verify after the outage:\n%s", out)
	}
}
