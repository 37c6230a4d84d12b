package codeindex

import (
	"context"
	"sync"
)

// Derived is a value computed from a Live index (a reference graph, a
// synced chunk index) and kept up to date with it: Current rebuilds it
// when the index's version changed since the last build. A plugin's
// sessions share one. It is safe for concurrent use.
type Derived[T comparable] struct {
	live  *Live
	build func(ctx context.Context, prev T, ix *Index) (T, error)

	mu      sync.Mutex
	val     T
	version uint64
	built   bool
}

// NewDerived returns a value of live that build computes; build gets the
// previous value (the zero value the first time) to update it in place
// when it can.
func NewDerived[T comparable](live *Live, build func(ctx context.Context, prev T, ix *Index) (T, error)) *Derived[T] {
	return &Derived[T]{live: live, build: build}
}

// Live is the index the value is derived from.
func (d *Derived[T]) Live() *Live { return d.live }

// Current brings the index up to date (see Live.Current; force checks
// the files now) and returns the value of its current version, built
// again when the version changed. A failed build is tried again on the
// next call.
func (d *Derived[T]) Current(ctx context.Context, force bool) (T, error) {
	if _, err := d.live.Current(ctx, force); err != nil {
		var zero T
		return zero, err
	}
	return d.Sync(ctx)
}

// Sync returns the value of the index's current version, built again
// when the version changed, without checking the files (after
// Live.RefreshFiles).
func (d *Derived[T]) Sync(ctx context.Context) (T, error) {
	v := d.live.Version()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.built && d.version == v {
		return d.val, nil
	}
	val, err := d.build(ctx, d.val, d.live.Index)
	if err != nil {
		return d.val, err
	}
	d.val, d.version, d.built = val, v, true
	return val, nil
}

// Replace puts next in place of the current value when that is still
// old: how a build that returned a quick partial value hands over the
// complete one it finished later (in the background).
func (d *Derived[T]) Replace(old, next T) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.val != old {
		return false
	}
	d.val = next
	return true
}
