package host

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"

	"github.com/ctxhost/ctxhost/record"
)

// ErrNoSession is returned for a session id the host does not hold.
var ErrNoSession = errors.New("no such session")

// Options configure a Host.
type Options struct {
	Logger hclog.Logger // default: discard
	// Store, when set, keeps every session's state across host restarts:
	// each call that changes a session saves its state before returning
	// (see Host.OpenSession and record.ErrNotPersisted).
	Store record.Store
}

// Host holds many sessions by id. Each session has its own lock, so
// different sessions never block each other; the host's lock is held only
// to look a session up.
type Host struct {
	events   *events
	store    record.Store
	mu       sync.RWMutex
	sessions map[string]*Session
}

// New returns an empty host.
func New(opts Options) *Host {
	return &Host{events: newEvents(opts.Logger), store: opts.Store, sessions: map[string]*Session{}}
}

// Subscribe registers a callback for every event of every session; call the
// returned function to unsubscribe.
func (h *Host) Subscribe(s Subscriber) (cancel func()) { return h.events.subscribe(s) }

// NewSession creates session id with cfg (defaults applied, then validated).
// With a store holding state for id it fails with an error wrapping
// record.ErrStored (use OpenSession to continue that session).
func (h *Host) NewSession(id string, cfg Config) (*Session, error) {
	if err := h.checkNotStored(id); err != nil {
		return nil, fmt.Errorf("new session %q: %w", id, err)
	}
	return h.newSession(id, cfg)
}

func (h *Host) newSession(id string, cfg Config) (*Session, error) {
	if id == "" || !utf8.ValidString(id) {
		return nil, fmt.Errorf("new session: id must be non-empty UTF-8")
	}
	s, err := newSession(id, cfg, h.events)
	if err != nil {
		return nil, fmt.Errorf("new session %q: %w", id, err)
	}
	if h.store != nil {
		s.rec.journal = record.NewJournal(h.store, id, snapshotFloor)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.sessions[id]; ok {
		return nil, fmt.Errorf("new session %q: already exists", id)
	}
	h.sessions[id] = s
	return s, nil
}

// Session returns session id.
func (h *Host) Session(id string) (*Session, error) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	s, ok := h.sessions[id]
	if !ok {
		return nil, fmt.Errorf("session %q: %w", id, ErrNoSession)
	}
	return s, nil
}

// SessionIDs lists the sessions' ids, sorted.
func (h *Host) SessionIDs() []string {
	h.mu.RLock()
	defer h.mu.RUnlock()
	ids := make([]string, 0, len(h.sessions))
	for id := range h.sessions {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// EndSession removes session id, tells its plugins to drop it and deletes
// its stored state.
func (h *Host) EndSession(ctx context.Context, id string) error {
	h.mu.Lock()
	s, ok := h.sessions[id]
	delete(h.sessions, id)
	h.mu.Unlock()
	if !ok {
		return fmt.Errorf("end session %q: %w", id, ErrNoSession)
	}
	return errors.Join(s.end(ctx), h.unstore(id))
}

// Unload removes session id from memory and tells its plugins to drop it,
// but keeps its stored state: OpenSession restores it as it was last
// saved. A host that shares its store with other hosts unloads a session
// another host changed (or whose save met a version conflict) and opens
// it again.
func (h *Host) Unload(ctx context.Context, id string) error {
	h.mu.Lock()
	s, ok := h.sessions[id]
	delete(h.sessions, id)
	h.mu.Unlock()
	if !ok {
		return fmt.Errorf("unload session %q: %w", id, ErrNoSession)
	}
	return s.end(ctx)
}

// Store returns the host's store, or nil when it has none.
func (h *Host) Store() record.Store { return h.store }

// Stored reports whether the host's store holds state for session id
// (always false without a store).
func (h *Host) Stored(id string) (bool, error) {
	if h.store == nil {
		return false, nil
	}
	return record.Stored(context.Background(), h.store, id)
}

// OpenSession creates session id with cfg and, when the host's store holds
// state for id, restores it (every plugin's state included); restored
// reports whether it did. Without a store, or with nothing stored, it is
// NewSession. A stored state that cannot be restored is an error, the
// session is not created and the stored state is left as it was.
func (h *Host) OpenSession(ctx context.Context, id string, cfg Config) (s *Session, restored bool, err error) {
	var stored record.StoredSession
	found := false
	if h.store != nil {
		stored, found, err = record.Load(ctx, h.store, id)
		if err != nil {
			return nil, false, fmt.Errorf("open session %q: %w", id, err)
		}
	}
	s, err = h.newSession(id, cfg)
	if err != nil {
		return nil, false, fmt.Errorf("open session %q: %w", id, err)
	}
	if !found {
		return s, false, nil
	}
	if err := restoreStored(ctx, s, stored); err != nil {
		h.mu.Lock()
		delete(h.sessions, id)
		h.mu.Unlock()
		return nil, false, errors.Join(fmt.Errorf("open session %q: %w", id, err), s.end(ctx))
	}
	return s, true, nil
}

// checkNotStored fails with record.ErrStored when the store holds state
// for id.
func (h *Host) checkNotStored(id string) error {
	stored, err := h.Stored(id)
	if err != nil {
		return err
	}
	if stored {
		return fmt.Errorf("%w (open it with OpenSession, or end it first)", record.ErrStored)
	}
	return nil
}

// unstore deletes id's stored state, if the host has a store.
func (h *Host) unstore(id string) error {
	if h.store == nil {
		return nil
	}
	if err := h.store.Delete(context.Background(), id); err != nil {
		return fmt.Errorf("end session %q: %w", id, err)
	}
	return nil
}

// restoreStored restores into s a session the store holds: its snapshot,
// then every event after it, replayed (plugin calls included) in order.
// The caller has not locked s.
func restoreStored(ctx context.Context, s *Session, stored record.StoredSession) error {
	err := s.rec.journal.Replay(stored, func(snapshot []byte) error {
		return s.restore(ctx, snapshot, false)
	}, func(b []byte) error {
		ev, err := decodeEvent(b)
		if err != nil {
			return err
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		return ev.replay(ctx, s)
	})
	if err != nil {
		return fmt.Errorf("restore %q: %w", s.id, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rec.saved(s.usage, s.pressure)
	return nil
}
