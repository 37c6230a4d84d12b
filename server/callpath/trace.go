package callpath

import (
	"go.opentelemetry.io/otel/attribute"
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

// noEnd ends a phase that is not traced.
func noEnd(error) {}

// startTrace starts the call's span record when the handler traces and
// its sampler takes the call. A call is one span: its phases are events
// on it. The call writes the span's times and attributes into a plain
// record, which the recorder turns into the SDK's span in the
// background once the call has ended, off the call's path (see
// callspan).
func (c *call) startTrace() {
	if c.h.spans == nil {
		return
	}
	c.span = c.h.spans.Start(c.r.Context(), "chat", trace.SpanKindServer)
	if c.span == nil {
		return // not sampled: the call records none of its span
	}
	c.phaseEnd = c.endPhase
	provider := providerNames[c.u.Kind]
	c.span.Attrs = append(c.span.Attrs, attribute.String(attrOperation, "chat"), attribute.String(attrProvider, provider),
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
	c.span.Event(name)
	c.phaseName = name
	return c.phaseEnd
}

// endPhase ends the phase the call is in.
func (c *call) endPhase(err error) {
	if err != nil {
		c.span.Exception(err, attribute.String("ctxhost.phase", c.phaseName))
	}
}

// tracePrepared gathers the prepared turn's figures for the call's span
// and adds its compaction, and each compaction step, as events on it
// (after the prepare phase's).
func (c *call) tracePrepared(p *engine.Prepared) {
	if c.span == nil || p == nil {
		return
	}
	c.span.Attrs = append(c.span.Attrs, attribute.Int("ctxhost.tokens.before", p.Before.Used), attribute.Int("ctxhost.tokens.sent", p.Budget.Used),
		attribute.Int("ctxhost.window", p.Budget.Window), attribute.String("ctxhost.action", string(p.Action)))
	r := p.Compaction
	if r == nil {
		return
	}
	sp := c.span
	sp.Event("compaction", attribute.String("ctxhost.compaction.reason", r.Reason),
		attribute.Int("ctxhost.compaction.before", r.Before), attribute.Int("ctxhost.compaction.after", r.After),
		attribute.Int("ctxhost.compaction.freed", r.Freed), attribute.Bool("ctxhost.compaction.met", r.Met))
	for _, st := range r.Steps {
		sp.Event("compaction.step", attribute.String("ctxhost.component", st.Component),
			attribute.String("ctxhost.step.action", st.Action), attribute.Int("ctxhost.step.asked", st.Asked),
			attribute.Int("ctxhost.step.claimed", st.Claimed), attribute.Int("ctxhost.step.freed", st.Freed),
			attribute.String("ctxhost.step.discarded", st.Discarded))
	}
}

// endTrace ends the call's span record with what the call came to and
// hands it to the recorder.
func (c *call) endTrace(err error, outcome string) {
	if c.span == nil {
		return
	}
	sp := c.span
	c.span = nil
	sp.Attrs = append(sp.Attrs, attribute.String("ctxhost.session", c.session), attribute.String("ctxhost.outcome", outcome),
		attribute.Int("http.response.status_code", c.status))
	if c.req != nil {
		if m := callModel(c.d, c.req); m != "" {
			sp.Attrs = append(sp.Attrs, attribute.String(attrRequestModel, m))
			sp.Detail = m // the name "chat MODEL", joined off the call's path
		}
	}
	if c.usage.Known {
		sp.Attrs = append(sp.Attrs, attribute.Int(attrInputTokens, c.usage.Prompt), attribute.Int(attrOutputTokens, c.usage.Completion),
			attribute.Int(attrCacheRead, c.usage.CacheRead), attribute.Int(attrCacheCreation, c.usage.CacheWrite))
	}
	sp.Err = err
	c.h.spans.End(sp)
}
