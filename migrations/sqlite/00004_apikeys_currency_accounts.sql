-- +goose Up
CREATE TABLE api_keys (
    id                         TEXT PRIMARY KEY,
    organization_id            TEXT NOT NULL REFERENCES organizations (id),
    name                       TEXT NOT NULL,
    role                       TEXT NOT NULL CONSTRAINT api_keys_role_check CHECK (role IN ('admin', 'member')),
    scopes                     TEXT NOT NULL,
    lookup                     TEXT NOT NULL,
    environment                TEXT NOT NULL CONSTRAINT api_keys_environment_check CHECK (environment IN ('test', 'live')),
    -- keyed hashes of the two latest secrets; the previous one works until previous_secret_expires_at
    secret_hash                TEXT NOT NULL,
    previous_secret_hash       TEXT,
    previous_secret_expires_at TIMESTAMP,
    created_by_id              TEXT NOT NULL REFERENCES users (id),
    inserted_at                TIMESTAMP NOT NULL,
    last_used_at               TIMESTAMP,
    rotated_at                 TIMESTAMP,
    revoked_at                 TIMESTAMP
);
CREATE UNIQUE INDEX api_keys_lookup_key ON api_keys (lookup);
CREATE INDEX api_keys_organization_idx ON api_keys (organization_id, id);

-- One row per currency an organization has asked for; currencies never asked
-- for are `available` without a row.
CREATE TABLE currency_accounts (
    organization_id    TEXT NOT NULL REFERENCES organizations (id),
    currency           TEXT NOT NULL,
    state              TEXT NOT NULL CONSTRAINT currency_accounts_state_check CHECK (state IN ('available', 'processing', 'failed', 'active')),
    -- a selection saved while the entity was not ready, or a request the partner could not take yet
    awaiting_submission INTEGER NOT NULL DEFAULT 0 CHECK (awaiting_submission IN (0, 1)),
    failure_note       TEXT,
    first_requested_at TIMESTAMP NOT NULL,
    updated_at         TIMESTAMP NOT NULL,
    CONSTRAINT currency_accounts_pkey PRIMARY KEY (organization_id, currency)
);

-- Every state change of a currency account, so a failure stays on record after a later activation.
CREATE TABLE currency_account_history (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations (id),
    currency        TEXT NOT NULL,
    from_state      TEXT NOT NULL,
    to_state        TEXT NOT NULL,
    reason          TEXT NOT NULL,
    inserted_at     TIMESTAMP NOT NULL
);
CREATE INDEX currency_account_history_idx ON currency_account_history (organization_id, currency, id);
