package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
	"github.com/airlock-dev/airlock/sqlite"
)

// testDB is a database built for the CLI's tests, closed. Its clock ran
// from ten hours ago to one hour ago:
//
//	seq 1–5  events of alice, bob, alice, bob and no agent, 10h to 6h ago
//	         (seq 4's payload holds <, & and U+2028, which JSON encoders
//	         like to escape)
//	seq 6    "delete": alice asks, destructive, 5h ago, pending
//	seq 7    "deploy": bob suggests, write, 3h ago, pending, a long summary
//	seq 8, 9 "push": alice asks, network-egress, 1h ago, approved by rev
type testDB struct {
	path      string
	events    []airlock.Event // the whole log
	approvals map[string]airlock.Approval
}

// longSummary is longer than the table shows.
var longSummary = "Bash `make deploy` " + strings.Repeat("with a very long explanation ", 5) + "END"

func newTestDB(t *testing.T) *testDB {
	t.Helper()
	ctx := context.Background()
	clock := airlocktest.NewClock()
	clock.Advance(time.Now().Add(-10 * time.Hour).Sub(clock.Now()))
	td := &testDB{path: filepath.Join(t.TempDir(), "airlock.db"), approvals: map[string]airlock.Approval{}}
	db := sqlite.NewDB(td.path)
	db.Clock = clock.Now
	if err := db.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	for i, kind := range []string{airlock.EventDecision, airlock.EventDecision, airlock.EventActionExecuted,
		airlock.EventDecision, airlock.EventPolicyChanged} {
		e := airlocktest.Event(kind, []string{"alice", "bob"}[i%2])
		switch i {
		case 3:
			e.Payload = json.RawMessage("{\"command\":\"a && b <c>\u2028\"}")
		case 4:
			e.Agent, e.TraceID = "", ""
		}
		if _, err := db.Append(ctx, airlock.Record{Events: []airlock.Event{e}}); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Hour)
	}
	request := func(name string, ap airlock.Approval) airlock.Approval {
		got, _, err := db.RequestApproval(ctx, ap, airlock.Record{})
		if err != nil {
			t.Fatal(err)
		}
		td.approvals[name] = got
		return got
	}
	del := airlocktest.NewApproval("alice", "rm -rf build", airlock.Ask, 100*time.Hour)
	del.Tier, del.Class, del.Capability = airlock.TierDestructive, "fs.delete", "fs.delete"
	request("delete", del)
	clock.Advance(2 * time.Hour)
	deploy := airlocktest.NewApproval("bob", "make deploy", airlock.Suggest, 100*time.Hour)
	deploy.Summary = longSummary
	deploy.Detail.Decision = "outcome:     suggest\nrule:        deploys (policy.yaml:7:5)\n"
	request("deploy", deploy)
	clock.Advance(2 * time.Hour)
	push := airlocktest.NewApproval("alice", "git push", airlock.Ask, 100*time.Hour)
	push.Tier, push.Class = airlock.TierNetworkEgress, "git.push"
	push = request("push", push)
	approved, err := db.ResolveApproval(ctx, airlocktest.Approve(push))
	if err != nil {
		t.Fatal(err)
	}
	td.approvals["push"] = approved

	if td.events, err = db.Events(ctx, airlock.EventFilter{Limit: airlock.MaxPageSize}); err != nil {
		t.Fatal(err)
	}
	if got, want := len(td.events), 9; got != want {
		t.Fatalf("the test database has %d events, want %d", got, want)
	}
	return td
}

