package sdk

import (
	"fmt"
	"os"

	"github.com/ctxhost/ctxhost/internal/wire"
	"github.com/ctxhost/ctxhost/internal/wire/pb"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
)

// ServeOption adjusts how Serve runs.
type ServeOption func(*serveConfig)

type serveConfig struct{ maxMessageBytes int }

// WithMaxMessageBytes sets the gRPC message size limit (both directions)
// used when the host does not set CTXHOST_GRPC_MAX_MESSAGE_BYTES; the
// host's value always wins so both ends agree. Default 256 MiB.
func WithMaxMessageBytes(n int) ServeOption {
	return func(c *serveConfig) { c.maxMessageBytes = n }
}

// Serve runs a context plugin process: it speaks the go-plugin handshake on
// stdout, serves gRPC until the host goes away, and never returns normally.
// Call it from main. Sessions are kept as LocalPlugin keeps them; log with
// Logger().
func Serve(p Plugin, opts ...ServeOption) {
	local := NewLocalPlugin(p)
	serve(wire.PluginContext, func(s *grpc.Server) {
		pb.RegisterContextPluginServer(s, &contextServer{local: local, log: Logger()})
	}, opts)
}

// ServeAssembler runs an assembler process; see Serve.
func ServeAssembler(a Assembler, opts ...ServeOption) {
	local := NewLocalAssembler(a)
	serve(wire.PluginAssembler, func(s *grpc.Server) {
		pb.RegisterAssemblerServer(s, &assemblerServer{local: local, log: Logger()})
	}, opts)
}

func serve(kind string, register func(*grpc.Server), opts []ServeOption) {
	cfg := serveConfig{maxMessageBytes: wire.DefaultMaxMessageBytes}
	for _, o := range opts {
		o(&cfg)
	}
	log := Logger()
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
