-- +goose Up
-- Ledger accounts: per organization and currency (available, pending) and
-- per currency for the platform (world: money outside Strongroom; fees).
CREATE TABLE ledger_accounts (
    id              UUID PRIMARY KEY,
    organization_id UUID REFERENCES organizations (id),
    currency        TEXT NOT NULL,
    kind            TEXT NOT NULL CONSTRAINT ledger_accounts_kind_check CHECK (kind IN ('available', 'pending', 'world', 'fees')),
    -- sum of the account's postings, kept in the transaction that posts
    balance         BIGINT NOT NULL DEFAULT 0,
    inserted_at     TIMESTAMPTZ NOT NULL,
    -- customer money can never go below zero
    CONSTRAINT ledger_accounts_balance_check CHECK (kind NOT IN ('available', 'pending') OR balance >= 0)
);
CREATE UNIQUE INDEX ledger_accounts_key ON ledger_accounts (COALESCE(organization_id, '00000000-0000-0000-0000-000000000000'::uuid), currency, kind);

-- Journal entries are immutable; a correction is a new entry that reverses.
CREATE TABLE journal_entries (
    id                UUID PRIMARY KEY,
    organization_id   UUID REFERENCES organizations (id),
    kind              TEXT NOT NULL,
    description       TEXT NOT NULL,
    reverses_entry_id UUID REFERENCES journal_entries (id),
    inserted_at       TIMESTAMPTZ NOT NULL
);

CREATE TABLE postings (
    id          UUID PRIMARY KEY,
    entry_id    UUID NOT NULL REFERENCES journal_entries (id),
    account_id  UUID NOT NULL REFERENCES ledger_accounts (id),
    amount      BIGINT NOT NULL CONSTRAINT postings_amount_check CHECK (amount <> 0),
    currency    TEXT NOT NULL
);
CREATE INDEX postings_entry_idx ON postings (entry_id);
CREATE INDEX postings_account_idx ON postings (account_id);

-- The transactions feed: what an organization sees of its money.
CREATE TABLE transactions (
    id              UUID PRIMARY KEY,
    organization_id UUID NOT NULL REFERENCES organizations (id),
    type            TEXT NOT NULL CONSTRAINT transactions_type_check CHECK (type IN
                    ('deposit', 'fiat_outgoing', 'crypto_outgoing', 'crypto_incoming', 'card_transaction', 'internal_transfer', 'fee', 'reversal')),
    entry_id        UUID REFERENCES journal_entries (id),
    direction       TEXT NOT NULL CONSTRAINT transactions_direction_check CHECK (direction IN ('in', 'out')),
    amount          BIGINT NOT NULL CONSTRAINT transactions_amount_check CHECK (amount > 0),
    currency        TEXT NOT NULL,
    description     TEXT NOT NULL,
    payment_id      UUID,
    recorded_at     TIMESTAMPTZ NOT NULL
);
CREATE INDEX transactions_feed_idx ON transactions (organization_id, recorded_at, id);

CREATE TABLE payment_contacts (
    id                  UUID PRIMARY KEY,
    organization_id     UUID NOT NULL REFERENCES organizations (id),
    name                TEXT NOT NULL,
    currency            TEXT NOT NULL,
    rail                TEXT NOT NULL CONSTRAINT payment_contacts_rail_check CHECK (rail IN ('fiat', 'crypto')),
    -- the bank fields of a fiat contact, or the address of a crypto one (JSON object)
    details             TEXT NOT NULL,
    created_by_id       UUID NOT NULL REFERENCES users (id),
    inserted_at         TIMESTAMPTZ NOT NULL
);
CREATE INDEX payment_contacts_organization_idx ON payment_contacts (organization_id, id);

