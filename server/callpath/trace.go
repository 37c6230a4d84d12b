package callpath

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/ctxhost/ctxhost/engine"
)

// The span attributes of a call: the OpenTelemetry GenAI semantic
// conventions' where they name the figure, ctxhost's own otherwise.
const (
	attrOperation     = "gen_ai.operation.name"
	attrProvider      = "gen_ai.provider.name"
	attrSystem        = "gen_ai.system"
	attrRequestModel  = "gen_ai.request.model"
	attrInputTokens   = "gen_ai.usage.input_tokens"
	attrOutputTokens  = "gen_ai.usage.output_tokens"
	attrCacheRead     = "gen_ai.usage.cache_read.input_tokens"
	attrCacheCreation = "gen_ai.usage.cache_creation.input_tokens"
)

// providerNames are the GenAI conventions' names of each kind's provider.
var providerNames = map[string]string{KindOpenAI: "openai", KindAnthropic: "anthropic", KindGemini: "gcp.gemini"}

// spanKindServer starts a call's span: its attributes are set once the
// sampler has taken the call (the configured samplers read none).
var spanKindServer = trace.WithSpanKind(trace.SpanKindServer)

// noEnd ends a phase that is not traced.
func noEnd(error) {}

// startTrace opens the call's span (when the handler has a tracer and
// its sampler takes the call), the parent of its phases' spans.
func (c *call) startTrace() {
	if c.h.tracer == nil {
		return
	}
	c.tctx, c.span = c.h.tracer.Start(c.r.Context(), "chat", spanKindServer)
	if !c.span.IsRecording() {
		// Not sampled: its attributes, phases, figures and end would
		// record nothing, so the call makes none of them.
		c.tctx, c.span = nil, nil
		return
	}
	c.span.SetAttributes(attribute.String(attrOperation, "chat"), attribute.String(attrProvider, providerNames[c.u.Kind]),
		attribute.String(attrSystem, providerNames[c.u.Kind]),
		attribute.String("ctxhost.upstream", c.u.Name), attribute.String("ctxhost.endpoint", c.d.endpoint()))
}

// phase opens the span of one phase of the call (read, reconcile,
// prepare, upstream, relay, record); call the returned func with the
// phase's error to end it.
func (c *call) phase(name string) func(error) {
	if c.span == nil {
		return noEnd
	}
	_, sp := c.h.tracer.Start(c.tctx, name)
	c.phaseSpan = sp
	return func(err error) { endSpan(sp, err) }
}

func endSpan(sp trace.Span, err error) {
	if err != nil {
		sp.RecordError(err)
		sp.SetStatus(codes.Error, err.Error())
	}
	sp.End()
}

// tracePrepared sets the prepared turn's figures on the call's span and
// adds its compaction, and each compaction step, as events of the
// prepare phase's span (the phase open).
func (c *call) tracePrepared(p *engine.Prepared) {
	if c.span == nil || p == nil {
		return
	}
	sp := c.phaseSpan
	c.span.SetAttributes(attribute.Int("ctxhost.tokens.before", p.Before.Used), attribute.Int("ctxhost.tokens.sent", p.Budget.Used),
		attribute.Int("ctxhost.window", p.Budget.Window), attribute.String("ctxhost.action", string(p.Action)))
	r := p.Compaction
	if r == nil {
		return
	}
	sp.AddEvent("compaction", trace.WithAttributes(attribute.String("ctxhost.compaction.reason", r.Reason),
		attribute.Int("ctxhost.compaction.before", r.Before), attribute.Int("ctxhost.compaction.after", r.After),
		attribute.Int("ctxhost.compaction.freed", r.Freed), attribute.Bool("ctxhost.compaction.met", r.Met)))
	for _, st := range r.Steps {
		sp.AddEvent("compaction.step", trace.WithAttributes(attribute.String("ctxhost.component", st.Component),
			attribute.String("ctxhost.step.action", st.Action), attribute.Int("ctxhost.step.asked", st.Asked),
			attribute.Int("ctxhost.step.claimed", st.Claimed), attribute.Int("ctxhost.step.freed", st.Freed),
			attribute.String("ctxhost.step.discarded", st.Discarded)))
	}
}

// endTrace ends the call's span with what the call came to.
func (c *call) endTrace(err error, outcome string) {
	if c.span == nil {
		return
	}
	attrs := []attribute.KeyValue{attribute.String("ctxhost.session", c.session), attribute.String("ctxhost.outcome", outcome),
		attribute.Int("http.response.status_code", c.status)}
	if c.req != nil {
		if m := callModel(c.d, c.req); m != "" {
			attrs = append(attrs, attribute.String(attrRequestModel, m))
			c.span.SetName("chat " + m)
		}
	}
	if c.usage.Known {
		attrs = append(attrs, attribute.Int(attrInputTokens, c.usage.Prompt), attribute.Int(attrOutputTokens, c.usage.Completion),
			attribute.Int(attrCacheRead, c.usage.CacheRead), attribute.Int(attrCacheCreation, c.usage.CacheWrite))
	}
	c.span.SetAttributes(attrs...)
	endSpan(c.span, err)
}
