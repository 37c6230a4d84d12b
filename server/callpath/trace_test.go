package callpath

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/ctxhost/ctxhost/engine"
	"github.com/ctxhost/ctxhost/provider"
	"github.com/ctxhost/ctxhost/report"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/server/callspan"
)

// usageUpstream answers every Chat Completions call with a text and its
// usage, cached tokens included.
var usageUpstream = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"stop",`+
		`"message":{"role":"assistant","content":"Done."}}],"usage":{"prompt_tokens":900,"completion_tokens":7,"total_tokens":907,`+
		`"prompt_tokens_details":{"cached_tokens":640}}}`)
})

// smallHCL is pathHCL at a window a long conversation overflows.
var smallHCL = strings.Replace(fmt.Sprintf(pathHCL, "cl100k_base"), "1000000", "3000", 1)

// conversation is a Chat Completions conversation of n tool results of
// about 200 tokens each.
func conversation(n int) *strings.Builder {
	var b strings.Builder
	b.WriteString(`{"role":"system","content":"Be brief."},{"role":"user","content":"Read the files."}`)
	for k := range n {
		fmt.Fprintf(&b, `,{"role":"assistant","content":null,"tool_calls":[{"id":"c%d","type":"function","function":{"name":"read","arguments":"{\"n\":%d}"}}]}`, k, k)
		fmt.Fprintf(&b, `,{"role":"tool","tool_call_id":"c%d","content":%q}`, k, strings.Repeat(fmt.Sprintf("line %d of file %d\n", k, k), 40))
	}
	return &b
}

// chatCall posts the conversation conv (its messages, comma-separated)
// to p as session id.
func chatCall(t testing.TB, p *testPath, id, conv string) {
	t.Helper()
	postChat(t, p.url, id, conv)
}

// TestCallIsTraced: a call's span carries the GenAI conventions'
// attributes (operation, provider, model, input, output and cached
// tokens); the call is that one span, its phases events on it in order,
// the compaction and each of its steps events after the prepare phase's.
func TestCallIsTraced(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	p := newTestPathOpts(t, usageUpstream, smallHCL, 0, false, nil, func(o *Options) { o.Spans = newSpans(t, tp, nil) })
	chatCall(t, p, "traced", conversation(20).String()) // about 4,000 tokens at a 3,000 window: compacted
	// The call's span ends once the answer is out: wait for it.
	var spans []sdktrace.ReadOnlySpan
	byName := map[string]sdktrace.ReadOnlySpan{}
	for deadline := time.Now().Add(time.Minute); byName["chat gpt-4.1"] == nil && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		spans = rec.Ended()
		for _, s := range spans {
			byName[s.Name()] = s
		}
	}
	root, ok := byName["chat gpt-4.1"]
	if !ok {
		t.Fatalf("no span \"chat gpt-4.1\" among %v", names(spans))
	}
	if root.SpanKind() != trace.SpanKindServer {
		t.Errorf("the call's span is of kind %v", root.SpanKind())
	}
	attrs := map[attribute.Key]attribute.Value{}
	for _, kv := range root.Attributes() {
		attrs[kv.Key] = kv.Value
	}
	for k, want := range map[attribute.Key]any{
		attrOperation: "chat", attrProvider: "openai", attrRequestModel: "gpt-4.1", attrInputTokens: int64(900),
		attrOutputTokens: int64(7), attrCacheRead: int64(640), "ctxhost.session": "traced", "ctxhost.outcome": "ok",
		"http.response.status_code": int64(200),
	} {
		if got := attrs[k].AsInterface(); got != want {
			t.Errorf("%s = %v, want %v", k, got, want)
		}
	}
	if sent, before := attrs["ctxhost.tokens.sent"].AsInt64(), attrs["ctxhost.tokens.before"].AsInt64(); sent <= 0 || sent >= before {
		t.Errorf("tokens sent %d, before %d: want fewer sent (compacted)", sent, before)
	}
	if len(spans) != 1 {
		t.Errorf("spans %v, want the call's alone", names(spans))
	}
	var events []string
	for _, e := range root.Events() {
		events = append(events, e.Name)
	}
	got := strings.Join(events, ",")
	if !strings.HasPrefix(got, "read,reconcile,prepare,compaction,compaction.step") || !strings.HasSuffix(got, "upstream,relay,record") {
		t.Errorf("the call's events are %v, want its phases in order with the compaction and its steps after prepare", events)
	}
	prev := root.StartTime()
	for _, e := range root.Events() {
		if e.Time.Before(prev) || e.Time.After(root.EndTime()) {
			t.Errorf("event %s at %v: not within the span, after the one before", e.Name, e.Time)
		}
		prev = e.Time
	}
}

// newSpans is a call span recorder making its spans with tp, of the
// calls sampler takes (nil: all), closed when t ends.
func newSpans(t testing.TB, tp *sdktrace.TracerProvider, sampler sdktrace.Sampler) *callspan.Recorder {
	spans := callspan.New(tp.Tracer("test"), sampler)
	t.Cleanup(func() { _ = spans.Close(context.Background()) })
	return spans
}

func names(spans []sdktrace.ReadOnlySpan) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name())
	}
	return out
}

// BenchmarkTracing is what tracing adds to a call's latency, as a share
// of what the call path adds to it: the same steady call (a
// conversation of 20 tool results, about 4,000 tokens, each call
// appending an answer and a new request) posted three ways in turn,
// their order rotating so that the machine's load falls on all alike:
// direct to the upstream, off through the call path untraced, on through
// it traced with every call sampled, its spans made by the recorder and
// batched to an exporter that keeps nothing (as tracing.Start makes
// them). It reports each way's median ns/call, added-% = the median of
// the iterations' on - off over that of their off - direct, and the load
// average of the machine as the run ended.
func BenchmarkTracing(b *testing.B) {
	hcl := fmt.Sprintf(pathHCL, "cl100k_base")
	up := httptest.NewServer(usageUpstream)
	b.Cleanup(up.Close)
	off := newTestPathOpts(b, usageUpstream, hcl, 0, false, nil, nil)
	on := newTestPathOpts(b, usageUpstream, hcl, 0, false, nil, func(o *Options) { o.Spans = benchSpans(b, nil) })
	urls := []string{up.URL, off.url, on.url}
	conv := conversation(20)
	for _, u := range urls {
		postChat(b, u, "bench", conv.String())
	}
	took := [3][]time.Duration{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		fmt.Fprintf(conv, `,{"role":"assistant","content":"Done."},{"role":"user","content":"Next, %d."}`, i)
		body := conv.String()
		for k := range 3 {
			w := (i + k) % 3
			start := time.Now()
			postChat(b, urls[w], "bench", body)
			took[w] = append(took[w], time.Since(start))
		}
	}
	b.StopTimer()
	median := func(d []time.Duration) float64 {
		d = slices.Clone(d)
		slices.Sort(d)
		return float64(d[len(d)/2].Nanoseconds())
	}
	// The added shares are the medians of each iteration's differences:
	// the three calls of an iteration are of the same conversation, and
	// close in time.
	added, path := make([]time.Duration, b.N), make([]time.Duration, b.N)
	for i := range b.N {
		added[i], path[i] = took[2][i]-took[1][i], took[1][i]-took[0][i]
	}
	b.ReportMetric(median(took[0]), "direct-ns/call")
	b.ReportMetric(median(took[1]), "off-ns/call")
	b.ReportMetric(median(took[2]), "on-ns/call")
	b.ReportMetric(100*median(added)/median(path), "added-%")
	if l, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f, err := strconv.ParseFloat(strings.Fields(string(l))[0], 64); err == nil {
			b.ReportMetric(f, "load")
		}
	}
}

// benchSpans is a recorder of every call its sampler takes (nil: all),
// its spans batched to an exporter that keeps nothing, as tracing.Start
// makes them.
func benchSpans(b testing.TB, sampler sdktrace.Sampler) *callspan.Recorder {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithBatcher(discardExporter{}, sdktrace.WithBlocking()))
	spans := callspan.New(tp.Tracer("bench"), sampler)
	b.Cleanup(func() {
		_ = spans.Close(context.Background())
		_ = tp.Shutdown(context.Background())
	})
	return spans
}

// BenchmarkSpans is what tracing adds to one call's path by itself: the
// record of the call's span, its six phases and a compaction of two steps
// as events, queued to a recorder sampling everything (the span is made
// from it off the call's path: callspan's BenchmarkSpan).
func BenchmarkSpans(b *testing.B) {
	h := &Handler{spans: benchSpans(b, nil)}
	u := &upstream{Upstream: Upstream{Name: "openai", Kind: KindOpenAI}}
	r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil)
	p := &engine.Prepared{Budget: sdk.Budget{Window: 8192, Used: 5000}, Before: sdk.Budget{Used: 9000},
		Compaction: &report.CompactionReport{Reason: "lazy", Before: 9000, After: 5000, Freed: 4000, Met: true,
			Steps: []report.CompactionStep{{Component: "conversation_history", Action: "mask", Asked: 900, Freed: 2000}, {Component: "conversation_history", Action: "compact", Asked: 2000, Freed: 2000}}}}
	req := &request{}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		c := &call{h: h, u: u, d: chatDialect{}, r: r, req: req, session: "bench", status: 200, usage: provider.Usage{Known: true, Prompt: 5000, Completion: 20, CacheRead: 4000}}
		c.startTrace()
		for _, name := range []string{"read", "reconcile", "prepare", "upstream", "relay", "record"} {
			end := c.phase(name)
			if name == "prepare" {
				c.tracePrepared(p)
			}
			end(nil)
		}
		c.endTrace(nil, "ok")
	}
}
