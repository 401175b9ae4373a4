package card

import (
	"context"

	"github.com/go-jose/go-jose/v4"
	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
)

// Issuer is the card-issuing network behind the cards. The sandbox's
// stand-in is internal/sandbox, Issuer; UnconfiguredIssuer below serves a
// live deployment with no network configured; a live one would reach the
// networks.
type Issuer interface {
	// NewCardNumber returns a fresh card number (PAN) for provider.
	NewCardNumber(ctx context.Context, provider string) (string, error)
	// TokenServiceKey returns the public encryption key of network's token
	// service provider, which wallet payloads are encrypted to.
	TokenServiceKey(ctx context.Context, network string) (jose.JSONWebKey, error)
	// SendActivationLetter has the letter printed that the physical card of
	// cardID ships with, carrying code, in tx (the order's transaction): the
	// code reaches the cardholder only that way.
	SendActivationLetter(ctx context.Context, tx *db.Tx, cardID uuid.UUID, code string) error
}

// LetterKeeper is an issuer that keeps the activation letters until the
// card ships instead of printing them (the sandbox's): only with one can
// the sandbox ship a card (Ship).
type LetterKeeper interface {
	// TakeActivationLetter removes the letter of cardID's physical card, in
	// tx, and returns its code, or "" when there is none.
	TakeActivationLetter(ctx context.Context, tx *db.Tx, cardID uuid.UUID) (string, error)
}

// Networks and their token service providers: VTS for Visa, MDES for
// Mastercard.
var (
	networkOf      = map[string]string{Visa: "visa", Mastercard: "mastercard"}
	tokenServiceOf = map[string]string{Visa: "VTS", Mastercard: "MDES"}
)

// UnconfiguredIssuer is the issuer of a live deployment that has no card
// network configured: wallet provisioning answers service_unavailable.
type UnconfiguredIssuer struct{}

var errNoNetwork = apierr.New(apierr.ServiceUnavailable, "Cards cannot reach their network: no card issuer is configured.")

// NewCardNumber implements Issuer.
func (UnconfiguredIssuer) NewCardNumber(context.Context, string) (string, error) {
	return "", errNoNetwork
}

// TokenServiceKey implements Issuer.
func (UnconfiguredIssuer) TokenServiceKey(context.Context, string) (jose.JSONWebKey, error) {
	return jose.JSONWebKey{}, errNoNetwork
}

// SendActivationLetter implements Issuer.
func (UnconfiguredIssuer) SendActivationLetter(context.Context, *db.Tx, uuid.UUID, string) error {
	return errNoNetwork
}
