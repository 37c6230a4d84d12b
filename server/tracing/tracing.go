// Package tracing exports the spans of `ctxhost serve` (its call path and
// its service calls) over OTLP, to the collector the server block's
// trace_endpoint names; without one nothing is traced.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/ctxhost/ctxhost/server/callspan"
)

// Protocols of the OTLP exporter.
const (
	ProtocolHTTP = "http/protobuf"
	ProtocolGRPC = "grpc"
)

// Config names the collector and how to reach it.
type Config struct {
	// Endpoint is the collector's URL: http://HOST:4318 (OTLP/HTTP, spans
	// posted to /v1/traces unless the URL has a path) or, with Protocol
	// grpc, http://HOST:4317 (https:// for TLS either way).
	Endpoint string
	// Protocol is ProtocolHTTP (the default) or ProtocolGRPC.
	Protocol string
	// SampleRatio is the share of calls traced, 0 to 1 (0: 1, every call).
	SampleRatio float64
	// Version is ctxhost's version, the service.version of every span.
	Version string
}

// Tracer is a running exporter: Tracer gives the service calls' spans to
// it, Calls the call path's records, Shutdown sends what is still
// buffered.
type Tracer struct {
	provider *sdktrace.TracerProvider
	// calls makes the call path's spans off its hot path, with
	// callsProvider: every record it queues is a span (the sampling is
	// decided when a call starts), and its batch processor waits for room
	// rather than drop, so that a span is dropped in one place, counted:
	// the recorder's queue.
	calls         *callspan.Recorder
	callsProvider *sdktrace.TracerProvider
	exporter      sdktrace.SpanExporter
}

// sharedExporter is the exporter of both providers: its Shutdown is the
// Tracer's, once both providers are down.
type sharedExporter struct{ sdktrace.SpanExporter }

func (sharedExporter) Shutdown(context.Context) error { return nil }

// Start returns a tracer exporting to cfg's collector. Spans are sent in
// batches in the background: a collector down or slow costs a call
// nothing (spans past the queue are dropped).
func Start(ctx context.Context, cfg Config) (*Tracer, error) {
	u, err := url.Parse(cfg.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("trace_endpoint %q: want http://HOST:PORT or https://HOST:PORT", cfg.Endpoint)
	}
	var exp sdktrace.SpanExporter
	switch cfg.Protocol {
	case "", ProtocolHTTP:
		exp, err = otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(otlpHTTPURL(u)))
	case ProtocolGRPC:
		exp, err = otlptracegrpc.New(ctx, otlptracegrpc.WithEndpointURL(cfg.Endpoint))
	default:
		return nil, fmt.Errorf("trace_protocol %q: want %q or %q", cfg.Protocol, ProtocolHTTP, ProtocolGRPC)
	}
	if err != nil {
		return nil, fmt.Errorf("OTLP exporter for %s: %w", cfg.Endpoint, err)
	}
	ratio := cfg.SampleRatio
	if ratio <= 0 || ratio > 1 {
		ratio = 1
	}
	res := resource.NewSchemaless(attribute.String("service.name", "ctxhost"), attribute.String("service.version", cfg.Version))
	sampler := sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio))
	shared := sharedExporter{exp}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(shared), sdktrace.WithResource(res), sdktrace.WithSampler(sampler))
	cp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(shared, sdktrace.WithBlocking()), sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.AlwaysSample()))
	var callSampler sdktrace.Sampler // every call: nothing to decide (the call path continues no caller's trace)
	if ratio < 1 {
		callSampler = sampler
	}
	calls := callspan.New(cp.Tracer(scope), callSampler)
	return &Tracer{provider: tp, calls: calls, callsProvider: cp, exporter: exp}, nil
}

// scope is the instrumentation scope of ctxhost's spans.
const scope = "github.com/ctxhost/ctxhost/server"

// otlpHTTPURL is the traces URL of an OTLP/HTTP collector: its
// /v1/traces when the endpoint names no path.
func otlpHTTPURL(u *url.URL) string {
	v := *u
	if v.Path == "" || v.Path == "/" {
		v.Path = "/v1/traces"
	}
	return v.String()
}

// Tracer returns the tracer of the service calls' spans.
func (t *Tracer) Tracer() trace.Tracer { return t.provider.Tracer(scope) }

// Calls returns the recorder of the call path's spans.
func (t *Tracer) Calls() *callspan.Recorder { return t.calls }

// Shutdown makes the spans of the call path's records still queued,
// sends the buffered spans and stops the exporter.
func (t *Tracer) Shutdown(ctx context.Context) error {
	var errs []error
	if err := t.calls.Close(ctx); err != nil {
		errs = append(errs, fmt.Errorf("call path spans: %w", err))
	}
	for _, p := range []*sdktrace.TracerProvider{t.callsProvider, t.provider} {
		if err := p.Shutdown(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if err := t.exporter.Shutdown(ctx); err != nil {
		errs = append(errs, fmt.Errorf("OTLP exporter: %w", err))
	}
	return errors.Join(errs...)
}
