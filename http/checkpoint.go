package http

import (
	"context"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/checkpoint"
)

// CheckpointInfo is the server's verifier key and its latest signed
// checkpoint of the audit log.
type CheckpointInfo struct {
	// Key is the verifier key (C2SP signed-note format) that checks the
	// server's checkpoints. Keep it with the checkpoints you store.
	Key string `json:"key" doc:"The verifier key (C2SP signed-note format) that checks this server's checkpoints."`
	// Checkpoint is the latest checkpoint; absent until the first is signed.
	Checkpoint *checkpoint.Signed `json:"checkpoint,omitempty" doc:"The latest signed checkpoint; absent until the first is signed."`
}

type checkpointOutput struct {
	Body CheckpointInfo
}

// checkpoints returns the server's checkpointer, or an error saying that
// this server signs none.
func (s *Server) checkpoints() (*checkpoint.Checkpointer, error) {
	if s.Checkpoints == nil {
		return nil, airlock.Errorf(airlock.ENOTFOUND, "this server signs no audit checkpoints")
	}
	return s.Checkpoints, nil
}

// getCheckpoint serves the latest checkpoint to reviewers and admins. Not
// to agents: a checkpoint's seq counts every agent's events, and an agent
// reads only its own.
func (s *Server) getCheckpoint(ctx context.Context, _ *struct{}) (*checkpointOutput, error) {
	if _, err := s.allow(ctx, "read the audit checkpoint", airlock.RoleReviewer, airlock.RoleAdmin); err != nil {
		return nil, err
	}
	c, err := s.checkpoints()
	if err != nil {
		return nil, err
	}
	out := &checkpointOutput{Body: CheckpointInfo{Key: c.VerifierKey()}}
	sc, ok, err := c.Latest(ctx)
	if err != nil {
		return nil, err
	}
	if ok {
		out.Body.Checkpoint = &sc
	}
	return out, nil
}

// signCheckpoint signs the head now, unless it has not moved since the
// latest checkpoint (which it then returns).
func (s *Server) signCheckpoint(ctx context.Context, _ *struct{}) (*checkpointOutput, error) {
	if _, err := s.allow(ctx, "sign an audit checkpoint", airlock.RoleAdmin); err != nil {
		return nil, err
	}
	c, err := s.checkpoints()
	if err != nil {
		return nil, err
	}
	sc, _, err := c.Sign(ctx)
	if err != nil {
		return nil, err
	}
	return &checkpointOutput{Body: CheckpointInfo{Key: c.VerifierKey(), Checkpoint: &sc}}, nil
}
