package record

import (
	"context"
	"fmt"
)

// DefaultSnapshotFloor is the least size of a session's event log before a
// save writes a new snapshot instead of appending: a snapshot is written
// when the log would grow past the larger of this and the last snapshot's
// size, so saving costs, on average, a small multiple of the change's size
// whatever the session's.
const DefaultSnapshotFloor = 64 << 10

// Journal is one session's record in a store: the version the store holds,
// the size of its last snapshot and of the events appended since, and
// whether the next save must be a whole snapshot. A Journal is not safe for
// concurrent use: the session serializes its calls.
type Journal struct {
	store Store
	id    string
	floor int
	// version is the session's version in the store (0: not stored).
	version             uint64
	snapBytes, logBytes int
	// stale: the events cannot describe the session's last changes (a
	// save failed, or something changed that no event says), so the next
	// save is a snapshot.
	stale bool
	// loaded is what the store held when Open found the session, until
	// Replay applies it.
	loaded *StoredSession
	// notes are the feed events to write with the next save (see Note).
	notes []FeedEvent
}

// Note adds an event to write to the store's feed with the next
// successful save, in the same store write (a store that keeps no feed
// drops it). A failed save keeps it for the next one.
func (j *Journal) Note(kind string, data []byte) {
	if _, ok := j.store.(FeedStore); ok {
		j.notes = append(j.notes, FeedEvent{Session: j.id, Kind: kind, Data: data})
	}
}

// Noted reports how many events wait for the next save.
func (j *Journal) Noted() int { return len(j.notes) }

// NewJournal returns the journal of session id in st, not stored yet.
// floor replaces DefaultSnapshotFloor when positive.
func NewJournal(st Store, id string, floor int) *Journal {
	if floor <= 0 {
		floor = DefaultSnapshotFloor
	}
	return &Journal{store: st, id: id, floor: floor}
}

// Save makes the session's changes since the last save durable: the event
// event returns, appended as the next version, or the whole state state
// returns, as a snapshot, when the session is not stored yet, the journal
// is stale, the log would outgrow the last snapshot (see Room), or event
// returns nil. A failed save wraps ErrNotPersisted and makes the next one
// a snapshot.
func (j *Journal) Save(ctx context.Context, event func() ([]byte, error), state func(context.Context) ([]byte, error)) error {
	return j.SaveMarked(ctx, nil, event, state)
}

// SaveMarked is Save with the new version marked as a checkpoint carrying
// meta (nil: not marked), in the same write, when the store keeps
// checkpoints (CheckpointStore); a store that does not saves it unmarked.
func (j *Journal) SaveMarked(ctx context.Context, meta []byte, event func() ([]byte, error), state func(context.Context) ([]byte, error)) error {
	if err := j.save(ctx, meta, event, state); err != nil {
		j.stale = true // the log misses these changes
		return fmt.Errorf("%w: %w", ErrNotPersisted, err)
	}
	return nil
}

func (j *Journal) save(ctx context.Context, meta []byte, event func() ([]byte, error), state func(context.Context) ([]byte, error)) error {
	if !j.stale && j.version > 0 {
		ev, err := event()
		if err != nil {
			return fmt.Errorf("encode event: %w", err)
		}
		if ev != nil && j.logBytes+len(ev) <= max(j.snapBytes, j.floor) {
			if err := j.append(ctx, ev, meta); err != nil {
				return err
			}
			j.version++
			j.logBytes += len(ev)
			j.notes = j.notes[:0]
			return nil
		}
	}
	data, err := state(ctx)
	if err != nil {
		return err
	}
	if err := j.snapshot(ctx, data, meta); err != nil {
		return err
	}
	j.version++
	j.snapBytes, j.logBytes, j.stale = len(data), 0, false
	j.notes = j.notes[:0]
	return nil
}

