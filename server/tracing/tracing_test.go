package tracing

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// collector is an in-process OTLP receiver: it keeps the names and
// attributes of the spans it receives.
type collector struct {
	collectortrace.UnimplementedTraceServiceServer
	mu    sync.Mutex
	spans map[string]map[string]string // span name -> attribute -> value
	paths []string
}

func newCollector() *collector { return &collector{spans: map[string]map[string]string{}} }

func (c *collector) take(req *collectortrace.ExportTraceServiceRequest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		res := map[string]string{}
		for _, kv := range rs.GetResource().GetAttributes() {
			res[kv.GetKey()] = kv.GetValue().GetStringValue()
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				attrs := map[string]string{"service.name": res["service.name"]}
				for _, kv := range s.GetAttributes() {
					attrs[kv.GetKey()] = kv.GetValue().String()
				}
				c.spans[s.GetName()] = attrs
			}
		}
	}
}

// Export implements the OTLP gRPC trace service.
func (c *collector) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	c.take(req)
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

// ServeHTTP implements OTLP/HTTP (protobuf bodies).
func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req collectortrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	c.paths = append(c.paths, r.URL.Path)
	c.mu.Unlock()
	c.take(&req)
	b, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(b)
}

func exportOne(t *testing.T, cfg Config) {
	t.Helper()
	tr, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, sp := tr.Tracer().Start(context.Background(), "chat gpt-4.1")
	sp.End()
	if err := tr.Shutdown(context.Background()); err != nil { // sends the batch
		t.Fatal(err)
	}
}

func TestExportOverOTLPHTTP(t *testing.T) {
	c := newCollector()
	srv := httptest.NewServer(c)
	defer srv.Close()
	exportOne(t, Config{Endpoint: srv.URL, Version: "v-test"})
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.spans["chat gpt-4.1"]; !ok || len(c.paths) == 0 || c.paths[0] != "/v1/traces" {
		t.Fatalf("received %v at %v, want the span at /v1/traces", c.spans, c.paths)
	}
	if got := c.spans["chat gpt-4.1"]["service.name"]; got != "ctxhost" {
		t.Errorf("service.name %q", got)
	}
}

func TestExportOverOTLPGRPC(t *testing.T) {
	c := newCollector()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	collectortrace.RegisterTraceServiceServer(gs, c)
	go func() { _ = gs.Serve(ln) }()
	defer gs.Stop()
	exportOne(t, Config{Endpoint: "http://" + ln.Addr().String(), Protocol: ProtocolGRPC})
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.spans["chat gpt-4.1"]; !ok {
		t.Fatalf("received %v", c.spans)
	}
}

func TestStartRefusesBadEndpoints(t *testing.T) {
	for _, cfg := range []Config{{Endpoint: "collector:4318"}, {Endpoint: "ftp://x:1"}, {Endpoint: "http://x:4318", Protocol: "thrift"}} {
		if _, err := Start(context.Background(), cfg); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
}
