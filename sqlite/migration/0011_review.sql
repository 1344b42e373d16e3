-- Review (docs/POLICY.md, "Review"): what a request needs beyond one
-- person's answer (airlock.Review), the answers so far (airlock.Vote), the
-- escalation steps taken, and a reviewer's edit (airlock.Edit), each as
-- JSON, '' for none. escalate_at is when the next escalation step is due
-- (Unix ns; 0 when none is left), for the sweeper's index of pending
-- requests; edit_hash is the edited action's hash, for the edited action
-- itself to collect an approval its original's caller could not take.
ALTER TABLE approvals ADD COLUMN review TEXT NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN votes TEXT NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN escalated INTEGER NOT NULL DEFAULT 0;
ALTER TABLE approvals ADD COLUMN escalate_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE approvals ADD COLUMN edit TEXT NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN edit_hash BLOB;
CREATE INDEX approvals_escalate ON approvals (escalate_at) WHERE status = 'pending' AND escalate_at > 0;
CREATE INDEX approvals_edited ON approvals (edit_hash) WHERE status = 'approved' AND grant_used = 0 AND edit_hash IS NOT NULL;

-- Passkeys (docs/INBOX.md, "Passkeys"): each reviewer's registered
-- WebAuthn credentials, and the one-time enrolments that let a person
-- register one (only the code's hash is kept; session is the ceremony
-- under way).
CREATE TABLE passkeys (
	id         BLOB    PRIMARY KEY,
	reviewer   TEXT    NOT NULL,
	name       TEXT    NOT NULL DEFAULT '',
	public_key BLOB    NOT NULL,
	credential TEXT    NOT NULL,
	created    INTEGER NOT NULL
) STRICT;
CREATE INDEX passkeys_reviewer ON passkeys (reviewer, created);
CREATE TABLE passkey_enrolments (
	code_hash BLOB    PRIMARY KEY,
	reviewer  TEXT    NOT NULL,
	made_by   TEXT    NOT NULL,
	created   INTEGER NOT NULL,
	expires   INTEGER NOT NULL,
	session   TEXT    NOT NULL DEFAULT ''
) STRICT;

-- Single sign-on (docs/INBOX.md): a session an identity provider started
-- holds its person (airlock.Person as JSON: name, role, groups, issuer,
-- subject) instead of a token; '' for a token's session.
ALTER TABLE sessions ADD COLUMN person TEXT NOT NULL DEFAULT '';
