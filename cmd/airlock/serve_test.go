package main

import (
	"bytes"
	"log/slog"
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
