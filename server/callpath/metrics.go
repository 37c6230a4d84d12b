package callpath

import (
	"time"

	"github.com/ctxhost/ctxhost/provider"
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the call path's Prometheus metrics, labelled by upstream
// (never by session, key or caller).
type Metrics struct {
	calls      *prometheus.CounterVec
	errors     *prometheus.CounterVec
	callerToks *prometheus.CounterVec
	sentToks   *prometheus.CounterVec
	savedToks  *prometheus.CounterVec
	prompt     *prometheus.CounterVec
	completion *prometheus.CounterVec
	cacheRead  *prometheus.CounterVec
	cacheWrite *prometheus.CounterVec
	replacedH  *prometheus.CounterVec
	forkedH    *prometheus.CounterVec
	unrecorded *prometheus.CounterVec
	moved      *prometheus.CounterVec
	prepare    *prometheus.HistogramVec
	beforeSend *prometheus.HistogramVec
	dropped    *prometheus.CounterVec
	fallbacks  *prometheus.CounterVec
	// ownRounds, ownLimit and ownCalls count the rounds in which ctxhost
	// answered its own tools (selftools.go).
	ownRounds, ownLimit, ownCalls *prometheus.CounterVec
	// spansLost, when tracing, counts the call spans dropped.
	spansLost prometheus.Collector
}

// latencyBuckets are the buckets of the call path's latency histograms:
// 100 µs to about 6.5 s.
var latencyBuckets = prometheus.ExponentialBuckets(100e-6, 2, 17)

func newMetrics() *Metrics {
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, append([]string{"upstream"}, labels...))
	}
	return &Metrics{
		calls:      counter("ctxhost_upstream_calls_total", "Provider calls received, by upstream and endpoint.", "endpoint"),
		errors:     counter("ctxhost_upstream_errors_total", "Provider calls that failed, by upstream and reason (upstream_4xx, upstream_429, upstream_5xx, transport, dropped, timeout, bad_request, prepare, context_length, record, ...).", "reason"),
		callerToks: counter("ctxhost_upstream_caller_tokens_total", "Tokens of the context as the caller sent it (before compaction), by upstream."),
		sentToks:   counter("ctxhost_upstream_sent_tokens_total", "Tokens of the context ctxhost sent upstream, by upstream."),
		savedToks:  counter("ctxhost_upstream_saved_tokens_total", "Tokens compaction kept out of the upstream requests, by upstream."),
		prompt:     counter("ctxhost_upstream_prompt_tokens_total", "Input tokens the upstream reported (cached ones included), by upstream."),
		completion: counter("ctxhost_upstream_completion_tokens_total", "Output tokens the upstream reported, by upstream."),
		cacheRead:  counter("ctxhost_upstream_cache_read_tokens_total", "Input tokens the upstream reported read from its prompt cache, by upstream; divided by ctxhost_upstream_prompt_tokens_total it is the cache read share."),
		cacheWrite: counter("ctxhost_upstream_cache_write_tokens_total", "Input tokens the upstream reported written to its prompt cache, by upstream."),
		replacedH:  counter("ctxhost_upstream_history_replaced_total", "Calls whose conversation no longer started with the session's history (an earlier message edited or removed), so the history was replaced, by upstream."),
		forkedH:    counter("ctxhost_upstream_history_forked_total", "Calls whose conversation was the session's history edited at an earlier message, so the session went back to the checkpoint the conversation starts with (what it held kept as a branch session), by upstream."),
		unrecorded: counter("ctxhost_upstream_answers_unrecorded_total", "Answers passed to their callers but not recorded, because their session was deleted while they came, by upstream."),
		moved:      counter("ctxhost_upstream_answers_moved_total", "Answers whose session's history another call changed while they came, recorded where they still belong (where=appended: the session's history is where the answer's conversation was when it went upstream, the conversation's messages added again) or on a session of their own (where=branch, named in Ctxhost-Answer-Branch), by upstream.", "where"),
		dropped:    counter("ctxhost_upstream_dropped_total", "Pieces of callers' requests ctxhost could not carry upstream and left out (each also logged as a warning), by upstream and what was left out.", "what"),
		fallbacks:  counter("ctxhost_upstream_fallbacks_total", "Calls whose pinned content could not fit the window of the model they named, sent to the upstream's fallback_model instead, by upstream and model.", "model"),
		ownRounds:  counter("ctxhost_upstream_tool_rounds_total", "Rounds in which ctxhost answered its own tools (recall, memory) and called the model again before answering the caller, by upstream."),
		ownLimit:   counter("ctxhost_upstream_tool_round_limit_total", "Answers that went to the caller with calls of ctxhost's own tools unanswered, the upstream's tool_rounds used up, by upstream."),
		ownCalls:   counter("ctxhost_upstream_own_tool_calls_total", "Calls of ctxhost's own tools ctxhost answered in the call path, by upstream and tool.", "tool"),
		prepare: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "ctxhost_upstream_prepare_seconds",
			Help:    "Time each call's context took to prepare (the conversation reconciled with its session, compacted and assembled), by upstream.",
			Buckets: latencyBuckets}, []string{"upstream"}),
		beforeSend: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "ctxhost_upstream_before_send_seconds",
			Help:    "Time from a call's arrival until its request went upstream (the body read, the session's turn awaited, the context prepared, the request built): the latency ctxhost adds before the provider sees the call, by upstream.",
			Buckets: latencyBuckets}, []string{"upstream"}),
	}
}

