-- A collection (or a grant's use) sets grant_used, and nothing else, on a
-- request already settled. With grant_used in no index — not even in an
-- index's predicate — and room left on each page, PostgreSQL updates the
-- row in place (a heap-only tuple): no new entry in any of the table's
-- indexes, a few bytes of WAL instead of the whole row and seven index
-- records. The approved requests' index still serves UseGrant and
-- CollectableApproval, which check grant_used on the row. The new index is
-- built before the old one is dropped: the build blocks writes to the
-- requests, not reads; the drop, which blocks both, is brief.
CREATE INDEX approvals_approved ON approvals (action_hash) WHERE status = 'approved';
DROP INDEX approvals_grant;
ALTER TABLE approvals SET (fillfactor = 80);
