package airlocktest

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
)

func testSessions(t *testing.T, s airlock.Store, clock *Clock) {
	id := func(n string) airlock.Hash { return sha256.Sum256([]byte("session " + n)) }
	code := func(err error) string { return airlock.ErrorCode(err) }
	const perToken = 32
	start := clock.Now()
	a := airlock.Session{ID: id("a"), TokenID: "reviewer:bob", Secret: airlock.HashTokenSecret("airlock_bob"),
		Created: start, Seen: start}
	if _, err := s.CreateSession(ctx(t), a, perToken); err != nil {
		t.Fatal(err)
	}
	got, err := s.Session(ctx(t), a.ID)
	if err != nil || got != a {
		t.Fatalf("Session: %+v, %v; want %+v", got, err, a)
	}
	if _, err := s.CreateSession(ctx(t), a, perToken); code(err) != airlock.ECONFLICT {
		t.Errorf("CreateSession with an ID that exists: %v, want ECONFLICT", err)
	}
	for _, bad := range []airlock.Session{
		{TokenID: "t", Secret: a.Secret, Created: start, Seen: start},
		{ID: id("x"), Secret: a.Secret, Created: start, Seen: start},
		{ID: id("x"), TokenID: "t", Created: start, Seen: start},
	} {
		if _, err := s.CreateSession(ctx(t), bad, perToken); code(err) != airlock.EINVALID {
			t.Errorf("CreateSession(%+v): %v, want EINVALID", bad, err)
		}
	}
	if _, err := s.Session(ctx(t), id("none")); code(err) != airlock.ENOTFOUND {
		t.Errorf("Session of an unknown ID: %v, want ENOTFOUND", err)
	}

	// A single sign-on session keeps its person, and no token secret.
	sam := &airlock.Person{Name: "sam", Role: airlock.RoleReviewer, Groups: []string{"dev", "sre"}, Issuer: "https://idp.example", Subject: "u-sam"}
	sso := airlock.Session{ID: id("sso"), TokenID: "sso:sam", Created: start, Seen: start, Person: sam}
	if _, err := s.CreateSession(ctx(t), sso, perToken); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Session(ctx(t), sso.ID); err != nil || got.Person == nil || !reflect.DeepEqual(*got.Person, *sam) || !got.Secret.IsZero() {
		t.Fatalf("the single sign-on session: %+v, %v", got, err)
	}
	if err := s.DeleteSession(ctx(t), sso.ID); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []airlock.Session{
		{ID: id("y"), TokenID: "sso:x", Created: start, Seen: start, Person: &airlock.Person{Name: "x"}},
		{ID: id("y"), TokenID: "sso:x", Secret: a.Secret, Created: start, Seen: start, Person: sam},
	} {
		if _, err := s.CreateSession(ctx(t), bad, perToken); code(err) != airlock.EINVALID {
			t.Errorf("CreateSession(%+v): %v, want EINVALID", bad, err)
		}
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
		if _, err := s.CreateSession(ctx(t), x, perToken); err != nil {
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

// testSessionsPerToken: creating a session ends its token's least recently
// used ones past the limit, atomically, however many create at once.
func testSessionsPerToken(t *testing.T, s airlock.Store, clock *Clock) {
	id := func(n string) airlock.Hash { return sha256.Sum256([]byte("session " + n)) }
	code := func(err error) string { return airlock.ErrorCode(err) }
	start := clock.Now()
	bobSecret := airlock.HashTokenSecret("airlock_bob")
	session := func(n, token string, created, seen time.Duration) airlock.Session {
		return airlock.Session{ID: id(n), TokenID: token, Secret: bobSecret, Created: start.Add(created), Seen: start.Add(seen)}
	}
	create := func(x airlock.Session, perToken int, want ...string) {
		t.Helper()
		ended, err := s.CreateSession(ctx(t), x, perToken)
		if err != nil {
			t.Fatalf("CreateSession(%x, %d): %v", x.ID[:4], perToken, err)
		}
		var wantIDs []airlock.Hash
		for _, n := range want {
			wantIDs = append(wantIDs, id(n))
		}
		sortHashes(ended)
		sortHashes(wantIDs)
		if !slices.Equal(ended, wantIDs) {
			t.Errorf("CreateSession(%x, %d) ended %d sessions, want those of %q", x.ID[:4], perToken, len(ended), want)
		}
	}
	stored := func(names ...string) {
		t.Helper()
		for _, n := range names {
			if _, err := s.Session(ctx(t), id(n)); err != nil {
				t.Errorf("session %s: %v, want it kept", n, err)
			}
		}
	}
	gone := func(names ...string) {
		t.Helper()
		for _, n := range names {
			if _, err := s.Session(ctx(t), id(n)); code(err) != airlock.ENOTFOUND {
				t.Errorf("session %s: %v, want ENOTFOUND (trimmed)", n, err)
			}
		}
	}

	// Another token's session, older than all: never trimmed for bob.
	create(session("root", "admin:root", 0, 0), 1)
	create(session("b1", "reviewer:bob", time.Minute, time.Minute), 3)
	create(session("b2", "reviewer:bob", 2*time.Minute, 2*time.Minute), 3)
	create(session("b3", "reviewer:bob", 3*time.Minute, 3*time.Minute), 3)
	create(session("b4", "reviewer:bob", 4*time.Minute, 4*time.Minute), 3, "b1")
	gone("b1")
	stored("root", "b2", "b3", "b4")

	// Last used, not first created: b2's later request makes b3 the least
	// recently used. The new session stays whatever its times (another
	// replica's clock may lag).
	if err := s.TouchSession(ctx(t), id("b2"), start.Add(10*time.Minute)); err != nil {
		t.Fatal(err)
	}
	create(session("b5", "reviewer:bob", 0, 0), 3, "b3")
	gone("b3")
	stored("root", "b2", "b4", "b5")

	// Seen alike: the older created goes first.
	create(session("c1", "admin:carol", 0, 5*time.Minute), 2)
	create(session("c2", "admin:carol", time.Minute, 5*time.Minute), 2)
	create(session("c3", "admin:carol", 2*time.Minute, 2*time.Minute), 2, "c1")
	stored("c2", "c3")

	// One session a token: every other ends.
	create(session("b6", "reviewer:bob", 20*time.Minute, 20*time.Minute), 1, "b2", "b4", "b5")
	stored("root", "b6")

	// Refused: nothing is stored, nothing trimmed.
	if _, err := s.CreateSession(ctx(t), session("root", "reviewer:bob", 30*time.Minute, 30*time.Minute), 1); code(err) != airlock.ECONFLICT {
		t.Errorf("CreateSession with another token's ID: %v, want ECONFLICT", err)
	}
	for _, n := range []int{0, -1} {
		if _, err := s.CreateSession(ctx(t), session("b7", "reviewer:bob", 30*time.Minute, 30*time.Minute), n); code(err) != airlock.EINVALID {
			t.Errorf("CreateSession with %d sessions a token: %v, want EINVALID", n, err)
		}
	}
	gone("b7")
	stored("root", "b6")

	// Sign-ins at once (on several replicas, or connections of one) are
	// counted one after another: the limit holds, and each session is
	// reported ended once.
	const n, limit = 16, 4
	var wg sync.WaitGroup
	results := make([][]airlock.Hash, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			x := session(fmt.Sprint("m", i), "reviewer:many", time.Duration(i)*time.Second, time.Duration(i)*time.Second)
			results[i], errs[i] = s.CreateSession(ctx(t), x, limit)
		})
	}
	wg.Wait()
	reported := map[airlock.Hash]int{}
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("concurrent CreateSession %d: %v", i, errs[i])
		}
		for _, k := range results[i] {
			reported[k]++
		}
	}
	kept := 0
	for i := range n {
		k := id(fmt.Sprint("m", i))
		_, err := s.Session(ctx(t), k)
		switch {
		case err == nil:
			kept++
			if reported[k] != 0 {
				t.Errorf("session m%d reported ended but kept", i)
			}
		case code(err) != airlock.ENOTFOUND:
			t.Fatal(err)
		case reported[k] != 1:
			t.Errorf("session m%d trimmed, reported ended %d times, want once", i, reported[k])
		}
	}
	if kept != limit {
		t.Errorf("%d sign-ins at once, %d sessions a token: %d kept", n, limit, kept)
	}
}

func sortHashes(hs []airlock.Hash) {
	slices.SortFunc(hs, func(a, b airlock.Hash) int { return bytes.Compare(a[:], b[:]) })
}
