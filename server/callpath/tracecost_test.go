package callpath

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/ctxhost/ctxhost/server/callspan"
)

// discardExporter takes every batch of spans and keeps nothing: what an
// OTLP exporter costs the call up to the wire.
type discardExporter struct{}

func (discardExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardExporter) Shutdown(context.Context) error                             { return nil }

// BenchmarkTracingCost is one steady call three ways, for counting what
// tracing adds to the call path's added cost with an instruction counter
// rather than a clock (see docs/TRACING.md): direct posts the call to the
// upstream itself; off through the call path untraced; on through the
// call path traced, every call sampled, its spans batched to an exporter
// that discards them; tenth the same with a tenth of the calls sampled
// (trace_sample_ratio = 0.1). Each iteration appends an answer and a new request
// to a conversation of 20 tool results (about 4,000 tokens) and posts
// it, so iterations N+1 to M of an M-iteration run cost the same in
// every run; the difference of two runs' counts is those calls alone.
func BenchmarkTracingCost(b *testing.B) {
	hcl := fmt.Sprintf(pathHCL, "cl100k_base")
	for _, mode := range []string{"direct", "off", "on", "tenth"} {
		b.Run(mode, func(b *testing.B) {
			var url string
			switch mode {
			case "direct":
				up := httptest.NewServer(usageUpstream)
				b.Cleanup(up.Close)
				url = up.URL
			case "off":
				url = newTestPathOpts(b, usageUpstream, hcl, 0, false, nil, nil).url
			case "on", "tenth":
				var sampler sdktrace.Sampler
				if mode == "tenth" {
					sampler = sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0.1)) // trace_sample_ratio = 0.1
				}
				spans := benchSpans(b, sampler)
				url = newTestPathOpts(b, usageUpstream, hcl, 0, false, nil, func(o *Options) { o.Spans = spans }).url
			}
			conv := conversation(20)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				fmt.Fprintf(conv, `,{"role":"assistant","content":"Done."},{"role":"user","content":"Next, %d."}`, i)
				postChat(b, url, "bench", conv.String())
			}
		})
	}
}

// postChat posts the conversation conv to url's Chat Completions
// endpoint as session id and reads the answer.
func postChat(t testing.TB, url, id, conv string) {
	t.Helper()
	body := `{"model":"gpt-4.1","max_tokens":256,"messages":[` + conv + `]}`
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(SessionHeader, id)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("HTTP %d %s", res.StatusCode, got)
	}
}

// TestUnsampledCallMakesNoSpans: a call the sampler leaves out is
// answered as any other and records no span, its phases' neither.
func TestUnsampledCallMakesNoSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	spans := callspan.New(tp.Tracer("test"), sdktrace.NeverSample())
	p := newTestPathOpts(t, usageUpstream, smallHCL, 0, false, nil, func(o *Options) { o.Spans = spans })
	chatCall(t, p, "unsampled", conversation(20).String())
	if err := spans.Close(context.Background()); err != nil { // every record queued has its span
		t.Fatal(err)
	}
	if started := rec.Started(); len(started) != 0 {
		t.Fatalf("%d spans started for an unsampled call, want none", len(started))
	}
}

// TestDroppedSpansCounted: a traced call path's metrics count the spans
// its recorder dropped (ctxhost_trace_spans_dropped_total); an untraced
// one has no such metric.
func TestDroppedSpansCounted(t *testing.T) {
	names := func(p *testPath) map[string]bool {
		out := map[string]bool{}
		ch := make(chan *prometheus.Desc, 100)
		for _, c := range p.h.Metrics().Collectors() {
			c.Describe(ch)
		}
		close(ch)
		for d := range ch {
			out[d.String()] = true
		}
		return out
	}
	has := func(m map[string]bool) bool {
		for d := range m {
			if strings.Contains(d, `"ctxhost_trace_spans_dropped_total"`) {
				return true
			}
		}
		return false
	}
	tp := sdktrace.NewTracerProvider()
	traced := newTestPathOpts(t, usageUpstream, smallHCL, 0, false, nil, func(o *Options) { o.Spans = newSpans(t, tp, nil) })
	if !has(names(traced)) {
		t.Error("a traced call path has no ctxhost_trace_spans_dropped_total")
	}
	if has(names(newTestPathOpts(t, usageUpstream, smallHCL, 0, false, nil, nil))) {
		t.Error("an untraced call path has ctxhost_trace_spans_dropped_total")
	}
}
