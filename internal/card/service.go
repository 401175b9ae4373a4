package card

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/audit"
	"github.com/strongroom/strongroom/internal/identity"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/event"
	"github.com/strongroom/strongroom/internal/platform/keyring"
	"github.com/strongroom/strongroom/internal/platform/page"
	"github.com/strongroom/strongroom/internal/platform/ratelimit"
)

// Service runs cards. Its transactions stamp rows with tx.Now(); reads take
// the month of spending from the database's clock.
type Service struct {
	DB     *db.DB
	Keys   *keyring.Keyring
	Issuer Issuer
	Rates  Rates
}

// Rates tells how many units of to one unit of from buys (payment.Rates).
type Rates interface {
	Rate(ctx context.Context, from, to string) (string, error)
}

var (
	errHolderOnly   = apierr.New(apierr.Forbidden, "Only the cardholder can do this.")
	errManagersOnly = apierr.New(apierr.Forbidden, "Only an owner or admin of the organization can change a card's settings.")
)

// viewer is who is looking at a card: their role and whether they hold it.
type viewer struct {
	role   organization.Role
	holder bool
}

func (v viewer) manager() bool { return v.role.AtLeast(organization.Admin) }

// access applies the policy to a's use of card c: not_found unless a is a
// member of its organization and, as a member, holds it; then the
// organization's status for an operation that writes.
func access(ctx context.Context, q db.Reader, a actor.Actor, c stored, write bool) (viewer, error) {
	role, holder, err := organization.Own(ctx, q, a, c.OrganizationID, c.UserID, organization.Need{Write: write}, errNotFound)
	return viewer{role: role, holder: holder}, err
}

// view is the card as v sees it.
func (c stored) view(v viewer) Card {
	out := c.Card
	out.AvailableActions = c.actions(v.holder, v.manager())
	return out
}

// withHolders fills the cardholders' profiles of cs.
func withHolders(ctx context.Context, q db.Reader, cs []Card) ([]Card, error) {
	var ids []uuid.UUID
	for _, c := range cs {
		if c.UserID != nil {
			ids = append(ids, *c.UserID)
		}
	}
	if len(ids) == 0 {
		return cs, nil
	}
	users, err := identity.GetUsers(ctx, q, ids)
	if err != nil {
		return nil, err
	}
	for i, c := range cs {
		if c.UserID == nil {
			continue
		}
		if u, ok := users[*c.UserID]; ok {
			cs[i].Holder = &Holder{ID: u.ID, Email: u.Email, FirstName: u.FirstName, LastName: u.LastName}
		}
	}
	return cs, nil
}

func withHolder(ctx context.Context, q db.Reader, c Card) (Card, error) {
	cs, err := withHolders(ctx, q, []Card{c})
	if err != nil {
		return Card{}, err
	}
	return cs[0], nil
}

// List returns a page of orgID's cards, newest first; a member sees only
// their own.
func (s *Service) List(ctx context.Context, a actor.Actor, orgID uuid.UUID, f ListFilter, req page.Request) ([]Card, error) {
	q := s.DB.Reader()
	role, err := organization.Check(ctx, q, a, orgID, organization.Need{})
	if err != nil {
		return nil, err
	}
	v := viewer{role: role}
	if !v.manager() {
		if f.UserID != nil && *f.UserID != a.UserID {
			return nil, nil
		}
		f.UserID = &a.UserID
	}
	rows, err := listCards(ctx, q, orgID, f, req)
	if err != nil {
		return nil, err
	}
	out := make([]Card, len(rows))
	for i, c := range rows {
		v.holder = c.UserID != nil && *c.UserID == a.UserID
		out[i] = c.view(v)
	}
	return withHolders(ctx, q, out)
}

// PageKey positions a page after c.
func PageKey(c Card) page.Key { return page.Key{ID: c.ID.String()} }

// Get returns card id as a sees it.
func (s *Service) Get(ctx context.Context, a actor.Actor, id uuid.UUID) (Card, error) {
	q := s.DB.Reader()
	c, err := loadCard(ctx, q, id, "")
	if err != nil {
		return Card{}, err
	}
	v, err := access(ctx, q, a, c, false)
	if err != nil {
		return Card{}, err
	}
	return withHolder(ctx, q, c.view(v))
}

