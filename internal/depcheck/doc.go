// Package depcheck holds no code, only a test: it keeps the plugin author's
// types (sdk, sdk/assembly) and the host (host and its subpackages) free of
// gRPC, go-plugin and the generated wire code, which only the transport
// packages (sdk/serve, pluginhost, internal/wire) may import.
package depcheck
