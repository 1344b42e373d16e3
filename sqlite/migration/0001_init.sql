-- The audit log: append-only, hash-chained. seq is gapless and assigned by
-- the single writer; time is Unix nanoseconds (the precision the chain
-- hashes). Triggers refuse every UPDATE and DELETE, so the log cannot be
-- changed through SQL without dropping them first — which the chain then
-- reveals.
CREATE TABLE events (
	seq         INTEGER PRIMARY KEY CHECK (seq > 0),
	time        INTEGER NOT NULL,
	kind        TEXT    NOT NULL,
	trace_id    TEXT    NOT NULL DEFAULT '',
	agent       TEXT    NOT NULL DEFAULT '',
	outcome     TEXT    NOT NULL DEFAULT '',
	approval_id TEXT    NOT NULL DEFAULT '',
	payload     BLOB    NOT NULL,
	prev        BLOB    NOT NULL,
	hash        BLOB    NOT NULL
) STRICT;
CREATE INDEX events_agent ON events (agent, seq);
CREATE INDEX events_trace ON events (trace_id, seq) WHERE trace_id != '';
CREATE INDEX events_time ON events (time);
CREATE TRIGGER events_no_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
CREATE TRIGGER events_no_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;

-- Approval requests. action holds the exact action (JSON) whose SHA-256 is
-- action_hash; the other columns are copies for filtering. Times are Unix
-- nanoseconds on the store's clock, 0 for none.
CREATE TABLE approvals (
	id            TEXT    PRIMARY KEY,
	agent         TEXT    NOT NULL,
	tool          TEXT    NOT NULL,
	trace_id      TEXT    NOT NULL DEFAULT '',
	class         TEXT    NOT NULL,
	tier          INTEGER NOT NULL,
	capability    TEXT    NOT NULL DEFAULT '',
	outcome       TEXT    NOT NULL CHECK (outcome IN ('ask', 'suggest')),
	needs_human   INTEGER NOT NULL DEFAULT 0,
	action_hash   BLOB    NOT NULL,
	action        BLOB    NOT NULL,
	summary       TEXT    NOT NULL DEFAULT '',
	detail        BLOB    NOT NULL,
	reviewers     BLOB    NOT NULL,
	owner         TEXT    NOT NULL DEFAULT '',
	requested_by  TEXT    NOT NULL DEFAULT '',
	timeout       INTEGER NOT NULL,
	created       INTEGER NOT NULL,
	expires       INTEGER NOT NULL,
	status        TEXT    NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'expired', 'cancelled')),
	resolved_by   TEXT    NOT NULL DEFAULT '',
	resolved_at   INTEGER NOT NULL DEFAULT 0,
	reason        TEXT    NOT NULL DEFAULT '',
	surface       TEXT    NOT NULL DEFAULT '',
	grant_ttl     INTEGER NOT NULL DEFAULT 0,
	grant_expires INTEGER NOT NULL DEFAULT 0,
	grant_used    INTEGER NOT NULL DEFAULT 0
) STRICT;
-- At most one pending request per action and kind: identical actions join it.
CREATE UNIQUE INDEX approvals_one_pending ON approvals (action_hash, outcome) WHERE status = 'pending';
CREATE INDEX approvals_due ON approvals (expires) WHERE status = 'pending';
CREATE INDEX approvals_grant ON approvals (action_hash) WHERE status = 'approved' AND grant_used = 0;
CREATE INDEX approvals_status ON approvals (status, id);
CREATE INDEX approvals_agent ON approvals (agent, id);

-- Trust records, one per enforced decision. args is kept only when no
-- linked event (event_seq) already carries the action's arguments.
CREATE TABLE trust (
	id             INTEGER PRIMARY KEY,
	time           INTEGER NOT NULL,
	agent          TEXT    NOT NULL,
	class          TEXT    NOT NULL,
	outcome        TEXT    NOT NULL CHECK (outcome IN ('success', 'denied', 'timeout', 'failure')),
	tier           INTEGER NOT NULL,
	trace_id       TEXT    NOT NULL DEFAULT '',
	label          TEXT    NOT NULL,
	tool           TEXT    NOT NULL,
	autonomy_class TEXT    NOT NULL DEFAULT '',
	requires_human INTEGER NOT NULL DEFAULT 0,
	code           TEXT    NOT NULL DEFAULT '',
	args           BLOB,
	approval_id    TEXT    NOT NULL DEFAULT '',
	event_seq      INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX trust_agent_class ON trust (agent, class, outcome);

-- The outbox of notices to people.
CREATE TABLE notifications (
	id          INTEGER PRIMARY KEY,
	created     INTEGER NOT NULL,
	recipient   TEXT    NOT NULL DEFAULT '',
	kind        TEXT    NOT NULL,
	agent       TEXT    NOT NULL DEFAULT '',
	approval_id TEXT    NOT NULL DEFAULT '',
	subject     TEXT    NOT NULL DEFAULT '',
	payload     BLOB,
	status      TEXT    NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'failed')),
	attempts    INTEGER NOT NULL DEFAULT 0,
	last_error  TEXT    NOT NULL DEFAULT '',
	sent_at     INTEGER NOT NULL DEFAULT 0,
	event_seq   INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX notifications_unsent ON notifications (id) WHERE status != 'sent';
