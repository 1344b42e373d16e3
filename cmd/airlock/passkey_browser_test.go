package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/passkey"
)

// freePort returns a TCP port free on 127.0.0.1 now: a passkey's relying
// party is the inbox's URL, known before the server starts.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// newPasskeyE2E runs Main with the passkey policy and an inbox URL on
// localhost (a relying party must be a name, not an address), and a
// headless Chromium whose tabs have a virtual authenticator.
func newPasskeyE2E(t *testing.T) *browserE2E {
	t.Helper()
	path := chromium(t)
	port := freePort(t)
	m, admin := startMainWith(t, t.TempDir(), func(c *Config) {
		c.Listen = fmt.Sprintf("127.0.0.1:%d", port)
		c.Notifications.InboxURL = fmt.Sprintf("http://localhost:%d", port)
		c.Policies = []string{filepath.Join("testdata", "passkey.yaml")}
	})
	e := &e2e{main: m, url: fmt.Sprintf("http://localhost:%d", port), admin: admin}
	e.agent = e.token(t, "--role", "agent", "--agent", "coder-1")
	e.bob = e.token(t, "--role", "reviewer", "--name", "bob")
	return newBrowserFor(t, path, e)
}

// settle waits until expr is true in the page, across the navigations a
// script makes on its own (a page that moves on once done).
func (tb *tab) settle(t *testing.T, what, expr string) {
	t.Helper()
	deadline := time.Now().Add(stepTimeout)
	for {
		ctx, cancel := context.WithTimeout(tb.ctx, time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		cancel()
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: waiting until %s: %v", tb.name, what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// authenticator gives the tab a virtual passkey authenticator (Chromium's
// WebAuthn domain): platform, resident keys, user verification that
// succeeds.
func (tb *tab) authenticator(t *testing.T) {
	t.Helper()
	if _, err := chromedp.Call(tb.ctx, webauthn.Enable, webauthn.EnableParams{}); err != nil {
		t.Fatalf("%s: enable WebAuthn: %v", tb.name, err)
	}
	_, err := chromedp.Call(tb.ctx, webauthn.AddVirtualAuthenticator, webauthn.AddVirtualAuthenticatorParams{
		Options: &webauthn.VirtualAuthenticatorOptions{
			Protocol: webauthn.AuthenticatorProtocolCtap2, Ctap2version: webauthn.Ctap2versionCtap21, Transport: webauthn.AuthenticatorTransportInternal,
			HasResidentKey: true, HasUserVerification: true, IsUserVerified: true, AutomaticPresenceSimulation: true,
		}})
	if err != nil {
		t.Fatalf("%s: add a virtual authenticator: %v", tb.name, err)
	}
}

// TestBrowserPasskeyApproval: in real Chromium with a virtual
// authenticator, bob registers a passkey with an admin's enrolment code
// and approves a passkey-bound request with it; his session alone cannot
// approve it; the waiting check runs; `airlock audit verify` checks the
// signature against the key the log registered, and any change to the
// assertion fails it.
func TestBrowserPasskeyApproval(t *testing.T) {
	b := newPasskeyE2E(t)
	bob := b.newTab(t, "bob")
	bob.authenticator(t)
	b.signIn(t, bob, b.bob)

	// Without a code, a session registers nothing.
	out := b.cli(t, b.admin, 0, "reviewers", "enrol", "bob", "--json")
	var enrol airlock.NewPasskeyEnrolment
	if err := json.Unmarshal([]byte(out), &enrol); err != nil || !strings.HasPrefix(enrol.Code, "pk_") {
		t.Fatalf("reviewers enrol: %v\n%s", err, out)
	}
	bob.step(t, "open the passkeys page",
		chromedp.Navigate(b.url+"/inbox/passkeys"),
		chromedp.WaitVisible(chromedp.ID("passkey-code")),
		chromedp.SendKeys(chromedp.ID("passkey-code"), "pk_wrong"),
		chromedp.Click(chromedp.CSS(`form[data-register] button[type=submit]`)),
	)
	bob.waitFor(t, "a wrong code is refused", `!document.querySelector(".passkey-error").hidden`)
	if msg := eval[string](t, bob, `document.querySelector(".passkey-error").textContent`); !strings.Contains(msg, "no such enrolment code") {
		t.Fatalf("a wrong code: %q", msg)
	}
	bob.step(t, "register a passkey",
		chromedp.Navigate(b.url+"/inbox/passkeys"),
		chromedp.WaitVisible(chromedp.ID("passkey-code")),
		chromedp.SendKeys(chromedp.ID("passkey-code"), enrol.Code),
		chromedp.SendKeys(chromedp.ID("passkey-name"), "test authenticator"),
		chromedp.Click(chromedp.CSS(`form[data-register] button[type=submit]`)),
	)
	bob.settle(t, "the passkey is registered", `!!document.querySelector(".done") && document.querySelector(".done").textContent.includes("registered test authenticator")`)
	b.screenshot(t, bob, "passkey-registered")

	// The agent waits on a passkey-bound request.
	check := b.enforceAsync(t, action("release", "v2"))
	ap := b.pending(t, "release")
	if !ap.NeedsPasskey() {
		t.Fatalf("the request does not need a passkey: %+v", ap.Review)
	}

	// A stolen session cookie is not bob's device: approving without an
	// assertion is refused.
	bob.step(t, "open the request", chromedp.Navigate(b.url+"/inbox/approvals/"+ap.ID), chromedp.WaitVisible(chromedp.CSS(`form[data-passkey]`)))
	status, err := chromedp.Run(bob.ctx, chromedp.Evaluate[int](fmt.Sprintf(`fetch("/inbox/approvals/%s/approve", {method: "POST",
		headers: {"Content-Type": "application/x-www-form-urlencoded"}, body: "action_hash=%s"}).then(r => r.status)`, ap.ID, ap.ActionHash),
		chromedp.EvalAwaitPromise))
	if err != nil || status != 403 && status != 409 {
		t.Fatalf("an approval without the passkey answered %d (%v)", status, err)
	}
	if got, _ := b.client(b.bob).Approval(t.Context(), ap.ID); got.Status != airlock.StatusPending {
		t.Fatalf("approved without the passkey: %+v", got)
	}

	bob.step(t, "approve with the passkey", chromedp.Navigate(b.url+"/inbox/approvals/"+ap.ID), chromedp.WaitVisible(chromedp.CSS(`form[data-passkey] button.approve`)))
	if got := bob.follow(t, "approve", chromedp.Click(chromedp.CSS(`form[data-passkey] button.approve`))); got != "/inbox" {
		t.Fatalf("approving landed on %s", got)
	}
	if enf := receive(t, check); !enf.Allowed {
		t.Fatalf("the waiting check: %+v", enf)
	}
	got, err := b.client(b.bob).Approval(t.Context(), ap.ID)
	if err != nil || got.Status != airlock.StatusApproved || len(got.Votes) != 1 || got.Votes[0].Passkey == nil {
		t.Fatalf("the approval: %+v, %v", got, err)
	}
	out = b.cli(t, b.admin, 0, "audit", "verify")
	if !strings.Contains(out, "ok: 1 approval signed by the reviewers' registered passkeys") {
		t.Fatalf("audit verify:\n%s", out)
	}

	// The assertion checks offline against the key the log holds, and
	// only for this request and action.
	var key []byte
	evs, err := b.client(b.admin).Events(t.Context(), airlock.EventFilter{Kind: airlock.EventPasskeyRegistered})
	if err != nil || len(evs.Events) != 1 {
		t.Fatalf("registration events: %+v, %v", evs, err)
	}
	var reg airlock.PasskeyRegistered
	if err := json.Unmarshal(evs.Events[0].Payload, &reg); err != nil {
		t.Fatal(err)
	}
	key = reg.PublicKey
	a := got.Votes[0].Passkey
	if err := passkey.Verify(a, key, ap.ID, ap.ActionHash); err != nil {
		t.Fatalf("the assertion does not verify: %v", err)
	}
	other := ap.ActionHash
	other[0] ^= 1
	tampered := *a
	tampered.Signature = append([]byte(nil), a.Signature...)
	tampered.Signature[len(tampered.Signature)-1] ^= 1
	for what, err := range map[string]error{
		"another action":   passkey.Verify(a, key, ap.ID, other),
		"another request":  passkey.Verify(a, key, "01a2232b-0000-7000-8000-000000000000", ap.ActionHash),
		"a bent signature": passkey.Verify(&tampered, key, ap.ID, ap.ActionHash),
	} {
		if err == nil {
			t.Errorf("the assertion verifies for %s", what)
		}
	}
	b.screenshot(t, bob, "passkey-approved")
}
