package gate

import (
	"strings"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/catalog"
)

// grantSet is the standing grants in force: an immutable snapshot,
// swapped whole, indexed so that a decision reads only the grants that
// could cover it, however many are in force.
type grantSet struct {
	byAgent map[grantKey]*grantBucket // tool and exact agent
	globs   map[string]*grantBucket   // tool: the grants of agent globs
	now     func() time.Time
}

type grantKey struct{ tool, agent string }

// grantBucket holds the grants of one tool and agent (or of its globs), by
// what their patterns look at.
type grantBucket struct {
	exact    map[airlock.Hash][]*airlock.Grant
	commands map[string][]*airlock.Grant // by the command's first word
	paths    []*airlock.Grant
}

func (b *grantBucket) add(g *airlock.Grant) {
	switch g.Pattern.Kind {
	case airlock.PatternExact:
		if b.exact == nil {
			b.exact = map[airlock.Hash][]*airlock.Grant{}
		}
		b.exact[g.Pattern.Hash] = append(b.exact[g.Pattern.Hash], g)
	case airlock.PatternCommand:
		if b.commands == nil {
			b.commands = map[string][]*airlock.Grant{}
		}
		b.commands[g.Pattern.Command[0]] = append(b.commands[g.Pattern.Command[0]], g)
	case airlock.PatternPath:
		b.paths = append(b.paths, g)
	}
}

// SetGrants puts grants in force (the store's live ones: the server keeps
// them in step, Enforcer.KeepGrants): from now on an action a grant
// covers, which the policy stack would have asked about, gets the grant's
// outcome instead. A grant never loosens a deny, a floor, needs-human or
// an unanalysable script, and never reaches above its ceiling tier.
// Expired, revoked and malformed grants are ignored; now is the clock they
// expire by (nil: time.Now).
func (g *Gate) SetGrants(grants []airlock.Grant, now func() time.Time) {
	if now == nil {
		now = time.Now
	}
	set := &grantSet{byAgent: map[grantKey]*grantBucket{}, globs: map[string]*grantBucket{}, now: now}
	n := 0
	for i := range grants {
		gr := grants[i]
		if gr.Validate() != nil || !gr.Revoked.IsZero() {
			continue
		}
		var b *grantBucket
		if strings.ContainsAny(gr.Agent, `*?[\`) {
			if b = set.globs[gr.Tool]; b == nil {
				b = &grantBucket{}
				set.globs[gr.Tool] = b
			}
		} else {
			k := grantKey{gr.Tool, gr.Agent}
			if b = set.byAgent[k]; b == nil {
				b = &grantBucket{}
				set.byAgent[k] = b
			}
		}
		b.add(&gr)
		n++
	}
	if n == 0 {
		set = nil
	}
	g.grants.Store(set)
}

// cover returns the grant that covers the view of the action x decides, or
// nil: a live grant of the action's tool whose agent covers its agent,
// whose ceiling reaches the view's tier, and whose pattern covers the view
// (the exact action; a shell command's leading words, run through no
// wrapper; every path of a file tool under a directory).
//
// A grant with a budget covers only what its budget can measure, and not
// once it is known spent (n notes why); the charge returned is what the
// grant that covers takes from its budget (nil for none).
func (s *grantSet) cover(x *activation, v *view, n *notes) (*airlock.Grant, *airlock.BudgetCharge) {
	if s == nil {
		return nil, nil
	}
	exact, glob := s.byAgent[grantKey{x.a.Tool, x.a.Agent}], s.globs[x.a.Tool]
	if exact == nil && glob == nil {
		return nil, nil
	}
	now := s.now()
	var charge *airlock.BudgetCharge
	usable := func(gr *airlock.Grant) bool {
		return gr.Live(now) && v.tier <= gr.MaxTier && gr.CoversAgent(x.a.Agent)
	}
	var words []string
	if v.cmd != nil && len(v.cmd.Via) == 0 {
		words = strings.Fields(v.cmd.Text)
	}
	var paths []string
	pathsRead := false
	// Of the grants that cover the view, the narrowest decides (the exact
	// action, then the longest command, then the deepest directory; an
	// agent's own before a glob's), so that the explanation names the
	// grant closest to what ran.
	var best *airlock.Grant
	bestRank := -1
	consider := func(gr *airlock.Grant, rank int) {
		if rank <= bestRank || !usable(gr) {
			return
		}
		var c *airlock.BudgetCharge
		if gr.Budget != nil {
			bc, err := grantCharge(x, gr)
			if !budgetApplies(x, bc, err, "grant "+gr.ID, n) {
				return
			}
			c = &bc
		}
		best, bestRank, charge = gr, rank, c
	}
	for bi, b := range [2]*grantBucket{exact, glob} {
		if b == nil {
			continue
		}
		own := 1 - bi // an agent's own grant ranks above a glob's of the same narrowness
		if len(b.exact) > 0 {
			if h, err := x.a.Hash(); err == nil {
				for _, gr := range b.exact[h] {
					consider(gr, 1<<20+own)
				}
			}
		}
		if len(words) > 0 {
			for _, gr := range b.commands[words[0]] {
				if gr.Pattern.CoversCommand(words) {
					consider(gr, 2*len(gr.Pattern.Command)+own)
				}
			}
		}
		if len(b.paths) > 0 && v.cmd == nil {
			if !pathsRead {
				paths, _ = catalog.Paths(x.a, x.decodedArgs())
				pathsRead = true
			}
			for _, gr := range b.paths {
				if gr.Pattern.CoversPaths(paths) {
					consider(gr, 2*strings.Count(gr.Pattern.Path, "/")+own)
				}
			}
		}
	}
	return best, charge
}

// granted is v loosened by the grant gr, which takes c from its budget
// (nil for none): its outcome, at least the floor.
func granted(v verdict, gr *airlock.Grant, c *airlock.BudgetCharge) verdict {
	to := max(gr.Outcome, v.floor)
	if to >= v.outcome {
		return v
	}
	ref := &airlock.GrantRef{ID: gr.ID, GrantedBy: gr.GrantedBy, Approval: gr.Approval, Expires: gr.Expires}
	v.overrides = append(v.overrides, airlock.Override{From: v.outcome, To: to, Kind: "grant",
		Reason: ref.String() + ": " + gr.Agent + " may run what it covers up to " + gr.MaxTier.String() + " without asking"})
	v.outcome, v.grant, v.source, v.rule, v.charge = to, ref, "grant", nil, c
	return v
}
