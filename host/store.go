package host

import (
	"context"
	"errors"
)

// ErrNotStored is returned (wrapped) by Store.Load for a session id the
// store holds no state for.
var ErrNotStored = errors.New("session state not stored")

// ErrStored is returned (wrapped) by Host.NewSession when the host's store
// already holds state for the id: continue it with Host.OpenSession, or end
// it first.
var ErrStored = errors.New("session state already stored")

// ErrNotPersisted is wrapped by the error of a call that changed a session
// but could not save the session's state to the host's store: the change
// is applied in memory (and results returned beside the error are valid),
// but a host restart would lose it. The next successful call saves the
// whole state again.
var ErrNotPersisted = errors.New("change applied but not persisted")

// ErrVersionConflict is returned (wrapped) by Store.Append and
// Store.Snapshot when the session's stored version is not the one the
// caller expected: another writer changed it since the caller read it.
var ErrVersionConflict = errors.New("stored session version conflict")

// ErrDamaged is returned (wrapped) by Store.Load when what the store holds
// for a session fails its checks: a record whose checksum does not match,
// a missing or truncated log, versions out of order. Nothing of a damaged
// session is returned.
var ErrDamaged = errors.New("stored session damaged")

// Store keeps each session as a versioned snapshot (Session.ExportState)
// followed by an append-only log of events, so saving a change costs the
// size of the change, not of the session. Every save makes a new version:
// Append adds one event, Snapshot replaces snapshot and log with one
// state; both succeed only when the stored version is the expected one
// (optimistic concurrency). A successful Append or Snapshot is durable
// (it survives a crash of the host or of the machine). Implementations
// must be safe for concurrent use by different sessions; calls for one
// session are serialized by the session. Event and snapshot bytes are
// opaque to the store.
type Store interface {
	// Load returns the session's last snapshot and the events appended
	// after it, or an error wrapping ErrNotStored when there is none.
	Load(ctx context.Context, sessionID string) (StoredSession, error)
	// Append adds event as version expected+1.
	Append(ctx context.Context, sessionID string, expected uint64, event []byte) error
	// Snapshot replaces the session's snapshot and events with state, as
	// version expected+1 (expected 0: the session is not stored yet).
	Snapshot(ctx context.Context, sessionID string, expected uint64, state []byte) error
	// Delete forgets the session; deleting nothing is not an error.
	Delete(ctx context.Context, sessionID string) error
}

// StoredSession is what a Store holds for one session.
type StoredSession struct {
	// Snapshot is the state as of SnapshotVersion.
	Snapshot        []byte
	SnapshotVersion uint64
	// Events are versions SnapshotVersion+1 ... SnapshotVersion+len(Events),
	// in order.
	Events [][]byte
}

// Version is the session's current version: that of its last event, or
// of its snapshot.
func (st StoredSession) Version() uint64 { return st.SnapshotVersion + uint64(len(st.Events)) }

// StateKeeper is implemented by a ContextPlugin that keeps each session's
// last plugin state (a Supervisor). KeptState returns it only when it is
// exactly what State would return now (it was fetched with State after the
// last call that could change it); the host then saves it without an RPC.
type StateKeeper interface {
	KeptState(session string) ([]byte, bool)
}

// pluginStateNow returns p's current state: the plugin's kept one when
// it keeps states (a Supervisor, the one plugin-state cache of a host),
// else a State call.
func (s *Session) pluginStateNow(ctx context.Context, p *boundPlugin) ([]byte, error) {
	if keeper, isKeeper := p.binding.Plugin.(StateKeeper); isKeeper {
		if b, ok := keeper.KeptState(s.id); ok {
			return b, nil
		}
	}
	return s.pluginState(ctx, p)
}
