-- +goose Up
-- Codes at rest (issue 9): an emailed or messaging-app code is never kept in
-- plaintext. In test the outbox keeps it sealed with the keyring
-- (sealed_code), so the sandbox outbox can still show it; in live it is not
-- kept at all and reaches the sender in-process right after the commit. The
-- stored body holds a placeholder where the code was. Codes already stored
-- in plaintext are withheld from their bodies and dropped.
ALTER TABLE outbox_messages ADD COLUMN sealed_code TEXT;
UPDATE outbox_messages SET body = replace(body, code, '[code withheld]') WHERE code IS NOT NULL AND code <> '';
ALTER TABLE outbox_messages DROP COLUMN code;

-- Wrong passwords at sign-in, one row each, keyed by keyed hashes of the
-- normalized email and of the client address (neither is kept in clear).
-- Too many per (email, address) refuse that address for that email; too many
-- per email from every address slow the answers down, never refuse them.
CREATE TABLE sign_in_failures (
    id          UUID PRIMARY KEY,
    email_key   TEXT NOT NULL,
    address_key TEXT NOT NULL,
    inserted_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX sign_in_failures_email_idx ON sign_in_failures (email_key, address_key, inserted_at);
CREATE INDEX sign_in_failures_inserted_idx ON sign_in_failures (inserted_at);
