package sandbox

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	_ "crypto/sha256" // the key id is a SHA-256 thumbprint
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/go-jose/go-jose/v4"
	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/card"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/keyring"
)

// Networks lists the card networks whose token service the sandbox issuer
// plays, for validating sandbox input.
var Networks = []string{"visa", "mastercard"}

// binOf are the sandbox issuer's bank identification numbers.
var binOf = map[string]string{card.Visa: "400000", card.Mastercard: "510000"}

// Issuer stands in for the card-issuing network (the port card.Issuer): it
// issues test card numbers and keeps a token service provider key per
// network, made on first use and stored sealed, so every instance on the
// database encrypts to the same key and the sandbox can hand its private
// half to a test (GET /api/v1/sandbox/wallet-provider-key). It prints no
// letters: it keeps a physical card's activation code sealed until the
// sandbox ships the card (card.Service.Ship, through TakeActivationLetter).
type Issuer struct {
	DB   *db.DB
	Keys *keyring.Keyring
}

const (
	providerKeyPurpose = "wallet-provider-key"
	letterPurpose      = "card-activation-letter"
)

// SendActivationLetter implements card.Issuer: the code waits, sealed,
// until the card ships.
func (s Issuer) SendActivationLetter(ctx context.Context, tx *db.Tx, cardID uuid.UUID, code string) error {
	sealed, err := s.Keys.Seal(letterPurpose, []byte(cardID.String()+":"+code))
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO sandbox_card_letters (card_id, code_sealed, created_at) VALUES ($1, $2, $3)
		ON CONFLICT (card_id) DO UPDATE SET code_sealed = excluded.code_sealed, created_at = excluded.created_at`, cardID, sealed, tx.Now())
	return err
}

// TakeActivationLetter implements card.LetterKeeper: it removes the letter
// of cardID's physical card and returns its code, or "" when there is none
// (a card ordered before activation codes existed).
func (s Issuer) TakeActivationLetter(ctx context.Context, tx *db.Tx, cardID uuid.UUID) (string, error) {
	var sealed string
	err := tx.QueryRowContext(ctx, `SELECT code_sealed FROM sandbox_card_letters WHERE card_id = $1`, cardID).Scan(&sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM sandbox_card_letters WHERE card_id = $1`, cardID); err != nil {
		return "", err
	}
	raw, err := s.Keys.Open(letterPurpose, sealed)
	if err != nil {
		return "", err
	}
	// Sealed with its card's id, so a letter moved to another card opens to nothing.
	code, ok := strings.CutPrefix(string(raw), cardID.String()+":")
	if !ok {
		return "", fmt.Errorf("card: the activation letter of card %s belongs to another card", cardID)
	}
	return code, nil
}

// NewCardNumber implements card.Issuer: 16 Luhn-valid digits under the
// provider's sandbox BIN.
func (Issuer) NewCardNumber(_ context.Context, provider string) (string, error) {
	bin, ok := binOf[provider]
	if !ok {
		return "", fmt.Errorf("card: unknown provider %q", provider)
	}
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000_000))
	if err != nil {
		return "", err
	}
	body := fmt.Sprintf("%s%09d", bin, n.Int64())
	return body + string(card.LuhnDigit(body)), nil
}

// TokenServiceKey implements card.Issuer.
func (s Issuer) TokenServiceKey(ctx context.Context, network string) (jose.JSONWebKey, error) {
	k, err := s.ProviderPrivateKey(ctx, network)
	if err != nil {
		return jose.JSONWebKey{}, err
	}
	return k.Public(), nil
}

// ProviderPrivateKey returns the private key of network's sandbox token
// service provider, creating it on first use.
func (s Issuer) ProviderPrivateKey(ctx context.Context, network string) (jose.JSONWebKey, error) {
	k, err := s.loadProviderKey(ctx, network)
	if !errors.Is(err, sql.ErrNoRows) {
		return k, err
	}
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return jose.JSONWebKey{}, err
	}
	jwk := jose.JSONWebKey{Key: priv, Algorithm: string(jose.RSA_OAEP_256), Use: "enc"}
	thumb, err := jwk.Thumbprint(crypto.SHA256)
	if err != nil {
		return jose.JSONWebKey{}, err
	}
	jwk.KeyID = network + "-" + fmt.Sprintf("%x", thumb[:8])
	raw, err := json.Marshal(jwk)
	if err != nil {
		return jose.JSONWebKey{}, err
	}
	sealed, err := s.Keys.Seal(providerKeyPurpose, raw)
	if err != nil {
		return jose.JSONWebKey{}, err
	}
	// Two instances may race to create it: the first insert wins and both
	// read that one.
	err = s.DB.Tx(ctx, func(tx *db.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO wallet_provider_keys (network, jwk_sealed, created_at) VALUES ($1, $2, $3)
			ON CONFLICT (network) DO NOTHING`, network, sealed, tx.Now())
		return err
	})
	if err != nil {
		return jose.JSONWebKey{}, err
	}
	return s.loadProviderKey(ctx, network)
}

func (s Issuer) loadProviderKey(ctx context.Context, network string) (jose.JSONWebKey, error) {
	var sealed string
	if err := s.DB.Reader().QueryRowContext(ctx, `SELECT jwk_sealed FROM wallet_provider_keys WHERE network = $1`, network).Scan(&sealed); err != nil {
		return jose.JSONWebKey{}, err
	}
	raw, err := s.Keys.Open(providerKeyPurpose, sealed)
	if err != nil {
		return jose.JSONWebKey{}, err
	}
	var k jose.JSONWebKey
	err = k.UnmarshalJSON(raw)
	return k, err
}
