package admission

import (
	"context"
	"io"
	"sync"
)

// Charge is what one call holds of a budget: it grows as the call reads
// more (Grow), and is given back whole when the call ends (Release).
// Its methods may be called from several goroutines.
type Charge struct {
	b  *Budget
	mu sync.Mutex
	n  int64
}

// NewCharge returns an empty charge on b (nil b: nothing is ever charged).
func (b *Budget) NewCharge() *Charge { return &Charge{b: b} }

// Grow charges n more bytes (see Budget.Acquire for the errors).
func (c *Charge) Grow(ctx context.Context, n int64) error {
	if c == nil || c.b == nil || n <= 0 {
		return nil
	}
	c.mu.Lock()
	own := c.n
	c.mu.Unlock()
	total := own + n
	if !c.b.Fits(total) {
		return c.b.tooLarge(total)
	}
	if err := c.b.acquire(ctx, n, own); err != nil {
		return err
	}
	c.mu.Lock()
	c.n += n
	c.mu.Unlock()
	return nil
}

// Bytes is what the charge holds.
func (c *Charge) Bytes() int64 {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// Release gives back everything charged; the charge may grow again.
func (c *Charge) Release() {
	if c == nil || c.b == nil {
		return
	}
	c.mu.Lock()
	n := c.n
	c.n = 0
	c.mu.Unlock()
	c.b.Release(n)
}

// Reader returns r charged as it is read: before each read, weight times
// the bytes it may return are charged, step bytes at a time,
// and a charge refused ends the reading with its error. It charges the
// body of a request without a declared length as it arrives.
func (c *Charge) Reader(ctx context.Context, r io.Reader, weight, step int64) io.Reader {
	return &chargedReader{c: c, ctx: ctx, r: r, weight: weight, step: max(step, 1)}
}

type chargedReader struct {
	c      *Charge
	ctx    context.Context
	r      io.Reader
	weight int64
	step   int64
	room   int64 // bytes that may be read on what is charged
}

func (cr *chargedReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return cr.r.Read(p)
	}
	if cr.room <= 0 {
		n := cr.step
		if err := cr.c.Grow(cr.ctx, n*cr.weight); err != nil {
			return 0, err
		}
		cr.room += n
	}
	if int64(len(p)) > cr.room {
		p = p[:cr.room]
	}
	k, err := cr.r.Read(p)
	cr.room -= int64(k)
	return k, err
}
