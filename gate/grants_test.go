package gate_test

import (
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/gate"
	"github.com/airlock-dev/airlock/shell"
)

// grantGate is a gate over a project policy that denies publishing,
// floors class fs.delete at ask and tags needs-human on a deploy script,
// holding the grants.
func grantGate(t testing.TB, now time.Time, grants ...airlock.Grant) *gate.Gate {
	t.Helper()
	p, err := gate.LoadPolicy("policy.yaml", []byte(`name: grants
floors:
  classes:
    fs.delete: ask
rules:
  - {id: no-publish, tool: Bash, command: "npm publish *", outcome: deny}
  - {id: deploys, tool: Bash, command: "./deploy.sh *", needs_human: true}
`))
	if err != nil {
		t.Fatal(err)
	}
	g, err := gate.New(shell.Analyser{}, p)
	if err != nil {
		t.Fatal(err)
	}
	g.SetGrants(grants, func() time.Time { return now })
	return g
}

func bash(agent, command string) airlock.Action {
	return airlock.Action{Agent: agent, Tool: "Bash", Cwd: "/w", Args: airlock.MustArgs(map[string]any{"command": command})}
}

func commandGrant(agent string, words []string, now time.Time) airlock.Grant {
	return airlock.Grant{ID: "g-" + strings.Join(words, "-"), Agent: agent, Tool: "Bash",
		Pattern: airlock.GrantPattern{Kind: airlock.PatternCommand, Command: words},
		Outcome: airlock.Auto, MaxTier: airlock.TierWrite, GrantedBy: "alice", Approval: "ap-1", Expires: now.Add(time.Hour)}
}

// TestGrantLoosensAnAsk: a standing grant turns the asks it covers into
// its outcome, says so in the decision, and covers nothing else: not
// another command of the same script, not a command run through a
// wrapper, not another agent, not above its ceiling, not once expired or
// revoked; and never a deny, a floor or needs-human.
func TestGrantLoosensAnAsk(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	npmTest := commandGrant("coder-*", []string{"npm", "test"}, now)
	npm := commandGrant("coder-1", []string{"npm"}, now)
	rm := commandGrant("coder-1", []string{"rm", "-r", "build"}, now)
	deploy := commandGrant("coder-1", []string{"./deploy.sh"}, now)
	expired := commandGrant("coder-1", []string{"make"}, now)
	expired.Expires = now.Add(-time.Second)
	revoked := commandGrant("coder-1", []string{"go", "generate"}, now)
	revoked.Revoked, revoked.RevokedBy = now.Add(-time.Minute), "bob"
	low := commandGrant("coder-1", []string{"curl"}, now)
	low.MaxTier = airlock.TierWrite // curl is network egress
	notify := commandGrant("coder-1", []string{"cargo", "build"}, now)
	notify.Outcome = airlock.Notify
	g := grantGate(t, now, npmTest, npm, rm, deploy, expired, revoked, low, notify)

	for _, c := range []struct {
		name, agent, command string
		want                 airlock.Outcome
		grant                string
	}{
		{"the granted command", "coder-1", "npm test", airlock.Auto, npmTest.ID},
		{"with more arguments", "coder-1", "npm test -- --watch", airlock.Auto, npmTest.ID},
		{"another agent the glob covers", "coder-2", "npm test", airlock.Auto, npmTest.ID},
		{"an agent the glob does not cover", "reviewer-bot", "npm test", airlock.Ask, ""},
		{"a second command in the script", "coder-1", "npm test; rm -rf ~", airlock.Ask, ""},
		{"through sudo", "coder-1", "sudo npm test", airlock.Ask, ""},
		{"inside a command substitution", "coder-2", "npm test$(touch x)", airlock.Ask, ""},
		{"a deny stays a deny", "coder-1", "npm publish --access public", airlock.Deny, ""},
		{"a floor stays a floor", "coder-1", "rm -r build", airlock.Ask, ""},
		{"needs-human stays", "coder-1", "./deploy.sh prod", airlock.Suggest, ""},
		{"expired", "coder-1", "make all", airlock.Ask, ""},
		{"revoked", "coder-1", "go generate ./...", airlock.Ask, ""},
		{"above the ceiling", "coder-1", "curl https://example.com", airlock.Ask, ""},
		{"a notify grant", "coder-1", "cargo build", airlock.Notify, notify.ID},
	} {
		d := g.Decide(t.Context(), bash(c.agent, c.command))
		if d.Outcome != c.want {
			t.Errorf("%s (%s as %s): %s by %s, want %s", c.name, c.command, c.agent, d.Outcome, d.DecidedBy(), c.want)
			continue
		}
		switch {
		case c.grant == "" && d.Grant != nil:
			t.Errorf("%s: decided by %s, want no grant", c.name, d.Grant)
		case c.grant != "" && (d.Grant == nil || d.Grant.ID != c.grant):
			t.Errorf("%s: decided by %s, want grant %s", c.name, d.DecidedBy(), c.grant)
		case c.grant != "":
			if by := d.DecidedBy(); !strings.Contains(by, "grant "+c.grant+" by alice from approval ap-1, expires 2026-11-28T13:00:00Z") {
				t.Errorf("%s: decided by %q", c.name, by)
			}
			if !strings.Contains(d.Explain(), "grant "+c.grant) {
				t.Errorf("%s: the explanation does not name the grant:\n%s", c.name, d.Explain())
			}
		}
	}
	// Without grants the same gate asks.
	g.SetGrants(nil, nil)
	if d := g.Decide(t.Context(), bash("coder-1", "npm test")); d.Outcome != airlock.Ask || d.Grant != nil {
		t.Errorf("after the grants are withdrawn: %s by %s, want ask", d.Outcome, d.DecidedBy())
	}
}

