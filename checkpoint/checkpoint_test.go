package checkpoint_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
	"github.com/airlock-dev/airlock/checkpoint"
	"github.com/airlock-dev/airlock/sqlite"
	"golang.org/x/mod/sumdb/note"
)

func testCheckpoint() checkpoint.Checkpoint {
	return checkpoint.Checkpoint{Origin: checkpoint.LogOrigin(sha256.Sum256([]byte("first"))), Seq: 57, Hash: sha256.Sum256([]byte("head"))}
}

func signed(t *testing.T, c checkpoint.Checkpoint, skey string) string {
	t.Helper()
	s, _, err := checkpoint.ParseSignerKey(skey)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := c.Sign(s)
	if err != nil {
		t.Fatal(err)
	}
	return msg
}

func verifiers(t *testing.T, vkeys ...string) note.Verifiers {
	t.Helper()
	keys, err := checkpoint.ParseVerifierKeys(vkeys)
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

func TestCheckpointRoundTrip(t *testing.T) {
	skey, vkey := airlocktest.CheckpointKey(t, 1)
	_, derived, err := checkpoint.ParseSignerKey(skey)
	if err != nil {
		t.Fatal(err)
	}
	if derived != vkey {
		t.Fatalf("verifier key derived from the signer key %q, want %q", derived, vkey)
	}
	c := testCheckpoint()
	msg := signed(t, c, skey)
	// The C2SP shape: origin, seq, base64 hash; a blank line; one signature.
	text, sig, ok := strings.Cut(msg, "\n\n")
	wantText := c.Origin + "\n57\n" + base64.StdEncoding.EncodeToString(c.Hash[:])
	if !ok || text != wantText || !strings.HasPrefix(c.Origin, "airlock/log/") || !strings.HasPrefix(sig, "— airlock ") {
		t.Fatalf("signed note:\n%s", msg)
	}
	got, err := checkpoint.Open([]byte(msg), verifiers(t, vkey))
	if err != nil {
		t.Fatal(err)
	}
	if got != c {
		t.Errorf("opened %+v, want %+v", got, c)
	}
	// A key ring with other keys beside the signer's opens it too.
	_, other := airlocktest.CheckpointKey(t, 2)
	if _, err := checkpoint.Open([]byte(msg), verifiers(t, other, vkey)); err != nil {
		t.Errorf("with two keys: %v", err)
	}
}

func TestOpenCheckpointRefuses(t *testing.T) {
	skey, vkey := airlocktest.CheckpointKey(t, 1)
	_, other := airlocktest.CheckpointKey(t, 2)
	msg := signed(t, testCheckpoint(), skey)
	for _, tt := range []struct {
		name, msg, vkey, kind, says string
	}{
		{"wrong key", msg, other, checkpoint.UnknownKey, "wrong key: the checkpoint is signed by airlock (key hash"},
		{"tampered seq", strings.Replace(msg, "\n57\n", "\n58\n", 1), vkey, checkpoint.BadSignature, "bad signature"},
		{"tampered origin", strings.Replace(msg, "airlock/log/", "airlock/lag/", 1), vkey, checkpoint.BadSignature, "bad signature"},
		{"tampered signature", msg[:len(msg)-6] + "AAAA=\n", vkey, checkpoint.BadSignature, "bad signature"},
		{"no signature", strings.SplitAfter(msg, "\n\n")[0], vkey, checkpoint.Malformed, "not a signed checkpoint"},
		{"not a note", "hello", vkey, checkpoint.Malformed, "not a signed checkpoint"},
		{"signed, not a checkpoint", signedText(t, skey, "hello\nworld\n"), vkey, checkpoint.Malformed, "not an airlock checkpoint"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := checkpoint.Open([]byte(tt.msg), verifiers(t, tt.vkey))
			var ce *checkpoint.Error
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want a *CheckpointError", err)
			}
			if ce.Kind != tt.kind || !strings.Contains(ce.Msg, tt.says) {
				t.Errorf("err = %s %q, want %s saying %q", ce.Kind, ce.Msg, tt.kind, tt.says)
			}
		})
	}
}

