-- +goose Up
-- fair_key: jobs of one kind with the same key (an organization) run one at
-- a time across every runner, so one organization's queue cannot take every
-- worker slot from the others.
-- lease_expiries: how many attempts ended with the lease running out, that
-- is with the worker's process dying or hanging; a handler can refuse to run
-- again what keeps killing its process.
ALTER TABLE jobs ADD COLUMN fair_key TEXT;
ALTER TABLE jobs ADD COLUMN lease_expiries INTEGER NOT NULL DEFAULT 0;
CREATE INDEX jobs_fair_running_idx ON jobs (kind, fair_key) WHERE status = 'running' AND fair_key IS NOT NULL;
