-- +goose Up
-- Files (docs/api.md, Files): the record of an uploaded file; its bytes live in the
-- blob store under blob_key, set in the same statement that makes the file
-- stored, so a failed or concurrent second upload never leaves a stored
-- file without bytes.
CREATE TABLE files (
    id              UUID PRIMARY KEY,
    organization_id UUID NOT NULL REFERENCES organizations (id),
    created_by_id   UUID NOT NULL REFERENCES users (id),
    file_name       TEXT NOT NULL,
    mime_type       TEXT NOT NULL CONSTRAINT files_mime_type_check CHECK (mime_type IN ('application/pdf', 'image/png', 'image/jpeg', 'application/xml')),
    size            BIGINT NOT NULL CONSTRAINT files_size_check CHECK (size BETWEEN 1 AND 20971520),
    status          TEXT NOT NULL CONSTRAINT files_status_check CHECK (status IN ('pending', 'stored')),
    blob_key        TEXT,
    -- hex SHA-256 of the stored bytes
    sha256          TEXT,
    created_at      TIMESTAMPTZ NOT NULL,
    stored_at       TIMESTAMPTZ,
    CONSTRAINT files_stored_check CHECK ((status = 'stored') = (blob_key IS NOT NULL))
);
CREATE INDEX files_organization_idx ON files (organization_id, id);
