package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/oauth2-proxy/mockoidc"

	"github.com/airlock-dev/airlock"
)

// TestBrowserSSO signs reviewers in through a real OpenID Connect provider
// that Airlock did not write (mockoidc, running in the test): the
// authorization code flow with PKCE, in real Chromium. sam, in group sre,
// approves a request whose rule names group:sre, and signs out; dana, in
// no reviewers' group, is refused.
func TestBrowserSSO(t *testing.T) {
	path := chromium(t)
	idp, err := mockoidc.Run()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idp.Shutdown() })
	oc := idp.Config()
	port := freePort(t)
	m, admin := startMainWith(t, t.TempDir(), func(c *Config) {
		c.Listen = fmt.Sprintf("127.0.0.1:%d", port)
		c.Notifications.InboxURL = fmt.Sprintf("http://localhost:%d", port)
		c.Policies = []string{filepath.Join("testdata", "sso.yaml")}
		c.SSO = SSOConfig{Name: "MockOIDC", Issuer: oc.Issuer, ClientID: oc.ClientID, ClientSecret: Secret(oc.ClientSecret),
			ReviewerGroups: []string{"sre", "platform"}}
	})
	e := &e2e{main: m, url: fmt.Sprintf("http://localhost:%d", port), admin: admin}
	e.agent = e.token(t, "--role", "agent", "--agent", "coder-1")
	e.bob = e.token(t, "--role", "reviewer", "--name", "bob")
	b := newBrowserFor(t, path, e)

	// dana is signed in by the provider, but in no reviewers' group.
	idp.QueueUser(&mockoidc.MockUser{Subject: "u-dana", PreferredUsername: "dana", Email: "dana@example.com", Groups: []string{"marketing"}})
	dana := b.newTab(t, "dana")
	dana.step(t, "open the sign-in page", chromedp.Navigate(b.url+"/inbox/signin"), chromedp.WaitVisible(chromedp.CSS(`a.sso`)))
	dana.step(t, "sign in with the provider", chromedp.Click(chromedp.CSS(`a.sso`)))
	dana.settle(t, "dana is refused", `!!document.querySelector(".error") && document.querySelector(".error").textContent.includes("not allowed")`)

	idp.QueueUser(&mockoidc.MockUser{Subject: "u-sam", PreferredUsername: "sam", Email: "sam@example.com", Groups: []string{"dev", "sre"}})
	sam := b.newTab(t, "sam")
	sam.step(t, "open the sign-in page", chromedp.Navigate(b.url+"/inbox/signin"), chromedp.WaitVisible(chromedp.CSS(`a.sso`)))
	if text := eval[string](t, sam, `document.querySelector("a.sso").textContent`); text != "Sign in with MockOIDC" {
		t.Fatalf("the sign-in button: %q", text)
	}
	sam.step(t, "sign in with the provider", chromedp.Click(chromedp.CSS(`a.sso`)))
	sam.settle(t, "sam lands on the inbox, signed in", `location.pathname === "/inbox" && !!document.querySelector(".who") && document.querySelector(".who").textContent.includes("sam")`)
	b.screenshot(t, sam, "sso-signed-in")

	check := b.enforceAsync(t, action("deploy", "prod"))
	ap := b.pending(t, "deploy")
	sam.step(t, "open the request", chromedp.Navigate(b.url+"/inbox/approvals/"+ap.ID), chromedp.WaitVisible(chromedp.CSS(`button.approve`)))
	if got := sam.follow(t, "approve", chromedp.Click(chromedp.CSS(`button.approve`))); got != "/inbox" {
		t.Fatalf("approving landed on %s", got)
	}
	if enf := receive(t, check); !enf.Allowed {
		t.Fatalf("the waiting check: %+v", enf)
	}
	got, err := b.client(b.bob).Approval(t.Context(), ap.ID)
	if err != nil || got.Status != airlock.StatusApproved || got.ResolvedBy != "sam" || got.Surface != airlock.SurfaceWeb {
		t.Fatalf("the approval: %+v, %v", got, err)
	}
	// bob (a token, in no group) is not one of the rule's reviewers.
	if _, err := b.client(b.bob).Resolve(t.Context(), ap.ID, airlock.StatusRejected, ap.ActionHash, "late", ""); err == nil {
		t.Fatal("bob resolved a request for group:sre")
	}

	if got := sam.follow(t, "sign out", chromedp.Click(chromedp.CSS(`form[action="/inbox/signout"] button`))); got != "/inbox/signin" {
		t.Fatalf("signing out landed on %s", got)
	}
	if got := sam.follow(t, "open the inbox again", chromedp.Navigate(b.url+"/inbox")); got != "/inbox/signin" {
		t.Fatalf("after signing out, the inbox is at %s", got)
	}
	out := b.cli(t, admin, 0, "audit", "tail", "--kind", "access.refused", "--json")
	if !strings.Contains(out, "inbox single sign-on: dana is in none of the reviewers' groups") {
		t.Errorf("dana's refusal is not audited:\n%s", out)
	}
}
