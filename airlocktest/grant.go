package airlocktest

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/google/uuid"
)

// newGrant returns a valid grant of agent for `npm test`, not yet stored,
// expiring ttl after now.
func newGrant(agent string, now time.Time, ttl time.Duration) airlock.Grant {
	return airlock.Grant{
		ID: uuid.Must(uuid.NewV7()).String(), Agent: agent, Tool: "Bash",
		Pattern: airlock.GrantPattern{Kind: airlock.PatternCommand, Command: []string{"npm", "test"}},
		Outcome: airlock.Auto, MaxTier: airlock.TierWrite, GrantedBy: "alice", Approval: "01a2-approval",
		Reason: "the tests run often", Expires: now.Add(ttl),
	}
}

// sameGrant reports whether two grants are equal, times as instants.
func sameGrant(a, b airlock.Grant) bool {
	pa, _ := json.Marshal(a.Pattern)
	pb, _ := json.Marshal(b.Pattern)
	return a.ID == b.ID && a.Agent == b.Agent && a.Tool == b.Tool && string(pa) == string(pb) && a.Outcome == b.Outcome &&
		a.MaxTier == b.MaxTier && a.GrantedBy == b.GrantedBy && a.Approval == b.Approval && a.Reason == b.Reason &&
		a.Created.Equal(b.Created) && a.Expires.Equal(b.Expires) && a.Revoked.Equal(b.Revoked) &&
		a.RevokedBy == b.RevokedBy && a.RevokeReason == b.RevokeReason
}

