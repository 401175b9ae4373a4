-- +goose Up
-- listPayments filtered by status walks this index from the organization's
-- newest payment of that status down, so a page reads only matching rows
-- however many payments of other statuses the organization has. (SQLite's
-- EXPLAIN QUERY PLAN for "WHERE organization_id = ? AND status = ? AND
-- id < ? ORDER BY id DESC LIMIT ?": SEARCH payments USING INDEX
-- payments_organization_status_idx (organization_id=? AND status=? AND
-- id<?), and no sort.) The unfiltered list keeps payments_organization_idx.
CREATE INDEX payments_organization_status_idx ON payments (organization_id, status, id);

-- +goose Down
DROP INDEX payments_organization_status_idx;
