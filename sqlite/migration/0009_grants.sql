-- Standing grants: narrow, expiring loosenings a person made (docs/POLICY.md,
-- "Grants"). The pattern is its JSON (airlock.GrantPattern). Times are Unix
-- nanoseconds on the store's clock, 0 for none. A revoked or expired grant
-- stays, so that audits and lists can still name it.
CREATE TABLE grants (
	id            TEXT    PRIMARY KEY,
	agent         TEXT    NOT NULL CHECK (agent != ''),
	tool          TEXT    NOT NULL CHECK (tool != ''),
	pattern       TEXT    NOT NULL,
	outcome       TEXT    NOT NULL CHECK (outcome IN ('auto', 'notify')),
	max_tier      TEXT    NOT NULL,
	granted_by    TEXT    NOT NULL CHECK (granted_by != ''),
	approval_id   TEXT    NOT NULL DEFAULT '',
	reason        TEXT    NOT NULL DEFAULT '',
	created       INTEGER NOT NULL,
	expires       INTEGER NOT NULL,
	revoked       INTEGER NOT NULL DEFAULT 0,
	revoked_by    TEXT    NOT NULL DEFAULT '',
	revoke_reason TEXT    NOT NULL DEFAULT '',
	-- expiry_logged is set once its grant.expired event is appended.
	expiry_logged INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX grants_created ON grants (created DESC, id DESC);
