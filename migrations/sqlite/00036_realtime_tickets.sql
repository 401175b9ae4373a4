-- +goose Up
-- A realtime ticket lets a browser open an organization's realtime channel
-- without a bearer header (an EventSource cannot send one): issued to a
-- session for one organization, it works once, within 30 seconds of issue.
-- Only its keyed hash is stored; redeeming it deletes the row.
CREATE TABLE realtime_tickets (
    id              TEXT PRIMARY KEY,
    token_hash      TEXT NOT NULL,
    session_id      TEXT NOT NULL REFERENCES sessions (id),
    organization_id TEXT NOT NULL,
    inserted_at     TIMESTAMP NOT NULL,
    expires_at      TIMESTAMP NOT NULL
);
CREATE UNIQUE INDEX realtime_tickets_token_key ON realtime_tickets (token_hash);
CREATE INDEX realtime_tickets_session_idx ON realtime_tickets (session_id);
