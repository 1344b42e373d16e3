package mcp_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/mcp"
	"github.com/airlock-dev/airlock/mcp/mcptest"
)

// clientOptions is a client that can sample, elicit and list roots, and
// counts the progress and log notifications it gets.
func clientOptions(progress, logs *atomic.Int32) *sdk.ClientOptions {
	return &sdk.ClientOptions{
		CreateMessageHandler: func(_ context.Context, req *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
			return &sdk.CreateMessageResult{Model: "test-model", Role: "assistant", Content: &sdk.TextContent{Text: "sampled by the client"}}, nil
		},
		ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return &sdk.ElicitResult{Action: "decline"}, nil
		},
		ProgressNotificationHandler: func(context.Context, *sdk.ProgressNotificationClientRequest) { progress.Add(1) },
		LoggingMessageHandler:       func(context.Context, *sdk.LoggingMessageRequest) { logs.Add(1) },
	}
}

// TestPassThrough: in front of the reference server (server-everything
// from npm), the client sees what it would see without Airlock — the same
// tools, resources, prompts and completions, byte for byte — and the
// server's own requests and notifications reach the client: sampling,
// elicitation, roots, progress and logging. Its tools that sample, elicit
// and list roots appear only because the client's capabilities passed
// through to the server.
func TestPassThrough(t *testing.T) {
	bin := mcptest.Bin(t, "mcp-server-everything")
	e, _ := newEnforcer(t)
	var progress, logs, directProgress, directLogs atomic.Int32
	cs := connect(t, newGateway(t, e, mcp.Server{Name: "everything", Command: bin}), clientOptions(&progress, &logs))
	want := direct(t, bin, nil, clientOptions(&directProgress, &directLogs))
	ctx := t.Context()

	got, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := want.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if asJSON(t, got.Tools) != asJSON(t, ref.Tools) {
		t.Errorf("tools/list through the gateway:\n%s\nwithout it:\n%s", asJSON(t, got.Tools), asJSON(t, ref.Tools))
	}
	names := map[string]bool{}
	for _, tl := range got.Tools {
		names[tl.Name] = true
	}
	for _, n := range []string{"trigger-sampling-request", "trigger-elicitation-request", "get-roots-list"} {
		if !names[n] {
			t.Errorf("tool %s is missing: the client's capabilities did not reach the server", n)
		}
	}
	if got, want := cs.InitializeResult().ServerInfo.Name, want.InitializeResult().ServerInfo.Name; got != want {
		t.Errorf("serverInfo %q, want the server's %q", got, want)
	}

	t.Run("resources", func(t *testing.T) {
		got, err := cs.ListResources(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		ref, _ := want.ListResources(ctx, nil)
		if len(got.Resources) == 0 || asJSON(t, got) != asJSON(t, ref) {
			t.Fatalf("resources/list: %s, want %s", asJSON(t, got), asJSON(t, ref))
		}
		r, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: got.Resources[0].URI})
		if err != nil {
			t.Fatal(err)
		}
		rr, _ := want.ReadResource(ctx, &sdk.ReadResourceParams{URI: got.Resources[0].URI})
		if asJSON(t, r) != asJSON(t, rr) {
			t.Errorf("resources/read: %.300s, want %.300s", asJSON(t, r), asJSON(t, rr))
		}
		tmpl, err := cs.ListResourceTemplates(ctx, nil)
		if err != nil || len(tmpl.ResourceTemplates) == 0 {
			t.Errorf("resources/templates/list: %v %v", tmpl, err)
		}
	})
	t.Run("prompts and completion", func(t *testing.T) {
		got, err := cs.ListPrompts(ctx, nil)
		if err != nil || len(got.Prompts) == 0 {
			t.Fatalf("prompts/list: %v %v", got, err)
		}
		p, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "args-prompt", Arguments: map[string]string{"city": "Lyon"}})
		if err != nil || !strings.Contains(asJSON(t, p), "Lyon") {
			t.Fatalf("prompts/get: %v %v", p, err)
		}
		c, err := cs.Complete(ctx, &sdk.CompleteParams{Ref: &sdk.CompleteReference{Type: "ref/prompt", Name: "completable-prompt"},
			Argument: sdk.CompleteParamsArgument{Name: "department", Value: "E"}})
		if err != nil || len(c.Completion.Values) == 0 {
			t.Fatalf("completion/complete: %v %v", c, err)
		}
		if err := cs.Ping(ctx, nil); err != nil {
			t.Errorf("ping: %v", err)
		}
	})
	t.Run("sampling and elicitation", func(t *testing.T) {
		r, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "trigger-sampling-request", Arguments: map[string]any{"prompt": "hi", "maxTokens": 10}})
		if err != nil || r.IsError || !strings.Contains(asJSON(t, r), "sampled by the client") {
			t.Fatalf("the server's sampling request did not reach the client: %v %v", asJSON(t, r), err)
		}
		r, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "trigger-elicitation-request", Arguments: map[string]any{}})
		if err != nil || r.IsError || !strings.Contains(strings.ToLower(asJSON(t, r)), "decline") {
			t.Fatalf("the server's elicitation did not reach the client: %v %v", asJSON(t, r), err)
		}
	})
	t.Run("progress and logging", func(t *testing.T) {
		if err := cs.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: "debug"}); err != nil {
			t.Fatal(err)
		}
		p := &sdk.CallToolParams{Name: "trigger-long-running-operation", Arguments: map[string]any{"duration": 1, "steps": 3}}
		p.SetProgressToken("op-1")
		r, err := cs.CallTool(ctx, p)
		if err != nil || r.IsError {
			t.Fatalf("%v %v", asJSON(t, r), err)
		}
		// The client SDK queues notifications for its handlers while it
		// hands a response to its caller at once: the last progress
		// notification, sent before the result, may be handled after it.
		for deadline := time.Now().Add(5 * time.Second); progress.Load() < 3 && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		if progress.Load() < 3 {
			t.Errorf("the client got %d progress notifications of 3", progress.Load())
		}
	})
}

