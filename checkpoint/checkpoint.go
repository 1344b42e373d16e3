package checkpoint

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/airlock-dev/airlock"
	"golang.org/x/mod/sumdb/note"
)

// Checkpoint says that the audit log named Origin had, at sequence number
// Seq, the event whose chain hash is Hash. Signed by the server (a C2SP
// signed note) and kept where the database's holder cannot rewrite it, it
// lets a verifier detect a log truncated below Seq, or rewritten and
// re-chained at or before Seq: both verify as an intact chain on their
// own.
//
// Its text follows the C2SP tlog-checkpoint shape: the origin line, the
// sequence number in decimal, the hash in standard base64, each ending in
// a newline. Unlike a transparency log's checkpoint it names the head of a
// hash chain, not the root of a Merkle tree.
type Checkpoint struct {
	// Origin names the log (LogOrigin): a checkpoint of another log never
	// passes for one of this log.
	Origin string       `json:"origin"`
	Seq    int64        `json:"seq"`
	Hash   airlock.Hash `json:"hash"`
}

// CheckpointKeyName is the name in the keys Airlock generates for signing
// checkpoints; a signature line reads "— airlock <signature>".
const KeyName = "airlock"

// LogOrigin is the origin line of a log whose first event has hash first.
// The first event's hash commits to its time and contents, so the origin
// tells two logs apart, and a log rewritten from seq 1 is another log.
func LogOrigin(first airlock.Hash) string { return "airlock/log/" + hex.EncodeToString(first[:8]) }

// Text returns the checkpoint's note text.
func (c Checkpoint) Text() string {
	return fmt.Sprintf("%s\n%d\n%s\n", c.Origin, c.Seq, base64.StdEncoding.EncodeToString(c.Hash[:]))
}

// ParseCheckpoint reads a checkpoint's note text. Lines after the third
// (C2SP extension lines) are allowed and ignored.
func Parse(text string) (Checkpoint, error) {
	var c Checkpoint
	lines := strings.Split(text, "\n")
	if len(lines) < 4 || lines[len(lines)-1] != "" {
		return c, errors.New("want an origin line, a sequence number and a hash, each ending in a newline")
	}
	c.Origin = lines[0]
	if c.Origin == "" || strings.ContainsAny(c.Origin, " \t+") {
		return c, fmt.Errorf("origin %q is not a log's name", c.Origin)
	}
	seq, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || seq <= 0 || strconv.FormatInt(seq, 10) != lines[1] {
		return c, fmt.Errorf("%q is not a sequence number", lines[1])
	}
	c.Seq = seq
	h, err := base64.StdEncoding.Strict().DecodeString(lines[2])
	if err != nil || len(h) != len(c.Hash) {
		return c, fmt.Errorf("%q is not a base64 SHA-256 hash", lines[2])
	}
	copy(c.Hash[:], h)
	return c, nil
}

// Sign returns the checkpoint as a signed note.
func (c Checkpoint) Sign(s note.Signer) (string, error) {
	msg, err := note.Sign(&note.Note{Text: c.Text()}, s)
	if err != nil {
		return "", fmt.Errorf("sign checkpoint: %w", err)
	}
	return string(msg), nil
}

// ParseSignerKey reads a signed-note signer key ("PRIVATE+KEY+name+hash+
// data", as note.GenerateKey makes) and returns its signer and the
// verifier key a person uses to check its checkpoints. The private key
// never leaves the signer.
func ParseSignerKey(skey string) (note.Signer, string, error) {
	s, err := note.NewSigner(skey)
	if err != nil {
		return nil, "", err
	}
	// NewSigner checked the fields; only the public key is left to derive
	// from the last (its base64 may hold '+').
	fields := strings.SplitN(skey, "+", 5)
	b, err := base64.StdEncoding.DecodeString(fields[len(fields)-1])
	if err != nil || len(b) != 1+ed25519.SeedSize {
		return nil, "", errors.New("malformed Ed25519 signer key")
	}
	pub := ed25519.NewKeyFromSeed(b[1:]).Public().(ed25519.PublicKey)
	vkey, err := note.NewEd25519VerifierKey(s.Name(), pub)
	if err != nil {
		return nil, "", err
	}
	return s, vkey, nil
}

// ParseVerifierKeys reads signed-note verifier keys ("name+hash+data"), the
// server's current one and any it had before.
func ParseVerifierKeys(vkeys []string) (note.Verifiers, error) {
	var vs []note.Verifier
	for _, k := range vkeys {
		v, err := note.NewVerifier(strings.TrimSpace(k))
		if err != nil {
			return nil, fmt.Errorf("verifier key %q: %w", k, err)
		}
		vs = append(vs, v)
	}
	if len(vs) == 0 {
		return nil, errors.New("no verifier key")
	}
	return note.VerifierList(vs...), nil
}

