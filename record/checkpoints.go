package record

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// ErrNotKept is returned (wrapped) for a version of a session its store
// no longer keeps (the retention removed it) or never held.
var ErrNotKept = errors.New("session version not kept")

// Checkpoint is one marked version of a session: a position in its
// journal a reader may read the session at, fork from or rewind to. Meta
// is opaque to the store (the host's description of the turn).
type Checkpoint struct {
	Version uint64
	// Time is when the version was written (by the writer's clock).
	Time time.Time
	Meta []byte
}

// Retention says which checkpoints a store keeps: the last KeepLast of
// each session (0: any number) that are younger than MaxAge (0: any
// age). A session's current version is always kept, and so is every
// version a fork or a rewind stands on.
type Retention struct {
	KeepLast int
	MaxAge   time.Duration
}

// Keeps reports whether r keeps every checkpoint.
func (r Retention) Keeps() bool { return r.KeepLast <= 0 && r.MaxAge <= 0 }

// Kept returns the versions of cps (oldest first) that r keeps at now.
func (r Retention) Kept(cps []Checkpoint, now time.Time) []uint64 {
	var out []uint64
	for i, c := range cps {
		if r.KeepLast > 0 && len(cps)-i > r.KeepLast {
			continue
		}
		if r.MaxAge > 0 && now.Sub(c.Time) > r.MaxAge {
			continue
		}
		out = append(out, c.Version)
	}
	return out
}

// Pruned is what one Prune removed.
type Pruned struct {
	Checkpoints, Snapshots, Events int
}

// CheckpointStore is implemented by a Store that keeps a session's past
// versions: every version written stays readable (LoadAt) until the
// retention removes it, versions may be marked as checkpoints, a new
// session may start from any kept version of another (Fork) and a
// session may go back to one of its own (Rewind). A fork or a rewind
// costs the same whatever the session's size: it records where its
// state stands, and shares the stored snapshot and events with the
// version it stands on, which are then kept as long as it needs them.
type CheckpointStore interface {
	Store
	// AppendMarked is Append, the new version marked as a checkpoint
	// with meta, in the same write; a store that is also a FeedStore
	// adds events to its feed in it too (as AppendNoted).
	AppendMarked(ctx context.Context, sessionID string, expected uint64, event, meta []byte, events []FeedEvent) error
	// SnapshotMarked is Snapshot, the new version marked as a
	// checkpoint with meta, in the same write, with events as for
	// AppendMarked.
	SnapshotMarked(ctx context.Context, sessionID string, expected uint64, state, meta []byte, events []FeedEvent) error
	// Checkpoints returns the session's kept checkpoints, oldest first
	// (none: an empty list; a session not stored wraps ErrNotStored).
	Checkpoints(ctx context.Context, sessionID string) ([]Checkpoint, error)
	// LoadAt returns the session as it stood at version (as Load
	// returns it at its current version); a version the store does not
	// keep wraps ErrNotKept.
	LoadAt(ctx context.Context, sessionID string, version uint64) (StoredSession, error)
	// Fork stores session child, at version 1, as session parent stood
	// at version, marked as a checkpoint with meta (nil: the meta of
	// parent's checkpoint at version). A child already stored wraps
	// ErrStored, a version not kept ErrNotKept.
	Fork(ctx context.Context, parent string, version uint64, child string, meta []byte) error
	// Rewind writes version expected+1 of the session as it stood at
	// version to, marked as a checkpoint with meta; the versions in
	// between stay stored (a fork at the last of them keeps them as a
	// branch). A stale expected wraps ErrVersionConflict.
	Rewind(ctx context.Context, sessionID string, expected, to uint64, meta []byte) error
	// Prune removes the session's checkpoints r does not keep at now,
	// and the snapshots and events no kept version needs. It also
	// clears what is left of a deleted session once nothing stands on
	// it.
	Prune(ctx context.Context, sessionID string, r Retention, now time.Time) (Pruned, error)
	// Pruneable returns the ids Prune may work on: the stored sessions,
	// and deleted ones whose versions forks still stand on.
	Pruneable(ctx context.Context) ([]string, error)
}

