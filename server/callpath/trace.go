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

// spanAttrs is how many attributes a call's span has at most (see
// startTrace, tracePrepared and endTrace).
const spanAttrs = 18

// startTrace opens the call's span when the handler has a tracer and its
// sampler takes the call. A call is one span: its phases are events on
// it, and its attributes are gathered in one slice set when it ends, so
// that a sampled call costs one span of the SDK's, not one per phase.
func (c *call) startTrace() {
	if c.h.tracer == nil {
		return
	}
	_, c.span = c.h.tracer.Start(c.r.Context(), "chat", spanKindServer)
	if !c.span.IsRecording() {
		// Not sampled: its attributes, phases, figures and end would
		// record nothing, so the call makes none of them.
		c.span = nil
		return
	}
	c.phaseEnd = c.endPhase
	c.attrs = make([]attribute.KeyValue, 0, spanAttrs)
	provider := providerNames[c.u.Kind]
	c.attrs = append(c.attrs, attribute.String(attrOperation, "chat"), attribute.String(attrProvider, provider),
		attribute.String(attrSystem, provider),
		attribute.String("ctxhost.upstream", c.u.Name), attribute.String("ctxhost.endpoint", c.d.endpoint()))
}

// phase starts one phase of the call (read, reconcile, prepare,
// upstream, relay, record): an event on the call's span named after it,
// at the time it starts (it lasts until the next phase's event, or the
// span's end). Call the returned func with the phase's error: a failed
// phase adds an exception event naming it.
func (c *call) phase(name string) func(error) {
	if c.span == nil {
		return noEnd
	}
	c.span.AddEvent(name)
	c.phaseName = name
	return c.phaseEnd
}

// endPhase ends the phase the call is in.
func (c *call) endPhase(err error) {
	if err != nil {
		c.span.RecordError(err, trace.WithAttributes(attribute.String("ctxhost.phase", c.phaseName)))
	}
}

func endSpan(sp trace.Span, err error) {
	if err != nil {
		sp.RecordError(err)
		sp.SetStatus(codes.Error, err.Error())
	}
	sp.End()
}

// tracePrepared gathers the prepared turn's figures for the call's span
// and adds its compaction, and each compaction step, as events on it
// (after the prepare phase's).
func (c *call) tracePrepared(p *engine.Prepared) {
	if c.span == nil || p == nil {
		return
	}
	c.attrs = append(c.attrs, attribute.Int("ctxhost.tokens.before", p.Before.Used), attribute.Int("ctxhost.tokens.sent", p.Budget.Used),
		attribute.Int("ctxhost.window", p.Budget.Window), attribute.String("ctxhost.action", string(p.Action)))
	r := p.Compaction
	if r == nil {
		return
	}
	sp := c.span
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

// endTrace ends the call's span with what the call came to, its
// attributes set in one call.
func (c *call) endTrace(err error, outcome string) {
	if c.span == nil {
		return
	}
	c.attrs = append(c.attrs, attribute.String("ctxhost.session", c.session), attribute.String("ctxhost.outcome", outcome),
		attribute.Int("http.response.status_code", c.status))
	if c.req != nil {
		if m := callModel(c.d, c.req); m != "" {
			c.attrs = append(c.attrs, attribute.String(attrRequestModel, m))
			c.span.SetName("chat " + m)
		}
	}
	if c.usage.Known {
		c.attrs = append(c.attrs, attribute.Int(attrInputTokens, c.usage.Prompt), attribute.Int(attrOutputTokens, c.usage.Completion),
			attribute.Int(attrCacheRead, c.usage.CacheRead), attribute.Int(attrCacheCreation, c.usage.CacheWrite))
	}
	c.span.SetAttributes(c.attrs...)
	endSpan(c.span, err)
}