// Collectors returns every metric, to register with a registry.
func (m *Metrics) Collectors() []prometheus.Collector {
	cs := []prometheus.Collector{m.calls, m.errors, m.callerToks, m.sentToks, m.savedToks, m.prompt, m.completion,
		m.cacheRead, m.cacheWrite, m.replacedH, m.forkedH, m.unrecorded, m.moved, m.prepare, m.beforeSend, m.dropped, m.fallbacks, m.ownRounds, m.ownLimit, m.ownCalls}
	if m.spansLost != nil {
		cs = append(cs, m.spansLost)
	}
	return cs
}

// spansDropped counts the call spans the tracer dropped, its queue full,
// as dropped tells them.
func (m *Metrics) spansDropped(dropped func() uint64) {
	m.spansLost = prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "ctxhost_trace_spans_dropped_total",
		Help: "Call-path spans dropped without being exported: the tracer's queue of ended calls was full (the collector slow or down)."},
		func() float64 { return float64(dropped()) })
}

// declare makes the token counters of upstream show from the start.
func (m *Metrics) declare(upstream string) {
	for _, c := range []*prometheus.CounterVec{m.callerToks, m.sentToks, m.savedToks, m.prompt, m.completion, m.cacheRead, m.cacheWrite, m.replacedH, m.forkedH} {
		c.WithLabelValues(upstream)
	}
}

func (m *Metrics) called(upstream, endpoint string) {
	m.calls.WithLabelValues(upstream, endpoint).Inc()
}
func (m *Metrics) failed(upstream, reason string) { m.errors.WithLabelValues(upstream, reason).Inc() }
func (m *Metrics) replaced(upstream string)       { m.replacedH.WithLabelValues(upstream).Inc() }
func (m *Metrics) forked(upstream string)         { m.forkedH.WithLabelValues(upstream).Inc() }

// unrecordedAnswer counts an answer passed on without being recorded.
func (m *Metrics) unrecordedAnswer(upstream string) { m.unrecorded.WithLabelValues(upstream).Inc() }

// movedAnswer counts an answer recorded elsewhere than on the history
// its call prepared (where: "appended" or "branch").
func (m *Metrics) movedAnswer(upstream, where string) { m.moved.WithLabelValues(upstream, where).Inc() }

// droppedPart counts a piece of a caller's request left out (what names
// it: a part or item type).
func (m *Metrics) droppedPart(upstream, what string) { m.dropped.WithLabelValues(upstream, what).Inc() }

// prepared counts a prepared turn: the context's tokens before compaction
// (what the caller sent) and after (what goes upstream).
func (m *Metrics) prepared(upstream string, before, after int) {
	m.callerToks.WithLabelValues(upstream).Add(float64(before))
	m.sentToks.WithLabelValues(upstream).Add(float64(after))
	if before > after {
		m.savedToks.WithLabelValues(upstream).Add(float64(before - after))
	}
}

// prepareTook observes how long a call's context took to prepare.
func (m *Metrics) prepareTook(upstream string, d time.Duration) {
	m.prepare.WithLabelValues(upstream).Observe(d.Seconds())
}

// sending observes how long a call was held before its request went
// upstream.
func (m *Metrics) sending(upstream string, held time.Duration) {
	m.beforeSend.WithLabelValues(upstream).Observe(held.Seconds())
}

func (m *Metrics) usage(upstream string, u provider.Usage) {
	m.prompt.WithLabelValues(upstream).Add(float64(u.Prompt))
	m.completion.WithLabelValues(upstream).Add(float64(u.Completion))
	m.cacheRead.WithLabelValues(upstream).Add(float64(u.CacheRead))
	m.cacheWrite.WithLabelValues(upstream).Add(float64(u.CacheWrite))
}

// fellBack counts a call sent to the upstream's fallback model.
func (m *Metrics) fellBack(upstream, model string) {
	m.fallbacks.WithLabelValues(upstream, model).Inc()
}

// toolRounds counts a call's rounds of ctxhost's own tools (atLimit: its
// answer went out with them unanswered).
func (m *Metrics) toolRounds(upstream string, rounds int, atLimit bool) {
	m.ownRounds.WithLabelValues(upstream).Add(float64(rounds))
	if atLimit {
		m.ownLimit.WithLabelValues(upstream).Inc()
	}
}

// ownToolCall counts a call of ctxhost's tool ctxhost answered.
func (m *Metrics) ownToolCall(upstream, tool string) {
	m.ownCalls.WithLabelValues(upstream, tool).Inc()
}
