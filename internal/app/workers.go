package app

import (
	"context"
	"log/slog"
	"sync"

	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/job"
)

// workers are the background loops of the process: the job runner runs
// message delivery (the outbox registers it as one of the services) and
// every retried task.
type workers struct {
	jobs *job.Runner
}

// jobHandlers is implemented by services that run background jobs.
type jobHandlers interface {
	Register(r *job.Runner)
}

func newWorkers(d *db.DB, clk clock.Clock, logger *slog.Logger, services ...jobHandlers) *workers {
	w := &workers{
		jobs: job.NewRunner(d, clk, logger),
	}
	for _, s := range services {
		s.Register(w.jobs)
	}
	return w
}

// start runs the workers until ctx is cancelled; wg tells when they have
// stopped.
func (w *workers) start(ctx context.Context, wg *sync.WaitGroup) {
	wg.Go(func() { w.jobs.Run(ctx) })
}
