-- The history: settled requests, the most recently settled first.
CREATE INDEX approvals_settled ON approvals (resolved_at, id) WHERE status != 'pending';
