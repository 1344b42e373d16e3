package airlock

import (
	"context"
	"encoding/json"
	"time"
	"unicode/utf8"
)

// Events of reviewers' passkeys: their keys are in the audit log, so that
// `airlock audit verify` checks every passkey-bound approval offline.
const (
	// EventPasskeyEnrolment: an admin let a person register a passkey
	// (the one-time code's hash is never in it).
	EventPasskeyEnrolment = "reviewer.passkey_enrolment"
	// EventPasskeyRegistered: a person registered a passkey; the payload
	// (PasskeyRegistered) holds its public key.
	EventPasskeyRegistered = "reviewer.passkey_registered"
	// EventPasskeyRemoved: a passkey no longer approves anything.
	EventPasskeyRemoved = "reviewer.passkey_removed"
)

// PasskeyCredential is a reviewer's registered passkey (a WebAuthn
// credential): what verifies their passkey-bound approvals.
type PasskeyCredential struct {
	// ID is the credential's ID, as the authenticator made it.
	ID       []byte `json:"id"`
	Reviewer string `json:"reviewer"`
	Name     string `json:"name,omitempty"`
	// PublicKey is the credential's public key (a COSE_Key).
	PublicKey []byte `json:"public_key"`
	// Credential is the WebAuthn library's whole record of it (flags,
	// authenticator, attestation), as JSON.
	Credential json.RawMessage `json:"credential"`
	Created    time.Time       `json:"created"`
}

// Validate reports whether the credential is complete enough to keep.
func (c *PasskeyCredential) Validate() error {
	switch {
	case len(c.ID) == 0 || len(c.ID) > 1023:
		return Errorf(EINVALID, "a passkey's credential ID must be 1 to 1023 bytes")
	case len(c.PublicKey) == 0:
		return Errorf(EINVALID, "a passkey has no public key")
	case len(c.Name) > 200 || !utf8.ValidString(c.Name):
		return Errorf(EINVALID, "a passkey's name must be valid UTF-8 of at most 200 bytes")
	}
	return validateName("reviewer", c.Reviewer)
}

// PasskeyRegistered is the payload of an EventPasskeyRegistered and an
// EventPasskeyRemoved: whose passkey, and its public key.
type PasskeyRegistered struct {
	Reviewer     string `json:"reviewer"`
	CredentialID []byte `json:"credential_id"`
	PublicKey    []byte `json:"public_key"`
	Name         string `json:"name,omitempty"`
	By           string `json:"by,omitempty"` // who removed it
}

// PasskeyEnrolment lets one person register a passkey, once, before it
// expires: its code is shown once to the admin who made it, and only its
// hash is kept. A session cookie alone never registers a passkey (it
// would then approve as its person): the code says an admin vouched.
type PasskeyEnrolment struct {
	Code     Hash      `json:"-"` // the SHA-256 of the code
	Reviewer string    `json:"reviewer"`
	By       string    `json:"by"`
	Created  time.Time `json:"created"`
	Expires  time.Time `json:"expires"`
	// Session is the registration ceremony under way (the WebAuthn
	// library's session data), kept between its two steps.
	Session json.RawMessage `json:"-"`
}

// NewPasskeyEnrolment is a new enrolment as its admin gets it: the code,
// shown once and never stored.
type NewPasskeyEnrolment struct {
	Code     string    `json:"code" doc:"The one-time code the person enters on the inbox's Passkeys page. Shown once."`
	Reviewer string    `json:"reviewer"`
	Expires  time.Time `json:"expires"`
}

// Validate reports whether the enrolment is complete.
func (e *PasskeyEnrolment) Validate() error {
	switch {
	case e.Code.IsZero() || e.Reviewer == "" || e.By == "":
		return Errorf(EINVALID, "a passkey enrolment needs a code, a person and who made it")
	case !e.Expires.After(e.Created):
		return Errorf(EINVALID, "a passkey enrolment must expire after it is made")
	}
	return validateName("reviewer", e.Reviewer)
}

// PasskeyAssertion is a reviewer's passkey signing one approval: a
// WebAuthn assertion whose challenge commits to the request's ID, the
// action hash approved and a nonce (package passkey's Challenge). It is
// stored with the vote, and `airlock audit verify` checks it against the
// reviewer's registered key.
type PasskeyAssertion struct {
	CredentialID      []byte `json:"credential_id"`
	AuthenticatorData []byte `json:"authenticator_data"`
	ClientDataJSON    []byte `json:"client_data_json"`
	Signature         []byte `json:"signature"`
	UserHandle        []byte `json:"user_handle,omitempty"`
	Nonce             []byte `json:"nonce"`
}

// PasskeyStore keeps reviewers' passkeys and the enrolments that let them
// register one. Each change appends its record in the same transaction.
type PasskeyStore interface {
	// CreateEnrolment stores an enrolment. Errors: EINVALID, ECONFLICT
	// (the code exists), EUNAVAILABLE.
	CreateEnrolment(ctx context.Context, e PasskeyEnrolment, rec Record) error
	// StartEnrolment keeps the registration ceremony's session with the
	// live enrolment whose code hashes to code, and returns it; with a nil
	// session it only reads it (with the session kept). Errors:
	// ENOTFOUND (no such code, used, or expired), EUNAVAILABLE.
	StartEnrolment(ctx context.Context, code Hash, session json.RawMessage) (PasskeyEnrolment, error)
	// RegisterPasskey uses the enrolment, once, to keep its person's
	// passkey c, appending rec. Errors: ENOTFOUND (the enrolment is gone),
	// EINVALID, ECONFLICT (the credential is registered), EUNAVAILABLE.
	RegisterPasskey(ctx context.Context, code Hash, c PasskeyCredential, rec Record) error
	// Passkeys returns a reviewer's passkeys, oldest first.
	Passkeys(ctx context.Context, reviewer string) ([]PasskeyCredential, error)
	// RemovePasskey removes a reviewer's passkey, appending rec. Errors:
	// ENOTFOUND, EUNAVAILABLE.
	RemovePasskey(ctx context.Context, reviewer string, id []byte, rec Record) error
}
