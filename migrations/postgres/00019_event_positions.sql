-- +goose Up
-- A durable subscriber's position is (transaction id, seq) on PostgreSQL,
-- where sequence numbers commit out of order (see event.readAfter); SQLite
-- keeps 0 here and follows seq.
ALTER TABLE event_subscriptions ADD COLUMN last_tx BIGINT NOT NULL DEFAULT 0;
UPDATE event_subscriptions s SET last_tx = COALESCE(
    (SELECT e.tx_id::text::bigint FROM domain_events e WHERE e.seq = s.last_seq), 0);
