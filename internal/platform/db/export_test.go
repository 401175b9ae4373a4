package db

// HoldsWriteStatement tells whether transactions run query through a
// statement prepared on the write connection.
func (d *DB) HoldsWriteStatement(query string) bool {
	return d.writeStmts != nil && d.writeStmts.cached(query) != nil
}

// QueuedWriters counts the transactions waiting for SQLite's writer.
func (d *DB) QueuedWriters() int { return int(d.group.waiting.Load()) }

// MigrationLockID is the advisory lock migrations of schema take.
var MigrationLockID = migrationLockID