// TestGateFilesystem: in front of the filesystem server from npm, a read
// runs at once; a write that asks is held until a person approves it, then
// runs once and is recorded; a rejected write never reaches the server; a
// denied move and a suggested mkdir do not run, and the model is told the
// code and what to do.
func TestGateFilesystem(t *testing.T) {
	bin := mcptest.Bin(t, "mcp-server-filesystem")
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "notes.txt"), []byte("airlock-marker\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e, db := newEnforcer(t)
	cs := connect(t, newGateway(t, e, mcp.Server{Name: "fs", Command: bin, Args: []string{root}}), nil)
	ctx := t.Context()

	r, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "read_text_file", Arguments: map[string]any{"path": filepath.Join(root, "notes.txt")}})
	if err != nil || r.IsError || !strings.Contains(text(r), "airlock-marker") {
		t.Fatalf("read_text_file: %v %v", asJSON(t, r), err)
	}
	// The server's readOnlyHint came with the action, for a policy to trust.
	if evs, err := db.Events(ctx, airlock.EventFilter{Kind: airlock.EventDecision, Agent: "laptop", Limit: 10}); err != nil || len(evs) == 0 ||
		!strings.Contains(string(evs[0].Payload), `"read_only":true`) {
		t.Errorf("the read's decision: %v %v, want hints.read_only from the annotations", evs, err)
	}

	write := func(name, content string) chan *sdk.CallToolResult {
		done := make(chan *sdk.CallToolResult, 1)
		go func() {
			r, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": filepath.Join(root, name), "content": content}})
			if err != nil {
				t.Errorf("write_file %s: %v", name, err)
			}
			done <- r
		}()
		return done
	}
	done := write("approved.txt", "yes")
	ap := pending(t, db, "mcp__fs__write_file")
	// The catalogue knows the filesystem server's write_file: a write, as
	// Write is, whatever its destructiveHint (TestKnownServerStarter has
	// the hint raise it when the server is not the catalogue's).
	if ap.Class != string(airlock.ClassFSWrite) || ap.Tier != airlock.TierWrite {
		t.Errorf("write_file's request is %s (%s), want fs.write (write)", ap.Class, ap.Tier)
	}
	if _, err := os.Stat(filepath.Join(root, "approved.txt")); err == nil {
		t.Fatal("the write ran before anyone approved it")
	}
	resolve(t, db, ap, airlock.StatusApproved)
	select {
	case r := <-done:
		if r == nil || r.IsError {
			t.Fatalf("the approved write: %v", asJSON(t, r))
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the held write did not run after its approval")
	}
	if b, _ := os.ReadFile(filepath.Join(root, "approved.txt")); string(b) != "yes" {
		t.Errorf("approved.txt holds %q", b)
	}
	evs, err := db.Events(ctx, airlock.EventFilter{Kind: airlock.EventActionExecuted, Agent: "laptop", Newest: true, Limit: 1})
	if err != nil || len(evs) != 1 || evs[0].Outcome != "ok" || evs[0].ApprovalID != ap.ID {
		t.Errorf("the write's execution record: %v %v, want ok, linked to its approval", evs, err)
	}

	done = write("rejected.txt", "no")
	resolve(t, db, pending(t, db, "mcp__fs__write_file"), airlock.StatusRejected)
	if r := <-done; r == nil || !r.IsError || !strings.Contains(text(r), airlock.CodeRejected) {
		t.Fatalf("the rejected write: %v", asJSON(t, r))
	}
	if _, err := os.Stat(filepath.Join(root, "rejected.txt")); err == nil {
		t.Error("the rejected write ran")
	}

	r, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "move_file", Arguments: map[string]any{"source": filepath.Join(root, "notes.txt"), "destination": filepath.Join(root, "moved.txt")}})
	if err != nil || !r.IsError || !strings.Contains(text(r), airlock.CodeDenied) || !strings.Contains(text(r), "no-moves") {
		t.Fatalf("move_file: %v %v, want AIRLOCK-DENIED naming the rule", asJSON(t, r), err)
	}
	if _, err := os.Stat(filepath.Join(root, "notes.txt")); err != nil {
		t.Error("the denied move ran")
	}
	r, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "create_directory", Arguments: map[string]any{"path": filepath.Join(root, "later")}})
	if err != nil || !r.IsError || !strings.Contains(text(r), airlock.CodeSuggested) || !strings.Contains(text(r), "airlock approvals approve") {
		t.Fatalf("create_directory: %v %v, want AIRLOCK-SUGGESTED and how to approve it", asJSON(t, r), err)
	}
	var meta map[string]any
	_ = json.Unmarshal([]byte(asJSON(t, r.Meta)), &meta)
	if meta["airlock/code"] != airlock.CodeSuggested || meta["airlock/approval"] == nil {
		t.Errorf("the refusal's _meta: %v", meta)
	}
}

