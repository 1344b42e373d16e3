package notify

import (
	"context"
	"fmt"
	"time"

	"github.com/airlock-dev/airlock"
)

// Clicks resolves requests for the people who click Approve or Reject in
// a chat channel. The chat user must map to an Airlock identity, that
// identity must be a person authorised for the request (a reviewer the
// rule names, the agent's owner, or an admin) and never an agent, and the
// click must carry the action hash of the request it resolves. Every
// refusal is audited (access.refused).
type Clicks struct {
	Store airlock.Store
	// Channel is the channel's name, for audit records.
	Channel string
	// Surface is recorded with each resolution (slack, feishu).
	Surface airlock.Surface
	// Users maps the chat's user IDs to Airlock identities.
	Users map[string]string
	// Path is the callback's URL path, for audit records.
	Path string
	// Remember, when set, makes the standing grant of a request the
	// person just approved ("approve and remember"; Gate.Remember, then
	// the store), granted by them; nil, the chat offers no such button.
	Remember func(ctx context.Context, ap airlock.Approval, by string) (airlock.Grant, error)
}

// RememberApproved makes the standing grant of ap, which user just
// approved (Resolve): the narrowest shape that covers its action, for 7
// days, granted by the person user maps to. Errors: ENOTIMPL when the
// channel cannot remember, and the gate's and the store's (a policy that
// keeps grants out: EUNAUTHORIZED).
func (c *Clicks) RememberApproved(ctx context.Context, user string, ap airlock.Approval) (airlock.Grant, error) {
	if c.Remember == nil {
		return airlock.Grant{}, airlock.Errorf(airlock.ENOTIMPL, "this channel does not make standing grants")
	}
	return c.Remember(ctx, ap, c.Users[user])
}

// Refusal is a click refused: Message is safe to show the person who
// clicked; Code is the stable code.
type Refusal struct {
	Code    string
	Message string
}

func (r *Refusal) Error() string { return r.Code + ": " + r.Message }

// Resolve approves or rejects request id, bound to hash, for chat user
// user. It returns the settled request, or a *Refusal (audited unless the
// request was already settled: a replayed click), or an error when the
// store failed.
func (c *Clicks) Resolve(ctx context.Context, user, id string, hash airlock.Hash, status airlock.ApprovalStatus, reason string) (airlock.Approval, error) {
	who, mapped := c.Users[user]
	ap, err := c.Store.Approval(ctx, id)
	switch code := airlock.ErrorCode(err); {
	case code == airlock.ENOTFOUND:
		return ap, c.refuse(ctx, user, who, nil, airlock.ENOTFOUND, "no approval request "+id)
	case err != nil:
		return ap, err
	}
	if !mapped {
		return ap, c.refuse(ctx, user, who, &ap, airlock.EUNAUTHORIZED,
			fmt.Sprintf("%s user %s is not mapped to an Airlock reviewer (notifications.channels[%s].users)", c.Surface, user, c.Channel))
	}
	rev, err := c.reviewer(ctx, who)
	if err != nil {
		return ap, err
	}
	if rev.Name == "" {
		return ap, c.refuse(ctx, user, who, &ap, airlock.EUNAUTHORIZED,
			fmt.Sprintf("%s is an agent: an agent never resolves a request", who))
	}
	if ap.Status != airlock.StatusPending {
		return ap, &Refusal{Code: airlock.ECONFLICT, Message: settledMessage(&ap)}
	}
	got, err := c.Store.ResolveApproval(ctx, airlock.Resolution{
		ApprovalID: id, Status: status, ActionHash: hash, Reviewer: rev, Reason: reason, Surface: c.Surface,
	})
	switch code := airlock.ErrorCode(err); code {
	case "":
		return got, nil
	case airlock.EUNAUTHORIZED, airlock.CodeHashMismatch:
		return got, c.refuse(ctx, user, who, &ap, code, airlock.ErrorMessage(err))
	case airlock.ECONFLICT, airlock.CodeTimeout:
		if now, rerr := c.Store.Approval(ctx, id); rerr == nil {
			return now, &Refusal{Code: code, Message: settledMessage(&now)}
		}
		return got, &Refusal{Code: code, Message: airlock.ErrorMessage(err)}
	default:
		return got, err
	}
}

// reviewer returns the identity as a reviewer — an admin when a live admin
// token bears the name — or a zero Reviewer when the name is an agent's.
func (c *Clicks) reviewer(ctx context.Context, name string) (airlock.Reviewer, error) {
	toks, err := c.Store.Tokens(ctx)
	if err != nil {
		return airlock.Reviewer{}, err
	}
	rev := airlock.Reviewer{Name: name}
	now := time.Now()
	for _, t := range toks {
		switch {
		case t.Role == airlock.RoleAgent && t.Agent == name:
			return airlock.Reviewer{}, nil
		case t.Role == airlock.RoleAdmin && t.Name == name && t.Live(now):
			rev.Admin = true
		}
	}
	return rev, nil
}

// refuse audits a refused click and returns its Refusal.
func (c *Clicks) refuse(ctx context.Context, user, who string, ap *airlock.Approval, code, msg string) error {
	r := airlock.AccessRefused{Method: "POST", Path: c.Path, Code: code, Reason: msg,
		Subject: fmt.Sprintf("%s:%s/%s", c.Surface, c.Channel, user)}
	if who != "" {
		r.Subject += " (" + who + ")"
	}
	agent := ""
	if ap != nil {
		r.ApprovalID, r.Action, agent = ap.ID, ap.Summary, ap.Agent
	}
	if _, err := c.Store.Append(ctx, r.Record(agent)); err != nil {
		return err
	}
	return &Refusal{Code: code, Message: msg}
}

// settledMessage says how a request ended.
func settledMessage(ap *airlock.Approval) string {
	switch {
	case ap.ResolvedBy != "":
		return fmt.Sprintf("this request was already %s by %s", ap.Status, ap.ResolvedBy)
	default:
		return "this request is already " + string(ap.Status)
	}
}

// RememberedText tells the person who approved and remembered what came of
// the grant: g, or why none was made (err).
func RememberedText(g airlock.Grant, err error) string {
	if err != nil {
		return "✅ Approved. No standing grant was made: " + airlock.ErrorMessage(err)
	}
	return fmt.Sprintf("✅ Approved and remembered: %s may run %s (%s) without asking, up to %s, until %s (grant %s; airlock grants revoke %s ends it)",
		g.Agent, g.Pattern.String(), g.Tool, g.MaxTier, g.Expires.UTC().Format(time.RFC3339), g.ID, g.ID)
}
