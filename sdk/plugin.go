package sdk

import (
	"context"
	"encoding/json"
)

// Plugin is what a context-plugin author implements: a description and a
// factory of per-session instances. The SDK keeps one Session per session id,
// so a Session's code only ever deals with one session. Calls into one
// Session are serialized by the SDK; different sessions run concurrently.
type Plugin interface {
	Describe() PluginInfo
	NewSession(sessionID string) Session
}

// Configurer is implemented by a Plugin that accepts an HCL config body. The
// host calls Configure once, before any session exists, with the body decoded
// to a JSON object against the plugin's ConfigSchema.
type Configurer interface {
	Configure(config json.RawMessage) error
}

// Session is one session's plugin instance.
type Session interface {
	// Component returns this turn's component, or nil when there is nothing.
	Component(ctx context.Context, encoding string) (*Component, error)
	// Apply runs op with JSON args and returns a JSON result. Unknown ops
	// return ErrUnknownOp, bad arguments ErrInvalidArgs; a failed Apply must
	// leave the state unchanged.
	Apply(ctx context.Context, op string, args json.RawMessage) (json.RawMessage, error)
}

// Compactor is implemented by a Session whose component can shrink.
type Compactor interface {
	Compact(ctx context.Context, req CompactRequest) (CompactResult, error)
}

// Stater is implemented by a Session whose state can be exported and restored.
type Stater interface {
	State() ([]byte, error)
	Restore(state []byte) error
}

// PreparedHook is implemented by a Session that wants to hear about every
// prepared context.
type PreparedHook interface {
	Prepared(ctx context.Context, budget Budget) error
}

// Closer is implemented by a Session that must release resources when the
// session ends.
type Closer interface {
	Close() error
}

// SessionReleaser is implemented by an Assembler that keeps state per
// session, such as the payload it built last for each stream to extend
// on the next turn. The host calls ReleaseSession when it no longer holds
// the session in memory (unloaded or ended); the assembler drops what it
// keeps for it, and the session's next request, if any, is built whole.
// It must be safe to call for a session the assembler never saw, and
// concurrently with Assemble.
type SessionReleaser interface {
	ReleaseSession(session string)
}

// Assembler is what an assembler author implements.
type Assembler interface {
	Describe() AssemblerInfo
	Assemble(ctx context.Context, req AssembleRequest) (AssembleResult, error)
}

// RequestReader is implemented by an Assembler that never changes the
// request it is given: not the component list, a component, a message, a
// tool call nor a metadata map. LocalAssembler (and so sdk/serve) hands
// such an assembler the request as it is, where it would otherwise copy
// every component and message first, so an assembly costs what it
// encodes, not a copy of the whole history. The method does nothing; it
// is the promise.
type RequestReader interface {
	Assembler
	ReadsRequestOnly()
}
