-- Standing grants: narrow, expiring loosenings a person made (docs/POLICY.md,
-- "Grants"). The pattern is its JSON (airlock.GrantPattern). Times are Unix
-- nanoseconds on the store's clock, 0 for none. A revoked or expired grant
-- stays, so that audits and lists can still name it. Written under the
-- chain's lock, as every audited change.
CREATE TABLE grants (
	id            text   COLLATE "C" PRIMARY KEY,
	agent         text   COLLATE "C" NOT NULL CHECK (agent <> ''),
	tool          text   COLLATE "C" NOT NULL CHECK (tool <> ''),
	pattern       text   NOT NULL,
	outcome       text   NOT NULL CHECK (outcome IN ('auto', 'notify')),
	max_tier      text   NOT NULL,
	granted_by    text   NOT NULL CHECK (granted_by <> ''),
	approval_id   text   COLLATE "C" NOT NULL DEFAULT '',
	reason        text   NOT NULL DEFAULT '',
	created       bigint NOT NULL,
	expires       bigint NOT NULL,
	revoked       bigint NOT NULL DEFAULT 0,
	revoked_by    text   NOT NULL DEFAULT '',
	revoke_reason text   NOT NULL DEFAULT '',
	-- expiry_logged is set once its grant.expired event is appended.
	expiry_logged boolean NOT NULL DEFAULT false
);
CREATE INDEX grants_created ON grants (created DESC, id DESC);