// TestHeldCallCancelled: a client that stops waiting (it cancels the call)
// leaves the request pending; once approved, the identical call runs at
// once, once — and a third time asks again.
func TestHeldCallCancelled(t *testing.T) {
	bin := mcptest.Bin(t, "mcp-server-filesystem")
	root := t.TempDir()
	e, db := newEnforcer(t)
	var progress, logs atomic.Int32
	cs := connect(t, newGateway(t, e, mcp.Server{Name: "fs", Command: bin, Args: []string{root}}), clientOptions(&progress, &logs))
	params := func() *sdk.CallToolParams {
		p := &sdk.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": filepath.Join(root, "later.txt"), "content": "once"}}
		p.SetProgressToken("w-1")
		return p
	}
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, params())
		errc <- err
	}()
	ap := pending(t, db, "mcp__fs__write_file")
	deadline := time.Now().Add(10 * time.Second)
	for progress.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if progress.Load() < 2 {
		t.Errorf("a held call with a progress token got %d progress notifications", progress.Load())
	}
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("a cancelled call answered")
	}
	time.Sleep(100 * time.Millisecond)
	if got, err := db.Approval(t.Context(), ap.ID); err != nil || got.Status != airlock.StatusPending {
		t.Fatalf("after the client cancelled, the request is %s (%v), want still pending", got.Status, err)
	}
	if _, err := os.Stat(filepath.Join(root, "later.txt")); err == nil {
		t.Fatal("the cancelled call ran")
	}
	resolve(t, db, ap, airlock.StatusApproved)
	r, err := cs.CallTool(t.Context(), params())
	if err != nil || r.IsError {
		t.Fatalf("the identical call after the approval: %v %v", asJSON(t, r), err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "later.txt")); string(b) != "once" {
		t.Errorf("later.txt holds %q", b)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		defer cancel()
		_, _ = cs.CallTool(ctx, params())
	}()
	if again := pending(t, db, "mcp__fs__write_file"); again.ID == ap.ID {
		t.Error("an approval let the same call run twice")
	}
	<-done
}

// TestGateEditedCall: a reviewer approves an edit of a held call of the
// real filesystem server: the server gets the edited arguments, never the
// model's, and the execution record names the edit.
func TestGateEditedCall(t *testing.T) {
	bin := mcptest.Bin(t, "mcp-server-filesystem")
	root := t.TempDir()
	e, db := newEnforcer(t)
	cs := connect(t, newGateway(t, e, mcp.Server{Name: "fs", Command: bin, Args: []string{root}}), nil)
	ctx := t.Context()
	done := make(chan *sdk.CallToolResult, 1)
	go func() {
		r, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": filepath.Join(root, "draft.txt"), "content": "v1"}})
		if err != nil {
			t.Errorf("write_file: %v", err)
		}
		done <- r
	}()
	ap := pending(t, db, "mcp__fs__write_file")
	got, err := e.Resolve(ctx, airlock.Resolution{ApprovalID: ap.ID, Status: airlock.StatusApproved, ActionHash: ap.ActionHash,
		Reviewer: airlock.Reviewer{Name: "ops", Admin: true}, Surface: airlock.SurfaceCLI},
		airlock.MustArgs(map[string]any{"path": filepath.Join(root, "final.txt"), "content": "v2"}))
	if err != nil || got.Edit == nil {
		t.Fatalf("approve the edit: %+v, %v", got, err)
	}
	select {
	case r := <-done:
		if r == nil || r.IsError {
			t.Fatalf("the edited write: %v", asJSON(t, r))
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the held write did not run after the edit's approval")
	}
	if _, err := os.Stat(filepath.Join(root, "draft.txt")); err == nil {
		t.Error("the model's original write ran")
	}
	if b, _ := os.ReadFile(filepath.Join(root, "final.txt")); string(b) != "v2" {
		t.Errorf("final.txt holds %q, want the edit's content", b)
	}
	evs, err := db.Events(ctx, airlock.EventFilter{Kind: airlock.EventActionExecuted, Agent: "laptop", Newest: true, Limit: 1})
	if err != nil || len(evs) != 1 || !strings.Contains(string(evs[0].Payload), got.Edit.ActionHash.String()) {
		t.Errorf("the execution record: %v %v, want the edit's hash", evs, err)
	}
}
