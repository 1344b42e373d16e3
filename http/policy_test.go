package http_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/gate"
	airlockhttp "github.com/airlock-dev/airlock/http"
)

// TestStalePolicy checks that while the policy files on disk are not the
// stack in force (a refused reload), /readyz stays ready but says so with
// the hashes of both, and GET /v1/policy gives the refusal whole; once
// the watcher is no longer stale, neither says it.
func TestStalePolicy(t *testing.T) {
	_, _, db := startServer(t)
	g := airlocktest.NewGate(t)
	var inForce []airlock.PolicySource
	for _, p := range g.Layers() {
		inForce = append(inForce, airlock.PolicySource{Name: p.Name(), File: p.File(), Layer: p.Layer(), SHA256: strings.Repeat("a1", 32)})
	}
	stale := &airlockhttp.StalePolicy{
		Refused: time.Date(2026, 11, 28, 9, 30, 0, 0, time.UTC), Reason: "SIGHUP",
		Errors:  []string{`airlocktest.yaml:3:36: unknown field "outcom"`},
		OnDisk:  []airlock.PolicyFileOnDisk{{File: inForce[0].File, SHA256: strings.Repeat("b2", 32)}},
		InForce: inForce,
	}
	var state atomic.Pointer[airlockhttp.PolicyFiles]
	state.Store(&airlockhttp.PolicyFiles{InForce: inForce, Stale: stale})
	s := &airlockhttp.Server{Enforcer: &gate.Enforcer{Gate: g, Store: db}, PolicyFiles: func() airlockhttp.PolicyFiles { return *state.Load() }}
	hs := httptest.NewServer(s.Handler())
	defer hs.Close()
	defer s.Drain()
	reviewer := client.New(hs.URL, makeToken(t, db, airlock.Token{Role: airlock.RoleReviewer, Name: "bob"}))

	readyz := func() (int, string) {
		t.Helper()
		resp, err := http.Get(hs.URL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := readyz()
	if code != http.StatusOK || !strings.HasPrefix(body, "ready\n") {
		t.Errorf("readyz while stale: %d %q, want 200 ready (the previous policy decides)", code, body)
	}
	for _, want := range []string{
		"policy stale: the policy files on disk are not the ones in force",
		"refused at 2026-11-28T09:30:00Z (SIGHUP) with 1 error(s)",
		"on disk:  " + inForce[0].File + " sha256 " + strings.Repeat("b2", 32) + "\n",
		"in force: " + inForce[0].File + " sha256 " + strings.Repeat("a1", 32) + "\n",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("readyz body lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "outcom") {
		t.Errorf("readyz, which needs no token, shows the policy's errors:\n%s", body)
	}

	stack, err := airlockhttp.Policy(t.Context(), reviewer)
	if err != nil {
		t.Fatal(err)
	}
	if stack.Stale == nil || !reflect.DeepEqual(*stack.Stale, *stale) {
		t.Errorf("GET /v1/policy stale = %+v, want %+v", stack.Stale, stale)
	}
	if len(stack.Layers) != len(inForce) || stack.Layers[0].SHA256 != inForce[0].SHA256 {
		t.Errorf("layers %+v, want each with its hash", stack.Layers)
	}

	// A later successful reload: neither says it any more.
	state.Store(&airlockhttp.PolicyFiles{InForce: inForce})
	if code, body := readyz(); code != http.StatusOK || body != "ready\n" {
		t.Errorf("readyz after the reload: %d %q, want 200 ready", code, body)
	}
	if stack, err := airlockhttp.Policy(t.Context(), reviewer); err != nil || stack.Stale != nil {
		t.Errorf("GET /v1/policy after the reload: %+v, %v", stack, err)
	}
}
