-- +goose Up
-- Expenses (docs/api.md, Expenses). Amounts are integer minor
-- units of their currency, set together with it or not at all.
CREATE TABLE expenses (
    id               TEXT PRIMARY KEY,
    organization_id  TEXT NOT NULL REFERENCES organizations (id),
    created_by_id    TEXT NOT NULL REFERENCES users (id),
    status           TEXT NOT NULL CONSTRAINT expenses_status_check CHECK (status IN
                     ('draft', 'pending', 'working', 'submitted', 'approved', 'rejected', 'paid')),
    category         TEXT CONSTRAINT expenses_category_check CHECK (category IN
                     ('accommodation', 'atm_withdrawal', 'finance', 'logistics', 'marketing', 'meals', 'miscellaneous',
                      'office', 'professional', 'retail', 'technology', 'transport', 'utilities')),
    description      TEXT,
    bill_amount      INTEGER,
    bill_currency    TEXT,
    local_amount     INTEGER,
    local_currency   TEXT,
    business_name    TEXT,
    business_tax_id  TEXT,
    receipt_number   TEXT,
    -- a calendar date, YYYY-MM-DD
    transaction_date TEXT,
    -- business name, description and receipt number, lowercased, separated
    -- by U+001F (which none of them may hold): what search matches
    search_text      TEXT NOT NULL,
    rejection_reason TEXT,
    inserted_at      TIMESTAMP NOT NULL,
    updated_at       TIMESTAMP NOT NULL,
    CONSTRAINT expenses_bill_check CHECK ((bill_amount IS NULL) = (bill_currency IS NULL)),
    CONSTRAINT expenses_local_check CHECK ((local_amount IS NULL) = (local_currency IS NULL))
);
-- The list pages newest first by id, within one organization; a member's
-- list is always narrowed to their own expenses, and status is the usual filter.
CREATE INDEX expenses_organization_idx ON expenses (organization_id, id);
CREATE INDEX expenses_creator_idx ON expenses (organization_id, created_by_id, id);
CREATE INDEX expenses_status_idx ON expenses (organization_id, status, id);

-- A transaction (a card transaction's feed row, or a payment) bound to an
-- expense. A transaction belongs to at most one expense: the unique index
-- decides between concurrent binds. amount is the target's total, signed
-- (a card refund counts negative), kept at binding: targets never change it.
CREATE TABLE expense_bindings (
    id              TEXT PRIMARY KEY,
    expense_id      TEXT NOT NULL REFERENCES expenses (id),
    organization_id TEXT NOT NULL REFERENCES organizations (id),
    target_id       TEXT NOT NULL,
    target_type     TEXT NOT NULL CONSTRAINT expense_bindings_target_type_check CHECK (target_type IN
                    ('card_transaction', 'fiat_outgoing', 'crypto_outgoing', 'internal_transfer')),
    amount          INTEGER NOT NULL,
    currency        TEXT NOT NULL,
    inserted_at     TIMESTAMP NOT NULL
);
CREATE UNIQUE INDEX expense_bindings_target_key ON expense_bindings (target_id);
CREATE INDEX expense_bindings_expense_idx ON expense_bindings (expense_id, id);

-- A stored file attached to an expense as its receipt. A file is the
-- receipt of at most one expense, so one receipt cannot be claimed twice.
CREATE TABLE expense_receipts (
    id              TEXT PRIMARY KEY,
    expense_id      TEXT NOT NULL REFERENCES expenses (id),
    organization_id TEXT NOT NULL REFERENCES organizations (id),
    file_id         TEXT NOT NULL REFERENCES files (id),
    inserted_at     TIMESTAMP NOT NULL
);
CREATE UNIQUE INDEX expense_receipts_file_key ON expense_receipts (file_id);
CREATE INDEX expense_receipts_expense_idx ON expense_receipts (expense_id, id);
