-- +goose Up
-- Onboarding (docs/api.md, Onboarding).
-- Whether an organization must acknowledge its auto-assigned subscription
-- plan, and when it first did: acknowledged_at is set once (the statement that
-- sets it requires it to be NULL), so the first acknowledgement wins.
-- Organizations created before this table have no row: they require none.
CREATE TABLE subscription_acknowledgements (
    organization_id UUID PRIMARY KEY REFERENCES organizations (id),
    required        BOOLEAN NOT NULL,
    acknowledged_at TIMESTAMPTZ,
    acknowledged_by UUID REFERENCES users (id),
    CONSTRAINT subscription_acknowledgements_by_check CHECK ((acknowledged_at IS NULL) = (acknowledged_by IS NULL))
);

-- Each person's identity check; no row means not_started.
CREATE TABLE identity_checks (
    user_id    UUID PRIMARY KEY REFERENCES users (id),
    status     TEXT NOT NULL CONSTRAINT identity_checks_status_check CHECK (status IN ('pending', 'approved', 'rejected')),
    updated_at TIMESTAMPTZ NOT NULL
);
