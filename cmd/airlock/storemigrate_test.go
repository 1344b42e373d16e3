package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
	"github.com/airlock-dev/airlock/gate"
	"github.com/airlock-dev/airlock/notify"
	"github.com/airlock-dev/airlock/postgres"
	"github.com/airlock-dev/airlock/postgres/pgtest"
	"github.com/airlock-dev/airlock/sqlite"
)

// nopChannel delivers nothing; the tests only route to it.
type nopChannel struct{}

func (nopChannel) Deliver(context.Context, *notify.Delivery) (string, error) { return "", nil }

// opsRouter routes every notice to one webhook channel, "ops".
func opsRouter() airlock.Router {
	return notify.NewRouter([]*notify.Spec{{Name: "ops", Type: "webhook", Everyone: true, Channel: nopChannel{}}}, 0)
}

// migrateSource is a SQLite store built through the enforcer, closed.
type migrateSource struct {
	path    string
	secret  string           // of the reviewer token
	pending airlock.Approval // the deploy request, still pending
}

// newMigrateSource records auto, notify, ask and suggest decisions, an
// approved proposal and a pending request, tokens (one revoked), a routed
// notification delivered once, and an MCP server's pinned tools.
func newMigrateSource(t *testing.T) *migrateSource {
	t.Helper()
	ctx := context.Background()
	clock := airlocktest.NewClock()
	// The deploy request (10 minutes) stays pending on the target, whose
	// clock is the real one.
	clock.Advance(time.Now().Add(-time.Minute).Sub(clock.Now()))
	src := &migrateSource{path: filepath.Join(t.TempDir(), "airlock.db")}
	db := sqlite.NewDB(src.path)
	db.Clock = clock.Now
	if err := db.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetRouter(opsRouter())
	e := &gate.Enforcer{Gate: airlocktest.NewGate(t), Store: db}

	for _, tool := range []string{"read_file", "write_file", "delete_file"} { // auto, notify, deny
		if _, err := e.Run(ctx, airlocktest.Action(tool, "a.txt"), func(context.Context, airlock.Action) error { return nil }); err != nil &&
			tool != "delete_file" {
			t.Fatalf("%s: %v", tool, err)
		}
		clock.Advance(time.Second)
	}
	deploy := e.Check(ctx, airlocktest.Action("deploy", "app"))
	if !deploy.Pending || deploy.Approval == nil {
		t.Fatalf("deploy: %+v, want a pending request", deploy)
	}
	src.pending = *deploy.Approval
	propose := e.Check(ctx, airlocktest.Action("propose", "plan.md"))
	if propose.Approval == nil {
		t.Fatalf("propose: %+v, want a request", propose)
	}
	if _, err := db.ResolveApproval(ctx, airlock.Resolution{ApprovalID: propose.Approval.ID, Status: airlock.StatusApproved,
		ActionHash: propose.Approval.ActionHash, Reviewer: airlock.Reviewer{Name: "alice"}, Surface: airlock.SurfaceCLI}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)

	var secret airlock.Hash
	src.secret, secret = airlock.NewTokenSecret()
	if _, err := db.CreateToken(ctx, airlock.Token{ID: "tok-rev", Role: airlock.RoleReviewer, Name: "bob", CreatedBy: "admin:root"}, secret); err != nil {
		t.Fatal(err)
	}
	_, agentSecret := airlock.NewTokenSecret()
	if _, err := db.CreateToken(ctx, airlock.Token{ID: "tok-agent", Role: airlock.RoleAgent, Name: "agent-1", Agent: "agent-1",
		CreatedBy: "admin:root", Expires: clock.Now().Add(24 * time.Hour)}, agentSecret); err != nil {
		t.Fatal(err)
	}
	if _, err := db.RevokeToken(ctx, "tok-agent", "admin:root"); err != nil {
		t.Fatal(err)
	}

	defs := []airlock.ToolDefinition{
		{Name: "search", Definition: json.RawMessage(`{"name":"search","inputSchema":{"type":"object"}}`)},
		{Name: "fetch", Definition: json.RawMessage(`{"name":"fetch","inputSchema":{"type":"object"}}`)},
	}
	if _, err := e.ReleaseTools(ctx, "agent-1", "docs", defs); err != nil {
		t.Fatal(err)
	}

	claimed, err := db.ClaimNotifications(ctx, 1, time.Minute)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claim: %v, %d deliveries", err, len(claimed))
	}
	if err := db.MarkNotification(ctx, claimed[0].ID, airlock.Attempt{Ref: "msg-1"}); err != nil {
		t.Fatal(err)
	}
	if n, _ := db.Notifications(ctx, airlock.NotificationFilter{}); len(n) < 2 {
		t.Fatalf("%d deliveries, want several", len(n))
	}
	return src
}

