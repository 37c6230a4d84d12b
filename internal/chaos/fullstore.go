package chaos

import (
	"context"
	"fmt"
	"sync/atomic"
	"syscall"

	"github.com/ctxhost/ctxhost/record"
)

// FullStore is a store whose disk fills up on demand: while it is full
// every write (Append, Snapshot) fails as a full disk's writes fail, with
// ENOSPC, and changes nothing; reads and deletes pass. Tests put it under
// a server to check that a call finding the disk full answers 503 and
// applies nothing.
type FullStore struct {
	record.Store
	full    atomic.Bool
	refused atomic.Int64
}

// NewFullStore wraps st, with room.
func NewFullStore(st record.Store) *FullStore { return &FullStore{Store: st} }

// SetFull fills the disk (true) or frees it (false).
func (f *FullStore) SetFull(full bool) { f.full.Store(full) }

// Refused is how many writes failed for a full disk.
func (f *FullStore) Refused() int64 { return f.refused.Load() }

// Append implements record.Store.
func (f *FullStore) Append(ctx context.Context, id string, expected uint64, event []byte) error {
	if f.full.Load() {
		f.refused.Add(1)
		return fmt.Errorf("append to %q: write: %w", id, syscall.ENOSPC)
	}
	return f.Store.Append(ctx, id, expected, event)
}

// Snapshot implements record.Store.
func (f *FullStore) Snapshot(ctx context.Context, id string, expected uint64, state []byte) error {
	if f.full.Load() {
		f.refused.Add(1)
		return fmt.Errorf("snapshot %q: write: %w", id, syscall.ENOSPC)
	}
	return f.Store.Snapshot(ctx, id, expected, state)
}

// Version implements record.VersionReader when the wrapped store does.
func (f *FullStore) Version(ctx context.Context, id string) (uint64, error) {
	return record.StoredVersionOf(ctx, f.Store, id)
}
