package host

import (
	"context"
	"errors"
)

// VersionReader is implemented by a Store that can tell a session's
// current version without loading it. Hosts sharing a store compare it
// with Session.StoredVersion before each call to notice that another
// host changed the session.
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
