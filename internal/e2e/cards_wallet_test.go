package e2e_test

import (
	"context"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"

	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
	"github.com/strongroom/strongroom/internal/platform/db"
)

// Mobile wallet provisioning (docs/api.md, Cards): the cardholder, behind
// a step-up, gets an opaque payment card that only the token service
// provider's key opens; the full card number is never shown anywhere else.

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

var walletPayloadFields = []string{"pan", "expiry_month", "expiry_year", "cardholder_name", "nonce",
	"client_device_id", "client_wallet_account_id", "server_session_id"}

var walletAddressFields = []string{"address_line1", "address_line2", "city", "country_code", "name", "phone", "postal_code", "state"}

// providerKey is the sandbox token service provider's private key for network.
func providerKey(t *testing.T, s *apitest.Server, network string) (*rsa.PrivateKey, string) {
	t.Helper()
	r := s.Get(t, "/api/v1/sandbox/wallet-provider-key?network="+network, sbx).ExpectStatus(t, 200)
	var fields map[string]any
	r.Decode(t, &fields)
	for _, k := range []string{"kty", "n", "e", "d", "p", "q", "dp", "dq", "qi", "kid", "alg", "use"} {
		if _, ok := fields[k]; !ok {
			t.Fatalf("the %s key lacks %q", network, k)
		}
	}
	if fields["kty"] != "RSA" || fields["alg"] != "RSA-OAEP-256" || fields["use"] != "enc" {
		t.Fatalf("the %s key: kty %v alg %v use %v", network, fields["kty"], fields["alg"], fields["use"])
	}
	var jwk jose.JSONWebKey
	if err := jwk.UnmarshalJSON(r.Body); err != nil {
		t.Fatalf("the %s key is not a JWK: %v", network, err)
	}
	key, ok := jwk.Key.(*rsa.PrivateKey)
	if !ok {
		t.Fatalf("the %s key is a %T, want an RSA private key", network, jwk.Key)
	}
	return key, jwk.KeyID
}

// openPaymentCard checks the compact JWE's protected header and opens it with key.
func openPaymentCard(t *testing.T, token string, key *rsa.PrivateKey, kid string) (walletPayload, map[string]any) {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 5 {
		t.Fatalf("opaque_payment_card has %d parts, want a compact JWE of 5", len(parts))
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		t.Fatalf("protected header: %v", err)
	}
	var header map[string]any
	if err := json.Unmarshal(raw, &header); err != nil {
		t.Fatalf("protected header: %v", err)
	}
	if header["alg"] != "RSA-OAEP-256" || header["enc"] != "A256GCM" || header["kid"] != kid {
		t.Fatalf("JWE header %v, want alg RSA-OAEP-256, enc A256GCM, kid %s", header, kid)
	}
	jwe, err := jose.ParseEncryptedCompact(token, []jose.KeyAlgorithm{jose.RSA_OAEP_256}, []jose.ContentEncryption{jose.A256GCM})
	if err != nil {
		t.Fatalf("parse opaque_payment_card: %v", err)
	}
	plain, err := jwe.Decrypt(key)
	if err != nil {
		t.Fatalf("the provider's key does not open opaque_payment_card: %v", err)
	}
	var p walletPayload
	var fields map[string]any
	if err := json.Unmarshal(plain, &p); err != nil {
		t.Fatalf("plaintext: %v", err)
	}
	if err := json.Unmarshal(plain, &fields); err != nil {
		t.Fatalf("plaintext: %v", err)
	}
	for _, k := range walletPayloadFields {
		if _, ok := fields[k]; !ok {
			t.Fatalf("the plaintext lacks %q", k)
		}
	}
	return p, fields
}

// opens reports whether key decrypts the compact JWE token.
func opens(token string, key *rsa.PrivateKey) bool {
	jwe, err := jose.ParseEncryptedCompact(token, []jose.KeyAlgorithm{jose.RSA_OAEP_256}, []jose.ContentEncryption{jose.A256GCM})
	if err != nil {
		return false
	}
	_, err = jwe.Decrypt(key)
	return err == nil
}

