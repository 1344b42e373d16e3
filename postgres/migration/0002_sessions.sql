-- The web inbox's sessions, kept in the store so that every replica
-- recognises a session another started, and a sign-out ends it everywhere.
-- Only hashes: the cookie's value and the token's secret are never kept.
-- token_id names no row of tokens: a token of the configuration file signs
-- in too. Not audited, and written outside the chain's lock.
CREATE TABLE sessions (
	id_hash     bytea  PRIMARY KEY CHECK (length(id_hash) = 32),
	token_id    text   COLLATE "C" NOT NULL,
	secret_hash bytea  NOT NULL CHECK (length(secret_hash) = 32),
	created     bigint NOT NULL,
	seen        bigint NOT NULL
);
