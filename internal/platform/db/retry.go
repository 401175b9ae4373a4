package db

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/jackc/pgx/v5/pgconn"
)

// SQLSTATEs of a transaction PostgreSQL aborted only because of what ran
// beside it: the same work in a new transaction may well succeed.
const (
	serializationFailure = "40001"
	deadlockDetected     = "40P01"
)

// Retryable reports whether err ended its transaction with a serialization
// failure or a deadlock. SQLite, whose single writer runs one transaction
// at a time, reports neither.
func Retryable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == serializationFailure || pgErr.Code == deadlockDetected)
}

// Retry runs op, which runs one whole transaction, and runs it once more
// when it failed with a serialization failure or a deadlock (Retryable), so
// the caller gets an answer rather than an internal error for a collision
// it had no part in. One more run is enough when transactions lock rows in
// one order (a deadlock is then rare and not repeated at once); a second
// failure is returned. op must be safe to run again: everything it does
// goes through its transaction, which was rolled back, and nothing outside
// it (a variable it set, a message it sent) may survive the failed run.
func Retry[T any](ctx context.Context, op func() (T, error)) (T, error) {
	out, err := op()
	if err == nil || !Retryable(err) || ctx.Err() != nil {
		return out, err
	}
	retried.Add(1)
	return op()
}

// retried counts the operations Retry ran again in this process.
var retried atomic.Int64

// Retried is how many operations Retry has run again in this process. A
// retry hides a deadlock from the caller; a test that races transactions
// reads this to see that their lock order held and none was needed.
func Retried() int64 { return retried.Load() }

// TxRetry is Tx, with fn run again in a new transaction when the first one
// failed with a serialization failure or a deadlock (see Retry). What fn
// registered with AfterCommit in the failed run never runs.
func (d *DB) TxRetry(ctx context.Context, fn func(tx *Tx) error) error {
	_, err := Retry(ctx, func() (struct{}, error) { return struct{}{}, d.Tx(ctx, fn) })
	return err
}

// InTxRetry is InTx, retried as TxRetry is.
func InTxRetry[T any](ctx context.Context, d *DB, fn func(tx *Tx) (T, error)) (T, error) {
	return Retry(ctx, func() (T, error) { return InTx(ctx, d, fn) })
}
