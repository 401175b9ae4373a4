// Package sandbox holds the helpers of the `test` environment (CONTRACT §9):
// they create organizations and users, move an organization's status and
// business verification, advance the manual clock and read the outbox, so
// clients and tests can drive every rule of the API without a real bank.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/apikey"
	"github.com/strongroom/strongroom/internal/identity"
	"github.com/strongroom/strongroom/internal/ledger"
	"github.com/strongroom/strongroom/internal/mca"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/outbox"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/keyring"
	"github.com/strongroom/strongroom/internal/platform/money"
	"github.com/strongroom/strongroom/internal/platform/page"
)

// Service runs the sandbox helpers.
type Service struct {
	DB    *db.DB
	Clock clock.Clock
	// Manual is the manual clock, nil when the server runs on the system clock.
	Manual *clock.Manual
	Keys   *keyring.Keyring
}

// Person is the optional name of a user to create.
type Person struct {
	Email     string  `json:"email"`
	Password  string  `json:"password"`
	FirstName *string `json:"first_name"`
	LastName  *string `json:"last_name"`
	// TOTP gives the user an enabled authenticator (default true).
	TOTP *bool `json:"totp"`
}

func (p Person) validate(f *apierr.Fields, prefix string) {
	f.Check(validEmail(p.Email), prefix+"email", "must be an email address.")
	f.Check(len(p.Password) >= 8 && len(p.Password) <= 200, prefix+"password", "must be 8 to 200 characters.")
	checkName(f, prefix+"first_name", p.FirstName)
	checkName(f, prefix+"last_name", p.LastName)
}

func checkName(f *apierr.Fields, field string, v *string) {
	if v != nil {
		f.Check(strings.TrimSpace(*v) != "" && len(*v) <= 100, field, "must be 1 to 100 characters.")
	}
}

func validEmail(s string) bool {
	at := strings.LastIndexByte(s, '@')
	return len(s) <= 254 && at > 0 && at < len(s)-1 && !strings.ContainsAny(s, " \t\r\n") && strings.Contains(s[at:], ".")
}

// NewOrganization is the body of createOrganization.
type NewOrganization struct {
	Name         string                     `json:"name"`
	EntityStatus *organization.EntityStatus `json:"entity_status"`
	RequiresTOTP *bool                      `json:"requires_totp"`
	Owner        *Person                    `json:"owner"`
}

// Validate checks the body's fields.
func (n NewOrganization) Validate() error {
	var f apierr.Fields
	f.Check(strings.TrimSpace(n.Name) != "" && len(n.Name) <= 200, "name", "is required (at most 200 characters).")
	if n.EntityStatus != nil {
		f.Check(slices.Contains(organization.EntityStatuses, *n.EntityStatus), "entity_status", "must be ready, pending or rejected.")
	}
	if n.Owner == nil {
		f.Add("owner", "is required.")
	} else {
		n.Owner.validate(&f, "owner.")
	}
	return f.Err()
}

// CreatedUser is a user the sandbox made, with the authenticator seed when one was set up.
type CreatedUser struct {
	UserID     uuid.UUID `json:"user_id"`
	TOTPSecret *string   `json:"totp_secret"`
	// TOTPURI is the otpauth:// URI of the seed, for the demo seeding to print.
	TOTPURI string `json:"-"`
}

// CreatedOrganization answers createOrganization.
type CreatedOrganization struct {
	Organization OrganizationRef `json:"organization"`
	Owner        CreatedUser     `json:"owner"`
}

// OrganizationRef names an organization.
type OrganizationRef struct {
	ID   uuid.UUID `json:"id"`
	Name string    `json:"name"`
}

// CreateOrganization makes an active organization and its owner in one transaction.
func (s *Service) CreateOrganization(ctx context.Context, n NewOrganization) (CreatedOrganization, error) {
	var out CreatedOrganization
	err := s.DB.Tx(ctx, func(tx *db.Tx) error {
		now := s.Clock.Now()
		entity := organization.EntityReady
		if n.EntityStatus != nil {
			entity = *n.EntityStatus
		}
		org, err := organization.Create(ctx, tx, now, strings.TrimSpace(n.Name), entity, n.RequiresTOTP != nil && *n.RequiresTOTP)
		if err != nil {
			return err
		}
		owner, err := s.createUser(ctx, tx, now, *n.Owner)
		if err != nil {
			return err
		}
		if err := addMember(ctx, tx, now, org, owner.UserID, organization.Owner); err != nil {
			return err
		}
		out = CreatedOrganization{Organization: OrganizationRef{ID: org.ID, Name: org.Name}, Owner: owner}
		return nil
	})
	return out, err
}

