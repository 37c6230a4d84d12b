package record

import (
	"context"
	"errors"
)

// ErrNotStored is returned (wrapped) by Store.Load for a session id the
// store holds no state for.
var ErrNotStored = errors.New("session state not stored")

// ErrStored is returned (wrapped) when a new session is made for an id the
// store already holds state for: continue that session (open it), or end
// it first.
var ErrStored = errors.New("session state already stored")

// ErrNotPersisted is wrapped by the error of a call that changed a session
// but could not save the session's state to its store: the change is
// applied in memory (and results returned beside the error are valid),
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

// Store keeps each session as a versioned snapshot (its exported state)
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
	// Events are versions SnapshotVersion+1 ... in order, after the
	// first Base of them.
	Events [][]byte
	// Base counts the events of the state a fork or rewind at
	// SnapshotVersion stands on (see CheckpointStore): Snapshot and
	// Events[:Base] are that state, all of it version SnapshotVersion
	// (0 for a snapshot of the session's own).
	Base int
}

// Version is the session's current version: that of its last event, or
// of its snapshot.
func (st StoredSession) Version() uint64 {
	return st.SnapshotVersion + uint64(len(st.Events)-st.Base)
}

// Stored reports whether st holds state for session id.
func Stored(ctx context.Context, st Store, id string) (bool, error) {
	_, err := st.Load(ctx, id)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrNotStored):
		return false, nil
	default:
		return false, err
	}
}

// SessionLister is implemented by a Store that can list what it holds.
type SessionLister interface {
	// List returns the ids of the stored sessions (those Load finds),
	// sorted bytewise.
	List(ctx context.Context) ([]string, error)
}

// VersionReader is implemented by a Store that can tell a session's
// current version without loading it. Hosts sharing a store compare it
// with the version a session last saved before each call, to notice that
// another host changed the session.
type VersionReader interface {
	// Version returns the session's current version (0: not stored).
	Version(ctx context.Context, sessionID string) (uint64, error)
}

// StoredVersionOf returns session id's current version in st: through
// VersionReader when st implements it, else by loading the session.
// A session st does not hold has version 0.
func StoredVersionOf(ctx context.Context, st Store, id string) (uint64, error) {
	if vr, ok := st.(VersionReader); ok {
		return vr.Version(ctx, id)
	}
	s, err := st.Load(ctx, id)
	if errors.Is(err, ErrNotStored) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return s.Version(), nil
}

// ExclusiveStore is implemented by a Store that can tell whether this
// process is the only one that writes it. A host alone on its store needs
// no version check before each call: nothing else changes its sessions.
type ExclusiveStore interface {
	// Exclusive reports whether this process alone writes the store.
	Exclusive() bool
}

// IsExclusive reports whether st says this process alone writes it.
func IsExclusive(st Store) bool {
	e, ok := st.(ExclusiveStore)
	return ok && e.Exclusive()
}

func isNotStored(err error) bool { return errors.Is(err, ErrNotStored) }
