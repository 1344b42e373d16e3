package airlocktest

import (
	"testing"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/gate"
	"github.com/airlock-dev/airlock/shell"
)

// Policy gives each outcome to one tool, for agent-1 (owner alice):
// read_file auto, write_file notify, deploy ask (reviewer bob, 10m),
// propose suggest (1h), shadow_tool shadow, delete_file deny, wire_money
// needs-human (1h).
const Policy = `version: 1
name: enforce
layer: project
preset: autonomous
agents:
  agent-1:
    owner: alice
rules:
  - id: reads
    tool: read_file
    outcome: auto
  - id: writes
    tool: write_file
    outcome: notify
  - id: deploys
    tool: deploy
    outcome: ask
    reviewers: [bob]
    timeout: 10m
  - id: proposals
    tool: propose
    outcome: suggest
    timeout: 1h
  - id: shadows
    tool: shadow_tool
    outcome: shadow
  - id: forbidden
    tool: delete_file
    outcome: deny
  - id: money
    tool: wire_money
    outcome: auto
    needs_human: true
    timeout: 1h
`

// NewGate returns a gate deciding by Policy.
func NewGate(tb testing.TB) *gate.Gate {
	tb.Helper()
	p, err := gate.LoadPolicy("airlocktest.yaml", []byte(Policy))
	if err != nil {
		tb.Fatal(err)
	}
	g, err := gate.New(shell.Analyser{}, p)
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

// Action returns an action of agent-1 with the given tool and a path
// argument.
func Action(tool, path string) airlock.Action {
	return airlock.Action{Agent: "agent-1", Tool: tool, Args: airlock.MustArgs(map[string]any{"path": "/work/" + path}),
		TraceID: "t-1", RequestedBy: "carol"}
}
