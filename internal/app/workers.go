package app

import (
	"context"
	"log/slog"
	"sync"

	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/event"
	"github.com/strongroom/strongroom/internal/platform/job"
)

// workers are the background loops of the process: the job runner (message
// delivery, which the outbox registers as one of the services, and every
// retried task) and the domain-event dispatcher.
type workers struct {
	jobs   *job.Runner
	events *event.Dispatcher
}

// jobHandlers is implemented by services that run background jobs.
type jobHandlers interface {
	Register(r *job.Runner)
}

func newWorkers(d *db.DB, clk clock.Clock, logger *slog.Logger, services ...jobHandlers) *workers {
	w := &workers{
		jobs:   job.NewRunner(d, clk, logger),
		events: event.NewDispatcher(d, logger),
	}
	for _, s := range services {
		s.Register(w.jobs)
	}
	return w
}

// start runs the workers until ctx is cancelled; wg tells when they have
// stopped. The dispatcher starts only when something subscribed to events.
func (w *workers) start(ctx context.Context, wg *sync.WaitGroup) {
	wg.Go(func() { w.jobs.Run(ctx) })
	if w.events.HasSubscribers() {
		wg.Go(func() { w.events.Run(ctx) })
	}
}
