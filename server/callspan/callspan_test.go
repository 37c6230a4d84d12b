package callspan

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// TestRecordBecomesSpan: a record's span has its name, kind, times,
// events (an exception among them) and attributes, its error as status,
// and continues the context's span.
func TestRecordBecomesSpan(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	r := New(tp.Tracer("test"), nil)
	parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled, Remote: true})
	c := r.Start(trace.ContextWithRemoteSpanContext(context.Background(), parent), "chat", trace.SpanKindServer)
	c.Event("read")
	c.Event("compaction", attribute.Int("freed", 7))
	c.Exception(errors.New("boom"), attribute.String("ctxhost.phase", "read"))
	c.Attrs = append(c.Attrs, attribute.String("a", "b"))
	c.Detail = "m"
	c.Err = errors.New("failed")
	r.End(c)
	if err := r.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	ended := rec.Ended()
	if len(ended) != 1 {
		t.Fatalf("%d spans, want 1", len(ended))
	}
	s := ended[0]
	if s.Name() != "chat m" || s.SpanKind() != trace.SpanKindServer || s.Parent().SpanID() != parent.SpanID() || s.SpanContext().TraceID() != parent.TraceID() {
		t.Errorf("span %q kind %v parent %v trace %v", s.Name(), s.SpanKind(), s.Parent(), s.SpanContext().TraceID())
	}
	var names []string
	for _, e := range s.Events() {
		names = append(names, e.Name)
		if e.Time.Before(s.StartTime()) || e.Time.After(s.EndTime()) {
			t.Errorf("event %s at %v, outside the span %v-%v", e.Name, e.Time, s.StartTime(), s.EndTime())
		}
	}
	if got := names; len(got) != 4 || got[0] != "read" || got[1] != "compaction" || got[2] != "exception" || got[3] != "exception" {
		t.Errorf("events %v, want read, compaction, the phase's exception and the call's", got)
	}
	if len(s.Attributes()) != 1 || s.Attributes()[0] != attribute.String("a", "b") {
		t.Errorf("attributes %v", s.Attributes())
	}
	if s.Status().Code != codes.Error || s.Status().Description != "failed" {
		t.Errorf("status %v", s.Status())
	}
}

// TestSamplerLeavesCallsOut: a call the sampler drops has no record.
func TestSamplerLeavesCallsOut(t *testing.T) {
	tp := sdktrace.NewTracerProvider()
	r := New(tp.Tracer("test"), sdktrace.NeverSample())
	defer r.Close(context.Background())
	if c := r.Start(context.Background(), "chat", trace.SpanKindServer); c != nil {
		t.Fatal("a record for a call the sampler drops")
	}
	half := New(tp.Tracer("test"), sdktrace.TraceIDRatioBased(0.5))
	defer half.Close(context.Background())
	n := 0
	for range 2000 {
		if c := half.Start(context.Background(), "chat", trace.SpanKindServer); c != nil {
			n++
			half.End(c)
		}
	}
	if n < 800 || n > 1200 {
		t.Errorf("%d of 2,000 calls sampled at a ratio of 0.5", n)
	}
}

// blockedProcessor holds every span's end until released: a collector
// that does not keep up.
type blockedProcessor struct {
	sdktrace.SpanProcessor
	release chan struct{}
}

func (p blockedProcessor) OnEnd(s sdktrace.ReadOnlySpan) {
	<-p.release
	p.SpanProcessor.OnEnd(s)
}

// TestFullQueueDrops: with spans not made as fast as calls end, End never
// waits; the records past the queue are dropped and counted, and every
// record ended is a span or counted.
func TestFullQueueDrops(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	p := blockedProcessor{SpanProcessor: rec, release: make(chan struct{})}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(p))
	r := New(tp.Tracer("test"), nil)
	const calls = 3*QueueSize + 100
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range calls {
			r.End(r.Start(context.Background(), "chat", trace.SpanKindServer))
		}
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("End waited for the spans to be made")
	}
	// The goroutine holds at most one batch (blocked on its first span),
	// the queue at most QueueSize more.
	if d := r.Dropped(); d < calls-2*QueueSize {
		t.Errorf("dropped %d of %d, want at least %d", d, calls, calls-2*QueueSize)
	}
	close(p.release)
	if err := r.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := uint64(len(rec.Ended())) + r.Dropped(); got != calls {
		t.Errorf("%d spans and %d dropped of %d calls", len(rec.Ended()), r.Dropped(), calls)
	}
}

// BenchmarkRecord is what a call pays: its record started, six phase
// events, the attributes, ended and queued (the spans made in the
// background, as fast as they come or dropped).
func BenchmarkRecord(b *testing.B) {
	tp := sdktrace.NewTracerProvider()
	r := New(tp.Tracer("bench"), nil)
	defer r.Close(context.Background())
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		c := r.Start(context.Background(), "chat", trace.SpanKindServer)
		for _, p := range []string{"read", "reconcile", "prepare", "upstream", "relay", "record"} {
			c.Event(p)
		}
		c.Attrs = append(c.Attrs, attribute.String("gen_ai.operation.name", "chat"), attribute.Int("gen_ai.usage.input_tokens", 900))
		r.End(c)
	}
}

// BenchmarkSpan is what the recorder's goroutine pays for a record: the
// SDK's span started, its events and attributes, ended.
func BenchmarkSpan(b *testing.B) {
	tp := sdktrace.NewTracerProvider()
	r := &Recorder{tracer: tp.Tracer("bench")}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		c := &Record{Name: "chat", Kind: trace.SpanKindServer, Start: time.Now()}
		for _, p := range []string{"read", "reconcile", "prepare", "upstream", "relay", "record"} {
			c.Event(p)
		}
		c.Attrs = append(c.Attrs, attribute.String("gen_ai.operation.name", "chat"), attribute.Int("gen_ai.usage.input_tokens", 900))
		c.End = time.Now()
		r.span(c)
	}
}
