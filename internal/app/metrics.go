package app

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/strongroom/strongroom/internal/payment"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/job"
	"github.com/strongroom/strongroom/internal/platform/metrics"
)

// metricCollectors are the series /metrics exports beside the HTTP
// layer's own (docs/metrics.md): the events domain code counts, the
// database's state read on scrape (one grouped query each, cached
// metrics.GaugeTTL, bounded together by metrics.GaugeTimeout: every instance reports
// the same database-wide figures), and the connection pools.
func metricCollectors(d *db.DB) []prometheus.Collector {
	byStatus := func(count func(context.Context, db.Reader) (map[string]int64, error)) func(context.Context) ([]metrics.Sample, error) {
		return func(ctx context.Context) ([]metrics.Sample, error) {
			m, err := count(ctx, d.Reader())
			if err != nil {
				return nil, err
			}
			out := make([]metrics.Sample, 0, len(m))
			for status, n := range m {
				out = append(out, metrics.Sample{Labels: []string{status}, Value: float64(n)})
			}
			return out, nil
		}
	}
	gauges := metrics.NewGauges(0, 0,
		metrics.Gauge{
			Name:   "strongroom_payments",
			Help:   "Payments of all organizations by status, read from the database (the same figure on every instance).",
			Labels: []string{"status"},
			Read:   byStatus(payment.CountByStatus),
		},
		metrics.Gauge{
			Name:   "strongroom_approvals",
			Help:   "Payment approvals of all organizations by status (pending, approved, rejected, cancelled), read from the database.",
			Labels: []string{"status"},
			Read:   byStatus(payment.CountApprovalsByStatus),
		},
		metrics.Gauge{
			Name:   "strongroom_jobs",
			Help:   "Background jobs by kind and state (due, scheduled, running, dead), read from the database.",
			Labels: []string{"kind", "state"},
			Read: func(ctx context.Context) ([]metrics.Sample, error) {
				depths, err := job.Depths(ctx, d.Reader())
				if err != nil {
					return nil, err
				}
				out := make([]metrics.Sample, 0, len(depths))
				for _, x := range depths {
					out = append(out, metrics.Sample{Labels: []string{x.Kind, x.State}, Value: float64(x.Jobs)})
				}
				return out, nil
			},
		},
		metrics.Gauge{
			Name: "strongroom_jobs_oldest_due_seconds",
			Help: "How long the oldest due job has waited to be run (0 when none is due), read from the database.",
			Read: func(ctx context.Context) ([]metrics.Sample, error) {
				age, err := job.OldestDue(ctx, d.Reader())
				return []metrics.Sample{{Value: age.Seconds()}}, err
			},
		},
	)
	return append(metrics.Events(), gauges, metrics.NewPool(d.Pools()))
}
