package airlocktest

import (
	"crypto/sha256"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
)

func testSessions(t *testing.T, s airlock.Store, clock *Clock) {
	id := func(n string) airlock.Hash { return sha256.Sum256([]byte("session " + n)) }
	code := func(err error) string { return airlock.ErrorCode(err) }
	start := clock.Now()
	a := airlock.Session{ID: id("a"), TokenID: "reviewer:bob", Secret: airlock.HashTokenSecret("airlock_bob"),
		Created: start, Seen: start}
	if err := s.CreateSession(ctx(t), a); err != nil {
		t.Fatal(err)
	}
	got, err := s.Session(ctx(t), a.ID)
	if err != nil || got != a {
		t.Fatalf("Session: %+v, %v; want %+v", got, err, a)
	}
	if err := s.CreateSession(ctx(t), a); code(err) != airlock.ECONFLICT {
		t.Errorf("CreateSession with an ID that exists: %v, want ECONFLICT", err)
	}
	for _, bad := range []airlock.Session{
		{TokenID: "t", Secret: a.Secret, Created: start, Seen: start},
		{ID: id("x"), Secret: a.Secret, Created: start, Seen: start},
		{ID: id("x"), TokenID: "t", Created: start, Seen: start},
	} {
		if err := s.CreateSession(ctx(t), bad); code(err) != airlock.EINVALID {
			t.Errorf("CreateSession(%+v): %v, want EINVALID", bad, err)
		}
	}
	if _, err := s.Session(ctx(t), id("none")); code(err) != airlock.ENOTFOUND {
		t.Errorf("Session of an unknown ID: %v, want ENOTFOUND", err)
	}

	// Seen moves forward, never back.
	later := start.Add(10 * time.Minute)
	if err := s.TouchSession(ctx(t), a.ID, later); err != nil {
		t.Fatal(err)
	}
	if err := s.TouchSession(ctx(t), a.ID, start.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Session(ctx(t), a.ID); err != nil || !got.Seen.Equal(later) || !got.Created.Equal(start) {
		t.Errorf("after touches: %+v, %v; want seen %s, created %s", got, err, later, start)
	}
	if err := s.TouchSession(ctx(t), id("none"), later); code(err) != airlock.ENOTFOUND {
		t.Errorf("TouchSession of an unknown ID: %v, want ENOTFOUND", err)
	}

	// Pruning: b is idle past the cutoff, c too old, a and d neither.
	b := airlock.Session{ID: id("b"), TokenID: "reviewer:bob", Secret: a.Secret, Created: start, Seen: start}
	c := airlock.Session{ID: id("c"), TokenID: "admin:root", Secret: airlock.HashTokenSecret("airlock_root"),
		Created: start.Add(-13 * time.Hour), Seen: later}
	d := airlock.Session{ID: id("d"), TokenID: "admin:root", Secret: c.Secret, Created: later, Seen: later}
	for _, x := range []airlock.Session{b, c, d} {
		if err := s.CreateSession(ctx(t), x); err != nil {
			t.Fatal(err)
		}
	}
	n, err := s.DeleteExpiredSessions(ctx(t), start.Add(time.Minute), start.Add(-12*time.Hour))
	if err != nil || n != 2 {
		t.Errorf("DeleteExpiredSessions: %d, %v; want 2", n, err)
	}
	for _, x := range []struct {
		s    airlock.Session
		kept bool
	}{{a, true}, {b, false}, {c, false}, {d, true}} {
		_, err := s.Session(ctx(t), x.s.ID)
		if kept := err == nil; kept != x.kept || (err != nil && code(err) != airlock.ENOTFOUND) {
			t.Errorf("session created %s, seen %s after pruning: %v, want kept %v", x.s.Created, x.s.Seen, err, x.kept)
		}
	}

	// Deleted, it is gone; deleting it again is no error. Sessions are
	// not audit events.
	head, err := s.Head(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteSession(ctx(t), a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Session(ctx(t), a.ID); code(err) != airlock.ENOTFOUND {
		t.Errorf("Session after DeleteSession: %v, want ENOTFOUND", err)
	}
	if err := s.DeleteSession(ctx(t), a.ID); err != nil {
		t.Errorf("DeleteSession of a session already gone: %v", err)
	}
	if got, _ := s.Head(ctx(t)); got != head {
		t.Errorf("sessions appended events: head %d, was %d", got, head)
	}
	if _, err := s.Session(ctx(t), d.ID); err != nil {
		t.Errorf("another session after DeleteSession: %v", err)
	}
}
