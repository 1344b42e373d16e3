package relay_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/hook/relay"
)

func TestBlocked(t *testing.T) {
	for _, c := range []struct{ code, want string }{
		{"AIRLOCK-PENDING", "AIRLOCK-PENDING"},
		{"invalid", "AIRLOCK-INVALID"},
		{"unauthenticated", "AIRLOCK-DENIED"},
		{"unauthorized", "AIRLOCK-DENIED"},
		{"unavailable", "AIRLOCK-UNAVAILABLE"},
		{"internal", "AIRLOCK-UNAVAILABLE"},
		{"not_found", "AIRLOCK-UNAVAILABLE"},
		{"", "AIRLOCK-UNAVAILABLE"},
	} {
		r := relay.Blocked(c.code, "what\nhappened")
		if want := "Airlock blocked this call: " + c.want + ": what happened"; r.Exit != 2 || r.Stdout != "" || r.Stderr != want {
			t.Errorf("Blocked(%q) = %+v, want exit 2 and %q", c.code, r, want)
		}
	}
	if r := relay.Blocked("invalid", strings.Repeat("x", 5000)); len(r.Stderr) > 2100 {
		t.Errorf("a long reason is %d bytes on one line, want it cut", len(r.Stderr))
	}
	if r := relay.Fail(errors.New("boom")); r.Exit != 2 || !strings.Contains(r.Stderr, "AIRLOCK-UNAVAILABLE: boom") {
		t.Errorf("Fail of a plain error: %+v", r)
	}
}

func TestHold(t *testing.T) {
	for _, c := range []struct{ timeout, hold, wait time.Duration }{
		{10 * time.Minute, 10*time.Minute - 10*time.Second, 10*time.Minute - 10*time.Second/3},
		{4 * time.Second, 3 * time.Second, 4*time.Second - time.Second/3},
	} {
		hold, wait := relay.Hold(c.timeout)
		if hold != c.hold || wait != c.wait || !(hold < wait && wait < c.timeout) {
			t.Errorf("Hold(%s) = %s, %s; want %s, %s", c.timeout, hold, wait, c.hold, c.wait)
		}
	}
}

func TestLookup(t *testing.T) {
	for _, c := range []struct {
		name, want string
		timeout    time.Duration
	}{{"claude", "claude-code", 10 * time.Minute}, {"claude-code", "claude-code", 10 * time.Minute}, {"codex", "codex", 10 * time.Minute}, {"gemini", "gemini", time.Minute}} {
		if h, ok := relay.Lookup(c.name); !ok || h.Name != c.want || h.Timeout != c.timeout {
			t.Errorf("Lookup(%q) = %+v %t", c.name, h, ok)
		}
	}
	if _, ok := relay.Lookup("cursor"); ok {
		t.Error("an unknown host was found")
	}
}