// append appends ev with the events noted, marked with meta (nil: not
// marked).
func (j *Journal) append(ctx context.Context, ev, meta []byte) error {
	if cs, ok := j.store.(CheckpointStore); ok && meta != nil {
		return cs.AppendMarked(ctx, j.id, j.version, ev, meta, j.notes)
	}
	if f, ok := j.store.(FeedStore); ok && len(j.notes) > 0 {
		return f.AppendNoted(ctx, j.id, j.version, ev, j.notes)
	}
	return j.store.Append(ctx, j.id, j.version, ev)
}

// snapshot writes data as a snapshot with the events noted, marked with
// meta (nil: not marked).
func (j *Journal) snapshot(ctx context.Context, data, meta []byte) error {
	if cs, ok := j.store.(CheckpointStore); ok && meta != nil {
		return cs.SnapshotMarked(ctx, j.id, j.version, data, meta, j.notes)
	}
	if f, ok := j.store.(FeedStore); ok && len(j.notes) > 0 {
		return f.SnapshotNoted(ctx, j.id, j.version, data, j.notes)
	}
	return j.store.Snapshot(ctx, j.id, j.version, data)
}

// Room is the size an event may have and be appended by the next save;
// -1 when that save writes a snapshot whatever the event. A session whose
// change is surely larger (a long answer) need not encode it as an event
// only for Save to drop it: its event function returns nil.
func (j *Journal) Room() int {
	if j.stale || j.version == 0 {
		return -1
	}
	return max(j.snapBytes, j.floor) - j.logBytes
}

// Stale makes the next save a snapshot: the session changed in a way no
// event describes.
func (j *Journal) Stale() { j.stale = true }

// Current reports whether the store holds the session as of its last save
// and the next save may be an event: a session with nothing changed since
// then has nothing to write.
func (j *Journal) Current() bool { return j.version > 0 && !j.stale }

// Version is the session's version in the store: it grows by one with
// every save (0: not stored).
func (j *Journal) Version() uint64 { return j.version }

// Create returns the journal of a new session id in st, or an error
// wrapping ErrStored when st already holds state for id (that session is
// continued with Open, or ended first). floor is as for NewJournal.
func Create(ctx context.Context, st Store, id string, floor int) (*Journal, error) {
	stored, err := Stored(ctx, st, id)
	if err != nil {
		return nil, err
	}
	if stored {
		return nil, fmt.Errorf("%w (open it, or end it first)", ErrStored)
	}
	return NewJournal(st, id, floor), nil
}

// Open returns the journal of session id in st and whether st holds state
// for it; when it does, Replay rebuilds the session from what Open read.
// floor is as for NewJournal.
func Open(ctx context.Context, st Store, id string, floor int) (j *Journal, found bool, err error) {
	j = NewJournal(st, id, floor)
	stored, err := st.Load(ctx, id)
	switch {
	case isNotStored(err):
		return j, false, nil
	case err != nil:
		return nil, false, err
	}
	j.loaded = &stored
	return j, true, nil
}

// Replay rebuilds the session from what the store held when Open found it:
// restore gets the snapshot, apply every event after it in order (an
// error names the event's version). The journal then continues from the
// stored version.
func (j *Journal) Replay(restore func(snapshot []byte) error, apply func(event []byte) error) error {
	if j.loaded == nil {
		return fmt.Errorf("replay %q: nothing was read from the store", j.id)
	}
	stored := *j.loaded
	j.loaded = nil
	if err := restore(stored.Snapshot); err != nil {
		return err
	}
	logBytes := 0
	for i, b := range stored.Events {
		if err := apply(b); err != nil {
			return fmt.Errorf("event %d: %w", stored.EventVersion(i), err)
		}
		logBytes += len(b)
	}
	j.version, j.snapBytes, j.logBytes, j.stale = stored.Version(), len(stored.Snapshot), logBytes, false
	return nil
}

// Delete forgets the session's stored state.
func (j *Journal) Delete(ctx context.Context) error { return j.store.Delete(ctx, j.id) }
