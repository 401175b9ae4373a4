package card

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"unicode/utf8"

	"github.com/go-jose/go-jose/v4"
	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/platform/apierr"
)

// WalletRequest is the body of mobile-wallet provisioning.
type WalletRequest struct {
	ClientDeviceID        *string `json:"client_device_id"`
	ClientWalletAccountID *string `json:"client_wallet_account_id"`
	ServerSessionID       *string `json:"server_session_id"`
}

// MaxWalletIdentifier is the longest wallet identifier, in characters.
const MaxWalletIdentifier = 255

// Validate checks the identifiers' lengths.
func (r WalletRequest) Validate() error {
	var f apierr.Fields
	// In body order, so details list the fields as the client sent them.
	for _, id := range []struct {
		field string
		v     *string
	}{{"client_device_id", r.ClientDeviceID}, {"client_wallet_account_id", r.ClientWalletAccountID}, {"server_session_id", r.ServerSessionID}} {
		if id.v != nil {
			f.Check(utf8.RuneCountInString(*id.v) <= MaxWalletIdentifier, id.field, "must be at most 255 characters.")
		}
	}
	return f.Err()
}

// WalletProvision is what a wallet needs to add the card.
type WalletProvision struct {
	Address              WalletAddress
	DisplayName          *string
	LastFour             *string
	Network              string
	OpaquePaymentCard    string
	TokenServiceProvider string
}

// WalletAddress is the billing address the wallet pre-fills; every field
// is nil when the issuer has none.
type WalletAddress struct {
	Line1, Line2, City, CountryCode, Name, Phone, PostalCode, State *string
}

// walletPayload is the plaintext of opaque_payment_card, the JSON the
// token service provider decrypts.
type walletPayload struct {
	PAN                   string  `json:"pan"`
	ExpiryMonth           int     `json:"expiry_month"`
	ExpiryYear            int     `json:"expiry_year"`
	CardholderName        *string `json:"cardholder_name"`
	Nonce                 string  `json:"nonce"`
	ClientDeviceID        *string `json:"client_device_id"`
	ClientWalletAccountID *string `json:"client_wallet_account_id"`
	ServerSessionID       *string `json:"server_session_id"`
}

const panPurpose = "card-pan"

// WalletProvisioning is a request to add a card to its cardholder's
// wallet that CheckProvisionWallet let through, for ProvisionWallet.
type WalletProvisioning struct {
	c stored
	r WalletRequest
}

// CheckProvisionWallet checks that a may add card id to a wallet: the
// cardholder only, an active card that is not frozen. Provisioning also
// needs a step-up, which internal/flow/confirming asks for after this
// check and before ProvisionWallet.
func (s *Service) CheckProvisionWallet(ctx context.Context, a actor.Actor, id uuid.UUID, r WalletRequest) (WalletProvisioning, error) {
	q := s.DB.Reader()
	c, err := loadCard(ctx, q, id, "")
	if err != nil {
		return WalletProvisioning{}, err
	}
	v, err := access(ctx, q, a, c, true)
	if err != nil {
		return WalletProvisioning{}, err
	}
	switch {
	case !v.holder:
		return WalletProvisioning{}, errHolderOnly
	case c.Status != Active:
		return WalletProvisioning{}, errNotActive
	case c.Frozen:
		return WalletProvisioning{}, apierr.New(apierr.Conflict, "This card is frozen; unfreeze it before adding it to a wallet.")
	}
	return WalletProvisioning{c: c, r: r}, nil
}

// ProvisionWallet hands the cardholder's wallet the card that
// CheckProvisionWallet let through, encrypted to the network's token
// service provider. The card number is opened from its sealed form only to
// be encrypted again into the payload.
func (s *Service) ProvisionWallet(ctx context.Context, w WalletProvisioning) (WalletProvision, error) {
	c, r := w.c, w.r
	pan, err := s.Keys.Open(panPurpose, c.panSealed)
	if err != nil {
		return WalletProvision{}, err
	}
	nonce := make([]byte, 16)
	if _, err := rand.Read(nonce); err != nil {
		return WalletProvision{}, err
	}
	payload, err := json.Marshal(walletPayload{PAN: string(pan), ExpiryMonth: c.expiryMonth, ExpiryYear: c.expiryYear,
		CardholderName: c.CardHolderName, Nonce: hex.EncodeToString(nonce),
		ClientDeviceID: r.ClientDeviceID, ClientWalletAccountID: r.ClientWalletAccountID, ServerSessionID: r.ServerSessionID})
	if err != nil {
		return WalletProvision{}, err
	}
	network := networkOf[c.Provider]
	key, err := s.Issuer.TokenServiceKey(ctx, network)
	if err != nil {
		return WalletProvision{}, err
	}
	enc, err := jose.NewEncrypter(jose.A256GCM, jose.Recipient{Algorithm: jose.RSA_OAEP_256, Key: key.Key, KeyID: key.KeyID},
		(&jose.EncrypterOptions{}).WithContentType("application/json"))
	if err != nil {
		return WalletProvision{}, err
	}
	obj, err := enc.Encrypt(payload)
	if err != nil {
		return WalletProvision{}, err
	}
	token, err := obj.CompactSerialize()
	if err != nil {
		return WalletProvision{}, err
	}
	lastFour := c.LastFour
	return WalletProvision{Address: walletAddress(c), DisplayName: c.CardHolderName, LastFour: &lastFour,
		Network: network, OpaquePaymentCard: token, TokenServiceProvider: tokenServiceOf[c.Provider]}, nil
}

// walletAddress is the physical card's shipping address, which the sandbox
// issuer returns as the billing address, or none.
func walletAddress(c stored) WalletAddress {
	a := c.Physical.Shipping
	if a == nil {
		return WalletAddress{}
	}
	return WalletAddress{Line1: &a.Line1, Line2: a.Line2, City: &a.City, CountryCode: &a.CountryCode,
		Name: c.CardHolderName, PostalCode: &a.PostalCode, State: a.State}
}
