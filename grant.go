package airlock

import (
	"path"
	"slices"
	"strings"
	"time"
)

// A Grant is a narrow, recorded, expiring loosening of one decision, kept
// in the store (docs/POLICY.md, "Grants"): the actions its scope covers —
// an agent or a glob of agents, one tool, a pattern over the arguments —
// run with its outcome (auto or notify) instead of asking, up to its
// ceiling tier, until it expires or is revoked. A grant never overrides a
// deny, a floor or needs-human. A person makes every one: by approving a
// request and remembering it, or by ratifying a proposal.
type Grant struct {
	ID string `json:"id"` // UUIDv7
	// Agent is the agent it covers, or a glob of agents ("ci-*").
	Agent string `json:"agent"`
	// Tool is the one tool it covers, by exact name.
	Tool string `json:"tool"`
	// Pattern narrows the arguments it covers.
	Pattern GrantPattern `json:"pattern"`
	// Outcome is what a covered action gets: Auto or Notify.
	Outcome Outcome `json:"outcome"`
	// MaxTier is the highest tier it reaches: a covered action classified
	// above it asks as it did.
	MaxTier RiskTier `json:"max_tier"`
	// Budget, when set, bounds how much it lets run (its key is
	// "grant:<id>"): spent, the grant covers nothing until the window frees
	// some.
	Budget *Budget `json:"budget,omitempty"`
	// BudgetUsed is what the budget's window had used when the grant was
	// read through the API (not stored; 0 without a budget).
	BudgetUsed int64 `json:"budget_used,omitempty"`
	// GrantedBy is the person who granted it; Approval the request it was
	// granted from ("" for a ratified proposal); Reason why.
	GrantedBy string    `json:"granted_by"`
	Approval  string    `json:"approval,omitempty"`
	Reason    string    `json:"reason,omitempty"`
	Created   time.Time `json:"created"`
	Expires   time.Time `json:"expires"`
	Revoked   time.Time `json:"revoked,omitzero"`
	RevokedBy string    `json:"revoked_by,omitempty"`
	// RevokeReason is why it was revoked.
	RevokeReason string `json:"revoke_reason,omitempty"`
}

// Grant pattern kinds: what part of an action a grant's pattern looks at.
const (
	// PatternExact covers the one action whose hash is Pattern.Hash.
	PatternExact = "exact"
	// PatternCommand covers a shell command whose words start with
	// Pattern.Command (program, subcommand, ...): each command of a script
	// is decided on its own, so `npm test; rm -rf ~` is two commands and
	// the grant covers only the first.
	PatternCommand = "command"
	// PatternPath covers an action whose path arguments all lie under the
	// directory Pattern.Path.
	PatternPath = "path"
)

// GrantPattern is what a grant covers of an action's arguments.
type GrantPattern struct {
	Kind string `json:"kind"`
	// Hash is the exact action's (PatternExact).
	Hash Hash `json:"hash,omitzero"`
	// Command is a command's leading words (PatternCommand).
	Command []string `json:"command,omitempty"`
	// Path is an absolute, clean directory (PatternPath).
	Path string `json:"path,omitempty"`
}

// String says what the pattern covers, as a person reads it: "`npm test
// …`", "the files under /w/docs", "the action sha256:9f86d0818847…".
func (p GrantPattern) String() string {
	switch p.Kind {
	case PatternCommand:
		return "`" + strings.Join(p.Command, " ") + " …`"
	case PatternPath:
		return "the files under " + p.Path
	case PatternExact:
		return "the action sha256:" + p.Hash.String()[:12] + "…"
	}
	return "nothing (pattern " + p.Kind + ")"
}

// maxGrantText bounds a grant's free text (its reason, who granted it).
const maxGrantText = 2000

// MaxGrantTTL is the longest a grant may last: a standing loosening is
// renewed by a person, never forever.
const MaxGrantTTL = 90 * 24 * time.Hour

// DefaultRememberTTL is how long an "approve and remember" grant lasts
// unless the reviewer says otherwise.
const DefaultRememberTTL = 7 * 24 * time.Hour

// ValidateNew reports whether g can be stored as a new grant whose life
// starts now: an ID, a scope, an outcome that loosens, a ceiling, who
// granted it, and an expiry after now within MaxGrantTTL.
func (g *Grant) ValidateNew(now time.Time) error {
	if g.ID == "" {
		return Errorf(EINVALID, "grant has no id")
	}
	if err := g.Validate(); err != nil {
		return err
	}
	switch {
	case !g.Expires.After(now):
		return Errorf(EINVALID, "grant %s expires at %s, which is not after now", g.ID, g.Expires.UTC().Format(time.RFC3339))
	case g.Expires.Sub(now) > MaxGrantTTL:
		return Errorf(EINVALID, "grant %s lasts %s: at most %s", g.ID, g.Expires.Sub(now).Round(time.Hour), MaxGrantTTL)
	}
	return nil
}

