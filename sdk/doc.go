// Package sdk is what a Go author of a ctxhost plugin writes against: the
// plain types that cross the plugin boundary (Component, Message, Budget,
// PluginInfo, AssemblerInfo, ...), the interfaces a plugin implements, and
// the helpers plugins share (argument decoding, token counting, masking,
// message kinds, framing, pricing, errors, logging).
//
// A context plugin implements Plugin, which makes one Session per session
// id; optional interfaces add compaction (Compactor), state that survives a
// restart (Stater), a hook on every prepared context (PreparedHook), clean-up
// (Closer) and an HCL config body (Configurer). An assembler implements
// Assembler. Errors that mean something to the host are the sentinels
// ErrUnknownOp, ErrInvalidArgs and ErrNotFound (made with UnknownOp,
// InvalidArgs and NotFound); they come back to the host as the same
// sentinels. Binding(ctx) names the HCL binding a call is for.
//
// The package imports no gRPC or go-plugin: a plugin's main hands the
// plugin to package github.com/ctxhost/ctxhost/sdk/serve, which runs the
// process:
//
//	func main() { serve.Plugin(myPlugin{}) }
//
// LocalPlugin and LocalAssembler run the same code in-process, as the
// server does, for tests and for hosts that embed a plugin. The
// conformance kit is sdk/plugintest; sdk/assembly helps assemblers.
package sdk
