// Package idempotency remembers what an operation produced for a client's
// Idempotency-Key, so a retry gets the first result instead of a second
// payment. A record holds the key within its scope, a hash of the input and
// a snapshot of the domain result (as formance's ledger keeps them), never an
// HTTP response: the transport renders a replay exactly as it rendered the
// original.
//
// The record is written in the transaction of the change it describes, so a
// crash leaves neither behind, and a concurrent duplicate waits on the key's
// row and then replays.
package idempotency

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
)

// Window is how long a key replays its result.
const Window = 24 * time.Hour

// Key is one client key within its scope (an organization, a bill, …).
type Key struct {
	Scope string
	Key   string
	// InputHash fingerprints the request; the same key with another input
	// is idempotency_key_reused.
	InputHash string
}

// HashInput fingerprints v (its JSON encoding).
func HashInput(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("idempotency: hash input: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

var errReused = apierr.New(apierr.IdempotencyKeyReused,
	"This Idempotency-Key was used with a different request; use a new key for a new request.")

// Replay returns the result stored for k within the window, and true; false
// when there is none (an expired record is forgotten). The same key with
// another input is idempotency_key_reused.
func Replay[T any](ctx context.Context, tx *db.Tx, k Key) (T, bool, error) {
	var zero T
	var hash, snapshot string
	var expires time.Time
	err := tx.QueryRowContext(ctx, `SELECT input_hash, result, expires_at FROM idempotency_keys WHERE scope = $1 AND key = $2`+tx.ForUpdate(),
		k.Scope, k.Key).Scan(&hash, &snapshot, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return zero, false, nil
	}
	if err != nil {
		return zero, false, err
	}
	if !tx.Now().Before(expires) {
		_, err := tx.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2`, k.Scope, k.Key)
		return zero, false, err
	}
	if hash != k.InputHash {
		return zero, false, errReused
	}
	var out T
	if err := json.Unmarshal([]byte(snapshot), &out); err != nil {
		return zero, false, fmt.Errorf("idempotency: read snapshot of %s: %w", k.Scope, err)
	}
	return out, true, nil
}

// Save stores result as what k produced, for Window from the transaction's Now.
func Save[T any](ctx context.Context, tx *db.Tx, k Key, result T) error {
	snapshot, err := json.Marshal(result)
	if err != nil {
		return fmt.Errorf("idempotency: snapshot: %w", err)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO idempotency_keys (scope, key, input_hash, result, expires_at, inserted_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, k.Scope, k.Key, k.InputHash, string(snapshot), tx.Now().Add(Window), tx.Now())
	if db.IsConstraint(err, "idempotency_keys_pkey") {
		// Another request with this key committed first, without holding a
		// lock this one waited on.
		return errInFlight
	}
	return err
}

var errInFlight = apierr.New(apierr.IdempotencyConflict,
	"A request with this Idempotency-Key is still being processed; retry it in a moment to get its result.")

// Do returns the result stored for k, or runs create and stores what it
// returns, in tx. replayed tells which happened.
func Do[T any](ctx context.Context, tx *db.Tx, k Key, create func() (T, error)) (result T, replayed bool, err error) {
	if out, ok, err := Replay[T](ctx, tx, k); err != nil || ok {
		return out, ok, err
	}
	out, err := create()
	if err != nil {
		return out, false, err
	}
	return out, false, Save(ctx, tx, k, out)
}
