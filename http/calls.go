package http

import (
	"context"
	"net/url"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/gate"
)

// The calls below are the API's routes whose answers are types of this
// package or of package gate, which package client does not link.

// Checkpoint returns the server's verifier key and its latest checkpoint.
func Checkpoint(ctx context.Context, c *client.Client) (CheckpointInfo, error) {
	var ci CheckpointInfo
	err := c.Do(ctx, "GET", "/v1/audit/checkpoint", nil, nil, &ci)
	return ci, err
}

// SignCheckpoint asks the server to sign its head now (an admin).
func SignCheckpoint(ctx context.Context, c *client.Client) (CheckpointInfo, error) {
	var ci CheckpointInfo
	err := c.Do(ctx, "POST", "/v1/audit/checkpoint", nil, nil, &ci)
	return ci, err
}

// Policy returns the stack in force.
func Policy(ctx context.Context, c *client.Client) (PolicyStack, error) {
	var p PolicyStack
	err := c.Do(ctx, "GET", "/v1/policy", nil, nil, &p)
	return p, err
}

// EffectivePolicy returns what the policy in force can apply to the
// agent's actions. With an agent token, agent may be "" for its own.
func EffectivePolicy(ctx context.Context, c *client.Client, agent string) (gate.EffectivePolicy, error) {
	q := url.Values{}
	if agent != "" {
		q.Set("agent", agent)
	}
	var ep gate.EffectivePolicy
	err := c.Do(ctx, "GET", "/v1/policy/effective", q, nil, &ep)
	return ep, err
}
