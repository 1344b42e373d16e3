package shell

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/gate"
)

// The soundness corpora, decided by the starter policy as a Bash tool call
// in /home/u/project:
//
//   - testdata/adversarial.txt: commands with a real effect (a write, code
//     run, a connection, a secret read, a change to what later commands
//     run), written before the analyser's contract changed and without
//     reading its tables. None may run without a person.
//   - testdata/precision.txt: everyday read-only developer commands. Each
//     must run on its own (auto): a gate that asks for git status is
//     switched off.
//
// Their headers document the format; the scripts are escaped as in
// corpus.txt.

// corpusCase is one script of a corpus, with where it is.
type corpusCase struct {
	line   int
	family string
	script string
}

func loadCorpus(tb testing.TB, file string, families bool) []corpusCase {
	tb.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		tb.Fatal(err)
	}
	var cases []corpusCase
	for n, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		c := corpusCase{line: n + 1, script: line}
		if families {
			var ok bool
			c.family, c.script, ok = strings.Cut(line, "\t")
			if !ok || c.script == "" {
				tb.Fatalf("%s:%d: want family<TAB>script", file, n+1)
			}
		}
		c.script = shellUnescape(c.script)
		cases = append(cases, c)
	}
	return cases
}

// decideStarter decides script as a Bash call under the starter policy.
func decideStarter(tb testing.TB, g *gate.Gate, script string) airlock.Decision {
	tb.Helper()
	a := airlock.Action{Agent: "agent-1", Tool: "Bash", Args: airlock.MustArgs(map[string]any{"command": script}),
		Cwd: "/home/u/project"}
	return g.Decide(context.Background(), a)
}

func starterGate(tb testing.TB) *gate.Gate {
	tb.Helper()
	g, err := gate.New(Analyser{}, gate.StarterPolicy())
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

// runsAlone reports whether a decision lets the action run with no person.
func runsAlone(d airlock.Decision) bool {
	return d.Outcome == airlock.Auto || d.Outcome == airlock.Notify
}

func TestAdversarialCorpus(t *testing.T) {
	for _, file := range []string{"adversarial.txt", "adversarial2.txt"} {
		t.Run(file, func(t *testing.T) {
			checkAdversarial(t, file)
		})
	}
}

// checkAdversarial decides every case of an adversarial corpus. A case
// whose family starts with "boundary:" is one the analyser's contract
// documents as outside what it proves (docs/POLICY.md, "What read
// means"): it is kept to count, and the test fails if it stops running
// alone, so that the documentation stays true.
func checkAdversarial(t *testing.T, file string) {
	g := starterGate(t)
	cases := loadCorpus(t, "testdata/"+file, true)
	if len(cases) < 200 {
		t.Fatalf("%s has %d cases, want at least 200", file, len(cases))
	}
	through := map[string]int{}
	total := map[string]int{}
	for _, c := range cases {
		total[c.family]++
		d := decideStarter(t, g, c.script)
		boundary := strings.HasPrefix(c.family, "boundary:")
		if runsAlone(d) {
			through[c.family]++
		}
		switch {
		case runsAlone(d) && !boundary:
			t.Errorf("%s:%d: [%s] %q runs with no person: %s (%s)", file, c.line, c.family, c.script,
				d.Outcome, d.Classification.Reason)
		case !runsAlone(d) && boundary:
			t.Errorf("%s:%d: [%s] %q is %s now: drop its boundary mark", file, c.line, c.family, c.script, d.Outcome)
		}
	}
	n := 0
	for _, k := range through {
		n += k
	}
	t.Logf("%s: %d of %d run with no person", file, n, len(cases))
	for f, k := range through {
		t.Logf("  %s: %d of %d", f, k, total[f])
	}
}

func TestPrecisionCorpus(t *testing.T) {
	g := starterGate(t)
	cases := loadCorpus(t, "testdata/precision.txt", false)
	if len(cases) < 200 {
		t.Fatalf("precision.txt has %d cases, want at least 200", len(cases))
	}
	auto := 0
	for _, c := range cases {
		script, cost := strings.CutPrefix(c.script, "not-auto\t")
		d := decideStarter(t, g, script)
		if d.Outcome == airlock.Auto {
			auto++
		}
		switch {
		case cost && d.Outcome == airlock.Auto:
			t.Errorf("precision.txt:%d: %q is auto now: drop its not-auto mark", c.line, script)
		case !cost && d.Outcome != airlock.Auto:
			t.Errorf("precision.txt:%d: %q is %s, want auto: %s (%s)", c.line, script, d.Outcome,
				d.Classification.Reason, d.Classification.Class)
		}
	}
	t.Logf("precision: %d of %d auto", auto, len(cases))
}

// TestAdversarialCorpusUnderGrants decides both adversarial corpora again
// with standing grants in force that a reviewer would make of everyday
// commands (npm test, go test, make, cargo build, pytest, git status): a
// grant covers a command by its words and never another command of the
// script, a wrapper's or anything above its tier, so nothing more runs
// with no person than without them.
func TestAdversarialCorpusUnderGrants(t *testing.T) {
	now := time.Now()
	var grants []airlock.Grant
	for i, words := range [][]string{{"npm", "test"}, {"go", "test"}, {"make"}, {"cargo", "build"}, {"pytest"}, {"git", "status"}} {
		grants = append(grants, airlock.Grant{ID: fmt.Sprint("g", i), Agent: "agent-1", Tool: "Bash", Outcome: airlock.Auto,
			MaxTier: airlock.TierWrite, GrantedBy: "alice", Expires: now.Add(time.Hour),
			Pattern: airlock.GrantPattern{Kind: airlock.PatternCommand, Command: words}})
	}
	for _, file := range []string{"adversarial.txt", "adversarial2.txt"} {
		t.Run(file, func(t *testing.T) {
			plain, granted := starterGate(t), starterGate(t)
			granted.SetGrants(grants, nil)
			cases := loadCorpus(t, "testdata/"+file, true)
			n := 0
			for _, c := range cases {
				before, after := runsAlone(decideStarter(t, plain, c.script)), decideStarter(t, granted, c.script)
				if runsAlone(after) {
					n++
				}
				if runsAlone(after) && !before {
					t.Errorf("%s:%d: [%s] %q runs with no person under a grant: %s by %s", file, c.line, c.family, c.script,
						after.Outcome, after.DecidedBy())
				}
			}
			t.Logf("%s under grants: %d of %d run with no person", file, n, len(cases))
		})
	}
}
