-- The chain's lock is now a transaction-level advisory lock of the schema
-- (pg_advisory_xact_lock): taking it writes nothing, where locking the row
-- of chain_lock wrote the row's lock into the table and the WAL on every
-- write transaction. Every write transaction of every replica still takes
-- it before it writes, so the chain has one writer at a time. A replica
-- that still locks the row must not run beside one that takes the advisory
-- lock: upgrade every replica together (docs/OPERATIONS.md).
DROP TABLE chain_lock;