// change runs one change of card id by a in a transaction: the card row is
// locked, a's access checked (write: the organization must admit writes),
// then fn applies the change; the card is read again, card.updated is
// appended, action goes to the audit log, and the card is returned as a
// sees it. When fn refuses with a kept error, what fn wrote still commits
// (a counted wrong guess) and the refusal is the answer.
func (s *Service) change(ctx context.Context, a actor.Actor, id uuid.UUID, write bool, action string, fn func(tx *db.Tx, c stored, v viewer) error) (Card, error) {
	var refused kept
	out, err := db.InTx(ctx, s.DB, func(tx *db.Tx) (Card, error) {
		c, err := loadCard(ctx, tx, id, tx.ForUpdate())
		if err != nil {
			return Card{}, err
		}
		v, err := access(ctx, tx, a, c, write)
		if err != nil {
			return Card{}, err
		}
		if err := fn(tx, c, v); err != nil {
			if errors.As(err, &refused) {
				return Card{}, nil
			}
			return Card{}, err
		}
		if c, err = s.updated(ctx, tx, id); err != nil {
			return Card{}, err
		}
		if err := audit.Record(ctx, tx, c.OrganizationID, action, audit.To("card", id)); err != nil {
			return Card{}, err
		}
		return withHolder(ctx, tx, c.view(v))
	})
	if err == nil && refused.err != nil {
		return Card{}, refused.err
	}
	return out, err
}

// kept is a refusal whose transaction commits (see change).
type kept struct{ err error }

func (k kept) Error() string { return k.err.Error() }

// Updated is the event type of a card's change: the organization's realtime
// channel shows the card as it is when it delivers the event.
const Updated = "card.updated"

// updated reads card id again after a change and appends card.updated.
func (s *Service) updated(ctx context.Context, tx *db.Tx, id uuid.UUID) (stored, error) {
	c, err := loadCard(ctx, tx, id, "")
	if err != nil {
		return stored{}, err
	}
	_, err = event.Append(ctx, tx, c.OrganizationID, "card-"+id.String(), id.String(), Updated,
		map[string]string{"card_id": id.String(), "organization_id": c.OrganizationID.String()})
	return c, err
}

// UpdateRequest is the body of a card's PATCH.
type UpdateRequest struct {
	MonthlyLimit   *int64  `json:"monthly_limit"`
	CardHolderName *string `json:"card_holder_name"`
}

// Validate checks the body's fields.
func (r UpdateRequest) Validate() error {
	var f apierr.Fields
	f.Check(r.MonthlyLimit != nil || r.CardHolderName != nil, "", "Give monthly_limit, card_holder_name or both.")
	if r.MonthlyLimit != nil {
		f.Check(*r.MonthlyLimit >= 0 && *r.MonthlyLimit <= MaxMonthlyLimit, "monthly_limit", "must be a whole number of US dollars from 0 to 1000000.")
	}
	if r.CardHolderName != nil {
		checkName(&f, *r.CardHolderName)
	}
	return f.Err()
}

func checkName(f *apierr.Fields, name string) { checkText(f, "card_holder_name", name, 1, 100) }

// checkText requires v to be min to max characters without leading or
// trailing spaces: the one rule of the card's free-text fields.
func checkText(f *apierr.Fields, field, v string, min, max int) {
	n := utf8.RuneCountInString(v)
	f.Check(n >= min && n <= max && v == strings.TrimSpace(v), field,
		"must be "+strconv.Itoa(min)+" to "+strconv.Itoa(max)+" characters, without leading or trailing spaces.")
}

// Update changes a card's monthly limit or holder name: owners and admins only.
func (s *Service) Update(ctx context.Context, a actor.Actor, id uuid.UUID, r UpdateRequest) (Card, error) {
	return s.change(ctx, a, id, true, audit.CardUpdated, func(tx *db.Tx, c stored, v viewer) error {
		if !v.manager() {
			return errManagersOnly
		}
		limit, name := c.MonthlyLimit, c.CardHolderName
		if r.MonthlyLimit != nil {
			limit = *r.MonthlyLimit
		}
		if r.CardHolderName != nil {
			name = r.CardHolderName
		}
		return update(ctx, tx, id, `monthly_limit = $2, card_holder_name = $3`, limit, name)
	})
}

var (
	errNotActive     = apierr.New(apierr.Conflict, "This card is not active.")
	errAlreadyFrozen = apierr.New(apierr.Conflict, "This card is already frozen.")
	errNotFrozen     = apierr.New(apierr.Conflict, "This card is not frozen.")
)

