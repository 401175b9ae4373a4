-- +goose Up
-- The security alerts of step-up go out once per window: when the person
-- was last alerted about repeated declines of their challenges, and about a
-- lockout after repeated wrong codes. Step-up keeps these facts itself
-- rather than counting the outbox's messages.
ALTER TABLE step_up_lockouts ADD COLUMN declines_alerted_at TIMESTAMPTZ;
ALTER TABLE step_up_lockouts ADD COLUMN lockout_alerted_at TIMESTAMPTZ;
