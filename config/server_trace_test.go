package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestServerInspectorAndTracing(t *testing.T) {
	load := func(t *testing.T, body string) (Server, []string) {
		t.Helper()
		path := filepath.Join(t.TempDir(), "c.hcl")
		hcl := "model \"m\" { context_window = 8000 }\ncontext \"c\" { model = \"m\" }\n" + body
		if err := os.WriteFile(path, []byte(hcl), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, diags := Load([]string{path}, nil, nil)
		return cfg.Server, DiagnosticLines(diags)
	}
	s, diags := load(t, "")
	if len(diags) != 0 || !s.Inspector || s.TraceEndpoint != "" || s.TraceProtocol != "http/protobuf" || s.TraceSampleRatio != 1 {
		t.Fatalf("defaults: %+v %v", s, diags)
	}
	s, diags = load(t, "server {\n  inspector = false\n  trace_endpoint = \"http://collector:4317\"\n  trace_protocol = \"grpc\"\n  trace_sample_ratio = 0.25\n}\n")
	if len(diags) != 0 || s.Inspector || s.TraceEndpoint != "http://collector:4317" || s.TraceProtocol != "grpc" || s.TraceSampleRatio != 0.25 {
		t.Fatalf("set: %+v %v", s, diags)
	}
	_, diags = load(t, "server {\n  trace_endpoint = \"collector:4318\"\n  trace_protocol = \"zipkin\"\n  trace_sample_ratio = 0\n}\n")
	if len(diags) != 3 || !strings.Contains(strings.Join(diags, "\n"), "trace_endpoint") {
		t.Fatalf("invalid tracing: %v", diags)
	}
}
