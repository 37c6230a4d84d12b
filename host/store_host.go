package host

import (
	"context"
	"errors"
	"fmt"
)

// Store returns the host's store, or nil when it has none.
func (h *Host) Store() Store { return h.store }

// Stored reports whether the host's store holds state for session id
// (always false without a store).
func (h *Host) Stored(id string) (bool, error) {
	if h.store == nil {
		return false, nil
	}
	_, err := h.store.Load(context.Background(), id)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrNotStored):
		return false, nil
	default:
		return false, err
	}
}

// OpenSession creates session id with cfg and, when the host's store holds
// state for id, restores it (every plugin's state included); restored
// reports whether it did. Without a store, or with nothing stored, it is
// NewSession. A stored state that cannot be restored is an error, the
// session is not created and the stored state is left as it was.
func (h *Host) OpenSession(ctx context.Context, id string, cfg Config) (s *Session, restored bool, err error) {
	var stored StoredSession
	found := false
	if h.store != nil {
		stored, err = h.store.Load(ctx, id)
		if err != nil && !errors.Is(err, ErrNotStored) {
			return nil, false, fmt.Errorf("open session %q: %w", id, err)
		}
		found = err == nil
	}
	s, err = h.newSession(id, cfg)
	if err != nil {
		return nil, false, fmt.Errorf("open session %q: %w", id, err)
	}
	if !found {
		return s, false, nil
	}
	if err := s.restoreStored(ctx, stored); err != nil {
		h.mu.Lock()
		delete(h.sessions, id)
		h.mu.Unlock()
		return nil, false, errors.Join(fmt.Errorf("open session %q: %w", id, err), s.end(ctx))
	}
	return s, true, nil
}

// checkNotStored fails with ErrStored when the store holds state for id.
func (h *Host) checkNotStored(id string) error {
	stored, err := h.Stored(id)
	if err != nil {
		return err
	}
	if stored {
		return fmt.Errorf("%w (open it with OpenSession, or end it first)", ErrStored)
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
