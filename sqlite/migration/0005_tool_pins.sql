-- The MCP tool definitions released to each agent, per MCP server: a
-- server's first listing, and each definition a person released later.
-- Only added to: a definition released stays released. The hash is SHA-256
-- of the definition's canonical JSON; created is Unix nanoseconds on the
-- store's clock.
CREATE TABLE tool_pins (
	agent       TEXT    NOT NULL,
	server      TEXT    NOT NULL,
	tool        TEXT    NOT NULL,
	hash        BLOB    NOT NULL CHECK (length(hash) = 32),
	definition  TEXT    NOT NULL,
	approval_id TEXT    NOT NULL DEFAULT '',
	created     INTEGER NOT NULL,
	PRIMARY KEY (agent, server, tool, hash)
) STRICT;
