package apitest

import "testing"

// CheckLedger runs on the database of dsn the checks every test server's
// database gets when its test ends (the ledger's invariants, statements
// reconciling with it), for a database a test made otherwise: a backup's
// copy, say. Failures are reported through t.
func CheckLedger(t testing.TB, dsn string) {
	t.Helper()
	checkLedger(t, dsn)
}
