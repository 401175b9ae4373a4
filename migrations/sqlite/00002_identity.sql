-- +goose Up
CREATE TABLE devices (
    id           TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL REFERENCES users (id),
    name         TEXT,
    platform     TEXT NOT NULL CONSTRAINT devices_platform_check CHECK (platform IN ('web', 'ios', 'android', 'cli')),
    inserted_at  TIMESTAMP NOT NULL,
    last_seen_at TIMESTAMP NOT NULL
);
CREATE INDEX devices_user_idx ON devices (user_id, id);

-- Challenge tokens of the two-call sign-in: mfa (a code is due) or
-- totp_setup (an authenticator must be set up first).
CREATE TABLE sign_in_challenges (
    id              TEXT PRIMARY KEY,
    token_hash      TEXT NOT NULL,
    user_id         TEXT NOT NULL REFERENCES users (id),
    device_id       TEXT NOT NULL REFERENCES devices (id),
    purpose         TEXT NOT NULL CONSTRAINT sign_in_challenges_purpose_check CHECK (purpose IN ('mfa', 'totp_setup')),
    failed_attempts INTEGER NOT NULL DEFAULT 0,
    -- sealed seed offered during sign-in setup, until activated
    pending_totp_secret TEXT,
    trust_device    INTEGER NOT NULL DEFAULT 0 CHECK (trust_device IN (0, 1)),
    expires_at      TIMESTAMP NOT NULL,
    consumed_at     TIMESTAMP,
    inserted_at     TIMESTAMP NOT NULL
);
CREATE UNIQUE INDEX sign_in_challenges_token_key ON sign_in_challenges (token_hash);

CREATE TABLE sessions (
    id              TEXT PRIMARY KEY,
    token_hash      TEXT NOT NULL,
    user_id         TEXT NOT NULL REFERENCES users (id),
    device_id       TEXT NOT NULL REFERENCES devices (id),
    inserted_at     TIMESTAMP NOT NULL,
    expires_at      TIMESTAMP NOT NULL,
    idle_expires_at TIMESTAMP NOT NULL,
    ended_at        TIMESTAMP
);
CREATE UNIQUE INDEX sessions_token_key ON sessions (token_hash);
CREATE INDEX sessions_user_idx ON sessions (user_id);

-- A code works once per user and time step: the step is recorded when used.
CREATE TABLE totp_used_steps (
    user_id TEXT NOT NULL REFERENCES users (id),
    step    INTEGER NOT NULL,
    used_at TIMESTAMP NOT NULL,
    CONSTRAINT totp_used_steps_pkey PRIMARY KEY (user_id, step)
);

-- Authenticator seeds being set up by a signed-in user (4.4), with the
-- messaging-app code sent to confirm it.
CREATE TABLE totp_enrollments (
    id             TEXT PRIMARY KEY,
    user_id        TEXT NOT NULL REFERENCES users (id),
    secret         TEXT NOT NULL,
    messaging_code_hash TEXT NOT NULL,
    failed_attempts INTEGER NOT NULL DEFAULT 0,
    expires_at     TIMESTAMP NOT NULL,
    consumed_at    TIMESTAMP,
    inserted_at    TIMESTAMP NOT NULL
);
CREATE INDEX totp_enrollments_user_idx ON totp_enrollments (user_id, inserted_at);

-- Device trust for the service's own apps: a token that skips the code on that device.
CREATE TABLE device_trusts (
    id          TEXT PRIMARY KEY,
    token_hash  TEXT NOT NULL,
    user_id     TEXT NOT NULL REFERENCES users (id),
    device_id   TEXT NOT NULL REFERENCES devices (id),
    expires_at  TIMESTAMP NOT NULL,
    inserted_at TIMESTAMP NOT NULL
);
CREATE UNIQUE INDEX device_trusts_token_key ON device_trusts (token_hash);

CREATE TABLE passkeys (
    id            TEXT PRIMARY KEY,
    user_id       TEXT NOT NULL REFERENCES users (id),
    credential_id TEXT NOT NULL,
    label         TEXT,
    transports    TEXT NOT NULL,
    credential    TEXT NOT NULL,
    inserted_at   TIMESTAMP NOT NULL,
    last_used_at  TIMESTAMP
);
CREATE UNIQUE INDEX passkeys_credential_key ON passkeys (credential_id);
CREATE INDEX passkeys_user_idx ON passkeys (user_id, id);

-- WebAuthn registration ceremonies in progress.
CREATE TABLE passkey_ceremonies (
    id          TEXT PRIMARY KEY,
    user_id     TEXT NOT NULL REFERENCES users (id),
    session_data TEXT NOT NULL,
    expires_at  TIMESTAMP NOT NULL,
    inserted_at TIMESTAMP NOT NULL
);