// OpenCheckpoint checks that msg is a checkpoint signed by one of keys and
// returns it. It returns a *CheckpointError: CheckpointMalformed,
// CheckpointUnknownKey (not signed by any of keys) or
// CheckpointBadSignature (signed by one of them, but the text changed).
func Open(msg []byte, keys note.Verifiers) (Checkpoint, error) {
	n, err := note.Open(msg, keys)
	var (
		unverified *note.UnverifiedNoteError
		invalid    *note.InvalidSignatureError
	)
	switch {
	case errors.As(err, &unverified):
		var by []string
		for _, s := range unverified.Note.UnverifiedSigs {
			by = append(by, fmt.Sprintf("%s (key hash %08x)", s.Name, s.Hash))
		}
		return Checkpoint{}, &Error{Kind: UnknownKey,
			Msg: "wrong key: the checkpoint is signed by " + strings.Join(by, ", ") + ", not by the verifier key given"}
	case errors.As(err, &invalid):
		return Checkpoint{}, &Error{Kind: BadSignature,
			Msg: fmt.Sprintf("bad signature: the checkpoint was changed after %s (key hash %08x) signed it", invalid.Name, invalid.Hash)}
	case err != nil:
		return Checkpoint{}, &Error{Kind: Malformed, Msg: "not a signed checkpoint: " + err.Error()}
	}
	c, err := Parse(n.Text)
	if err != nil {
		return c, &Error{Kind: Malformed, Msg: "not an airlock checkpoint: " + err.Error()}
	}
	return c, nil
}

// Kinds of CheckpointError.
const (
	Malformed    = "malformed"     // not a signed note, or not a checkpoint
	UnknownKey   = "unknown_key"   // not signed by any verifier key given
	BadSignature = "bad_signature" // signed by a known key, but the text changed
	Truncated    = "truncated"     // the log ends before the checkpoint's seq
	Rewritten    = "rewritten"     // the log's event at the seq has another hash
	OtherLog     = "other_log"     // the checkpoint names another log
	Unverified   = "unverified"    // the chain breaks before the checkpoint's seq
)

// CheckpointError says why a checkpoint does not hold for a log.
type Error struct {
	Kind string // one of the Checkpoint… kinds above
	Msg  string // what a person reads
}

func (e *Error) Error() string { return e.Msg }

// CheckCheckpoint reports whether a log still holds the checkpoint c
// (opened, so its signature checked): rep is the log's chain report
// (AuditLog.Verify) and events reads the log (AuditLog.Events). The log
// holds c when its chain verifies past c.Seq and its event c.Seq has
// c.Hash: that hash commits to every event up to it. A log that does not
// is named truncated, rewritten, or another log, in a *CheckpointError;
// any other error means the log could not be read.
func Check(ctx context.Context, c Checkpoint, rep airlock.ChainReport,
	events func(context.Context, airlock.EventFilter) ([]airlock.Event, error)) error {
	switch {
	case !rep.OK() && c.Seq >= rep.FirstBad:
		return &Error{Kind: Unverified,
			Msg: fmt.Sprintf("checkpoint seq %d not verified: the chain breaks before it, at seq %d", c.Seq, rep.FirstBad)}
	case rep.OK() && rep.HeadSeq < c.Seq:
		return &Error{Kind: Truncated,
			Msg: fmt.Sprintf("log truncated: head seq %d < checkpoint seq %d", rep.HeadSeq, c.Seq)}
	}
	first, err := eventAt(ctx, events, 1)
	if err != nil {
		return err
	}
	at, err := eventAt(ctx, events, c.Seq)
	if err != nil {
		return err
	}
	origin := LogOrigin(first.Hash)
	switch {
	case origin != c.Origin:
		return &Error{Kind: OtherLog, Msg: fmt.Sprintf(
			"the checkpoint is of log %s, not of this log (%s): another log's checkpoint, or this log was rewritten from seq 1",
			c.Origin, origin)}
	case at.Hash != c.Hash:
		return &Error{Kind: Rewritten,
			Msg: fmt.Sprintf("log rewritten: seq %d hash sha256:%s differs from the checkpoint's sha256:%s", c.Seq, at.Hash, c.Hash)}
	}
	return nil
}

// eventAt reads the event with sequence number seq; a log without one is
// truncated there.
func eventAt(ctx context.Context, events func(context.Context, airlock.EventFilter) ([]airlock.Event, error), seq int64) (airlock.Event, error) {
	evs, err := events(ctx, airlock.EventFilter{AfterSeq: seq - 1, Limit: 1})
	if err != nil {
		return airlock.Event{}, err
	}
	if len(evs) == 0 || evs[0].Seq != seq {
		return airlock.Event{}, &Error{Kind: Truncated, Msg: fmt.Sprintf("log truncated: it has no event at seq %d", seq)}
	}
	return evs[0], nil
}
