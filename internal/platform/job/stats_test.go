package job_test

import (
	"cmp"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/job"
)

// The queue's depth by kind and state, and how long its oldest due job
// has waited, as the metrics read them.
func TestDepthsAndOldestDue(t *testing.T) {
	each(t, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		ctx := context.Background()
		if age, err := job.OldestDue(ctx, d.Reader()); err != nil || age != 0 {
			t.Fatalf("empty queue: oldest due %v, %v; want 0", age, err)
		}
		enqueue(t, d, t0.Add(-3*time.Minute), "mail", nil)
		enqueue(t, d, t0.Add(-time.Minute), "mail", nil)
		enqueue(t, d, t0.Add(time.Hour), "mail", nil)
		enqueue(t, d, t0, "hook", nil)
		enqueue(t, d, t0.Add(-time.Hour), "dead-one", nil, job.MaxAttempts(1))
		r := job.NewRunner(d, clk, nil)
		r.Handle("dead-one", func(context.Context, job.Job) error { return job.Permanent(context.Canceled) })
		runDue(t, r, 1)

		depths, err := job.Depths(ctx, d.Reader())
		if err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(depths, func(a, b job.Depth) int {
			if a.Kind != b.Kind {
				return cmp.Compare(a.Kind, b.Kind)
			}
			return cmp.Compare(a.State, b.State)
		})
		want := []job.Depth{{"dead-one", "dead", 1}, {"hook", "due", 1}, {"mail", "due", 2}, {"mail", "scheduled", 1}}
		if !slices.Equal(depths, want) {
			t.Fatalf("depths %v, want %v", depths, want)
		}
		if age, err := job.OldestDue(ctx, d.Reader()); err != nil || age != 3*time.Minute {
			t.Fatalf("oldest due %v, %v; want 3m", age, err)
		}
	})
}
