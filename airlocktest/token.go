package airlocktest

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/google/uuid"
)

// newToken returns a valid token of the given role, not yet stored, with a
// fresh ID.
func newToken(role airlock.Role, name string) airlock.Token {
	t := airlock.Token{ID: uuid.Must(uuid.NewV7()).String(), Role: role, Name: name, CreatedBy: "admin:root"}
	if role == airlock.RoleAgent {
		t.Agent = name
	}
	return t
}

// sameToken reports whether two tokens are equal, their times compared as
// instants.
func sameToken(a, b airlock.Token) bool {
	return a.ID == b.ID && a.Role == b.Role && a.Name == b.Name && a.Agent == b.Agent && a.CreatedBy == b.CreatedBy &&
		a.Created.Equal(b.Created) && a.Expires.Equal(b.Expires) && a.Revoked.Equal(b.Revoked) && a.RevokedBy == b.RevokedBy
}

func testTokens(t *testing.T, s airlock.Store, clock *Clock) {
	type created struct {
		tok    airlock.Token
		secret string
		hash   airlock.Hash
	}
	var made []created
	for _, role := range airlock.Roles {
		tok := newToken(role, "holder-"+string(role))
		secret, h := airlock.NewTokenSecret()
		got, err := s.CreateToken(ctx(t), tok, h)
		if err != nil {
			t.Fatalf("create %s token: %v", role, err)
		}
		if !got.Created.Equal(clock.Now()) {
			t.Fatalf("created %v, want the store clock's %v", got.Created, clock.Now())
		}
		if got.ID != tok.ID || got.Role != role || got.Name != tok.Name || got.Agent != tok.Agent ||
			got.CreatedBy != "admin:root" || !got.Revoked.IsZero() || !got.Live(clock.Now()) {
			t.Fatalf("created %+v from %+v", got, tok)
		}
		made = append(made, created{got, secret, h})
		clock.Advance(time.Minute)
	}

	// Refusals write nothing.
	before := events(t, s, airlock.EventFilter{})
	noAgent := newToken(airlock.RoleAgent, "coder")
	noAgent.Agent = ""
	asAgent := newToken(airlock.RoleReviewer, "bob")
	asAgent.Agent = "coder"
	noName := newToken(airlock.RoleAdmin, "")
	noID := newToken(airlock.RoleAdmin, "ops")
	noID.ID = ""
	badRole := newToken("root", "ops")
	for _, bad := range []airlock.Token{noAgent, asAgent, noName, noID, badRole} {
		_, h := airlock.NewTokenSecret()
		_, err := s.CreateToken(ctx(t), bad, h)
		wantCode(t, err, airlock.EINVALID)
	}
	_, err := s.CreateToken(ctx(t), newToken(airlock.RoleAdmin, "ops"), airlock.Hash{})
	wantCode(t, err, airlock.EINVALID) // no secret hash

	// The same ID or the same secret is a conflict.
	_, fresh := airlock.NewTokenSecret()
	_, err = s.CreateToken(ctx(t), made[0].tok, fresh)
	wantCode(t, err, airlock.ECONFLICT)
	_, err = s.CreateToken(ctx(t), newToken(airlock.RoleAdmin, "ops"), made[1].hash)
	wantCode(t, err, airlock.ECONFLICT)
	if after := events(t, s, airlock.EventFilter{}); len(after) != len(before) {
		t.Fatalf("refused creations appended %d events", len(after)-len(before))
	}

	// A token is found by the hash of its secret, and only by it.
	for _, m := range made {
		got, err := s.TokenBySecret(ctx(t), airlock.HashTokenSecret(m.secret))
		if err != nil {
			t.Fatalf("token by secret: %v", err)
		}
		if !sameToken(got, m.tok) {
			t.Fatalf("token by secret:\n got %+v\nwant %+v", got, m.tok)
		}
	}
	_, err = s.TokenBySecret(ctx(t), airlock.HashTokenSecret("airlock_unknown"))
	wantCode(t, err, airlock.ENOTFOUND)

	// An expiry is kept as given.
	expiring := newToken(airlock.RoleReviewer, "temp")
	expiring.Expires = clock.Now().Add(time.Hour)
	_, expHash := airlock.NewTokenSecret()
	if _, err := s.CreateToken(ctx(t), expiring, expHash); err != nil {
		t.Fatal(err)
	}
	got, err := s.TokenBySecret(ctx(t), expHash)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Expires.Equal(expiring.Expires) || !got.Live(clock.Now()) || got.Live(expiring.Expires) {
		t.Fatalf("expiring token read back as %+v", got)
	}

	// Tokens lists every token, oldest first.
	list, err := s.Tokens(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	var ids, want []string
	for _, tok := range list {
		ids = append(ids, tok.ID)
	}
	for _, m := range made {
		want = append(want, m.tok.ID)
	}
	want = append(want, expiring.ID)
	if !slices.Equal(ids, want) {
		t.Fatalf("tokens %v, want %v", ids, want)
	}

	// Revocation happens once, on the store's clock.
	clock.Advance(time.Minute)
	victim := made[0].tok
	revoked, err := s.RevokeToken(ctx(t), victim.ID, "admin:ops")
	if err != nil {
		t.Fatal(err)
	}
	if !revoked.Revoked.Equal(clock.Now()) || revoked.RevokedBy != "admin:ops" || revoked.Live(clock.Now()) {
		t.Fatalf("revoked token %+v, want revoked at %v by admin:ops", revoked, clock.Now())
	}
	_, err = s.RevokeToken(ctx(t), victim.ID, "admin:other")
	wantCode(t, err, airlock.ECONFLICT)
	_, err = s.RevokeToken(ctx(t), uuid.Must(uuid.NewV7()).String(), "admin:ops")
	wantCode(t, err, airlock.ENOTFOUND)

	// A revoked token is still found, so that the caller can say why it is
	// refused; it is not live.
	got, err = s.TokenBySecret(ctx(t), made[0].hash)
	if err != nil {
		t.Fatal(err)
	}
	if !sameToken(got, revoked) || got.Live(clock.Now()) {
		t.Fatalf("revoked token read back as %+v, want %+v", got, revoked)
	}
	if other, err := s.TokenBySecret(ctx(t), made[1].hash); err != nil || !other.Live(clock.Now()) {
		t.Fatalf("revoking one token touched another: %+v, %v", other, err)
	}

	// Creation and revocation are audited; no secret is.
	evs := events(t, s, airlock.EventFilter{})
	want = append(slices.Repeat([]string{airlock.EventTokenCreated}, len(made)+1), airlock.EventTokenRevoked)
	if got := kinds(evs); !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	var last airlock.Token
	if err := json.Unmarshal(evs[len(evs)-1].Payload, &last); err != nil {
		t.Fatal(err)
	}
	if last.ID != victim.ID || last.RevokedBy != "admin:ops" || !last.Revoked.Equal(revoked.Revoked) {
		t.Fatalf("token.revoked payload %s, want token %s revoked by admin:ops", evs[len(evs)-1].Payload, victim.ID)
	}
	for _, e := range evs {
		for _, m := range made {
			if strings.Contains(string(e.Payload), m.secret) || strings.Contains(string(e.Payload), m.hash.String()) {
				t.Fatalf("event %d (%s) carries a token secret: %s", e.Seq, e.Kind, e.Payload)
			}
		}
	}
	MustVerify(t, s)
}

func testWaitEvents(t *testing.T, s airlock.Store, _ *Clock) {
	// Nothing new: the wait lasts until its context ends.
	c, cancel := context.WithTimeout(ctx(t), 50*time.Millisecond)
	defer cancel()
	if err := s.WaitEvents(c, 0); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("wait on an empty log: %v, want context.DeadlineExceeded", err)
	}

	if head, err := s.Head(ctx(t)); err != nil || head != 0 {
		t.Fatalf("head of an empty log: %d, %v; want 0", head, err)
	}

	// Events after the mark: it returns at once.
	if _, err := s.Append(ctx(t), airlock.Record{Events: []airlock.Event{Event("decision", "a"), Event("decision", "a")}}); err != nil {
		t.Fatal(err)
	}
	if head, err := s.Head(ctx(t)); err != nil || head != 2 {
		t.Fatalf("head after two events: %d, %v; want 2", head, err)
	}
	for _, after := range []int64{0, 1} {
		if err := s.WaitEvents(ctx(t), after); err != nil {
			t.Fatalf("wait after %d with 2 events: %v", after, err)
		}
	}

	// None after it: it blocks until another goroutine appends.
	wait := func(after int64) <-chan error {
		done := make(chan error, 1)
		go func() { done <- s.WaitEvents(ctx(t), after) }()
		select {
		case err := <-done:
			t.Fatalf("wait after %d returned %v before anything was appended", after, err)
		case <-time.After(100 * time.Millisecond):
		}
		return done
	}
	woken := func(done <-chan error, what string) {
		t.Helper()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("wait woken by %s: %v", what, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("WaitEvents did not wake after %s", what)
		}
	}
	done := wait(2)
	if _, err := s.Append(ctx(t), airlock.Record{Events: []airlock.Event{Event("decision", "b")}}); err != nil {
		t.Fatal(err)
	}
	woken(done, "an append")

	// Any write that appends events wakes it, not only Append.
	done = wait(3)
	mustRequest(t, s, NewApproval("a", "make deploy", airlock.Ask, time.Hour), airlock.Record{})
	woken(done, "an approval request")
	evs := events(t, s, airlock.EventFilter{})
	done = wait(evs[len(evs)-1].Seq)
	_, h := airlock.NewTokenSecret()
	if _, err := s.CreateToken(ctx(t), newToken(airlock.RoleAdmin, "ops"), h); err != nil {
		t.Fatal(err)
	}
	woken(done, "a token's creation")

	// A context that ends while it waits ends the wait.
	c, cancel = context.WithCancel(ctx(t))
	ended := make(chan error, 1)
	go func() { ended <- s.WaitEvents(c, 1000) }()
	cancel()
	select {
	case err := <-ended:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("wait with a cancelled context: %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("WaitEvents did not end with its context")
	}
}
