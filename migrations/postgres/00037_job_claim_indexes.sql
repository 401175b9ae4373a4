-- +goose Up
-- A claim takes the oldest due jobs by walking these in run_at order and
-- stops after a batch: its cost no longer grows with the backlog. Jobs
-- with and without a fair key are claimed apart, each from its own index,
-- so a long queue of one kind never has to be read through to reach the
-- other. Running jobs are found by their lease for the expiry sweep.
CREATE INDEX jobs_pending_unkeyed_idx ON jobs (run_at) WHERE status = 'pending' AND fair_key IS NULL;
CREATE INDEX jobs_pending_keyed_idx ON jobs (run_at) WHERE status = 'pending' AND fair_key IS NOT NULL;
CREATE INDEX jobs_running_lease_idx ON jobs (locked_until) WHERE status = 'running';
DROP INDEX jobs_due_idx;

-- +goose Down
CREATE INDEX jobs_due_idx ON jobs (status, run_at);
DROP INDEX jobs_running_lease_idx;
DROP INDEX jobs_pending_keyed_idx;
DROP INDEX jobs_pending_unkeyed_idx;
