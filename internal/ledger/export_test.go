package ledger

// DailySumsSQL is the query DailySums runs, for the test that reads its plan.
const DailySumsSQL = daySumsSQL
