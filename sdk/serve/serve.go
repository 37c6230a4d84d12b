// Package serve runs a plugin written with package sdk as a ctxhost plugin
// process: it speaks the go-plugin handshake on stdout and serves the
// ctxhost.plugin.v1 gRPC protocol until the host goes away. A plugin's main
// is one call:
//
//	func main() { serve.Plugin(myPlugin{}) }       // a context plugin
//	func main() { serve.Assembler(myAssembler{}) } // an assembler
//
// Serving lives here, apart from package sdk, so that the types, interfaces
// and helpers a plugin (or its tests) uses stay free of gRPC and go-plugin.
package serve

import (
	"fmt"
	"os"

	"github.com/ctxhost/ctxhost/internal/wire"
	"github.com/ctxhost/ctxhost/internal/wire/pb"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
)

// Option adjusts how Plugin and Assembler serve.
type Option func(*config)

type config struct{ maxMessageBytes int }

// WithMaxMessageBytes sets the gRPC message size limit (both directions)
// used when the host does not set CTXHOST_GRPC_MAX_MESSAGE_BYTES; the
// host's value always wins so both ends agree. Default 256 MiB.
func WithMaxMessageBytes(n int) Option {
	return func(c *config) { c.maxMessageBytes = n }
}

// Plugin runs a context plugin process: it speaks the go-plugin handshake
// on stdout, serves gRPC until the host goes away, and never returns
// normally. Call it from main. Sessions are kept as sdk.LocalPlugin keeps
// them; log with sdk.Logger().
func Plugin(p sdk.Plugin, opts ...Option) {
	local := sdk.NewLocalPlugin(p)
	run(wire.PluginContext, func(s *grpc.Server) {
		pb.RegisterContextPluginServer(s, &contextServer{local: local, log: sdk.Logger()})
	}, opts)
}

// Assembler runs an assembler process; see Plugin.
func Assembler(a sdk.Assembler, opts ...Option) {
	local := sdk.NewLocalAssembler(a)
	run(wire.PluginAssembler, func(s *grpc.Server) {
		pb.RegisterAssemblerServer(s, &assemblerServer{local: local, log: sdk.Logger()})
	}, opts)
}

func run(kind string, register func(*grpc.Server), opts []Option) {
	cfg := config{maxMessageBytes: wire.DefaultMaxMessageBytes}
	for _, o := range opts {
		o(&cfg)
	}
	log := sdk.Logger()
	maxBytes, err := wire.MaxMessageBytesFromEnv(cfg.maxMessageBytes)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ctxhost plugin: %v\n", err)
		os.Exit(1)
	}
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  wire.Handshake,
		VersionedPlugins: wire.VersionedPlugins(kind, &wire.GRPCPlugin{Register: register}),
		GRPCServer: func(o []grpc.ServerOption) *grpc.Server {
			return grpc.NewServer(append(o, wire.ServerOptions(maxBytes)...)...)
		},
		Logger: log,
	})
}
