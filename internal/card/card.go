// Package card holds payment cards (docs/api.md, Cards): the
// monthly spending limit and what was spent against it, freezing, physical
// cards with their activation and PIN, wallet provisioning, and the
// authorizations an issuing network asks of a card, which debit the
// organization's US-dollar balance through the ledger.
package card

import (
	"time"

	"github.com/google/uuid"
)

// Statuses of a card.
const (
	Active   = "active"
	Inactive = "inactive"
	Expired  = "expired"
	Revoked  = "revoked"
)

// Statuses lists every status, for validating filters and sandbox input.
var Statuses = []string{Active, Inactive, Expired, Revoked}

// Card providers, the card_provider of a card.
const (
	Visa       = "visa_issuer"
	Mastercard = "mastercard_issuer"
)

// States of a card's physical counterpart.
const (
	PhysicalNone               = "none"
	PhysicalAwaitingActivation = "awaiting_activation"
	PhysicalActive             = "active"
)

// Actions a viewer may take on a card, in the order available_actions lists them.
const (
	ActionOrderPhysical = "order_physical"
	ActionActivate      = "activate"
	ActionSetPIN        = "set_pin"
	ActionFreeze        = "freeze"
	ActionUnfreeze      = "unfreeze"
)

// LimitCurrency is the currency of every card's limit and spending.
const LimitCurrency = "USD"

// MaxMonthlyLimit is the highest monthly limit, in whole US dollars.
const MaxMonthlyLimit = 1_000_000

// Card is a card as its viewer sees it.
type Card struct {
	ID             uuid.UUID
	OrganizationID uuid.UUID
	UserID         *uuid.UUID
	// Holder is the cardholder's profile, nil for an organization card.
	Holder         *Holder
	CardHolderName *string
	Provider       string
	Status         string
	Frozen         bool
	AllowPhysical  bool
	Physical       Physical
	LastFour       string
	// MonthlyLimit is in whole US dollars.
	MonthlyLimit int64
	// SpentThisMonth is in US cents: purchases minus refunds in the current
	// UTC calendar month of the service clock. Refunds never exceed the
	// month's purchases, so it is never below zero.
	SpentThisMonth int64
	// AvailableActions are what the viewer may do now, in this order:
	// order_physical, activate, set_pin, freeze, unfreeze.
	AvailableActions []string
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

// Holder is the cardholder as the card shows them.
type Holder struct {
	ID        uuid.UUID
	Email     string
	FirstName *string
	LastName  *string
}

// Physical is the card's physical counterpart.
type Physical struct {
	State       string
	Replacement bool
	// Shipping is where it was sent, once ordered.
	Shipping *Address
	Shipped  bool
}

// Address is a postal address.
type Address struct {
	Line1       string  `json:"address_line1"`
	Line2       *string `json:"address_line2"`
	City        string  `json:"city"`
	PostalCode  string  `json:"postal_code"`
	State       *string `json:"state"`
	CountryCode string  `json:"country_code"`
}

// Utilization is the percent of the monthly limit spent, rounded half up
// to a whole number; 0 when the limit is 0.
func (c Card) Utilization() int64 {
	limit := c.MonthlyLimit * 100
	if limit == 0 {
		return 0
	}
	return (200*c.SpentThisMonth + limit) / (2 * limit)
}

// actions computes available_actions for a viewer: holder is whether the
// viewer is the cardholder, manager whether they are an owner or admin of
// the card's organization.
func (c Card) actions(holder, manager bool) []string {
	out := []string{}
	if c.AllowPhysical && c.Physical.State == PhysicalNone && c.Status == Active && (holder || manager) {
		out = append(out, ActionOrderPhysical)
	}
	if holder && c.Physical.State == PhysicalAwaitingActivation {
		out = append(out, ActionActivate)
	}
	if holder && c.Physical.State == PhysicalActive {
		out = append(out, ActionSetPIN)
	}
	if c.Status == Active && !c.Frozen {
		out = append(out, ActionFreeze)
	}
	if c.Frozen {
		out = append(out, ActionUnfreeze)
	}
	return out
}

// month is the key of the UTC calendar month of t in card_spend.
func month(t time.Time) string { return t.UTC().Format("2006-01") }

// weakPIN reports whether pin, four digits, is too easy to guess: all
// digits equal, or a run up or down, also one that wraps around from 9 to 0
// or back (1234, 9876, 7890, 0987): on a keypad those are as easy to
// guess as the straight ones.
func weakPIN(pin string) bool {
	same, up, down := true, true, true
	for i := 1; i < len(pin); i++ {
		d := (int(pin[i]) - int(pin[i-1]) + 10) % 10
		same = same && d == 0
		up = up && d == 1
		down = down && d == 9
	}
	return same || up || down
}

// luhnValid reports whether digits pass the Luhn check of card numbers.
func luhnValid(digits string) bool {
	sum := 0
	double := false
	for i := len(digits) - 1; i >= 0; i-- {
		d := int(digits[i] - '0')
		if d < 0 || d > 9 {
			return false
		}
		if double {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return len(digits) > 0 && sum%10 == 0
}

// LuhnDigit is the check digit that makes body + digit Luhn-valid.
// Exported for the sandbox issuer (internal/sandbox), which numbers its test
// cards so that they pass the same check real card numbers do.
func LuhnDigit(body string) byte {
	for d := byte('0'); d <= '9'; d++ {
		if luhnValid(body + string(d)) {
			return d
		}
	}
	panic("unreachable: one check digit always fits")
}
