package metrics

import (
	"context"
	"database/sql"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Sample is one value of a gauge, with its label values in the order of
// the gauge's labels.
type Sample struct {
	Labels []string
	Value  float64
}

// Gauge is a gauge read from the database on scrape: Read runs one
// grouped query and returns a sample per label combination.
type Gauge struct {
	Name, Help string
	Labels     []string
	Read       func(ctx context.Context) ([]Sample, error)
}

// Gauges is a collector of gauges read from the database. A scrape reads
// them all when the last reading is older than TTL, all within Timeout, and
// otherwise serves the last reading: however often Prometheus (or several)
// scrapes, the database answers one set of queries per TTL and instance.
// A gauge whose read fails is left out of that scrape, and counted in
// strongroom_metrics_read_failures_total.
type Gauges struct {
	gauges  []Gauge
	descs   []*prometheus.Desc
	ttl     time.Duration
	timeout time.Duration
	now     func() time.Time
	fails   *prometheus.CounterVec

	mu     sync.Mutex
	at     time.Time
	cached []prometheus.Metric
}

// Default cache life and per-query timeout of NewGauges.
const (
	GaugeTTL     = 5 * time.Second
	GaugeTimeout = 2 * time.Second
)

// NewGauges returns a collector of gs, read at most once per ttl, the
// reads of one scrape bounded by timeout together (GaugeTTL and
// GaugeTimeout when 0).
func NewGauges(ttl, timeout time.Duration, gs ...Gauge) *Gauges {
	if ttl <= 0 {
		ttl = GaugeTTL
	}
	if timeout <= 0 {
		timeout = GaugeTimeout
	}
	c := &Gauges{gauges: gs, ttl: ttl, timeout: timeout, now: time.Now,
		fails: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strongroom_metrics_read_failures_total",
			Help: "Reads of a database-derived gauge that failed or timed out, by gauge; that scrape left the gauge out.",
		}, []string{"gauge"})}
	for _, g := range gs {
		c.descs = append(c.descs, prometheus.NewDesc(g.Name, g.Help, g.Labels, nil))
		c.fails.WithLabelValues(g.Name)
	}
	return c
}

// Describe sends the gauges' descriptions.
func (c *Gauges) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
	c.fails.Describe(ch)
}

// Collect sends the gauges, read anew when the last reading is stale.
func (c *Gauges) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	if c.cached == nil || c.now().Sub(c.at) >= c.ttl {
		c.cached, c.at = c.read(), c.now()
	}
	cached := c.cached
	c.mu.Unlock()
	for _, m := range cached {
		ch <- m
	}
	c.fails.Collect(ch)
}

// read reads every gauge, all of them within one timeout, so a scrape
// never waits on the database longer than that.
func (c *Gauges) read() []prometheus.Metric {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	out := []prometheus.Metric{}
	for i, g := range c.gauges {
		samples, err := g.Read(ctx)
		if err != nil {
			c.fails.WithLabelValues(g.Name).Inc()
			continue
		}
		for _, s := range samples {
			m, err := prometheus.NewConstMetric(c.descs[i], prometheus.GaugeValue, s.Value, s.Labels...)
			if err != nil {
				c.fails.WithLabelValues(g.Name).Inc()
				continue
			}
			out = append(out, m)
		}
	}
	return out
}

// Pool is a collector of database connection pools' statistics
// (sql.DBStats), labelled by the pool's name.
type Pool struct {
	pools map[string]*sql.DB

	open, inUse, idle, maxOpen, waitCount, waitSeconds *prometheus.Desc
}

// NewPool returns a collector of pools by name (db.DB.Pools).
func NewPool(pools map[string]*sql.DB) *Pool {
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, []string{"pool"}, nil)
	}
	return &Pool{
		pools:       pools,
		open:        d("strongroom_db_pool_open_connections", "Connections open in the pool (in use and idle)."),
		inUse:       d("strongroom_db_pool_in_use_connections", "Connections of the pool in use."),
		idle:        d("strongroom_db_pool_idle_connections", "Idle connections of the pool."),
		maxOpen:     d("strongroom_db_pool_max_open_connections", "The most connections the pool opens (0: no limit)."),
		waitCount:   d("strongroom_db_pool_waits_total", "Times a caller waited for a free connection."),
		waitSeconds: d("strongroom_db_pool_wait_seconds_total", "Time callers spent waiting for a free connection."),
	}
}

// Describe sends the pool series' descriptions.
func (p *Pool) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{p.open, p.inUse, p.idle, p.maxOpen, p.waitCount, p.waitSeconds} {
		ch <- d
	}
}

// Collect reads each pool's statistics (in memory: no query).
func (p *Pool) Collect(ch chan<- prometheus.Metric) {
	for name, pool := range p.pools {
		s := pool.Stats()
		ch <- prometheus.MustNewConstMetric(p.open, prometheus.GaugeValue, float64(s.OpenConnections), name)
		ch <- prometheus.MustNewConstMetric(p.inUse, prometheus.GaugeValue, float64(s.InUse), name)
		ch <- prometheus.MustNewConstMetric(p.idle, prometheus.GaugeValue, float64(s.Idle), name)
		ch <- prometheus.MustNewConstMetric(p.maxOpen, prometheus.GaugeValue, float64(s.MaxOpenConnections), name)
		ch <- prometheus.MustNewConstMetric(p.waitCount, prometheus.CounterValue, float64(s.WaitCount), name)
		ch <- prometheus.MustNewConstMetric(p.waitSeconds, prometheus.CounterValue, s.WaitDuration.Seconds(), name)
	}
}
