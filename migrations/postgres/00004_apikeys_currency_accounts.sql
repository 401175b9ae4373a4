-- +goose Up
CREATE TABLE api_keys (
    id                         UUID PRIMARY KEY,
    organization_id            UUID NOT NULL REFERENCES organizations (id),
    name                       TEXT NOT NULL,
    role                       TEXT NOT NULL CONSTRAINT api_keys_role_check CHECK (role IN ('admin', 'member')),
    scopes                     TEXT NOT NULL,
    lookup                     TEXT NOT NULL,
    environment                TEXT NOT NULL CONSTRAINT api_keys_environment_check CHECK (environment IN ('test', 'live')),
    -- keyed hashes of the two latest secrets; the previous one works until previous_secret_expires_at
    secret_hash                TEXT NOT NULL,
    previous_secret_hash       TEXT,
    previous_secret_expires_at TIMESTAMPTZ,
    created_by_id              UUID NOT NULL REFERENCES users (id),
    inserted_at                TIMESTAMPTZ NOT NULL,
    last_used_at               TIMESTAMPTZ,
    rotated_at                 TIMESTAMPTZ,
    revoked_at                 TIMESTAMPTZ
);
CREATE UNIQUE INDEX api_keys_lookup_key ON api_keys (lookup);
CREATE INDEX api_keys_organization_idx ON api_keys (organization_id, id);

-- One row per currency an organization has asked for; currencies never asked
-- for are `available` without a row.
CREATE TABLE currency_accounts (
    organization_id    UUID NOT NULL REFERENCES organizations (id),
    currency           TEXT NOT NULL,
    state              TEXT NOT NULL CONSTRAINT currency_accounts_state_check CHECK (state IN ('available', 'processing', 'failed', 'active')),
    -- a selection saved while the entity was not ready, or a request the partner could not take yet
    awaiting_submission BOOLEAN NOT NULL DEFAULT FALSE,
    failure_note       TEXT,
    first_requested_at TIMESTAMPTZ NOT NULL,
    updated_at         TIMESTAMPTZ NOT NULL,
    CONSTRAINT currency_accounts_pkey PRIMARY KEY (organization_id, currency)
);

-- Every state change of a currency account, so a failure stays on record after a later activation.
CREATE TABLE currency_account_history (
    id              UUID PRIMARY KEY,
    organization_id UUID NOT NULL REFERENCES organizations (id),
    currency        TEXT NOT NULL,
    from_state      TEXT NOT NULL,
    to_state        TEXT NOT NULL,
    reason          TEXT NOT NULL,
    inserted_at     TIMESTAMPTZ NOT NULL
);
CREATE INDEX currency_account_history_idx ON currency_account_history (organization_id, currency, id);
