-- +goose Up
-- Bills (docs/api.md, Bills): a supplier invoice read from a stored
-- file, edited by people, and paid through one payment at a time.
-- Dates are civil dates as text (YYYY-MM-DD); the amount is in minor units
-- of currency, so it is never kept without one.
CREATE TABLE bills (
    id                   UUID PRIMARY KEY,
    organization_id      UUID NOT NULL REFERENCES organizations (id),
    created_by_id        UUID NOT NULL REFERENCES users (id),
    file_id              UUID REFERENCES files (id),
    status               TEXT NOT NULL CONSTRAINT bills_status_check CHECK (status IN ('extracting', 'extracted', 'payment_requested', 'cancelled')),
    amount_minor         BIGINT CONSTRAINT bills_amount_check CHECK (amount_minor >= 0),
    currency             TEXT,
    bill_number          TEXT,
    issue_date           TEXT,
    due_date             TEXT,
    supplier_name        TEXT,
    supplier_tax_id      TEXT,
    payment_reference    TEXT,
    payment_contact_id   UUID REFERENCES payment_contacts (id),
    account_holder_name  TEXT,
    account_number       TEXT,
    iban                 TEXT,
    swift_code           TEXT,
    aba_code             TEXT,
    bank_code            TEXT,
    bank_name            TEXT,
    bank_country_alpha2  TEXT,
    branch_code          TEXT,
    bsb_code             TEXT,
    cnaps                TEXT,
    ifsc_code            TEXT,
    sort_code            TEXT,
    approval_request_id  UUID,
    fiat_outgoing_id     UUID,
    extraction_failed_at TIMESTAMPTZ,
    inserted_at          TIMESTAMPTZ NOT NULL,
    updated_at           TIMESTAMPTZ NOT NULL,
    CONSTRAINT bills_amount_currency_check CHECK (amount_minor IS NULL OR currency IS NOT NULL),
    -- a bill names its payment exactly while one is requested
    CONSTRAINT bills_payment_check CHECK ((status = 'payment_requested') = (fiat_outgoing_id IS NOT NULL))
);
CREATE INDEX bills_organization_idx ON bills (organization_id, id);
CREATE INDEX bills_organization_status_idx ON bills (organization_id, status, id);
CREATE INDEX bills_organization_due_idx ON bills (organization_id, due_date);
