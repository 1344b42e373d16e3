package airlocktest

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
)

// testPasskeys: an enrolment lets its person register one passkey, once,
// before it expires; registrations and removals are audited with them; a
// credential is registered once.
func testPasskeys(t *testing.T, s airlock.Store, clock *Clock) {
	now := clock.Now()
	enrol := func(code, who string, ttl time.Duration) airlock.Hash {
		t.Helper()
		h := airlock.HashTokenSecret(code)
		ev := airlock.NewEvent(airlock.EventPasskeyEnrolment, nil, "", "", map[string]string{"reviewer": who})
		if err := s.CreateEnrolment(ctx(t), airlock.PasskeyEnrolment{Code: h, Reviewer: who, By: "ops", Created: now, Expires: now.Add(ttl)},
			airlock.Record{Events: []airlock.Event{ev}}); err != nil {
			t.Fatal(err)
		}
		return h
	}
	code := enrol("pk_bob", "bob", time.Hour)
	if err := s.CreateEnrolment(ctx(t), airlock.PasskeyEnrolment{Code: code, Reviewer: "bob", By: "ops", Created: now, Expires: now.Add(time.Hour)}, airlock.Record{}); airlock.ErrorCode(err) != airlock.ECONFLICT {
		t.Fatalf("the same code twice: %v, want conflict", err)
	}
	if err := s.CreateEnrolment(ctx(t), airlock.PasskeyEnrolment{Code: airlock.HashTokenSecret("x"), Reviewer: "bob", By: "ops", Created: now, Expires: now}, airlock.Record{}); airlock.ErrorCode(err) != airlock.EINVALID {
		t.Fatalf("an enrolment that expires as it is made: %v, want invalid", err)
	}
	e, err := s.StartEnrolment(ctx(t), code, json.RawMessage(`{"challenge":"c"}`))
	if err != nil || e.Reviewer != "bob" || e.By != "ops" {
		t.Fatalf("start: %+v, %v", e, err)
	}
	if e, err = s.StartEnrolment(ctx(t), code, json.RawMessage(`{"challenge":"d"}`)); err != nil || string(e.Session) != `{"challenge":"d"}` {
		t.Fatalf("a second start replaces the ceremony under way: %s, %v", e.Session, err)
	}
	if e, err = s.StartEnrolment(ctx(t), code, nil); err != nil || string(e.Session) != `{"challenge":"d"}` {
		t.Fatalf("a read keeps the ceremony: %s, %v", e.Session, err)
	}
	if _, err := s.StartEnrolment(ctx(t), airlock.HashTokenSecret("pk_nobody"), nil); airlock.ErrorCode(err) != airlock.ENOTFOUND {
		t.Fatalf("an unknown code: %v, want not found", err)
	}
	c := airlock.PasskeyCredential{ID: []byte("cred-1"), Reviewer: "bob", Name: "laptop", PublicKey: []byte{1, 2, 3},
		Credential: json.RawMessage(`{"id":"Y3JlZC0x"}`), Created: now}
	reg := airlock.NewEvent(airlock.EventPasskeyRegistered, nil, "", "", airlock.PasskeyRegistered{Reviewer: "bob", CredentialID: c.ID, PublicKey: c.PublicKey})
	wrong := c
	wrong.Reviewer = "carol"
	if err := s.RegisterPasskey(ctx(t), code, wrong, airlock.Record{}); airlock.ErrorCode(err) != airlock.EINVALID {
		t.Fatalf("bob's code for carol's passkey: %v, want invalid", err)
	}
	if err := s.RegisterPasskey(ctx(t), code, c, airlock.Record{Events: []airlock.Event{reg}}); err != nil {
		t.Fatal(err)
	}
	if err := s.RegisterPasskey(ctx(t), code, c, airlock.Record{}); airlock.ErrorCode(err) != airlock.ENOTFOUND {
		t.Fatalf("a used code: %v, want not found", err)
	}
	again := enrol("pk_bob2", "bob", time.Hour)
	if err := s.RegisterPasskey(ctx(t), again, c, airlock.Record{}); airlock.ErrorCode(err) != airlock.ECONFLICT {
		t.Fatalf("the same credential twice: %v, want conflict", err)
	}
	late := enrol("pk_late", "bob", time.Minute)
	clock.Advance(time.Minute)
	if err := s.RegisterPasskey(ctx(t), late, airlock.PasskeyCredential{ID: []byte("cred-2"), Reviewer: "bob", PublicKey: []byte{4},
		Credential: json.RawMessage(`{}`), Created: now}, airlock.Record{}); airlock.ErrorCode(err) != airlock.ENOTFOUND {
		t.Fatalf("an expired code: %v, want not found", err)
	}
	got, err := s.Passkeys(ctx(t), "bob")
	if err != nil || len(got) != 1 || string(got[0].ID) != "cred-1" || got[0].Name != "laptop" || string(got[0].PublicKey) != "\x01\x02\x03" {
		t.Fatalf("bob's passkeys: %+v, %v", got, err)
	}
	if others, err := s.Passkeys(ctx(t), "carol"); err != nil || len(others) != 0 {
		t.Fatalf("carol's passkeys: %+v, %v", others, err)
	}
	if err := s.RemovePasskey(ctx(t), "carol", c.ID, airlock.Record{}); airlock.ErrorCode(err) != airlock.ENOTFOUND {
		t.Fatalf("carol removes bob's passkey: %v, want not found", err)
	}
	rm := airlock.NewEvent(airlock.EventPasskeyRemoved, nil, "", "", airlock.PasskeyRegistered{Reviewer: "bob", CredentialID: c.ID})
	if err := s.RemovePasskey(ctx(t), "bob", c.ID, airlock.Record{Events: []airlock.Event{rm}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Passkeys(ctx(t), "bob"); len(got) != 0 {
		t.Fatalf("after removal: %+v", got)
	}
	var kinds []string
	for _, e := range events(t, s, airlock.EventFilter{}) {
		if strings.HasPrefix(e.Kind, "reviewer.") {
			kinds = append(kinds, e.Kind)
		}
	}
	want := []string{airlock.EventPasskeyEnrolment, airlock.EventPasskeyRegistered, airlock.EventPasskeyEnrolment, airlock.EventPasskeyEnrolment, airlock.EventPasskeyRemoved}
	if !slices.Equal(kinds, want) {
		t.Fatalf("audited %v, want %v", kinds, want)
	}
}
