-- +goose Up
CREATE TABLE devices (
    id           UUID PRIMARY KEY,
    user_id      UUID NOT NULL REFERENCES users (id),
    name         TEXT,
    platform     TEXT NOT NULL CONSTRAINT devices_platform_check CHECK (platform IN ('web', 'ios', 'android', 'cli')),
    inserted_at  TIMESTAMPTZ NOT NULL,
    last_seen_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX devices_user_idx ON devices (user_id, id);

-- Challenge tokens of the two-call sign-in: mfa (a code is due) or
-- totp_setup (an authenticator must be set up first).
CREATE TABLE sign_in_challenges (
    id              UUID PRIMARY KEY,
    token_hash      TEXT NOT NULL,
    user_id         UUID NOT NULL REFERENCES users (id),
    device_id       UUID NOT NULL REFERENCES devices (id),
    purpose         TEXT NOT NULL CONSTRAINT sign_in_challenges_purpose_check CHECK (purpose IN ('mfa', 'totp_setup')),
    failed_attempts INTEGER NOT NULL DEFAULT 0,
    -- sealed seed offered during sign-in setup, until activated
    pending_totp_secret TEXT,
    trust_device    BOOLEAN NOT NULL DEFAULT FALSE,
    expires_at      TIMESTAMPTZ NOT NULL,
    consumed_at     TIMESTAMPTZ,
    inserted_at     TIMESTAMPTZ NOT NULL
);
CREATE UNIQUE INDEX sign_in_challenges_token_key ON sign_in_challenges (token_hash);

CREATE TABLE sessions (
    id              UUID PRIMARY KEY,
    token_hash      TEXT NOT NULL,
    user_id         UUID NOT NULL REFERENCES users (id),
    device_id       UUID NOT NULL REFERENCES devices (id),
    inserted_at     TIMESTAMPTZ NOT NULL,
    expires_at      TIMESTAMPTZ NOT NULL,
    idle_expires_at TIMESTAMPTZ NOT NULL,
    ended_at        TIMESTAMPTZ
);
CREATE UNIQUE INDEX sessions_token_key ON sessions (token_hash);
CREATE INDEX sessions_user_idx ON sessions (user_id);

-- A code works once per user and time step: the step is recorded when used.
CREATE TABLE totp_used_steps (
    user_id UUID NOT NULL REFERENCES users (id),
    step    BIGINT NOT NULL,
    used_at TIMESTAMPTZ NOT NULL,
    CONSTRAINT totp_used_steps_pkey PRIMARY KEY (user_id, step)
);

-- Authenticator seeds being set up by a signed-in user (4.4), with the
-- messaging-app code sent to confirm it.
CREATE TABLE totp_enrollments (
    id             UUID PRIMARY KEY,
    user_id        UUID NOT NULL REFERENCES users (id),
    secret         TEXT NOT NULL,
    messaging_code_hash TEXT NOT NULL,
    failed_attempts INTEGER NOT NULL DEFAULT 0,
    expires_at     TIMESTAMPTZ NOT NULL,
    consumed_at    TIMESTAMPTZ,
    inserted_at    TIMESTAMPTZ NOT NULL
);
CREATE INDEX totp_enrollments_user_idx ON totp_enrollments (user_id, inserted_at);

-- Device trust for the service's own apps: a token that skips the code on that device.
CREATE TABLE device_trusts (
    id          UUID PRIMARY KEY,
    token_hash  TEXT NOT NULL,
    user_id     UUID NOT NULL REFERENCES users (id),
    device_id   UUID NOT NULL REFERENCES devices (id),
    expires_at  TIMESTAMPTZ NOT NULL,
    inserted_at TIMESTAMPTZ NOT NULL
);
CREATE UNIQUE INDEX device_trusts_token_key ON device_trusts (token_hash);

CREATE TABLE passkeys (
    id            UUID PRIMARY KEY,
    user_id       UUID NOT NULL REFERENCES users (id),
    credential_id TEXT NOT NULL,
    label         TEXT,
    transports    TEXT NOT NULL,
    credential    TEXT NOT NULL,
    inserted_at   TIMESTAMPTZ NOT NULL,
    last_used_at  TIMESTAMPTZ
);
CREATE UNIQUE INDEX passkeys_credential_key ON passkeys (credential_id);
CREATE INDEX passkeys_user_idx ON passkeys (user_id, id);

-- WebAuthn registration ceremonies in progress.
CREATE TABLE passkey_ceremonies (
    id          UUID PRIMARY KEY,
    user_id     UUID NOT NULL REFERENCES users (id),
    session_data TEXT NOT NULL,
    expires_at  TIMESTAMPTZ NOT NULL,
    inserted_at TIMESTAMPTZ NOT NULL
);
