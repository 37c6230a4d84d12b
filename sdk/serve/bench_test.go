package serve

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/internal/wire/pb"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/hashicorp/go-hclog"
)

type fixedPlugin struct{ text string }

func (f fixedPlugin) Describe() sdk.PluginInfo      { return sdk.PluginInfo{Name: "fixed"} }
func (f fixedPlugin) NewSession(string) sdk.Session { return fixedSession(f) }

type fixedSession struct{ text string }

func (s fixedSession) Component(context.Context, string) (*sdk.Component, error) {
	return &sdk.Component{Name: "fixed", Slot: sdk.SlotContext, Text: s.text}, nil
}
func (s fixedSession) Apply(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, nil
}

// BenchmarkServerComponent measures what the SDK adds to one Component RPC
// in the plugin process: session lookup, the call, and conversion to pb.
func BenchmarkServerComponent(b *testing.B) {
	srv := &contextServer{local: sdk.NewLocalPlugin(fixedPlugin{text: strings.Repeat("x", 1024)}), log: hclog.NewNullLogger()}
	req := &pb.ComponentRequest{SessionId: "s", Encoding: "cl100k_base"}
	ctx := context.Background()
	for b.Loop() {
		if _, err := srv.Component(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}
