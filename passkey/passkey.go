package passkey

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/protocol/webauthncose"
	"github.com/go-webauthn/webauthn/webauthn"
)

// Ceremonies last this long between their two steps.
const ceremonyTTL = 5 * time.Minute

// RP is the relying party the passkeys are bound to: the inbox's origin.
type RP struct {
	wa *webauthn.WebAuthn
}

// New returns the relying party of the inbox at base (its URL, like
// https://airlock.example.com): passkeys are bound to its host name, and
// ceremonies accepted from its origin only. An IP address is not a
// relying party WebAuthn accepts: reach the inbox by a name (localhost for
// a test).
func New(base string) (*RP, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Hostname() == "" {
		return nil, fmt.Errorf("passkeys: the inbox URL %q is not an absolute http(s) URL", base)
	}
	origin := u.Scheme + "://" + u.Host
	wa, err := webauthn.New(&webauthn.Config{
		RPID: u.Hostname(), RPDisplayName: "Airlock", RPOrigins: []string{origin},
		Timeouts: webauthn.TimeoutsConfig{
			Login:        webauthn.TimeoutConfig{Enforce: true, Timeout: ceremonyTTL},
			Registration: webauthn.TimeoutConfig{Enforce: true, Timeout: ceremonyTTL},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("passkeys: %w", err)
	}
	return &RP{wa: wa}, nil
}

// user is a reviewer as WebAuthn sees them.
type user struct {
	name  string
	creds []webauthn.Credential
}

func (u *user) WebAuthnID() []byte                         { return UserHandle(u.name) }
func (u *user) WebAuthnName() string                       { return u.name }
func (u *user) WebAuthnDisplayName() string                { return u.name }
func (u *user) WebAuthnCredentials() []webauthn.Credential { return u.creds }

// UserHandle is the WebAuthn user handle of a reviewer: opaque, the same
// on every replica.
func UserHandle(reviewer string) []byte {
	h := sha256.Sum256([]byte("airlock reviewer\x00" + reviewer))
	return h[:]
}

func userOf(reviewer string, creds []airlock.PasskeyCredential) (*user, error) {
	u := &user{name: reviewer}
	for _, c := range creds {
		var wc webauthn.Credential
		if err := json.Unmarshal(c.Credential, &wc); err != nil {
			return nil, airlock.Errorf(airlock.EINTERNAL, "passkey of %s: stored credential: %v", reviewer, err)
		}
		u.creds = append(u.creds, wc)
	}
	return u, nil
}

// BeginRegistration starts registering a passkey for reviewer, who has
// the passkeys existing (which it does not register again): the options
// for the browser's navigator.credentials.create, and the session the
// second step needs.
func (rp *RP) BeginRegistration(reviewer string, existing []airlock.PasskeyCredential) (options, session json.RawMessage, err error) {
	u, err := userOf(reviewer, existing)
	if err != nil {
		return nil, nil, err
	}
	var exclude []protocol.CredentialDescriptor
	for _, c := range u.creds {
		exclude = append(exclude, c.Descriptor())
	}
	creation, sd, err := rp.wa.BeginRegistration(u,
		webauthn.WithExclusions(exclude),
		webauthn.WithResidentKeyRequirement(protocol.ResidentKeyRequirementPreferred),
		webauthn.WithAuthenticatorSelection(protocol.AuthenticatorSelection{UserVerification: protocol.VerificationRequired}))
	if err != nil {
		return nil, nil, airlock.Errorf(airlock.EINTERNAL, "begin passkey registration: %v", err)
	}
	if options, err = json.Marshal(creation); err != nil {
		return nil, nil, err
	}
	session, err = json.Marshal(sd)
	return options, session, err
}

// FinishRegistration checks the browser's answer to BeginRegistration's
// options and returns the passkey to keep. Errors: EINVALID, saying why.
func (rp *RP) FinishRegistration(reviewer string, existing []airlock.PasskeyCredential, session, response json.RawMessage,
	name string, now time.Time) (airlock.PasskeyCredential, error) {
	u, err := userOf(reviewer, existing)
	if err != nil {
		return airlock.PasskeyCredential{}, err
	}
	var sd webauthn.SessionData
	if err := json.Unmarshal(session, &sd); err != nil || len(session) == 0 {
		return airlock.PasskeyCredential{}, airlock.Errorf(airlock.EINVALID, "no passkey registration is under way: start again")
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(response)
	if err != nil {
		return airlock.PasskeyCredential{}, airlock.Errorf(airlock.EINVALID, "the passkey's answer: %s", reason(err))
	}
	wc, err := rp.wa.CreateCredential(u, sd, parsed)
	if err != nil {
		return airlock.PasskeyCredential{}, airlock.Errorf(airlock.EINVALID, "the passkey was not registered: %s", reason(err))
	}
	raw, err := json.Marshal(wc)
	if err != nil {
		return airlock.PasskeyCredential{}, err
	}
	c := airlock.PasskeyCredential{ID: wc.ID, Reviewer: reviewer, Name: name, PublicKey: wc.PublicKey, Credential: raw, Created: now}
	return c, c.Validate()
}

// Challenge is the WebAuthn challenge of a passkey-bound approval: the
// SHA-256 of the request's ID, the hash of the action approved and a
// nonce of 32 random bytes. It commits the assertion to exactly that
// approval, so that `airlock audit verify` checks offline that the
// reviewer's device signed it; the nonce keeps it unpredictable, as a
// WebAuthn challenge must be.
func Challenge(approvalID string, h airlock.Hash, nonce []byte) []byte {
	d := sha256.New()
	d.Write([]byte("airlock approval v1\x00"))
	d.Write([]byte(approvalID))
	d.Write([]byte{0})
	d.Write(h[:])
	d.Write(nonce)
	return d.Sum(nil)
}

// NonceSize is the size of an approval's nonce.
const NonceSize = 32

// BeginApproval starts reviewer's passkey approval of the request id for
// the action hash h: the options for navigator.credentials.get, and the
// nonce the approval brings back. Errors: ENOTFOUND when the reviewer has
// no passkey.
func (rp *RP) BeginApproval(reviewer string, creds []airlock.PasskeyCredential, id string, h airlock.Hash) (options json.RawMessage, nonce []byte, err error) {
	if len(creds) == 0 {
		return nil, nil, airlock.Errorf(airlock.ENOTFOUND, "%s has no passkey: register one on the inbox's Passkeys page (an admin gives the enrolment code)", reviewer)
	}
	u, err := userOf(reviewer, creds)
	if err != nil {
		return nil, nil, err
	}
	nonce = make([]byte, NonceSize)
	if _, err := rand.Read(nonce); err != nil {
		return nil, nil, err
	}
	assertion, _, err := rp.wa.BeginLogin(u, webauthn.WithChallenge(Challenge(id, h, nonce)),
		webauthn.WithUserVerification(protocol.VerificationRequired))
	if err != nil {
		return nil, nil, airlock.Errorf(airlock.EINTERNAL, "begin passkey approval: %v", err)
	}
	options, err = json.Marshal(assertion)
	return options, nonce, err
}

// FinishApproval checks the browser's assertion for reviewer's approval
// of request id, action hash h, with the nonce BeginApproval gave: signed
// by one of the reviewer's passkeys, with the user verified, at the
// inbox's origin, over exactly this approval's challenge. It returns the
// assertion to keep with the vote. Errors: EUNAUTHORIZED, saying why.
func (rp *RP) FinishApproval(reviewer string, creds []airlock.PasskeyCredential, id string, h airlock.Hash, nonce []byte,
	response json.RawMessage) (*airlock.PasskeyAssertion, error) {
	if len(nonce) != NonceSize {
		return nil, airlock.Errorf(airlock.EUNAUTHORIZED, "the passkey approval carries no nonce of %d bytes", NonceSize)
	}
	u, err := userOf(reviewer, creds)
	if err != nil {
		return nil, err
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes(response)
	if err != nil {
		return nil, airlock.Errorf(airlock.EUNAUTHORIZED, "the passkey's answer: %s", reason(err))
	}
	var allowed [][]byte
	for _, c := range u.creds {
		allowed = append(allowed, c.ID)
	}
	sd := webauthn.SessionData{
		Challenge: base64.RawURLEncoding.EncodeToString(Challenge(id, h, nonce)), RelyingPartyID: rp.wa.Config.RPID,
		UserID: u.WebAuthnID(), AllowedCredentialIDs: allowed, UserVerification: protocol.VerificationRequired,
		Expires: time.Now().Add(ceremonyTTL),
	}
	if _, err := rp.wa.ValidateLogin(u, sd, parsed); err != nil {
		return nil, airlock.Errorf(airlock.EUNAUTHORIZED, "%s's passkey did not sign approval %s of sha256:%s: %s", reviewer, id, h, reason(err))
	}
	r := parsed.Raw.AssertionResponse
	return &airlock.PasskeyAssertion{
		CredentialID: parsed.RawID, AuthenticatorData: r.AuthenticatorData, ClientDataJSON: r.ClientDataJSON,
		Signature: r.Signature, UserHandle: r.UserHandle, Nonce: nonce,
	}, nil
}

// Verify checks offline that a is a signature, by the passkey whose COSE
// public key is publicKey, of the approval of request id for action hash
// h: an assertion (webauthn.get) over this approval's challenge, with the
// user present and verified, whose signature of the authenticator data
// and the client data verifies.
func Verify(a *airlock.PasskeyAssertion, publicKey []byte, id string, h airlock.Hash) error {
	var cd protocol.CollectedClientData
	if err := json.Unmarshal(a.ClientDataJSON, &cd); err != nil {
		return fmt.Errorf("client data: %w", err)
	}
	want := base64.RawURLEncoding.EncodeToString(Challenge(id, h, a.Nonce))
	switch {
	case cd.Type != protocol.AssertCeremony:
		return fmt.Errorf("client data is of a %q ceremony, not an assertion", cd.Type)
	case cd.Challenge != want:
		return errors.New("the assertion's challenge is not this approval's (request, action hash and nonce)")
	case len(a.AuthenticatorData) < 37:
		return errors.New("authenticator data too short")
	}
	flags := protocol.AuthenticatorFlags(a.AuthenticatorData[32])
	if !flags.HasUserPresent() || !flags.HasUserVerified() {
		return errors.New("the authenticator did not verify its user")
	}
	key, err := webauthncose.ParsePublicKey(publicKey)
	if err != nil {
		return fmt.Errorf("public key: %w", err)
	}
	digest := sha256.Sum256(a.ClientDataJSON)
	ok, err := webauthncose.VerifySignature(key, bytes.Join([][]byte{a.AuthenticatorData, digest[:]}, nil), a.Signature)
	if err != nil || !ok {
		return fmt.Errorf("the signature does not verify with the registered key (%v)", err)
	}
	return nil
}

// reason is a WebAuthn error as a person reads it: its details.
func reason(err error) string {
	var pe *protocol.Error
	if errors.As(err, &pe) && pe.Details != "" {
		if pe.DevInfo != "" {
			return pe.Details + ": " + pe.DevInfo
		}
		return pe.Details
	}
	return err.Error()
}
