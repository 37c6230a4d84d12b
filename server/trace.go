package server

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/ctxhost/ctxhost/engine"
)

// startRPCSpan opens the span of one service call (nil tracer: none).
func startRPCSpan(ctx context.Context, tracer trace.Tracer, procedure, method string) (context.Context, trace.Span) {
	if tracer == nil {
		return ctx, nil
	}
	return tracer.Start(ctx, procedure[1:], trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("rpc.system", "connect_rpc"), attribute.String("rpc.service", "ctxhost.service.v1.ContextService"),
			attribute.String("rpc.method", method)))
}

// endRPCSpan ends a service call's span with its session and code.
func endRPCSpan(sp trace.Span, session, code string, err error) {
	if sp == nil {
		return
	}
	sp.SetAttributes(attribute.String("ctxhost.session", session), attribute.String("rpc.connect_rpc.error_code", code))
	if err != nil {
		sp.RecordError(err)
		sp.SetStatus(codes.Error, err.Error())
	}
	sp.End()
}

// traceTurn adds a prepared turn's figures and its compaction steps to
// the service call's span, when it is traced.
func traceTurn(ctx context.Context, turn engine.Turn) {
	sp := trace.SpanFromContext(ctx)
	p := turn.Prepared
	if !sp.IsRecording() || p == nil {
		return
	}
	sp.SetAttributes(attribute.Int("ctxhost.tokens.before", p.Before.Used), attribute.Int("ctxhost.tokens.sent", p.Budget.Used),
		attribute.Int("ctxhost.window", p.Budget.Window), attribute.String("ctxhost.action", string(p.Action)))
	if r := p.Compaction; r != nil {
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
}
