// Package depcheck holds no code, only a test: it keeps the layers apart.
// The plugin author's types (sdk, sdk/assembly), the host (host and its
// subpackages), the first-party assemblers and plugins and package record
// stay free of gRPC, go-plugin and the generated wire code, which only the
// transport packages (sdk/serve, pluginhost, internal/wire) may import;
// the host does not depend on durability (record, store), which the engine
// wires into it; and the command (cmd/ctxhost) reaches sessions through
// the engine, never importing host, its subpackages or record itself.
package depcheck
