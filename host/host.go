package host

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"
)

// ErrNoSession is returned for a session id the host does not hold.
var ErrNoSession = errors.New("no such session")

// Options configure a Host.
type Options struct {
	Logger hclog.Logger // default: discard
	// Recorders, when set, keep every session's state across host
	// restarts: each call that changes a session saves its changes
	// through the session's Recorder before returning (see
	// Host.OpenSession).
	Recorders Recorders
}

// Host holds many sessions by id. Each session has its own lock, so
// different sessions never block each other; the host's lock is held only
// to look a session up.
type Host struct {
	events    *events
	recorders Recorders
	mu        sync.RWMutex
	sessions  map[string]*Session
}

// New returns an empty host.
func New(opts Options) *Host {
	return &Host{events: newEvents(opts.Logger), recorders: opts.Recorders, sessions: map[string]*Session{}}
}

// Subscribe registers a callback for every event of every session; call the
// returned function to unsubscribe.
func (h *Host) Subscribe(s Subscriber) (cancel func()) { return h.events.subscribe(s) }

// NewSession creates session id with cfg (defaults applied, then validated).
// With recorders that already hold state for id it fails with their
// error (use OpenSession to continue that session).
func (h *Host) NewSession(id string, cfg Config) (*Session, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	var r Recorder
	if h.recorders != nil {
		var err error
		if r, err = h.recorders.Create(context.Background(), id); err != nil {
			return nil, fmt.Errorf("new session %q: %w", id, err)
		}
	}
	return h.newSession(id, cfg, r)
}

func checkID(id string) error {
	if id == "" || !utf8.ValidString(id) {
		return fmt.Errorf("new session: id must be non-empty UTF-8")
	}
	return nil
}

// newSession makes session id, recorded by r (nil: not recorded).
func (h *Host) newSession(id string, cfg Config, r Recorder) (*Session, error) {
	s, err := newSession(id, cfg, h.events)
	if err != nil {
		return nil, fmt.Errorf("new session %q: %w", id, err)
	}
	s.dur.rec.journal = r
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
	if err := s.end(ctx, true); err != nil {
		return fmt.Errorf("end session %q: %w", id, err)
	}
	return nil
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
	return s.end(ctx, false)
}

// OpenSession creates session id with cfg and, when the host's recorders
// hold state for id, restores it (every plugin's state included); restored
// reports whether it did. Without recorders, or with nothing stored, it is
// NewSession. A stored state that cannot be restored is an error, the
// session is not created and the stored state is left as it was.
func (h *Host) OpenSession(ctx context.Context, id string, cfg Config) (s *Session, restored bool, err error) {
	if err := checkID(id); err != nil {
		return nil, false, err
	}
	var r Recorder
	found := false
	if h.recorders != nil {
		if r, found, err = h.recorders.Open(ctx, id); err != nil {
			return nil, false, fmt.Errorf("open session %q: %w", id, err)
		}
	}
	s, err = h.newSession(id, cfg, r)
	if err != nil {
		return nil, false, fmt.Errorf("open session %q: %w", id, err)
	}
	if !found {
		return s, false, nil
	}
	if err := restoreStored(ctx, s); err != nil {
		h.mu.Lock()
		delete(h.sessions, id)
		h.mu.Unlock()
		return nil, false, errors.Join(fmt.Errorf("open session %q: %w", id, err), s.end(ctx, false))
	}
	return s, true, nil
}

// restoreStored restores into s what its recorder holds: the snapshot,
// then every event after it, replayed (plugin calls included) in order.
// The caller has not locked s.
func restoreStored(ctx context.Context, s *Session) error {
	err := s.dur.rec.journal.Replay(func(snapshot []byte) error {
		return s.dur.restore(ctx, snapshot, false)
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
	s.plan.restoreTracks(s.plan.pressure.Tracks)
	s.dur.savedAs(s.plan.usage, s.plan.pressure)
	return nil
}

// OpenRecorded creates session id with cfg and restores it from r, which
// holds its state (a recorder over a past version of a stored session,
// for example), instead of from the host's recorders. A state that cannot
// be restored is an error, and the session is not created.
func (h *Host) OpenRecorded(ctx context.Context, id string, cfg Config, r Recorder) (*Session, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	s, err := h.newSession(id, cfg, r)
	if err != nil {
		return nil, fmt.Errorf("open session %q: %w", id, err)
	}
	if err := restoreStored(ctx, s); err != nil {
		h.mu.Lock()
		delete(h.sessions, id)
		h.mu.Unlock()
		return nil, errors.Join(fmt.Errorf("open session %q: %w", id, err), s.end(ctx, false))
	}
	return s, nil
}
