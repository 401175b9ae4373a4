-- +goose Up
-- An identity-check link decides a person's check once: each link's token
-- (by its id) that decided is kept here, so deciding with it again is
-- refused and changes nothing. A newer link may decide again.
CREATE TABLE identity_check_links (
    token_id   TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES users (id),
    status     TEXT NOT NULL CONSTRAINT identity_check_links_status_check CHECK (status IN ('approved', 'rejected')),
    decided_at TIMESTAMP NOT NULL
);

-- A bill is a supplier's invoice or a credit note: a credit note keeps its
-- amount positive and is never paid. Bills before this migration are
-- invoices.
ALTER TABLE bills ADD COLUMN document_type TEXT NOT NULL DEFAULT 'invoice'
    CONSTRAINT bills_document_type_check CHECK (document_type IN ('invoice', 'credit_note'));
