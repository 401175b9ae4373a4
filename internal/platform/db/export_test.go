package db

// HoldsWriteStatement tells whether transactions run query through a
// statement prepared on the write connection.
func (d *DB) HoldsWriteStatement(query string) bool {
	return d.writeStmts != nil && d.writeStmts.cached(query) != nil
}
