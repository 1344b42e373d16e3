-- Budgets (docs/POLICY.md, "Budgets"): a grant's budget is its JSON
-- (airlock.Budget), '' for none. Every use of a budget's account is a row,
-- taken with its decision's record under the chain's lock, which every
-- writer of every replica holds (racing checks see each other's uses),
-- carrying the account's running total after it; an account's uses are
-- stamped in order. What a window used is then the latest total less the
-- total before the window's first use: two seeks, however many uses the
-- window holds.
ALTER TABLE grants ADD COLUMN budget text NOT NULL DEFAULT '';
CREATE TABLE budget_uses (
	key       text   COLLATE "C" NOT NULL,
	time      bigint NOT NULL,
	total     bigint NOT NULL,
	cost      bigint NOT NULL CHECK (cost > 0 AND cost <= total),
	event_seq bigint NOT NULL,
	PRIMARY KEY (key, time, total)
);