// signedText signs any text with skey.
func signedText(t *testing.T, skey, text string) string {
	t.Helper()
	s, _, err := checkpoint.ParseSignerKey(skey)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := note.Sign(&note.Note{Text: text}, s)
	if err != nil {
		t.Fatal(err)
	}
	return string(msg)
}

func TestParseCheckpoint(t *testing.T) {
	good := testCheckpoint().Text()
	if got, err := checkpoint.Parse(good); err != nil || got != testCheckpoint() {
		t.Fatalf("ParseCheckpoint(%q) = %+v, %v", good, got, err)
	}
	if _, err := checkpoint.Parse(good + "extension line\n"); err != nil {
		t.Errorf("an extension line: %v", err)
	}
	lines := strings.Split(good, "\n")
	for _, bad := range []string{
		"",
		strings.TrimSuffix(good, "\n"),
		"\n57\n" + lines[2] + "\n",
		"a b\n57\n" + lines[2] + "\n",
		lines[0] + "\n057\n" + lines[2] + "\n",
		lines[0] + "\n0\n" + lines[2] + "\n",
		lines[0] + "\n-3\n" + lines[2] + "\n",
		lines[0] + "\n57\n" + lines[2][:20] + "\n",
		lines[0] + "\n57\n" + strings.Repeat("0", 64) + "\n",
	} {
		if _, err := checkpoint.Parse(bad); err == nil {
			t.Errorf("ParseCheckpoint(%q) succeeded", bad)
		}
	}
}

// TestParseSignerKeyAnyKey parses keys whose base64 holds '+' and '/'.
func TestParseSignerKeyAnyKey(t *testing.T) {
	for i := range 64 {
		skey, vkey, err := note.GenerateKey(rand.Reader, checkpoint.KeyName)
		if err != nil {
			t.Fatal(err)
		}
		_, got, err := checkpoint.ParseSignerKey(skey)
		if err != nil || got != vkey {
			t.Fatalf("key %d: ParseSignerKey = %q, %v; want %q", i, got, err, vkey)
		}
	}
}

func TestParseKeysRefuseMalformed(t *testing.T) {
	skey, vkey := airlocktest.CheckpointKey(t, 1)
	for _, bad := range []string{"", "airlock", vkey, skey[:len(skey)-4], strings.Replace(skey, "+airlock+", "+other+", 1)} {
		if _, _, err := checkpoint.ParseSignerKey(bad); err == nil {
			t.Errorf("ParseSignerKey(%q) succeeded", bad)
		}
	}
	for _, bad := range []string{"", skey, vkey[:len(vkey)-4]} {
		if _, err := checkpoint.ParseVerifierKeys([]string{bad}); err == nil {
			t.Errorf("ParseVerifierKeys(%q) succeeded", bad)
		}
	}
}

// newCheckpointer returns a checkpointer over a fresh SQLite log holding n
// events.
func newCheckpointer(t *testing.T, n int) (*checkpoint.Checkpointer, *sqlite.DB) {
	t.Helper()
	db := sqlite.NewDB(filepath.Join(t.TempDir(), "airlock.db"))
	if err := db.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	appendEvents(t, db, n)
	skey, _ := airlocktest.CheckpointKey(t, 1)
	c, err := checkpoint.New(db, skey)
	if err != nil {
		t.Fatal(err)
	}
	return c, db
}

