package engine

import (
	"context"
	"fmt"

	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/record"
)

// Store keeps sessions as a versioned snapshot and a log of events (see
// package store for the SQLite, PostgreSQL and file stores). Several
// engines of one process share one store through Options.Store.
type Store = record.Store

// journals are the host's recorders over a store: a record.Journal per
// session, which appends one event per save and writes a snapshot of the
// whole state from time to time.
type journals struct{ st record.Store }

var _ host.Recorder = (*record.Journal)(nil)

func (j journals) Create(ctx context.Context, id string) (host.Recorder, error) {
	r, err := record.Create(ctx, j.st, id, 0)
	if err != nil {
		return nil, err
	}
	return r, nil
}

func (j journals) Open(ctx context.Context, id string) (host.Recorder, bool, error) {
	r, found, err := record.Open(ctx, j.st, id, 0)
	if err != nil {
		return nil, false, err
	}
	return r, found, nil
}

// IsExclusive reports whether st says this process alone writes it: a
// session held in memory then needs no version check before each call.
func IsExclusive(st Store) bool { return record.IsExclusive(st) }

// StoredVersion returns session id's current version in st (0: st does
// not hold it), without loading the session when st can tell.
func StoredVersion(ctx context.Context, st Store, id string) (uint64, error) {
	return record.StoredVersionOf(ctx, st, id)
}

// ListStored returns the ids of the sessions st holds, sorted bytewise;
// ok is false when st cannot list them.
func ListStored(ctx context.Context, st Store) (ids []string, ok bool, err error) {
	l, ok := st.(record.SessionLister)
	if !ok {
		return nil, false, nil
	}
	ids, err = l.List(ctx)
	if err != nil {
		return nil, true, fmt.Errorf("list stored sessions: %w", err)
	}
	return ids, true, nil
}

// StoredEvents are the events a store holds for a session after its last
// snapshot.
type StoredEvents struct {
	// First is the version of Events[0] (the snapshot's version + 1).
	First uint64
	// Events are the stored events in order, as JSON.
	Events [][]byte
}

// Version is the session's current version.
func (se StoredEvents) Version() uint64 { return se.First - 1 + uint64(len(se.Events)) }

// LoadEvents returns the events st holds for session id after its last
// snapshot; an error wraps ErrNotStored when st holds nothing for id.
func LoadEvents(ctx context.Context, st Store, id string) (StoredEvents, error) {
	stored, err := st.Load(ctx, id)
	if err != nil {
		return StoredEvents{}, fmt.Errorf("load session %q: %w", id, err)
	}
	// The events a fork or rewind stands on are not the session's own.
	return StoredEvents{First: stored.SnapshotVersion + 1, Events: stored.Events[stored.Base:]}, nil
}
