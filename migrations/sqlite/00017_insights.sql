-- +goose Up
-- Insights sum an organization's feed by day over a date range. This index
-- holds every column the sums read after (organization_id, recorded_at), so
-- the range is one index walk and no table row is visited. SQLite has no
-- INCLUDE: the summed columns are trailing key columns.
CREATE INDEX transactions_insights_idx ON transactions (organization_id, recorded_at, type, direction, currency, amount, payment_id);

