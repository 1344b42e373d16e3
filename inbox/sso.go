package inbox

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/airlock-dev/airlock"
)

// SSOConfig is how the inbox signs people in with an OpenID Connect
// provider (docs/INBOX.md, "Single sign-on").
type SSOConfig struct {
	// Name is the provider's name on the sign-in page ("Okta").
	Name string
	// Issuer is the provider's issuer URL; its discovery document is read
	// at start.
	Issuer       string
	ClientID     string
	ClientSecret string
	// RedirectURL is the inbox's callback: its URL and /inbox/sso/callback.
	RedirectURL string
	// Scopes are asked for besides openid; default profile, email, groups.
	Scopes []string
	// NameClaim names the person (default preferred_username, else
	// email); GroupsClaim lists their groups (default groups).
	NameClaim   string
	GroupsClaim string
	// AdminGroups are the groups whose people sign in as admins;
	// ReviewerGroups those who sign in as reviewers — empty, everyone the
	// provider signs in who is not an admin. Anyone else is refused.
	AdminGroups    []string
	ReviewerGroups []string
}

// SSO signs people in with an OpenID Connect provider: the authorization
// code flow with PKCE (S256) and a nonce, the ID token verified against
// the provider's keys, its claims mapped to a name, a role and groups.
type SSO struct {
	cfg      SSOConfig
	verifier *oidc.IDTokenVerifier
	oauth    oauth2.Config
}

// NewSSO reads the provider's discovery document and returns the sign-in.
func NewSSO(ctx context.Context, cfg SSOConfig) (*SSO, error) {
	switch {
	case cfg.Issuer == "" || cfg.ClientID == "" || cfg.RedirectURL == "":
		return nil, fmt.Errorf("single sign-on needs an issuer, a client ID and the inbox's URL")
	}
	p, err := oidc.NewProvider(ctx, cfg.Issuer)
	if err != nil {
		return nil, fmt.Errorf("single sign-on: the provider %s: %w", cfg.Issuer, err)
	}
	if cfg.NameClaim == "" {
		cfg.NameClaim = "preferred_username"
	}
	if cfg.GroupsClaim == "" {
		cfg.GroupsClaim = "groups"
	}
	if cfg.Scopes == nil {
		cfg.Scopes = []string{"profile", "email", "groups"}
	}
	if cfg.Name == "" {
		cfg.Name = "single sign-on"
	}
	return &SSO{
		cfg:      cfg,
		verifier: p.Verifier(&oidc.Config{ClientID: cfg.ClientID}),
		oauth: oauth2.Config{
			ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, Endpoint: p.Endpoint(), RedirectURL: cfg.RedirectURL,
			Scopes: append([]string{oidc.ScopeOpenID}, cfg.Scopes...),
		},
	}, nil
}

// Name is the provider's name, for the sign-in page.
func (s *SSO) Name() string { return s.cfg.Name }

// ssoCookie carries a sign-in under way (its state, nonce and PKCE
// verifier) from the start to the callback. SameSite=Lax: the callback is
// a top-level navigation from the provider's site, which a Strict cookie
// would not come with.
const (
	ssoCookie = "airlock_sso"
	ssoPath   = "/inbox/sso"
	ssoTTL    = 10 * time.Minute
)

func randomText() string {
	var b [32]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// ssoStart sends the browser to the provider.
func (in *inbox) ssoStart(w http.ResponseWriter, r *http.Request) {
	secure(w)
	s := in.host.SSO()
	if s == nil {
		http.NotFound(w, r)
		return
	}
	state, nonce, verifier := randomText(), randomText(), oauth2.GenerateVerifier()
	http.SetCookie(w, &http.Cookie{
		Name: ssoCookie, Value: state + "." + nonce + "." + verifier, Path: ssoPath,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: viaHTTPS(r), MaxAge: int(ssoTTL / time.Second),
	})
	http.Redirect(w, r, s.oauth.AuthCodeURL(state, oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier)), http.StatusFound)
}

