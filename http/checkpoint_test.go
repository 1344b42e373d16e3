package http_test

import (
	"net/http"
	"testing"

	airlockhttp "github.com/airlock-dev/airlock/http"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
	"github.com/airlock-dev/airlock/checkpoint"
)

func TestCheckpointAPI(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()

	// A server without a checkpoint key signs none, and says so.
	ts.do(t, "GET", "/v1/audit/checkpoint", ts.BobSecret, "", nil).problem(t, http.StatusNotFound, airlock.ENOTFOUND)

	skey, vkey := airlocktest.CheckpointKey(t, 1)
	c, err := checkpoint.New(ts.DB, skey)
	if err != nil {
		t.Fatal(err)
	}
	ts.Checkpoints = c

	// The key at once; no checkpoint before the first is signed.
	ci, err := airlockhttp.Checkpoint(ctx, ts.Bob)
	if err != nil || ci.Key != vkey || ci.Checkpoint != nil {
		t.Fatalf("before any checkpoint: %+v %v", ci, err)
	}
	// Agents read neither; only admins sign.
	ts.do(t, "GET", "/v1/audit/checkpoint", ts.AgentSecret, "", nil).problem(t, http.StatusForbidden, airlock.EUNAUTHORIZED)
	ts.do(t, "POST", "/v1/audit/checkpoint", ts.BobSecret, "", nil).problem(t, http.StatusForbidden, airlock.EUNAUTHORIZED)
	ts.do(t, "POST", "/v1/audit/checkpoint", ts.AgentSecret, "", nil).problem(t, http.StatusForbidden, airlock.EUNAUTHORIZED)

	ts.Agent.Enforce(ctx, airlocktest.Action("read_file", "a"))
	signed, err := airlockhttp.SignCheckpoint(ctx, ts.Admin)
	if err != nil || signed.Checkpoint == nil || signed.Key != vkey {
		t.Fatalf("sign: %+v %v", signed, err)
	}
	rep, err := ts.Bob.Verify(ctx)
	if err != nil || !rep.OK() || rep.HeadSeq != signed.Checkpoint.RecordedSeq || signed.Checkpoint.Seq != rep.HeadSeq-1 {
		t.Fatalf("signed %+v, log %+v: want the head before the checkpoint's own event", signed.Checkpoint, rep)
	}
	keys, err := checkpoint.ParseVerifierKeys([]string{ci.Key})
	if err != nil {
		t.Fatal(err)
	}
	cp, err := checkpoint.Open([]byte(signed.Checkpoint.Note), keys)
	if err != nil || cp != signed.Checkpoint.Checkpoint {
		t.Fatalf("the served note opens as %+v, %v", cp, err)
	}
	got, err := airlockhttp.Checkpoint(ctx, ts.Bob)
	if err != nil || got.Checkpoint == nil || *got.Checkpoint != *signed.Checkpoint {
		t.Fatalf("latest %+v %v, want %+v", got.Checkpoint, err, signed.Checkpoint)
	}
	// The head has not moved: signing again returns the same checkpoint.
	again, err := airlockhttp.SignCheckpoint(ctx, ts.Admin)
	if err != nil || *again.Checkpoint != *signed.Checkpoint {
		t.Fatalf("sign again: %+v %v", again.Checkpoint, err)
	}
}
