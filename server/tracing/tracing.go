// Package tracing exports the spans of `ctxhost serve` (its call path and
// its service calls) over OTLP, to the collector the server block's
// trace_endpoint names; without one nothing is traced.
package tracing

import (
	"context"
	"fmt"
	"net/url"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
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

// Tracer is a running exporter: Tracer gives the spans to it, Shutdown
// sends what is still buffered.
type Tracer struct {
	provider *sdktrace.TracerProvider
}

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
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio))))
	return &Tracer{provider: tp}, nil
}

// otlpHTTPURL is the traces URL of an OTLP/HTTP collector: its
// /v1/traces when the endpoint names no path.
func otlpHTTPURL(u *url.URL) string {
	v := *u
	if v.Path == "" || v.Path == "/" {
		v.Path = "/v1/traces"
	}
	return v.String()
}

// Tracer returns the tracer of ctxhost's spans.
func (t *Tracer) Tracer() trace.Tracer { return t.provider.Tracer("github.com/ctxhost/ctxhost/server") }

// Shutdown sends the buffered spans and stops the exporter.
func (t *Tracer) Shutdown(ctx context.Context) error { return t.provider.Shutdown(ctx) }
