// Package passkey binds approvals to reviewers' passkeys (WebAuthn, with
// github.com/go-webauthn/webauthn): it registers a reviewer's passkey in
// the inbox, checks an approval's assertion whose challenge commits to the
// request's ID and the action hash approved (Challenge), and verifies such
// an assertion offline against the registered public key (Verify), as
// `airlock audit verify` does with the keys the audit log holds
// (docs/INBOX.md, "Passkeys").
package passkey
