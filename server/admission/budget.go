// Package admission bounds the memory the calls of `ctxhost serve` hold
// at once. One Budget of bytes is shared by every call of the process:
// a call is charged for a request body before it is read (from its
// declared length, or as it is read when it has none), for an answer as
// it is relayed, and for whatever else it keeps, and gives its charge
// back when it ends. The memory held outside calls (sessions, indexes,
// as the last garbage collection measured it) takes its share of the
// same budget. A charge that does not fit waits, first come first
// served, at most the budget's wait; then the call is refused as
// overloaded (ErrOverloaded) instead of the process running out of
// memory. A charge larger than the whole budget is refused at once
// (ErrTooLarge): it could never be admitted.
package admission

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrOverloaded: the budget stayed full for the whole wait.
var ErrOverloaded = errors.New("overloaded")

// ErrTooLarge: a charge larger than the budget can ever admit.
var ErrTooLarge = errors.New("larger than the memory budget")

// Budget is the bytes the calls in flight may hold together. Its zero
// value is not usable; a nil *Budget admits everything (no memory limit).
type Budget struct {
	capacity int64
	wait     time.Duration
	// onWait is called when a charge has to wait (the server unloads idle
	// sessions then); it must not block.
	onWait func()

	mu      sync.Mutex
	held    int64     // charged to calls
	outside int64     // held outside calls, as last measured
	waiters list.List // of *waiter, first come first served
}

type waiter struct {
	n     int64
	own   int64         // what the waiter's call holds already
	ready chan struct{} // closed once n is charged
}

// New returns a budget of capacity bytes whose charges wait at most wait.
// onWait, when not nil, is called (without blocking) each time a charge
// has to wait.
func New(capacity int64, wait time.Duration, onWait func()) *Budget {
	return &Budget{capacity: capacity, wait: wait, onWait: onWait}
}

// Capacity is the budget's size in bytes (0 for a nil budget: unbounded).
func (b *Budget) Capacity() int64 {
	if b == nil {
		return 0
	}
	return b.capacity
}

// Wait is how long a charge waits for room before ErrOverloaded.
func (b *Budget) Wait() time.Duration {
	if b == nil {
		return 0
	}
	return b.wait
}

// Fits reports whether a charge of n bytes can ever be admitted.
func (b *Budget) Fits(n int64) bool { return b == nil || n <= b.capacity }

// Held is the bytes charged to calls now.
func (b *Budget) Held() int64 {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.held
}

// SetOutside records the bytes held outside calls (sessions held,
// indexes): they take their share of the budget until measured again.
// A charge never waits for them alone when nothing is charged to calls
// (the room they leave is then at least the smallest call's): the
// server's trimmer is what brings them down.
func (b *Budget) SetOutside(n int64) {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.outside = max(0, n)
	b.grant()
	b.mu.Unlock()
}

// Waiting reports whether a charge is waiting for room now.
func (b *Budget) Waiting() bool {
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.waiters.Len() > 0
}

// room is what a charge of a call holding own bytes may take now; the
// caller holds b.mu. A call alone in the process (nothing held but its
// own) is admitted whatever sessions hold, so that one call always makes
// progress.
func (b *Budget) room(own int64) int64 {
	if b.held == own {
		return b.capacity - b.held
	}
	return b.capacity - b.held - b.outside
}

// grant charges the waiters at the head of the queue that fit; the
// caller holds b.mu.
func (b *Budget) grant() {
	for e := b.waiters.Front(); e != nil; e = b.waiters.Front() {
		w := e.Value.(*waiter)
		if w.n > b.room(w.own) {
			return
		}
		b.held += w.n
		b.waiters.Remove(e)
		close(w.ready)
	}
}

// Acquire charges n bytes, waiting for room at most the budget's wait
// and no longer than ctx lives. It returns ErrTooLarge for a charge over
// the capacity, ErrOverloaded when the wait ran out, or ctx's error.
func (b *Budget) Acquire(ctx context.Context, n int64) error {
	return b.acquire(ctx, n, 0)
}

// acquire is Acquire for a call that holds own bytes already.
func (b *Budget) acquire(ctx context.Context, n, own int64) error {
	if b == nil || n <= 0 {
		return nil
	}
	if n > b.capacity {
		return b.tooLarge(n)
	}
	b.mu.Lock()
	if b.waiters.Len() == 0 && n <= b.room(own) {
		b.held += n
		b.mu.Unlock()
		return nil
	}
	w := &waiter{n: n, own: own, ready: make(chan struct{})}
	e := b.waiters.PushBack(w)
	b.mu.Unlock()
	if b.onWait != nil {
		b.onWait()
	}
	timer := time.NewTimer(b.wait)
	defer timer.Stop()
	var err error
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		err = ctx.Err()
	case <-timer.C:
		err = fmt.Errorf("%w: %d bytes did not fit the memory budget of %d within %s", ErrOverloaded, n, b.capacity, b.wait)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-w.ready: // granted meanwhile
		return nil
	default:
	}
	b.waiters.Remove(e)
	b.grant() // a smaller charge behind it may fit
	return err
}

func (b *Budget) tooLarge(n int64) error {
	return fmt.Errorf("%w: %d bytes, the budget is %d", ErrTooLarge, n, b.capacity)
}

// Release gives back n bytes charged by Acquire.
func (b *Budget) Release(n int64) {
	if b == nil || n <= 0 {
		return
	}
	b.mu.Lock()
	b.held -= n
	if b.held < 0 {
		panic("admission: released more than was charged")
	}
	b.grant()
	b.mu.Unlock()
}
