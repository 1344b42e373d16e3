package airlock_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
	"github.com/airlock-dev/airlock/gate"
	"github.com/airlock-dev/airlock/shell"
)

// realisticPolicy is the kind of policy a team runs: about twenty rules,
// presets, a floor, a CEL condition, command patterns.
const realisticPolicy = `
name: team
preset: standard
floors:
  tiers: {privileged: deny}
agents:
  coder-*: {owner: alice, reviewers: [bob]}
  release-bot: {preset: conservative}
rules:
  - {id: reads, class: [fs.read, git.read], outcome: auto}
  - {id: git-reads, tool: Bash, command: ["git status *", "git diff *", "git log *"], outcome: auto}
  - {id: tests, tool: Bash, command: ["go test *", "go vet *", "npm test *"], outcome: auto}
  - {id: builds, tool: Bash, command: ["go build *", "make *"], outcome: notify}
  - {id: edits, tool: [Edit, MultiEdit, Write, write_file], outcome: auto}
  - {id: etc, tool: [Edit, Write, write_file], when: 'has(args.file_path) && args.file_path.startsWith("/etc")', outcome: deny}
  - {id: deletes, class: fs.delete, outcome: ask, reviewers: [lead]}
  - {id: push, tool: Bash, command: "git push *", outcome: ask}
  - {id: force, class: git.write, min_tier: destructive, outcome: deny}
  - {id: fetch, tool: WebFetch, outcome: notify}
  - {id: search, tool: WebSearch, outcome: auto}
  - {id: gh-reads, tool: "mcp__github__get_*", outcome: auto}
  - {id: gh-writes, tool: "mcp__github__*", outcome: ask}
  - {id: payments, tool: mcp__stripe__refund, when: args.amount > 100, outcome: ask, reviewers: [finance]}
  - {id: small-refunds, tool: mcp__stripe__refund, outcome: notify}
  - {id: bot-deploys, agent: release-bot, tool: deploy, outcome: ask}
  - {id: bot-reads, agent: release-bot, class: fs.read, outcome: auto}
  - {id: intern, agent: intern-*, outcome: suggest}
  - {id: installs, class: package.install, outcome: ask}
  - {id: network, class: [net.http, net.connect], outcome: ask}
`

func benchGate(b *testing.B, src string) *gate.Gate {
	b.Helper()
	p, err := gate.LoadPolicy("bench.yaml", []byte(src))
	if err != nil {
		b.Fatal(err)
	}
	g, err := gate.New(shell.Analyser{}, p)
	if err != nil {
		b.Fatal(err)
	}
	return g
}

// BenchmarkDecide is one decision, with the action hash, on a realistic
// policy.
func BenchmarkDecide(b *testing.B) {
	g := benchGate(b, realisticPolicy)
	ctx := context.Background()
	for _, bc := range []struct {
		name string
		a    airlock.Action
	}{
		{"shell", airlock.Action{Agent: "coder-1", Tool: "Bash", Cwd: "/home/dev/app",
			Args: json.RawMessage(`{"command":"git status && go test ./... 2>&1 | tail -n 20","timeout":120000}`)}},
		{"condition", airlock.Action{Agent: "coder-1", Tool: "mcp__stripe__refund",
			Args: json.RawMessage(`{"charge":"ch_1","amount":250,"reason":"duplicate"}`)}},
		{"file", airlock.Action{Agent: "coder-1", Tool: "Write", Cwd: "/home/dev/app",
			Args: json.RawMessage(`{"file_path":"internal/server/handler.go","content":"package server\n"}`)}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if d := g.Decide(ctx, bc.a); !d.Outcome.Valid() {
					b.Fatal(d)
				}
			}
		})
	}
}

// scaledPolicy has n rules, all but a handful naming an agent and a tool
// exactly, as a large generated policy would.
func scaledPolicy(n int) string {
	var sb strings.Builder
	sb.WriteString("rules:\n")
	sb.WriteString("  - {tool: \"mcp__internal__*\", outcome: ask}\n")
	sb.WriteString("  - {agent: \"ci-*\", class: fs.read, outcome: auto}\n")
	sb.WriteString("  - {class: \"net.*\", outcome: notify}\n")
	for i := 3; i < n; i++ {
		switch i % 3 {
		case 0:
			fmt.Fprintf(&sb, "  - {agent: agent-%d, tool: tool_%d, outcome: auto}\n", i, i)
		case 1:
			fmt.Fprintf(&sb, "  - {tool: tool_%d, outcome: notify}\n", i)
		case 2:
			fmt.Fprintf(&sb, "  - {agent: agent-%d, outcome: ask}\n", i)
		}
	}
	return sb.String()
}

// BenchmarkRuleScaling decides (without hashing) against 10, 1 000 and
// 10 000 rules. The index keeps the cost flat: the goal is 10 000 rules
// at most 3× the time of 10.
func BenchmarkRuleScaling(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{10, 1000, 10000} {
		g := benchGate(b, scaledPolicy(n))
		// An agent and a tool the policy has no exact rule for: every step
		// is looked up and every glob checked, the worst case.
		a := airlock.Action{Agent: "agent-x", Tool: "mcp__internal__lookup", Args: json.RawMessage(`{"key":"k"}`)}
		b.Run(fmt.Sprintf("rules=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if d := g.Resolve(ctx, a); d.Outcome != airlock.Ask {
					b.Fatal(d)
				}
			}
		})
	}
}

// BenchmarkHash compares the action hash (RFC 8785 canonical JSON +
// SHA-256) with encoding/json Marshal + SHA-256 of the same action. Goal:
// at most 1.5×.
func BenchmarkHash(b *testing.B) {
	a := airlock.Action{Agent: "coder-1", Tool: "Bash", Cwd: "/home/dev/app", SessionID: "sess-42",
		TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", CallID: "toolu_01",
		Args: json.RawMessage(`{"command": "git status && go test ./...", "timeout": 120000, "description": "run the tests", "env": {"GOFLAGS": "-count=1", "CI": "true"}}`)}
	b.Run("canonical", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := a.Hash(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			buf, err := json.Marshal(a)
			if err != nil {
				b.Fatal(err)
			}
			sha256.Sum256(buf)
		}
	})
}

// memLog is a store whose Append does what a store's Go code does with a
// record — Prepare, Seal, Rows — but no I/O: what is left is the
// enforcer's own CPU per decision. Every other method panics.
type memLog struct {
	airlock.Store
	seq  int64
	head airlock.Hash
}

func (m *memLog) Append(_ context.Context, rec airlock.Record) ([]airlock.Event, error) {
	if err := rec.Prepare(); err != nil {
		return nil, err
	}
	now := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	for i := range rec.Events {
		e := &rec.Events[i]
		e.Time = now
		m.seq++
		e.Seal(m.seq, m.head)
		m.head = e.Hash
	}
	rec.Rows(rec.Events, "", now, nil)
	return rec.Events, nil
}

// BenchmarkCheck is one durable auto decision through the enforcer, as
// postgres's BenchmarkDecisionPaired makes it, on a store without I/O.
//
//	go test -run '^$' -bench Check -count 5 .
func BenchmarkCheck(b *testing.B) {
	e := &gate.Enforcer{Gate: airlocktest.NewGate(b), Store: &memLog{}}
	ctx := context.Background()
	a := airlocktest.Action("read_file", "f1")
	b.ReportAllocs()
	for b.Loop() {
		if enf := e.Check(ctx, a); !enf.Allowed {
			b.Fatalf("not allowed: %+v", enf)
		}
	}
}
