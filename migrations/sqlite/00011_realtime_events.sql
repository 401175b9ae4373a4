-- +goose Up
-- Realtime channel (docs/api.md, Realtime): each domain event names the organization
-- whose channel carries it. Events written before have none and are never
-- replayed. A reconnecting client's replay reads one organization's events
-- of the last 24 hours, hence the index by organization and time.
ALTER TABLE domain_events ADD COLUMN organization_id TEXT;
CREATE INDEX domain_events_organization_idx ON domain_events (organization_id, occurred_at);