// openTarget opens the migrated schema as a store.
func openTarget(t *testing.T, dsn, schema string) *postgres.DB {
	t.Helper()
	db := postgres.NewDB(dsn)
	db.Schema = schema
	if err := db.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// openSource opens the source read-only.
func openSource(t *testing.T, path string) *sqlite.DB {
	t.Helper()
	db := sqlite.NewDB(path)
	db.ReadOnly = true
	if err := db.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// sameReads reads everything both stores hold through the Store interface
// and reports the first difference.
func sameReads(t *testing.T, a, b airlock.Store) {
	t.Helper()
	ctx := context.Background()
	read := func(s airlock.Store) map[string]any {
		got := map[string]any{}
		var err error
		note := func(name string, v any, e error) {
			got[name] = v
			if e != nil && err == nil {
				err = fmt.Errorf("%s: %w", name, e)
			}
		}
		evs, e := s.Events(ctx, airlock.EventFilter{Limit: airlock.MaxPageSize})
		note("events", evs, e)
		aps, e := s.FindApprovals(ctx, airlock.ApprovalFilter{Oldest: true, Limit: 1000})
		note("approvals", aps, e)
		toks, e := s.Tokens(ctx)
		note("tokens", toks, e)
		trust, e := s.TrustSummaries(ctx, airlock.TrustFilter{})
		note("trust", trust, e)
		ns, e := s.Notifications(ctx, airlock.NotificationFilter{Limit: 1000})
		note("deliveries", ns, e)
		pins, e := s.ToolPins(ctx, "agent-1", "docs")
		note("tool pins", pins, e)
		rep, e := s.Verify(ctx)
		note("verify", rep, e)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	ga, gb := read(a), read(b)
	for k, va := range ga {
		if !reflect.DeepEqual(va, gb[k]) {
			t.Errorf("%s differ:\nsource %+v\ntarget %+v", k, va, gb[k])
		}
	}
}

func TestStoreMigrate(t *testing.T) {
	ctx := context.Background()
	src := newMigrateSource(t)
	dsn, schema := pgtest.NewSchema(t)

	code, stdout, stderr := runCLI(t, "store", "migrate", "--from", "sqlite://"+src.path, "--to", dsn, "--schema", schema)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	from := openSource(t, src.path)
	want := airlocktest.MustVerify(t, from)
	for _, s := range []string{
		fmt.Sprintf("copied %d events (head seq %d sha256:%s)", want.Events, want.HeadSeq, want.Head),
		"2 approvals", "2 tokens", "4 trust records", "4 deliveries", "2 tool pins", "the chain verifies on the target",
	} {
		if !strings.Contains(stdout, s) {
			t.Errorf("output does not say %q:\n%s", s, stdout)
		}
	}

	to := openTarget(t, dsn, schema)
	if got := airlocktest.MustVerify(t, to); got != want {
		t.Fatalf("target chain %+v, source %+v", got, want)
	}
	sameReads(t, from, to)
	for _, id := range []string{src.pending.ID} {
		a, err := from.Approval(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		b, err := to.Approval(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("approval %s:\nsource %+v\ntarget %+v", id, a, b)
		}
	}

	// Tokens authenticate by the same hash.
	tok, err := to.TokenBySecret(ctx, airlock.HashTokenSecret(src.secret))
	if err != nil || tok.ID != "tok-rev" || !tok.Live(time.Now()) {
		t.Errorf("TokenBySecret on the target: %+v, %v", tok, err)
	}

	// The target goes on where the source stopped: the chain continues,
	// new trust records and deliveries get fresh IDs, and the pending
	// request can be resolved.
	evs, err := to.Append(ctx, airlock.Record{Events: []airlock.Event{airlocktest.Event(airlock.EventDecision, "agent-1")}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := evs[0].Seq, want.HeadSeq+1; got != want {
		t.Errorf("appended seq %d, want %d", got, want)
	}
	if evs[0].Prev != want.Head {
		t.Errorf("appended prev %s, want the copied head %s", evs[0].Prev, want.Head)
	}
	to.SetRouter(opsRouter())
	e := &gate.Enforcer{Gate: airlocktest.NewGate(t), Store: to}
	if _, err := e.Run(ctx, airlocktest.Action("write_file", "b.txt"), func(context.Context, airlock.Action) error { return nil }); err != nil {
		t.Fatalf("notify on the target: %v", err)
	}
	before, _ := from.Notifications(ctx, airlock.NotificationFilter{})
	after, err := to.Notifications(ctx, airlock.NotificationFilter{})
	if err != nil || len(after) != len(before)+1 || after[0].ID <= before[0].ID {
		t.Errorf("the new delivery: %v; %d deliveries after %d", err, len(after), len(before))
	}
	resolved, err := to.ResolveApproval(ctx, airlock.Resolution{ApprovalID: src.pending.ID, Status: airlock.StatusApproved,
		ActionHash: src.pending.ActionHash, Reviewer: airlock.Reviewer{Name: "bob"}, Surface: airlock.SurfaceCLI})
	if err != nil || resolved.Status != airlock.StatusApproved {
		t.Errorf("resolve the pending request on the target: %+v, %v", resolved, err)
	}
	if rep := airlocktest.MustVerify(t, to); rep.HeadSeq <= want.HeadSeq+1 {
		t.Errorf("target head %d after new writes", rep.HeadSeq)
	}

	// Never merged: a second copy into the same schema is refused, and
	// changes nothing.
	head, _ := to.Head(ctx)
	wantRun(t, []string{"store", "migrate", "--from", src.path, "--to", dsn, "--schema", schema}, exitCheck,
		"already holds airlock data", "nothing copied")
	if got, _ := to.Head(ctx); got != head {
		t.Errorf("head %d after the refused copy, want %d", got, head)
	}
}

func TestStoreMigrateRefusesNonEmptyTarget(t *testing.T) {
	ctx := context.Background()
	src := newMigrateSource(t)
	dsn, schema := pgtest.NewSchema(t)
	to := openTarget(t, dsn, schema)
	if _, err := to.CreateToken(ctx, airlock.Token{ID: "tok-x", Role: airlock.RoleAdmin, Name: "root"}, airlock.HashTokenSecret("x")); err != nil {
		t.Fatal(err)
	}
	// A token and its audit event: the token table is named, whichever
	// comes first.
	wantRun(t, []string{"store", "migrate", "--from", src.path, "--to", dsn, "--schema", schema}, exitCheck,
		"already holds airlock data", "never merged")
	if got, _ := to.Head(ctx); got != 1 {
		t.Errorf("target head %d, want the 1 event it had", got)
	}
	if toks, _ := to.Tokens(ctx); len(toks) != 1 {
		t.Errorf("%d tokens on the target, want 1", len(toks))
	}
}

func TestStoreMigrateFailsMidway(t *testing.T) {
	ctx := context.Background()
	src := newMigrateSource(t)
	// The deliveries are copied after the events, approvals and tokens: a
	// value there that cannot be copied fails the copy midway.
	airlocktest.TamperSQLite(t, src.path, `UPDATE deliveries SET recipients = 'not json' WHERE id = (SELECT max(id) FROM deliveries)`)
	dsn, schema := pgtest.NewSchema(t)
	wantRun(t, []string{"store", "migrate", "--from", src.path, "--to", dsn, "--schema", schema}, exitCheck,
		"deliveries row", "recipients", "nothing copied")
	to := openTarget(t, dsn, schema)
	if got, _ := to.Head(ctx); got != 0 {
		t.Errorf("target head %d after a failed copy, want 0", got)
	}
	if page, _ := to.FindApprovals(ctx, airlock.ApprovalFilter{}); len(page.Approvals) != 0 {
		t.Errorf("%d approvals on the target after a failed copy", len(page.Approvals))
	}
	if toks, _ := to.Tokens(ctx); len(toks) != 0 {
		t.Errorf("%d tokens on the target after a failed copy", len(toks))
	}
}

func TestStoreMigrateColumnsMustMatch(t *testing.T) {
	src := newMigrateSource(t)
	airlocktest.TamperSQLite(t, src.path, `ALTER TABLE approvals ADD COLUMN extra TEXT NOT NULL DEFAULT 'x'`)
	dsn, schema := pgtest.NewSchema(t)
	wantRun(t, []string{"store", "migrate", "--from", src.path, "--to", dsn, "--schema", schema}, exitCheck,
		"the target's table approvals has no column extra", "nothing copied")
}

func TestStoreMigrateSource(t *testing.T) {
	dsn, schema := pgtest.NewSchema(t)
	newer := newMigrateSource(t)
	airlocktest.TamperSQLite(t, newer.path, `INSERT INTO schema_migrations (version, name, applied) VALUES (99, '0099_future', 0)`)
	broken := newMigrateSource(t)
	airlocktest.TamperSQLite(t, broken.path, `UPDATE events SET agent = 'mallory' WHERE seq = 2`)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"missing", []string{"--from", filepath.Join(t.TempDir(), "none.db"), "--to", dsn}, exitUsage, []string{"no such file"}},
		{"newer", []string{"--from", newer.path, "--to", dsn}, exitCheck, []string{"newer than this airlock knows"}},
		{"broken", []string{"--from", "sqlite://" + broken.path, "--to", dsn}, exitCheck, []string{"broken at seq 2", "nothing copied"}},
		{"no target", []string{"--from", newer.path}, exitUsage, []string{"needs --to"}},
		{"not postgres", []string{"--from", newer.path, "--to", "mysql://x"}, exitUsage, []string{"postgres:// URL"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantRun(t, append([]string{"store", "migrate", "--schema", schema}, tc.args...), tc.code, tc.want...)
		})
	}
	// Nothing reached the target.
	to := openTarget(t, dsn, schema)
	if got, _ := to.Head(context.Background()); got != 0 {
		t.Errorf("target head %d, want 0", got)
	}
}
