-- +goose Up
-- Request rate limits shared by every server instance on this database, so
-- that N instances grant the budget of one (internal/platform/ratelimit).
-- One row per limited (rule, key) that is not full again: key is a keyed
-- hash of the rule name and the limited value (a client address, say), so
-- no address is stored. tat is the bucket's theoretical arrival time in
-- nanoseconds since the Unix epoch (the generic cell rate algorithm): the
-- bucket is full again once the clock passes it, so a row whose tat is past
-- is the same as no row and the sweep deletes it. allowed tells whether the
-- last request passed, returned by the statement that decides it. tat has
-- no index: it changes on every request, and the sweep can afford to read
-- the whole (small) table now and then.
CREATE TABLE rate_limits (
    key     TEXT PRIMARY KEY,
    tat     INTEGER NOT NULL,
    allowed BOOLEAN NOT NULL
) WITHOUT ROWID;