// Validate reports whether the grant's fields are each well formed.
func (g *Grant) Validate() error {
	switch {
	case g.Agent == "":
		return Errorf(EINVALID, "grant %s names no agent", g.ID)
	case g.Tool == "":
		return Errorf(EINVALID, "grant %s names no tool", g.ID)
	case g.Outcome != Auto && g.Outcome != Notify:
		return Errorf(EINVALID, "grant %s: outcome %s, want auto or notify: a grant only loosens", g.ID, g.Outcome)
	case !g.MaxTier.Valid():
		return Errorf(EINVALID, "grant %s has no ceiling tier (max_tier)", g.ID)
	case g.GrantedBy == "":
		return Errorf(EINVALID, "grant %s names no one who granted it: a person grants every grant", g.ID)
	case len(g.Reason) > maxGrantText || len(g.GrantedBy) > maxGrantText || len(g.RevokeReason) > maxGrantText:
		return Errorf(EINVALID, "grant %s: a text field is longer than %d bytes", g.ID, maxGrantText)
	case g.Expires.IsZero():
		return Errorf(EINVALID, "grant %s never expires: every grant has an expiry", g.ID)
	}
	if _, err := path.Match(g.Agent, ""); err != nil {
		return Errorf(EINVALID, "grant %s: agent %q is not a valid glob", g.ID, g.Agent)
	}
	if g.Budget != nil {
		if err := g.Budget.Validate(true); err != nil {
			return Errorf(EINVALID, "grant %s: %s", g.ID, ErrorMessage(err))
		}
	}
	return g.Pattern.validate(g.ID)
}

func (p *GrantPattern) validate(id string) error {
	switch p.Kind {
	case PatternExact:
		if p.Hash.IsZero() || len(p.Command) > 0 || p.Path != "" {
			return Errorf(EINVALID, "grant %s: an exact pattern has the action's hash, and only it", id)
		}
	case PatternCommand:
		if len(p.Command) == 0 || !p.Hash.IsZero() || p.Path != "" {
			return Errorf(EINVALID, "grant %s: a command pattern has a command's leading words, and only them", id)
		}
		if slices.Contains(p.Command, "") {
			return Errorf(EINVALID, "grant %s: a command pattern has an empty word", id)
		}
	case PatternPath:
		if !path.IsAbs(p.Path) || path.Clean(p.Path) != p.Path || !p.Hash.IsZero() || len(p.Command) > 0 {
			return Errorf(EINVALID, "grant %s: a path pattern has an absolute, clean directory, and only it (got %q)", id, p.Path)
		}
	default:
		return Errorf(EINVALID, "grant %s: unknown pattern kind %q (valid: %s, %s, %s)", id, p.Kind, PatternExact, PatternCommand, PatternPath)
	}
	return nil
}

// Live reports whether the grant is in force at now: not revoked, not
// expired.
func (g *Grant) Live(now time.Time) bool {
	return g.Revoked.IsZero() && now.Before(g.Expires)
}

// BudgetKey is the key of the grant's budget account.
func (g *Grant) BudgetKey() string { return "grant:" + g.ID }

// CoversAgent reports whether the grant's agent (a name or a glob) covers
// agent.
func (g *Grant) CoversAgent(agent string) bool {
	if g.Agent == agent {
		return true
	}
	ok, _ := path.Match(g.Agent, agent)
	return ok
}

// CoversCommand reports whether a command pattern covers a command of the
// given words: its words start with the pattern's, word for word.
func (p *GrantPattern) CoversCommand(words []string) bool {
	return p.Kind == PatternCommand && len(words) >= len(p.Command) && slices.Equal(words[:len(p.Command)], p.Command)
}

// CoversPaths reports whether a path pattern covers an action whose path
// arguments are paths (absolute and clean): there is at least one, and
// each lies under the pattern's directory.
func (p *GrantPattern) CoversPaths(paths []string) bool {
	if p.Kind != PatternPath || len(paths) == 0 {
		return false
	}
	for _, q := range paths {
		if q != p.Path && !strings.HasPrefix(q, strings.TrimSuffix(p.Path, "/")+"/") {
			return false
		}
	}
	return true
}

