package wire

import (
	"context"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
)

// GRPCPlugin adapts one side of a plugin kind to go-plugin. The plugin
// process sets Register (it registers its gRPC service); the host sets
// Connect (it wraps the connection in a client). Each side only ever
// calls its own half.
type GRPCPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	// Register registers the service on the plugin's gRPC server.
	Register func(s *grpc.Server)
	// Connect builds the host's client over the connection.
	Connect func(conn *grpc.ClientConn) any
}

var _ plugin.GRPCPlugin = (*GRPCPlugin)(nil)

// GRPCServer implements plugin.GRPCPlugin.
func (p *GRPCPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	p.Register(s)
	return nil
}

// GRPCClient implements plugin.GRPCPlugin.
func (p *GRPCPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return p.Connect(c), nil
}

// VersionedPlugins returns the go-plugin plugin sets per protocol version
// with one plugin named name. Only version 1 exists today; a v2 service
// would add its own entry here and both would be served side by side.
func VersionedPlugins(name string, v1 *GRPCPlugin) map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{
		ProtocolVersion1: {name: v1},
	}
}
