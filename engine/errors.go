package engine

import (
	"errors"

	"github.com/hashicorp/hcl/v2"

	"github.com/ctxhost/ctxhost/config"
	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/host/team"
	"github.com/ctxhost/ctxhost/record"
	"github.com/ctxhost/ctxhost/sdk"
)

// ConfigError is a configuration problem found after loading, once the
// plugins declared their schemas (or a profile name that does not exist).
// The command reports it like a load error (exit code 2).
type ConfigError struct {
	Diags hcl.Diagnostics
}

// Error renders one "file:line:col: summary" line per diagnostic.
func (e *ConfigError) Error() string {
	lines := config.DiagnosticLines(e.Diags)
	out := ""
	for i, l := range lines {
		if i > 0 {
			out += "\n"
		}
		out += l
	}
	return out
}

// configErrorf returns a ConfigError with one diagnostic at rng.
func configErrorf(rng *hcl.Range, summary, detail string) *ConfigError {
	return &ConfigError{Diags: hcl.Diagnostics{{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: rng}}}
}

// Errors a caller branches on, wrapped by the errors of sessions and
// stores (errors.Is). They are the host's, the recorder's and the plugin SDK's own values,
// named here so that callers of the engine need no other package.
var (
	// ErrNoSession: no session with that id is held.
	ErrNoSession = host.ErrNoSession
	// ErrNotStored: the store holds nothing for the session.
	ErrNotStored = record.ErrNotStored
	// ErrStored: the store already holds the session a call would create.
	ErrStored = record.ErrStored
	// ErrNotPersisted: a change was applied in memory but not saved.
	ErrNotPersisted = record.ErrNotPersisted
	// ErrVersionConflict: another writer changed the stored session first.
	ErrVersionConflict = record.ErrVersionConflict
	// ErrStoreRead: the store did not answer a read the call needed (its
	// connection lost, say); nothing was changed, and a retry may pass.
	ErrStoreRead = errStoreRead
	// ErrDamaged: what the store holds for the session fails its checks.
	ErrDamaged = record.ErrDamaged
	// ErrOverWindow: the context exceeds the model window.
	ErrOverWindow = host.ErrOverWindow
	// ErrTargetNotMet: compaction did not reach its target.
	ErrTargetNotMet = host.ErrTargetNotMet
	// ErrPluginDead: a plugin process is not running.
	ErrPluginDead = host.ErrPluginDead
	// ErrInvalidArgs, ErrUnknownOp and ErrNotFound are a plugin's answers
	// to an op: bad arguments, an op it does not know, nothing by that id.
	ErrInvalidArgs = sdk.ErrInvalidArgs
	ErrUnknownOp   = sdk.ErrUnknownOp
	ErrNotFound    = sdk.ErrNotFound
	// ErrInvalidMessage and ErrUnknownAgent refuse a multi-agent message.
	ErrInvalidMessage = team.ErrInvalidMessage
	ErrUnknownAgent   = team.ErrUnknownAgent
)

// OverWindowError is the error a turn whose context cannot be made to fit
// the window minus the reserve wraps: by how much, and what is stuck.
type OverWindowError = host.OverWindowError

var errStoreRead = errors.New("the store did not answer a read")