// GrantFilter selects grants. The zero filter selects every grant.
type GrantFilter struct {
	// Agent, when set, keeps the grants whose agent (name or glob) covers
	// it.
	Agent string
	// LiveAt, when set, keeps the grants in force at that time.
	LiveAt time.Time
	// Limit bounds the page (0: DefaultPageSize, at most MaxPageSize).
	Limit int
	// Unlimited lists every grant the filter selects, however many, Limit
	// aside: what a gate puts in force (Enforcer.KeepGrants).
	Unlimited bool
}

// Events of grants.
const (
	EventGrantCreated      = "grant.created"            // a person granted a standing grant
	EventGrantRevoked      = "grant.revoked"            // a person revoked one
	EventGrantExpired      = "grant.expired"            // one passed its expiry unrevoked
	EventProposalDismissed = "grant.proposal_dismissed" // a person dismissed a proposed grant
	EventProposalDigest    = "grant.proposal_digest"    // the periodic digest of proposals to agents' owners
)

// ProposalDigest is the payload of the periodic digest of proposals: what
// each agent has proposed, and whose owner was told.
type ProposalDigest struct {
	Agents []DigestEntry `json:"agents"`
}

// DigestEntry is one agent's line of a digest.
type DigestEntry struct {
	Agent     string   `json:"agent"`
	Owner     string   `json:"owner,omitempty"`
	Proposals []string `json:"proposals"` // what each would let run
}

// CreatedRecord is the audit record of the grant's creation: its payload
// is the Grant, filed under its agent (the glob, when it is one).
func (g *Grant) CreatedRecord() Record {
	return Record{Events: []Event{NewEvent(EventGrantCreated, &Action{Agent: g.Agent, Tool: g.Tool}, g.Outcome.String(), g.Approval, g)}}
}

// ExpiredRecord is the audit record of the grant's expiry.
func (g *Grant) ExpiredRecord() Record {
	return Record{Events: []Event{NewEvent(EventGrantExpired, &Action{Agent: g.Agent, Tool: g.Tool}, "expired", g.Approval, g)}}
}

// RevokedRecord is the audit record of the grant's revocation.
func (g *Grant) RevokedRecord() Record {
	return Record{Events: []Event{NewEvent(EventGrantRevoked, &Action{Agent: g.Agent, Tool: g.Tool}, "revoked", g.Approval, g)}}
}

// GrantList is a page of grants, newest first.
type GrantList struct {
	Grants []Grant `json:"grants"`
}

// A Proposal is a standing grant Airlock proposes from the record (issue
// 26, "earned autonomy"): the same shape of action approved often enough,
// by enough people, never rejected, and read before it was approved. A
// person ratifies it, narrows it or leaves it; nothing is granted without
// one.
type Proposal struct {
	// Grant is the grant ratifying it would make: its agent, tool, shape
	// and the highest tier approved (no ID, granter or expiry yet).
	Grant Grant `json:"grant"`
	// Evidence is each approval of that shape in the window, oldest first.
	Evidence []Evidence `json:"evidence"`
	// Reviewers are the distinct people who approved them.
	Reviewers []string `json:"reviewers"`
	// MedianWait is the median time from request to approval.
	MedianWait Duration `json:"median_wait"`
	// Covered is how many of the agent's asks of the last 30 days the
	// grant would have let run without a person (the recorded decisions
	// replayed through the policy with the grant in force).
	Covered int `json:"covered"`
	// CoveredSeqs are the audit sequence numbers of some of those asks'
	// decisions (a few examples).
	CoveredSeqs []int64 `json:"covered_seqs,omitempty"`
}

// Evidence is one approval a proposal rests on.
type Evidence struct {
	ApprovalID string    `json:"approval_id"`
	ActionHash Hash      `json:"action_hash"`
	Reviewer   string    `json:"reviewer"`
	Waited     Duration  `json:"waited"`
	Resolved   time.Time `json:"resolved"`
}

// A ProposalDismissal is a person's "no" to a proposed grant: the proposal
// is not made again until its evidence changes — until an approval it did
// not rest on when it was dismissed comes to count for it. It is kept in
// the audit log (EventProposalDismissed).
type ProposalDismissal struct {
	// Grant is the dismissed proposal's grant: agent, tool and shape.
	Grant Grant `json:"grant"`
	// Evidence is the approvals the proposal rested on.
	Evidence []string `json:"evidence"`
	By       string   `json:"by"`
	Reason   string   `json:"reason,omitempty"`
}

// Record is the audit record of the dismissal, filed under the proposal's
// agent.
func (d *ProposalDismissal) Record() Record {
	return Record{Events: []Event{NewEvent(EventProposalDismissed, &Action{Agent: d.Grant.Agent, Tool: d.Grant.Tool}, "dismissed", "", d)}}
}

// ProposalList is the proposals of a window, the strongest first.
type ProposalList struct {
	Proposals []Proposal `json:"proposals"`
}
