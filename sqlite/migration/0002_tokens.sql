-- The API's bearer tokens. Only the SHA-256 of each secret is kept, so a
-- copy of the database authenticates no one. Times are Unix nanoseconds on
-- the store's clock, 0 for none (expires 0: never). A revoked token stays,
-- so that audits and lists can still name it.
CREATE TABLE tokens (
	id          TEXT    PRIMARY KEY,
	role        TEXT    NOT NULL CHECK (role IN ('agent', 'reviewer', 'admin')),
	name        TEXT    NOT NULL DEFAULT '',
	agent       TEXT    NOT NULL DEFAULT '',
	secret_hash BLOB    NOT NULL UNIQUE CHECK (length(secret_hash) = 32),
	created_by  TEXT    NOT NULL DEFAULT '',
	created     INTEGER NOT NULL,
	expires     INTEGER NOT NULL DEFAULT 0,
	revoked     INTEGER NOT NULL DEFAULT 0,
	revoked_by  TEXT    NOT NULL DEFAULT '',
	-- An agent token acts as exactly one agent; the others as a person.
	CHECK ((role = 'agent') = (agent != ''))
) STRICT;
CREATE INDEX tokens_created ON tokens (created, id);
