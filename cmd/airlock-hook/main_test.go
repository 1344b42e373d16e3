package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunRefuses: what airlock-hook refuses before it asks the server —
// the command line, the token, the payload — blocks the call with exit 2
// and one line that says what was wrong. (The answers from a server are
// tested with the built program in cmd/airlock.)
func TestRunRefuses(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.token")
	if err := os.WriteFile(empty, []byte(" \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		args    []string
		env     map[string]string
		payload string
		want    string
	}{
		{"no host", nil, nil, "{}", "AIRLOCK-INVALID: name the host first"},
		{"a flag first", []string{"--timeout", "1s"}, nil, "{}", "AIRLOCK-INVALID: name the host first"},
		{"unknown host", []string{"cursor"}, nil, "{}", `AIRLOCK-INVALID: unknown host "cursor": Airlock speaks to claude-code, codex, gemini`},
		{"bad flag", []string{"codex", "--timeout", "soon"}, nil, "{}", `AIRLOCK-INVALID: invalid value "soon" for flag -timeout`},
		{"unknown flag", []string{"codex", "--token", "x"}, nil, "{}", "AIRLOCK-INVALID: flag provided but not defined: -token"},
		{"extra word", []string{"codex", "now"}, nil, "{}", `AIRLOCK-INVALID: unexpected argument "now"`},
		{"ask where", []string{"claude", "--ask-at", "maybe"}, nil, "{}", `AIRLOCK-INVALID: --ask-at "maybe": want airlock or host`},
		{"server URL", []string{"gemini"}, map[string]string{"AIRLOCK_SERVER": "127.0.0.1:8080"}, "{}", `AIRLOCK-INVALID: AIRLOCK_SERVER "127.0.0.1:8080": want the server's URL`},
		{"credentials in URL", []string{"gemini", "--server", "https://a:b@airlock.example"}, nil, "{}", "AIRLOCK-INVALID: --server: put no credentials in the URL"},
		{"no token", []string{"gemini"}, map[string]string{"AIRLOCK_TOKEN": ""}, "{}", "AIRLOCK-DENIED: airlock-hook needs the agent's token"},
		{"no token file", []string{"gemini", "--token-file", filepath.Join(dir, "missing")}, nil, "{}", "AIRLOCK-DENIED: --token-file: open "},
		{"empty token file", []string{"gemini", "--token-file", empty}, nil, "{}", "AIRLOCK-DENIED: --token-file " + empty + " is empty"},
		{"not JSON", []string{"gemini"}, nil, "rm -rf / \x00\xff", "AIRLOCK-INVALID: the hook payload is not JSON"},
		{"empty payload", []string{"gemini"}, nil, "", "AIRLOCK-INVALID: the hook payload is not JSON"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("AIRLOCK_SERVER", "")
			t.Setenv("AIRLOCK_TOKEN", "airlock_agent")
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			var warn bytes.Buffer
			r := run(t.Context(), c.args, strings.NewReader(c.payload), &warn)
			if r.Exit != 2 || r.Stdout != "" || !strings.HasPrefix(r.Stderr, "Airlock blocked this call: "+c.want) || strings.Contains(r.Stderr, "\n") {
				t.Errorf("got %+v, want exit 2 and one line beginning %q", r, c.want)
			}
		})
	}
}

func TestRunHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"codex", "--help"}} {
		r := run(t.Context(), args, strings.NewReader(""), &bytes.Buffer{})
		if r.Exit != 0 || !strings.HasPrefix(r.Stdout, "usage: airlock-hook {claude-code|codex|gemini}") {
			t.Errorf("%v: %+v", args, r)
		}
	}
}

// TestWarnings: a token file others can read and a token sent unencrypted
// beyond this machine are said on standard error; the call still goes.
func TestWarnings(t *testing.T) {
	file := filepath.Join(t.TempDir(), "agent.token")
	if err := os.WriteFile(file, []byte("airlock_agent\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var warn bytes.Buffer
	c, _, _, _, err := parse([]string{"codex", "--token-file", file, "--server", "http://airlock.example:8080/"}, &warn)
	if err != nil || c.Token != "airlock_agent" || c.URL != "http://airlock.example:8080" {
		t.Fatalf("%+v %v", c, err)
	}
	for _, want := range []string{"is readable by other users (mode 0644): chmod 600", "the token goes unencrypted to airlock.example:8080"} {
		if !strings.Contains(warn.String(), want) {
			t.Errorf("warnings %q: want %q", warn.String(), want)
		}
	}
	warn.Reset()
	t.Setenv("AIRLOCK_TOKEN", "airlock_agent")
	if _, _, _, _, err := parse([]string{"codex", "--server", "http://localhost:8080"}, &warn); err != nil || warn.Len() != 0 {
		t.Errorf("loopback over http: %v, warned %q", err, warn.String())
	}
}
