package python_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/ctxhost/ctxhost/pluginhost"
	"github.com/ctxhost/ctxhost/sdk/plugintest"
	"github.com/hashicorp/go-hclog"
)

// BenchmarkRoundTrip measures one Component call (a gRPC round trip with
// a small text component) against the Go hello plugin, with and without
// AutoMTLS, and against the Python example: compare the ratios within one
// run.
func BenchmarkRoundTrip(b *testing.B) {
	requirePython(b)
	hello, cleanup, err := plugintest.BuildBinary("../hello", "ctxhost-plugin-hello")
	if err != nil {
		b.Fatal(err)
	}
	defer cleanup()
	for _, tt := range []struct {
		name       string
		path       string
		noAutoMTLS bool
	}{
		{"go-hello", hello, false},
		{"go-hello-no-mtls", hello, true},
		{"python-pynotes", pluginPath(b), true},
	} {
		b.Run(tt.name, func(b *testing.B) {
			ctx := context.Background()
			c, err := pluginhost.Launch(ctx, pluginhost.Spec{Name: "notes", Kind: pluginhost.KindContext,
				Path: tt.path, NoAutoMTLS: tt.noAutoMTLS, Logger: hclog.NewNullLogger()})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Kill()
			if _, err := c.Context.Apply(ctx, "s", "add", json.RawMessage(`{"text":"buy milk"}`)); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := c.Context.Component(ctx, "s", "approximate"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
