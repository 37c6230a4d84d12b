package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/record"
)

// FeedEvent is one event of a store's event feed (see record.FeedEvent):
// its store-wide sequence, the session it is about ("" for a host-wide
// one), the session's version it was saved with, its kind and its data
// as JSON (host.EventData).
type FeedEvent = record.FeedEvent

// ErrNoFeed is returned (wrapped) for the event feed of a store that
// keeps none (a directory of files, or no store).
var ErrNoFeed = errors.New("the session store keeps no event feed (use SQLite or PostgreSQL)")

// feedOf returns st's event feed, or ErrNoFeed.
func feedOf(st Store) (record.FeedStore, error) {
	if st == nil {
		return nil, ErrNoFeed
	}
	f, ok := record.AsFeed(st)
	if !ok {
		return nil, ErrNoFeed
	}
	return f, nil
}

// ReadFeed returns at most limit events of st's feed with a sequence
// above after, in order; a store without a feed wraps ErrNoFeed.
func ReadFeed(ctx context.Context, st Store, after uint64, limit int) ([]FeedEvent, error) {
	f, err := feedOf(st)
	if err != nil {
		return nil, err
	}
	return f.ReadFeed(ctx, after, limit)
}

// FeedHead returns the last sequence of st's feed (0: empty); a store
// without a feed wraps ErrNoFeed.
func FeedHead(ctx context.Context, st Store) (uint64, error) {
	f, err := feedOf(st)
	if err != nil {
		return 0, err
	}
	return f.FeedHead(ctx)
}

// HasFeed reports whether st keeps an event feed.
func HasFeed(st Store) bool {
	_, err := feedOf(st)
	return err == nil
}

// PublishEvent writes one event to the feed of the engine's store on its
// own (not with a session's change): session is the session it is about
// ("" for none), data its data, encoded as JSON. Without a feed it does
// nothing.
func (e *Engine) PublishEvent(ctx context.Context, session string, kind host.EventType, data any) error {
	f, err := feedOf(e.saved)
	if err != nil {
		return nil
	}
	b, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("publish %s: %w", kind, err)
	}
	return f.Publish(ctx, []record.FeedEvent{{Session: session, Kind: string(kind), Data: b}})
}

// publishHostEvents writes the host-wide events (a plugin or assembler
// restarted) to the store's feed until cancel is called; a session's
// events go with its own saves.
func (e *Engine) publishHostEvents() (cancel func()) {
	if !HasFeed(e.saved) {
		return func() {}
	}
	return e.core.Subscribe(func(ev host.Event) {
		if ev.Session != "" || ev.Type != host.EventPluginRestarted {
			return
		}
		data, err := host.EventData(ev)
		if err == nil {
			f, _ := feedOf(e.saved)
			err = f.Publish(context.Background(), []record.FeedEvent{{Kind: string(ev.Type), Data: data}})
		}
		if err != nil {
			e.Logger.Warn("event feed: "+string(ev.Type)+" not written", "plugin", ev.Plugin, "error", err)
		}
	})
}

// memoryEvent is the memory:changed event of a block written or deleted
// at version; the event of a block of a session's own scope is that
// session's.
func memoryEvent(scope MemoryScope, label string, version uint64, deleted bool) record.FeedEvent {
	session, _ := strings.CutPrefix(scope.String(), "session:")
	if session == scope.String() {
		session = ""
	}
	data, _ := json.Marshal(host.MemoryChangedData{Scope: scope.String(), Label: label, Version: version, Deleted: deleted})
	return record.FeedEvent{Session: session, Kind: string(host.EventMemoryChanged), Data: data}
}

// notedBlocks returns the engine's block store when it writes the
// store's feed in the same transaction as a block.
func (e *Engine) notedBlocks() (record.NotedBlockStore, bool) {
	nb, ok := e.blocks.(record.NotedBlockStore)
	if !ok || !HasFeed(e.saved) {
		return nil, false
	}
	f, _ := feedOf(e.saved)
	return nb, any(nb) == any(f)
}

// putBlock writes rb as version expected+1 with its memory:changed event:
// in the same transaction when the block store is the feed's, else just
// after it.
func (e *Engine) putBlock(ctx context.Context, scope MemoryScope, rb record.Block, expected uint64) error {
	ev := memoryEvent(scope, rb.Label, expected+1, false)
	if nb, ok := e.notedBlocks(); ok {
		return nb.PutBlockNoted(ctx, rb, expected, []record.FeedEvent{ev})
	}
	if err := e.blocks.PutBlock(ctx, rb, expected); err != nil {
		return err
	}
	e.publishAfter(ctx, ev)
	return nil
}

// deleteBlock deletes a block over version expected with its event, as
// putBlock.
func (e *Engine) deleteBlock(ctx context.Context, scope MemoryScope, label string, expected uint64) error {
	ev := memoryEvent(scope, label, expected+1, true)
	if nb, ok := e.notedBlocks(); ok {
		return nb.DeleteBlockNoted(ctx, scope.String(), label, expected, []record.FeedEvent{ev})
	}
	if err := e.blocks.DeleteBlock(ctx, scope.String(), label, expected); err != nil {
		return err
	}
	e.publishAfter(ctx, ev)
	return nil
}

// publishAfter writes ev to the store's feed on its own (when it keeps
// one), logging a failure: the change it tells of is made already.
func (e *Engine) publishAfter(ctx context.Context, ev record.FeedEvent) {
	f, err := feedOf(e.saved)
	if err != nil {
		return
	}
	if err := f.Publish(ctx, []record.FeedEvent{ev}); err != nil {
		e.Logger.Warn("event feed: "+ev.Kind+" not written", "error", err)
	}
}
