-- Notifications become deliveries: one row per notice and channel, with an
-- idempotency key, the moment the next attempt is due, a lease that a
-- worker holds while it delivers (a worker killed mid-delivery loses it,
-- and another attempt follows), the dead letters and the dropped, and the
-- channel's handle on what it delivered (to update it in place).
CREATE TABLE deliveries (
	id          INTEGER PRIMARY KEY,
	key         TEXT    NOT NULL, -- a UUIDv7: unique without an index to keep
	created     INTEGER NOT NULL,
	channel     TEXT    NOT NULL DEFAULT '',
	kind        TEXT    NOT NULL,
	recipients  TEXT    NOT NULL DEFAULT '[]', -- JSON array of names
	reviewers   TEXT    NOT NULL DEFAULT '[]', -- JSON array of names
	agent       TEXT    NOT NULL DEFAULT '',
	approval_id TEXT    NOT NULL DEFAULT '',
	subject     TEXT    NOT NULL DEFAULT '',
	payload     BLOB,
	event_seq   INTEGER NOT NULL DEFAULT 0,
	status      TEXT    NOT NULL DEFAULT 'pending'
	            CHECK (status IN ('pending', 'sent', 'failed', 'dead', 'dropped')),
	attempts    INTEGER NOT NULL DEFAULT 0,
	last_error  TEXT    NOT NULL DEFAULT '',
	due         INTEGER NOT NULL,
	lease       INTEGER NOT NULL DEFAULT 0,
	sent_at     INTEGER NOT NULL DEFAULT 0,
	ref         TEXT    NOT NULL DEFAULT ''
) STRICT;

-- Notices queued before channels existed had nobody to deliver them; they
-- are kept, dropped, and say why.
INSERT INTO deliveries (id, key, created, kind, recipients, agent, approval_id, subject, payload, event_seq,
	status, attempts, last_error, due, sent_at)
SELECT id, 'ntf_' || id || '_' || lower(hex(randomblob(8))), created, kind,
	CASE WHEN recipient = '' THEN '[""]' ELSE json_array(recipient) END,
	agent, approval_id, subject, payload, event_seq,
	CASE status WHEN 'sent' THEN 'sent' ELSE 'dropped' END, attempts,
	CASE status WHEN 'sent' THEN last_error ELSE 'queued before notification channels existed' END,
	created, sent_at
FROM notifications;
DROP TABLE notifications;

CREATE INDEX deliveries_due ON deliveries (due) WHERE status IN ('pending', 'failed');
CREATE INDEX deliveries_approval ON deliveries (approval_id, channel) WHERE approval_id != '';
-- The dead letters, listed in the inbox: rare, so the index costs a new
-- delivery nothing.
CREATE INDEX deliveries_dead ON deliveries (id) WHERE status = 'dead';
