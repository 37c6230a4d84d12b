package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpCollector is an in-process OTLP/HTTP receiver keeping each span's
// attributes by span name.
type otlpCollector struct {
	mu    sync.Mutex
	spans map[string][]map[string]string
}

func (c *otlpCollector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req collectortrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				attrs := map[string]string{}
				for _, kv := range s.GetAttributes() {
					v := kv.GetValue()
					attrs[kv.GetKey()] = v.GetStringValue() + fmt.Sprint(v.GetIntValue())
				}
				for _, e := range s.GetEvents() {
					attrs["event:"+e.GetName()] = "yes"
				}
				c.spans[s.GetName()] = append(c.spans[s.GetName()], attrs)
			}
		}
	}
	c.mu.Unlock()
	b, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(b)
}

// TestServeTracesOverOTLP: a serve whose server block names a collector
// sends it one span per call-path call, with the GenAI attributes and
// the phases as its events, and a span per service call; they arrive by the
// time serve has stopped.
func TestServeTracesOverOTLP(t *testing.T) {
	c := &otlpCollector{spans: map[string][]map[string]string{}}
	col := httptest.NewServer(c)
	defer col.Close()
	_, srv, _ := startCallPath(t, 1000, fmt.Sprintf("trace_endpoint = %q", col.URL))
	base := "http://" + srv.addr
	conv := newChatConversation("traced", 120) // past the 8k window: compacted
	for range 3 {
		if err := postInspected(base, "", "traced", conv); err != nil {
			t.Fatal(err)
		}
	}
	res, err := http.Post(base+"/ctxhost.service.v1.ContextService/ListSessions", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	srv.stop(t) // sends the spans still buffered
	c.mu.Lock()
	defer c.mu.Unlock()
	calls := c.spans["chat gpt-4.1"]
	if len(calls) != 3 {
		t.Fatalf("%d call spans, want 3; spans: %v", len(calls), keys(c.spans))
	}
	last := calls[2]
	for k, want := range map[string]string{"gen_ai.operation.name": "chat0", "gen_ai.provider.name": "openai0",
		"gen_ai.request.model": "gpt-4.10", "ctxhost.session": "traced0", "http.response.status_code": "200"} {
		if last[k] != want {
			t.Errorf("%s = %q, want %q", k, last[k], want)
		}
	}
	for _, k := range []string{"gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "gen_ai.usage.cache_read.input_tokens"} {
		if _, ok := last[k]; !ok {
			t.Errorf("the call's span has no %s: %v", k, last)
		}
	}
	for _, phase := range []string{"read", "reconcile", "prepare", "upstream", "relay", "record"} {
		if len(c.spans[phase]) != 0 {
			t.Errorf("%d %s spans: a phase is an event of its call's span, not a span", len(c.spans[phase]), phase)
		}
		for i, call := range calls {
			if call["event:"+phase] != "yes" {
				t.Errorf("call %d's span has no %s event", i, phase)
			}
		}
	}
	compacted := false
	for _, call := range calls {
		compacted = compacted || call["event:compaction.step"] == "yes"
	}
	if !compacted {
		t.Error("no call span has a compaction step event (the conversation is past the window)")
	}
	if rpc := c.spans["ctxhost.service.v1.ContextService/ListSessions"]; len(rpc) != 1 || rpc[0]["rpc.method"] != "ListSessions0" {
		t.Errorf("service call spans %v", rpc)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
