-- Airlock's schema on PostgreSQL: the final shape of the SQLite store's
-- migrations 1 to 7, in PostgreSQL's types. Times are Unix nanoseconds on
-- the store's clock (bigint, 0 for none): the precision the audit chain
-- hashes, which timestamptz (microseconds) would not keep. Names and sort
-- keys use the "C" collation: they order by their bytes, as in SQLite.

-- The audit log: append-only, hash-chained. seq is gapless: every write
-- transaction of every replica first locks the one row of chain_lock, then
-- reads the head from events, so the chain has one writer at a time and can
-- never fork. Triggers refuse every UPDATE, DELETE and TRUNCATE, so the log
-- cannot be changed through SQL without dropping them first — which the
-- chain then reveals.
CREATE TABLE events (
	seq         bigint PRIMARY KEY CHECK (seq > 0),
	time        bigint NOT NULL,
	kind        text   COLLATE "C" NOT NULL,
	trace_id    text   COLLATE "C" NOT NULL DEFAULT '',
	agent       text   COLLATE "C" NOT NULL DEFAULT '',
	outcome     text   COLLATE "C" NOT NULL DEFAULT '',
	approval_id text   COLLATE "C" NOT NULL DEFAULT '',
	payload     bytea  NOT NULL, -- the exact JSON bytes the chain covers
	prev        bytea  NOT NULL,
	hash        bytea  NOT NULL
);
CREATE INDEX events_agent ON events (agent, seq);
CREATE INDEX events_trace ON events (trace_id, seq) WHERE trace_id <> '';
CREATE INDEX events_time ON events (time);
CREATE INDEX events_approval ON events (approval_id, seq) WHERE approval_id <> '';

CREATE FUNCTION events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION 'the audit log is append-only';
END $$;
CREATE TRIGGER events_no_update BEFORE UPDATE OR DELETE ON events
	FOR EACH ROW EXECUTE FUNCTION events_append_only();
CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events
	FOR EACH STATEMENT EXECUTE FUNCTION events_append_only();

-- The chain's lock: one row, locked (SELECT … FOR UPDATE) by every write
-- transaction before anything else, held until its commit.
CREATE TABLE chain_lock (
	id boolean PRIMARY KEY DEFAULT true CHECK (id)
);
INSERT INTO chain_lock DEFAULT VALUES;

-- Approval requests. action holds the exact action (JSON text as written)
-- whose SHA-256 is action_hash; the other columns are copies for filtering.
CREATE TABLE approvals (
	id            text     COLLATE "C" PRIMARY KEY,
	agent         text     COLLATE "C" NOT NULL,
	tool          text     COLLATE "C" NOT NULL,
	trace_id      text     COLLATE "C" NOT NULL DEFAULT '',
	class         text     COLLATE "C" NOT NULL,
	tier          smallint NOT NULL,
	capability    text     COLLATE "C" NOT NULL DEFAULT '',
	outcome       text     NOT NULL CHECK (outcome IN ('ask', 'suggest')),
	needs_human   boolean  NOT NULL DEFAULT false,
	action_hash   bytea    NOT NULL,
	effect_hash   bytea    NOT NULL DEFAULT '\x',
	action        json     NOT NULL,
	summary       text     NOT NULL DEFAULT '',
	detail        jsonb    NOT NULL,
	reviewers     text[]   COLLATE "C" NOT NULL DEFAULT '{}',
	owner         text     COLLATE "C" NOT NULL DEFAULT '',
	requested_by  text     COLLATE "C" NOT NULL DEFAULT '',
	timeout       bigint   NOT NULL, -- nanoseconds
	created       bigint   NOT NULL,
	expires       bigint   NOT NULL,
	status        text     NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'expired', 'cancelled')),
	resolved_by   text     COLLATE "C" NOT NULL DEFAULT '',
	resolved_at   bigint   NOT NULL DEFAULT 0,
	reason        text     NOT NULL DEFAULT '',
	surface       text     NOT NULL DEFAULT '',
	grant_ttl     bigint   NOT NULL DEFAULT 0, -- nanoseconds
	grant_expires bigint   NOT NULL DEFAULT 0,
	grant_used    bigint   NOT NULL DEFAULT 0,
	run_now       boolean  NOT NULL DEFAULT false
);
-- At most one pending request per action and kind: identical actions join it.
CREATE UNIQUE INDEX approvals_one_pending ON approvals (action_hash, outcome) WHERE status = 'pending';
CREATE INDEX approvals_due ON approvals (expires) WHERE status = 'pending';
CREATE INDEX approvals_grant ON approvals (action_hash) WHERE status = 'approved' AND grant_used = 0;
CREATE INDEX approvals_status ON approvals (status, id);
CREATE INDEX approvals_agent ON approvals (agent, id);
CREATE INDEX approvals_effect ON approvals (effect_hash, id) WHERE status = 'pending';
-- The history: settled requests, the most recently settled first.
CREATE INDEX approvals_settled ON approvals (resolved_at, id) WHERE status <> 'pending';

