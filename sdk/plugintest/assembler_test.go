package plugintest_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/sdk/plugintest"
)

// joiner joins component texts and messages; flaw breaks it in one way.
type joiner struct {
	flaw  string
	calls atomic.Int64
	mu    sync.Mutex
	first map[string][]byte // "stale per session": each session's first payload
}

func (j *joiner) Describe() sdk.AssemblerInfo {
	return sdk.AssemblerInfo{Name: "joiner", Formats: []sdk.FormatInfo{{Name: "plain", MediaType: "text/plain"}}}
}

func (j *joiner) Assemble(_ context.Context, req sdk.AssembleRequest) (sdk.AssembleResult, error) {
	if req.Format != "plain" && j.flaw != "any format" {
		return sdk.AssembleResult{}, sdk.InvalidArgs("unknown format %q", req.Format)
	}
	var b strings.Builder
	for _, c := range req.Components {
		b.WriteString(c.Text)
		for _, m := range c.Messages {
			b.WriteString(m.Content)
		}
	}
	if j.flaw == "stale per session" && req.Session != "" {
		j.mu.Lock()
		defer j.mu.Unlock()
		if j.first == nil {
			j.first = map[string][]byte{}
		}
		if p, ok := j.first[req.Session]; ok {
			return sdk.AssembleResult{Payload: p, MediaType: "text/plain"}, nil
		}
		j.first[req.Session] = []byte(b.String())
	}
	if j.flaw == "nondeterministic" {
		fmt.Fprint(&b, j.calls.Add(1))
	}
	mt := "text/plain"
	if j.flaw == "wrong media type" {
		mt = "application/json"
	}
	return sdk.AssembleResult{Payload: []byte(b.String()), MediaType: mt}, nil
}

func TestSoundAssemblerPasses(t *testing.T) {
	plugintest.RunAssembler(t, &joiner{}, plugintest.AssemblerOptions{})
}

func TestEachAssemblerCheckCanFail(t *testing.T) {
	tests := []struct{ flaw, fail string }{
		{"nondeterministic", "[Formats Concurrent Session]"},
		{"stale per session", "[Session]"},
		{"wrong media type", "[Formats]"},
		{"any format", "[UnknownFormat]"},
	}
	for _, tt := range tests {
		t.Run(tt.flaw, func(t *testing.T) {
			target := sdk.NewLocalAssembler(&joiner{flaw: tt.flaw})
			opts := plugintest.AssemblerOptions{Concurrency: 4}
			r := plugintest.SampleRequest()
			opts.Request = &r
			var failed []string
			for _, check := range plugintest.AssemblerChecks {
				if err := check.Run(context.Background(), target, opts); err != nil {
					failed = append(failed, check.Name)
				}
			}
			if fmt.Sprint(failed) != tt.fail {
				t.Errorf("failed checks = %v, want %s", failed, tt.fail)
			}
		})
	}
}

// TestAssemblerBinary runs the kit against the pluginhost test plugin in
// assembler mode, as a real process.
func TestAssemblerBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) leaves it out")
	}
	bin, cleanup, err := plugintest.BuildBinary("../../pluginhost/testdata/testplugin", "ctxhost-assembler-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)
	t.Setenv("CTXHOST_TEST_MODE", "assembler")
	r := plugintest.SampleRequest()
	plugintest.RunAssemblerBinary(t, bin, plugintest.AssemblerOptions{Request: &r})
}
