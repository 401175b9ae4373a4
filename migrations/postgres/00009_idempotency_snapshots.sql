-- +goose Up
-- An Idempotency-Key record keeps a snapshot of the domain result, not an
-- HTTP response: the transport renders a replay as it rendered the original.
-- Records written before hold HTTP bodies that no snapshot reader can take;
-- they are dropped (no release has served live traffic with them).
DELETE FROM idempotency_keys;
ALTER TABLE idempotency_keys DROP COLUMN response_status;
ALTER TABLE idempotency_keys RENAME COLUMN response_body TO result;
ALTER TABLE idempotency_keys RENAME COLUMN request_hash TO input_hash;
