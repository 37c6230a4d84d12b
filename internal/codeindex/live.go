package codeindex

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Live is an Index that a plugin shares between its sessions: the first
// Refresh runs in the background from Start, and Current refreshes again
// when the last check is older than the refresh interval.
type Live struct {
	*Index
	interval time.Duration

	ready chan struct{} // closed when the first refresh is done
	err   error         // of the first refresh
	once  sync.Once

	mu      sync.Mutex
	checked time.Time
}

// NewLive returns a live index of root, checked for changes at most every
// interval (0: on every Current).
func NewLive(root string, interval time.Duration) (*Live, error) {
	return NewLiveWith(root, interval, Options{})
}

// NewLiveWith is NewLive with the index's options.
func NewLiveWith(root string, interval time.Duration, opts Options) (*Live, error) {
	ix, err := New(root, opts)
	if err != nil {
		return nil, err
	}
	return &Live{Index: ix, interval: interval, ready: make(chan struct{})}, nil
}

// Start begins the first refresh in the background (once).
func (l *Live) Start() {
	l.once.Do(func() {
		go func() {
			_, l.err = l.Index.Refresh()
			l.mu.Lock()
			l.checked = time.Now()
			l.mu.Unlock()
			close(l.ready)
		}()
	})
}

// Current waits for the first refresh (until ctx ends), refreshes when the
// last check is older than the interval (or force is set), and returns
// the index's version.
func (l *Live) Current(ctx context.Context, force bool) (uint64, error) {
	l.Start()
	select {
	case <-l.ready:
	case <-ctx.Done():
		return 0, fmt.Errorf("indexing %s is not finished: %w", l.Root(), ctx.Err())
	}
	if l.err != nil {
		return 0, l.err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if force || time.Since(l.checked) >= l.interval {
		if _, err := l.Index.Refresh(); err != nil {
			return 0, err
		}
		l.checked = time.Now()
	}
	return l.Version(), nil
}

// RefreshFiles waits for the first refresh (until ctx ends) and brings the
// named files up to date without walking the repository (see
// Index.RefreshFiles): what a caller that knows what it changed asks for.
func (l *Live) RefreshFiles(ctx context.Context, paths []string) (Changes, error) {
	l.Start()
	select {
	case <-l.ready:
	case <-ctx.Done():
		return Changes{}, fmt.Errorf("indexing %s is not finished: %w", l.Root(), ctx.Err())
	}
	if l.err != nil {
		return Changes{}, l.err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.Index.RefreshFiles(paths)
}
