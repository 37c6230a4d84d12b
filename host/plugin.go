// Package host is the context manager: sessions, components, token budget,
// strategies, the compaction pipeline, and the plugins behind Go interfaces.
// It never imports gRPC: the go-plugin transport lives in package pluginhost,
// outside host.
package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ctxhost/ctxhost/internal/supervise"
	"github.com/ctxhost/ctxhost/sdk"
)

// ContextPlugin is the host's view of a context plugin, in-process or remote.
// Every call names the session it is for. Errors wrapping sdk.ErrUnknownOp,
// sdk.ErrInvalidArgs and sdk.ErrNotFound are protocol signals; other errors
// mean the plugin failed.
type ContextPlugin interface {
	Info() sdk.PluginInfo
	Configure(ctx context.Context, config json.RawMessage) error
	Component(ctx context.Context, session, encoding string) (*sdk.Component, error)
	Compact(ctx context.Context, session string, req sdk.CompactRequest) (sdk.CompactResult, error)
	Apply(ctx context.Context, session, op string, args json.RawMessage) (json.RawMessage, error)
	Prepared(ctx context.Context, session string, budget sdk.Budget) error
	State(ctx context.Context, session string) ([]byte, error)
	Restore(ctx context.Context, session string, state []byte) error
	EndSession(ctx context.Context, session string) error
}

// Assembler is the host's view of an assembler, in-process or remote.
type Assembler interface {
	Info() sdk.AssemblerInfo
	Assemble(ctx context.Context, req sdk.AssembleRequest) (sdk.AssembleResult, error)
}

// InlineAssembler is an Assembler that says, per agent, whether its
// Assemble may run on the turn's own goroutine: in the host's process,
// computing on its request alone and never blocking, as ctxhost's built-in
// assemblers do. Such a call is made without the watchdog goroutine that
// enforces an assembler's deadline, which would cost a hand-off between
// threads on every turn and could not stop an in-process call anyway.
type InlineAssembler interface {
	Assembler
	Inline(agent string) bool
}

// ErrPluginDead is wrapped by transport errors meaning the plugin process is
// gone (crashed, killed or unreachable): the supervisor restarts it and
// restores its sessions' state.
var ErrPluginDead = supervise.ErrDead

// ErrRequiredPlugin is matched (errors.Is) by the error of a turn that
// failed because a required plugin failed or was cut off by its deadline.
var ErrRequiredPlugin = errors.New("required plugin failed")

// RequiredPluginError is the error of a turn that failed because its
// required plugin Plugin failed with Err; it matches ErrRequiredPlugin.
type RequiredPluginError struct {
	Plugin string
	Err    error
}

func (e *RequiredPluginError) Error() string {
	return fmt.Sprintf("required plugin %q: %v", e.Plugin, e.Err)
}

// Unwrap returns the plugin's failure.
func (e *RequiredPluginError) Unwrap() error { return e.Err }

// Is reports whether target is ErrRequiredPlugin.
func (e *RequiredPluginError) Is(target error) bool { return target == ErrRequiredPlugin }

// StateCarrier is implemented by a ContextPlugin whose state-changing calls
// answer with the session's state as it is right after the call (the SDK
// does this for every plugin built on it). The state is nil when the
// plugin sent none (it has no state, or an SDK that predates the field):
// the Supervisor then asks State after the call.
type StateCarrier interface {
	ApplyWithState(ctx context.Context, session, op string, args json.RawMessage) (json.RawMessage, []byte, error)
	CompactWithState(ctx context.Context, session string, req sdk.CompactRequest) (sdk.CompactResult, []byte, error)
	PreparedWithState(ctx context.Context, session string, budget sdk.Budget) ([]byte, error)
}

// Aborter is implemented by a ContextPlugin that runs in a process of its
// own: Abort kills the process at once (SIGKILL) and returns when it is
// gone, so nothing it was still doing can take effect later.
type Aborter = supervise.Aborter