// tamper changes the database behind the store's back.
func tamper(t *testing.T, path string, stmts ...string) {
	t.Helper()
	conn, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, s := range stmts {
		if _, err := conn.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func TestAuditVerify(t *testing.T) {
	td := newTestDB(t)
	head := td.events[len(td.events)-1]

	code, stdout, stderr := runCLI(t, "audit", "verify", "--db", td.path)
	if code != exitOK {
		t.Fatalf("exit %d: %s%s", code, stdout, stderr)
	}
	if got, want := stdout, fmt.Sprintf("ok: 9 events, head seq 9 sha256:%s\n", head.Hash); got != want {
		t.Errorf("verify printed %q, want %q", got, want)
	}

	code, stdout, stderr = runCLI(t, "audit", "verify", "--db", td.path, "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s%s", code, stdout, stderr)
	}
	var rep airlock.ChainReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	if got, want := rep, (airlock.ChainReport{Events: 9, HeadSeq: 9, Head: head.Hash}); got != want {
		t.Errorf("report = %+v, want %+v", got, want)
	}
}

func TestAuditVerifyEmpty(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.db")
	db := sqlite.NewDB(path)
	if err := db.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	db.Close()
	code, stdout, stderr := runCLI(t, "audit", "verify", "--db", path)
	if got, want := code, exitOK; got != want {
		t.Fatalf("exit %d, want %d: %s%s", got, want, stdout, stderr)
	}
	if got, want := stdout, "ok: 0 events (the audit log is empty)\n"; got != want {
		t.Errorf("verify printed %q, want %q", got, want)
	}
}

func TestAuditVerifyTampered(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stmts []string
		want  string
	}{
		{"edited", []string{`DROP TRIGGER events_no_update`, `UPDATE events SET payload = X'7B226E223A327D' WHERE seq = 3`},
			"audit log broken at seq 3: contents do not match its hash (edited) (2 events before it verify)\n"},
		{"deleted", []string{`DROP TRIGGER events_no_delete`, `DELETE FROM events WHERE seq = 5`},
			"audit log broken at seq 5: missing: the next event has seq 6 (4 events before it verify)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			td := newTestDB(t)
			tamper(t, td.path, tc.stmts...)
			code, stdout, stderr := runCLI(t, "audit", "verify", "--db", td.path)
			if got, want := code, exitCheck; got != want {
				t.Errorf("exit %d, want %d", got, want)
			}
			if got, want := stdout+stderr, tc.want; got != want {
				t.Errorf("verify printed %q, want %q", got, want)
			}
		})
	}

	td := newTestDB(t)
	tamper(t, td.path, `DROP TRIGGER events_no_update`, `UPDATE events SET payload = X'7B7D' WHERE seq = 3`)
	code, stdout, _ := runCLI(t, "audit", "verify", "--db", td.path, "--json")
	if got, want := code, exitCheck; got != want {
		t.Errorf("exit %d, want %d", got, want)
	}
	var rep airlock.ChainReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	if got, want := rep.FirstBad, int64(3); got != want {
		t.Errorf("first_bad = %d, want %d (%+v)", got, want, rep)
	}
}

// decodeLines decodes JSON Lines of events.
func decodeLines(t *testing.T, out string) []airlock.Event {
	t.Helper()
	var evs []airlock.Event
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e airlock.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %d is not an event: %v\n%s", len(evs)+1, err, sc.Text())
		}
		evs = append(evs, e)
	}
	return evs
}

func seqs(evs []airlock.Event) []int64 {
	var out []int64
	for _, e := range evs {
		out = append(out, e.Seq)
	}
	return out
}

