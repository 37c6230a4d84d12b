package callpath

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
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
	p := newTestPathOpts(t, usageUpstream, smallHCL, 0, false, nil, func(o *Options) { o.Tracer = tp.Tracer("test") })
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

func names(spans []sdktrace.ReadOnlySpan) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name())
	}
	return out
}

// BenchmarkTracing is the cost of a call with tracing on (spans to an
// SDK tracer provider, sampling every call, exporting nowhere) against
// the same call untraced: two call paths, one traced, called in turn
// with the same conversation (40 messages, each call appending the
// answer and a new request: the call path's steady turn), so that the
// load of the machine falls on both alike. It reports each one's
// ns/call and the traced one's added share, added-%.
func BenchmarkTracing(b *testing.B) {
	off := newTestPathOpts(b, usageUpstream, fmt.Sprintf(pathHCL, "cl100k_base"), 0, false, nil, nil)
	on := newTestPathOpts(b, usageUpstream, fmt.Sprintf(pathHCL, "cl100k_base"), 0, false, nil, func(o *Options) {
		o.Tracer = sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample())).Tracer("bench")
	})
	conv := conversation(20)
	chatCall(b, off, "bench", conv.String())
	chatCall(b, on, "bench", conv.String())
	var tookOff, tookOn time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		fmt.Fprintf(conv, `,{"role":"assistant","content":"Done."},{"role":"user","content":"Next, %d."}`, i)
		body := conv.String()
		first, second := off, on
		if i%2 == 1 {
			first, second = on, off
		}
		start := time.Now()
		chatCall(b, first, "bench", body)
		mid := time.Now()
		chatCall(b, second, "bench", body)
		end := time.Now()
		if first == off {
			tookOff, tookOn = tookOff+mid.Sub(start), tookOn+end.Sub(mid)
		} else {
			tookOn, tookOff = tookOn+mid.Sub(start), tookOff+end.Sub(mid)
		}
	}
	b.ReportMetric(float64(tookOff.Nanoseconds())/float64(b.N), "off-ns/call")
	b.ReportMetric(float64(tookOn.Nanoseconds())/float64(b.N), "on-ns/call")
	b.ReportMetric(100*(float64(tookOn)-float64(tookOff))/float64(tookOff), "added-%")
}

// BenchmarkSpans is what tracing adds to one call by itself: the call's
// span, its six phases and a compaction of two steps as events,
// to an SDK tracer provider sampling everything. Against
// BenchmarkTracing's off-ns/call it is the share tracing adds.
func BenchmarkSpans(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
	h := &Handler{tracer: tp.Tracer("bench")}
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
