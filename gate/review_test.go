package gate_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/gate"
	"github.com/airlock-dev/airlock/shell"
	"github.com/airlock-dev/airlock/sqlite"
)

// reviewPolicy asks for writes, with a quorum and escalation for deploys;
// it denies writes under /etc and asks the leads for anything destructive.
const reviewPolicy = `name: review
passkey: privileged
agents:
  coder: {owner: olive}
rules:
  - {id: no-etc, tool: Write, when: 'args.file_path.startsWith("/etc/")', outcome: deny}
  - {id: writes, tool: Write, outcome: ask, reviewers: [rev, rev2]}
  - id: deploy
    tool: Bash
    command: "deploy *"
    outcome: ask
    reviewers: [rev, rev2, group:sre]
    approvals: 2
    timeout: 1h
    escalate: [{after: 10m, to: [oncall]}]
  - {id: wipe, tool: Bash, command: "rm *", outcome: ask, reviewers: [lead]}
  - {id: bash, tool: Bash, outcome: ask, reviewers: [rev, rev2]}
`

func reviewEnforcer(t *testing.T) (*gate.Enforcer, *sqlite.DB) {
	t.Helper()
	p, err := gate.LoadPolicy("policy.yaml", []byte(reviewPolicy))
	if err != nil {
		t.Fatal(err)
	}
	g, err := gate.New(shell.Analyser{}, p)
	if err != nil {
		t.Fatal(err)
	}
	db := sqlite.NewDB(filepath.Join(t.TempDir(), "airlock.db"))
	if err := db.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &gate.Enforcer{Gate: g, Store: db}, db
}

func write(path string) airlock.Action {
	return airlock.Action{Agent: "coder", Tool: "Write", Cwd: "/w", Args: airlock.MustArgs(map[string]any{"file_path": path, "content": "x"})}
}

// TestPolicyReview: a rule's approvals, escalation and passkey, and a
// policy's passkey tier, reach the decision, its explanation and its
// request.
func TestPolicyReview(t *testing.T) {
	e, _ := reviewEnforcer(t)
	d := e.Gate.Decide(t.Context(), bash("coder", "deploy prod"))
	want := airlock.Review{Approvals: 2, Escalate: []airlock.Escalation{{After: airlock.Duration(10 * time.Minute), To: []string{"oncall"}}}}
	if d.Outcome != airlock.Ask || d.Review.Approvals != 2 || len(d.Review.Escalate) != 1 || d.Review.Escalate[0].To[0] != "oncall" {
		t.Fatalf("deploy's review: %+v, want %+v", d.Review, want)
	}
	if x := d.Explain(); !strings.Contains(x, "2 approvals from distinct people; after 10m0s escalate to oncall") {
		t.Fatalf("the explanation does not say the review:\n%s", x)
	}
	enf := e.Check(t.Context(), bash("coder", "deploy prod"))
	if !enf.Pending || enf.Approval.Review.Approvals != 2 || enf.Approval.EscalateAt().IsZero() {
		t.Fatalf("the request does not carry the review: %+v", enf.Approval)
	}
	if d := e.Gate.Decide(t.Context(), bash("coder", "sudo rm -rf /var/lib/x")); !d.Review.Passkey {
		t.Fatalf("a privileged ask under passkey: privileged: review %+v (tier %s)", d.Review, d.Classification.Tier)
	}
	if d := e.Gate.Decide(t.Context(), write("/w/a.txt")); !d.Review.IsZero() {
		t.Fatalf("a plain write needs only one person: %+v", d.Review)
	}
}