// TestGrantPatternsInTheGate: an exact grant covers the one action it was
// made from; a directory's grant covers a file tool's call only when every
// path it names lies under the directory.
func TestGrantPatternsInTheGate(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	exactAction := bash("coder-1", "make release VERSION=1.2")
	h, err := exactAction.Hash()
	if err != nil {
		t.Fatal(err)
	}
	exact := airlock.Grant{ID: "g-exact", Agent: "coder-1", Tool: "Bash", Pattern: airlock.GrantPattern{Kind: airlock.PatternExact, Hash: h},
		Outcome: airlock.Auto, MaxTier: airlock.TierWrite, GrantedBy: "alice", Expires: now.Add(time.Hour)}
	docs := airlock.Grant{ID: "g-docs", Agent: "coder-1", Tool: "Write", Pattern: airlock.GrantPattern{Kind: airlock.PatternPath, Path: "/w/docs"},
		Outcome: airlock.Auto, MaxTier: airlock.TierWrite, GrantedBy: "alice", Expires: now.Add(time.Hour)}
	g := grantGate(t, now, exact, docs)
	write := func(path string) airlock.Action {
		return airlock.Action{Agent: "coder-1", Tool: "Write", Cwd: "/w", Args: airlock.MustArgs(map[string]any{"file_path": path, "content": "x"})}
	}
	for _, c := range []struct {
		name string
		a    airlock.Action
		want airlock.Outcome
	}{
		{"the exact action", exactAction, airlock.Auto},
		{"another version", bash("coder-1", "make release VERSION=1.3"), airlock.Ask},
		{"a file under the directory", write("/w/docs/guide.md"), airlock.Auto},
		{"a relative path under it", write("docs/a/b.md"), airlock.Auto},
		{"a path that climbs out", write("docs/../src/main.go"), airlock.Ask},
		{"a sibling with the same prefix", write("/w/docsx/a.md"), airlock.Ask},
		{"the policy's own settings under it", write("/w/docs/.claude/settings.json"), airlock.Ask},
	} {
		if d := g.Decide(t.Context(), c.a); d.Outcome != c.want {
			t.Errorf("%s: %s by %s, want %s", c.name, d.Outcome, d.DecidedBy(), c.want)
		}
	}
}

// TestPolicyLimitsGrants: a policy's grants: section forbids grants
// outright, above a tier, or for some agents or tools; the explanation
// says which policy kept the grant out, and where.
func TestPolicyLimitsGrants(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	grant := commandGrant("*", []string{"npm", "test"}, now)
	for _, c := range []struct {
		name, section, agent string
		want                 airlock.Outcome
		why                  string
	}{
		{"no section", "", "coder-1", airlock.Auto, ""},
		{"allowed up to write", "grants: {max_tier: write}", "coder-1", airlock.Auto, ""},
		{"forbidden", "grants: {allow: false}", "coder-1", airlock.Ask, "allows no grant (limits.yaml:2"},
		{"below the tier", "grants: {max_tier: read}", "coder-1", airlock.Ask, "allows no grant above read"},
		{"an excepted agent", `grants: {except_agents: ["prod-*"]}`, "prod-7", airlock.Ask, "allows no grant for agent prod-7"},
		{"another agent", `grants: {except_agents: ["prod-*"]}`, "coder-1", airlock.Auto, ""},
		{"an excepted tool", `grants: {except_tools: [Bash]}`, "coder-1", airlock.Ask, "allows no grant for tool Bash"},
	} {
		p, err := gate.LoadPolicy("limits.yaml", []byte("name: limits\n"+c.section+"\n"))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		g, err := gate.New(shell.Analyser{}, p)
		if err != nil {
			t.Fatal(err)
		}
		g.SetGrants([]airlock.Grant{grant}, func() time.Time { return now })
		d := g.Decide(t.Context(), bash(c.agent, "npm test"))
		if d.Outcome != c.want {
			t.Errorf("%s: %s by %s, want %s", c.name, d.Outcome, d.DecidedBy(), c.want)
		}
		if c.why != "" && !strings.Contains(d.Explain(), c.why) {
			t.Errorf("%s: the explanation does not say %q:\n%s", c.name, c.why, d.Explain())
		}
	}
	if _, err := gate.LoadPolicy("bad.yaml", []byte("name: bad\ngrants: {max_tier: hgh, allow: maybe}\n")); err == nil ||
		!strings.Contains(err.Error(), "bad.yaml:2:") {
		t.Errorf("a malformed grants section: %v, want errors located in bad.yaml", err)
	}
}

