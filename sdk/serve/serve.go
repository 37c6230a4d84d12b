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

type config struct {
	maxMessageBytes int
	deltaBases      int // 0: DefaultDeltaBases; < 0: no delta capability
}

// WithMaxMessageBytes sets the gRPC message size limit (both directions)
// used when the host does not set CTXHOST_GRPC_MAX_MESSAGE_BYTES; the
// host's value always wins so both ends agree. Default 256 MiB.
func WithMaxMessageBytes(n int) Option {
	return func(c *config) { c.maxMessageBytes = n }
}

// DefaultDeltaBases is how many streams' last requests an assembler keeps
// by default (see WithDeltaBases).
const DefaultDeltaBases = 64

// WithDeltaBases sets how many streams (a session's agent each) an
// assembler keeps the last request of, so that the host can send the next
// one as a delta: only the messages appended since and the components
// that changed. The least recently used is dropped first; the host then
// sends that stream's next request whole. n <= 0 turns the delta off: the
// assembler takes whole requests only, as before the capability existed.
// Default DefaultDeltaBases. The author's Assemble always gets the whole
// request either way.
func WithDeltaBases(n int) Option {
	return func(c *config) {
		c.deltaBases = n
		if n <= 0 {
			c.deltaBases = -1
		}
	}
}

// Plugin runs a context plugin process: it speaks the go-plugin handshake
// on stdout, serves gRPC until the host goes away, and never returns
// normally. Call it from main. Sessions are kept as sdk.LocalPlugin keeps
// them; log with sdk.Logger().
func Plugin(p sdk.Plugin, opts ...Option) {
	local := sdk.NewLocalPlugin(p)
	run(wire.PluginContext, func(s *grpc.Server, _ config) {
		pb.RegisterContextPluginServer(s, &contextServer{local: local, log: sdk.Logger()})
	}, opts)
}

// Assembler runs an assembler process; see Plugin. It keeps each
// stream's last request (see WithDeltaBases) and declares the "delta"
// capability, so the host sends a turn as what changed since the last;
// the author's Assemble gets the whole request, rebuilt.
func Assembler(a sdk.Assembler, opts ...Option) {
	local := sdk.NewLocalAssembler(a)
	run(wire.PluginAssembler, func(s *grpc.Server, cfg config) {
		srv := &assemblerServer{local: local, log: sdk.Logger()}
		if cfg.deltaBases >= 0 {
			srv.bases = newBases(cfg.deltaBases)
		}
		pb.RegisterAssemblerServer(s, srv)
	}, opts)
}

func run(kind string, register func(*grpc.Server, config), opts []Option) {
	cfg := config{maxMessageBytes: wire.DefaultMaxMessageBytes, deltaBases: DefaultDeltaBases}
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
		VersionedPlugins: wire.VersionedPlugins(kind, &wire.GRPCPlugin{Register: func(s *grpc.Server) { register(s, cfg) }}),
		GRPCServer: func(o []grpc.ServerOption) *grpc.Server {
			return grpc.NewServer(append(o, wire.ServerOptions(maxBytes)...)...)
		},
		Logger: log,
	})
}
