package app

import (
	"context"
	"log/slog"

	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/event"
	"github.com/strongroom/strongroom/internal/platform/webhooksend"
	"github.com/strongroom/strongroom/internal/webhook"
)

type resolverKey struct{}

// WithWebhookResolver makes a server run with ctx look webhook hosts up
// with r instead of the system's resolver: for tests in the same process,
// which map names to the addresses they need (a name that turns private
// after its endpoint was created). Nothing outside the process can set it.
func WithWebhookResolver(ctx context.Context, r webhooksend.Resolver) context.Context {
	return context.WithValue(ctx, resolverKey{}, r)
}

// newWebhookSender is the outbound client of webhook deliveries: in live it
// connects only to public addresses.
func newWebhookSender(ctx context.Context, cfg Config) *webhooksend.Sender {
	r, _ := ctx.Value(resolverKey{}).(webhooksend.Resolver)
	return webhooksend.New(webhooksend.Options{Live: cfg.Env == "live", Resolver: r})
}

// webhookFanOut is the event consumer that turns committed events into
// webhook deliveries, in every instance (one runs a batch at a time).
func webhookFanOut(d *db.DB, logger *slog.Logger, w *webhook.Service) *event.Consumer {
	return event.NewConsumer(d, logger, webhook.ConsumerName, w.FanOut, event.WithBatch(webhook.FanOutBatch))
}
