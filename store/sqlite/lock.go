package sqlite

import (
	"errors"
	"fmt"
	"os"
)

// ErrLocked is returned by Lock when another process holds the store in a
// way that excludes this one.
var ErrLocked = errors.New("sqlite store is locked by another process")

// Lock declares how this process uses the store until Close, with an
// advisory lock on the file beside the database named "<path>.lock".
// Alone (shared false), the process takes the store for itself: Exclusive
// then reports true, and it may skip reading a session's version before
// each call, since no other process that locks the store can change it.
// Shared, it joins the other processes that lock it shared. Lock fails
// with ErrLocked when the two ways meet: a process alone on a store
// another process uses, or joining a store one holds alone. Processes
// that never call Lock (readers, `ctxhost run`) are not excluded.
func (s *Store) Lock(shared bool) error {
	path := s.path + ".lock"
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("sqlite store %q: lock: %w", s.path, err)
	}
	if err := flock(f, shared); err != nil {
		f.Close()
		if errors.Is(err, ErrLocked) {
			how := "shares it"
			if shared {
				how = "holds it alone"
			}
			return fmt.Errorf("sqlite store %q: %w (%s, lock file %s)", s.path, ErrLocked, "another process "+how, path)
		}
		return fmt.Errorf("sqlite store %q: lock %s: %w", s.path, path, err)
	}
	s.lockMu.Lock()
	defer s.lockMu.Unlock()
	if s.lock != nil {
		s.lock.Close()
	}
	s.lock, s.alone = f, !shared
	return nil
}

// Claim declares how this process uses the store (Lock).
func (s *Store) Claim(shared bool) error { return s.Lock(shared) }

// Exclusive reports whether this process holds the store alone (Lock
// with shared false succeeded and the store is open).
func (s *Store) Exclusive() bool {
	s.lockMu.Lock()
	defer s.lockMu.Unlock()
	return s.alone
}

// unlock releases the lock Lock took, if any.
func (s *Store) unlock() {
	s.lockMu.Lock()
	defer s.lockMu.Unlock()
	if s.lock != nil {
		s.lock.Close()
		s.lock, s.alone = nil, false
	}
}