// TestAskRequest: the payload goes as it came, with the hold, where an ask
// goes, the reply type and the token; the reply comes back as the server
// wrote it.
func TestAskRequest(t *testing.T) {
	payload := []byte(`{"hook_event_name":"PreToolUse","tool_name":"Bash"}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case r.Method != "POST" || r.URL.Path != "/v1/hooks/claude-code":
			t.Errorf("%s %s", r.Method, r.URL.Path)
		case r.URL.Query().Get("hold") != "9m50s" || r.URL.Query().Get("ask") != "host":
			t.Errorf("query %s", r.URL.RawQuery)
		case r.Header.Get("Accept") != relay.ReplyType || r.Header.Get("Authorization") != "Bearer secret":
			t.Errorf("headers %v", r.Header)
		case string(body) != string(payload):
			t.Errorf("body %s", body)
		}
		w.Header().Set("Content-Type", relay.ReplyType)
		_ = json.NewEncoder(w).Encode(relay.Reply{Stdout: `{"ok":true}` + "\n"})
	}))
	defer srv.Close()
	c := &relay.Client{URL: srv.URL + "/", Token: "secret"}
	r := c.Run(t.Context(), "claude-code", payload, 10*time.Minute, "host")
	if r.Exit != 0 || r.Stdout != `{"ok":true}`+"\n" || r.Stderr != "" {
		t.Fatalf("%+v", r)
	}
}

// TestAskFailures: whatever the server answers but a reply, or when it
// cannot be reached, the call is blocked with the code that says why.
func TestAskFailures(t *testing.T) {
	for _, c := range []struct {
		name    string
		status  int
		body    string
		code    string
		blocked string
	}{
		{"problem", 401, `{"code":"unauthenticated","detail":"unknown token"}`, "unauthenticated", "AIRLOCK-DENIED: unknown token"},
		{"problem with details", 400, `{"code":"invalid","detail":"bad payload","errors":[{"message":"no tool_name","location":"body.tool_name"}]}`,
			"invalid", "AIRLOCK-INVALID: bad payload; no tool_name (at body.tool_name)"},
		{"refusal code", 409, `{"code":"AIRLOCK-HASH-MISMATCH","detail":"x"}`, "AIRLOCK-HASH-MISMATCH", "AIRLOCK-HASH-MISMATCH: x"},
		{"not a problem", 404, `<html>no</html>`, "not_found", "AIRLOCK-UNAVAILABLE: server answered 404 Not Found: <html>no</html>"},
		{"not a reply", 200, `{"exit":`, "unavailable", "AIRLOCK-UNAVAILABLE"},
		{"an exit code a host would ignore", 200, `{"exit":1}`, "internal", "AIRLOCK-UNAVAILABLE: the server answered exit code 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(c.status)
				_, _ = io.WriteString(w, c.body)
			}))
			defer srv.Close()
			cl := &relay.Client{URL: srv.URL}
			// An answer that cannot be read is asked again until ctx ends.
			ctx, cancel := context.WithTimeout(t.Context(), time.Second)
			defer cancel()
			_, err := cl.Ask(ctx, "codex", []byte(`{}`), time.Second, "")
			var e *relay.Error
			if !errors.As(err, &e) || e.Code != c.code {
				t.Fatalf("Ask: %v, want code %s", err, c.code)
			}
			if r := cl.Run(t.Context(), "codex", []byte(`{}`), 3*time.Second, ""); r.Exit != 2 || !strings.Contains(r.Stderr, c.blocked) {
				t.Fatalf("Run: %+v, want blocked with %q", r, c.blocked)
			}
		})
	}
}

// TestAskRetriesARestartingServer: a server that answers 503 while it
// restarts is asked again, and its answer, once it has one, is the reply.
func TestAskRetriesARestartingServer(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) <= 2 {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, `{"code":"unavailable","detail":"the server is restarting; retry"}`)
			return
		}
		_ = json.NewEncoder(w).Encode(relay.Reply{Stdout: "{}\n"})
	}))
	defer srv.Close()
	r, err := (&relay.Client{URL: srv.URL}).Ask(t.Context(), "gemini", []byte(`{}`), time.Second, "")
	if err != nil || r.Stdout != "{}\n" || n.Load() != 3 {
		t.Fatalf("%+v %v after %d requests, want the third's reply", r, err, n.Load())
	}
}

// TestRunServerDown: a server nobody listens on blocks the call before the
// host's timeout, as unavailable.
func TestRunServerDown(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	start := time.Now()
	r := (&relay.Client{URL: "http://" + addr}).Run(t.Context(), "claude-code", []byte(`{}`), time.Second, "")
	if took := time.Since(start); took >= time.Second {
		t.Errorf("answered after %s, past the host's timeout", took)
	}
	if r.Exit != 2 || !strings.Contains(r.Stderr, "AIRLOCK-UNAVAILABLE") {
		t.Fatalf("%+v", r)
	}
	if r := (&relay.Client{URL: "http://" + addr}).Run(t.Context(), "claude-code", []byte(`{}`), 0, ""); r.Exit != 2 || !strings.Contains(r.Stderr, "AIRLOCK-INVALID: --timeout") {
		t.Fatalf("no timeout: %+v", r)
	}
}