-- Trust records, one per enforced decision. args is kept only when no
-- linked event (event_seq) already carries the action's arguments.
CREATE TABLE trust (
	id             bigint   GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	time           bigint   NOT NULL,
	agent          text     COLLATE "C" NOT NULL,
	class          text     COLLATE "C" NOT NULL,
	outcome        text     NOT NULL CHECK (outcome IN ('success', 'denied', 'timeout', 'failure')),
	tier           smallint NOT NULL,
	trace_id       text     COLLATE "C" NOT NULL DEFAULT '',
	label          text     NOT NULL,
	tool           text     COLLATE "C" NOT NULL,
	autonomy_class text     NOT NULL DEFAULT '',
	requires_human boolean  NOT NULL DEFAULT false,
	code           text     NOT NULL DEFAULT '',
	args           bytea,
	approval_id    text     COLLATE "C" NOT NULL DEFAULT '',
	event_seq      bigint   NOT NULL DEFAULT 0
);
CREATE INDEX trust_agent_class ON trust (agent, class, outcome);

-- The API's bearer tokens. Only the SHA-256 of each secret is kept, so a
-- copy of the database authenticates no one. A revoked token stays, so that
-- audits and lists can still name it.
CREATE TABLE tokens (
	id          text   COLLATE "C" PRIMARY KEY,
	role        text   NOT NULL CHECK (role IN ('agent', 'reviewer', 'admin')),
	name        text   NOT NULL DEFAULT '',
	agent       text   COLLATE "C" NOT NULL DEFAULT '',
	secret_hash bytea  NOT NULL UNIQUE CHECK (length(secret_hash) = 32),
	created_by  text   NOT NULL DEFAULT '',
	created     bigint NOT NULL,
	expires     bigint NOT NULL DEFAULT 0, -- 0: never
	revoked     bigint NOT NULL DEFAULT 0,
	revoked_by  text   NOT NULL DEFAULT '',
	-- An agent token acts as exactly one agent; the others as a person.
	CHECK ((role = 'agent') = (agent <> ''))
);
CREATE INDEX tokens_created ON tokens (created, id);

-- The MCP tool definitions released to each agent, per MCP server. Only
-- added to: a definition released stays released. The hash is SHA-256 of
-- the definition's canonical JSON.
CREATE TABLE tool_pins (
	agent       text   COLLATE "C" NOT NULL,
	server      text   COLLATE "C" NOT NULL,
	tool        text   COLLATE "C" NOT NULL,
	hash        bytea  NOT NULL CHECK (length(hash) = 32),
	definition  text   NOT NULL,
	approval_id text   COLLATE "C" NOT NULL DEFAULT '',
	created     bigint NOT NULL,
	PRIMARY KEY (agent, server, tool, hash)
);

-- The outbox: one delivery per notice and channel, with an idempotency
-- key, the moment the next attempt is due, a lease that a worker holds
-- while it delivers (a worker killed mid-delivery loses it, and another
-- attempt follows), the dead letters and the dropped, and the channel's
-- handle on what it delivered (to update it in place).
CREATE TABLE deliveries (
	id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	key         text   COLLATE "C" NOT NULL, -- msg_ and a UUIDv7: unique without an index to keep
	created     bigint NOT NULL,
	channel     text   COLLATE "C" NOT NULL DEFAULT '',
	kind        text   COLLATE "C" NOT NULL,
	recipients  text[] COLLATE "C" NOT NULL DEFAULT '{}',
	reviewers   text[] COLLATE "C" NOT NULL DEFAULT '{}',
	agent       text   COLLATE "C" NOT NULL DEFAULT '',
	approval_id text   COLLATE "C" NOT NULL DEFAULT '',
	subject     text   NOT NULL DEFAULT '',
	payload     bytea,
	event_seq   bigint NOT NULL DEFAULT 0,
	status      text   NOT NULL DEFAULT 'pending'
	            CHECK (status IN ('pending', 'sent', 'failed', 'dead', 'dropped')),
	attempts    integer NOT NULL DEFAULT 0,
	last_error  text   NOT NULL DEFAULT '',
	due         bigint NOT NULL,
	lease       bigint NOT NULL DEFAULT 0,
	sent_at     bigint NOT NULL DEFAULT 0,
	ref         text   NOT NULL DEFAULT ''
);
CREATE INDEX deliveries_due ON deliveries (due, id) WHERE status IN ('pending', 'failed');
CREATE INDEX deliveries_approval ON deliveries (approval_id, channel) WHERE approval_id <> '';
-- The dead letters, listed in the inbox: rare, so the index costs a new
-- delivery nothing.
CREATE INDEX deliveries_dead ON deliveries (id) WHERE status = 'dead';
