package sqlite

import (
	"errors"
	"path/filepath"
	"testing"
)

// TestLock: a store locked alone excludes every other Lock on the file
// until it is closed; shared locks admit each other and exclude one
// alone. Exclusive tells which this process holds.
func TestLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	open := func() *Store {
		t.Helper()
		s, err := New(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	a, b := open(), open()
	if a.Exclusive() {
		t.Fatal("exclusive before Lock")
	}
	if err := a.Lock(false); err != nil || !a.Exclusive() {
		t.Fatalf("lock alone: %v, exclusive %v", err, a.Exclusive())
	}
	for _, shared := range []bool{false, true} {
		if err := b.Lock(shared); !errors.Is(err, ErrLocked) || b.Exclusive() {
			t.Fatalf("lock (shared %v) of a store held alone: %v", shared, err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if a.Exclusive() {
		t.Fatal("exclusive after Close")
	}
	c := open()
	if err := b.Lock(true); err != nil || b.Exclusive() {
		t.Fatalf("shared lock of a free store: %v, exclusive %v", err, b.Exclusive())
	}
	if err := c.Lock(true); err != nil {
		t.Fatalf("second shared lock: %v", err)
	}
	if err := open().Lock(false); !errors.Is(err, ErrLocked) {
		t.Fatalf("lock alone of a shared store: %v", err)
	}
}
