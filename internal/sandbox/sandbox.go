package sandbox

// The helpers of the `test` environment (docs/api.md, The sandbox): they
// create organizations and users, move an organization's status and business
// verification, deposit money, advance the manual clock and read the outbox,
// so clients and tests can drive every rule of the API without a real bank.

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
	"github.com/strongroom/strongroom/internal/onboarding"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/keyring"
	"github.com/strongroom/strongroom/internal/platform/money"
	"github.com/strongroom/strongroom/internal/platform/outbox"
	"github.com/strongroom/strongroom/internal/platform/page"
)

// Service runs the sandbox helpers.
type Service struct {
	DB *db.DB
	// Manual is the manual clock, nil when the server runs on the system clock.
	Manual *clock.Manual
	Keys   *keyring.Keyring
	// Messages opens the codes the outbox keeps sealed, for the outbox helper.
	Messages *outbox.Outbox
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
	// RequiresSubscriptionAcknowledgement makes the organization acknowledge
	// its subscription plan (default true, as for every new organization).
	RequiresSubscriptionAcknowledgement *bool   `json:"requires_subscription_acknowledgement"`
	Owner                               *Person `json:"owner"`
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
	UserID     uuid.UUID
	TOTPSecret *string
	// TOTPURI is the otpauth:// URI of the seed, for the demo seeding to print.
	TOTPURI string
}

// CreatedOrganization answers createOrganization.
type CreatedOrganization struct {
	Organization OrganizationRef
	Owner        CreatedUser
}

// OrganizationRef names an organization.
type OrganizationRef struct {
	ID   uuid.UUID
	Name string
}

// CreateOrganization makes an active organization and its owner in one transaction.
func (s *Service) CreateOrganization(ctx context.Context, n NewOrganization) (CreatedOrganization, error) {
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (CreatedOrganization, error) { return s.createOrganization(ctx, tx, n) })
}

func (s *Service) createOrganization(ctx context.Context, tx *db.Tx, n NewOrganization) (CreatedOrganization, error) {
	entity := organization.EntityReady
	if n.EntityStatus != nil {
		entity = *n.EntityStatus
	}
	org, err := organization.Create(ctx, tx, strings.TrimSpace(n.Name), entity, n.RequiresTOTP != nil && *n.RequiresTOTP)
	if err != nil {
		return CreatedOrganization{}, err
	}
	if err := onboarding.Register(ctx, tx, org.ID, n.RequiresSubscriptionAcknowledgement == nil || *n.RequiresSubscriptionAcknowledgement); err != nil {
		return CreatedOrganization{}, err
	}
	owner, err := s.createUser(ctx, tx, *n.Owner)
	if err != nil {
		return CreatedOrganization{}, err
	}
	if err := addMember(ctx, tx, org, owner.UserID, organization.Owner); err != nil {
		return CreatedOrganization{}, err
	}
	return CreatedOrganization{Organization: OrganizationRef{ID: org.ID, Name: org.Name}, Owner: owner}, nil
}

func (s *Service) createUser(ctx context.Context, tx *db.Tx, p Person) (CreatedUser, error) {
	u, auth, err := identity.CreateUser(ctx, tx, s.Keys, identity.NewUser{
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
func addMember(ctx context.Context, tx *db.Tx, org organization.Organization, userID uuid.UUID, role organization.Role) error {
	if err := organization.AddMember(ctx, tx, org.ID, userID, role); err != nil {
		return err
	}
	_, err := outbox.Queue(ctx, tx, outbox.Message{
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
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (CreatedUser, error) {
		org, err := organization.Get(ctx, tx, orgID)
		if err != nil {
			return CreatedUser{}, err
		}
		var out CreatedUser
		existing, err := identity.FindUserByEmail(ctx, tx, n.Email)
		switch {
		case err == nil:
			out = CreatedUser{UserID: existing.ID}
		case apierr.Is(err, apierr.NotFound):
			if out, err = s.createUser(ctx, tx, n.Person); err != nil {
				return CreatedUser{}, err
			}
		default:
			return CreatedUser{}, err
		}
		return out, addMember(ctx, tx, org, out.UserID, n.Role)
	})
}

// StatusChange is the body of setStatus.
type StatusChange struct {
	Status organization.Status `json:"status"`
}

// EntityChange is the body of setEntity.
type EntityChange struct {
	Status organization.EntityStatus `json:"status"`
}

// Validate checks the body's fields.
func (c StatusChange) Validate() error {
	return oneOf("status", c.Status, organization.Statuses, "must be active, paused, banned or deleted.")
}

// Validate checks the body's fields.
func (c EntityChange) Validate() error {
	return oneOf("status", c.Status, organization.EntityStatuses, "must be ready, pending or rejected.")
}

// oneOf is the invalid_request of field unless v is one of allowed.
func oneOf[T comparable](field string, v T, allowed []T, message string) error {
	var f apierr.Fields
	f.Check(slices.Contains(allowed, v), field, message)
	return f.Err()
}

// SetStatus moves the organization to another status and returns it.
func (s *Service) SetStatus(ctx context.Context, orgID uuid.UUID, c StatusChange) (organization.Organization, error) {
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (organization.Organization, error) {
		org, err := organization.SetStatus(ctx, tx, orgID, c.Status)
		if err == nil && org.Status == organization.Banned {
			// A ban revokes every key for good; lifting it restores none.
			err = apikey.RevokeAll(ctx, tx, org.ID)
		}
		return org, err
	})
}

// SetEntity records the outcome of business verification and returns the
// organization; once ready, its saved currency selections are submitted.
func (s *Service) SetEntity(ctx context.Context, orgID uuid.UUID, c EntityChange) (organization.Organization, error) {
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (organization.Organization, error) {
		org, err := organization.SetEntityStatus(ctx, tx, orgID, c.Status)
		if err == nil && org.EntityStatus == organization.EntityReady {
			err = mca.EntityReady(ctx, tx, org.ID)
		}
		return org, err
	})
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
	return s.Messages.List(ctx, s.DB.Reader(), f, req)
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
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (ledger.Transaction, error) { return deposit(ctx, tx, orgID, r) })
}

// deposit is Deposit in the caller's transaction; r must have passed Validate.
func deposit(ctx context.Context, tx *db.Tx, orgID uuid.UUID, r DepositRequest) (ledger.Transaction, error) {
	amount, _ := money.Parse(r.Amount, r.Currency)
	if _, err := organization.Get(ctx, tx, orgID); err != nil {
		return ledger.Transaction{}, err
	}
	entry, err := ledger.Post(ctx, tx, ledger.Entry{OrganizationID: &orgID, Kind: "deposit", Description: "Sandbox deposit",
		Postings: []ledger.Posting{
			{Account: ledger.PlatformAccount(orgID, amount.Currency, ledger.World), Amount: -amount.Minor},
			{Account: ledger.OrgAccount(orgID, amount.Currency, ledger.Available), Amount: amount.Minor},
		}})
	if err != nil {
		return ledger.Transaction{}, err
	}
	return ledger.Record(ctx, tx, ledger.Transaction{OrganizationID: orgID, Type: "deposit", EntryID: &entry, Direction: "in",
		Amount: amount.Minor, Currency: amount.Currency, Description: "Deposit"})
}