// Freeze blocks further transactions of an active card: the cardholder or an
// owner or admin. Freezing only protects, so a paused organization may.
func (s *Service) Freeze(ctx context.Context, a actor.Actor, id uuid.UUID) (Card, error) {
	return s.change(ctx, a, id, false, audit.CardFrozen, func(tx *db.Tx, c stored, _ viewer) error {
		switch {
		case c.Status != Active:
			return errNotActive
		case c.Frozen:
			return errAlreadyFrozen
		}
		return update(ctx, tx, id, `frozen = TRUE`)
	})
}

// Unfreeze lets a frozen active card transact again.
func (s *Service) Unfreeze(ctx context.Context, a actor.Actor, id uuid.UUID) (Card, error) {
	return s.change(ctx, a, id, true, audit.CardUnfrozen, func(tx *db.Tx, c stored, _ viewer) error {
		switch {
		case c.Status != Active:
			return errNotActive
		case !c.Frozen:
			return errNotFrozen
		}
		return update(ctx, tx, id, `frozen = FALSE`)
	})
}

// OrderRequest is the body of ordering a physical card.
type OrderRequest struct {
	ShippingAddress *Address `json:"shipping_address"`
}

var countryCode = regexp.MustCompile(`^[A-Z]{2}$`)

// Validate checks the body's fields.
func (r OrderRequest) Validate() error {
	var f apierr.Fields
	a := r.ShippingAddress
	if a == nil {
		f.Add("shipping_address", "is required.")
		return f.Err()
	}
	text := func(field, v string, min, max int) { checkText(&f, "shipping_address."+field, v, min, max) }
	text("address_line1", a.Line1, 1, 200)
	if a.Line2 != nil {
		text("address_line2", *a.Line2, 0, 200)
	}
	text("city", a.City, 1, 100)
	text("postal_code", a.PostalCode, 1, 20)
	if a.State != nil {
		text("state", *a.State, 0, 100)
	}
	f.Check(countryCode.MatchString(a.CountryCode), "shipping_address.country_code", "must be an ISO 3166-1 alpha-2 code in capitals (DE, US).")
	return f.Err()
}

// OrderPhysical orders the physical counterpart of an active card that
// allows one and has none: the cardholder or an owner or admin.
func (s *Service) OrderPhysical(ctx context.Context, a actor.Actor, id uuid.UUID, r OrderRequest) (Card, error) {
	return s.change(ctx, a, id, true, audit.CardPhysicalOrdered, func(tx *db.Tx, c stored, _ viewer) error {
		switch {
		case !c.AllowPhysical:
			return apierr.New(apierr.Conflict, "This card cannot have a physical card.")
		case c.Physical.State != PhysicalNone:
			return apierr.New(apierr.Conflict, "A physical card was already ordered for this card.")
		case c.Status != Active:
			return errNotActive
		}
		address, err := json.Marshal(r.ShippingAddress)
		if err != nil {
			return err
		}
		// The letter the card ships with carries the activation code; we
		// keep only its keyed hash, bound to the card.
		code := identity.RandomDigits(ActivationCodeDigits)
		if err := s.Issuer.SendActivationLetter(ctx, tx, id, code); err != nil {
			return err
		}
		return update(ctx, tx, id, `physical_state = $2, shipping_address = $3, activation_code_hash = $4`,
			PhysicalAwaitingActivation, string(address), s.activationHash(id, code))
	})
}

// ActivationCodeDigits is the length of the code on a physical card's letter.
const ActivationCodeDigits = 6

const activationPurpose = "card-activation-code"

// activationHash is how the activation code of card id is kept.
func (s *Service) activationHash(id uuid.UUID, code string) string {
	return s.Keys.Hash(activationPurpose, id.String()+":"+code)
}

// ActivateRequest is the body of activating a physical card.
type ActivateRequest struct {
	ActivationCode string `json:"activation_code"`
}

var (
	fourDigits     = regexp.MustCompile(`^[0-9]{4}$`)
	activationCode = regexp.MustCompile(`^[0-9]{6}$`)
)

// Validate checks the body's fields.
func (r ActivateRequest) Validate() error {
	if !activationCode.MatchString(r.ActivationCode) {
		return apierr.InvalidField("activation_code", "must be the 6-digit code on the letter the physical card came with.")
	}
	return nil
}

// Activation guessing budget: wrong codes per person, across cards.
const (
	MaxActivationFailures = 10
	ActivationWindow      = 24 * time.Hour
)

var errWrongCode = apierr.New(apierr.InvalidCode, "This is not the activation code of this card.")

