package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/gate"
	"github.com/airlock-dev/airlock/policywatch"
	"github.com/airlock-dev/airlock/sqlite"
)

const (
	orgPolicy = `name: org
layer: organisation
floors:
  tiers: {destructive: ask}
`
	projectAuto = `name: project
rules:
  - {id: writes, tool: write_file, outcome: auto}
tests:
  - name: writes run
    action: {agent: a, tool: write_file, args: {path: x}}
    expect: auto
`
	projectDeny = `name: project
rules:
  - {id: writes, tool: write_file, outcome: deny}
`
	// projectBroken has a YAML syntax error on line 3.
	projectBroken = `name: project
rules:
  - {id: writes, tool: write_file, outcome: deny
`
	// projectUnknownField loads nowhere: a misspelt field.
	projectUnknownField = `name: project
rules:
  - {id: writes, tool: write_file, outcom: deny}
`
	// projectLoosens passes its own test alone, but not under org's floor.
	projectLoosens = `name: project
rules:
  - {id: deletes, tool: delete_file, outcome: auto}
tests:
  - name: deletes run
    action: {agent: a, tool: delete_file, args: {path: x}}
    expect: auto
`
	// orgBelow puts org under the project layer: out of order.
	orgBelow = `name: org
layer: agent
`
)

// policyFiles writes org.yaml and project.yaml in a new directory.
func policyFiles(t *testing.T) (org, project string) {
	t.Helper()
	dir := t.TempDir()
	org, project = filepath.Join(dir, "org.yaml"), filepath.Join(dir, "project.yaml")
	writeFile(t, org, orgPolicy)
	writeFile(t, project, projectAuto)
	return org, project
}

