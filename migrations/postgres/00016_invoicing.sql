-- +goose Up
-- Billing invoices, their contacts, crypto deposits and the allocations of
-- deposits to invoices (docs/api.md, Invoicing).
-- Dates are civil dates as text (YYYY-MM-DD). Invoice amounts are minor units
-- of the invoice's currency; deposit amounts are millionths of the coin.
CREATE TABLE billing_contacts (
    id              UUID PRIMARY KEY,
    organization_id UUID NOT NULL REFERENCES organizations (id),
    company_name    TEXT NOT NULL,
    address         TEXT,
    -- a JSON array of addresses, or null
    emails          TEXT,
    phone_number    TEXT,
    tax_id          TEXT,
    deleted_at      TIMESTAMPTZ,
    inserted_at     TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL
);
CREATE INDEX billing_contacts_organization_idx ON billing_contacts (organization_id, id);

CREATE TABLE billing_invoices (
    id                        UUID PRIMARY KEY,
    organization_id           UUID NOT NULL REFERENCES organizations (id),
    billing_contact_id        UUID NOT NULL REFERENCES billing_contacts (id),
    state                     TEXT NOT NULL CONSTRAINT billing_invoices_state_check CHECK (state IN ('draft', 'awaiting_approval', 'sent', 'finalized', 'paid')),
    currency                  TEXT NOT NULL,
    due_amount                BIGINT NOT NULL CONSTRAINT billing_invoices_due_amount_check CHECK (due_amount >= 0),
    -- the sum of the invoice's allocations that are not reversed
    allocated                 BIGINT NOT NULL DEFAULT 0,
    accepted_amount           BIGINT,
    issue_date                TEXT NOT NULL,
    due_date                  TEXT NOT NULL,
    -- a JSON array of {description, price, quantity, tax_percentage, total}
    line_items                TEXT NOT NULL,
    comments                  TEXT,
    internal_description      TEXT,
    internal_reference_number TEXT,
    approval_request_id       UUID,
    approval_requester_id     UUID REFERENCES users (id),
    created_by_id             UUID REFERENCES users (id),
    completed_at              TIMESTAMPTZ,
    inserted_at               TIMESTAMPTZ NOT NULL,
    updated_at                TIMESTAMPTZ NOT NULL,
    -- allocations never exceed what is due, and a paid invoice is covered
    CONSTRAINT billing_invoices_allocated_check CHECK (allocated >= 0 AND allocated <= due_amount),
    CONSTRAINT billing_invoices_paid_check CHECK (state <> 'paid' OR (allocated = due_amount AND accepted_amount = allocated))
);
CREATE INDEX billing_invoices_organization_idx ON billing_invoices (organization_id, issue_date, id);
CREATE INDEX billing_invoices_contact_idx ON billing_invoices (billing_contact_id);

CREATE TABLE crypto_incoming (
    id              UUID PRIMARY KEY,
    organization_id UUID NOT NULL REFERENCES organizations (id),
    coin            TEXT NOT NULL CONSTRAINT crypto_incoming_coin_check CHECK (coin IN ('USDC', 'USDT', 'EURC')),
    amount          BIGINT NOT NULL CONSTRAINT crypto_incoming_amount_check CHECK (amount > 0),
    -- what allocations have not taken; the database refuses to go below zero
    unallocated     BIGINT NOT NULL,
    tx_ref          TEXT,
    transaction_id  UUID NOT NULL REFERENCES transactions (id),
    inserted_at     TIMESTAMPTZ NOT NULL,
    CONSTRAINT crypto_incoming_unallocated_check CHECK (unallocated >= 0 AND unallocated <= amount)
);
CREATE INDEX crypto_incoming_organization_idx ON crypto_incoming (organization_id, id);

-- The allocation ledger: rows are only added; a reversal is a row of its own
-- with the negative credit, naming the allocation it reverses.
CREATE TABLE billing_allocations (
    id                     UUID PRIMARY KEY,
    organization_id        UUID NOT NULL REFERENCES organizations (id),
    billing_contact_id     UUID NOT NULL REFERENCES billing_contacts (id),
    billing_invoice_id     UUID NOT NULL REFERENCES billing_invoices (id),
    crypto_incoming_id     UUID NOT NULL REFERENCES crypto_incoming (id),
    -- minor units of the invoice's currency; negative for a reversal
    credit                 BIGINT NOT NULL CONSTRAINT billing_allocations_credit_check CHECK (credit <> 0),
    notes                  TEXT NOT NULL,
    user_id                UUID NOT NULL REFERENCES users (id),
    reverses_allocation_id UUID REFERENCES billing_allocations (id),
    inserted_at            TIMESTAMPTZ NOT NULL,
    CONSTRAINT billing_allocations_reversal_check CHECK ((credit < 0) = (reverses_allocation_id IS NOT NULL))
);
CREATE INDEX billing_allocations_contact_idx ON billing_allocations (billing_contact_id, id);
CREATE INDEX billing_allocations_invoice_idx ON billing_allocations (billing_invoice_id);
-- an allocation is reversed at most once
CREATE UNIQUE INDEX billing_allocations_reverses_key ON billing_allocations (reverses_allocation_id);