func luhnValid(pan string) bool {
	sum := 0
	for i := range len(pan) {
		d := int(pan[len(pan)-1-i] - '0')
		if i%2 == 1 {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return sum%10 == 0
}

var panPattern = regexp.MustCompile(`^[0-9]{16}$`)

// checkPAN checks the card number a wallet receives against the card.
func checkPAN(t *testing.T, p walletPayload, prefix, lastFour string, year int) {
	t.Helper()
	if !panPattern.MatchString(p.PAN) || !luhnValid(p.PAN) || !strings.HasPrefix(p.PAN, prefix) || !strings.HasSuffix(p.PAN, lastFour) {
		t.Fatalf("pan of %d characters: want 16 digits, Luhn-valid, starting with %s and ending with %s", len(p.PAN), prefix, lastFour)
	}
	if p.ExpiryMonth < 1 || p.ExpiryMonth > 12 || p.ExpiryYear < year || p.ExpiryYear > 9999 {
		t.Fatalf("expiry %d/%d", p.ExpiryMonth, p.ExpiryYear)
	}
	if p.Nonce == "" {
		t.Fatal("no nonce")
	}
}

func TestCardMobileWalletProvisioning(t *testing.T) {
	dsn := apitest.NewDatabase(t)
	s := apitest.Start(t, "STRONGROOM_DATABASE="+dsn)
	o := newCardOrg(t, s, "acme.test")
	year := now(t, s).UTC().Year()
	visa := cardFor(t, s, o.id, o.alice.id, 1000)
	visaCode := orderAndShip(t, s, o.alice.token, visa.Id.String())
	mc := issueCard(t, s, o.id, map[string]any{"user_id": o.alice.id, "monthly_limit": 100, "card_provider": "mastercard_issuer"})
	frozen := cardFor(t, s, o.id, o.alice.id, 100)
	cardAction(t, s, o.alice.token, frozen.Id.String(), "freeze")
	inactive := cardFor(t, s, o.id, o.alice.id, 100)
	setCardStatus(t, s, inactive.Id.String(), "inactive")
	visaKey, visaKid := providerKey(t, s, "visa")
	mcKey, mcKid := providerKey(t, s, "mastercard")
	if visaKid == mcKid || visaKey.N.Cmp(mcKey.N) == 0 {
		t.Fatal("visa and mastercard share a key")
	}
	for _, bad := range []string{"?network=amex", ""} {
		s.Get(t, "/api/v1/sandbox/wallet-provider-key"+bad, sbx).ExpectError(t, 400, "invalid_request")
	}

	var bodies []string // every card response, to look for the card number afterwards
	provision := func(token, cardID string, body any) *apitest.Response {
		t.Helper()
		r := s.Post(t, cardPath(cardID, "mobile-wallet-provision"), token, body)
		bodies = append(bodies, string(r.Body))
		return r
	}
	ids := map[string]any{"client_device_id": "device-7f3a", "client_wallet_account_id": "wallet-acct-19", "server_session_id": "push-session-1"}

	// Only the cardholder, only an active card that is not frozen; both before any step-up.
	provision(o.owner.token, visa.Id.String(), ids).ExpectError(t, 403, "forbidden")
	provision(o.admin.token, visa.Id.String(), ids).ExpectError(t, 403, "forbidden")
	provision(o.bob.token, visa.Id.String(), ids).ExpectError(t, 404, "not_found")
	provision(o.alice.token, frozen.Id.String(), ids).ExpectError(t, 409, "conflict")
	provision(o.alice.token, inactive.Id.String(), ids).ExpectError(t, 409, "conflict")
	expectInvalidField(t, provision(o.alice.token, visa.Id.String(), map[string]any{"client_device_id": strings.Repeat("d", 256)}), "client_device_id")
	expectInvalidField(t, provision(o.alice.token, visa.Id.String(), map[string]any{"server_session_id": 42}), "server_session_id")

	// Then a step-up with the authenticator.
	up := expectStepUp(t, provision(o.alice.token, visa.Id.String(), ids))
	completeStepUp(t, s, o.alice.token, up.Id.String(), "totp", code(t, s, o.alice.secret)).ExpectStatus(t, 200)
	var w api.WalletProvision
	r := provision(o.alice.token, visa.Id.String(), ids).ExpectStatus(t, 200)
	r.Decode(t, &w)
	address := r.JSON(t)["address"].(map[string]any)
	if w.Network != "visa" || w.TokenServiceProvider != "VTS" || deref(w.LastFour) != visa.LastFour || deref(w.DisplayName) != "Alice Liddell" {
		t.Fatalf("visa provisioning: network %q, provider %q, last four %v, display name %v", w.Network, w.TokenServiceProvider, deref(w.LastFour), deref(w.DisplayName))
	}
	wantAddress := map[string]any{"address_line1": "Friedrichstraße 68", "address_line2": "3. OG", "city": "Berlin", "country_code": "DE",
		"name": "Alice Liddell", "phone": nil, "postal_code": "10117", "state": "Berlin"}
	for _, k := range walletAddressFields {
		if v, ok := address[k]; !ok || v != wantAddress[k] {
			t.Fatalf("address %v, want the shipping address %v", address, wantAddress)
		}
	}
	p1, _ := openPaymentCard(t, w.OpaquePaymentCard, visaKey, visaKid)
	checkPAN(t, p1, "4", visa.LastFour, year)
	if deref(p1.CardholderName) != "Alice Liddell" || deref(p1.ClientDeviceID) != "device-7f3a" ||
		deref(p1.ClientWalletAccountID) != "wallet-acct-19" || deref(p1.ServerSessionID) != "push-session-1" {
		t.Fatalf("plaintext cardholder %q, identifiers %q %q %q: not the request's", deref(p1.CardholderName),
			deref(p1.ClientDeviceID), deref(p1.ClientWalletAccountID), deref(p1.ServerSessionID))
	}
	if opens(w.OpaquePaymentCard, mcKey) {
		t.Fatal("the mastercard key opens a visa payment card")
	}

	// Within the window, a second call: a fresh nonce, the same card; absent and null identifiers are null.
	var w2 api.WalletProvision
	provision(o.alice.token, visa.Id.String(), map[string]any{"server_session_id": "push-session-2", "client_device_id": nil}).ExpectStatus(t, 200).Decode(t, &w2)
	p2, fields2 := openPaymentCard(t, w2.OpaquePaymentCard, visaKey, visaKid)
	if p2.Nonce == p1.Nonce || p2.PAN != p1.PAN || w2.OpaquePaymentCard == w.OpaquePaymentCard {
		t.Fatal("a second provisioning reused the nonce or changed the card")
	}
	if fields2["client_device_id"] != nil || fields2["client_wallet_account_id"] != nil || deref(p2.ServerSessionID) != "push-session-2" {
		t.Fatalf("second plaintext identifiers: %v %v %v", fields2["client_device_id"], fields2["client_wallet_account_id"], fields2["server_session_id"])
	}
	// Still not for a frozen card, even within the window.
	provision(o.alice.token, frozen.Id.String(), ids).ExpectError(t, 409, "conflict")

	// A mastercard goes to MDES; with no physical card every address field is null.
	var w3 api.WalletProvision
	r = provision(o.alice.token, mc.Id.String(), map[string]any{}).ExpectStatus(t, 200)
	r.Decode(t, &w3)
	address = r.JSON(t)["address"].(map[string]any)
	if w3.Network != "mastercard" || w3.TokenServiceProvider != "MDES" || deref(w3.LastFour) != mc.LastFour || deref(w3.DisplayName) != "Alice Liddell" {
		t.Fatalf("mastercard provisioning: network %q, provider %q", w3.Network, w3.TokenServiceProvider)
	}
	for _, k := range walletAddressFields {
		if v, ok := address[k]; !ok || v != nil {
			t.Fatalf("address %v, want every field present and null", address)
		}
	}
	p3, _ := openPaymentCard(t, w3.OpaquePaymentCard, mcKey, mcKid)
	checkPAN(t, p3, "5", mc.LastFour, year)
	if opens(w3.OpaquePaymentCard, visaKey) {
		t.Fatal("the visa key opens a mastercard payment card")
	}
	if p3.PAN == p1.PAN {
		t.Fatal("two cards share a number")
	}

	// The full numbers appear in no card response and no log line.
	record := func(r *apitest.Response) *apitest.Response { bodies = append(bodies, string(r.Body)); return r }
	tok := o.owner.token
	record(s.Get(t, "/api/v1/organizations/"+o.id+"/cards", tok))
	record(s.Get(t, "/api/v1/organizations/"+o.id+"/cards", o.alice.token))
	for _, c := range []api.Card{visa, mc, frozen, inactive} {
		record(s.Get(t, cardPath(c.Id.String(), ""), tok))
		record(s.Get(t, cardPath(c.Id.String(), ""), o.alice.token))
	}
	record(patchCard(t, s, tok, visa.Id.String(), map[string]any{"monthly_limit": 900}))
	record(s.Post(t, cardPath(mc.Id.String(), "freeze"), tok, nil))
	record(s.Post(t, cardPath(mc.Id.String(), "unfreeze"), tok, nil))
	record(orderPhysical(t, s, o.alice.token, mc.Id.String()))
	var mcShipped api.SandboxShippedCard
	record(s.Post(t, "/api/v1/sandbox/cards/"+mc.Id.String()+"/ship", sbx, nil)).Decode(t, &mcShipped)
	record(activate(t, s, o.alice.token, mc.Id.String(), mcShipped.ActivationCode)).ExpectStatus(t, 200)
	record(activate(t, s, o.alice.token, visa.Id.String(), visaCode)).ExpectStatus(t, 200)
	record(s.Post(t, "/api/v1/sandbox/cards/"+inactive.Id.String()+"/status", sbx, map[string]any{"status": "active"}))
	deposit(t, s, o.id, "USD", "10.00")
	record(s.Post(t, authorizationsPath(visa.Id.String()), sbx, map[string]any{"amount": "1.00", "currency": "USD", "merchant": merchant, "channel": "online"}))
	record(s.Get(t, "/api/v1/organizations/"+o.id+"/transactions", tok))
	record(issueCardResponse(t, s, o.id, map[string]any{"user_id": o.alice.id, "monthly_limit": 5}))
	logs := s.Logs.String()
	for _, pan := range []string{p1.PAN, p3.PAN} {
		for i, b := range bodies {
			if strings.Contains(b, pan) {
				t.Fatalf("response %d shows a full card number: %s", i, strings.ReplaceAll(b, pan, "<full card number>"))
			}
		}
		if strings.Contains(logs, pan) {
			t.Fatal("the logs contain a full card number")
		}
	}
	assertNotStoredAnywhere(t, dsn, p1.PAN, p3.PAN)
}

// assertNotStoredAnywhere fails t when any column of any table of the
// database at dsn holds one of secrets in plain text.
func assertNotStoredAnywhere(t *testing.T, dsn string, secrets ...string) {
	t.Helper()
	d := apitest.OpenDatabase(t, dsn)
	query := "SELECT name FROM sqlite_master WHERE type = 'table'"
	if d.Dialect() == db.Postgres {
		query = "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
	}
	rows, err := d.Reader().QueryContext(context.Background(), query)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	rows.Close()
	if len(tables) == 0 {
		t.Fatal("no tables found")
	}
	for _, table := range tables {
		for _, row := range storedRows(t, d, table, "") {
			for col, v := range row {
				for _, secret := range secrets {
					if v != nil && strings.Contains(*v, secret) {
						t.Errorf("%s.%s holds a full card number in plain text", table, col)
					}
				}
			}
		}
	}
}

func issueCardResponse(t *testing.T, s *apitest.Server, org string, body map[string]any) *apitest.Response {
	t.Helper()
	return s.Post(t, "/api/v1/sandbox/organizations/"+org+"/cards", sbx, body).ExpectStatus(t, 201)
}