// TestPolicyReviewErrors: a review on a rule that does not ask, a quorum
// out of range, an escalation that could never happen or names nobody
// are refused where they are written.
func TestPolicyReviewErrors(t *testing.T) {
	for _, tc := range []struct{ rule, want string }{
		{`{tool: Bash, outcome: auto, approvals: 2}`, "policy.yaml:2:44: rules[0]: approvals, rejections, escalate and passkey are for a rule that asks a person"},
		{`{tool: Bash, outcome: ask, approvals: 0}`, "policy.yaml:2:43: rules[0].approvals: \"0\" is not a number of people from 1 to 10"},
		{`{tool: Bash, outcome: ask, approvals: 11}`, "rules[0].approvals: \"11\" is not a number of people from 1 to 10"},
		{`{tool: Bash, outcome: ask, timeout: 5m, escalate: [{after: 10m, to: [oncall]}]}`, "rules[0].escalate[0]: after 10m0s is not before the request's timeout 5m0s"},
		{`{tool: Bash, outcome: ask, escalate: [{after: 10m, to: [a]}, {after: 5m, to: [b]}]}`, "escalate[1]: after 5m0s must come later than the step before it"},
		{`{tool: Bash, outcome: ask, escalate: [{after: 10m}]}`, "rules[0].escalate[0]: a step needs to"},
		{`{tool: Bash, outcome: deny, passkey: true}`, "its outcome is deny"},
	} {
		_, err := gate.LoadPolicy("policy.yaml", []byte("rules:\n  - "+tc.rule+"\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.rule, err, tc.want)
		}
	}
}

// resolveEdit approves id as reviewer with the edited args.
func resolveEdit(e *gate.Enforcer, ap *airlock.Approval, reviewer string, args map[string]any) (airlock.Approval, error) {
	_, h := ap.Runs()
	return e.Resolve(context.Background(), airlock.Resolution{
		ApprovalID: ap.ID, Status: airlock.StatusApproved, ActionHash: h, Reviewer: airlock.Reviewer{Name: reviewer},
		Surface: airlock.SurfaceCLI,
	}, airlock.MustArgs(args))
}

// TestEditBeforeApprove: a reviewer's edit is decided again — into a
// denied action it is refused; into one that needs other reviewers it
// needs them — and once approved, what the waiting caller gets to run is
// the edit, never the original; the audit log has both hashes and the
// diff, and the Guard's Run hands the edited action to its function.
func TestEditBeforeApprove(t *testing.T) {
	e, db := reviewEnforcer(t)
	ctx := t.Context()
	enf := e.Check(ctx, write("/w/notes.txt"))
	if !enf.Pending {
		t.Fatalf("a write: %+v", enf)
	}
	ap := enf.Approval

	if _, err := resolveEdit(e, ap, "rev", map[string]any{"file_path": "/etc/passwd", "content": "x"}); airlock.ErrorCode(err) != airlock.EUNAUTHORIZED ||
		!strings.Contains(airlock.ErrorMessage(err), "denied by rule no-etc") {
		t.Fatalf("an edit into a denied write: %v", err)
	}
	if _, err := resolveEdit(e, ap, "rev", map[string]any{"file_path": "/w/notes.txt", "content": "x"}); airlock.ErrorCode(err) != airlock.EINVALID {
		t.Fatalf("an edit that changes nothing: %v, want invalid", err)
	}
	if _, err := e.Resolve(ctx, airlock.Resolution{ApprovalID: ap.ID, Status: airlock.StatusApproved, ActionHash: ap.ActionHash,
		Reviewer: airlock.Reviewer{Name: "rev"}, Surface: airlock.SurfaceCLI}, json.RawMessage(`{"file_path":"a","file_path":"b"}`)); airlock.ErrorCode(err) != airlock.EINVALID {
		t.Fatalf("edited args with a duplicate key: %v, want invalid", err)
	}

	got, err := resolveEdit(e, ap, "rev", map[string]any{"file_path": "/w/safe.txt", "content": "x"})
	if err != nil || got.Status != airlock.StatusApproved || got.Edit == nil {
		t.Fatalf("approve an edit: %+v, %v", got, err)
	}
	done, err := e.Await(ctx, ap.ID)
	if err != nil || !done.Allowed || done.Edit == nil {
		t.Fatalf("the waiting check: %+v, %v", done, err)
	}
	if run := done.ToRun(); !strings.Contains(string(run.Args), "/w/safe.txt") {
		t.Fatalf("what runs: %s, want the edit", run.Args)
	}
	evs, err := db.Events(ctx, airlock.EventFilter{ApprovalID: ap.ID, Kind: airlock.EventApprovalResolved})
	var ch airlock.ApprovalChange
	if err != nil || len(evs) != 1 || json.Unmarshal(evs[0].Payload, &ch) != nil || ch.Edit == nil || ch.Edit.From != ap.ActionHash ||
		ch.Edit.To != got.Edit.ActionHash || !strings.Contains(string(ch.Edit.Diff), `"/file_path"`) {
		t.Fatalf("the audit of the edit: %s", evs[0].Payload)
	}

	// An edit that raises the tier needs the reviewers its rule names.
	enf = e.Check(ctx, bash("coder", "ls build"))
	if _, err := resolveEdit(e, enf.Approval, "rev", map[string]any{"command": "rm -rf build"}); airlock.ErrorCode(err) != airlock.EUNAUTHORIZED ||
		!strings.Contains(airlock.ErrorMessage(err), "only lead may approve") {
		t.Fatalf("rev edits into what only lead approves: %v", err)
	}
	if got, err := resolveEdit(e, enf.Approval, "olive", map[string]any{"command": "rm -rf build"}); err != nil || got.Status != airlock.StatusApproved {
		t.Fatalf("the owner edits into a destructive command: %+v, %v", got.Status, err)
	}

	// The Guard hands the edited action to the function it runs.
	go func() {
		for {
			page, _ := db.FindApprovals(context.Background(), airlock.ApprovalFilter{Status: []airlock.ApprovalStatus{airlock.StatusPending}, Tool: "Write"})
			if len(page.Approvals) > 0 {
				resolveEdit(e, &page.Approvals[0], "rev2", map[string]any{"file_path": "/w/b.txt", "content": "edited"})
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	var ran airlock.Action
	if _, err := e.Run(ctx, write("/w/a.txt"), func(_ context.Context, a airlock.Action) error { ran = a; return nil }); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ran.Args), `"edited"`) {
		t.Fatalf("Run's function got %s, want the edit", ran.Args)
	}
}

// TestEditRefusedToHostThatCannotTakeIt: a caller whose host cannot run
// an edit (Codex) is refused with AIRLOCK-EDITED, the approval left
// uncollected; the original retried is refused again; the edited action
// collects it, once.
func TestEditRefusedToHostThatCannotTakeIt(t *testing.T) {
	e, _ := reviewEnforcer(t)
	ctx := gate.WithEditTaker(t.Context(), func(_, _ *airlock.Action) error {
		return errors.New("this host cannot change a call's input")
	})
	enf := e.Check(ctx, write("/w/notes.txt"))
	if _, err := resolveEdit(e, enf.Approval, "rev", map[string]any{"file_path": "/w/safe.txt", "content": "x"}); err != nil {
		t.Fatal(err)
	}
	done, err := e.Await(ctx, enf.Approval.ID)
	if err != nil || done.Allowed || done.Code != airlock.CodeEdited || !strings.Contains(done.Message, `"file_path":"/w/safe.txt"`) {
		t.Fatalf("a host that cannot take the edit: %+v, %v", done, err)
	}
	again := e.Check(ctx, write("/w/notes.txt"))
	if again.Allowed || again.Code != airlock.CodeEdited {
		t.Fatalf("the original retried: %+v", again)
	}
	edited := airlock.Action{Agent: "coder", Tool: "Write", Cwd: "/w", Args: airlock.MustArgs(map[string]any{"file_path": "/w/safe.txt", "content": "x"})}
	run := e.Check(ctx, edited)
	if !run.Allowed || run.Edit != nil || run.Approval == nil || run.Approval.ID != enf.Approval.ID {
		t.Fatalf("the edited action: %+v", run)
	}
	if twice := e.Check(ctx, edited); twice.Allowed {
		t.Fatalf("the edited action ran twice on one approval: %+v", twice)
	}
}

// TestQuorumHoldsTheCheck: a check of a rule with approvals: 2 waits
// through the first approval and is released by the second person's; the
// requester's approval is refused.
func TestQuorumHoldsTheCheck(t *testing.T) {
	e, db := reviewEnforcer(t)
	a := bash("coder", "deploy prod")
	a.RequestedBy = "rev"
	done := make(chan airlock.Enforcement, 1)
	go func() { done <- e.Enforce(context.Background(), a) }()
	var ap airlock.Approval
	for ap.ID == "" {
		page, err := db.FindApprovals(t.Context(), airlock.ApprovalFilter{Status: []airlock.ApprovalStatus{airlock.StatusPending}})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Approvals) > 0 {
			ap = page.Approvals[0]
		}
		time.Sleep(5 * time.Millisecond)
	}
	approve := func(who string) error {
		_, err := e.Resolve(t.Context(), airlock.Resolution{ApprovalID: ap.ID, Status: airlock.StatusApproved, ActionHash: ap.ActionHash,
			Reviewer: airlock.Reviewer{Name: who}, Surface: airlock.SurfaceCLI}, nil)
		return err
	}
	if err := approve("rev"); airlock.ErrorCode(err) != airlock.EUNAUTHORIZED {
		t.Fatalf("the requester's approval: %v, want unauthorized", err)
	}
	if err := approve("rev2"); err != nil {
		t.Fatal(err)
	}
	select {
	case enf := <-done:
		t.Fatalf("released after one of two approvals: %+v", enf)
	case <-time.After(200 * time.Millisecond):
	}
	if err := approve("olive"); err != nil {
		t.Fatal(err)
	}
	select {
	case enf := <-done:
		if !enf.Allowed || !strings.Contains(enf.Message, "approved by olive") {
			t.Fatalf("after the second approval: %+v", enf)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the second approval did not release the check")
	}
}