func (s *Service) createUser(ctx context.Context, q db.Querier, now time.Time, p Person) (CreatedUser, error) {
	u, auth, err := identity.CreateUser(ctx, q, s.Keys, now, identity.NewUser{
		Email: p.Email, Password: p.Password, FirstName: p.FirstName, LastName: p.LastName,
		WithTOTP: p.TOTP == nil || *p.TOTP,
	})
	if err != nil {
		return CreatedUser{}, err
	}
	out := CreatedUser{UserID: u.ID}
	if auth != nil {
		out.TOTPSecret, out.TOTPURI = &auth.Secret, auth.URI
	}
	return out, nil
}

// addMember gives userID role in org and tells the person so.
func addMember(ctx context.Context, q db.Querier, now time.Time, org organization.Organization, userID uuid.UUID, role organization.Role) error {
	if err := organization.AddMember(ctx, q, now, org.ID, userID, role); err != nil {
		return err
	}
	_, err := outbox.Queue(ctx, q, now, outbox.Message{
		UserID:  &userID,
		Kind:    outbox.Notification,
		Channel: outbox.ChannelEmail,
		Subject: "You were added to " + org.Name,
		Body:    fmt.Sprintf("You are now %s %s of %s on Strongroom.", article(role), role, org.Name),
	})
	return err
}

func article(r organization.Role) string {
	if r == organization.Owner || r == organization.Admin {
		return "an"
	}
	return "a"
}

// NewMember is the body of addUser.
type NewMember struct {
	Person
	Role organization.Role `json:"role"`
}

// Validate checks the body's fields.
func (n NewMember) Validate() error {
	var f apierr.Fields
	n.Person.validate(&f, "")
	f.Check(slices.Contains(organization.Roles, n.Role), "role", "must be owner, admin or member.")
	return f.Err()
}

// AddUser makes a user a member of orgID. An email already registered adds
// the membership to that user; password and totp are then ignored.
func (s *Service) AddUser(ctx context.Context, orgID uuid.UUID, n NewMember) (CreatedUser, error) {
	var out CreatedUser
	err := s.DB.Tx(ctx, func(tx *db.Tx) error {
		now := s.Clock.Now()
		org, err := organization.Get(ctx, tx, orgID)
		if err != nil {
			return err
		}
		existing, err := identity.FindUserByEmail(ctx, tx, n.Email)
		switch {
		case err == nil:
			out = CreatedUser{UserID: existing.ID}
		case apierr.Is(err, apierr.NotFound):
			if out, err = s.createUser(ctx, tx, now, n.Person); err != nil {
				return err
			}
		default:
			return err
		}
		return addMember(ctx, tx, now, org, out.UserID, n.Role)
	})
	return out, err
}

// StatusChange is the body of setStatus.
type StatusChange struct {
	Status organization.Status `json:"status"`
}

// Validate checks the body's fields.
func (c StatusChange) Validate() error {
	var f apierr.Fields
	f.Check(slices.Contains(organization.Statuses, c.Status), "status", "must be active, paused, banned or deleted.")
	return f.Err()
}

// StatusResult answers setStatus.
type StatusResult struct {
	ID     uuid.UUID           `json:"id"`
	Status organization.Status `json:"status"`
}

// SetStatus moves the organization to another status.
func (s *Service) SetStatus(ctx context.Context, orgID uuid.UUID, c StatusChange) (StatusResult, error) {
	var out StatusResult
	err := s.DB.Tx(ctx, func(tx *db.Tx) error {
		now := s.Clock.Now()
		org, err := organization.SetStatus(ctx, tx, now, orgID, c.Status)
		if err != nil {
			return err
		}
		out = StatusResult{ID: org.ID, Status: org.Status}
		// A ban revokes every key for good; lifting it restores none (spec 4.13 rule 6).
		if org.Status == organization.Banned {
			return apikey.RevokeAll(ctx, tx, now, org.ID)
		}
		return nil
	})
	return out, err
}

// EntityChange is the body of setEntity.
type EntityChange struct {
	Status organization.EntityStatus `json:"status"`
}

