-- Budgets (docs/POLICY.md, "Budgets"): a grant's budget is its JSON
-- (airlock.Budget), '' for none; every use of a budget is a row, taken
-- with its decision's record under the write lock. A window's use is the
-- sum of its account's costs after the window's start.
ALTER TABLE grants ADD COLUMN budget TEXT NOT NULL DEFAULT '';
CREATE TABLE budget_uses (
	key       TEXT    NOT NULL,
	time      INTEGER NOT NULL,
	cost      INTEGER NOT NULL CHECK (cost > 0),
	event_seq INTEGER NOT NULL
) STRICT;
CREATE INDEX budget_uses_key ON budget_uses (key, time);