// testStandingGrants: a grant is stored as given, with the store's time,
// and audited; it is listed by the agents its glob covers and while live;
// it is revoked exactly once, audited; malformed, duplicate, endless or
// already-expired grants are refused and leave nothing behind.
func testStandingGrants(t *testing.T, s airlock.Store, clock *Clock) {
	now := clock.Now()
	g, err := s.CreateGrant(ctx(t), newGrant("coder-1", now, 7*24*time.Hour))
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if !g.Created.Equal(now) || !g.Revoked.IsZero() {
		t.Fatalf("created %v, revoked %v: want the store's now and not revoked", g.Created, g.Revoked)
	}
	got, err := s.Grant(ctx(t), g.ID)
	if err != nil || !sameGrant(got, g) {
		t.Fatalf("read back %+v, %v; want %+v", got, err, g)
	}
	evs := events(t, s, airlock.EventFilter{Kind: airlock.EventGrantCreated})
	if len(evs) != 1 || evs[0].Agent != "coder-1" || evs[0].ApprovalID != g.Approval || evs[0].Outcome != "auto" {
		t.Fatalf("grant.created events %+v", evs)
	}
	var payload airlock.Grant
	if err := json.Unmarshal(evs[0].Payload, &payload); err != nil || !sameGrant(payload, g) {
		t.Fatalf("grant.created payload %s (%v): want the grant", evs[0].Payload, err)
	}

	glob := newGrant("ci-*", now, time.Hour)
	glob.Approval = ""
	if glob, err = s.CreateGrant(ctx(t), glob); err != nil {
		t.Fatalf("create a glob's grant: %v", err)
	}
	list := func(f airlock.GrantFilter) []string {
		t.Helper()
		gs, err := s.Grants(ctx(t), f)
		if err != nil {
			t.Fatalf("grants %+v: %v", f, err)
		}
		ids := []string{}
		for _, g := range gs {
			ids = append(ids, g.ID)
		}
		return ids
	}
	same := func(got []string, want ...string) bool {
		if len(got) != len(want) {
			return false
		}
		for i := range got {
			if got[i] != want[i] {
				return false
			}
		}
		return true
	}
	if ids := list(airlock.GrantFilter{}); !same(ids, glob.ID, g.ID) {
		t.Errorf("every grant, newest first: %v, want %v", ids, []string{glob.ID, g.ID})
	}
	if ids := list(airlock.GrantFilter{Agent: "ci-7"}); !same(ids, glob.ID) {
		t.Errorf("grants covering ci-7: %v, want the glob's %s", ids, glob.ID)
	}
	if ids := list(airlock.GrantFilter{Agent: "coder-1", LiveAt: now.Add(time.Minute)}); !same(ids, g.ID) {
		t.Errorf("live grants of coder-1: %v, want %s", ids, g.ID)
	}
	if ids := list(airlock.GrantFilter{LiveAt: now.Add(2 * time.Hour)}); !same(ids, g.ID) {
		t.Errorf("grants live in two hours: %v, want only %s (the glob's expired)", ids, g.ID)
	}
	if ids := list(airlock.GrantFilter{Limit: 1}); !same(ids, glob.ID) {
		t.Errorf("one grant: %v, want the newest %s", ids, glob.ID)
	}

	// Refusals leave nothing behind.
	before := len(events(t, s, airlock.EventFilter{}))
	bad := func(name string, g airlock.Grant, code string) {
		t.Helper()
		if _, err := s.CreateGrant(ctx(t), g); airlock.ErrorCode(err) != code {
			t.Errorf("%s: %v, want %s", name, err, code)
		}
	}
	dup := newGrant("coder-1", now, time.Hour)
	dup.ID = g.ID
	bad("an ID that exists", dup, airlock.ECONFLICT)
	bad("expired already", newGrant("coder-1", now, -time.Minute), airlock.EINVALID)
	bad("past the longest life", newGrant("coder-1", now, airlock.MaxGrantTTL+time.Hour), airlock.EINVALID)
	ask := newGrant("coder-1", now, time.Hour)
	ask.Outcome = airlock.Ask
	bad("an outcome that does not loosen", ask, airlock.EINVALID)
	nobody := newGrant("coder-1", now, time.Hour)
	nobody.GrantedBy = ""
	bad("granted by no one", nobody, airlock.EINVALID)
	noPattern := newGrant("coder-1", now, time.Hour)
	noPattern.Pattern = airlock.GrantPattern{Kind: airlock.PatternPath, Path: "relative/dir"}
	bad("a relative directory", noPattern, airlock.EINVALID)
	if after := len(events(t, s, airlock.EventFilter{})); after != before {
		t.Errorf("refused grants appended %d events", after-before)
	}
	if _, err := s.Grant(ctx(t), "no-such-grant"); airlock.ErrorCode(err) != airlock.ENOTFOUND {
		t.Errorf("an unknown grant: %v, want ENOTFOUND", err)
	}

	// Revocation: exactly once among racers, audited once.
	clock.Advance(time.Minute)
	var wg sync.WaitGroup
	results := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			_, err := s.RevokeGrant(ctx(t), g.ID, "bob", "no longer needed")
			results <- err
		})
	}
	wg.Wait()
	close(results)
	won := 0
	for err := range results {
		switch {
		case err == nil:
			won++
		case airlock.ErrorCode(err) != airlock.ECONFLICT:
			t.Errorf("a losing revocation: %v, want ECONFLICT", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d revocations won, want exactly 1", won)
	}
	got, err = s.Grant(ctx(t), g.ID)
	if err != nil || !got.Revoked.Equal(clock.Now()) || got.RevokedBy != "bob" || got.RevokeReason != "no longer needed" ||
		got.Live(clock.Now()) {
		t.Fatalf("revoked grant %+v, %v", got, err)
	}
	if evs := events(t, s, airlock.EventFilter{Kind: airlock.EventGrantRevoked}); len(evs) != 1 || evs[0].Outcome != "revoked" {
		t.Errorf("grant.revoked events %+v, want one", evs)
	}
	if ids := list(airlock.GrantFilter{Agent: "coder-1", LiveAt: clock.Now()}); !same(ids) {
		t.Errorf("live grants of coder-1 after the revocation: %v, want none", ids)
	}
	if got, err := s.ExpireGrants(ctx(t), airlock.MaxPageSize); err != nil || len(got) != 0 {
		t.Errorf("expiring grants before any expired: %v, %v", got, err)
	}
	clock.Advance(2 * time.Hour)
	if _, err := s.RevokeGrant(ctx(t), glob.ID, "bob", ""); airlock.ErrorCode(err) != airlock.ECONFLICT {
		t.Errorf("revoking an expired grant: %v, want ECONFLICT", err)
	}
	// Expiry is audited once per grant, never for a revoked one.
	if got, err := s.ExpireGrants(ctx(t), airlock.MaxPageSize); err != nil || len(got) != 1 || got[0].ID != glob.ID {
		t.Errorf("expiring grants: %v, %v; want the glob's %s alone", got, err, glob.ID)
	}
	if got, err := s.ExpireGrants(ctx(t), airlock.MaxPageSize); err != nil || len(got) != 0 {
		t.Errorf("expiring grants again: %v, %v; want none", got, err)
	}
	if evs := events(t, s, airlock.EventFilter{Kind: airlock.EventGrantExpired}); len(evs) != 1 || evs[0].Outcome != "expired" {
		t.Errorf("grant.expired events %+v, want one", evs)
	}
	if _, err := s.RevokeGrant(ctx(t), "no-such-grant", "bob", ""); airlock.ErrorCode(err) != airlock.ENOTFOUND {
		t.Errorf("revoking an unknown grant: %v, want ENOTFOUND", err)
	}
}

// testGrantsUnlimited: more live grants than a page are all listed when
// the filter says Unlimited (what a gate puts in force), a page otherwise.
func testGrantsUnlimited(t *testing.T, s airlock.Store, clock *Clock) {
	const n = airlock.MaxPageSize + 5
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			g := newGrant(fmt.Sprintf("agent-%d", i), clock.Now(), time.Hour)
			if _, err := s.CreateGrant(t.Context(), g); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	all, err := s.Grants(ctx(t), airlock.GrantFilter{LiveAt: clock.Now(), Unlimited: true})
	if err != nil || len(all) != n {
		t.Fatalf("unlimited: %d grants, %v; want %d", len(all), err, n)
	}
	page, err := s.Grants(ctx(t), airlock.GrantFilter{LiveAt: clock.Now(), Limit: airlock.MaxPageSize})
	if err != nil || len(page) != airlock.MaxPageSize {
		t.Fatalf("a page: %d grants, %v; want %d", len(page), err, airlock.MaxPageSize)
	}
}
