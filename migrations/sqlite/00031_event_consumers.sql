-- +goose Up
-- Durable event consumers (internal/platform/event, Consume): each named
-- consumer's position in the event table, advanced in the transaction of
-- the consumer's own writes, so every committed event is handled once per
-- consumer. The position is (transaction id, seq) on PostgreSQL, where
-- sequence numbers commit out of order; SQLite keeps 0 as the transaction
-- id and follows seq. A consumer's row is made, at the end of the table,
-- the first time it runs.
CREATE TABLE event_consumers (
    name         TEXT PRIMARY KEY,
    position_tx  BIGINT NOT NULL,
    position_seq BIGINT NOT NULL,
    updated_at   TIMESTAMP NOT NULL
);
