-- +goose Up
-- A customer's ledger accounts are found by organization (every posting,
-- every balance check, the balances list). The unique ledger_accounts_key
-- leads with COALESCE(organization_id, …) so that the platform's own
-- accounts (no organization) stay unique too, and an expression index does
-- not serve "organization_id = $1": without this index every lookup read all
-- the accounts of every organization (internal/plans found it).
CREATE INDEX ledger_accounts_organization_idx ON ledger_accounts (organization_id, currency, kind);

-- The approvals list pages an organization's approvals newest first (id
-- DESC). approvals_organization_idx (organization_id, status) finds them
-- but not in that order: SQLite sorted the organization's every approval
-- for each page, and PostgreSQL, knowing how many there are, walked the
-- primary key of all organizations' approvals backwards instead.
CREATE INDEX approvals_organization_id_idx ON approvals (organization_id, id);
