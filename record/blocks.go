package record

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// ErrBlockNotFound is returned (wrapped) for a memory block a store does
// not hold (or holds deleted).
var ErrBlockNotFound = errors.New("memory block not found")

// Block is one version of a memory block as a BlockStore holds it: where
// it lives (its scope and label), its version, and its content, opaque
// to the store (the engine's encoding of description, value, limit and
// flags). A deleted block is a version too, with Deleted set and no Data.
type Block struct {
	Scope   string
	Label   string
	Version uint64
	Deleted bool
	Data    []byte
}

// BlockStore is implemented by a Store that also keeps memory blocks:
// named texts shared by the sessions of a scope. Every write makes a new
// version of its block and succeeds only when the block's current version
// is the expected one (optimistic concurrency, as for sessions); each
// version is kept, so a block's history can be read back. A successful
// write is as durable as a session's Append.
type BlockStore interface {
	// Blocks returns the current, not deleted, blocks of the given
	// scopes, sorted by scope then label (bytewise).
	Blocks(ctx context.Context, scopes []string) ([]Block, error)
	// PutBlock writes b.Data as version expected+1 of block (b.Scope,
	// b.Label); expected 0 means the block has never been written.
	// b.Version and b.Deleted are ignored. A block whose current version
	// is not expected fails with an error wrapping ErrVersionConflict.
	PutBlock(ctx context.Context, b Block, expected uint64) error
	// DeleteBlock writes a deleted version of the block as version
	// expected+1, under the same check; a block not stored (or deleted
	// already) fails with an error wrapping ErrBlockNotFound.
	DeleteBlock(ctx context.Context, scope, label string, expected uint64) error
	// BlockVersions returns every stored version of the block, oldest
	// first (deleted versions included); none wraps ErrBlockNotFound.
	BlockVersions(ctx context.Context, scope, label string) ([]Block, error)
}

// MemoryBlocks is a BlockStore in this process's memory: what a host
// without a store (or with a store that keeps no blocks) uses. Nothing of
// it survives the process.
type MemoryBlocks struct {
	mu       sync.Mutex
	versions map[[2]string][]Block
}

var _ BlockStore = (*MemoryBlocks)(nil)

// NewMemoryBlocks returns an empty MemoryBlocks.
func NewMemoryBlocks() *MemoryBlocks { return &MemoryBlocks{versions: map[[2]string][]Block{}} }

// Blocks returns the current blocks of scopes, sorted by scope then label.
func (m *MemoryBlocks) Blocks(_ context.Context, scopes []string) ([]Block, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Block
	for key, vs := range m.versions {
		last := vs[len(vs)-1]
		if !last.Deleted && slices.Contains(scopes, key[0]) {
			last.Data = slices.Clone(last.Data)
			out = append(out, last)
		}
	}
	SortBlocks(out)
	return out, nil
}

// PutBlock writes b as version expected+1.
func (m *MemoryBlocks) PutBlock(_ context.Context, b Block, expected uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.write(b.Scope, b.Label, expected, false, b.Data)
}

// DeleteBlock writes a deleted version as expected+1.
func (m *MemoryBlocks) DeleteBlock(_ context.Context, scope, label string, expected uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.write(scope, label, expected, true, nil)
}

func (m *MemoryBlocks) write(scope, label string, expected uint64, deleted bool, data []byte) error {
	key := [2]string{scope, label}
	vs := m.versions[key]
	var current uint64
	if len(vs) > 0 {
		current = vs[len(vs)-1].Version
	}
	if deleted && (len(vs) == 0 || vs[len(vs)-1].Deleted) {
		return fmt.Errorf("delete block %q of %q: %w", label, scope, ErrBlockNotFound)
	}
	if current != expected {
		return fmt.Errorf("block %q of %q at version %d, expected %d: %w", label, scope, current, expected, ErrVersionConflict)
	}
	m.versions[key] = append(vs, Block{Scope: scope, Label: label, Version: expected + 1, Deleted: deleted, Data: slices.Clone(data)})
	return nil
}

// BlockVersions returns every version of the block, oldest first.
func (m *MemoryBlocks) BlockVersions(_ context.Context, scope, label string) ([]Block, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	vs := m.versions[[2]string{scope, label}]
	if len(vs) == 0 {
		return nil, fmt.Errorf("block %q of %q: %w", label, scope, ErrBlockNotFound)
	}
	out := slices.Clone(vs)
	for i := range out {
		out[i].Data = slices.Clone(out[i].Data)
	}
	return out, nil
}

// SortBlocks sorts blocks by scope, then label, then version (bytewise).
func SortBlocks(blocks []Block) {
	slices.SortFunc(blocks, func(a, b Block) int {
		return cmp.Or(cmp.Compare(a.Scope, b.Scope), cmp.Compare(a.Label, b.Label), cmp.Compare(a.Version, b.Version))
	})
}