CREATE TABLE quotes (
    id                 UUID PRIMARY KEY,
    organization_id    UUID NOT NULL REFERENCES organizations (id),
    payment_contact_id UUID NOT NULL REFERENCES payment_contacts (id),
    rail               TEXT NOT NULL,
    source_amount      BIGINT NOT NULL,
    source_currency    TEXT NOT NULL,
    destination_amount BIGINT NOT NULL,
    destination_currency TEXT NOT NULL,
    fee_amount         BIGINT NOT NULL,
    fee_currency       TEXT NOT NULL,
    rate               TEXT NOT NULL,
    created_by_id      UUID NOT NULL REFERENCES users (id),
    expires_at         TIMESTAMPTZ NOT NULL,
    used_at            TIMESTAMPTZ,
    inserted_at        TIMESTAMPTZ NOT NULL
);

CREATE TABLE approvals (
    id              UUID PRIMARY KEY,
    organization_id UUID NOT NULL REFERENCES organizations (id),
    kind            TEXT NOT NULL CONSTRAINT approvals_kind_check CHECK (kind IN ('payment', 'payment_batch')),
    target_id       UUID NOT NULL,
    status          TEXT NOT NULL CONSTRAINT approvals_status_check CHECK (status IN ('pending', 'approved', 'rejected', 'cancelled')),
    requested_by_id UUID NOT NULL REFERENCES users (id),
    decided_by_id   UUID REFERENCES users (id),
    decided_at      TIMESTAMPTZ,
    reason          TEXT,
    inserted_at     TIMESTAMPTZ NOT NULL
);
CREATE INDEX approvals_organization_idx ON approvals (organization_id, status, id);

CREATE TABLE payment_batches (
    id                  UUID PRIMARY KEY,
    organization_id     UUID NOT NULL REFERENCES organizations (id),
    approval_request_id UUID REFERENCES approvals (id),
    created_by_id       UUID NOT NULL REFERENCES users (id),
    inserted_at         TIMESTAMPTZ NOT NULL
);

CREATE TABLE payments (
    id                    UUID PRIMARY KEY,
    organization_id       UUID NOT NULL REFERENCES organizations (id),
    quote_id              UUID REFERENCES quotes (id),
    bill_id               UUID,
    payment_contact_id    UUID NOT NULL REFERENCES payment_contacts (id),
    payment_batch_id      UUID REFERENCES payment_batches (id),
    approval_request_id   UUID REFERENCES approvals (id),
    transaction_id        UUID REFERENCES transactions (id),
    rail                  TEXT NOT NULL,
    status                TEXT NOT NULL CONSTRAINT payments_status_check CHECK (status IN
                          ('awaiting_approval', 'approved', 'processing', 'completed', 'failed', 'rejected', 'cancelled')),
    rail_state            TEXT,
    tag                   TEXT,
    debited_amount        BIGINT NOT NULL,
    debited_currency      TEXT NOT NULL,
    delivered_amount      BIGINT NOT NULL,
    delivered_currency    TEXT NOT NULL,
    fee_amount            BIGINT NOT NULL,
    payout_reason         TEXT,
    statement_description TEXT,
    internal_notes        TEXT,
    -- the journal entries that moved the funds at approval (reversed if the payment fails)
    debit_entry_id        UUID REFERENCES journal_entries (id),
    fee_entry_id          UUID REFERENCES journal_entries (id),
    event_id              UUID NOT NULL,
    event_stream          TEXT NOT NULL,
    event_type            TEXT NOT NULL,
    created_by_id         UUID NOT NULL REFERENCES users (id),
    inserted_at           TIMESTAMPTZ NOT NULL,
    updated_at            TIMESTAMPTZ NOT NULL
);
CREATE UNIQUE INDEX payments_quote_key ON payments (quote_id);
CREATE INDEX payments_organization_idx ON payments (organization_id, id);
CREATE INDEX payments_batch_idx ON payments (payment_batch_id);

-- Idempotency-Key records: the key within its scope, the request's hash and
-- the stored response, replayed for 24 hours.
CREATE TABLE idempotency_keys (
    scope           TEXT NOT NULL,
    key             TEXT NOT NULL,
    request_hash    TEXT NOT NULL,
    response_status INTEGER NOT NULL,
    response_body   TEXT NOT NULL,
    expires_at      TIMESTAMPTZ NOT NULL,
    inserted_at     TIMESTAMPTZ NOT NULL,
    CONSTRAINT idempotency_keys_pkey PRIMARY KEY (scope, key)
);
