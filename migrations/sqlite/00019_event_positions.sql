-- +goose Up
-- A durable subscriber's position is (transaction id, seq) on PostgreSQL,
-- where sequence numbers commit out of order (see event.readAfter); SQLite
-- keeps 0 here and follows seq.
ALTER TABLE event_subscriptions ADD COLUMN last_tx BIGINT NOT NULL DEFAULT 0;
