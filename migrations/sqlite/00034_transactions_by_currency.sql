-- +goose Up
-- An organization's feed rows of one currency in booking order, with what
-- each adds to the balance: a statement reads its rows in this order and
-- sums the rows before its range and inside it from the index alone (the
-- history before a statement grows with every row; without it each sum
-- visited every row of the organization in every currency, and the table).
CREATE INDEX transactions_statement_idx ON transactions (organization_id, currency, recorded_at, id, direction, amount);
