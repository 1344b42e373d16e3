-- The inbox: the events of one approval request, for its page; and each
-- request's effect hash (its action hash without session and requester),
-- to find the identical pending requests a reviewer may approve together.
-- Requests queued before this migration have none and are never grouped.
CREATE INDEX events_approval ON events (approval_id, seq) WHERE approval_id != '';
ALTER TABLE approvals ADD COLUMN effect_hash BLOB NOT NULL DEFAULT x'';
CREATE INDEX approvals_effect ON approvals (effect_hash, id) WHERE status = 'pending';
