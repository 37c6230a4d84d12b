package engine

import (
	"context"
	"fmt"

	"github.com/ctxhost/ctxhost/host"
)

// SavedChange is what one durable version of a session did (see
// host.SavedChange): messages added, compaction steps, texts set, plugin
// calls, the turn count and usage after it; or, for a snapshot, the
// state written whole.
type SavedChange = host.SavedChange

// Change is one durable version of a session and what it did.
type Change struct {
	Sequence uint64
	SavedChange
	// Kinds name what it did: snapshot, or any of message_added,
	// history_cleared, compaction, text_set, plugin_call,
	// strategy_changed, turn (a turn was prepared) and usage (the
	// provider's usage was reported).
	Kinds []string
}

// kindsOf names what c did after the version whose figures were prev.
func kindsOf(c, prev SavedChange) []string {
	if c.Snapshot {
		return []string{"snapshot"}
	}
	var k []string
	add := func(ok bool, kind string) {
		if ok {
			k = append(k, kind)
		}
	}
	add(len(c.MessagesAdded) > 0, "message_added")
	add(c.HistoryCleared, "history_cleared")
	add(len(c.Compaction) > 0, "compaction")
	add(len(c.TextsSet) > 0, "text_set")
	add(len(c.PluginCalls) > 0, "plugin_call")
	add(c.StrategyChanged, "strategy_changed")
	add(c.Turns > prev.Turns, "turn")
	add(c.PromptReported != prev.PromptReported || c.CompletionTotal != prev.CompletionTotal, "usage")
	return k
}

// StoredChanges returns the durable versions of session id after
// sequence after, oldest first, read from st in one load: the events of
// its log, and first the snapshot's version when after precedes it
// (whose changes, and those of the versions before it, the snapshot
// holds without itemizing). current is the session's version. A session
// st does not hold wraps ErrNotStored.
func StoredChanges(ctx context.Context, st Store, id string, after uint64) (changes []Change, current uint64, err error) {
	stored, err := st.Load(ctx, id)
	if err != nil {
		return nil, 0, fmt.Errorf("load session %q: %w", id, err)
	}
	prev, err := host.DescribeSaved(stored.Snapshot, true)
	if err != nil {
		return nil, 0, fmt.Errorf("session %q version %d: %w: %w", id, stored.SnapshotVersion, ErrDamaged, err)
	}
	// The events a fork or rewind stands on belong to the snapshot's
	// version.
	for i, ev := range stored.Events[:stored.Base] {
		c, err := host.DescribeSaved(ev, false)
		if err != nil {
			return nil, 0, fmt.Errorf("session %q version %d (event %d it stands on): %w: %w", id, stored.SnapshotVersion, i+1, ErrDamaged, err)
		}
		prev = c
	}
	if after < stored.SnapshotVersion {
		changes = append(changes, Change{Sequence: stored.SnapshotVersion, SavedChange: prev, Kinds: kindsOf(prev, prev)})
	}
	for i, ev := range stored.Events[stored.Base:] {
		seq := stored.SnapshotVersion + 1 + uint64(i)
		c, err := host.DescribeSaved(ev, false)
		if err != nil {
			return nil, 0, fmt.Errorf("session %q version %d: %w: %w", id, seq, ErrDamaged, err)
		}
		if seq > after {
			changes = append(changes, Change{Sequence: seq, SavedChange: c, Kinds: kindsOf(c, prev)})
		}
		prev = c
	}
	return changes, stored.Version(), nil
}
