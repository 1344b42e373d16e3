package airlock_test

import (
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
)

// TestGrantPatterns: a command pattern covers the commands that start
// with its words, word for word; a path pattern covers actions whose every
// path lies under its directory; an agent glob covers the agents it
// matches and nothing else.
func TestGrantPatterns(t *testing.T) {
	cmd := airlock.GrantPattern{Kind: airlock.PatternCommand, Command: []string{"npm", "test"}}
	for _, c := range []struct {
		words []string
		want  bool
	}{
		{[]string{"npm", "test"}, true},
		{[]string{"npm", "test", "--", "--watch"}, true},
		{[]string{"npm", "testx"}, false},
		{[]string{"npm"}, false},
		{[]string{"npm", "publish"}, false},
		{[]string{"rm", "-rf", "~"}, false},
		{nil, false},
	} {
		if got := cmd.CoversCommand(c.words); got != c.want {
			t.Errorf("npm test covers %q: %v, want %v", c.words, got, c.want)
		}
	}
	dir := airlock.GrantPattern{Kind: airlock.PatternPath, Path: "/w/docs"}
	for _, c := range []struct {
		paths []string
		want  bool
	}{
		{[]string{"/w/docs"}, true},
		{[]string{"/w/docs/a.md", "/w/docs/b/c.md"}, true},
		{[]string{"/w/docs/a.md", "/w/src/main.go"}, false},
		{[]string{"/w/docsx/a.md"}, false},
		{[]string{"/w"}, false},
		{nil, false},
	} {
		if got := dir.CoversPaths(c.paths); got != c.want {
			t.Errorf("/w/docs covers %q: %v, want %v", c.paths, got, c.want)
		}
	}
	if cmd.CoversPaths([]string{"/w/docs"}) || dir.CoversCommand([]string{"npm", "test"}) {
		t.Error("a pattern covers what another kind looks at")
	}
	g := airlock.Grant{Agent: "ci-*"}
	for agent, want := range map[string]bool{"ci-1": true, "ci-": true, "ci": false, "coder-1": false, "ci-1/x": false} {
		if got := g.CoversAgent(agent); got != want {
			t.Errorf("ci-* covers %q: %v, want %v", agent, got, want)
		}
	}
}

// TestGrantValidate: a grant names an agent, a tool, a pattern of a known
// kind, an outcome that loosens, a ceiling, who granted it, and an expiry
// within MaxGrantTTL of now.
func TestGrantValidate(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	good := func() airlock.Grant {
		return airlock.Grant{ID: "g1", Agent: "coder-1", Tool: "Bash", Outcome: airlock.Auto, MaxTier: airlock.TierWrite,
			Pattern:   airlock.GrantPattern{Kind: airlock.PatternCommand, Command: []string{"npm", "test"}},
			GrantedBy: "alice", Expires: now.Add(airlock.DefaultRememberTTL)}
	}
	if g := good(); g.ValidateNew(now) != nil {
		t.Fatalf("a good grant: %v", g.ValidateNew(now))
	}
	for name, change := range map[string]func(*airlock.Grant){
		"no id":              func(g *airlock.Grant) { g.ID = "" },
		"no agent":           func(g *airlock.Grant) { g.Agent = "" },
		"a bad glob":         func(g *airlock.Grant) { g.Agent = "ci-[" },
		"no tool":            func(g *airlock.Grant) { g.Tool = "" },
		"ask":                func(g *airlock.Grant) { g.Outcome = airlock.Ask },
		"deny":               func(g *airlock.Grant) { g.Outcome = airlock.Deny },
		"no ceiling":         func(g *airlock.Grant) { g.MaxTier = 0 },
		"no granter":         func(g *airlock.Grant) { g.GrantedBy = "" },
		"no expiry":          func(g *airlock.Grant) { g.Expires = time.Time{} },
		"expired":            func(g *airlock.Grant) { g.Expires = now },
		"too long":           func(g *airlock.Grant) { g.Expires = now.Add(airlock.MaxGrantTTL + time.Second) },
		"unknown kind":       func(g *airlock.Grant) { g.Pattern.Kind = "regex" },
		"an empty word":      func(g *airlock.Grant) { g.Pattern.Command = []string{"npm", ""} },
		"no words":           func(g *airlock.Grant) { g.Pattern.Command = nil },
		"exact without hash": func(g *airlock.Grant) { g.Pattern = airlock.GrantPattern{Kind: airlock.PatternExact} },
		"an unclean path":    func(g *airlock.Grant) { g.Pattern = airlock.GrantPattern{Kind: airlock.PatternPath, Path: "/w/../etc"} },
		"two kinds at once": func(g *airlock.Grant) {
			g.Pattern.Path = "/w"
		},
	} {
		g := good()
		change(&g)
		if err := g.ValidateNew(now); airlock.ErrorCode(err) != airlock.EINVALID {
			t.Errorf("%s: %v, want EINVALID", name, err)
		}
	}
}
