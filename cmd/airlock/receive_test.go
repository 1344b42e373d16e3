package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// The receiver prints a notice whose signature verifies, and refuses,
// with 401, one signed with another key, one too old, and one unsigned.
func TestNotificationsReceive(t *testing.T) {
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := standardwebhooks.NewWebhook("whsec_" + strings.Repeat("QUJD", 8))
	var out bytes.Buffer
	srv := httptest.NewServer(noticeReceiver(wh, &lockedWriter{w: &out}))
	defer srv.Close()
	body := []byte(`{"type":"approval.requested","timestamp":"2026-11-28T09:30:12Z","data":{"key":"msg_1","delivery":7,` +
		`"channel":"ops","subject":"approval requested: deploy","agent":"coder-1","approval_id":"01a2"}}`)
	post := func(signer *standardwebhooks.Webhook, at time.Time) int {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(body))
		req.Header.Set("webhook-id", "msg_1")
		req.Header.Set("webhook-timestamp", strconv.FormatInt(at.Unix(), 10))
		if signer != nil {
			sig, err := signer.Sign("msg_1", at, body)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("webhook-signature", sig)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(wh, time.Now()); code != http.StatusNoContent {
		t.Fatalf("a signed notice: %d, want 204", code)
	}
	want := "approval.requested  coder-1  approval requested: deploy  (approval 01a2)  delivery 7 through ops"
	if !strings.Contains(out.String(), want) {
		t.Fatalf("printed %q, want a line with %q", out.String(), want)
	}
	for name, code := range map[string]int{
		"another key": post(other, time.Now()),
		"too old":     post(wh, time.Now().Add(-10*time.Minute)),
		"unsigned":    post(nil, time.Now()),
	} {
		if code != http.StatusUnauthorized {
			t.Errorf("%s: %d, want 401", name, code)
		}
	}
	if n := strings.Count(out.String(), "refused a POST"); n != 3 {
		t.Errorf("printed %d refusals, want 3:\n%s", n, out.String())
	}
}
