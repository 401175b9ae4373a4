package app

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/google/uuid"

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

// interimRenderer renders an event with its stored data.
func interimRenderer(_ context.Context, orgID uuid.UUID, e event.Event) ([]byte, bool, error) {
	b, err := json.Marshal(map[string]any{"id": e.ID, "type": e.Type, "organization_id": orgID, "occurred_at": e.OccurredAt, "data": e.Data})
	return b, err == nil, err
}
