-- +goose Up
-- A new delivery goes straight to its endpoint's queue only while fewer
-- than four of the endpoint's deliveries are due or sending; the rest wait
-- for a slot without a job. This index counts those (a handful per
-- endpoint) without reading the endpoint's history.
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (endpoint_id, next_attempt_at) WHERE status = 'pending' AND NOT waiting;

-- +goose Down
DROP INDEX webhook_deliveries_due_idx;
