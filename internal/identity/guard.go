package identity

import (
	"context"
	"database/sql"
	"errors"
	"net/netip"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/ratelimit"
)

// Guessing passwords is bounded so that nobody can be kept out by someone
// else's wrong passwords (issue 9):
//
//   - Every wrong password (an unknown email included) is a row of
//     sign_in_failures, keyed by keyed hashes of the normalized email and of
//     the client address (an IPv6 address by its /64). The rows live in the
//     database, so every server instance counts the same failures. The row
//     is written before the password is checked and counted after, so
//     concurrent guesses cannot slip past the budget together.
//   - PerAddress: past its count of wrong passwords within its window for one
//     (email, client address), that address is refused (429) for that email
//     until the oldest of them leaves the window. A stranger exhausts only
//     their own bucket; the person signs in from any other address.
//   - PerEmail: past its count within its window for the email from every
//     address, each answer for that email waits Delay before the password is
//     checked (whatever its outcome, so the wait tells nothing). It slows a
//     guesser spread over many addresses; it never refuses.
//   - A sign-in naming with device_id a device the person already signed in
//     on is never refused: it skips the PerAddress bucket (its wrong
//     passwords are still counted, and it is slowed like any other).
//   - A right password clears the failures of its own (email, address).

// Budget is a count of wrong passwords within a sliding window; a zero
// Count or Window switches the rule off.
type Budget struct {
	Count  int
	Window time.Duration
}

func (b Budget) on() bool { return b.Count > 0 && b.Window > 0 }

// PasswordGuard configures the bounds on wrong passwords (see above).
type PasswordGuard struct {
	PerAddress Budget
	PerEmail   Budget
	Delay      time.Duration
}

// Keyring purposes of the keys of sign_in_failures rows.
const (
	failureEmailPurpose   = "sign-in-failure-email"
	failureAddressPurpose = "sign-in-failure-address"
)

// failureKeys are the keys of one attempt's failure rows.
type failureKeys struct{ email, address string }

func (s *Service) failureKeys(email, address string) failureKeys {
	return failureKeys{
		email:   s.Keys.Hash(failureEmailPurpose, NormalizeEmail(email)),
		address: s.Keys.Hash(failureAddressPurpose, AddressBucket(address)),
	}
}

// AddressBucket is the part of a client address that owns a budget: the
// IPv4 address, or the /64 network of an IPv6 address (one subscriber
// usually holds a whole /64, so its addresses are one client). Anything
// else is taken as it is.
func AddressBucket(address string) string {
	ip, err := netip.ParseAddr(address)
	if err != nil {
		return address
	}
	ip = ip.Unmap().WithZone("")
	if ip.Is4() {
		return ip.String()
	}
	return netip.PrefixFrom(ip, 64).Masked().String()
}

// errWrongPasswords is the 429 of an (email, address) past its budget.
func errWrongPasswords(retry time.Duration) error {
	e := apierr.New(apierr.RateLimited,
		"Too many wrong passwords for this email from your network. Please wait before trying again, or sign in from a device you have signed in on before.")
	e.RetryAfterSeconds = ratelimit.RetryAfterSeconds(retry)
	return e
}

// attempt is one sign-in's row in sign_in_failures, written before its
// password is checked: a wrong password leaves it, a right one clears it.
// Writing it first and counting after closes the race of concurrent
// guesses: each counts the others' rows, so no more than PerAddress.Count
// wrong passwords of one (email, address) are ever checked within the window.
type attempt struct {
	keys failureKeys
	id   uuid.UUID // uuid.Nil when no budget is configured
}

// guard applies the budgets before the password is checked. It writes the
// attempt's row, refuses an (email, address) past PerAddress unless the
// device is known (the row is then taken back), and waits Delay when the
// email is past PerEmail.
func (s *Service) guard(ctx context.Context, keys failureKeys, knownDevice bool) (attempt, error) {
	g := s.Guard
	at := attempt{keys: keys}
	if !g.PerAddress.on() && !g.PerEmail.on() {
		return at, nil
	}
	at.id = uuid.Must(uuid.NewV7())
	keep := max(g.PerAddress.Window, g.PerEmail.Window)
	now := s.Clock.Now()
	if err := s.DB.Tx(ctx, func(tx *db.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO sign_in_failures (id, email_key, address_key, inserted_at) VALUES ($1, $2, $3, $4)`,
			at.id, keys.email, keys.address, now); err != nil {
			return err
		}
		// Rows no window still needs.
		_, err := tx.ExecContext(ctx, `DELETE FROM sign_in_failures WHERE inserted_at <= $1`, now.Add(-keep))
		return err
	}); err != nil {
		return attempt{}, err
	}
	// perAddress counts this attempt; perEmail counts the ones before it.
	var perAddress, perEmail int
	addressSince, emailSince := now.Add(-g.PerAddress.Window), now.Add(-g.PerEmail.Window)
	err := s.DB.Reader().QueryRowContext(ctx, `
		SELECT (SELECT count(*) FROM sign_in_failures WHERE email_key = $1 AND address_key = $2 AND inserted_at > $3),
		       (SELECT count(*) FROM sign_in_failures WHERE email_key = $1 AND inserted_at > $4 AND id <> $5)`,
		keys.email, keys.address, addressSince, emailSince, at.id).Scan(&perAddress, &perEmail)
	if err != nil {
		s.forget(ctx, at)
		return attempt{}, err
	}
	if !knownDevice && g.PerAddress.on() && perAddress > g.PerAddress.Count {
		// Refused: this attempt checks no password, so it is no failure.
		s.forget(ctx, at)
		// Open again when the oldest failure in the window leaves it.
		var oldest time.Time
		err := s.DB.Reader().QueryRowContext(ctx, `
			SELECT inserted_at FROM sign_in_failures WHERE email_key = $1 AND address_key = $2 AND inserted_at > $3
			ORDER BY inserted_at LIMIT 1`, keys.email, keys.address, addressSince).Scan(&oldest)
		switch {
		case err == nil:
			return attempt{}, errWrongPasswords(oldest.Add(g.PerAddress.Window).Sub(now))
		case errors.Is(err, sql.ErrNoRows): // they left the window meanwhile
			return attempt{}, errWrongPasswords(time.Second)
		default:
			return attempt{}, err
		}
	}
	if g.PerEmail.on() && g.Delay > 0 && perEmail >= g.PerEmail.Count {
		t := time.NewTimer(g.Delay)
		defer t.Stop()
		select {
		case <-ctx.Done():
			s.forget(ctx, at) // gone before its password was checked
			return attempt{}, ctx.Err()
		case <-t.C:
		}
	}
	return at, nil
}

// forget takes back the row of an attempt whose password was not checked,
// or whose sign-in failed for another reason than the password.
func (s *Service) forget(ctx context.Context, at attempt) {
	if at.id == uuid.Nil {
		return
	}
	// Best effort: at worst the attempt counts as one wrong password.
	ctx = context.WithoutCancel(ctx)
	_ = s.DB.Tx(ctx, func(tx *db.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM sign_in_failures WHERE id = $1`, at.id)
		return err
	})
}

// clearFailures forgets the wrong passwords of one (email, address), and
// the attempt's own row, once the right password came from it.
func clearFailures(ctx context.Context, tx *db.Tx, keys failureKeys) error {
	_, err := tx.ExecContext(ctx, `DELETE FROM sign_in_failures WHERE email_key = $1 AND address_key = $2`, keys.email, keys.address)
	return err
}