func TestAuditExport(t *testing.T) {
	td := newTestDB(t)
	at := func(seq int) string { return td.events[seq-1].Time.Format(time.RFC3339Nano) }
	for _, tc := range []struct {
		name string
		args []string
		want []int64
	}{
		{"all", nil, []int64{1, 2, 3, 4, 5, 6, 7, 8, 9}},
		{"after", []string{"--after", "6"}, []int64{7, 8, 9}},
		{"since a time", []string{"--since", at(3)}, []int64{3, 4, 5, 6, 7, 8, 9}},
		{"since a duration", []string{"--since", "6h30m"}, []int64{5, 6, 7, 8, 9}},
		{"agent", []string{"--agent", "bob"}, []int64{2, 4, 7}},
		{"kind", []string{"--kind", airlock.EventApprovalRequested}, []int64{6, 7, 8}},
		{"trace", []string{"--trace", "trace-alice"}, []int64{6, 8, 9}},
		{"combined", []string{"--after", "2", "--agent", "alice"}, []int64{3, 6, 8, 9}},
		{"nothing", []string{"--after", "9"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, append([]string{"audit", "export", "--db", td.path}, tc.args...)...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if got, want := strings.Count(stdout, "\n"), len(tc.want); got != want {
				t.Errorf("%d lines, want %d", got, want)
			}
			evs := decodeLines(t, stdout)
			if got, want := seqs(evs), tc.want; !slices.Equal(got, want) {
				t.Fatalf("exported seqs %v, want %v", got, want)
			}
			for _, e := range evs {
				want := td.events[e.Seq-1]
				if e.Hash != want.Hash || e.Prev != want.Prev || !e.Time.Equal(want.Time) ||
					string(e.Payload) != string(want.Payload) || e.Kind != want.Kind || e.Agent != want.Agent ||
					e.TraceID != want.TraceID || e.Outcome != want.Outcome || e.ApprovalID != want.ApprovalID {
					t.Errorf("exported %+v\nwant     %+v", e, want)
				}
			}
		})
	}

	// The whole export re-verifies: every byte the chain covers survived.
	_, stdout, _ := runCLI(t, "audit", "export", "--db", td.path)
	var v airlock.ChainVerifier
	for _, e := range decodeLines(t, stdout) {
		if err := v.Check(&e); err != nil {
			t.Fatalf("the export does not verify: %v", err)
		}
	}
	if got, want := v.Checked(), int64(9); got != want {
		t.Errorf("verified %d exported events, want %d", got, want)
	}
}

func TestAuditExportToFile(t *testing.T) {
	td := newTestDB(t)
	out := filepath.Join(t.TempDir(), "audit.jsonl")
	code, stdout, stderr := runCLI(t, "audit", "export", "--db", td.path, "--kind", "approval.resolved", "-o", out)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got, want := stdout, "wrote 1 event to "+out+"\n"; got != want {
		t.Errorf("printed %q, want %q", got, want)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := seqs(decodeLines(t, string(b))), []int64{9}; !slices.Equal(got, want) {
		t.Errorf("file holds seqs %v, want %v", got, want)
	}

	code, _, stderr = runCLI(t, "audit", "export", "--db", td.path, "-o", td.path)
	if got, want := code, exitUsage; got != want {
		t.Errorf("exporting over the database: exit %d, want %d", got, want)
	}
	if !strings.Contains(stderr, "is the database itself") {
		t.Errorf("stderr = %q", stderr)
	}
}

func TestAuditExportPages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.db")
	db := sqlite.NewDB(path)
	ctx := context.Background()
	if err := db.Open(ctx); err != nil {
		t.Fatal(err)
	}
	const n = 2*airlock.MaxPageSize + 500
	var rec airlock.Record
	for range n {
		rec.Events = append(rec.Events, airlocktest.Event(airlock.EventDecision, "a"))
	}
	if _, err := db.Append(ctx, rec); err != nil {
		t.Fatal(err)
	}
	db.Close()

	for _, tc := range []struct {
		name        string
		args        []string
		first, last int64
	}{
		{"all", nil, 1, n},
		{"exactly one page", []string{"--after", fmt.Sprint(n - airlock.MaxPageSize)}, n - airlock.MaxPageSize + 1, n},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, append([]string{"audit", "export", "--db", path}, tc.args...)...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			got := seqs(decodeLines(t, stdout))
			var want []int64
			for s := tc.first; s <= tc.last; s++ {
				want = append(want, s)
			}
			if !slices.Equal(got, want) {
				t.Errorf("exported %d events (%d..%d), want %d..%d", len(got), got[0], got[len(got)-1], tc.first, tc.last)
			}
		})
	}
}

