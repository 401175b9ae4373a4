-- +goose Up
-- Payment requests: a program (or a person) proposes a payment to one of the
-- organization's payment contacts; a person accepts it (which makes the
-- payment), declines it, or the requester cancels it; unanswered, it expires
-- after 30 days. payment_status follows the payment it became.
CREATE TABLE payment_requests (
    id                 TEXT PRIMARY KEY,
    organization_id    TEXT NOT NULL REFERENCES organizations (id),
    status             TEXT NOT NULL CONSTRAINT payment_requests_status_check CHECK (status IN
                       ('pending', 'accepted', 'declined', 'cancelled', 'expired')),
    payment_contact_id TEXT NOT NULL REFERENCES payment_contacts (id),
    amount             INTEGER NOT NULL,
    currency           TEXT NOT NULL,
    reference          TEXT,
    reason             TEXT,
    note               TEXT,
    external_id        TEXT,
    -- who asked: an API key (no id when the sandbox plays a program), or a person; the name as it was then
    requested_by_kind  TEXT NOT NULL CONSTRAINT payment_requests_requested_by_kind_check CHECK (requested_by_kind IN
                       ('api_key', 'user')),
    requested_by_id    TEXT,
    requested_by_name  TEXT NOT NULL,
    payment_id         TEXT REFERENCES payments (id),
    payment_status     TEXT,
    decided_by_id      TEXT REFERENCES users (id),
    decline_reason     TEXT,
    expires_at         TIMESTAMP NOT NULL,
    created_at         TIMESTAMP NOT NULL,
    updated_at         TIMESTAMP NOT NULL
);
CREATE INDEX payment_requests_organization_idx ON payment_requests (organization_id, id);
CREATE INDEX payment_requests_status_idx ON payment_requests (organization_id, status, id);
CREATE INDEX payment_requests_external_idx ON payment_requests (organization_id, external_id, id) WHERE external_id IS NOT NULL;
CREATE UNIQUE INDEX payment_requests_payment_key ON payment_requests (payment_id) WHERE payment_id IS NOT NULL;
