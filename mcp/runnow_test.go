package mcp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/mcp"
	"github.com/airlock-dev/airlock/mcp/mcptest"
)

// TestRunNow: a call refused as a proposal runs, once, when a person
// approves it to run now — by the gateway, through the session's own
// upstream, exactly the approved arguments — and what it returned is kept
// with the request; the agent's same call then asks anew.
func TestRunNow(t *testing.T) {
	bin := mcptest.Bin(t, "mcp-server-filesystem")
	root := t.TempDir()
	e, db := newEnforcer(t)
	cs := connect(t, newGateway(t, e, mcp.Server{Name: "fs", Command: bin, Args: []string{root}}), nil)
	ctx := t.Context()
	dir := filepath.Join(root, "later")
	call := func() *sdk.CallToolResult {
		r, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "create_directory", Arguments: map[string]any{"path": dir}})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := call(); !r.IsError || !strings.Contains(text(r), airlock.CodeSuggested) {
		t.Fatalf("create_directory: %v, want a proposal", asJSON(t, r))
	}
	ap := pending(t, db, "mcp__fs__create_directory")
	_, err := db.ResolveApproval(ctx, airlock.Resolution{ApprovalID: ap.ID, Status: airlock.StatusApproved, ActionHash: ap.ActionHash,
		Reviewer: airlock.Reviewer{Name: "bob", Admin: true}, Surface: airlock.SurfaceWeb, RunNow: true})
	if err != nil {
		t.Fatal(err)
	}
	var executed airlock.Event
	deadline := time.Now().Add(20 * time.Second)
	for executed.Seq == 0 && time.Now().Before(deadline) {
		evs, err := db.Events(ctx, airlock.EventFilter{Kind: airlock.EventActionExecuted, ApprovalID: ap.ID, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) > 0 {
			executed = evs[0]
		}
		time.Sleep(20 * time.Millisecond)
	}
	if executed.Seq == 0 {
		t.Fatal("the call approved to run now did not run")
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("the directory: %v", err)
	}
	if executed.Outcome != "ok" || !strings.Contains(string(executed.Payload), `"result":{`) || !strings.Contains(string(executed.Payload), "Successfully created directory") {
		t.Errorf("the execution record: %s, want ok and the server's answer", executed.Payload)
	}
	got, err := db.Approval(ctx, ap.ID)
	if err != nil || got.GrantUsed.IsZero() {
		t.Errorf("the grant after running: used %v (%v)", got.GrantUsed, err)
	}
	if r := call(); !r.IsError || !strings.Contains(text(r), airlock.CodeSuggested) {
		t.Fatalf("the same call after the run: %v, want a new proposal (an approval runs once)", asJSON(t, r))
	}
}
