-- +goose Up
-- Insights sum an organization's feed by day over a date range. This index
-- holds every column the sums read after (organization_id, recorded_at), so
-- the range is an index-only scan (the table is not visited once vacuum has
-- marked its pages all-visible).
CREATE INDEX transactions_insights_idx ON transactions (organization_id, recorded_at) INCLUDE (type, direction, currency, amount, payment_id);

