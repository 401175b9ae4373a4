-- +goose Up
-- Webhook endpoints of an organization (docs/api.md, Webhooks). The signing
-- secret must be used again at every delivery, so it is sealed under the
-- root secret rather than hashed; after a rotation the previous one keeps
-- signing until previous_secret_expires_at.
CREATE TABLE webhook_endpoints (
    id                         UUID PRIMARY KEY,
    organization_id            UUID NOT NULL REFERENCES organizations (id),
    url                        TEXT NOT NULL,
    -- the event types it receives, comma-separated, or '*'
    event_types                TEXT NOT NULL,
    description                TEXT,
    disabled                   BOOLEAN NOT NULL DEFAULT FALSE,
    disabled_reason            TEXT,
    secret_sealed              TEXT NOT NULL,
    previous_secret_sealed     TEXT,
    previous_secret_expires_at TIMESTAMPTZ,
    -- the first failed attempt since the last success: five days of
    -- nothing but failures disable the endpoint
    failing_since              TIMESTAMPTZ,
    created_at                 TIMESTAMPTZ NOT NULL,
    updated_at                 TIMESTAMPTZ NOT NULL
);
CREATE INDEX webhook_endpoints_organization_idx ON webhook_endpoints (organization_id, id);

-- One delivery per event and endpoint; attempt counts its attempts, and the
-- columns after it describe the latest one. A delivery holds one of the
-- endpoint's four sending slots while sending_until is set (a lease: an
-- instance that dies leaves it to expire); one that found no free slot
-- waits (waiting) until a finishing delivery of the endpoint hands it on.
-- seq numbers the jobs enqueued for it: only the job of the current seq
-- acts, so a manual retry and a scheduled one never both send.
CREATE TABLE webhook_deliveries (
    id              UUID PRIMARY KEY,
    organization_id UUID NOT NULL REFERENCES organizations (id),
    endpoint_id     UUID NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    event_id        UUID NOT NULL,
    event_type      TEXT NOT NULL,
    status          TEXT NOT NULL CONSTRAINT webhook_deliveries_status_check CHECK (status IN ('pending', 'succeeded', 'failed')),
    attempt         INTEGER NOT NULL DEFAULT 0,
    response_status INTEGER,
    response_body   TEXT,
    error           TEXT,
    duration_ms     BIGINT,
    attempted_at    TIMESTAMPTZ,
    next_attempt_at TIMESTAMPTZ,
    sending_until   TIMESTAMPTZ,
    waiting         BOOLEAN NOT NULL DEFAULT FALSE,
    seq             INTEGER NOT NULL DEFAULT 0,
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL
);
CREATE UNIQUE INDEX webhook_deliveries_event_key ON webhook_deliveries (endpoint_id, event_id);
CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, id);
CREATE INDEX webhook_deliveries_sending_idx ON webhook_deliveries (endpoint_id, sending_until) WHERE sending_until IS NOT NULL;
CREATE INDEX webhook_deliveries_waiting_idx ON webhook_deliveries (endpoint_id, id) WHERE waiting;
