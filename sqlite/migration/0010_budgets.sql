-- Budgets (docs/POLICY.md, "Budgets"): a grant's budget is its JSON
-- (airlock.Budget), '' for none. Every use of a budget's account is a row,
-- taken with its decision's record under the write lock, carrying the
-- account's running total after it; an account's uses are stamped in
-- order (a use is never stamped before the one before it). What a window
-- used is then the latest total less the total before the window's first
-- use: two seeks, however many uses the window holds.
ALTER TABLE grants ADD COLUMN budget TEXT NOT NULL DEFAULT '';
CREATE TABLE budget_uses (
	key       TEXT    NOT NULL,
	time      INTEGER NOT NULL,
	total     INTEGER NOT NULL,
	cost      INTEGER NOT NULL CHECK (cost > 0 AND cost <= total),
	event_seq INTEGER NOT NULL,
	PRIMARY KEY (key, time, total)
) STRICT, WITHOUT ROWID;
