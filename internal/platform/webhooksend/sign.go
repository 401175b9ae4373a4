package webhooksend

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// The headers of a delivery (Standard Webhooks 1.0).
const (
	HeaderID        = standardwebhooks.HeaderWebhookID
	HeaderTimestamp = standardwebhooks.HeaderWebhookTimestamp
	HeaderSignature = standardwebhooks.HeaderWebhookSignature
)

// Sign returns the webhook-signature header of a message: "v1,<base64 of
// HMAC-SHA256 over id.timestamp.body>" for each secret, space-separated in
// the order given (after a rotation: the new secret, then the old one while
// it still signs). The timestamp is signed in Unix seconds.
func Sign(id string, timestamp time.Time, body []byte, secrets ...Secret) (string, error) {
	if id == "" {
		return "", errors.New("webhooksend: a message needs an id")
	}
	if len(secrets) == 0 {
		return "", errors.New("webhooksend: a message needs at least one secret")
	}
	sigs := make([]string, 0, len(secrets))
	for _, s := range secrets {
		if s.IsZero() {
			return "", errors.New("webhooksend: cannot sign with an empty secret")
		}
		wh, err := standardwebhooks.NewWebhookRaw(s.key)
		if err != nil {
			return "", err
		}
		sig, err := wh.Sign(id, timestamp, body)
		if err != nil {
			return "", err
		}
		sigs = append(sigs, sig)
	}
	return strings.Join(sigs, " "), nil
}

// SetHeaders signs a message and sets webhook-id, webhook-timestamp (Unix
// seconds) and webhook-signature on h.
func SetHeaders(h http.Header, id string, timestamp time.Time, body []byte, secrets ...Secret) error {
	sig, err := Sign(id, timestamp, body, secrets...)
	if err != nil {
		return err
	}
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(timestamp.Unix(), 10))
	h.Set(HeaderSignature, sig)
	return nil
}
