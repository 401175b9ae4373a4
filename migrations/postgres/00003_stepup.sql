-- +goose Up
-- A sudo session is the window a person opens by answering a step-up
-- challenge; it serves the gated calls of the bearer session that asked.
CREATE TABLE sudo_sessions (
    id          UUID PRIMARY KEY,
    session_id  UUID NOT NULL REFERENCES sessions (id),
    user_id     UUID NOT NULL REFERENCES users (id),
    purpose     TEXT NOT NULL CONSTRAINT sudo_sessions_purpose_check CHECK (purpose IN ('identity', 'payment_approval')),
    -- the approval a payment-approval step-up is bound to
    approval_id UUID,
    status      TEXT NOT NULL CONSTRAINT sudo_sessions_status_check CHECK (status IN ('pending', 'active', 'declined', 'expired')),
    -- end of the window once active (null while pending)
    expires_at  TIMESTAMPTZ,
    inserted_at TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL
);
CREATE INDEX sudo_sessions_session_idx ON sudo_sessions (session_id, status);

-- The verification a sudo session waits for: app approval, authenticator code or emailed code.
CREATE TABLE step_up_authentications (
    id                    UUID PRIMARY KEY,
    sudo_session_id       UUID NOT NULL REFERENCES sudo_sessions (id),
    user_id               UUID NOT NULL REFERENCES users (id),
    methods               TEXT NOT NULL,
    expires_at            TIMESTAMPTZ NOT NULL,
    failed_attempts       INTEGER NOT NULL DEFAULT 0,
    email_code_hash       TEXT,
    email_code_expires_at TIMESTAMPTZ,
    completed_method      TEXT,
    completed_at          TIMESTAMPTZ,
    inserted_at           TIMESTAMPTZ NOT NULL
);
CREATE UNIQUE INDEX step_up_authentications_sudo_key ON step_up_authentications (sudo_session_id);

-- Assurance challenges: what the approving app shows and answers.
CREATE TABLE assurance_challenges (
    id                        UUID PRIMARY KEY,
    user_id                   UUID NOT NULL REFERENCES users (id),
    step_up_authentication_id UUID NOT NULL REFERENCES step_up_authentications (id),
    approval_id               UUID,
    kind                      TEXT NOT NULL CONSTRAINT assurance_challenges_kind_check CHECK (kind IN ('step_up', 'payment_approval')),
    binding                   TEXT NOT NULL CONSTRAINT assurance_challenges_binding_check CHECK (binding IN ('none', 'tx_bound', 'tx_signed')),
    action_summary            TEXT,
    origin_rail               TEXT NOT NULL,
    required_level            TEXT NOT NULL,
    status                    TEXT NOT NULL CONSTRAINT assurance_challenges_status_check
                              CHECK (status IN ('pending', 'satisfied', 'consumed', 'declined', 'expired')),
    match_code_hash           TEXT NOT NULL,
    match_failures            INTEGER NOT NULL DEFAULT 0,
    signing_payload           TEXT NOT NULL,
    expires_at                TIMESTAMPTZ NOT NULL,
    decided_at                TIMESTAMPTZ,
    inserted_at               TIMESTAMPTZ NOT NULL
);
CREATE INDEX assurance_challenges_user_idx ON assurance_challenges (user_id, status, id);
CREATE UNIQUE INDEX assurance_challenges_step_up_key ON assurance_challenges (step_up_authentication_id);

-- The Ed25519 key of the approving app on one device.
CREATE TABLE approval_credentials (
    id          UUID PRIMARY KEY,
    user_id     UUID NOT NULL REFERENCES users (id),
    device_id   UUID NOT NULL REFERENCES devices (id),
    public_key  TEXT NOT NULL,
    label       TEXT NOT NULL,
    inserted_at TIMESTAMPTZ NOT NULL
);
CREATE UNIQUE INDEX approval_credentials_device_key ON approval_credentials (device_id);
CREATE INDEX approval_credentials_user_idx ON approval_credentials (user_id);
