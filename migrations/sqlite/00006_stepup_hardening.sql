-- +goose Up
-- Wrong step-up codes (authenticator or emailed) per person, across every
-- step-up: ten within 24 hours lock step-up for the person.
CREATE TABLE step_up_code_failures (
    id          TEXT PRIMARY KEY,
    user_id     TEXT NOT NULL REFERENCES users (id),
    inserted_at TIMESTAMP NOT NULL
);
CREATE INDEX step_up_code_failures_user_idx ON step_up_code_failures (user_id, inserted_at);

-- One row per person who answered a step-up with a code. Answers lock it, so
-- concurrent answers on several servers count wrong codes one at a time;
-- locked_until is the end of a lockout.
CREATE TABLE step_up_lockouts (
    user_id      TEXT PRIMARY KEY REFERENCES users (id),
    locked_until TIMESTAMP,
    updated_at   TIMESTAMP NOT NULL
);

-- The sandbox's software approving app: its Ed25519 private key, sealed with
-- the keyring (null for a phone's credential, whose key never leaves the phone).
ALTER TABLE approval_credentials ADD COLUMN sandbox_private_key TEXT;

-- Why the server (not the person) declined a challenge: insufficient_funds
-- when a payment approval could not be recorded. Null for the person's declines.
ALTER TABLE assurance_challenges ADD COLUMN decline_reason TEXT;
