package admission

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"
)

func TestAcquireWithinCapacity(t *testing.T) {
	b := New(100, time.Hour, nil)
	for range 4 {
		if err := b.Acquire(context.Background(), 25); err != nil {
			t.Fatal(err)
		}
	}
	if got := b.Held(); got != 100 {
		t.Fatalf("held %d, want 100", got)
	}
}

func TestTooLargeIsRefusedAtOnce(t *testing.T) {
	b := New(100, time.Hour, nil)
	if err := b.Acquire(context.Background(), 101); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err %v, want ErrTooLarge", err)
	}
	c := b.NewCharge()
	if err := c.Grow(context.Background(), 60); err != nil {
		t.Fatal(err)
	}
	if err := c.Grow(context.Background(), 41); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a charge growing past the capacity: %v, want ErrTooLarge", err)
	}
}

// The wait is bounded: a charge that does not fit is refused once it ran
// out (the wait is short, so the test cannot hang; it asserts no timing).
func TestOverloadedAfterTheWait(t *testing.T) {
	waited := 0
	b := New(100, 10*time.Millisecond, func() { waited++ })
	if err := b.Acquire(context.Background(), 80); err != nil {
		t.Fatal(err)
	}
	if err := b.Acquire(context.Background(), 30); !errors.Is(err, ErrOverloaded) {
		t.Fatalf("err %v, want ErrOverloaded", err)
	}
	if waited != 1 || b.Held() != 80 {
		t.Fatalf("onWait called %d times, held %d; want 1, 80", waited, b.Held())
	}
	b.Release(80)
	if err := b.Acquire(context.Background(), 30); err != nil {
		t.Fatalf("after the release: %v", err)
	}
}

func TestReleaseAdmitsTheWaitersInOrder(t *testing.T) {
	b := New(100, time.Hour, nil)
	if err := b.Acquire(context.Background(), 100); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i, n := range []int64{60, 50, 10} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := b.Acquire(context.Background(), n); err != nil {
				t.Error(err)
			}
		}()
		for queued(b) != i+1 {
			time.Sleep(time.Millisecond)
		}
	}
	b.Release(100)
	// 60 is admitted; 50 does not fit, and 10, which would, waits behind
	// it (first come first served: a large call is not starved).
	if q, held := queued(b), b.Held(); q != 2 || held != 60 {
		t.Fatalf("after the release: %d waiting, %d held; want 2 waiting, 60 held", q, held)
	}
	b.Release(60)
	wg.Wait()
	if held := b.Held(); held != 60 {
		t.Fatalf("held %d, want 50 + 10", held)
	}
}

func queued(b *Budget) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.waiters.Len()
}

func TestCanceledWaitGivesWay(t *testing.T) {
	b := New(100, time.Hour, nil)
	_ = b.Acquire(context.Background(), 50)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- b.Acquire(ctx, 90) }()
	for queued(b) != 1 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if err := b.Acquire(context.Background(), 50); err != nil { // not stuck behind the canceled one
		t.Fatal(err)
	}
}

func TestOutsideTakesItsShare(t *testing.T) {
	b := New(100, 5*time.Millisecond, nil)
	b.SetOutside(70)
	if err := b.Acquire(context.Background(), 90); err != nil {
		t.Fatalf("the first call in is admitted whatever sessions hold: %v", err)
	}
	b.Release(90)
	_ = b.Acquire(context.Background(), 20)
	if err := b.Acquire(context.Background(), 20); !errors.Is(err, ErrOverloaded) {
		t.Fatalf("20 + 70 outside + 20: %v, want ErrOverloaded", err)
	}
	b.SetOutside(10)
	if err := b.Acquire(context.Background(), 20); err != nil {
		t.Fatalf("with the sessions unloaded: %v", err)
	}
}

func TestNilBudgetAdmitsEverything(t *testing.T) {
	var b *Budget
	if err := b.Acquire(context.Background(), 1<<60); err != nil {
		t.Fatal(err)
	}
	c := b.NewCharge()
	if err := c.Grow(context.Background(), 1<<60); err != nil {
		t.Fatal(err)
	}
	c.Release()
}

func TestReaderChargesAsItReads(t *testing.T) {
	b := New(1000, time.Millisecond, nil)
	c := b.NewCharge()
	got, err := io.ReadAll(c.Reader(context.Background(), bytes.NewReader(make([]byte, 250)), 2, 100))
	if err != nil || len(got) != 250 {
		t.Fatalf("read %d bytes, %v", len(got), err)
	}
	if c.Bytes() != 600 { // three steps of 100 bytes, weighted 2
		t.Fatalf("charged %d, want 600", c.Bytes())
	}
	c.Release()
	c = b.NewCharge()
	_, err = io.ReadAll(c.Reader(context.Background(), bytes.NewReader(make([]byte, 2000)), 1, 100))
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("2000 bytes on a budget of 1000: %v, want ErrTooLarge", err)
	}
	if b.Held() != 1000 {
		t.Fatalf("held %d, want the 1000 charged until Release", b.Held())
	}
	c.Release()
	if b.Held() != 0 {
		t.Fatalf("held %d after Release", b.Held())
	}
}

// BenchmarkAcquireRelease is the cost of one charge and its release, on
// an uncontended budget and with GOMAXPROCS goroutines charging at once.
func BenchmarkAcquireRelease(b *testing.B) {
	bud := New(1<<40, time.Second, nil)
	ctx := context.Background()
	b.Run("alone", func(b *testing.B) {
		for range b.N {
			_ = bud.Acquire(ctx, 1<<20)
			bud.Release(1 << 20)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				_ = bud.Acquire(ctx, 1<<20)
				bud.Release(1 << 20)
			}
		})
	})
}

// TestLoneCallGrowsWhateverSessionsHold: a call alone in the process
// grows its charge even when what sessions hold leaves no room, so a
// call that was admitted always finishes; a second call waits.
func TestLoneCallGrowsWhateverSessionsHold(t *testing.T) {
	b := New(100, 10*time.Millisecond, nil)
	b.SetOutside(95)
	c := b.NewCharge()
	if err := c.Grow(context.Background(), 30); err != nil {
		t.Fatalf("first charge: %v", err)
	}
	if err := c.Grow(context.Background(), 30); err != nil {
		t.Fatalf("the lone call's next charge: %v", err)
	}
	other := b.NewCharge()
	if err := other.Grow(context.Background(), 1); !errors.Is(err, ErrOverloaded) {
		t.Fatalf("a second call: %v, want ErrOverloaded", err)
	}
	c.Release()
	if err := other.Grow(context.Background(), 1); err != nil {
		t.Fatalf("the second call alone: %v", err)
	}
}
