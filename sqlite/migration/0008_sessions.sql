-- The web inbox's sessions, kept in the store so that every process on it
-- recognises a session another started, and a sign-out ends it everywhere.
-- Only hashes: the cookie's value and the token's secret are never kept.
-- token_id names no row of tokens: a token of the configuration file signs
-- in too.
CREATE TABLE sessions (
	id_hash     BLOB    PRIMARY KEY CHECK (length(id_hash) = 32),
	token_id    TEXT    NOT NULL,
	secret_hash BLOB    NOT NULL CHECK (length(secret_hash) = 32),
	created     INTEGER NOT NULL,
	seen        INTEGER NOT NULL
) STRICT;