// Activate turns on the physical card when the cardholder enters the code
// of the letter it came with; the card's last four digits, which every
// Card shows, prove nothing. Wrong codes count against the person, whatever
// the card: MaxActivationFailures within ActivationWindow answer
// rate_limited until the oldest of them leaves the window. The code is
// spent with the activation.
func (s *Service) Activate(ctx context.Context, a actor.Actor, id uuid.UUID, r ActivateRequest) (Card, error) {
	return s.change(ctx, a, id, true, audit.CardActivated, func(tx *db.Tx, c stored, v viewer) error {
		switch {
		case !v.holder:
			return errHolderOnly
		case c.Physical.State != PhysicalAwaitingActivation:
			return apierr.New(apierr.Conflict, "There is no physical card waiting for activation.")
		}
		// One person's guesses are counted one at a time, whatever the card.
		failures, err := activationFailures(ctx, tx, a.UserID)
		if err != nil {
			return err
		}
		if len(failures) >= MaxActivationFailures {
			e := apierr.New(apierr.RateLimited, "Too many wrong activation codes: activation is paused. Please wait before trying again.")
			e.RetryAfterSeconds = ratelimit.RetryAfterSeconds(failures[len(failures)-MaxActivationFailures].Add(ActivationWindow).Sub(tx.Now()))
			return e
		}
		// A card ordered before activation codes existed has none: no code is right.
		if c.activationHash == nil || !keyring.Equal(*c.activationHash, s.activationHash(id, r.ActivationCode)) {
			if err := recordActivationFailure(ctx, tx, a.UserID); err != nil {
				return err
			}
			return kept{errWrongCode}
		}
		return update(ctx, tx, id, `physical_state = $2, activation_code_hash = NULL`, PhysicalActive)
	})
}

// PINRequest is the body of setting a PIN.
type PINRequest struct {
	PIN string `json:"pin"`
}

// Validate refuses what is not four digits and what is easy to guess.
func (r PINRequest) Validate() error {
	switch {
	case !fourDigits.MatchString(r.PIN):
		return apierr.InvalidField("pin", "must be exactly four digits.")
	case weakPIN(r.PIN):
		return apierr.InvalidField("pin", "is too easy to guess: not four equal digits nor a straight run like 1234 or 9876.")
	}
	return nil
}

const pinPurpose = "card-pin"

// PINSetting is a request to set a card's PIN that CheckSetPIN let
// through, for SetPIN.
type PINSetting struct {
	a   actor.Actor
	id  uuid.UUID
	pin string
}

// setPINCheck lets the cardholder set the PIN of the card's active physical card.
func setPINCheck(c stored, v viewer) error {
	switch {
	case !v.holder:
		return errHolderOnly
	case c.Physical.State != PhysicalActive:
		return apierr.New(apierr.Conflict, "The physical card must be activated before its PIN is set.")
	}
	return nil
}

// CheckSetPIN checks that a may set the PIN of card id: the cardholder, once
// the physical card is active. Setting a PIN also needs a step-up, which
// internal/flow/confirming asks for after this check and before SetPIN, so
// nobody confirms an action that cannot happen.
func (s *Service) CheckSetPIN(ctx context.Context, a actor.Actor, id uuid.UUID, r PINRequest) (PINSetting, error) {
	c, err := loadCard(ctx, s.DB.Reader(), id, "")
	if err != nil {
		return PINSetting{}, err
	}
	v, err := access(ctx, s.DB.Reader(), a, c, true)
	if err != nil {
		return PINSetting{}, err
	}
	if err := setPINCheck(c, v); err != nil {
		return PINSetting{}, err
	}
	return PINSetting{a: a, id: id, pin: r.PIN}, nil
}

// SetPIN sets the PIN that CheckSetPIN let through, checking again in its
// transaction. The PIN is kept only as a keyed hash, bound to the card.
func (s *Service) SetPIN(ctx context.Context, p PINSetting) error {
	_, err := s.change(ctx, p.a, p.id, true, audit.CardPINSet, func(tx *db.Tx, c stored, v viewer) error {
		if err := setPINCheck(c, v); err != nil {
			return err
		}
		return update(ctx, tx, p.id, `pin_hash = $2`, s.Keys.Hash(pinPurpose, p.id.String()+":"+p.pin))
	})
	return err
}

// validStatus reports whether s is a card status.
func validStatus(s string) bool { return slices.Contains(Statuses, s) }
