package gate

import (
	"context"
	"path"
	"strings"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/catalog"
	"github.com/google/uuid"
)

// Remember proposes the standing grant that "approve and remember" makes
// of an approved request: the narrowest shape that covers its action, for
// its agent and tool, up to the tier it was approved at, for ttl (0:
// airlock.DefaultRememberTTL) from now. The shape is a shell call's one
// command, by its words (`npm test` covers `npm test --watch`, not `npm
// publish`, nor a script with another command); a file tool's directory,
// when every path it names lies in one; else the exact action. shape,
// when not nil, is the reviewer's own — narrower or wider — which must
// still cover the approved action. by is the person granting it.
func (g *Gate) Remember(ctx context.Context, ap airlock.Approval, shape *airlock.GrantPattern, by, reason string, ttl time.Duration, now time.Time) (airlock.Grant, error) {
	if ap.Status != airlock.StatusApproved {
		return airlock.Grant{}, airlock.Errorf(airlock.ECONFLICT, "approval %s is %s: only an approved request is remembered", ap.ID, ap.Status)
	}
	if ttl == 0 {
		ttl = airlock.DefaultRememberTTL
	}
	gr := airlock.Grant{
		ID: uuid.Must(uuid.NewV7()).String(), Agent: ap.Agent, Tool: ap.Tool, Outcome: airlock.Auto, MaxTier: ap.Tier,
		GrantedBy: by, Approval: ap.ID, Reason: reason, Expires: now.Add(ttl),
	}
	var effects []*airlock.Command
	var commands int
	var err error
	gr.Pattern, effects, commands, err = g.narrowest(ctx, &ap.Action, ap.ActionHash)
	if err != nil {
		return airlock.Grant{}, airlock.Errorf(airlock.EINVALID, "approval %s: %s", ap.ID, airlock.ErrorMessage(err))
	}
	if shape != nil {
		if !shapeCovers(shape, &ap, effects, commands) {
			return airlock.Grant{}, airlock.Errorf(airlock.EINVALID, "approval %s: %s does not cover the approved action, so it cannot be remembered so",
				ap.ID, shape)
		}
		gr.Pattern = *shape
	}
	if ok, why := g.state.Load().stackFor(ap.SessionID).allowGrant(&ap.Action, &view{tier: ap.Tier}); !ok {
		return airlock.Grant{}, airlock.Errorf(airlock.EUNAUTHORIZED, "approval %s is approved, but no grant is made: %s", ap.ID, why)
	}
	if err := gr.ValidateNew(now); err != nil {
		return airlock.Grant{}, err
	}
	return gr, nil
}

// narrowest is the narrowest shape that covers the action whose hash is
// h: a shell call's one command, by its words; a file tool's directory,
// when every path it names lies in one; else the exact action. It returns
// the action's commands with an effect, and how many commands it has.
func (g *Gate) narrowest(ctx context.Context, a *airlock.Action, h airlock.Hash) (airlock.GrantPattern, []*airlock.Command, int, error) {
	d := g.Decide(ctx, *a)
	if d.Code == airlock.CodeInvalid {
		return airlock.GrantPattern{}, nil, 0, airlock.Errorf(airlock.EINVALID, "its action is not valid: %s", d.Classification.Reason)
	}
	var effects []*airlock.Command
	for i := range d.Classification.Commands {
		if c := &d.Classification.Commands[i]; !c.Inert {
			effects = append(effects, c)
		}
	}
	commands := len(d.Classification.Commands)
	switch {
	case len(effects) == 1 && len(effects[0].Via) == 0 && commands == 1:
		return airlock.GrantPattern{Kind: airlock.PatternCommand, Command: strings.Fields(effects[0].Text)}, effects, commands, nil
	case commands == 0:
		if paths, ok := catalog.Paths(a, nil); ok {
			if dir := commonDir(paths); dir != "/" {
				return airlock.GrantPattern{Kind: airlock.PatternPath, Path: dir}, effects, commands, nil
			}
		}
	}
	return airlock.GrantPattern{Kind: airlock.PatternExact, Hash: h}, effects, commands, nil
}

// Shape is the shape of a request's action that batch review and proposals
// group by: the narrowest shape that covers it (see Remember), a command
// cut to its program and subcommand. Requests of one agent and tool with
// the same shape are "the same thing asked again".
func (g *Gate) Shape(ctx context.Context, ap *airlock.Approval) (airlock.GrantPattern, error) {
	p, _, _, err := g.narrowest(ctx, &ap.Action, ap.ActionHash)
	if p.Kind == airlock.PatternCommand {
		p.Command = p.Command[:min(2, len(p.Command))]
	}
	return p, err
}

// RememberApproved makes and stores the standing grant of ap, which by
// approved (Remember, on the store's clock): "approve and remember" from
// every place a reviewer approves. budget, when not nil, bounds it.
func (e *Enforcer) RememberApproved(ctx context.Context, ap airlock.Approval, shape *airlock.GrantPattern, budget *airlock.Budget,
	by, reason string, ttl time.Duration) (airlock.Grant, error) {
	now, err := e.Store.Now(ctx)
	if err != nil {
		return airlock.Grant{}, err
	}
	g, err := e.Gate.Remember(ctx, ap, shape, by, reason, ttl, now)
	if err != nil {
		return g, err
	}
	g.Budget = budget
	return e.Store.CreateGrant(ctx, g)
}

// commonDir is the deepest directory that holds every path: the parent of
// a single file.
func commonDir(paths []string) string {
	dir := path.Dir(paths[0])
	for _, p := range paths[1:] {
		for dir != "/" && p != dir && !strings.HasPrefix(p, dir+"/") {
			dir = path.Dir(dir)
		}
	}
	return dir
}

// shapeCovers reports whether a reviewer's shape covers the approved action as
// the gate would decide it: its one command run through no wrapper, every
// path of its file tool, or its exact hash.
func shapeCovers(shape *airlock.GrantPattern, ap *airlock.Approval, effects []*airlock.Command, commands int) bool {
	switch shape.Kind {
	case airlock.PatternExact:
		return shape.Hash == ap.ActionHash
	case airlock.PatternCommand:
		return len(effects) == 1 && commands == 1 && len(effects[0].Via) == 0 && shape.CoversCommand(strings.Fields(effects[0].Text))
	case airlock.PatternPath:
		paths, ok := catalog.Paths(&ap.Action, nil)
		return ok && commands == 0 && shape.CoversPaths(paths)
	}
	return false
}