// ssoCallback takes the provider's answer: the code exchanged with the
// PKCE verifier, the ID token verified (signature, issuer, audience,
// expiry, nonce), its claims mapped to a person, and a session started
// for them. A refusal is audited and says why.
func (in *inbox) ssoCallback(w http.ResponseWriter, r *http.Request) {
	secure(w)
	ctx := in.host.RequestContext(r)
	s := in.host.SSO()
	if s == nil {
		http.NotFound(w, r)
		return
	}
	refused := func(status int, audit, msg string) {
		in.host.Refuse(ctx, nil, "", airlock.EUNAUTHENTICATED, "inbox single sign-on: "+audit)
		in.render(w, status, "signin", &SigninPage{Base: Base{Title: "Sign in"}, Error: msg, SSO: s.Name()})
	}
	c, err := r.Cookie(ssoCookie)
	http.SetCookie(w, &http.Cookie{Name: ssoCookie, Value: "", Path: ssoPath, MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: viaHTTPS(r)})
	if err != nil {
		refused(http.StatusBadRequest, "a callback without a sign-in under way", "This sign-in did not start here, or took too long: sign in again.")
		return
	}
	parts := strings.Split(c.Value, ".")
	q := r.URL.Query()
	switch {
	case len(parts) != 3:
		refused(http.StatusBadRequest, "a malformed sign-in cookie", "Sign in again.")
		return
	case q.Get("error") != "":
		refused(http.StatusUnauthorized, "the provider refused: "+q.Get("error"), "The identity provider did not sign you in ("+q.Get("error")+" "+q.Get("error_description")+").")
		return
	case subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(parts[0])) != 1:
		refused(http.StatusBadRequest, "a callback whose state is not its sign-in's", "This answer is not for the sign-in this browser started: sign in again.")
		return
	}
	tok, err := s.oauth.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(parts[2]))
	if err != nil {
		refused(http.StatusUnauthorized, "the code exchange failed: "+err.Error(), "The identity provider did not confirm the sign-in: sign in again.")
		return
	}
	raw, _ := tok.Extra("id_token").(string)
	idt, err := s.verifier.Verify(ctx, raw)
	switch {
	case err != nil:
		refused(http.StatusUnauthorized, "an ID token that does not verify: "+err.Error(), "The identity provider's answer did not verify: sign in again.")
		return
	case subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(parts[1])) != 1:
		refused(http.StatusUnauthorized, "an ID token for another sign-in (nonce)", "The identity provider's answer is for another sign-in: sign in again.")
		return
	}
	p, why := s.person(idt)
	if p == nil {
		refused(http.StatusForbidden, why, "You are signed in at the identity provider, but not allowed in Airlock's inbox: "+why+".")
		return
	}
	t := p.Token()
	id, err := in.sessions.create(ctx, in.host.Store(), in.host.Logger(), t, airlock.Hash{}, p, time.Now())
	if err != nil {
		in.host.Logger().Error("inbox single sign-on: keep the session", "err", err)
		in.fail(w, r, http.StatusServiceUnavailable, "The session cannot be kept now", "Retry in a moment.")
		return
	}
	setSessionCookie(w, r, id)
	// The provider's redirect made this a cross-site navigation: the
	// session's Strict cookie would not come with a redirect from here.
	// A page that moves on by itself is a same-site navigation.
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	fmt.Fprint(w, `<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=/inbox"><title>Signed in</title><p>Signed in. <a href="/inbox">Continue to the inbox</a>.</p>`)
}

// person maps an ID token's claims to a person, or says why they may not
// sign in.
func (s *SSO) person(idt *oidc.IDToken) (*airlock.Person, string) {
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		return nil, "the ID token's claims do not read"
	}
	name, _ := claims[s.cfg.NameClaim].(string)
	if name == "" {
		name, _ = claims["email"].(string)
	}
	if name == "" {
		return nil, fmt.Sprintf("the ID token names nobody (no %s claim)", s.cfg.NameClaim)
	}
	var groups []string
	if list, ok := claims[s.cfg.GroupsClaim].([]any); ok {
		for _, g := range list {
			if g, ok := g.(string); ok && g != "" {
				groups = append(groups, g)
			}
		}
	}
	in := func(set []string) bool {
		return slices.ContainsFunc(groups, func(g string) bool { return slices.Contains(set, g) })
	}
	p := &airlock.Person{Name: name, Groups: groups, Issuer: idt.Issuer, Subject: idt.Subject}
	switch {
	case in(s.cfg.AdminGroups):
		p.Role = airlock.RoleAdmin
	case len(s.cfg.ReviewerGroups) == 0 || in(s.cfg.ReviewerGroups):
		p.Role = airlock.RoleReviewer
	default:
		return nil, fmt.Sprintf("%s is in none of the reviewers' groups (%s)", name, strings.Join(s.cfg.ReviewerGroups, ", "))
	}
	return p, ""
}
