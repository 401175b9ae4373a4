package identity

import (
	"context"
	"crypto/subtle"
	"database/sql"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/keyring"
)

// RFC 6238 as authenticator apps implement it: SHA-1, six digits, 30-second steps.
const (
	totpPeriod = 30
	// totpSkew accepts the previous and next step, for clocks a little apart.
	totpSkew = 1
)

var totpOpts = totp.ValidateOpts{Period: totpPeriod, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1}

// MatchTOTP returns the time step whose code equals code, within one step of
// now either way. The step, not the code, is what "used once" is about.
func MatchTOTP(secret, code string, now time.Time) (step int64, ok bool) {
	if len(code) != 6 {
		return 0, false
	}
	current := now.Unix() / totpPeriod
	for offset := int64(-totpSkew); offset <= totpSkew; offset++ {
		s := current + offset
		want, err := totp.GenerateCodeCustom(secret, time.Unix(s*totpPeriod, 0), totpOpts)
		if err != nil {
			return 0, false
		}
		if subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 {
			return s, true
		}
	}
	return 0, false
}

// useTOTPStep records that userID used step; false when it was used before,
// so a code seen once (over a shoulder, in a log) cannot sign in again.
func useTOTPStep(ctx context.Context, q db.Querier, userID uuid.UUID, step int64) (bool, error) {
	now := q.Now()
	// ON CONFLICT rather than catching the violation: on PostgreSQL a failed
	// statement would abort the caller's transaction.
	res, err := q.ExecContext(ctx, `INSERT INTO totp_used_steps (user_id, step, used_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
		userID, step, now)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// checkTOTP verifies code against the sealed seed and spends its step.
func checkTOTP(ctx context.Context, q db.Querier, keys *keyring.Keyring, userID uuid.UUID, sealedSecret, code string) (bool, error) {
	now := q.Now()
	secret, err := keys.Open(totpPurpose, sealedSecret)
	if err != nil {
		return false, err
	}
	step, ok := MatchTOTP(string(secret), code, now)
	if !ok {
		return false, nil
	}
	return useTOTPStep(ctx, q, userID, step)
}

// VerifyTOTP checks code against userID's enabled authenticator and spends
// its time step; false when the user has none or the code is wrong or used.
func (s *Service) VerifyTOTP(ctx context.Context, q db.Querier, userID uuid.UUID, code string) (bool, error) {
	var sealed *string
	if err := q.QueryRowContext(ctx, `SELECT totp_secret FROM users WHERE id = $1 AND totp_enabled`, userID).Scan(&sealed); err != nil || sealed == nil {
		if errors.Is(err, sql.ErrNoRows) {
			err = nil
		}
		return false, err
	}
	return checkTOTP(ctx, q, s.Keys, userID, *sealed, code)
}
