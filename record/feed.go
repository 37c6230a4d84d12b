package record

import (
	"context"
	"time"
)

// FeedEvent is one event in a store's feed: something that happened to a
// session (a message added, a compaction, a budget warning) or to the
// host (a plugin restarted, a memory block written), with the store-wide
// sequence the store gave it when it was written.
type FeedEvent struct {
	// Sequence orders the feed: it grows with every event the store
	// writes, whichever host or session wrote it. Set by the store.
	Sequence uint64
	// Session is the session the event is about ("" for a host-wide
	// event).
	Session string
	// Version is the session's version the event was saved with (0 for
	// an event written on its own, by Publish). Set by the store.
	Version uint64
	// Kind names the event (message:added, compacted, ...).
	Kind string
	// Data is what it says, as JSON (opaque to the store).
	Data []byte
	// At is when the store wrote it. Set by the store.
	At time.Time
}

// FeedStore is implemented by a Store that also keeps a store-wide feed
// of events. A session's events are written with the session's change,
// in the same transaction (AppendNoted, SnapshotNoted): the feed holds an
// event exactly when the store holds the version it came with, whatever
// crashes in between. Sequences grow in the order writes commit, across
// every process sharing the store, so a reader that resumes after the
// last sequence it read misses nothing committed and reads nothing
// twice.
type FeedStore interface {
	Store
	// AppendNoted is Append that also adds events to the feed, each at
	// version expected+1.
	AppendNoted(ctx context.Context, sessionID string, expected uint64, event []byte, events []FeedEvent) error
	// SnapshotNoted is Snapshot that also adds events to the feed, each
	// at version expected+1.
	SnapshotNoted(ctx context.Context, sessionID string, expected uint64, state []byte, events []FeedEvent) error
	// Publish adds events on their own (not with a session's change), in
	// one transaction.
	Publish(ctx context.Context, events []FeedEvent) error
	// ReadFeed returns at most limit events with a sequence above after,
	// in the order of their sequences.
	ReadFeed(ctx context.Context, after uint64, limit int) ([]FeedEvent, error)
	// FeedHead returns the feed's last sequence (0: empty).
	FeedHead(ctx context.Context) (uint64, error)
}

// AsFeed returns st as a FeedStore, or false when it keeps no feed.
func AsFeed(st Store) (FeedStore, bool) {
	f, ok := st.(FeedStore)
	return f, ok
}

// NotedBlockStore is implemented by a BlockStore whose writes can add
// events to the feed of the same store, in the same transaction: a memory
// block's memory:changed event is in the feed exactly when its version is
// stored.
type NotedBlockStore interface {
	BlockStore
	// PutBlockNoted is PutBlock adding events (each at its own session,
	// with version 0).
	PutBlockNoted(ctx context.Context, b Block, expected uint64, events []FeedEvent) error
	// DeleteBlockNoted is DeleteBlock adding events.
	DeleteBlockNoted(ctx context.Context, scope, label string, expected uint64, events []FeedEvent) error
}
