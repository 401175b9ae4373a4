package app

import (
	"context"
	"log/slog"
	"sync"

	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
)

// startWorkers starts the background workers; each stops when ctx is cancelled.
func startWorkers(ctx context.Context, wg *sync.WaitGroup, d *db.DB, clk clock.Clock, logger *slog.Logger) {
}
