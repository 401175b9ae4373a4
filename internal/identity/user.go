// Package identity holds the people who sign in: users, passwords,
// authenticator (TOTP) seeds, sessions and devices.
package identity

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/pquerna/otp/totp"

	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/keyring"
)

// User is a staff member who signs in.
type User struct {
	ID          uuid.UUID
	Email       string
	FirstName   *string
	LastName    *string
	TOTPEnabled bool
	InsertedAt  time.Time
}

// NormalizeEmail is the form emails are compared in: sign-in ignores case.
func NormalizeEmail(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// NewUser describes a user to create.
type NewUser struct {
	Email     string
	Password  string
	FirstName *string
	LastName  *string
	// WithTOTP gives the user an enabled authenticator at once (sandbox users).
	WithTOTP bool
}

// Authenticator is a freshly generated TOTP seed.
type Authenticator struct {
	Secret string // base32, for the person's app only
	URI    string // otpauth:// URI, usually shown as a QR code
}

// totpPurpose names the keyring purpose TOTP seeds are sealed under.
const totpPurpose = "totp-secret"

// AuthenticatorURI is the otpauth:// URI of secret for email, as apps scan it.
func AuthenticatorURI(email, secret string) string {
	v := url.Values{}
	v.Set("secret", secret)
	v.Set("issuer", "Strongroom")
	v.Set("algorithm", "SHA1")
	v.Set("digits", "6")
	v.Set("period", "30")
	return "otpauth://totp/" + url.PathEscape("Strongroom:"+email) + "?" + v.Encode()
}

// NewAuthenticator generates a TOTP seed for email.
func NewAuthenticator(email string) (Authenticator, error) {
	key, err := totp.Generate(totp.GenerateOpts{Issuer: "Strongroom", AccountName: email})
	if err != nil {
		return Authenticator{}, err
	}
	return Authenticator{Secret: key.Secret(), URI: AuthenticatorURI(email, key.Secret())}, nil
}

// CreateUser stores a user with an argon2id password hash; with WithTOTP it also
// generates an enabled authenticator and returns its seed (sealed in storage).
// An email in use, in any letter case, is a conflict.
func CreateUser(ctx context.Context, q db.Querier, keys *keyring.Keyring, n NewUser) (User, *Authenticator, error) {
	now := q.Now()
	u := User{ID: uuid.Must(uuid.NewV7()), Email: strings.TrimSpace(n.Email), FirstName: n.FirstName, LastName: n.LastName,
		TOTPEnabled: n.WithTOTP, InsertedAt: now}
	var auth *Authenticator
	var sealed *string
	if n.WithTOTP {
		a, err := NewAuthenticator(u.Email)
		if err != nil {
			return User{}, nil, err
		}
		s, err := keys.Seal(totpPurpose, []byte(a.Secret))
		if err != nil {
			return User{}, nil, err
		}
		auth, sealed = &a, &s
	}
	_, err := q.ExecContext(ctx, `
		INSERT INTO users (id, email, email_normalized, password_hash, first_name, last_name, totp_secret, totp_enabled, inserted_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)`,
		u.ID, u.Email, NormalizeEmail(u.Email), HashPassword(n.Password), u.FirstName, u.LastName, sealed, u.TOTPEnabled, now)
	if db.IsConstraint(err, "users_email_key") {
		return User{}, nil, apierr.New(apierr.Conflict, "A user with this email already exists.")
	}
	if err != nil {
		return User{}, nil, err
	}
	return u, auth, nil
}

const userColumns = `id, email, first_name, last_name, totp_enabled, inserted_at`

func scanUser(row interface{ Scan(...any) error }) (User, error) {
	var u User
	err := row.Scan(&u.ID, &u.Email, &u.FirstName, &u.LastName, &u.TOTPEnabled, &u.InsertedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return u, apierr.NotFoundf("User")
	}
	u.InsertedAt = u.InsertedAt.UTC()
	return u, err
}

// GetUser returns the user with id, or not_found.
func GetUser(ctx context.Context, q db.Reader, id uuid.UUID) (User, error) {
	return scanUser(q.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE id = $1`, id))
}

// GetUsers returns the users with ids, by id; unknown ids are left out.
func GetUsers(ctx context.Context, q db.Reader, ids []uuid.UUID) (map[uuid.UUID]User, error) {
	if len(ids) == 0 {
		return map[uuid.UUID]User{}, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	users, err := db.QueryAll(ctx, q, scanUser, `SELECT `+userColumns+` FROM users WHERE id IN (`+db.Placeholders(1, len(ids))+`)`, args...)
	out := make(map[uuid.UUID]User, len(users))
	for _, u := range users {
		out[u.ID] = u
	}
	return out, err
}

// FindUserByEmail returns the user with email in any letter case, or not_found.
func FindUserByEmail(ctx context.Context, q db.Reader, email string) (User, error) {
	return scanUser(q.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE email_normalized = $1`, NormalizeEmail(email)))
}
