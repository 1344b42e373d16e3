package policywatch

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
)

// appendLog is an audit log that keeps what is appended.
type appendLog struct {
	airlock.AuditLog
	mu     sync.Mutex
	events []airlock.Event
}

func (l *appendLog) Append(_ context.Context, rec airlock.Record) ([]airlock.Event, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := rec.Prepare(); err != nil {
		return nil, err
	}
	for _, e := range rec.Events {
		e.Seq = int64(len(l.events) + 1)
		l.events = append(l.events, e)
	}
	return rec.Events, nil
}

// write replaces a file's contents and moves its modification time on, so
// that a poll sees the change within the clock's granularity.
func write(t *testing.T, path, content string, at time.Time) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, at, at); err != nil {
		t.Fatal(err)
	}
}

// TestWatcherSettles checks that a poll loads a change only once the files
// have stopped changing, so that a file written in place is not read
// half-written.
func TestWatcherSettles(t *testing.T) {
	project := filepath.Join(t.TempDir(), "project.yaml")
	at := time.Now().Add(-time.Hour)
	write(t, project, "name: project\nrules:\n  - {id: writes, tool: write_file, outcome: auto}\n", at)
	w := &Watcher{Files: []string{project}, Log: &appendLog{}}
	if _, err := w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if w.settledChange() {
		t.Fatal("a change before any edit")
	}
	write(t, project, "", at.Add(time.Second))
	if w.settledChange() {
		t.Fatal("the first poll after an edit loads it")
	}
	write(t, project, "name: project\nrules:\n  - {id: writes, tool: write_file, outcome: deny}\n", at.Add(2*time.Second)) // still being written
	if w.settledChange() {
		t.Fatal("a file still changing is loaded")
	}
	if !w.settledChange() {
		t.Fatal("a settled change is not loaded")
	}
	if changed, err := w.Reload(context.Background(), "file changed"); !changed || err != nil {
		t.Fatalf("Reload: got %v, %v", changed, err)
	}
	if w.settledChange() {
		t.Fatal("a change after the reload")
	}
	d := w.Gate.Decide(context.Background(), airlock.Action{Agent: "a", Tool: "write_file", Args: airlock.MustArgs(map[string]any{"path": "x"})})
	if d.Outcome != airlock.Deny {
		t.Errorf("write_file after the reload: %s, want deny", d.Outcome)
	}
}