// TestDatabaseErrors covers what every command does with a bad --db, and
// the usage errors of the audit commands.
func TestDatabaseErrors(t *testing.T) {
	t.Setenv(envToken, "")
	t.Setenv(envServer, "")
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.db")
	empty := filepath.Join(dir, "empty.db")
	text := filepath.Join(dir, "notes.txt")
	for file, content := range map[string]string{empty: "", text: "not a database, just notes\n"} {
		if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	td := newTestDB(t)
	newer := newTestDB(t)
	tamper(t, newer.path, `INSERT INTO schema_migrations (version, name, applied) VALUES (9999, '9999_future', 0)`)

	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		contains []string
	}{
		// Without --db they ask the server, which needs a token.
		{"verify without --db", []string{"audit", "verify"}, exitUsage,
			[]string{"airlock audit verify needs a token for the Airlock server", "Or give --db FILE"}},
		{"export without --db", []string{"audit", "export"}, exitUsage,
			[]string{"airlock audit export needs a token for the Airlock server", "Or give --db FILE"}},
		{"list without --db", []string{"approvals", "list"}, exitUsage,
			[]string{"airlock approvals list needs a token for the Airlock server", "Or give --db FILE"}},
		{"show without --db", []string{"approvals", "show", "x"}, exitUsage,
			[]string{"airlock approvals show needs a token for the Airlock server", "Or give --db FILE"}},
		{"missing file", []string{"audit", "verify", "--db", missing}, exitUsage,
			[]string{"--db " + missing + ": no such file", "does not create a database"}},
		{"missing file, list", []string{"approvals", "list", "--db", missing}, exitUsage, []string{"no such file"}},
		{"a directory", []string{"audit", "verify", "--db", dir}, exitUsage, []string{"is a directory"}},
		{"an empty file", []string{"audit", "verify", "--db", empty}, exitCheck, []string{"empty.db is empty, not an airlock database"}},
		{"not a database", []string{"audit", "export", "--db", text}, exitCheck, []string{"notes.txt is not a SQLite database"}},
		{"newer schema", []string{"audit", "verify", "--db", newer.path}, exitCheck,
			[]string{"has schema version 9999, newer than this airlock knows"}},
		{"an argument", []string{"audit", "verify", "--db", td.path, "extra"}, exitUsage, []string{"takes no arguments"}},
		{"bad --since", []string{"audit", "export", "--db", td.path, "--since", "yesterday"}, exitUsage,
			[]string{`--since "yesterday": want an RFC 3339 time`, "or a duration meaning that long ago (24h, 90m)"}},
		{"negative --since", []string{"audit", "export", "--db", td.path, "--since", "-1h"}, exitUsage, []string{`--since "-1h"`}},
		{"bad --after", []string{"audit", "export", "--db", td.path, "--after", "-2"}, exitUsage, []string{"--after -2: want a sequence number"}},
		{"--after not a number", []string{"audit", "export", "--db", td.path, "--after", "x"}, exitUsage, []string{`invalid argument "x" for "--after"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantRun(t, tc.args, tc.code, tc.contains...)
		})
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("a command created %s (stat: %v)", missing, err)
	}
	if fi, err := os.Stat(empty); err != nil || fi.Size() != 0 {
		t.Errorf("a command wrote to the empty file (stat: %v)", err)
	}
}

func TestHelpHasExamples(t *testing.T) {
	var walk func(path []string)
	root := newRootCmd()
	walk = func(path []string) {
		cmd, _, err := root.Find(path)
		if err != nil {
			t.Fatal(err)
		}
		if cmd.Example == "" {
			t.Errorf("%s has no example", cmd.CommandPath())
		}
		for _, c := range cmd.Commands() {
			walk(append(slices.Clone(path), c.Name()))
		}
	}
	for _, top := range []string{"audit", "approvals", "check", "trust", "token", "policy"} {
		walk([]string{top})
		code, stdout, _ := runCLI(t, top, "--help")
		if code != exitOK || !strings.Contains(stdout, "Examples:") {
			t.Errorf("airlock %s --help: exit %d\n%s", top, code, stdout)
		}
	}
}
