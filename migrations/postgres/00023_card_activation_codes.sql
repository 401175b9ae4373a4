-- +goose Up
-- A physical card is activated with the 6-digit code printed on the letter
-- it ships with, never with the last four digits every card shows. The code
-- is made when the physical card is ordered and kept here only as a keyed
-- hash bound to the card; it is cleared once the card is activated.
ALTER TABLE cards ADD COLUMN activation_code_hash TEXT;

-- The sandbox issuer's letters: the code a physical card's letter carries,
-- sealed, from the order until the sandbox ships the card and hands the code
-- over (then the row is deleted). A live issuer prints and posts the letter
-- instead, and keeps nothing here.
CREATE TABLE sandbox_card_letters (
    card_id     UUID PRIMARY KEY REFERENCES cards (id),
    code_sealed TEXT NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL
);