// writeFile replaces a file's contents atomically (a temporary file, then
// rename, as editors and deployment tools do) and moves its modification
// time on, so that a poll sees the change even within the clock's
// granularity.
func writeFile(t *testing.T, path, content string) {
	t.Helper()
	var mtime time.Time
	if fi, err := os.Stat(path); err == nil {
		mtime = fi.ModTime()
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(tmp); err == nil && !fi.ModTime().After(mtime) {
		next := mtime.Add(time.Second)
		if err := os.Chtimes(tmp, next, next); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func openTestDB(t *testing.T) *sqlite.DB {
	t.Helper()
	db := sqlite.NewDB(filepath.Join(t.TempDir(), "a.db"))
	if err := db.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// policyChanges reads back every policy.changed event.
func policyChanges(t *testing.T, log airlock.AuditLog) []airlock.PolicyChange {
	t.Helper()
	events, err := log.Events(context.Background(), airlock.EventFilter{Kind: airlock.EventPolicyChanged})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]airlock.PolicyChange, len(events))
	for i, e := range events {
		if err := json.Unmarshal(e.Payload, &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func sourceOf(t *testing.T, name, file string, layer airlock.Layer) airlock.PolicySource {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return airlock.PolicySource{Name: name, File: file, Layer: layer, SHA256: policywatch.Hash(b)}
}

// writeOutcome decides a write_file action.
func writeOutcome(g *gate.Gate) airlock.Outcome {
	return g.Decide(context.Background(), airlock.Action{Agent: "a", Tool: "write_file", Args: json.RawMessage(`{"path":"x"}`)}).Outcome
}

// startWatcher starts a watcher on the files with a logger writing to the
// returned buffer.
func startWatcher(t *testing.T, log airlock.AuditLog, files ...string) (*policywatch.Watcher, *syncBuffer) {
	t.Helper()
	buf := &syncBuffer{}
	w := &policywatch.Watcher{Files: files, Log: log, Logger: slog.New(slog.NewTextHandler(buf, nil))}
	if _, err := w.Start(context.Background()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	return w, buf
}

func TestWatcherStart(t *testing.T) {
	db := openTestDB(t)
	org, project := policyFiles(t)
	w, _ := startWatcher(t, db, org, project)

	if got, want := writeOutcome(w.Gate), airlock.Auto; got != want {
		t.Errorf("write_file: got %s, want %s", got, want)
	}
	got := policyChanges(t, db)
	want := []airlock.PolicyChange{{Reason: "start", Layers: []airlock.PolicySource{
		sourceOf(t, "org", org, airlock.LayerOrganisation),
		sourceOf(t, "project", project, airlock.LayerProject),
	}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("events:\ngot  %+v\nwant %+v", got, want)
	}
}

func TestWatcherStartStarter(t *testing.T) {
	db := openTestDB(t)
	w, _ := startWatcher(t, db)
	if got := w.Gate.Layers(); len(got) != 1 || got[0] != gate.StarterPolicy() {
		t.Fatalf("layers: got %v, want the starter policy", got)
	}
	changed, err := w.Reload(context.Background(), "SIGHUP")
	if changed || err != nil {
		t.Errorf("Reload: got %v, %v; want false, nil", changed, err)
	}
	got := policyChanges(t, db)
	want := []airlock.PolicyChange{{Reason: "start", Layers: []airlock.PolicySource{{
		Name: "starter", File: gate.StarterPolicyFile, Layer: airlock.LayerOrganisation, SHA256: policywatch.Hash(gate.StarterPolicySource),
	}}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("events:\ngot  %+v\nwant %+v", got, want)
	}
}

func TestWatcherStartRefused(t *testing.T) {
	for _, tc := range []struct {
		name, org, project string
		want               []string
	}{
		{"syntax error", orgPolicy, projectBroken, []string{"project.yaml:3:"}},
		{"every file's problems", "name: org\nlayr: organisation\n", projectUnknownField,
			[]string{`org.yaml:2:1: unknown field "layr"`, `project.yaml:3:36: unknown field "outcom"`}},
		{"stack tests fail", orgPolicy, projectLoosens, []string{`project.yaml:5:5: test "deletes run" fails`}},
		{"layers out of order", orgBelow, projectAuto, []string{"cannot come after"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := openTestDB(t)
			org, project := policyFiles(t)
			writeFile(t, org, tc.org)
			writeFile(t, project, tc.project)
			w := &policywatch.Watcher{Files: []string{org, project}, Log: db}
			_, err := w.Start(context.Background())
			if err == nil {
				t.Fatal("Start succeeded")
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error does not contain %q:\n%v", want, err)
				}
			}
			if w.Gate != nil {
				t.Error("w.Gate set")
			}
			if got := policyChanges(t, db); len(got) != 0 {
				t.Errorf("audited %+v", got)
			}
		})
	}
}

func TestWatcherReload(t *testing.T) {
	db := openTestDB(t)
	org, project := policyFiles(t)
	w, logs := startWatcher(t, db, org, project)
	before := []airlock.PolicySource{
		sourceOf(t, "org", org, airlock.LayerOrganisation),
		sourceOf(t, "project", project, airlock.LayerProject),
	}

	writeFile(t, project, projectDeny)
	changed, err := w.Reload(context.Background(), "file changed")
	if !changed || err != nil {
		t.Fatalf("Reload: got %v, %v; want true, nil", changed, err)
	}
	if got, want := writeOutcome(w.Gate), airlock.Deny; got != want {
		t.Errorf("write_file: got %s, want %s", got, want)
	}
	events := policyChanges(t, db)
	if len(events) != 2 {
		t.Fatalf("got %d events, want 2", len(events))
	}
	want := airlock.PolicyChange{Reason: "file changed", Previous: before, Layers: []airlock.PolicySource{
		before[0], sourceOf(t, "project", project, airlock.LayerProject),
	}}
	if got := events[1]; !reflect.DeepEqual(got, want) {
		t.Errorf("event:\ngot  %+v\nwant %+v", got, want)
	}
	if got := logs.String(); !strings.Contains(got, "policy stack reloaded") {
		t.Errorf("log: %s", got)
	}
}

func TestWatcherReloadUnchanged(t *testing.T) {
	db := openTestDB(t)
	org, project := policyFiles(t)
	w, _ := startWatcher(t, db, org, project)

	writeFile(t, project, projectAuto) // the same bytes, a new modification time
	for _, reason := range []string{"file changed", "SIGHUP"} {
		changed, err := w.Reload(context.Background(), reason)
		if changed || err != nil {
			t.Errorf("Reload(%s): got %v, %v; want false, nil", reason, changed, err)
		}
	}
	if got := policyChanges(t, db); len(got) != 1 {
		t.Errorf("got %d events, want only the start", len(got))
	}
}

func TestWatcherReloadRefused(t *testing.T) {
	for _, tc := range []struct {
		name, file, content string
		want                []string // in the log
	}{
		{"syntax error", "project", projectBroken, []string{"project.yaml:3:"}},
		{"unknown field", "project", projectUnknownField, []string{`project.yaml:3:36: unknown field \"outcom\"`}},
		{"stack tests fail", "project", projectLoosens, []string{`project.yaml:5:5: test \"deletes run\" fails`}},
		{"layers out of order", "org", orgBelow, []string{"cannot come after"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := openTestDB(t)
			org, project := policyFiles(t)
			w, logs := startWatcher(t, db, org, project)
			file := map[string]string{"org": org, "project": project}[tc.file]

			writeFile(t, file, tc.content)
			changed, err := w.Reload(context.Background(), "file changed")
			if changed || err == nil {
				t.Fatalf("Reload: got %v, %v; want false and an error", changed, err)
			}
			if got, want := writeOutcome(w.Gate), airlock.Auto; got != want {
				t.Errorf("the previous stack is not in force: write_file got %s, want %s", got, want)
			}
			if got := policyChanges(t, db); len(got) != 1 {
				t.Errorf("got %d events, want only the start", len(got))
			}
			for _, want := range append(tc.want, "level=ERROR", "the previous policies stay in force", "reason=\"file changed\"") {
				if !strings.Contains(logs.String(), want) {
					t.Errorf("the log does not contain %q:\n%s", want, logs)
				}
			}

			// Fixed, the file reloads.
			writeFile(t, project, projectDeny)
			writeFile(t, org, orgPolicy)
			if changed, err := w.Reload(context.Background(), "file changed"); !changed || err != nil {
				t.Fatalf("Reload after the fix: got %v, %v", changed, err)
			}
			if got, want := writeOutcome(w.Gate), airlock.Deny; got != want {
				t.Errorf("after the fix: write_file got %s, want %s", got, want)
			}
		})
	}
}

func TestWatcherReloadMissingFile(t *testing.T) {
	db := openTestDB(t)
	org, project := policyFiles(t)
	w, logs := startWatcher(t, db, org, project)
	if err := os.Remove(project); err != nil {
		t.Fatal(err)
	}
	if changed, err := w.Reload(context.Background(), "file changed"); changed || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Reload: got %v, %v; want false, not exist", changed, err)
	}
	if got, want := writeOutcome(w.Gate), airlock.Auto; got != want {
		t.Errorf("write_file: got %s, want %s", got, want)
	}
	if !strings.Contains(logs.String(), "project.yaml: no such file") {
		t.Errorf("log:\n%s", logs)
	}
}

// TestWatcherAuditFails checks that a change that cannot be audited does
// not take effect.
func TestWatcherAuditFails(t *testing.T) {
	log := &memLog{}
	org, project := policyFiles(t)
	w, logs := startWatcher(t, log, org, project)

	log.setFail(errors.New("disk full"))
	writeFile(t, project, projectDeny)
	changed, err := w.Reload(context.Background(), "file changed")
	if changed || err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Reload: got %v, %v; want false and the audit error", changed, err)
	}
	if got, want := writeOutcome(w.Gate), airlock.Auto; got != want {
		t.Errorf("the change took effect unaudited: write_file got %s, want %s", got, want)
	}
	if !strings.Contains(logs.String(), "disk full") {
		t.Errorf("log:\n%s", logs)
	}

	// The log back, the same files reload: the failed attempt changed nothing.
	log.setFail(nil)
	if changed, err := w.Reload(context.Background(), "SIGHUP"); !changed || err != nil {
		t.Fatalf("Reload: got %v, %v; want true, nil", changed, err)
	}
	if got, want := writeOutcome(w.Gate), airlock.Deny; got != want {
		t.Errorf("write_file: got %s, want %s", got, want)
	}
	if got := log.changes(t); len(got) != 2 || got[1].Reason != "SIGHUP" {
		t.Errorf("events: %+v", got)
	}

	// Nothing starts unaudited either.
	log.setFail(errors.New("disk full"))
	w2 := &policywatch.Watcher{Files: []string{org, project}, Log: log}
	if _, err := w2.Start(context.Background()); err == nil || w2.Gate != nil {
		t.Errorf("Start: got %v, gate %v; want the audit error", err, w2.Gate)
	}
}

func TestWatcherRunSIGHUP(t *testing.T) {
	log := &memLog{}
	org, project := policyFiles(t)
	w, _ := startWatcher(t, log, org, project)
	w.Interval = time.Hour // only the signal can trigger a reload

	ctx, cancel := context.WithCancel(context.Background())
	hup := make(chan os.Signal, 1)
	done := make(chan struct{})
	go func() { defer close(done); w.Run(ctx, hup) }()

	writeFile(t, project, projectDeny)
	hup <- syscall.SIGHUP
	waitFor(t, func() bool { return writeOutcome(w.Gate) == airlock.Deny })
	cancel()
	<-done
	if got := log.changes(t); len(got) != 2 || got[1].Reason != "SIGHUP" {
		t.Errorf("events: %+v", got)
	}
}

func TestWatcherRunPoll(t *testing.T) {
	log := &memLog{}
	org, project := policyFiles(t)
	w, logs := startWatcher(t, log, org, project)
	w.Interval = 5 * time.Millisecond

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); w.Run(ctx, nil) }()

	writeFile(t, project, projectDeny)
	waitFor(t, func() bool { return writeOutcome(w.Gate) == airlock.Deny })

	// A broken edit is reported once, not at every poll, and changes nothing.
	writeFile(t, project, projectBroken)
	waitFor(t, func() bool { return strings.Contains(logs.String(), "policy reload refused") })
	time.Sleep(50 * time.Millisecond) // ten polls
	cancel()
	<-done
	if got, want := strings.Count(logs.String(), "policy reload refused"), 1; got != want {
		t.Errorf("the broken file was reported %d times, want %d:\n%s", got, want, logs)
	}
	if got, want := writeOutcome(w.Gate), airlock.Deny; got != want {
		t.Errorf("write_file: got %s, want %s", got, want)
	}
	if got := log.changes(t); len(got) != 2 || got[1].Reason != "file changed" {
		t.Errorf("events: %+v", got)
	}
}

// waitFor polls cond until it holds, failing the test after 10s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// memLog is an audit log in memory whose Append can be made to fail. It
// implements only what the watcher and the test use: the embedded
// interface, nil, panics on the rest.
type memLog struct {
	airlock.AuditLog
	mu     sync.Mutex
	events []airlock.Event
	fail   error
}

var _ airlock.AuditLog = (*memLog)(nil)

func (l *memLog) setFail(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.fail = err
}

func (l *memLog) Append(_ context.Context, rec airlock.Record) ([]airlock.Event, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fail != nil {
		return nil, airlock.Errorf(airlock.EUNAVAILABLE, "append: %v", l.fail)
	}
	if err := rec.Prepare(); err != nil {
		return nil, err
	}
	for _, e := range rec.Events {
		e.Seq = int64(len(l.events) + 1)
		l.events = append(l.events, e)
	}
	return rec.Events, nil
}

func (l *memLog) Events(_ context.Context, f airlock.EventFilter) ([]airlock.Event, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []airlock.Event
	for _, e := range l.events {
		if e.Seq > f.AfterSeq && (f.Kind == "" || e.Kind == f.Kind) {
			out = append(out, e)
		}
	}
	return out, nil
}

func (l *memLog) changes(t *testing.T) []airlock.PolicyChange { t.Helper(); return policyChanges(t, l) }

// syncBuffer is a bytes.Buffer safe for a logger in one goroutine and a
// test reading it in another.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// policyRefusals reads back every policy.reload_refused event.
func policyRefusals(t *testing.T, log airlock.AuditLog) []airlock.PolicyReloadRefusal {
	t.Helper()
	events, err := log.Events(context.Background(), airlock.EventFilter{Kind: airlock.EventPolicyReloadRefused})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]airlock.PolicyReloadRefusal, len(events))
	for i, e := range events {
		if err := json.Unmarshal(e.Payload, &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// gathered returns the value of the watcher's metric name in reg.
func gathered(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		m := mf.GetMetric()[0]
		if c := m.GetCounter(); c != nil {
			return c.GetValue()
		}
		return m.GetGauge().GetValue()
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// TestWatcherRefusalVisible checks that a refused reload is seen beyond the
// log: audited with the errors and the hashes of the files on disk and in
// force, counted, and the watcher stale, until a reload succeeds.
func TestWatcherRefusalVisible(t *testing.T) {
	db := openTestDB(t)
	org, project := policyFiles(t)
	reg := prometheus.NewRegistry()
	refusedAt := time.Date(2026, 11, 28, 9, 30, 0, 0, time.UTC)
	w := &policywatch.Watcher{Files: []string{org, project}, Log: db, Metrics: reg, Now: func() time.Time { return refusedAt }}
	if _, err := w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	inForce := []airlock.PolicySource{sourceOf(t, "org", org, airlock.LayerOrganisation), sourceOf(t, "project", project, airlock.LayerProject)}
	if st := w.State(); st.Stale != nil || !reflect.DeepEqual(st.InForce, inForce) {
		t.Fatalf("after Start: %+v, want the stack in force and not stale", st)
	}
	if got := gathered(t, reg, "airlock_policy_stale"); got != 0 {
		t.Errorf("airlock_policy_stale %v after Start, want 0", got)
	}

	writeFile(t, project, projectUnknownField)
	if _, err := w.Reload(context.Background(), "SIGHUP"); err == nil {
		t.Fatal("Reload of a broken file: no error")
	}
	onDisk := []airlock.PolicyFileOnDisk{{File: org, SHA256: inForce[0].SHA256}, {File: project, SHA256: policywatch.Hash([]byte(projectUnknownField))}}
	wantErrors := []string{`project.yaml:3:36: unknown field "outcom"`}

	// The audit log.
	refusals := policyRefusals(t, db)
	if len(refusals) != 1 {
		t.Fatalf("%d policy.reload_refused events, want 1", len(refusals))
	}
	r := refusals[0]
	if r.Reason != "SIGHUP" || !reflect.DeepEqual(r.Files, onDisk) || !reflect.DeepEqual(r.InForce, inForce) {
		t.Errorf("event %+v\nwant files %+v, in force %+v", r, onDisk, inForce)
	}
	if len(r.Errors) != 1 || !strings.Contains(r.Errors[0], wantErrors[0]) {
		t.Errorf("event errors %q, want one containing %q", r.Errors, wantErrors[0])
	}
	// The state /readyz and policy show report.
	st := w.State()
	if st.Stale == nil {
		t.Fatal("not stale after a refused reload")
	}
	if s := st.Stale; !s.Refused.Equal(refusedAt) || s.Reason != "SIGHUP" || !reflect.DeepEqual(s.Errors, r.Errors) ||
		!reflect.DeepEqual(s.OnDisk, onDisk) || !reflect.DeepEqual(s.InForce, inForce) || !reflect.DeepEqual(st.InForce, inForce) {
		t.Errorf("stale %+v", s)
	}
	// The metrics.
	if got := gathered(t, reg, "airlock_policy_reload_refused_total"); got != 1 {
		t.Errorf("airlock_policy_reload_refused_total %v, want 1", got)
	}
	if got := gathered(t, reg, "airlock_policy_stale"); got != 1 {
		t.Errorf("airlock_policy_stale %v, want 1", got)
	}

	// A missing file is refused too, with no hash for it.
	if err := os.Remove(project); err != nil {
		t.Fatal(err)
	}
	w.Reload(context.Background(), "file changed")
	refusals = policyRefusals(t, db)
	if len(refusals) != 2 || refusals[1].Files[1].SHA256 != "" || refusals[1].Files[0].SHA256 != inForce[0].SHA256 {
		t.Errorf("refusals %+v, want a second with no hash for the missing file", refusals)
	}
	if got := gathered(t, reg, "airlock_policy_reload_refused_total"); got != 2 {
		t.Errorf("airlock_policy_reload_refused_total %v, want 2", got)
	}

	// The file put back as it was: the files on disk are those in force.
	writeFile(t, project, projectAuto)
	if changed, err := w.Reload(context.Background(), "file changed"); changed || err != nil {
		t.Fatalf("Reload of the files in force: %v, %v", changed, err)
	}
	if st := w.State(); st.Stale != nil {
		t.Errorf("still stale with the files in force on disk: %+v", st.Stale)
	}

	// Broken again, then fixed: a successful reload clears the state.
	writeFile(t, project, projectBroken)
	w.Reload(context.Background(), "file changed")
	if w.State().Stale == nil || gathered(t, reg, "airlock_policy_stale") != 1 {
		t.Fatal("not stale after the second refusal")
	}
	writeFile(t, project, projectDeny)
	if changed, err := w.Reload(context.Background(), "file changed"); !changed || err != nil {
		t.Fatalf("Reload after the fix: %v, %v", changed, err)
	}
	st = w.State()
	if st.Stale != nil || len(st.InForce) != 2 || st.InForce[1].SHA256 != policywatch.Hash([]byte(projectDeny)) {
		t.Errorf("after the fix: %+v, want the new stack and not stale", st)
	}
	if got := gathered(t, reg, "airlock_policy_stale"); got != 0 {
		t.Errorf("airlock_policy_stale %v after the fix, want 0", got)
	}
	if got := gathered(t, reg, "airlock_policy_reload_refused_total"); got != 3 {
		t.Errorf("airlock_policy_reload_refused_total %v, want 3", got)
	}
	if got := len(policyRefusals(t, db)); got != 3 {
		t.Errorf("%d policy.reload_refused events, want 3", got)
	}
}

// TestWatcherRefusalUnaudited checks that a refusal the audit log cannot
// take (the store is down) is still counted and reported.
func TestWatcherRefusalUnaudited(t *testing.T) {
	log := &memLog{}
	org, project := policyFiles(t)
	reg := prometheus.NewRegistry()
	w := &policywatch.Watcher{Files: []string{org, project}, Log: log, Metrics: reg}
	if _, err := w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	log.setFail(errors.New("disk full"))
	writeFile(t, project, projectDeny)
	if _, err := w.Reload(context.Background(), "file changed"); err == nil {
		t.Fatal("an unaudited change: no error")
	}
	if w.State().Stale == nil || gathered(t, reg, "airlock_policy_reload_refused_total") != 1 || gathered(t, reg, "airlock_policy_stale") != 1 {
		t.Errorf("an unaudited change is not reported as refused: %+v", w.State())
	}
}

// TestServeRefusedReload runs the server on a policy file, breaks the file,
// and checks that every surface says the files on disk are not the policy
// in force: the audit log, /metrics, /readyz and `airlock policy show`;
// then fixes it and checks that they stop saying so.
func TestServeRefusedReload(t *testing.T) {
	good, err := os.ReadFile(filepath.Join("testdata", "e2e.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	writeFile(t, policy, string(good))
	m, admin := startMainWith(t, t.TempDir(), func(c *Config) {
		c.Policies = []string{policy}
		c.PolicyPoll = Duration(10 * time.Millisecond)
	})
	get := func(path string) string {
		t.Helper()
		resp, err := http.Get(m.URL() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
		}
		return string(b)
	}
	t.Setenv(envToken, admin)
	t.Setenv(envServer, m.URL())
	goodSum, brokenSum := policywatch.Hash(good), policywatch.Hash([]byte(projectUnknownField))

	writeFile(t, policy, projectUnknownField)
	waitFor(t, func() bool { return strings.Contains(get("/readyz"), "policy stale") })

	// The audit log.
	code, stdout, stderr := runCLI(t, "audit", "tail", "--kind", airlock.EventPolicyReloadRefused, "--json")
	var ev airlock.Event
	var r airlock.PolicyReloadRefusal
	if code != exitOK || json.Unmarshal([]byte(stdout), &ev) != nil || json.Unmarshal(ev.Payload, &r) != nil {
		t.Fatalf("audit tail: exit %d\n%s%s", code, stdout, stderr)
	}
	if r.Reason != "file changed" || len(r.Errors) != 1 || !strings.Contains(r.Errors[0], `policy.yaml:3:36: unknown field "outcom"`) ||
		len(r.Files) != 1 || r.Files[0].SHA256 != brokenSum || len(r.InForce) != 1 || r.InForce[0].SHA256 != goodSum {
		t.Errorf("policy.reload_refused %+v", r)
	}
	// The metrics.
	metrics := get("/metrics")
	for _, want := range []string{"\nairlock_policy_reload_refused_total 1\n", "\nairlock_policy_stale 1\n"} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", strings.TrimSpace(want))
		}
	}
	// /readyz: ready, and stale, with both hashes.
	readyz := get("/readyz")
	for _, want := range []string{"ready\n", "on disk:  " + policy + " sha256 " + brokenSum, "in force: " + policy + " sha256 " + goodSum} {
		if !strings.Contains(readyz, want) {
			t.Errorf("/readyz lacks %q:\n%s", want, readyz)
		}
	}
	// policy show.
	code, stdout, stderr = runCLI(t, "policy", "show")
	for _, want := range []string{
		"e2e", goodSum[:12], "STALE: the policy files on disk are not the ones in force.",
		"on disk:   " + policy + "  sha256 " + brokenSum, "in force:  " + policy + "  sha256 " + goodSum,
		"1 error(s):\n", `unknown field "outcom"`,
	} {
		if code != exitOK || !strings.Contains(stdout, want) {
			t.Errorf("policy show: exit %d, lacks %q:\n%s%s", code, want, stdout, stderr)
		}
	}

	// Fixed: a successful reload clears every surface.
	writeFile(t, policy, string(good)+"\n# fixed\n")
	waitFor(t, func() bool { return get("/readyz") == "ready\n" })
	if metrics := get("/metrics"); !strings.Contains(metrics, "\nairlock_policy_stale 0\n") {
		t.Errorf("/metrics after the fix: airlock_policy_stale is not 0")
	}
	if code, stdout, _ := runCLI(t, "policy", "show"); code != exitOK || strings.Contains(stdout, "STALE") ||
		!strings.Contains(stdout, policywatch.Hash([]byte(string(good) + "\n# fixed\n"))[:12]) {
		t.Errorf("policy show after the fix: exit %d\n%s", code, stdout)
	}
}
