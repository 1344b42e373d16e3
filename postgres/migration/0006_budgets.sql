-- Budgets (docs/POLICY.md, "Budgets"): a grant's budget is its JSON
-- (airlock.Budget), '' for none; every use of a budget is a row, taken
-- with its decision's record under the chain's lock, which every writer
-- of every replica holds: racing checks see each other's uses. A window's
-- use is the sum of its account's costs after the window's start.
ALTER TABLE grants ADD COLUMN budget text NOT NULL DEFAULT '';
CREATE TABLE budget_uses (
	key       text   COLLATE "C" NOT NULL,
	time      bigint NOT NULL,
	cost      bigint NOT NULL CHECK (cost > 0),
	event_seq bigint NOT NULL
);
CREATE INDEX budget_uses_key ON budget_uses (key, time);
