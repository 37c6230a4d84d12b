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

// publishMemoryChange writes a memory:changed event for a block written
// or deleted at version; the event of a block of a session's own scope is
// that session's.
func (e *Engine) publishMemoryChange(ctx context.Context, scope MemoryScope, label string, version uint64, deleted bool) {
	session := ""
	if s, ok := strings.CutPrefix(scope.String(), "session:"); ok {
		session = s
	}
	if err := e.PublishEvent(ctx, session, host.EventMemoryChanged, host.MemoryChangedData{Scope: scope.String(), Label: label, Version: version, Deleted: deleted}); err != nil {
		e.Logger.Warn("event feed: memory:changed not written", "scope", scope.String(), "label", label, "error", err)
	}
}
