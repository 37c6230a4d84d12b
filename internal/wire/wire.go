// Package wire holds what both ends of the plugin transport agree on: the
// go-plugin handshake, the plugin-set names and protocol versions, the gRPC
// message size limit, how SDK errors travel as gRPC statuses (ToStatus,
// FromStatus), and the converters between the generated types in wire/pb
// and the SDK's plain Go types.
//
// Package sdk imports none of this, so a plugin author's types carry no
// gRPC; the plugin's server (sdk/serve) and the host's clients
// (pluginhost) are the only users.
package wire

import (
	"fmt"
	"os"
	"strconv"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
)

// ProtocolVersion1 is the go-plugin protocol version served by the
// ctxhost.plugin.v1 package. It must equal sdk.ProtocolVersion.
const ProtocolVersion1 = 1

// Plugin-set names: the key under which each plugin kind is dispensed.
const (
	PluginContext   = "context"
	PluginAssembler = "assembler"
)

// Handshake is the go-plugin handshake shared by the host and every plugin.
// The cookie only stops a plugin binary from being run by hand; it is not a
// security measure. ProtocolVersion is the fallback for hosts that do not
// negotiate through VersionedPlugins.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  ProtocolVersion1,
	MagicCookieKey:   "CTXHOST_PLUGIN_MAGIC_COOKIE",
	MagicCookieValue: "5b0a1c4e-ctxhost-plugin-v1",
}

// DefaultMaxMessageBytes is the gRPC message size limit in both directions:
// gRPC's 4 MiB default is far too small for a 1M-token context.
const DefaultMaxMessageBytes = 256 << 20

// EnvMaxMessageBytes is the environment variable through which the host
// tells a plugin process its message size limit.
const EnvMaxMessageBytes = "CTXHOST_GRPC_MAX_MESSAGE_BYTES"

// MaxMessageBytesFromEnv returns the limit named by EnvMaxMessageBytes, or
// fallback when the variable is unset. A malformed value is an error.
func MaxMessageBytesFromEnv(fallback int) (int, error) {
	v, ok := os.LookupEnv(EnvMaxMessageBytes)
	if !ok || v == "" {
		return fallback, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%s=%q: want a positive number of bytes", EnvMaxMessageBytes, v)
	}
	return n, nil
}

// ServerOptions are the gRPC server options for a message size limit.
func ServerOptions(maxBytes int) []grpc.ServerOption {
	return []grpc.ServerOption{grpc.MaxRecvMsgSize(maxBytes), grpc.MaxSendMsgSize(maxBytes)}
}

// DialOptions are the gRPC client options for a message size limit.
func DialOptions(maxBytes int) []grpc.DialOption {
	return []grpc.DialOption{grpc.WithDefaultCallOptions(
		grpc.MaxCallRecvMsgSize(maxBytes), grpc.MaxCallSendMsgSize(maxBytes))}
}
