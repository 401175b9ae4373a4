-- +goose Up
-- The audit log: every change a person, an API key or the sandbox makes,
-- appended in the transaction of the change (internal/audit). Entries of
-- one organization form a hash chain in seq order: hash = SHA-256(the
-- previous entry's hash ‖ the entry's canonical JSON); seq makes a missing
-- entry visible. The service never updates or deletes an entry.
CREATE TABLE audit_entries (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations (id),
    seq             INTEGER NOT NULL,
    occurred_at     TIMESTAMP NOT NULL,
    actor_kind      TEXT NOT NULL CONSTRAINT audit_entries_actor_kind_check CHECK (actor_kind IN ('user', 'api_key', 'sandbox', 'system')),
    actor_id        TEXT,
    actor_name      TEXT NOT NULL,
    action          TEXT NOT NULL,
    target_type     TEXT NOT NULL,
    target_id       TEXT NOT NULL,
    request_id      TEXT,
    client_address  TEXT,
    hash            TEXT NOT NULL
);
-- The chain's order, the list's newest-first walk and verify's stream.
CREATE UNIQUE INDEX audit_entries_chain_key ON audit_entries (organization_id, seq);
-- The list filtered by action or by actor walks its own index newest first,
-- so a page reads only matching entries however long the log is.
CREATE INDEX audit_entries_action_idx ON audit_entries (organization_id, action, seq);
CREATE INDEX audit_entries_actor_idx ON audit_entries (organization_id, actor_id, seq);

-- One row per organization: the last entry's seq and hash. Appending
-- updates it first, so the chain never forks; verify compares it with the
-- chain's end, so a deleted last entry shows.
CREATE TABLE audit_chain_heads (
    organization_id TEXT PRIMARY KEY REFERENCES organizations (id),
    seq             INTEGER NOT NULL,
    hash            TEXT NOT NULL
);

-- Entries are append-only: the service never changes one, and these
-- triggers refuse it to anyone who does not drop them first.
-- +goose StatementBegin
CREATE TRIGGER audit_entries_no_update BEFORE UPDATE ON audit_entries
BEGIN
    SELECT RAISE(ABORT, 'audit entries are append-only');
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER audit_entries_no_delete BEFORE DELETE ON audit_entries
BEGIN
    SELECT RAISE(ABORT, 'audit entries are append-only');
END;
-- +goose StatementEnd

