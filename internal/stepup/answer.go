package stepup

import (
	"context"
	"errors"

	"github.com/strongroom/strongroom/internal/platform/db"
)

// refusal is the answer to a wrong answer whose consequences must stay: a
// wrong code or match code is counted, a third mismatch or a payment that
// fell short declines the challenge. Answering commits them, then answers
// with the refusal's error.
type refusal struct{ err error }

func (r refusal) Error() string { return r.err.Error() }
func (r refusal) Unwrap() error { return r.err }

// refuse makes err a refusal (see Answering).
func refuse(err error) error { return refusal{err} }

// Answering runs fn in one transaction, as db.InTx does, for answering a
// step-up or a challenge: when fn fails with a refusal of this package
// (a counted wrong code, a decline), what fn changed is committed and the
// refusal's error is the answer; any other error rolls everything back.
func Answering[T any](ctx context.Context, d *db.DB, fn func(tx *db.Tx) (T, error)) (T, error) {
	var refused refusal
	out, err := db.InTx(ctx, d, func(tx *db.Tx) (T, error) {
		out, err := fn(tx)
		if errors.As(err, &refused) {
			var zero T
			return zero, nil
		}
		return out, err
	})
	if err == nil && refused.err != nil {
		return out, refused.err
	}
	return out, err
}
