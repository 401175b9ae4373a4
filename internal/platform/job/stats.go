package job

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/strongroom/strongroom/internal/platform/db"
)

// Depth is how many jobs of one kind are in one state: due (pending and
// due now), scheduled (pending, due later: a retry's backoff, a webhook's
// next attempt), running, or dead (out of attempts).
type Depth struct {
	Kind, State string
	Jobs        int64
}

// Depths counts the queue by kind and state at q's time, for the metrics.
// Finished jobs are not read: one grouped pass over the unfinished and dead
// rows (jobs_due_idx leads with the status).
func Depths(ctx context.Context, q db.Reader) ([]Depth, error) {
	rows, err := q.QueryContext(ctx, `
		SELECT kind, CASE WHEN status = 'pending' AND run_at <= $1 THEN 'due'
		                  WHEN status = 'pending' THEN 'scheduled'
		                  ELSE status END AS state, count(*)
		FROM jobs WHERE status IN ('pending', 'running', 'dead')
		GROUP BY kind, state`, q.Now())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Depth
	for rows.Next() {
		var d Depth
		if err := rows.Scan(&d.Kind, &d.State, &d.Jobs); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// OldestDue is how long the oldest job due at q's time has been due
// (0 when none is): work that waits for a free runner, or that no runner
// takes. One row, read through jobs_due_idx.
func OldestDue(ctx context.Context, q db.Reader) (time.Duration, error) {
	now := q.Now()
	var runAt time.Time
	err := q.QueryRowContext(ctx, `
		SELECT run_at FROM jobs WHERE status = 'pending' AND run_at <= $1 ORDER BY run_at LIMIT 1`, now).Scan(&runAt)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return max(now.Sub(runAt), 0), nil
}
