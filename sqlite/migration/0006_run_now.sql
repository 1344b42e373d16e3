-- An approved proposal the person asked to be run now by an executor that
-- holds the tool (the MCP gateway), rather than when the agent retries it.
ALTER TABLE approvals ADD COLUMN run_now INTEGER NOT NULL DEFAULT 0 CHECK (run_now IN (0, 1));
