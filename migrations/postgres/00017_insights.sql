-- +goose Up
-- Insights (docs/api.md, Insights) sum an organization's feed by UTC day. These sums are
-- kept per organization, day ('2026-11-23') and currency in the transaction
-- that adds the feed row (ledger.Record), so a year of insights reads at most
-- 365 rows a currency by the primary key, however many rows the feed holds.
-- Signed minor units: incoming = deposit and crypto_incoming; outgoing =
-- fiat_outgoing, crypto_outgoing and fee, less the reversals of payments;
-- payments = card_transaction purchases less refunds (and less a reversal
-- without a payment). row_count counts the rows summed (internal_transfer
-- rows count in nothing and are not kept here).
CREATE TABLE transaction_day_sums (
    organization_id UUID NOT NULL REFERENCES organizations (id),
    day             TEXT NOT NULL,
    currency        TEXT NOT NULL,
    incoming        BIGINT NOT NULL,
    outgoing        BIGINT NOT NULL,
    payments        BIGINT NOT NULL,
    row_count       BIGINT NOT NULL,
    CONSTRAINT transaction_day_sums_pkey PRIMARY KEY (organization_id, day, currency)
);

-- The sums of the rows recorded before this migration.
INSERT INTO transaction_day_sums (organization_id, day, currency, incoming, outgoing, payments, row_count)
SELECT organization_id, to_char(recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD'), currency,
    SUM(CASE WHEN type IN ('deposit', 'crypto_incoming')
        THEN CASE WHEN direction = 'in' THEN amount ELSE -amount END ELSE 0 END),
    SUM(CASE WHEN type IN ('fiat_outgoing', 'crypto_outgoing', 'fee') OR (type = 'reversal' AND payment_id IS NOT NULL)
        THEN CASE WHEN direction = 'out' THEN amount ELSE -amount END ELSE 0 END),
    SUM(CASE WHEN type = 'card_transaction' OR (type = 'reversal' AND payment_id IS NULL)
        THEN CASE WHEN direction = 'out' THEN amount ELSE -amount END ELSE 0 END),
    COUNT(*)
FROM transactions
WHERE type <> 'internal_transfer'
GROUP BY organization_id, to_char(recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD'), currency;
