package webhooksend

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

func TestNewSecretIsTheStandardForm(t *testing.T) {
	s, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	text := s.Reveal()
	rest, ok := strings.CutPrefix(text, "whsec_")
	if !ok {
		t.Fatalf("secret %q does not start with whsec_", text)
	}
	key, err := base64.StdEncoding.DecodeString(rest)
	if err != nil || len(key) != 32 {
		t.Fatalf("secret body decodes to %d bytes (%v), want 32", len(key), err)
	}
	back, err := ParseSecret(text)
	if err != nil || !back.Equal(s) {
		t.Fatalf("ParseSecret(Reveal()) = %v, %v; want the same secret", back, err)
	}
	other, _ := NewSecret()
	if other.Equal(s) {
		t.Fatal("two new secrets are equal")
	}
}

func TestParseSecretRefuses(t *testing.T) {
	key := func(n int) string { return base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, n)) }
	for _, tc := range []struct{ name, in string }{
		{"empty", ""},
		{"no prefix", key(32)},
		{"other prefix", "whsk_" + key(32)},
		{"prefix only", "whsec_"},
		{"not base64", "whsec_!!!!" + key(32)},
		{"url-safe alphabet", "whsec_" + strings.NewReplacer("+", "-", "/", "_").Replace(base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xfb}, 32)))},
		{"unpadded", "whsec_" + strings.TrimRight(key(32), "=")},
		{"too short", "whsec_" + key(23)},
		{"too long", "whsec_" + key(65)},
		{"far too long", "whsec_" + strings.Repeat("A", 10000)},
		{"space", "whsec_ " + key(32)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseSecret(tc.in)
			if err == nil {
				t.Fatalf("ParseSecret(%q) accepted", tc.in)
			}
			if !s.IsZero() {
				t.Error("a refused secret is not zero")
			}
			if len(tc.in) > 8 && strings.Contains(err.Error(), tc.in[6:]) {
				t.Errorf("the error %q repeats the secret", err)
			}
		})
	}
	for _, n := range []int{24, 32, 64} {
		if _, err := ParseSecret("whsec_" + key(n)); err != nil {
			t.Errorf("a key of %d bytes: %v", n, err)
		}
	}
}

func TestSecretDoesNotPrintItsKey(t *testing.T) {
	s, _ := NewSecret()
	key := strings.TrimPrefix(s.Reveal(), "whsec_")
	var logged bytes.Buffer
	slog.New(slog.NewTextHandler(&logged, nil)).Info("x", "secret", s)
	for _, out := range []string{fmt.Sprint(s), fmt.Sprintf("%v %s %+v", s, s, s), logged.String()} {
		if strings.Contains(out, key) {
			t.Errorf("%q shows the key", out)
		}
	}
}

// The example of the Standard Webhooks specification.
func TestSignKnownVector(t *testing.T) {
	s, err := ParseSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if err != nil {
		t.Fatal(err)
	}
	got, err := Sign("msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`), s)
	if err != nil {
		t.Fatal(err)
	}
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Fatalf("Sign = %q, want %q", got, want)
	}
}

func verify(t *testing.T, s Secret, body []byte, h http.Header) error {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(s.Reveal())
	if err != nil {
		t.Fatal(err)
	}
	return wh.Verify(body, h)
}

func TestSignatureVerifiesWithTheLibrary(t *testing.T) {
	s, _ := NewSecret()
	body := []byte(`{"id":"evt_1","type":"payment.updated","data":{"amount":"12.50"}}`)
	h := http.Header{}
	if err := SetHeaders(h, "evt_1", time.Now(), body, s); err != nil {
		t.Fatal(err)
	}
	if err := verify(t, s, body, h); err != nil {
		t.Fatalf("the library refuses our signature: %v", err)
	}
	if got := h.Get("webhook-signature"); !strings.HasPrefix(got, "v1,") || strings.Contains(got, " ") {
		t.Errorf("webhook-signature = %q, want one v1 signature", got)
	}
	if got, want := h.Get("webhook-timestamp"), fmt.Sprint(time.Now().Unix()); len(got) != len(want) {
		t.Errorf("webhook-timestamp = %q, want Unix seconds like %s", got, want)
	}

	tampered := bytes.Replace(body, []byte("12.50"), []byte("99.50"), 1)
	if err := verify(t, s, tampered, h); !errors.Is(err, standardwebhooks.ErrNoMatchingSignature) {
		t.Errorf("a changed body verifies: %v", err)
	}
	other, _ := NewSecret()
	if err := verify(t, other, body, h); !errors.Is(err, standardwebhooks.ErrNoMatchingSignature) {
		t.Errorf("another secret verifies: %v", err)
	}
	h2 := h.Clone()
	h2.Set("webhook-id", "evt_2")
	if err := verify(t, s, body, h2); err == nil {
		t.Error("another webhook-id verifies")
	}
	h3 := h.Clone()
	h3.Set("webhook-timestamp", fmt.Sprint(time.Now().Unix()+1))
	if err := verify(t, s, body, h3); err == nil {
		t.Error("another timestamp verifies")
	}
}

// After a rotation both secrets sign: a receiver that still has the old
// secret and one that has the new one both verify.
func TestSignatureAfterRotationVerifiesWithBothSecrets(t *testing.T) {
	oldS, _ := NewSecret()
	newS, _ := NewSecret()
	body := []byte(`{"id":"evt_9"}`)
	h := http.Header{}
	if err := SetHeaders(h, "evt_9", time.Now(), body, newS, oldS); err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(h.Get("webhook-signature"), " ")
	if len(parts) != 2 || !strings.HasPrefix(parts[0], "v1,") || !strings.HasPrefix(parts[1], "v1,") || parts[0] == parts[1] {
		t.Fatalf("webhook-signature = %q, want two space-separated v1 signatures", h.Get("webhook-signature"))
	}
	for name, s := range map[string]Secret{"old": oldS, "new": newS} {
		if err := verify(t, s, body, h); err != nil {
			t.Errorf("the %s secret does not verify: %v", name, err)
		}
	}
	stranger, _ := NewSecret()
	if err := verify(t, stranger, body, h); err == nil {
		t.Error("a third secret verifies")
	}
}

func TestSignRefusesWhatCannotBeSigned(t *testing.T) {
	s, _ := NewSecret()
	if _, err := Sign("", time.Now(), nil, s); err == nil {
		t.Error("no id accepted")
	}
	if _, err := Sign("evt_1", time.Now(), nil); err == nil {
		t.Error("no secret accepted")
	}
	if _, err := Sign("evt_1", time.Now(), nil, Secret{}); err == nil {
		t.Error("the zero secret accepted")
	}
}
