package checkpoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/airlock-dev/airlock"
	"golang.org/x/mod/sumdb/note"
)

// SignedCheckpoint is a checkpoint as the server signed it and recorded it
// in the audit log.
type Signed struct {
	Checkpoint
	// Note is the signed note: the checkpoint's text, a blank line and the
	// signature line. Keep it as it is, byte for byte.
	Note string `json:"note"`
	// Key is the verifier key that checks Note.
	Key string `json:"key"`
	// RecordedSeq and RecordedAt are those of the audit.checkpoint event
	// that records the checkpoint, after Seq.
	RecordedSeq int64     `json:"recorded_seq"`
	RecordedAt  time.Time `json:"recorded_at"`
}

const (
	// DefaultCheckpointInterval is how often Run signs a moved head, unless
	// told otherwise.
	DefaultCheckpointInterval = 5 * time.Minute
	// finalSignTimeout bounds the checkpoint signed when Run stops.
	finalSignTimeout = 10 * time.Second
)

// Checkpointer signs the audit log's head with the server's key and records
// each checkpoint in the log itself, as an EventCheckpoint whose payload is
// the signed note. A checkpoint of seq N is recorded at a later seq: it
// commits only to events before it, so the log can hold it without
// circularity, and the next checkpoint covers it.
//
// Before it signs, the checkpointer verifies the chain from the last point
// it verified (at first, from its own latest checkpoint, which the log must
// still hold, or from seq 1): it never signs a head whose chain is broken
// or no longer extends what it signed before.
type Checkpointer struct {
	// Logger receives what Run does; nil discards.
	Logger *slog.Logger

	log    airlock.AuditLog
	signer note.Signer
	key    string // the verifier key

	mu      sync.Mutex   // one Sign at a time
	started bool         // checked, hash and origin are set
	checked int64        // the chain is verified up to this seq…
	hash    airlock.Hash // …whose hash this is
	origin  string       // the log's origin line, once known

	// latest is kept apart, so that reading it never waits for a Sign
	// verifying a long log.
	lmu    sync.Mutex
	latest *Signed
}

// NewCheckpointer returns a checkpointer for log that signs with the
// signed-note signer key skey (ParseSignerKey).
func New(log airlock.AuditLog, skey string) (*Checkpointer, error) {
	s, vkey, err := ParseSignerKey(skey)
	if err != nil {
		return nil, err
	}
	return &Checkpointer{log: log, signer: s, key: vkey}, nil
}

// VerifierKey returns the verifier key of the checkpointer's signatures:
// not a secret; keep it with the checkpoints.
func (c *Checkpointer) VerifierKey() string { return c.key }

// Latest returns the last checkpoint recorded in the log; ok is false when
// there is none yet. Errors: ECONFLICT (the recorded checkpoint does not
// open), EUNAVAILABLE.
func (c *Checkpointer) Latest(ctx context.Context) (sc Signed, ok bool, err error) {
	c.lmu.Lock()
	defer c.lmu.Unlock()
	if c.latest != nil {
		return *c.latest, true, nil
	}
	sc, ok, err = Latest(ctx, c.log.Events)
	if ok {
		c.latest = &sc
	}
	return sc, ok, err
}

// LatestCheckpoint returns the last checkpoint recorded in a log that
// events reads, opened with the verifier key recorded beside it (a check
// of the record, not of the log: verify it with a key kept elsewhere).
func Latest(ctx context.Context, events func(context.Context, airlock.EventFilter) ([]airlock.Event, error)) (Signed, bool, error) {
	evs, err := events(ctx, airlock.EventFilter{Kind: airlock.EventCheckpoint, Newest: true, Limit: 1})
	if err != nil || len(evs) == 0 {
		return Signed{}, false, err
	}
	sc, err := recordedCheckpoint(evs[0])
	return sc, err == nil, err
}

