package gate

import (
	"strings"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/catalog"
)

// grantSet is the standing grants in force, by tool: an immutable
// snapshot, swapped whole.
type grantSet struct {
	byTool map[string][]airlock.Grant
	now    func() time.Time
}

// SetGrants puts grants in force (the store's live ones: package server
// code refreshes them on every change): from now on an action a grant
// covers, which the policy stack would have asked about, gets the grant's
// outcome instead. A grant never loosens a deny, a floor, needs-human or
// an unanalysable script, and never reaches above its ceiling tier.
// Expired and revoked grants are ignored; now is the clock they expire
// by (nil: time.Now).
func (g *Gate) SetGrants(grants []airlock.Grant, now func() time.Time) {
	if now == nil {
		now = time.Now
	}
	set := &grantSet{byTool: map[string][]airlock.Grant{}, now: now}
	for _, gr := range grants {
		if gr.Validate() == nil && gr.Revoked.IsZero() {
			set.byTool[gr.Tool] = append(set.byTool[gr.Tool], gr)
		}
	}
	if len(set.byTool) == 0 {
		set = nil
	}
	g.grants.Store(set)
}

// cover returns the grant that covers the view of the action x decides, or
// nil: a live grant of the action's tool whose agent covers its agent,
// whose ceiling reaches the view's tier, and whose pattern covers the view
// (the exact action; a shell command's leading words, run through no
// wrapper; every path of a file tool under a directory).
func (s *grantSet) cover(x *activation, v *view) *airlock.Grant {
	if s == nil {
		return nil
	}
	grants := s.byTool[x.a.Tool]
	if len(grants) == 0 {
		return nil
	}
	now := s.now()
	var words []string
	for i := range grants {
		gr := &grants[i]
		if !gr.Live(now) || !gr.CoversAgent(x.a.Agent) || v.tier > gr.MaxTier {
			continue
		}
		switch gr.Pattern.Kind {
		case airlock.PatternExact:
			if h, err := x.a.Hash(); err == nil && h == gr.Pattern.Hash {
				return gr
			}
		case airlock.PatternCommand:
			if v.cmd == nil || len(v.cmd.Via) > 0 {
				continue
			}
			if words == nil {
				words = strings.Fields(v.cmd.Text)
			}
			if gr.Pattern.CoversCommand(words) {
				return gr
			}
		case airlock.PatternPath:
			if v.cmd != nil {
				continue
			}
			if paths, ok := catalog.Paths(x.a, x.decodedArgs()); ok && gr.Pattern.CoversPaths(paths) {
				return gr
			}
		}
	}
	return nil
}

// granted is v loosened by the grant gr: its outcome, at least the floor.
func granted(v verdict, gr *airlock.Grant) verdict {
	to := max(gr.Outcome, v.floor)
	if to >= v.outcome {
		return v
	}
	ref := &airlock.GrantRef{ID: gr.ID, GrantedBy: gr.GrantedBy, Approval: gr.Approval, Expires: gr.Expires}
	v.overrides = append(v.overrides, airlock.Override{From: v.outcome, To: to, Kind: "grant",
		Reason: ref.String() + ": " + gr.Agent + " may run what it covers up to " + gr.MaxTier.String() + " without asking"})
	v.outcome, v.grant, v.source, v.rule = to, ref, "grant", nil
	return v
}
