-- +goose Up
-- Cards (docs/api.md, Cards). The full card number is kept only sealed
-- (pan_sealed, opened with the root secret); the PIN only as a keyed hash.
CREATE TABLE cards (
    id                   TEXT PRIMARY KEY,
    organization_id      TEXT NOT NULL REFERENCES organizations (id),
    user_id              TEXT REFERENCES users (id),
    card_holder_name     TEXT,
    card_provider        TEXT NOT NULL CONSTRAINT cards_provider_check CHECK (card_provider IN ('visa_issuer', 'mastercard_issuer')),
    status               TEXT NOT NULL CONSTRAINT cards_status_check CHECK (status IN ('active', 'inactive', 'expired', 'revoked')),
    frozen               BOOLEAN NOT NULL DEFAULT FALSE,
    allow_physical       BOOLEAN NOT NULL,
    physical_state       TEXT NOT NULL DEFAULT 'none' CONSTRAINT cards_physical_state_check CHECK (physical_state IN ('none', 'awaiting_activation', 'active')),
    physical_replacement BOOLEAN NOT NULL DEFAULT FALSE,
    -- the shipping address of the physical card (JSON object), once ordered
    shipping_address     TEXT,
    shipped_at           TIMESTAMP,
    last_four            TEXT NOT NULL,
    pan_sealed           TEXT NOT NULL,
    expiry_month         INTEGER NOT NULL,
    expiry_year          INTEGER NOT NULL,
    pin_hash             TEXT,
    -- whole US dollars a month
    monthly_limit        INTEGER NOT NULL CONSTRAINT cards_monthly_limit_check CHECK (monthly_limit BETWEEN 0 AND 1000000),
    created_at           TIMESTAMP NOT NULL,
    updated_at           TIMESTAMP NOT NULL
);
CREATE INDEX cards_organization_idx ON cards (organization_id, id);
CREATE INDEX cards_user_idx ON cards (user_id, id);

-- Spending per card and UTC calendar month ('2026-01'), in US cents:
-- purchases minus refunds (below zero too; shown from zero up), kept in the authorization's transaction so
-- a read never sums a card's history and the limit check is one row.
CREATE TABLE card_spend (
    card_id TEXT NOT NULL REFERENCES cards (id),
    month   TEXT NOT NULL,
    spent   INTEGER NOT NULL,
    CONSTRAINT card_spend_pkey PRIMARY KEY (card_id, month)
);

-- Every authorization asked of a card, approved or declined.
CREATE TABLE card_authorizations (
    id              TEXT PRIMARY KEY,
    card_id         TEXT NOT NULL REFERENCES cards (id),
    organization_id TEXT NOT NULL REFERENCES organizations (id),
    kind            TEXT NOT NULL CONSTRAINT card_authorizations_kind_check CHECK (kind IN ('purchase', 'refund')),
    channel         TEXT NOT NULL CONSTRAINT card_authorizations_channel_check CHECK (channel IN ('online', 'terminal', 'atm', 'wallet')),
    merchant        TEXT NOT NULL,
    amount          INTEGER NOT NULL,
    currency        TEXT NOT NULL,
    usd_amount      INTEGER NOT NULL,
    approved        BOOLEAN NOT NULL,
    decline_reason  TEXT,
    transaction_id  TEXT REFERENCES transactions (id),
    inserted_at     TIMESTAMP NOT NULL
);
CREATE INDEX card_authorizations_card_idx ON card_authorizations (card_id, inserted_at);

-- One row per person who tried to activate a card: taken (locked) by each
-- attempt, so one person's guesses are counted one at a time.
CREATE TABLE card_activation_guards (
    user_id TEXT PRIMARY KEY REFERENCES users (id)
);

-- Wrong last-four digits at activation, per person: the guessing budget.
CREATE TABLE card_activation_failures (
    id        TEXT PRIMARY KEY,
    user_id   TEXT NOT NULL REFERENCES users (id),
    failed_at TIMESTAMP NOT NULL
);
CREATE INDEX card_activation_failures_user_idx ON card_activation_failures (user_id, failed_at);

-- The token service providers' keys of the sandbox issuer (RSA private JWK,
-- sealed), made on first use and shared by every instance.
CREATE TABLE wallet_provider_keys (
    network    TEXT PRIMARY KEY,
    jwk_sealed TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL
);

