// Command testplugin is the plugin binary of the pluginhost process tests.
// CTXHOST_TEST_MODE picks its behaviour: "" serves a context plugin,
// "assembler" an assembler, "garbage" fails the handshake, "traceback"
// writes a traceback to stderr and exits before it, "v2" speaks only
// protocol version 2.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/ctxhost/ctxhost/internal/wire"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/sdk/serve"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
)

func main() {
	switch os.Getenv("CTXHOST_TEST_MODE") {
	case "assembler":
		serve.Assembler(upper{})
	case "garbage":
		fmt.Println("this is not a go-plugin handshake line")
		time.Sleep(5 * time.Second)
	case "traceback":
		fmt.Fprintln(os.Stderr, "Traceback (most recent call last):\nModuleNotFoundError: No module named 'grpc'")
		os.Exit(1)
	case "v2":
		plugin.Serve(&plugin.ServeConfig{
			HandshakeConfig:  wire.Handshake,
			VersionedPlugins: map[int]plugin.PluginSet{2: {wire.PluginContext: &wire.GRPCPlugin{Register: func(*grpc.Server) {}}}},
			GRPCServer:       plugin.DefaultGRPCServer,
		})
	default:
		serve.Plugin(echo{})
	}
}

type echo struct{}

func (echo) Describe() sdk.PluginInfo {
	return sdk.PluginInfo{Name: "echo", Priority: 5, Compactable: true, Ops: []sdk.OpInfo{
		{Name: "set", Description: "set the text, or size bytes of words"},
		{Name: "print", Description: "print text to stdout"},
		{Name: "log", Description: "log msg at level"},
	}}
}

func (echo) NewSession(string) sdk.Session { return &echoSession{} }

type echoSession struct{ text string }

type echoArgs struct {
	Text  string `json:"text"`
	Size  int    `json:"size"`
	Level string `json:"level"`
}

// Component names itself after the binding the host says it is bound as.
func (s *echoSession) Component(ctx context.Context, _ string) (*sdk.Component, error) {
	return &sdk.Component{Name: sdk.Binding(ctx), Slot: sdk.SlotContext, Text: s.text}, nil
}

func (s *echoSession) Apply(_ context.Context, op string, raw json.RawMessage) (json.RawMessage, error) {
	var a echoArgs
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, sdk.InvalidArgs("%v", err)
	}
	switch op {
	case "set":
		if a.Size < 0 {
			return nil, sdk.InvalidArgs("negative size")
		}
		s.text = a.Text + strings.Repeat("word ", a.Size/5)
	case "print":
		fmt.Println(a.Text)
	case "log":
		sdk.Logger().Log(hclog.LevelFromString(a.Level), a.Text)
	default:
		return nil, sdk.UnknownOp(op)
	}
	return json.RawMessage(`{}`), nil
}

func (s *echoSession) Compact(_ context.Context, req sdk.CompactRequest) (sdk.CompactResult, error) {
	s.text = s.text[:len(s.text)/2]
	return sdk.CompactResult{Log: "halved"}, nil
}

func (s *echoSession) State() ([]byte, error) { return []byte(s.text), nil }

func (s *echoSession) Restore(b []byte) error {
	s.text = string(b)
	return nil
}

type upper struct{}

func (upper) Describe() sdk.AssemblerInfo {
	return sdk.AssemblerInfo{Name: "upper", Formats: []sdk.FormatInfo{{Name: "text", MediaType: "text/plain"}}}
}

func (upper) Assemble(_ context.Context, req sdk.AssembleRequest) (sdk.AssembleResult, error) {
	if req.Format != "text" {
		return sdk.AssembleResult{}, sdk.InvalidArgs("unknown format %q", req.Format)
	}
	var b strings.Builder
	for _, c := range req.Components {
		b.WriteString(strings.ToUpper(c.Text))
	}
	return sdk.AssembleResult{Payload: []byte(b.String()), MediaType: "text/plain"}, nil
}

// ReleaseSession says on stderr that session was released.
func (upper) ReleaseSession(session string) {
	fmt.Fprintf(os.Stderr, "upper released session %s\n", session)
}
