package httpapi

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics is a registry of this server's own, so several servers (tests)
// can live in one process.
type metrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	handler  http.Handler
	// byRoute saves looking the labels up on every request.
	byRoute sync.Map // routeStatus → routeObservers
}

func newMetrics(more []prometheus.Collector) *metrics {
	reg := prometheus.NewRegistry()
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strongroom_http_requests_total",
			Help: "HTTP requests by route pattern and status.",
		}, []string{"route", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "strongroom_http_request_duration_seconds",
			Help:    "HTTP request latency by route pattern and status.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"route", "status"}),
	}
	reg.MustRegister(m.requests, m.latency, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reg.MustRegister(more...)
	m.handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	return m
}

func (m *metrics) observe(route string, status int, elapsed time.Duration) {
	if m == nil {
		return
	}
	key := routeStatus{route, status}
	o, ok := m.byRoute.Load(key)
	if !ok {
		code := strconv.Itoa(status)
		o, _ = m.byRoute.LoadOrStore(key, routeObservers{m.requests.WithLabelValues(route, code), m.latency.WithLabelValues(route, code)})
	}
	ro := o.(routeObservers)
	ro.requests.Inc()
	ro.latency.Observe(elapsed.Seconds())
}

// routeStatus keys the metrics of one route pattern and status; there are
// few of them (route patterns, not paths), so they are kept.
type routeStatus struct {
	route  string
	status int
}

type routeObservers struct {
	requests prometheus.Counter
	latency  prometheus.Observer
}