// Validate checks the body's fields.
func (c EntityChange) Validate() error {
	var f apierr.Fields
	f.Check(slices.Contains(organization.EntityStatuses, c.Status), "status", "must be ready, pending or rejected.")
	return f.Err()
}

// EntityResult answers setEntity.
type EntityResult struct {
	ID           uuid.UUID                 `json:"id"`
	EntityStatus organization.EntityStatus `json:"entity_status"`
}

// SetEntity records the outcome of business verification.
func (s *Service) SetEntity(ctx context.Context, orgID uuid.UUID, c EntityChange) (EntityResult, error) {
	var out EntityResult
	err := s.DB.Tx(ctx, func(tx *db.Tx) error {
		now := s.Clock.Now()
		org, err := organization.SetEntityStatus(ctx, tx, now, orgID, c.Status)
		if err != nil {
			return err
		}
		out = EntityResult{ID: org.ID, EntityStatus: org.EntityStatus}
		if org.EntityStatus == organization.EntityReady {
			return mca.EntityReady(ctx, tx, now, org.ID)
		}
		return nil
	})
	return out, err
}

// ClockAdvance is the body of advanceClock.
type ClockAdvance struct {
	Seconds *int64 `json:"seconds"`
}

// maxAdvance keeps a single step within ten years, far past every time rule.
const maxAdvance = 10 * 366 * 24 * 3600

// Validate checks the body's fields.
func (c ClockAdvance) Validate() error {
	var f apierr.Fields
	f.Check(c.Seconds != nil && *c.Seconds >= 0 && *c.Seconds <= maxAdvance, "seconds",
		"is required: a whole number of seconds from 0 to 316224000.")
	return f.Err()
}

// AdvanceClock moves the manual clock forward and returns the new time; on
// the system clock it is a conflict.
func (s *Service) AdvanceClock(c ClockAdvance) (time.Time, error) {
	if s.Manual == nil {
		return time.Time{}, apierr.New(apierr.Conflict, "The server runs on the system clock; start it with STRONGROOM_CLOCK=manual to advance time.")
	}
	return s.Manual.Advance(time.Duration(*c.Seconds) * time.Second), nil
}

// Outbox returns a page of queued messages, newest first.
func (s *Service) Outbox(ctx context.Context, f outbox.Filter, req page.Request) ([]outbox.Message, error) {
	return outbox.List(ctx, s.DB.Reader(), f, req)
}

// DepositRequest is the body of the sandbox deposit helper.
type DepositRequest struct {
	Currency string `json:"currency"`
	Amount   string `json:"amount"`
}

// Validate checks the body's fields.
func (r DepositRequest) Validate() error {
	var f apierr.Fields
	f.Check(money.IsCurrency(r.Currency), "currency", "must be an ISO 4217 currency code in capitals.")
	if f.Err() == nil {
		a, err := money.Parse(r.Amount, r.Currency)
		var pe *money.ParseError
		switch {
		case errors.As(err, &pe):
			f.Add("amount", pe.Reason)
		case err != nil || !a.IsPositive():
			f.Add("amount", "must be a positive decimal amount.")
		}
	}
	return f.Err()
}

// Deposit funds the organization's balance as money arriving from outside:
// a balanced entry from the world account, and a deposit row in the feed.
func (s *Service) Deposit(ctx context.Context, orgID uuid.UUID, r DepositRequest) (ledger.Transaction, error) {
	amount, _ := money.Parse(r.Amount, r.Currency)
	var out ledger.Transaction
	err := s.DB.Tx(ctx, func(tx *db.Tx) error {
		if _, err := organization.Get(ctx, tx, orgID); err != nil {
			return err
		}
		now := s.Clock.Now()
		entry, err := ledger.Post(ctx, tx, now, ledger.Entry{OrganizationID: &orgID, Kind: "deposit", Description: "Sandbox deposit",
			Postings: []ledger.Posting{
				{Account: ledger.PlatformAccount(amount.Currency, ledger.World), Amount: -amount.Minor},
				{Account: ledger.OrgAccount(orgID, amount.Currency, ledger.Available), Amount: amount.Minor},
			}})
		if err != nil {
			return err
		}
		out, err = ledger.Record(ctx, tx, ledger.Transaction{OrganizationID: orgID, Type: "deposit", EntryID: &entry, Direction: "in",
			Amount: amount.Minor, Currency: amount.Currency, Description: "Deposit", RecordedAt: now})
		return err
	})
	return out, err
}
