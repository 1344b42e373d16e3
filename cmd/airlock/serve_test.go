package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runLogged runs Main over dataDir with the e2e policy and the
// configuration as set changes it, its log in the returned buffer; a Main
// that failed to start is closed, one that started is closed when the test
// ends.
func runLogged(t *testing.T, dataDir string, set func(*Config)) (*Main, *syncBuffer, string, error) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Listen, cfg.DataDir = "127.0.0.1:0", dataDir
	cfg.Store.Path = filepath.Join(dataDir, "airlock.db")
	cfg.Policies = []string{filepath.Join("testdata", "e2e.yaml")}
	cfg.Timeouts.Shutdown = Duration(5 * time.Second)
	if set != nil {
		set(&cfg)
		if err := cfg.readChannelSecrets(); err != nil {
			return nil, nil, "", err
		}
	}
	var out bytes.Buffer
	logs := &syncBuffer{}
	m := &Main{Config: cfg, Stdout: &out, Logger: slog.New(slog.NewTextHandler(logs, nil))}
	if err := m.Run(t.Context()); err != nil {
		m.Close()
		return nil, logs, out.String(), err
	}
	t.Cleanup(func() { m.Close() })
	return m, logs, out.String(), nil
}

// The start's log names the notification channels in force.
func TestServeLogsChannels(t *testing.T) {
	_, logs, _, err := runLogged(t, t.TempDir(), func(c *Config) {
		c.Notifications.Channels = []ChannelConfig{
			{Name: "ops", Type: "webhook", URL: "https://hooks.example/a", Secret: Secret(testWebhookSecret)},
			{Name: "ops2", Type: "webhook", URL: "https://hooks.example/b", Secret: Secret(testWebhookSecret)},
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := "channels=ops:webhook,ops2:webhook"; !strings.Contains(logs.String(), want) {
		t.Errorf("the start's log has no %q:\n%s", want, logs)
	}
	_, logs, _, err = runLogged(t, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := `channels="none (the inbox only)"`; !strings.Contains(logs.String(), want) {
		t.Errorf("the start's log has no %q:\n%s", want, logs)
	}
}

// A broken policy stops the start before anything is made on disk.
func TestServeBadPolicyMakesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	policy := filepath.Join(t.TempDir(), "p.yaml")
	writeFile(t, policy, "rules:\n  - tool: x\n    outcom: auto\n")
	_, _, _, err := runLogged(t, dir, func(c *Config) { c.Policies = []string{policy} })
	if err == nil || !strings.Contains(err.Error(), `unknown field "outcom"`) {
		t.Fatalf("start: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a refused start made the data directory: %v", err)
	}
}

// Two servers on one SQLite data directory: the second refuses, saying
// who holds it; once the first stops, a server starts there again.
func TestServeLocksTheStore(t *testing.T) {
	dir := t.TempDir()
	first, _, _, err := runLogged(t, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _, _, err = runLogged(t, dir, nil)
	want := fmt.Sprintf("another airlock serve (pid %d) already serves %s", os.Getpid(), filepath.Join(dir, "airlock.db"))
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("a second server on the same store: %v, want %q", err, want)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := runLogged(t, dir, nil); err != nil {
		t.Fatalf("after the first stopped: %v", err)
	}
}

// A start verifies the audit chain, from the last checkpoint on, and warns
// when it is broken.
func TestServeVerifiesTheChain(t *testing.T) {
	dir := t.TempDir()
	m, _, _, err := runLogged(t, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil { // signs a last checkpoint
		t.Fatal(err)
	}
	m, logs, out, err := runLogged(t, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "audit chain verified since the last checkpoint"; !strings.Contains(logs.String(), want) || strings.Contains(out, "WARNING") {
		t.Errorf("a restart's log has no %q:\n%s%s", want, logs, out)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	// The last event, the checkpoint Close signed, edited.
	tamper(t, filepath.Join(dir, "airlock.db"), `DROP TRIGGER events_no_update`,
		`UPDATE events SET payload = X'7B7D' WHERE seq = (SELECT max(seq) FROM events)`)
	_, logs, out, err = runLogged(t, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"WARNING: the audit log's chain does not verify: ", "Run 'airlock audit verify' to see where."} {
		if !strings.Contains(out, want) {
			t.Errorf("a start over a broken chain printed no %q:\n%s", want, out)
		}
	}
	if !strings.Contains(logs.String(), "level=WARN msg=\"the audit log's chain does not verify") {
		t.Errorf("a start over a broken chain logged no warning:\n%s", logs)
	}
}

// The embedded MCP gateway (mcp proxy --data) starts as serve does: a
// broken policy stops it before anything is made on disk.
func TestEmbeddedBadPolicyMakesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	policy := filepath.Join(t.TempDir(), "p.yaml")
	writeFile(t, policy, "rules:\n  - tool: x\n    outcom: auto\n")
	config := filepath.Join(t.TempDir(), "airlock.yaml")
	writeFile(t, config, "policies: ["+policy+"]\n")
	wantRun(t, []string{"mcp", "proxy", "--config", config, "--data", dir, "--agent", "a", "--name", "x", "--", "true"},
		exitCheck, `unknown field "outcom"`)
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a refused start made the data directory: %v", err)
	}
}