// ForkNoter is implemented by a CheckpointStore that also keeps memory
// blocks and a feed: a fork that takes its parent's own memory blocks
// and writes its event in the one transaction that makes it, so a crash
// leaves the fork with both or no fork at all.
type ForkNoter interface {
	CheckpointStore
	// ForkNoted is Fork that, in the same transaction, copies the
	// current blocks of scope from as blocks of scope to (each a new
	// version of its block there; a block scope to holds already, not
	// deleted, stays as it is) and adds events to the feed, each at the
	// child's version 1. Its cost grows with the blocks copied, not with
	// the parent's size.
	ForkNoted(ctx context.Context, parent string, version uint64, child string, meta []byte, from, to string, events []FeedEvent) error
	// RewindNoted is, in one transaction, ForkNoted of session id at
	// version expected as session branch (its blocks of scope from
	// copied to scope to, events added at the branch's version 1), then
	// Rewind of id from expected to version target, marked with meta. A
	// branch already stored wraps ErrStored and nothing changes.
	RewindNoted(ctx context.Context, id string, expected, target uint64, meta []byte, branch, from, to string, events []FeedEvent) error
}

// EventVersion is the version event i of st belongs to: the events of
// the state a fork or rewind stands on (the first Base) all belong to
// SnapshotVersion.
func (st StoredSession) EventVersion(i int) uint64 {
	if i < st.Base {
		return st.SnapshotVersion
	}
	return st.SnapshotVersion + uint64(i-st.Base) + 1
}

// Needed returns, for a session whose snapshots are at versions snaps
// and whose events are at versions events, which of them the versions
// keep need: for each, the last snapshot at or before it and the events
// after that snapshot up to it. Versions without a snapshot at or before
// them are ignored.
func Needed(keep, snaps, events []uint64) (needSnaps, needEvents map[uint64]bool) {
	snaps = slices.Clone(snaps)
	slices.Sort(snaps)
	needSnaps, needEvents = map[uint64]bool{}, map[uint64]bool{}
	type span struct{ from, to uint64 } // events in (from, to]
	var spans []span
	for _, v := range keep {
		i, found := slices.BinarySearch(snaps, v)
		if !found {
			if i == 0 {
				continue
			}
			i--
		}
		needSnaps[snaps[i]] = true
		if snaps[i] < v {
			spans = append(spans, span{snaps[i], v})
		}
	}
	for _, e := range events {
		for _, s := range spans {
			if e > s.from && e <= s.to {
				needEvents[e] = true
				break
			}
		}
	}
	return needSnaps, needEvents
}

// Ranges groups sorted versions into runs of consecutive ones, [first,
// last] each: a store deletes each run with one statement.
func Ranges(versions []uint64) [][2]uint64 {
	versions = slices.Clone(versions)
	slices.Sort(versions)
	var out [][2]uint64
	for _, v := range versions {
		if n := len(out); n > 0 && out[n-1][1]+1 == v {
			out[n-1][1] = v
			continue
		}
		out = append(out, [2]uint64{v, v})
	}
	return out
}

// MaxLinks bounds how many forks and rewinds a stored state may stand on,
// one on another, before a store refuses to read it: a longer chain is
// damage (a loop).
const MaxLinks = 1000

// ErrLinks is the error a store returns for a chain of forks and rewinds
// longer than MaxLinks.
func ErrLinks(id string) error {
	return fmt.Errorf("%w: session %q stands on more than %d forks and rewinds", ErrDamaged, id, MaxLinks)
}

// ErrReadOnly is returned (wrapped) by the writes of a Frozen store.
var ErrReadOnly = errors.New("a past version is read-only")

// Frozen returns a Store that holds st, as the state of every session id
// it is asked for, and refuses every write (ErrReadOnly): a Journal
// opened over it restores a past version without any way to change it.
func Frozen(st StoredSession) Store { return frozen{st} }

type frozen struct{ st StoredSession }

func (f frozen) Load(context.Context, string) (StoredSession, error) { return f.st, nil }
func (frozen) Append(context.Context, string, uint64, []byte) error {
	return fmt.Errorf("append: %w", ErrReadOnly)
}
func (frozen) Snapshot(context.Context, string, uint64, []byte) error {
	return fmt.Errorf("snapshot: %w", ErrReadOnly)
}
func (frozen) Delete(context.Context, string) error { return fmt.Errorf("delete: %w", ErrReadOnly) }
