-- +goose Up
-- Domain events are read by the realtime tail, which keeps no position in
-- the database; nothing else consumed them, so the table of subscriber
-- positions goes with the dispatcher that kept it.
DROP TABLE event_subscriptions;
