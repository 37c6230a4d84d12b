package server

import (
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ctxhost/ctxhost/engine"
	"github.com/ctxhost/ctxhost/server/admission"
)

// Metrics are the server's Prometheus metrics, in a registry of their own.
type Metrics struct {
	registry    *prometheus.Registry
	rpcs        *prometheus.CounterVec
	prepare     *prometheus.HistogramVec
	compactions *prometheus.CounterVec
	restarts    *prometheus.CounterVec
	tokensUsed  *prometheus.HistogramVec
	unloaded    prometheus.Counter
	overloaded  prometheus.Counter

	mu     sync.Mutex
	cancel []func()
}

func newMetrics() *Metrics {
	m := &Metrics{registry: prometheus.NewRegistry(),
		rpcs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ctxhost_rpcs_total",
			Help: "RPCs answered, by method and code."}, []string{"method", "code"}),
		prepare: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "ctxhost_prepare_seconds",
			Help: "Latency of successful Prepare calls.", Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16)}, []string{"profile"}),
		compactions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ctxhost_compactions_total",
			Help: "Compactions run, by context profile."}, []string{"profile"}),
		restarts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ctxhost_plugin_restarts_total",
			Help: "Plugin processes restarted after a crash, by plugin."}, []string{"profile", "plugin"}),
		// Labelled by profile, never by session: the series stay as many
		// as the configuration's profiles however many sessions come.
		tokensUsed: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "ctxhost_prepare_tokens_used",
			Help: "Tokens used by each prepared context, by context profile.", Buckets: prometheus.ExponentialBuckets(256, 2, 12)}, []string{"profile"}),
		unloaded: prometheus.NewCounter(prometheus.CounterOpts{Name: "ctxhost_sessions_unloaded_total",
			Help: "Idle sessions unloaded from memory (their stored state kept) to stay under the memory limit."}),
		overloaded: prometheus.NewCounter(prometheus.CounterOpts{Name: "ctxhost_rpcs_overloaded_total",
			Help: "RPCs answered unavailable before their body was read because the memory budget stayed full for the whole admission wait (provider calls: ctxhost_upstream_errors_total{reason=\"overloaded\"})."}),
	}
	m.registry.MustRegister(m.rpcs, m.prepare, m.compactions, m.restarts, m.tokensUsed, m.unloaded, m.overloaded,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{Registry: m.registry})
}

// Registry is the registry the metrics are in.
func (m *Metrics) Registry() *prometheus.Registry { return m.registry }

// watch counts the compactions and plugin restarts of e's sessions.
func (m *Metrics) watch(e *engine.Engine) {
	profile := e.Context.Name
	cancel := e.Watch(engine.Watcher{
		Compacted:       func(string) { m.compactions.WithLabelValues(profile).Inc() },
		PluginRestarted: func(plugin string) { m.restarts.WithLabelValues(profile, plugin).Inc() },
	})
	m.mu.Lock()
	m.cancel = append(m.cancel, cancel)
	m.mu.Unlock()
}

func (m *Metrics) stop() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range m.cancel {
		c()
	}
	m.cancel = nil
}

func (m *Metrics) rpc(method, code string) { m.rpcs.WithLabelValues(method, code).Inc() }

// prepareTimer starts timing a prepare; call the result when it succeeded.
func (m *Metrics) prepareTimer(profile string) func() {
	start := time.Now()
	return func() { m.prepare.WithLabelValues(profile).Observe(time.Since(start).Seconds()) }
}

func (m *Metrics) tokens(profile string, used int) {
	m.tokensUsed.WithLabelValues(profile).Observe(float64(used))
}

// watchBudget reports what the calls in flight hold of the memory budget.
func (m *Metrics) watchBudget(b *admission.Budget) {
	m.registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "ctxhost_memory_admitted_bytes",
		Help: "Bytes the calls in flight are charged on the memory budget (a share of memory_limit)."},
		func() float64 { return float64(b.Held()) }))
}
