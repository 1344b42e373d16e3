package airlock

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"time"
	"unicode/utf8"
)

// Role is what a bearer token may do.
type Role string

const (
	// RoleAgent checks actions as exactly one agent and waits on its own
	// requests. It can never resolve a request or read another agent's.
	RoleAgent Role = "agent"
	// RoleReviewer reads requests and the audit log, and resolves the
	// requests it is authorised for, as the person named on the token.
	RoleReviewer Role = "reviewer"
	// RoleAdmin may do everything, tokens included.
	RoleAdmin Role = "admin"
)

// Roles lists the valid roles.
var Roles = []Role{RoleAgent, RoleReviewer, RoleAdmin}

// Valid reports whether r is a known role.
func (r Role) Valid() bool { return r == RoleAgent || r == RoleReviewer || r == RoleAdmin }

// ParseRole reads a role name.
func ParseRole(s string) (Role, error) {
	if r := Role(s); r.Valid() {
		return r, nil
	}
	names := make([]string, len(Roles))
	for i, r := range Roles {
		names[i] = string(r)
	}
	return "", Errorf(EINVALID, "unknown role %q%s", s, suggest(s, names))
}

// TokenPrefix starts every token secret, so that a leaked one is easy to
// recognise (and for secret scanners to find).
const TokenPrefix = "airlock_"

// Token is a bearer credential as Airlock keeps it: only the SHA-256 of its
// secret is stored, so the secret is shown once, at creation.
type Token struct {
	ID   string `json:"id"` // UUIDv7; names the token in lists, audits and revocation
	Role Role   `json:"role"`
	// Name is the person an admin or reviewer token authenticates (their
	// identity as a reviewer), or a label for an agent token.
	Name string `json:"name"`
	// Agent is the one agent an agent token acts as.
	Agent     string    `json:"agent,omitempty"`
	CreatedBy string    `json:"created_by,omitempty"`
	Created   time.Time `json:"created"`
	// Expires, when set, ends the token's validity.
	Expires time.Time `json:"expires,omitzero"`
	Revoked time.Time `json:"revoked,omitzero"`
	// RevokedBy is who revoked it.
	RevokedBy string `json:"revoked_by,omitempty"`
	// Groups are the groups of a person signed in by single sign-on
	// (Person.Token), which a rule's "group:NAME" reviewers name; a
	// stored token has none.
	Groups []string `json:"groups,omitempty"`
}

// ValidateNew reports whether t can be stored as a new token under the
// hash of its secret: an ID, a secret hash, and Validate.
func (t *Token) ValidateNew(secret Hash) error {
	if t.ID == "" {
		return Errorf(EINVALID, "token has no id")
	}
	if secret.IsZero() {
		return Errorf(EINVALID, "token %s has no secret hash", t.ID)
	}
	return t.Validate()
}

// Validate reports whether the token's fields fit its role.
func (t *Token) Validate() error {
	if !t.Role.Valid() {
		_, err := ParseRole(string(t.Role))
		return err
	}
	if err := validateName("name", t.Name); err != nil {
		return err
	}
	switch {
	case t.Role == RoleAgent && t.Agent == "":
		return Errorf(EINVALID, "an agent token needs the agent it acts as")
	case t.Role != RoleAgent && t.Agent != "":
		return Errorf(EINVALID, "a %s token acts as a person, not as agent %q", t.Role, t.Agent)
	case t.Role != RoleAgent && t.Name == "":
		return Errorf(EINVALID, "a %s token needs the name of the person it authenticates", t.Role)
	}
	return validateName("agent", t.Agent)
}

// Live reports whether the token authenticates at now: not revoked, not
// expired.
func (t *Token) Live(now time.Time) bool {
	return t.Revoked.IsZero() && (t.Expires.IsZero() || now.Before(t.Expires))
}

// Reviewer is the identity the token resolves requests as.
func (t *Token) Reviewer() Reviewer {
	return Reviewer{Name: t.Name, Admin: t.Role == RoleAdmin, Groups: t.Groups}
}

// Subject names who holds the token, in audit records and messages:
// "agent:coder-1", "reviewer:bob", "admin:ops".
func (t *Token) Subject() string {
	if t.Role == RoleAgent {
		return "agent:" + t.Agent
	}
	return string(t.Role) + ":" + t.Name
}

// NewTokenSecret returns a fresh secret (256 random bits) and its hash.
func NewTokenSecret() (string, Hash) {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	s := TokenPrefix + base64.RawURLEncoding.EncodeToString(b)
	return s, HashTokenSecret(s)
}

// HashTokenSecret returns the hash under which a secret is stored. A plain
// SHA-256 is enough: secrets carry 256 random bits, nothing to brute-force.
func HashTokenSecret(secret string) Hash {
	return sha256.Sum256([]byte(strings.TrimSpace(secret)))
}

// CreatedRecord returns what a store appends when it creates the token.
func (t *Token) CreatedRecord() Record {
	return Record{Events: []Event{NewEvent(EventTokenCreated, nil, string(t.Role), "", t)}}
}

// RevokedRecord returns what a store appends when it revokes the token.
func (t *Token) RevokedRecord() Record {
	return Record{Events: []Event{NewEvent(EventTokenRevoked, nil, string(t.Role), "", t)}}
}

// AccessRefused is the payload of an access.refused event: a request the
// API refused to authenticate or authorise.
type AccessRefused struct {
	// Subject is who the token names ("" when no valid token was given).
	Subject string `json:"subject,omitempty"`
	TokenID string `json:"token_id,omitempty"`
	Method  string `json:"method"`
	Path    string `json:"path"`
	Remote  string `json:"remote,omitempty"`
	Code    string `json:"code"`
	Reason  string `json:"reason"`
	// Target is the agent the caller reached for, when not its own.
	Target string `json:"target,omitempty"`
	// ApprovalID is the request the caller was refused on, if any (also the
	// event's approval_id), and Action its summary when a person was
	// refused (an agent's refusal never repeats another agent's action).
	ApprovalID string `json:"approval_id,omitempty"`
	Action     string `json:"action,omitempty"`
	// Suppressed counts unauthenticated refusals since the previous
	// audited one that were only counted (rate limit), not recorded.
	Suppressed int64 `json:"suppressed,omitempty"`
}

// maxRefusalField bounds each text a refusal record keeps of the request:
// a caller without a token must not be able to write large audit rows.
const maxRefusalField = 256

// Record returns the audit record of the refusal. agent is the agent the
// refused caller acted as or tried to act on, if any.
func (r AccessRefused) Record(agent string) Record {
	r.Path, r.Reason, r.Remote = clip(r.Path), clip(r.Reason), clip(r.Remote)
	r.Subject, r.Target = clip(r.Subject), clip(r.Target)
	r.ApprovalID, r.Action = clip(r.ApprovalID), clip(r.Action)
	ev := NewEvent(EventAccessRefused, &Action{Agent: clip(agent)}, r.Code, r.ApprovalID, r)
	return Record{Events: []Event{ev}}
}

// clip cuts s to maxRefusalField bytes, on a rune boundary.
func clip(s string) string {
	if len(s) <= maxRefusalField {
		return s
	}
	cut := maxRefusalField
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// NewToken is a created token with its secret, shown this once.
type NewToken struct {
	Token  Token  `json:"token"`
	Secret string `json:"secret" doc:"The bearer secret. Airlock keeps only its hash: store it now."`
}

// TokenList lists tokens, revoked ones included; never their secrets.
type TokenList struct {
	Tokens []Token `json:"tokens"`
}
