-- +goose Up
-- Realtime channel (docs/api.md, Realtime): each domain event names the organization
-- whose channel carries it. Events written before have none and are never
-- replayed. A reconnecting client's replay reads one organization's events
-- of the last 24 hours, hence the index by organization and time.
ALTER TABLE domain_events ADD COLUMN organization_id UUID;
CREATE INDEX domain_events_organization_idx ON domain_events (organization_id, occurred_at);
-- The realtime tail follows the events in the order their transactions
-- became visible to every reader: (tx_id, seq), read below the oldest
-- running transaction (see internal/platform/event/tail.go).
CREATE INDEX domain_events_position_idx ON domain_events (tx_id, seq);
