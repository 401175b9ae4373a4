-- +goose Up
-- How a bill's document says it is paid (credit_transfer, direct_debit,
-- card, other; NULL when it does not say), and how it was read: the
-- structured format or the page's text rules (NULL before or without a
-- reading), and which fields text rules filled, as a JSON array of the
-- bill's field names, for a person to check.
ALTER TABLE bills ADD COLUMN payment_means TEXT
    CONSTRAINT bills_payment_means_check CHECK (payment_means IN ('credit_transfer', 'direct_debit', 'card', 'other'));
ALTER TABLE bills ADD COLUMN extraction_format TEXT
    CONSTRAINT bills_extraction_format_check CHECK (extraction_format IN ('ubl', 'cii', 'facturx', 'zugferd1', 'pdf_text'));
ALTER TABLE bills ADD COLUMN extraction_from_text TEXT NOT NULL DEFAULT '[]';