// recordedCheckpoint reads the checkpoint an EventCheckpoint records.
func recordedCheckpoint(e airlock.Event) (Signed, error) {
	var p airlock.CheckpointPayload
	if err := json.Unmarshal(e.Payload, &p); err != nil {
		return Signed{}, airlock.Errorf(airlock.ECONFLICT, "the checkpoint recorded at seq %d is unreadable: %v", e.Seq, err)
	}
	keys, err := ParseVerifierKeys([]string{p.Key})
	if err != nil {
		return Signed{}, airlock.Errorf(airlock.ECONFLICT, "the checkpoint recorded at seq %d: %v", e.Seq, err)
	}
	cp, err := Open([]byte(p.Note), keys)
	if err != nil {
		return Signed{}, airlock.Errorf(airlock.ECONFLICT, "the checkpoint recorded at seq %d: %v", e.Seq, err)
	}
	return Signed{Checkpoint: cp, Note: p.Note, Key: p.Key, RecordedSeq: e.Seq, RecordedAt: e.Time}, nil
}

// Sign signs the log's head and records the checkpoint, unless the head has
// not moved since this key's latest checkpoint (only that checkpoint's own
// event follows it): then it returns that one, with signed false. Errors:
// ECONFLICT (the log is empty; its chain is broken, or no longer holds the
// last checkpoint: nothing is signed), EUNAVAILABLE.
func (c *Checkpointer) Sign(ctx context.Context) (sc Signed, signed bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	evs, err := c.log.Events(ctx, airlock.EventFilter{Newest: true, Limit: 1})
	if err != nil {
		return sc, false, err
	}
	if len(evs) == 0 {
		return sc, false, airlock.Errorf(airlock.ECONFLICT, "the audit log is empty: there is no head to sign")
	}
	head := evs[0]
	if head.Kind == airlock.EventCheckpoint {
		if sc, err := recordedCheckpoint(head); err == nil && sc.Seq == head.Seq-1 && sc.Key == c.key {
			c.setLatest(sc)
			return sc, false, nil
		}
	}
	if err := c.verifyTo(ctx, head, "; no checkpoint signed"); err != nil {
		return sc, false, err
	}
	cp := Checkpoint{Origin: c.origin, Seq: head.Seq, Hash: head.Hash}
	msg, err := cp.Sign(c.signer)
	if err != nil {
		return sc, false, err
	}
	rec := airlock.Record{Events: []airlock.Event{airlock.NewEvent(airlock.EventCheckpoint, nil, "", "", airlock.CheckpointPayload{Note: msg, Key: c.key})}}
	got, err := c.log.Append(ctx, rec)
	if err != nil {
		return sc, false, err
	}
	sc = Signed{Checkpoint: cp, Note: msg, Key: c.key, RecordedSeq: got[0].Seq, RecordedAt: got[0].Time}
	c.setLatest(sc)
	return sc, true, nil
}

// VerifyTail verifies the log's chain as Sign does before it signs: from
// this key's latest checkpoint, which the log must still hold, or from seq 1
// when there is none, up to the head. from is the sequence number it
// verified after (0: the whole log), head the head's. A later Sign resumes
// where it stopped. Errors: ECONFLICT (the chain is broken, or no longer
// holds the checkpoint), EUNAVAILABLE.
func (c *Checkpointer) VerifyTail(ctx context.Context) (from, head int64, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	evs, err := c.log.Events(ctx, airlock.EventFilter{Newest: true, Limit: 1})
	if err != nil || len(evs) == 0 {
		return 0, 0, err
	}
	if err := c.resume(ctx, evs[0], ""); err != nil {
		return 0, 0, err
	}
	from = c.checked
	return from, evs[0].Seq, c.verifyTo(ctx, evs[0], "")
}

func (c *Checkpointer) setLatest(sc Signed) {
	c.lmu.Lock()
	defer c.lmu.Unlock()
	c.latest = &sc
}