// TestRemember: approve and remember proposes the narrowest shape that
// covers the approved action — a shell call's command by its words, a file
// tool's directory, else the exact action — for its agent and tool, up to
// the tier approved; a reviewer's own shape must still cover the action;
// a request not approved, or a policy that keeps grants out, makes none.
func TestRemember(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	g := grantGate(t, now)
	approved := func(a airlock.Action) airlock.Approval {
		t.Helper()
		d := g.Decide(t.Context(), a)
		return airlock.Approval{ID: "ap-" + a.Tool, Action: a, ActionHash: d.ActionHash, Tier: d.Classification.Tier,
			Status: airlock.StatusApproved, Outcome: d.Outcome}
	}
	npmTest := approved(bash("coder-1", "npm test"))
	write := approved(airlock.Action{Agent: "coder-1", Tool: "Write", Cwd: "/w",
		Args: airlock.MustArgs(map[string]any{"file_path": "docs/guide.md", "content": "x"})})
	script := approved(bash("coder-1", "npm test && npm run lint"))
	for _, c := range []struct {
		name  string
		ap    airlock.Approval
		shape *airlock.GrantPattern
		want  string // the grant's pattern, or the error code
	}{
		{"a shell command", npmTest, nil, "`npm test …`"},
		{"a file tool", write, nil, "the files under /w/docs"},
		{"a script of two commands", script, nil, "the action sha256:" + script.ActionHash.String()[:12] + "…"},
		{"a wider command", npmTest, &airlock.GrantPattern{Kind: airlock.PatternCommand, Command: []string{"npm"}}, "`npm …`"},
		{"a command that does not cover it", npmTest, &airlock.GrantPattern{Kind: airlock.PatternCommand, Command: []string{"npm", "test", "--coverage"}}, airlock.EINVALID},
		{"a wider directory", write, &airlock.GrantPattern{Kind: airlock.PatternPath, Path: "/w"}, "the files under /w"},
		{"a directory that does not hold it", write, &airlock.GrantPattern{Kind: airlock.PatternPath, Path: "/w/src"}, airlock.EINVALID},
		{"a directory for a shell call", npmTest, &airlock.GrantPattern{Kind: airlock.PatternPath, Path: "/w"}, airlock.EINVALID},
		{"exactly", npmTest, &airlock.GrantPattern{Kind: airlock.PatternExact, Hash: npmTest.ActionHash}, "the action sha256:" + npmTest.ActionHash.String()[:12] + "…"},
		{"another exact action", npmTest, &airlock.GrantPattern{Kind: airlock.PatternExact, Hash: write.ActionHash}, airlock.EINVALID},
	} {
		gr, err := g.Remember(t.Context(), c.ap, c.shape, "alice", "why", 0, now)
		if err != nil {
			if airlock.ErrorCode(err) != c.want {
				t.Errorf("%s: %v, want %s", c.name, err, c.want)
			}
			continue
		}
		if gr.Pattern.String() != c.want || gr.Agent != "coder-1" || gr.Tool != c.ap.Tool || gr.MaxTier != c.ap.Tier ||
			gr.Approval != c.ap.ID || gr.GrantedBy != "alice" || !gr.Expires.Equal(now.Add(airlock.DefaultRememberTTL)) {
			t.Errorf("%s: %+v, want pattern %s", c.name, gr, c.want)
		}
	}
	pending := npmTest
	pending.Status = airlock.StatusPending
	if _, err := g.Remember(t.Context(), pending, nil, "alice", "", 0, now); airlock.ErrorCode(err) != airlock.ECONFLICT {
		t.Errorf("a pending request: %v, want ECONFLICT", err)
	}
	p, err := gate.LoadPolicy("no.yaml", []byte("name: no\ngrants: {allow: false}\n"))
	if err != nil {
		t.Fatal(err)
	}
	none, err := gate.New(shell.Analyser{}, p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := none.Remember(t.Context(), npmTest, nil, "alice", "", 0, now); airlock.ErrorCode(err) != airlock.EUNAUTHORIZED ||
		!strings.Contains(err.Error(), "allows no grant") {
		t.Errorf("under a policy that allows no grant: %v, want EUNAUTHORIZED saying so", err)
	}
}
