package sdk

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/internal/wire/pb"
	"github.com/hashicorp/go-hclog"
)

type fixedPlugin struct{ text string }

func (f fixedPlugin) Describe() PluginInfo      { return PluginInfo{Name: "fixed"} }
func (f fixedPlugin) NewSession(string) Session { return fixedSession(f) }

type fixedSession struct{ text string }

func (s fixedSession) Component(context.Context, string) (*Component, error) {
	return &Component{Name: "fixed", Slot: SlotContext, Text: s.text}, nil
}
func (s fixedSession) Apply(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, nil
}

// BenchmarkServerComponent measures what the SDK adds to one Component RPC
// in the plugin process: session lookup, the call, and conversion to pb.
func BenchmarkServerComponent(b *testing.B) {
	srv := &contextServer{local: NewLocalPlugin(fixedPlugin{text: strings.Repeat("x", 1024)}), log: hclog.NewNullLogger()}
	req := &pb.ComponentRequest{SessionId: "s", Encoding: "cl100k_base"}
	ctx := context.Background()
	for b.Loop() {
		if _, err := srv.Component(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkConvertComponentMessages measures both conversions of a
// 50-message component (host side and plugin side of one round trip).
func BenchmarkConvertComponentMessages(b *testing.B) {
	c := &Component{Name: "h", Slot: SlotHistory, Messages: make([]Message, 50)}
	for i := range c.Messages {
		c.Messages[i] = Message{Role: RoleUser, Content: strings.Repeat("y", 100)}
	}
	for b.Loop() {
		_ = fromProtoComponent(toProtoComponent(c))
	}
}
