package metrics

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// gather returns reg's series of the families named (all when none), as
// "name{label=value,…}" → value.
func gather(t *testing.T, reg *prometheus.Registry, names ...string) map[string]float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range fams {
		if len(names) > 0 && !slices.Contains(names, f.GetName()) {
			continue
		}
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			key := f.GetName() + "{" + strings.Join(labels, ",") + "}"
			switch {
			case m.Gauge != nil:
				out[key] = m.GetGauge().GetValue()
			case m.Counter != nil:
				out[key] = m.GetCounter().GetValue()
			case m.Histogram != nil:
				out[key] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}

func counterValue(c prometheus.Counter) float64 {
	var m dto.Metric
	_ = c.Write(&m)
	return m.GetCounter().GetValue()
}

// A scrape reads the database at most once per TTL; a failed read leaves
// its gauge out of that scrape and is counted; a read is bounded by the
// timeout.
func TestGaugesReadOncePerTTLAndCountFailures(t *testing.T) {
	var reads atomic.Int64
	var fail atomic.Bool
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var deadline time.Duration
	g := NewGauges(5*time.Second, 50*time.Millisecond,
		Gauge{Name: "strongroom_test_things", Help: "Things by colour.", Labels: []string{"colour"},
			Read: func(ctx context.Context) ([]Sample, error) {
				reads.Add(1)
				if d, ok := ctx.Deadline(); ok {
					deadline = time.Until(d)
				}
				if fail.Load() {
					return nil, errors.New("database unreachable")
				}
				return []Sample{{Labels: []string{"red"}, Value: 3}, {Labels: []string{"blue"}, Value: 0}}, nil
			}})
	g.now = func() time.Time { return now }
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(g)

	for range 3 {
		got := gather(t, reg, "strongroom_test_things")
		if len(got) != 2 || got["strongroom_test_things{colour=red}"] != 3 || got["strongroom_test_things{colour=blue}"] != 0 {
			t.Fatalf("gauges %v, want red 3 and blue 0", got)
		}
	}
	if n := reads.Load(); n != 1 {
		t.Fatalf("%d reads for three scrapes within the TTL, want 1", n)
	}
	if deadline <= 0 || deadline > 50*time.Millisecond {
		t.Fatalf("read under a deadline of %v, want at most the 50 ms timeout", deadline)
	}

	now = now.Add(5 * time.Second)
	fail.Store(true)
	if got := gather(t, reg, "strongroom_test_things"); len(got) != 0 {
		t.Fatalf("a failed read: %v, want no series", got)
	}
	if v := counterValue(g.fails.WithLabelValues("strongroom_test_things")); v != 1 {
		t.Fatalf("failures counted %v, want 1", v)
	}
	if n := reads.Load(); n != 2 {
		t.Fatalf("%d reads after the TTL, want 2", n)
	}
}

// Events are counted by outcome, each outcome exported from the start.
func TestEventCounters(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(Events()...)
	before := counterValue(webhookDeliveries.WithLabelValues(WebhookGone))
	WebhookDelivery(WebhookGone)
	if got := counterValue(webhookDeliveries.WithLabelValues(WebhookGone)); got != before+1 {
		t.Fatalf("gone deliveries %v, want %v", got, before+1)
	}
	if got := gather(t, reg, "strongroom_step_ups_total", "strongroom_webhook_deliveries_total", "strongroom_bill_extractions_total"); len(got) != 6+4+2 {
		t.Fatalf("event series %v, want every outcome: 12", got)
	}
	timed := func() float64 { return gather(t, reg)["strongroom_bill_extraction_duration_seconds{outcome=failed}"] }
	failedBefore := timed()
	BillExtraction(ExtractionFailed, 0) // not read: counted, not timed
	if timed() != failedBefore {
		t.Fatal("an extraction that read nothing was timed")
	}
	if (Timer{}).Elapsed() != 0 || StartTimer().Elapsed() <= 0 {
		t.Fatal("a zero Timer measures nothing; a started one measures more than nothing")
	}
}

// The pool series read sql.DBStats.
func TestPool(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(NewPool(map[string]*sql.DB{"main": new(sql.DB)}))
	got := gather(t, reg)
	if _, ok := got["strongroom_db_pool_open_connections{pool=main}"]; len(got) != 6 || !ok {
		t.Fatalf("pool series %v, want 6 of pool main", got)
	}
}