func appendEvents(t *testing.T, db *sqlite.DB, n int) {
	t.Helper()
	for range n {
		if _, err := db.Append(context.Background(), airlock.Record{Events: []airlock.Event{airlocktest.Event("decision", "a")}}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCheckpointerSigns(t *testing.T) {
	c, db := newCheckpointer(t, 0)
	ctx := t.Context()
	if _, _, err := c.Sign(ctx); airlock.ErrorCode(err) != airlock.ECONFLICT {
		t.Fatalf("signing an empty log: %v, want a conflict", err)
	}
	if _, ok, err := c.Latest(ctx); ok || err != nil {
		t.Fatalf("latest of an empty log: %v %v", ok, err)
	}
	appendEvents(t, db, 5)
	sc, signed, err := c.Sign(ctx)
	if err != nil || !signed {
		t.Fatalf("Sign: %v %v", signed, err)
	}
	rep := airlocktest.MustVerify(t, db)
	first, _ := db.Events(ctx, airlock.EventFilter{Limit: 1})
	five, _ := db.Events(ctx, airlock.EventFilter{AfterSeq: 4, Limit: 1})
	want := checkpoint.Checkpoint{Origin: checkpoint.LogOrigin(first[0].Hash), Seq: 5, Hash: five[0].Hash}
	if sc.Checkpoint != want || sc.RecordedSeq != 6 || rep.HeadSeq != 6 || sc.Key != c.VerifierKey() {
		t.Fatalf("signed %+v (log head %d), want %+v recorded at 6", sc, rep.HeadSeq, want)
	}
	// The log records it: the note, and the key that checks it.
	rec, _ := db.Events(ctx, airlock.EventFilter{AfterSeq: 5})
	if len(rec) != 1 || rec[0].Kind != airlock.EventCheckpoint || !strings.Contains(string(rec[0].Payload), `"key":"`+sc.Key+`"`) {
		t.Fatalf("recorded %+v", rec)
	}
	opened, err := checkpoint.Open([]byte(sc.Note), verifiers(t, c.VerifierKey()))
	if err != nil || opened != want {
		t.Fatalf("the note opens as %+v, %v", opened, err)
	}

	// The head has not moved (only the checkpoint's own event follows it):
	// the same checkpoint, nothing recorded.
	again, signed, err := c.Sign(ctx)
	if err != nil || signed || again != sc {
		t.Fatalf("Sign again: %+v %v %v, want the same checkpoint", again, signed, err)
	}
	if got := airlocktest.MustVerify(t, db).HeadSeq; got != 6 {
		t.Fatalf("head %d after an unmoved Sign, want 6", got)
	}
	latest, ok, err := c.Latest(ctx)
	if err != nil || !ok || latest != sc {
		t.Fatalf("Latest %+v %v %v", latest, ok, err)
	}

	// Moved: the next checkpoint covers the first one's event too.
	appendEvents(t, db, 2)
	next, signed, err := c.Sign(ctx)
	if err != nil || !signed || next.Seq != 8 || next.RecordedSeq != 9 || next.Origin != want.Origin {
		t.Fatalf("after 2 events: %+v %v %v", next, signed, err)
	}

	// A new checkpointer (a restart) finds the latest in the log, resumes
	// verifying from it, and does not sign an unmoved head again.
	skey, _ := airlocktest.CheckpointKey(t, 1)
	restarted, err := checkpoint.New(db, skey)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok, err := restarted.Latest(ctx); err != nil || !ok || got != next {
		t.Fatalf("after a restart, Latest %+v %v %v, want %+v", got, ok, err, next)
	}
	if got, signed, err := restarted.Sign(ctx); err != nil || signed || got != next {
		t.Fatalf("after a restart, Sign %+v %v %v", got, signed, err)
	}
}

func TestCheckpointerNewKeySignsAgain(t *testing.T) {
	c, db := newCheckpointer(t, 3)
	old, _, err := c.Sign(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// The key was lost and replaced: the unmoved head is signed again, with
	// the new key, so that the latest checkpoint verifies with it.
	skey, vkey := airlocktest.CheckpointKey(t, 2)
	c2, err := checkpoint.New(db, skey)
	if err != nil {
		t.Fatal(err)
	}
	sc, signed, err := c2.Sign(t.Context())
	if err != nil || !signed || sc.Key != vkey || sc.Seq != old.RecordedSeq || sc.Origin != old.Origin {
		t.Fatalf("with a new key: %+v %v %v", sc, signed, err)
	}
}

func TestCheckpointerRefusesBrokenChain(t *testing.T) {
	for _, tt := range []struct {
		name    string
		first   bool  // sign a checkpoint before tampering
		rechain int64 // re-chain from this seq after the edit
		says    string
	}{
		{"edited, no checkpoint yet", false, 0, "audit log chain broken at seq 2"},
		{"edited and re-chained, no checkpoint yet", false, 2, ""},
		{"edited and re-chained after a checkpoint", true, 2, "log rewritten: seq 4 hash"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "airlock.db")
			db := openDB(t, path)
			appendEvents(t, db, 4)
			skey, _ := airlocktest.CheckpointKey(t, 1)
			if tt.first {
				c, _ := checkpoint.New(db, skey)
				if _, _, err := c.Sign(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			appendEvents(t, db, 1)
			db.Close()
			airlocktest.TamperSQLite(t, path, `UPDATE events SET agent = 'x' WHERE seq = 2`)
			if tt.rechain > 0 {
				airlocktest.RechainSQLite(t, path, tt.rechain)
			}
			db = openDB(t, path)
			c, _ := checkpoint.New(db, skey)
			_, _, err := c.Sign(t.Context())
			if tt.says == "" {
				// Re-chained before any checkpoint: nothing can tell, which
				// is why checkpoints are kept elsewhere.
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if airlock.ErrorCode(err) != airlock.ECONFLICT || !strings.Contains(err.Error(), tt.says) ||
				!strings.Contains(err.Error(), "no checkpoint signed") {
				t.Fatalf("Sign over a tampered log: %v, want a conflict saying %q", err, tt.says)
			}
		})
	}
}

// TestCheckpointerRun checks the periodic signer on the bubble's clock:
// one checkpoint per interval in which the head moved, none in the others,
// and a last one when it stops.
func TestCheckpointerRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, db := newCheckpointer(t, 0)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { c.Run(ctx, 5*time.Minute); close(done) }()
		checkpoints := func() []int64 {
			evs, err := db.Events(context.Background(), airlock.EventFilter{Kind: airlock.EventCheckpoint})
			if err != nil {
				t.Fatal(err)
			}
			var seqs []int64
			for _, e := range evs {
				seqs = append(seqs, e.Seq)
			}
			return seqs
		}
		tick := func() {
			time.Sleep(5 * time.Minute)
			synctest.Wait()
		}
		tick() // an empty log: nothing to sign
		if got := checkpoints(); len(got) != 0 {
			t.Fatalf("checkpoints of an empty log at %v", got)
		}
		appendEvents(t, db, 3)
		tick()
		tick() // unmoved
		appendEvents(t, db, 2)
		tick()
		appendEvents(t, db, 1)
		cancel()
		<-done
		if got, want := checkpoints(), []int64{4, 7, 9}; !slices.Equal(got, want) {
			t.Fatalf("checkpoints recorded at %v, want %v", got, want)
		}
	})
}

func openDB(t *testing.T, path string) *sqlite.DB {
	t.Helper()
	db := sqlite.NewDB(path)
	if err := db.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// VerifyTail verifies what Sign would, from the latest checkpoint on, and
// says where it started; its errors do not speak of signing.
func TestCheckpointerVerifyTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "airlock.db")
	db := openDB(t, path)
	skey, _ := airlocktest.CheckpointKey(t, 1)
	c, _ := checkpoint.New(db, skey)
	if from, head, err := c.VerifyTail(t.Context()); from != 0 || head != 0 || err != nil {
		t.Fatalf("an empty log: from %d, head %d, %v", from, head, err)
	}
	appendEvents(t, db, 4)
	if from, head, err := c.VerifyTail(t.Context()); from != 0 || head != 4 || err != nil {
		t.Fatalf("no checkpoint: from %d, head %d, %v; want 0, 4", from, head, err)
	}
	if _, _, err := c.Sign(t.Context()); err != nil { // of seq 4, recorded at 5
		t.Fatal(err)
	}
	appendEvents(t, db, 2)
	db.Close()

	db = openDB(t, path)
	c, _ = checkpoint.New(db, skey)
	if from, head, err := c.VerifyTail(t.Context()); from != 4 || head != 7 || err != nil {
		t.Fatalf("after a checkpoint: from %d, head %d, %v; want 4, 7", from, head, err)
	}
	db.Close()
	airlocktest.TamperSQLite(t, path, `UPDATE events SET agent = 'x' WHERE seq = 6`)
	db = openDB(t, path)
	c, _ = checkpoint.New(db, skey)
	_, _, err := c.VerifyTail(t.Context())
	if airlock.ErrorCode(err) != airlock.ECONFLICT || !strings.Contains(err.Error(), "audit log chain broken at seq 6") ||
		strings.Contains(err.Error(), "signed") {
		t.Fatalf("a tail edited after the checkpoint: %v", err)
	}
}
