-- +goose Up
-- The feed rows of a payment, found by the payment: an expense bound to a
-- payment shows the payment's row once it is approved, read from the feed.
CREATE INDEX transactions_payment_idx ON transactions (payment_id) WHERE payment_id IS NOT NULL;
