package apitest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"

	"github.com/fxamacker/cbor/v2"
)

// SoftPasskey is a software WebAuthn authenticator: it answers registration
// ceremonies with a "none" attestation over a fresh P-256 key, as a platform
// authenticator would, so passkey registration runs for real in tests.
type SoftPasskey struct {
	key *ecdsa.PrivateKey
	ID  []byte
}

// NewSoftPasskey makes an authenticator holding one new credential.
func NewSoftPasskey() *SoftPasskey {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	id := make([]byte, 32)
	_, _ = rand.Read(id)
	return &SoftPasskey{key: key, ID: id}
}

// Register answers creation options (the `public_key` object the server sent)
// as navigator.credentials.create would on origin.
func (p *SoftPasskey) Register(origin string, publicKey map[string]any) map[string]any {
	rp, _ := publicKey["rp"].(map[string]any)
	rpID, _ := rp["id"].(string)
	challenge, _ := publicKey["challenge"].(string)
	clientData, _ := json.Marshal(map[string]any{"type": "webauthn.create", "challenge": challenge, "origin": origin, "crossOrigin": false})

	point, err := p.key.PublicKey.Bytes() // 0x04 || X || Y
	if err != nil {
		panic(err)
	}
	coseKey, err := cbor.Marshal(map[int]any{1: 2, 3: -7, -1: 1, -2: point[1:33], -3: point[33:65]})
	if err != nil {
		panic(err)
	}
	rpHash := sha256.Sum256([]byte(rpID))
	authData := append([]byte{}, rpHash[:]...)
	authData = append(authData, 0x45)                // user present, user verified, attested credential data
	authData = append(authData, 0, 0, 0, 0)          // signature counter
	authData = append(authData, make([]byte, 16)...) // AAGUID
	authData = binary.BigEndian.AppendUint16(authData, uint16(len(p.ID)))
	authData = append(authData, p.ID...)
	authData = append(authData, coseKey...)
	attestation, err := cbor.Marshal(map[string]any{"fmt": "none", "attStmt": map[string]any{}, "authData": authData})
	if err != nil {
		panic(err)
	}
	b64 := base64.RawURLEncoding.EncodeToString
	return map[string]any{
		"id": b64(p.ID), "rawId": b64(p.ID), "type": "public-key",
		"response": map[string]any{"clientDataJSON": b64(clientData), "attestationObject": b64(attestation), "transports": []string{"internal", "hybrid"}},
	}
}