// resume, the first time, sets where verification starts: this key's
// latest checkpoint, if the log still holds it; else seq 1. then ends
// its errors' messages ("; no checkpoint signed").
func (c *Checkpointer) resume(ctx context.Context, head airlock.Event, then string) error {
	if c.started {
		return nil
	}
	sc, ok, err := Latest(ctx, c.log.Events)
	if err != nil {
		if then != "" {
			return fmt.Errorf("%w: %s", err, strings.TrimPrefix(then, "; "))
		}
		return err
	}
	if ok && sc.Key == c.key {
		err := Check(ctx, sc.Checkpoint, airlock.ChainReport{HeadSeq: head.Seq}, c.log.Events)
		var ce *Error
		switch {
		case errors.As(err, &ce):
			return airlock.Errorf(airlock.ECONFLICT, "the log no longer holds this server's checkpoint of seq %d: %s%s", sc.Seq, ce.Msg, then)
		case err != nil:
			return err
		}
		c.checked, c.hash, c.origin = sc.Seq, sc.Hash, sc.Origin
	}
	c.started = true
	return nil
}

// verifyTo verifies the chain from where the checkpointer last verified it
// up to head, and learns the log's origin on the way. then ends its
// errors' messages.
func (c *Checkpointer) verifyTo(ctx context.Context, head airlock.Event, then string) error {
	if err := c.resume(ctx, head, then); err != nil {
		return err
	}
	if head.Seq < c.checked {
		return airlock.Errorf(airlock.ECONFLICT, "log truncated: head seq %d < seq %d, verified before%s", head.Seq, c.checked, then)
	}
	v := airlock.ResumeChain(c.checked, c.hash)
	origin := c.origin
	for after := c.checked; after < head.Seq; {
		evs, err := c.log.Events(ctx, airlock.EventFilter{AfterSeq: after, BeforeSeq: head.Seq + 1, Limit: airlock.MaxPageSize})
		if err != nil {
			return err
		}
		if len(evs) == 0 {
			break
		}
		for i := range evs {
			if err := v.Check(&evs[i]); err != nil {
				return airlock.Errorf(airlock.ECONFLICT, "%v%s", err, then)
			}
			if evs[i].Seq == 1 {
				origin = LogOrigin(evs[i].Hash)
			}
		}
		after = evs[len(evs)-1].Seq
	}
	switch seq, h := v.Head(); {
	case seq < head.Seq:
		return airlock.Errorf(airlock.ECONFLICT, "audit log chain broken at seq %d: missing%s", seq+1, then)
	case h != head.Hash:
		return airlock.Errorf(airlock.ECONFLICT, "log rewritten: seq %d hash sha256:%s differs from the one verified before%s", seq, head.Hash, then)
	}
	c.checked, c.hash, c.origin = head.Seq, head.Hash, origin
	return nil
}

// Run signs a checkpoint every interval (0: DefaultCheckpointInterval) when
// the head moved, and a last one when ctx ends (once the server has stopped
// taking requests, the last head of this run). Failures are logged; an
// empty log is not one.
func (c *Checkpointer) Run(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = DefaultCheckpointInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finalSignTimeout)
			c.signLogged(fctx)
			cancel()
			return
		case <-t.C:
			c.signLogged(ctx)
		}
	}
}

func (c *Checkpointer) signLogged(ctx context.Context) {
	if head, err := c.log.Head(ctx); err == nil && head == 0 {
		return
	}
	sc, signed, err := c.Sign(ctx)
	switch {
	case err != nil && ctx.Err() == nil:
		c.logger().Error("sign audit checkpoint", "err", err)
	case signed:
		c.logger().Info("audit checkpoint signed", "seq", sc.Seq, "hash", sc.Hash.String(), "recorded_seq", sc.RecordedSeq)
	}
}

func (c *Checkpointer) logger() *slog.Logger {
	if c.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Logger
}
