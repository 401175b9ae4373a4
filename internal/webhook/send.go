package webhook

import (
	"context"
	"errors"
	"fmt"

	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/webhooksend"
)

// Sending is the Outbound of the service: the URL checks and the signed,
// bounded client of webhooksend (in live it connects only to public
// addresses, checked as each connection is made).
type Sending struct {
	Sender *webhooksend.Sender
}

// CheckURL refuses a URL this environment does not deliver to, as an
// invalid url field.
func (s Sending) CheckURL(ctx context.Context, raw string) error {
	err := s.Sender.CheckURL(ctx, raw)
	var u *webhooksend.URLError
	if errors.As(err, &u) {
		return apierr.InvalidField("url", u.Reason)
	}
	return err
}

// Send makes one attempt; an error says why no answer came, in a sentence
// fit for the deliveries log.
func (s Sending) Send(ctx context.Context, m Message) (Response, error) {
	secrets := make([]webhooksend.Secret, 0, len(m.Secrets))
	for _, text := range m.Secrets {
		secret, err := webhooksend.ParseSecret(text)
		if err != nil {
			return Response{}, fmt.Errorf("webhook: stored secret: %w", err)
		}
		secrets = append(secrets, secret)
	}
	r := s.Sender.Send(ctx, m.URL, webhooksend.Message{ID: m.ID, Timestamp: m.Timestamp, Body: m.Body, Secrets: secrets})
	if r.Err != nil {
		return Response{}, errors.New(r.ErrorText())
	}
	return Response{Status: r.Status, Body: r.Body}, nil
}
