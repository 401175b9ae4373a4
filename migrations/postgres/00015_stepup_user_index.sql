-- +goose Up
-- Expiring a person's stale step-ups (stepup.expireStale, run at the start of
-- every step-up operation) reads their active and pending sudo sessions: by
-- this index, not by a scan of every sudo session ever opened.
CREATE INDEX sudo_sessions_user_idx ON sudo_sessions (user_id, status);
